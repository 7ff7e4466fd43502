/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * SRQ through the engine, public API only: two RC, one UC and one UD QP on droce1 share one
 * SRQ under load (every message delivered once, to the right QP, with the right bytes); the
 * limit event fires once per arming; an empty SRQ drops UD messages (counted) and RNR-NAKs RC
 * ones until a WR is posted, then the RC message arrives; a QP on an SRQ moved to ERR raises
 * IBV_EVENT_QP_LAST_WQE_REACHED.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fn_qp.h"

#define QKEY 0x5150u
enum { NQ = 4, SRQ_WR = 256, POSTED = 128, PER_ROUND = 8, ROUNDS = 12, RLEN = 4096 };
static const enum ibv_qp_type types[NQ] = { IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };

struct rig {
	struct droce_pd *pd[2];
	struct droce_srq *srq;
	struct fn_qp tx[NQ], rx[NQ];
	struct droce_ah *ah;		/* droce0 -> droce1, for the UD sender */
	struct fn_mem smem, rmem;	/* send buffers on droce0; SRQ_WR receive buffers */
};

static uint32_t msg_len(int q)
{
	return types[q] == IBV_QPT_UD ? 1000 : 3000;	/* RC, UC: 3 packets */
}

static void rc_connect(struct fn_qp *a, const struct fn_qp *b)
{
	struct fn_attr at = fn_attr_default();
	struct fn_ep e = { .side = a->side, .qp = a->qp }, p = { .side = b->side, .qp = b->qp };

	at.min_rnr_timer = 1;	/* 0.01 ms */
	fn_connect(&e, &p, &at);
}

static void post_srq(struct rig *r, uint64_t id)
{
	uint8_t *buf = r->rmem.buf + (size_t)(id % SRQ_WR) * RLEN;

	memset(buf, 0, RLEN);
	fn_post_srq1(r->srq, id, buf, RLEN, r->rmem.mr->lkey);
}

static void send_msg(struct rig *r, int q, uint32_t seq, struct droce_qp *dst)
{
	uint32_t len = msg_len(q), imm = (uint32_t)q << 16 | seq;
	uint8_t *buf = r->smem.buf + (size_t)q * RLEN;

	fn_fill(buf, len, imm);
	fn_post_send1(r->tx[q].qp, imm, IBV_WR_SEND_WITH_IMM, buf, len, r->smem.mr->lkey, imm,
		      types[q] == IBV_QPT_UD ? r->ah : NULL, dst->qp_num, QKEY, 0, 0, 0);
	CHECK_EQ(fn_wait(r->tx[q].cq).status, IBV_WC_SUCCESS);
}

/* One completion of rx[q] for message seq: right QP, bytes, immediate; WR reposted. */
static void recv_msg(struct rig *r, int q, uint32_t seq)
{
	struct ibv_wc wc = fn_wait(r->rx[q].cq);
	uint32_t len = msg_len(q), hdr = types[q] == IBV_QPT_UD ? 40 : 0;
	uint8_t exp[RLEN];

	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.qp_num, r->rx[q].qp->qp_num);
	CHECK_EQ(wc.byte_len, hdr + len);
	CHECK_EQ(ntohl(wc.imm_data), (uint32_t)q << 16 | seq);
	CHECK_EQ(wc.src_qp, r->tx[q].qp->qp_num);
	fn_fill(exp, len, (uint32_t)q << 16 | seq);
	CHECK(memcmp(r->rmem.buf + (size_t)(wc.wr_id % SRQ_WR) * RLEN + hdr, exp, len) == 0);
	post_srq(r, wc.wr_id + POSTED);	/* a new id for the slot POSTED ahead */
}

static void load(struct rig *r)
{
	struct droce_counters c0 = fn_counters(1);
	uint32_t round, i;
	int q;

	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < PER_ROUND; i++)
			for (q = 0; q < NQ; q++)
				send_msg(r, q, round * PER_ROUND + i, r->rx[q].qp);
		for (i = 0; i < PER_ROUND; i++)
			for (q = 0; q < NQ; q++)
				recv_msg(r, q, round * PER_ROUND + i);
	}
	CHECK_EQ(fn_counters(1).rx_no_recv_wr, c0.rx_no_recv_wr);
	printf("srq: %d QPs (RC, RC, UC, UD) shared one SRQ: %d messages each, exactly once\n",
	       NQ, ROUNDS * PER_ROUND);
}

/* Drain the async events of droce1; true if one was SRQ_LIMIT_REACHED. */
static bool limit_seen(void)
{
	struct droce_async_event ev;
	bool seen = false;

	while (fn_async(1, &ev))
		seen |= ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED;
	return seen;
}

/* The limit event: once when the SRQ drops below the armed limit, not again until re-armed. */
static void limit(struct rig *r)
{
	struct ibv_srq_attr a = { .srq_limit = POSTED - 8 };
	struct droce_async_event ev;
	uint32_t seq = 10000, i, arm;

	CHECK(!limit_seen());	/* COMM_EST of the connected QPs */

	for (arm = 0; arm < 2; arm++) {
		CHECK_EQ(droce_modify_srq(r->srq, &a, IBV_SRQ_LIMIT), 0);
		/* Consume without reposting: 8 WRs leave exactly the limit, 9 go below it. */
		for (i = 0; i < 9; i++, seq++) {
			struct ibv_wc wc;

			send_msg(r, 3, seq, r->rx[3].qp);
			wc = fn_wait(r->rx[3].cq);
			CHECK_EQ(wc.status, IBV_WC_SUCCESS);
			if (i < 8)
				CHECK(!limit_seen());
		}
		CHECK(fn_async_wait(1, IBV_EVENT_SRQ_LIMIT_REACHED, 2.0, &ev));
		CHECK(ev.element.srq == r->srq);
		for (i = 0; i < 3; i++, seq++) {
			send_msg(r, 3, seq, r->rx[3].qp);
			CHECK_EQ(fn_wait(r->rx[3].cq).status, IBV_WC_SUCCESS);
		}
		fn_run(0.05);
		CHECK(!limit_seen());	/* once per arming */
		CHECK_EQ(droce_query_srq(r->srq, &a), 0);
		CHECK_EQ(a.srq_limit, 0);	/* disarmed */
		a.srq_limit = POSTED - 12 * (arm + 1) - 8;
	}
	printf("srq: limit event once per arming (twice)\n");
}

/* An empty SRQ: UD dropped and counted, RC RNR-NAKed until a WR arrives. */
static void empty(struct rig *r)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct droce_counters c0 = fn_counters(1);
	struct fn_qp ud, rc_rx, rc_tx;
	struct droce_srq *srq = droce_create_srq(r->pd[1], &ia);
	struct ibv_wc wc;
	uint8_t *buf = r->rmem.buf;

	CHECK(srq != NULL);
	fn_qp_create(&ud, 1, r->pd[1], IBV_QPT_UD, srq, 4);
	fn_ud_rts(ud.qp, QKEY);
	fn_post_send1(r->tx[3].qp, 1, IBV_WR_SEND, r->smem.buf, 100, r->smem.mr->lkey, 0, r->ah,
		      ud.qp->qp_num, QKEY, 0, 0, 0);
	CHECK_EQ(fn_wait(r->tx[3].cq).status, IBV_WC_SUCCESS);
	fn_quiet(ud.cq, 0.1);
	CHECK_EQ(fn_counters(1).rx_no_recv_wr, c0.rx_no_recv_wr + 1);

	fn_qp_create(&rc_rx, 1, r->pd[1], IBV_QPT_RC, srq, 4);
	fn_qp_create(&rc_tx, 0, r->pd[0], IBV_QPT_RC, NULL, 4);
	rc_connect(&rc_rx, &rc_tx);
	rc_connect(&rc_tx, &rc_rx);
	fn_fill(r->smem.buf, 2500, 77);
	fn_post_send1(rc_tx.qp, 2, IBV_WR_SEND, r->smem.buf, 2500, r->smem.mr->lkey, 0, NULL, 0,
		      0, 0, 0, 0);
	fn_quiet(rc_rx.cq, 0.1);
	CHECK(fn_counters(1).rnr_nak_sent > c0.rnr_nak_sent);
	CHECK_EQ(fn_state(rc_tx.qp), IBV_QPS_RTS);
	memset(buf, 0, RLEN);
	fn_post_srq1(srq, 55, buf, RLEN, r->rmem.mr->lkey);
	wc = fn_wait(rc_rx.cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 55);
	CHECK_EQ(wc.byte_len, 2500);
	CHECK_EQ(fn_wait(rc_tx.cq).status, IBV_WC_SUCCESS);
	{
		uint8_t exp[2500];

		fn_fill(exp, sizeof(exp), 77);
		CHECK(memcmp(buf, exp, sizeof(exp)) == 0);
	}
	printf("srq: empty: UD dropped+counted, RC RNR (%llu NAKs) then delivered\n",
	       (unsigned long long)(fn_counters(1).rnr_nak_sent - c0.rnr_nak_sent));
	fn_qp_destroy(&rc_tx);
	fn_qp_destroy(&rc_rx);
	fn_qp_destroy(&ud);
	CHECK_EQ(droce_destroy_srq(srq), 0);
}

/* A QP on an SRQ entering ERR: IBV_EVENT_QP_LAST_WQE_REACHED for that QP. */
static void last_wqe(struct rig *r)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct droce_async_event ev;

	CHECK_EQ(droce_modify_qp(r->rx[0].qp, &a, IBV_QP_STATE), 0);
	CHECK(fn_async_wait(1, IBV_EVENT_QP_LAST_WQE_REACHED, 2.0, &ev));
	CHECK(ev.element.qp == r->rx[0].qp);
	printf("srq: QP_LAST_WQE_REACHED on ERR\n");
}

static void setup(struct rig *r)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = SRQ_WR, .max_sge = 1 } };
	struct ibv_ah_attr ah;
	int q;

	r->pd[0] = fn_pd(0);
	r->pd[1] = fn_pd(1);
	r->srq = droce_create_srq(r->pd[1], &ia);
	CHECK(r->srq != NULL);
	fn_mem_reg(&r->smem, r->pd[0], (size_t)NQ * RLEN, IBV_ACCESS_LOCAL_WRITE, 0);
	fn_mem_reg(&r->rmem, r->pd[1], (size_t)SRQ_WR * RLEN, IBV_ACCESS_LOCAL_WRITE, 0);
	for (q = 0; q < NQ; q++) {
		fn_qp_create(&r->tx[q], 0, r->pd[0], types[q], NULL, 16);
		fn_qp_create(&r->rx[q], 1, r->pd[1], types[q], r->srq, 16);
		if (types[q] == IBV_QPT_RC) {
			rc_connect(&r->tx[q], &r->rx[q]);
			rc_connect(&r->rx[q], &r->tx[q]);
		} else if (types[q] == IBV_QPT_UC) {
			fn_uc_connect(&r->tx[q], &r->rx[q], IBV_MTU_1024, GID_V4);
			fn_uc_connect(&r->rx[q], &r->tx[q], IBV_MTU_1024, GID_V4);
		} else {
			fn_ud_rts(r->tx[q].qp, QKEY);
			fn_ud_rts(r->rx[q].qp, QKEY);
		}
	}
	fn_ah_attr(&ah, 1, GID_V4, GID_V4);
	r->ah = droce_create_ah(r->pd[0], &ah);
	CHECK(r->ah != NULL);
	for (q = 0; q < POSTED; q++)
		post_srq(r, (uint64_t)q);
	fn_async_nonblock(1);
}

static void teardown(struct rig *r)
{
	int q;

	for (q = 0; q < NQ; q++) {
		fn_qp_destroy(&r->tx[q]);
		fn_qp_destroy(&r->rx[q]);
	}
	CHECK_EQ(droce_destroy_ah(r->ah), 0);
	CHECK_EQ(droce_destroy_srq(r->srq), 0);
	fn_mem_free(&r->smem);
	fn_mem_free(&r->rmem);
	CHECK_EQ(droce_dealloc_pd(r->pd[0]), 0);
	CHECK_EQ(droce_dealloc_pd(r->pd[1]), 0);
}

int main(int argc, char **argv)
{
	struct rig r;

	fn_open(argc, argv);
	memset(&r, 0, sizeof(r));
	setup(&r);
	load(&r);
	limit(&r);
	empty(&r);
	last_wqe(&r);
	teardown(&r);
	fn_close();
	printf("ok\n");
	return 0;
}
