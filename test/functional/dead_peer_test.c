/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A dead peer through the real engine: droce0's QP A sends a WRITE to a QP of droce1 that was
 * destroyed. While A retries, another pair B keeps moving data both ways. Proves:
 * - A's first WRITE ends in RETRY_EXC_ERR after exactly retry_cnt retries (go-back-N with the
 *   window cut to one packet at each timeout: each retry resends only the oldest of its three
 *   WRITEs; A's own counters say retransmits = retry_cnt, window_cut = retry_cnt, tx_packets
 *   = 3 + retry_cnt, retry_exceeded = 1; droce1 saw 3 + retry_cnt frames for an unknown
 *   QP), no sooner than (retry_cnt + 1) local ACK timeouts after the post and no later
 *   than 4 times that (IBA C9-141: a timeout fires between T and 4T) plus scheduling slack;
 * - the WRs posted behind it and a receive posted afterwards flush (WR_FLUSH_ERR, in order),
 *   A is in ERR (the error is reported by the completion, as rxe does: no async event);
 * - B never noticed: every message it sent during and after A's retries completed
 *   successfully, its QPs are in RTS, its counters show no retry and no error;
 * - the engine is healthy afterwards: a new pair C is created, connected and moves data.
 */
#include "fn.h"

enum {
	RETRY_CNT = 3,
	TIMEOUT = 12,		/* 4.096 us * 2^12 = 16.8 ms */
	LEN = 4096,
	BATCH = 16,		/* B's messages in flight per side */
	N_WR = 3,		/* WRITEs A posts, each one packet */
};

#define T_US (4.096 * (1 << TIMEOUT))

struct traffic {
	struct fn_ep ep[2];
	struct fn_mem mem[2];
	uint32_t sent, done;
};

static void traffic_start(struct traffic *b)
{
	struct fn_attr a = fn_attr_default();
	int i;

	fn_pair(b->ep, &a);
	for (i = 0; i < 2; i++)
		fn_mem_reg(&b->mem[i], b->ep[i].pd, 2 * LEN, FN_ACCESS_ALL, 0);
	fn_fill(b->mem[0].buf, LEN, 7);	/* not changed while WRITEs read it */
	b->sent = b->done = 0;
}

/* Keep BATCH WRITEs of side 0 to side 1 in flight; check each completion. */
static void traffic_step(struct traffic *b)
{
	struct ibv_sge sg = { (uintptr_t)b->mem[0].buf, LEN, b->mem[0].mr->lkey };
	struct ibv_send_wr w = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc[BATCH];
	int n, i;

	w.wr.rdma.remote_addr = (uintptr_t)b->mem[1].buf + LEN;
	w.wr.rdma.rkey = b->mem[1].mr->rkey;
	while (b->sent - b->done < BATCH) {
		w.wr_id = b->sent++;
		CHECK_EQ(droce_post_send(b->ep[0].qp, &w, &bad), 0);
	}
	n = droce_poll_cq(b->ep[0].scq, BATCH, wc);
	CHECK(n >= 0);
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		CHECK_EQ(wc[i].wr_id, b->done++);
	}
}

/* Run @p b until @p n more of its messages completed. */
static void traffic_run(struct traffic *b, uint32_t n)
{
	uint64_t end = pair_deadline(FN_TIMEOUT_S);
	uint32_t goal = b->done + n;

	while (b->done < goal) {
		CHECK(rte_get_tsc_cycles() < end);
		traffic_step(b);
		pair_step();
	}
}

static void traffic_end(struct traffic *b)
{
	struct droce_counters c;
	int i;

	for (i = 0; i < 2; i++) {
		CHECK_EQ(fn_state(b->ep[i].qp), IBV_QPS_RTS);
		c = fn_qp_counters(b->ep[i].qp);
		CHECK_EQ(c.retransmits + c.retry_exceeded + c.nak_rcvd + c.seq_nak_sent, 0);
	}
	/* drain what is in flight, then tear down */
	while (b->done < b->sent) {
		struct ibv_wc wc = fn_wait(b->ep[0].scq);

		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, b->done++);
	}
	for (i = 0; i < 2; i++)
		fn_mem_free(&b->mem[i]);
	fn_pair_destroy(b->ep);
}

/* The next completion of @p cq, while @p b keeps running. */
static struct ibv_wc wait_with_traffic(struct droce_cq *cq, struct traffic *b)
{
	uint64_t end = pair_deadline(FN_TIMEOUT_S);
	struct ibv_wc wc;
	int n;

	while ((n = droce_poll_cq(cq, 1, &wc)) == 0) {
		CHECK(rte_get_tsc_cycles() < end);
		traffic_step(b);
		pair_step();
	}
	CHECK_EQ(n, 1);
	return wc;
}

/* A retries against the destroyed peer while B runs; the timing and counts of the retries. */
static void dead_peer(struct traffic *b)
{
	struct fn_attr a = fn_attr_default();
	struct droce_counters c0, c1 = fn_counters(1);
	struct fn_ep ep[2];
	struct fn_mem m;
	struct ibv_wc wc;
	uint64_t t0;
	double us, t = T_US * (RETRY_CNT + 1);
	int i;

	a.timeout = TIMEOUT;
	a.retry_cnt = RETRY_CNT;
	fn_pair(ep, &a);
	fn_mem_reg(&m, ep[0].pd, 4096, FN_ACCESS_ALL, 0);
	CHECK_EQ(droce_destroy_qp(ep[1].qp), 0);
	ep[1].qp = NULL;
	t0 = rte_get_tsc_cycles();
	for (i = 1; i <= N_WR; i++)
		fn_post_write(&ep[0], &m, 64, (uint64_t)i, 0x1000, 0x1234);
	wc = wait_with_traffic(ep[0].scq, b);
	us = (double)(rte_get_tsc_cycles() - t0) * 1e6 / (double)rte_get_tsc_hz();
	printf("RETRY_EXC_ERR after %.1f ms (%d x %.1f ms = %.1f ms expected)\n", us / 1000,
	       RETRY_CNT + 1, T_US / 1000, t / 1000);
	CHECK_EQ(wc.wr_id, 1);
	CHECK_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
	CHECK(us >= t * 0.99);		/* TSC rounding */
	CHECK(us <= 4 * t + 500000);	/* + 0.5 s: a loaded machine, sanitizers */
	for (i = 2; i <= N_WR; i++) {
		wc = wait_with_traffic(ep[0].scq, b);
		CHECK_EQ(wc.wr_id, (uint64_t)i);
		CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	}
	CHECK_EQ(fn_state(ep[0].qp), IBV_QPS_ERR);
	fn_post_recv(ep[0].qp, 7, m.buf, 64, m.mr->lkey);
	wc = wait_with_traffic(ep[0].rcq, b);
	CHECK_EQ(wc.wr_id, 7);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	c0 = fn_qp_counters(ep[0].qp);
	CHECK_EQ(c0.retransmits, RETRY_CNT);
	CHECK_EQ(c0.window_cut, RETRY_CNT);
	CHECK_EQ(c0.retry_exceeded, 1);
	CHECK_EQ(c0.tx_packets, N_WR + RETRY_CNT);
	CHECK_EQ(fn_counters(1).rx_unknown_qp - c1.rx_unknown_qp, N_WR + RETRY_CNT);
	fn_mem_free(&m);
	fn_pair_destroy(ep);
}

/* A new pair on the same engine: SEND and WRITE work. */
static void healthy(void)
{
	struct traffic c;

	traffic_start(&c);
	traffic_run(&c, 64);
	traffic_end(&c);
}

int main(int argc, char **argv)
{
	struct traffic b;

	fn_open(argc, argv);
	traffic_start(&b);
	traffic_run(&b, 32);
	dead_peer(&b);
	traffic_run(&b, 32);		/* and after */
	traffic_end(&b);
	healthy();
	fn_close();
	printf("dead peer (%s): ok\n", argv[1]);
	return 0;
}
