/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * UD through the soak's lossy link (soak_*.ini: drop, duplicate, reorder, delay, corrupt),
 * public API only: droce0 sends N datagrams of varying length, each carrying its number and a
 * pattern made from it, to a UD QP on droce1. UD promises nothing about delivery, order or
 * duplicates; what it does promise is checked: every completion is a success holding one whole
 * datagram - the GRH, then exactly its bytes, never a partial or corrupted one - (corrupted
 * frames are dropped as BAD_ICRC, counted); no datagram arrives more often than the link
 * duplicated frames; the ones lost are within what the link dropped, corrupted or still holds;
 * the sender completes every WR successfully, in order.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fn_qp.h"

#define QKEY 0x5eed5eedu

enum { N = 4000, MAXLEN = 1024, GRH = 40, SLOT = GRH + MAXLEN, RQ = 256 };

static uint32_t len_of(uint32_t i)
{
	return 4 + i * 61 % (MAXLEN - 4);
}

static uint8_t seen[N];
static uint64_t checked;	/* bytes compared with what they must be */

static void receive(struct fn_qp *r, struct fn_mem *rm, const struct ibv_wc *wc, uint32_t *got)
{
	uint8_t want[MAXLEN], *p = rm->buf + wc->wr_id * SLOT + GRH;
	uint32_t i;

	CHECK_EQ(wc->status, IBV_WC_SUCCESS);
	CHECK_EQ(wc->opcode, IBV_WC_RECV);
	memcpy(&i, p, 4);
	CHECK(i < N);
	CHECK_EQ(wc->byte_len, GRH + len_of(i));	/* whole, never partial */
	fn_fill(want, len_of(i), i);
	CHECK(memcmp(p + 4, want + 4, len_of(i) - 4) == 0);	/* intact */
	seen[i]++;
	checked += len_of(i);
	(*got)++;
	fn_post_recv(r->qp, wc->wr_id, rm->buf + wc->wr_id * SLOT, SLOT, rm->mr->lkey);
}

int main(int argc, char **argv)
{
	struct droce_pd *pd[2];
	struct fn_qp q[2];
	struct fn_mem m[2];
	struct droce_ah *ah;
	struct ibv_ah_attr aa;
	struct droce_counters c0, c1;
	struct ibv_wc wc[16];
	uint32_t sent = 0, done = 0, got = 0, i, lost = 0, dups = 0;
	uint64_t end;
	int n, j;

	fn_open(argc, argv);
	for (j = 0; j < 2; j++) {
		pd[j] = fn_pd(j);
		fn_qp_create(&q[j], j, pd[j], IBV_QPT_UD, NULL, RQ);
		fn_ud_rts(q[j].qp, QKEY);
		fn_mem_reg(&m[j], pd[j], (size_t)RQ * SLOT, FN_ACCESS_ALL, 0);
	}
	for (i = 0; i < RQ; i++)
		fn_post_recv(q[1].qp, i, m[1].buf + i * SLOT, SLOT, m[1].mr->lkey);
	fn_ah_attr(&aa, 1, GID_V4, GID_V4);
	ah = droce_create_ah(pd[0], &aa);
	CHECK(ah != NULL);
	end = pair_deadline(50);
	while (done < N) {
		CHECK(rte_get_tsc_cycles() < end);
		/* a few in flight, so that the receiver keeps up (UD has no flow control) */
		while (sent < N && sent - done < 16) {
			uint8_t *p = m[0].buf + (sent % 16) * MAXLEN;

			fn_fill(p, len_of(sent), sent);
			memcpy(p, &sent, 4);
			fn_post_send1(q[0].qp, sent, IBV_WR_SEND, p, len_of(sent), m[0].mr->lkey, 0,
				      ah, q[1].qp->qp_num, QKEY, 0, 0, 0);
			sent++;
		}
		pair_step();
		n = droce_poll_cq(q[0].cq, 16, wc);
		for (j = 0; j < n; j++) {
			CHECK_EQ(wc[j].status, IBV_WC_SUCCESS);
			CHECK_EQ(wc[j].wr_id, done++);
		}
		n = droce_poll_cq(q[1].cq, 16, wc);
		for (j = 0; j < n; j++)
			receive(&q[1], &m[1], &wc[j], &got);
	}
	fn_run(0.05);		/* delayed and held frames arrive */
	while ((n = droce_poll_cq(q[1].cq, 16, wc)) > 0)
		for (j = 0; j < n; j++)
			receive(&q[1], &m[1], &wc[j], &got);
	c0 = fn_counters(0);
	c1 = fn_counters(1);
	for (i = 0; i < N; i++) {
		lost += seen[i] == 0;
		dups += seen[i] > 1 ? seen[i] - 1u : 0;
	}
	printf("ud: %u sent, %u received (%u lost, %u duplicates); link dropped %llu, "
	       "corrupted %llu, duplicated %llu; receiver: bad ICRC %llu, no receive WR %llu\n",
	       N, got, lost, dups, (unsigned long long)c0.fault_dropped,
	       (unsigned long long)c0.fault_corrupted, (unsigned long long)c0.fault_duplicated,
	       (unsigned long long)c1.parse_err[DROCE_PARSE_BAD_ICRC],
	       (unsigned long long)c1.rx_no_recv_wr);
	CHECK(c0.fault_dropped > 0 && c0.fault_corrupted > 0 && c0.fault_duplicated > 0);
	CHECK_EQ(c1.parse_err[DROCE_PARSE_BAD_ICRC], c0.fault_corrupted);
	CHECK(dups <= c0.fault_duplicated);
	CHECK(lost <= c0.fault_dropped + c0.fault_corrupted + c1.rx_no_recv_wr);
	CHECK(got + lost >= N);
	CHECK_EQ(droce_destroy_ah(ah), 0);
	for (j = 0; j < 2; j++) {
		fn_qp_destroy(&q[j]);
		fn_mem_free(&m[j]);
		CHECK_EQ(droce_dealloc_pd(pd[j]), 0);
	}
	fn_close();
	printf("soak bytes checked: %llu\n", (unsigned long long)checked);
	return 0;
}
