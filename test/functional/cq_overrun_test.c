/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A CQ overrun through the real engine, on a QP that takes no part in it. droce1's QPs B and
 * Q share a small receive CQ that the test never polls; B stays idle, and droce0's QP P sends
 * SENDs to Q until one finds the CQ full. Proves:
 * - droce1 raises IBV_EVENT_QP_FATAL for both QPs; droce_poll_cq() on the CQ still returns the
 *   completions that fit, in order, then -EIO;
 * - B, on which nothing was posted and for which nothing arrived (no call of its owner's
 *   data path), is in ERR soon after (droce_query_qp());
 * - B serves nothing: an RDMA WRITE and an RDMA READ from its peer A to B's memory are not
 *   executed (B's memory and A's READ buffer stay as they were), B counts the frames as
 *   rx_qp_state, A's WRs end in RETRY_EXC_ERR and WR_FLUSH_ERR;
 * - the engine goes on: a fresh pair moves a SEND.
 *
 * Usage: functional_cq_overrun_test {inline|lcore}
 */
#include "fn_qp.h"

enum { LEN = 4096, DEPTH = 4 };

/* A SEND of 64 bytes from @p a, and its completion (A's CQ is polled, B's receive CQ not). */
static void send_one(struct fn_ep *a, struct fn_mem *m, uint64_t id)
{
	struct ibv_wc wc;

	fn_post_send1(a->qp, id, IBV_WR_SEND, m->buf, 64, m->mr->lkey, 0, NULL, 0, 0, 0, 0, 0);
	wc = fn_wait(a->scq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, id);
}

/* Endpoint @p e on droce1 whose receive CQ is @p rcq (shared with another QP). */
static void ep_on_cq(struct fn_ep *e, struct droce_pd *pd, struct droce_cq *rcq)
{
	struct droce_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1 } };

	e->side = 1;
	e->pd = pd;
	e->scq = droce_create_cq(pair_ctx[1], DEPTH * 2, NULL, NULL, 0);
	CHECK(e->scq != NULL);
	e->rcq = NULL;
	ia.send_cq = e->scq;
	ia.recv_cq = rcq;
	e->qp = droce_create_qp(pd, &ia);
	CHECK(e->qp != NULL);
}

/* Both QPs' QP_FATAL events, up to 5 s. */
static bool both_fatal(struct droce_qp *x, struct droce_qp *y)
{
	struct droce_async_event ev;
	bool gx = false, gy = false;

	while ((!gx || !gy) && fn_async_wait(1, IBV_EVENT_QP_FATAL, 5, &ev)) {
		gx |= ev.element.qp == x;
		gy |= ev.element.qp == y;
	}
	return gx && gy;
}

int main(int argc, char **argv)
{
	struct fn_attr at = fn_attr_default();
	struct fn_mem am, bm, cm, pm, qm;
	struct fn_ep e[2], f[2], c[2];
	struct droce_async_event ev;
	unsigned int sent = 0, i;
	uint64_t end;
	struct ibv_wc wc;

	fn_open(argc, argv);
	fn_async_nonblock(1);
	at.depth = DEPTH;
	at.timeout = 10;	/* 4.2 ms: A gives up after 3 tries, not 3 x 67 ms */
	at.retry_cnt = 2;
	fn_pair(e, &at);	/* A (droce0) <-> B (droce1), B's receive CQ: DEPTH * 2 */
	fn_ep_create(&f[0], 0, fn_pd(0), &at);	/* P */
	ep_on_cq(&f[1], e[1].pd, e[1].rcq);	/* Q, on B's receive CQ */
	fn_connect(&f[0], &f[1], &at);
	fn_connect(&f[1], &f[0], &at);
	fn_mem_reg(&am, e[0].pd, LEN, FN_ACCESS_ALL, 0xa5);
	fn_mem_reg(&bm, e[1].pd, LEN, FN_ACCESS_ALL, 0x5a);
	fn_mem_reg(&pm, f[0].pd, LEN, FN_ACCESS_ALL, 0x11);
	fn_mem_reg(&qm, e[1].pd, LEN, FN_ACCESS_ALL, 0);

	/* Fill the CQ (DEPTH * 2 entries or more) with Q's receives, and one more. */
	while (sent <= (unsigned int)e[1].rcq->cqe) {
		for (i = 0; i < DEPTH; i++)
			fn_post_recv(f[1].qp, 100 + sent + i, qm.buf + 64 * i, 64, qm.mr->lkey);
		for (i = 0; i < DEPTH && sent <= (unsigned int)e[1].rcq->cqe; i++) {
			send_one(&f[0], &pm, sent++);
			if (sent <= (unsigned int)e[1].rcq->cqe)
				CHECK(!fn_async(1, &ev));	/* nothing before the CQ is full */
		}
	}
	CHECK(both_fatal(e[1].qp, f[1].qp));
	/* The completions that fit, Q's first receives, are still read in order; then -EIO. */
	for (i = 0; i < (unsigned int)e[1].rcq->cqe; i++) {
		CHECK_EQ(droce_poll_cq(e[1].rcq, 1, &wc), 1);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, 100 + i);
		CHECK_EQ(wc.qp_num, f[1].qp->qp_num);
	}
	CHECK_EQ(droce_poll_cq(e[1].rcq, 1, &wc), -EIO);
	printf("cq overrun: the receive CQ (%d entries) of B and Q overran at Q's SEND %u: "
	       "QP_FATAL for both\n", e[1].rcq->cqe, sent);

	/* B, idle throughout, goes to ERR by itself. */
	end = pair_deadline(5);
	while (fn_state(e[1].qp) != IBV_QPS_ERR) {
		CHECK(rte_get_tsc_cycles() < end);
		pair_step();
	}
	CHECK_EQ(fn_qp_counters(e[1].qp).rx_packets, 0);
	/* A writes into and reads from B's memory. */
	fn_post_send1(e[0].qp, 1, IBV_WR_RDMA_WRITE, am.buf, LEN, am.mr->lkey, 0, NULL, 0, 0,
		      (uintptr_t)bm.buf, bm.mr->rkey, 0);
	fn_post_send1(e[0].qp, 2, IBV_WR_RDMA_READ, am.buf, LEN, am.mr->lkey, 0, NULL, 0, 0,
		      (uintptr_t)bm.buf, bm.mr->rkey, 0);
	wc = fn_wait(e[0].scq);
	CHECK_EQ(wc.wr_id, 1);
	CHECK_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
	wc = fn_wait(e[0].scq);
	CHECK_EQ(wc.wr_id, 2);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	CHECK(fn_all(bm.buf, LEN, 0x5a));
	CHECK(fn_all(am.buf, LEN, 0xa5));
	CHECK(fn_qp_counters(e[1].qp).rx_qp_state >= 1);
	printf("cq overrun: B in ERR unasked and served nothing: WRITE and READ not executed, %lu "
	       "frames dropped as rx_qp_state, A: RETRY_EXC_ERR\n",
	       (unsigned long)fn_qp_counters(e[1].qp).rx_qp_state);

	/* The engine goes on. */
	at = fn_attr_default();
	fn_pair(c, &at);
	fn_mem_reg(&cm, c[1].pd, LEN, FN_ACCESS_ALL, 0);
	fn_post_recv(c[1].qp, 7, cm.buf, LEN, cm.mr->lkey);
	fn_mem_free(&am);
	fn_mem_reg(&am, c[0].pd, LEN, FN_ACCESS_ALL, 0xa5);
	send_one(&c[0], &am, 8);
	wc = fn_wait(c[1].rcq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK(fn_all(cm.buf, 64, 0xa5));

	fn_mem_free(&am);
	fn_mem_free(&bm);
	fn_mem_free(&cm);
	fn_mem_free(&pm);
	fn_mem_free(&qm);
	fn_pair_destroy(c);
	CHECK_EQ(droce_destroy_qp(f[1].qp), 0);
	CHECK_EQ(droce_destroy_cq(f[1].scq), 0);
	fn_ep_destroy(&f[0]);
	CHECK_EQ(droce_dealloc_pd(f[0].pd), 0);
	fn_pair_destroy(e);
	fn_close();
	printf("cq overrun: ok (%s engine)\n", argv[1]);
	return 0;
}
