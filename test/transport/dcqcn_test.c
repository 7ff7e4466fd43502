/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Congestion control (DCQCN, lib/transport/transport_dcqcn.c) at exact times:
 * - the reaction point's algorithm on its own state and an explicit clock: the cut on a CNP
 *   (rate and target, at most one per rate_reduce_period), alpha's update and decay, the
 *   minimum rate, fast recovery / additive / hyper increase by timer and byte counter,
 *   recovery to line rate (pacer off), catching up after idling, the token-bucket pacer;
 * - the transport over the simulated link (tt.h) with a switch marking CE: connected QPs' frames
 *   leave ECT(0); CE -> CNPs from the receiver (BECN, Not-ECT, at most one per
 *   cnp_interval per QP) -> counted by the sender, its rate cut and its requester paced ->
 *   recovery to line rate once marking stops; every byte delivered; CNPs never a bad frame;
 *   with the notification point off, CE is counted and answered by no CNP; a CNP from another
 *   address than the peer's is rx_bad_addr, to a QP in INIT rx_qp_state, one marked CE is
 *   counted and answered by no CNP.
 */
#include <inttypes.h>

#include "tap.h"

#include "transport_dcqcn.h"

#define SZ (4u << 20)
#define NS_LIMIT 20000000000ull
#define ONE DCQCN_ALPHA_ONE

/* ---- The algorithm (1 tick = 1 ns) ---- */

static struct dcqcn_params alg_params(void)
{
	struct dcqcn_params p;

	memset(&p, 0, sizeof(p));
	p.np = p.rp = true;
	p.ecn = DROCE_ECN_ECT0;
	p.alpha_g_shift = 8;
	p.alpha_init = ONE;
	p.stages = 5;
	p.line_rate = 80000;		/* kbit/s: 100 ns per byte */
	p.min_rate = 8000;
	p.ai_rate = 4000;
	p.hai_rate = 16000;
	p.byte_reset = 100000;
	p.burst = 1000;
	p.hz = 1000000000;
	p.cnp_interval = 50000;
	p.rate_reduce_period = 4000;
	p.alpha_period = 55000;
	p.time_reset = 55000;
	return p;
}

#define T0 1000000000ull

static void alg_cut(void)
{
	struct dcqcn_params p = alg_params();
	struct dcqcn_qp q;
	unsigned int i;

	transport_dcqcn_init(&q, &p);
	CHECK(!q.limited);
	CHECK_EQ(q.rc, 80000u);
	/* First CNP: from line rate, alpha 1: halved; the target is the rate before. */
	CHECK(transport_dcqcn_cnp(&q, T0));
	CHECK(q.limited);
	CHECK_EQ(q.rc, 40000u);
	CHECK_EQ(q.rt, 80000u);
	CHECK_EQ(q.alpha, ONE);	/* (1 - g) 1 + g */
	/* Within rate_reduce_period: no cut. */
	CHECK(!transport_dcqcn_cnp(&q, T0 + 3999));
	CHECK_EQ(q.rc, 40000u);
	CHECK(transport_dcqcn_cnp(&q, T0 + 4000));
	CHECK_EQ(q.rc, 20000u);
	CHECK_EQ(q.rt, 40000u);
	CHECK_EQ(q.cuts, 2u);
	/* Never below min_rate. */
	for (i = 2; i < 12; i++)
		CHECK(transport_dcqcn_cnp(&q, T0 + 4000 * i));
	CHECK_EQ(q.rc, 8000u);
	CHECK(q.limited);
	/* Reaction point off: a CNP changes nothing. */
	p.rp = false;
	transport_dcqcn_init(&q, &p);
	CHECK(!transport_dcqcn_cnp(&q, T0));
	CHECK(!q.limited);
	CHECK(transport_dcqcn_tx_ok(&q, T0, &i));
	CHECK_EQ(i, 0u);
	/* Off altogether (no parameters). */
	transport_dcqcn_init(&q, NULL);
	CHECK(!transport_dcqcn_cnp(&q, T0));
	CHECK(!q.limited);
}

static void alg_alpha(void)
{
	struct dcqcn_params p = alg_params();
	struct dcqcn_qp q;
	uint32_t a;

	p.time_reset = 1000000000;	/* no rate increase in the way */
	transport_dcqcn_init(&q, &p);
	CHECK(transport_dcqcn_cnp(&q, T0));
	CHECK_EQ(q.alpha, ONE);
	transport_dcqcn_advance(&q, T0 + 54999);
	CHECK_EQ(q.alpha, ONE);
	transport_dcqcn_advance(&q, T0 + 55000);	/* one period without CNP: (1 - g) alpha */
	CHECK_EQ(q.alpha, ONE - (ONE >> 8));
	transport_dcqcn_advance(&q, T0 + 110000);
	a = ONE - (ONE >> 8);
	a -= a >> 8;
	CHECK_EQ(q.alpha, a);
	/* A CNP restarts the period and raises alpha by g: (1 - g) alpha + g. */
	CHECK(transport_dcqcn_cnp(&q, T0 + 120000));
	a = a - (a >> 8) + (ONE >> 8);
	CHECK_EQ(q.alpha, a);
	transport_dcqcn_advance(&q, T0 + 120000 + 54999);
	CHECK_EQ(q.alpha, a);
	/* A smaller alpha cuts less: rate (1 - alpha / 2), alpha as decayed once more by then. */
	{
		uint32_t rc = q.rc;

		a -= a >> 8;
		CHECK(transport_dcqcn_cnp(&q, T0 + 200000));
		CHECK_EQ(q.rc, rc - (uint32_t)(((uint64_t)rc * a) >> (DCQCN_ALPHA_SHIFT + 1)));
	}
	/* Decays to 0 over a long quiet time (caught up at once). */
	transport_dcqcn_advance(&q, T0 + 2000000000ull);
	CHECK_EQ(q.alpha, 0u);
}

/* One timer event at @p now: check the stage's effect on target and rate. */
static void expect_inc(struct dcqcn_qp *q, uint64_t now, bool timer, uint32_t rt_add)
{
	uint32_t rc = q->rc, rt = q->rt;

	if (timer)
		CHECK_EQ(transport_dcqcn_advance(q, now), 1u);
	else
		CHECK_EQ(transport_dcqcn_tx_sent(q, (uint32_t)q->p->byte_reset), 1u);
	CHECK_EQ(q->rt, RTE_MIN(rt + rt_add, q->p->line_rate));
	CHECK_EQ(q->rc, rc + (q->rt - rc + 1) / 2);
}

static void alg_recovery(void)
{
	struct dcqcn_params p = alg_params();
	struct dcqcn_qp q;
	uint64_t t, tr = 55000;
	unsigned int k;

	p.alpha_period = 1000000000;
	transport_dcqcn_init(&q, &p);
	CHECK(transport_dcqcn_cnp(&q, T0));
	CHECK(transport_dcqcn_cnp(&q, T0 + 4000));	/* rate 20000, target 40000 */
	t = T0 + 4000;
	CHECK_EQ(transport_dcqcn_advance(&q, t + tr - 1), 0u);
	/* Fast recovery: F - 1 = 4 timer events, halfway to the target each. */
	for (k = 1; k <= 4; k++)
		expect_inc(&q, t + k * tr, true, 0);
	CHECK_EQ(q.rc, 38750u);
	CHECK_EQ(q.rt, 40000u);
	/* The F-th timer event: additive increase; and the next ones. */
	expect_inc(&q, t + 5 * tr, true, 4000);
	expect_inc(&q, t + 6 * tr, true, 4000);
	CHECK_EQ(q.t_stage, 6u);
	/* Byte counter events while the timer count is past F: additive until both are, then
	 * hyper increase by (min(counts) - F) hai_rate. */
	for (k = 1; k <= 5; k++)
		expect_inc(&q, 0, false, 4000);
	expect_inc(&q, 0, false, 16000);	/* both 6: i = 1 */
	expect_inc(&q, t + 7 * tr, true, 16000);	/* timer 7, bytes 6: i = 1 */
	expect_inc(&q, 0, false, 2 * 16000);	/* 7, 7: i = 2 */
	CHECK(q.limited);
	/* Until back at line rate: the pacer is off. */
	for (k = 8; q.limited && k < 100; k++)
		transport_dcqcn_advance(&q, t + k * tr);
	CHECK(!q.limited);
	CHECK_EQ(q.rc, 80000u);
	CHECK_EQ(q.rt, 80000u);
	CHECK_EQ(transport_dcqcn_tx_sent(&q, 1000000), 0u);	/* unlimited: nothing counted */
	/* A new CNP starts a new episode from line rate with alpha as it was. */
	CHECK(transport_dcqcn_cnp(&q, t + 200 * tr));
	CHECK(q.limited);
	CHECK(q.rc < 80000u);

	/* Idle for long: caught up at once, back at line rate. */
	transport_dcqcn_init(&q, &p);
	CHECK(transport_dcqcn_cnp(&q, T0));
	CHECK(transport_dcqcn_advance(&q, T0 + 10000000000ull) > 0);
	CHECK(!q.limited);
	CHECK_EQ(q.rc, 80000u);
}

static void alg_pacer(void)
{
	struct dcqcn_params p = alg_params();
	struct dcqcn_qp q;
	unsigned int incs;
	uint64_t now;

	p.time_reset = p.alpha_period = 1000000000;	/* the rate stays */
	p.byte_reset = 0;
	transport_dcqcn_init(&q, &p);
	CHECK(transport_dcqcn_tx_ok(&q, T0, &incs));	/* unlimited: always */
	CHECK(transport_dcqcn_cnp(&q, T0));		/* 40000 kbit/s: 200 ns per byte */
	CHECK_EQ(q.tick_q16, 200ull << 16);
	CHECK(transport_dcqcn_tx_ok(&q, T0, &incs));
	transport_dcqcn_tx_sent(&q, 1000);
	CHECK(!transport_dcqcn_tx_ok(&q, T0 + 1, &incs));
	CHECK(q.wait);
	CHECK(!transport_dcqcn_tx_ok(&q, T0 + 199999, &incs));
	CHECK(transport_dcqcn_tx_ok(&q, T0 + 200000, &incs));
	CHECK(!q.wait);
	/* After idling: one burst (1000 bytes) of credit, no more. */
	now = T0 + 50000000;
	CHECK(transport_dcqcn_tx_ok(&q, now, &incs));
	transport_dcqcn_tx_sent(&q, 1000);
	CHECK(transport_dcqcn_tx_ok(&q, now, &incs));
	transport_dcqcn_tx_sent(&q, 1000);
	CHECK(!transport_dcqcn_tx_ok(&q, now, &incs));
	CHECK(transport_dcqcn_tx_ok(&q, now + 200000, &incs));
}

/* ---- The transport over the simulated link ---- */

static struct tt tt;
static uint8_t *lbuf, *rbuf;
static struct droce_mr *lmr, *rmr;
static struct dcqcn_params params[2];

static const struct dcqcn_params *tt_dcqcn(struct transport_env *env, struct droce_device *dev)
{
	return &params[tt_side(env->engine, dev)];
}

/* What the wire carried: frames by ECN field, CNPs and their times. */
static struct {
	unsigned int ect0[2], not_ect[2], ce[2], cnp[2], cnp_ect;
	uint64_t last_cnp[2], min_cnp_gap[2];
	uint64_t data_bytes, limited_bytes;
	uint64_t limited_from, limited_to;
} w;

static struct tt_qp *qp_a;

static void wire_tap(struct tt *t, int from, const struct droce_pkt *pkt, struct rte_mbuf *m)
{
	struct transport_qp_info info;
	unsigned int ecn = pkt->tclass & 3;

	RTE_SET_USED(m);
	if (pkt->opcode == DROCE_OP_CNP) {
		CHECK(droce_bth_becn(droce_pkt_bth(pkt)));
		w.cnp[from]++;
		w.cnp_ect += ecn != 0;
		if (w.last_cnp[from] != 0)
			w.min_cnp_gap[from] = RTE_MIN(w.min_cnp_gap[from],
						      t->env.now - w.last_cnp[from]);
		w.last_cnp[from] = t->env.now;
		return;
	}
	if (ecn == DROCE_ECN_ECT0)
		w.ect0[from]++;
	else if (ecn == 0)
		w.not_ect[from]++;
	else
		w.ce[from]++;
	if (from == 0 && pkt->payload_len != 0 && qp_a != NULL) {
		transport_qp_info(qp_a->t, &info);
		w.data_bytes += pkt->payload_len;
		if (info.cc_limited) {
			if (w.limited_bytes == 0)
				w.limited_from = t->env.now;
			w.limited_bytes += pkt->payload_len;
			w.limited_to = t->env.now;
		}
	}
}

static void tt_params(struct dcqcn_params *p)
{
	uint64_t us = TT_HZ / 1000000;

	memset(p, 0, sizeof(*p));
	p->np = p->rp = true;
	p->ecn = DROCE_ECN_ECT0;
	p->alpha_g_shift = 8;
	p->alpha_init = ONE;
	p->stages = 5;
	p->line_rate = 8000000;		/* 8 Gbit/s */
	p->min_rate = 10000;
	p->ai_rate = 40000;
	p->hai_rate = 400000;
	p->byte_reset = 10485760;
	p->burst = 16384;
	p->hz = TT_HZ;
	p->cnp_interval = 50 * us;
	p->rate_reduce_period = 4 * us;
	p->alpha_period = 55 * us;
	p->time_reset = 55 * us;
}

static void write_burst(struct tt_qp *q, unsigned int n, uint32_t len, uint32_t seed)
{
	struct ibv_wc wc[64];
	unsigned int i;

	CHECK(n <= 64 && n * len <= SZ);
	tt_fill(lbuf, n * len, seed);
	for (i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)lbuf + i * len, len, lmr->lkey };
		struct ibv_send_wr wr;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = (uintptr_t)rbuf + i * len;
		wr.wr.rdma.rkey = rmr->rkey;
		tt_post_send(q, &wr);
	}
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, (int)n, wc, NS_LIMIT), (int)n);
	for (i = 0; i < n; i++)
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
	CHECK(memcmp(lbuf, rbuf, (size_t)n * len) == 0);
}

static void ce_cnp_cut_recover(void)
{
	struct transport_qp_info info;
	struct tt_opts o;
	struct tt_qp *a;
	unsigned int round;
	uint64_t us = TT_HZ / 1000000, span;

	memset(&tt.cnt, 0, sizeof(tt.cnt));
	memset(&w, 0, sizeof(w));
	w.min_cnp_gap[0] = w.min_cnp_gap[1] = UINT64_MAX;
	tt.tap = wire_tap;
	tt_opts_default(&o);
	a = tt_pair(&tt, &o);
	qp_a = a;

	/* An unmarked link: ECT(0) both ways, no CNP, no limit. */
	write_burst(a, 8, 65536, 1);
	CHECK(w.ect0[0] > 0 && w.ect0[1] > 0);
	CHECK_EQ(w.not_ect[0] + w.not_ect[1] + w.ce[0] + w.ce[1], 0u);
	CHECK_EQ(w.cnp[0] + w.cnp[1], 0u);
	transport_qp_info(a->t, &info);
	CHECK(info.cc_on);
	CHECK(!info.cc_limited);
	CHECK_EQ(info.cc_rate_kbps, 8000000u);

	/* Every ECN-capable frame marked CE. */
	tt.ce = 1000;
	write_burst(a, 32, 65536, 2);
	tt.ce = 0;
	tt_run(&tt, NULL, NULL, 1000000);	/* the last CNPs arrive */
	/* Notification point (side 1 sees CE on the WRITEs): CNPs, spaced. */
	CHECK(tt.cnt[1].rx_ce > 0);
	CHECK(tt.cnt[1].cnp_sent > 0);
	CHECK_EQ(tt.cnt[1].cnp_sent + tt.cnt[1].cnp_skipped, tt.cnt[1].rx_ce);
	CHECK(tt.cnt[1].cnp_skipped > 0);
	CHECK_EQ(w.cnp[1], (unsigned int)tt.cnt[1].cnp_sent);
	CHECK(w.min_cnp_gap[1] >= 50 * us);
	CHECK_EQ(w.cnp_ect, 0u);	/* CNPs leave Not-ECT: never marked themselves */
	/* Reaction point (side 0): every CNP counted, the rate cut, the requester paced. */
	CHECK_EQ(tt.cnt[0].cnp_rcvd, tt.cnt[1].cnp_sent);
	CHECK(tt.cnt[0].cc_rate_cut > 0);
	CHECK(tt.cnt[0].cc_rate_cut <= tt.cnt[0].cnp_rcvd);
	CHECK(tt.cnt[0].cc_paced > 0);
	CHECK_EQ(tt.cnt[0].rx_bad_opcode + tt.cnt[1].rx_bad_opcode, 0u);
	CHECK_EQ(tt.cnt[0].rx_bad_addr + tt.cnt[1].rx_bad_addr, 0u);
	/* The ACKs were marked too: side 0 answered them with CNPs to side 1. */
	CHECK(tt.cnt[0].rx_ce > 0);
	CHECK_EQ(tt.cnt[1].cnp_rcvd, tt.cnt[0].cnp_sent);
	transport_qp_info(a->t, &info);
	CHECK(info.cc_limited || tt.cnt[0].cc_rate_full > 0);
	/* Paced: while limited, side 0's data went at most at line rate (plus a burst). */
	span = w.limited_to - w.limited_from;
	CHECK(w.limited_bytes > 0);
	CHECK(w.limited_bytes <= span * 1000 / (TT_HZ / 1000000) + 16384 + 65536);

	/* Marking stopped: timer and byte counter bring the rate back to line rate. */
	for (round = 0; round < 200 && tt.cnt[0].cc_rate_full == 0; round++)
		write_burst(a, 16, 65536, 3 + round);
	CHECK(tt.cnt[0].cc_rate_full > 0);
	CHECK(tt.cnt[0].cc_rate_inc > 0);
	transport_qp_info(a->t, &info);
	CHECK(!info.cc_limited);
	CHECK_EQ(info.cc_rate_kbps, 8000000u);
	CHECK_EQ(tt.cnt[0].retransmits + tt.cnt[1].retransmits, 0u);
	printf("dcqcn: ce %" PRIu64 " cnp sent %" PRIu64 " skipped %" PRIu64 " rcvd %" PRIu64
	       " cuts %" PRIu64 " increases %" PRIu64 " paced %" PRIu64 " recovered after %u rounds;"
	       " %" PRIu64 " bytes limited over %" PRIu64 " us\n",
	       tt.cnt[1].rx_ce, tt.cnt[1].cnp_sent, tt.cnt[1].cnp_skipped, tt.cnt[0].cnp_rcvd,
	       tt.cnt[0].cc_rate_cut, tt.cnt[0].cc_rate_inc, tt.cnt[0].cc_paced, round,
	       w.limited_bytes, span / us);
	qp_a = NULL;
}

static void np_off(void)
{
	struct tt_opts o;
	struct tt_qp *a;

	params[1].np = false;
	memset(&tt.cnt, 0, sizeof(tt.cnt));
	memset(&w, 0, sizeof(w));
	tt_opts_default(&o);
	a = tt_pair(&tt, &o);
	tt.ce = 1000;
	write_burst(a, 8, 65536, 9);
	tt.ce = 0;
	CHECK(tt.cnt[1].rx_ce > 0);
	CHECK_EQ(tt.cnt[1].cnp_sent, 0u);
	CHECK_EQ(tt.cnt[1].cnp_skipped, tt.cnt[1].rx_ce);
	CHECK_EQ(tt.cnt[0].cnp_rcvd, 0u);
	CHECK_EQ(tt.cnt[0].cc_rate_cut, 0u);
	params[1].np = true;
}

/* A CNP to side @p to's QP @p dqpn from address @p sgid_side's GID, ECN field @p ecn. */
static void inject_cnp(int to, int sgid_side, uint32_t dqpn, uint8_t ecn)
{
	struct droce_hdr_fields h;
	struct droce_flow f;
	struct droce_pkt pkt;
	struct rte_mbuf *m = rte_pktmbuf_alloc(tt.pool);

	CHECK(m != NULL);
	memset(&f, 0, sizeof(f));
	memcpy(f.sgid, tt.gid[sgid_side].raw, 16);
	memcpy(f.dgid, tt.gid[to].raw, 16);
	f.tclass = ecn;
	memset(&h, 0, sizeof(h));
	h.opcode = DROCE_OP_CNP;
	h.dqpn = dqpn;
	h.pkey = 0xffff;
	CHECK_EQ(droce_build_mbuf(m, &f, &h), 0);
	CHECK_EQ(droce_parse_mbuf(m, 0, &pkt), DROCE_PARSE_OK);
	CHECK(droce_bth_becn(droce_pkt_bth(&pkt)));
	tt_enqueue(&tt, m, &pkt, to);
	tt_run(&tt, NULL, NULL, 1000000);
}

/* Which CNPs a QP takes: from its peer only, in RTR or later; a CE-marked CNP is answered by
 * no CNP; none is ever a bad opcode. */
static void cnp_admission(void)
{
	struct transport_qp_info info;
	struct ibv_qp_attr at;
	struct tt_opts o;
	struct tt_qp *a, *b, *c;

	tt_opts_default(&o);
	memset(&tt.cnt, 0, sizeof(tt.cnt));
	tt.tap = NULL;
	a = tt_pair(&tt, &o);
	b = a->peer;
	inject_cnp(1, 1, b->qp->qp_num, 0);	/* from droce1's own address: not the peer */
	CHECK_EQ(tt.cnt[1].rx_bad_addr, 1u);
	CHECK_EQ(tt.cnt[1].cnp_rcvd, 0u);
	transport_qp_info(b->t, &info);
	CHECK(!info.cc_limited);
	inject_cnp(1, 0, b->qp->qp_num, 0);	/* from the peer */
	CHECK_EQ(tt.cnt[1].cnp_rcvd, 1u);
	CHECK_EQ(tt.cnt[1].cc_rate_cut, 1u);
	transport_qp_info(b->t, &info);
	CHECK(info.cc_limited);
	CHECK_EQ(info.cc_rate_kbps, 4000000u);	/* 8 Gb/s halved */
	CHECK_EQ(info.cc_cuts, 1u);
	inject_cnp(1, 0, b->qp->qp_num, DROCE_ECN_CE);	/* marked: counted, not answered */
	CHECK_EQ(tt.cnt[1].rx_ce, 1u);
	CHECK_EQ(tt.cnt[1].cnp_skipped, 1u);
	CHECK_EQ(tt.cnt[1].cnp_sent, 0u);
	CHECK_EQ(tt.cnt[1].cnp_rcvd, 2u);
	/* A QP in INIT has no peer yet. */
	c = tt_qp_new(&tt, 1, &o);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	tt_modify(&tt, c, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		  IBV_QP_ACCESS_FLAGS);
	inject_cnp(1, 0, c->qp->qp_num, 0);
	CHECK_EQ(tt.cnt[1].rx_qp_state, 1u);
	CHECK_EQ(tt.cnt[1].cnp_rcvd, 2u);
	CHECK_EQ(tt.cnt[0].rx_bad_opcode + tt.cnt[1].rx_bad_opcode, 0u);
}

int main(int argc, char **argv)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	alg_cut();
	alg_alpha();
	alg_recovery();
	alg_pacer();

	tt_init(&tt, argc, argv, 5);
	tt_params(&params[0]);
	tt_params(&params[1]);
	tt.env.dcqcn = tt_dcqcn;
	lbuf = aligned_alloc(4096, SZ);
	rbuf = aligned_alloc(4096, SZ);
	CHECK(lbuf != NULL && rbuf != NULL);
	lmr = tt_mr(&tt, 0, lbuf, SZ, access);
	rmr = tt_mr(&tt, 1, rbuf, SZ, access);
	ce_cnp_cut_recover();
	np_off();
	cnp_admission();
	return 0;
}
