/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The engine visits only QPs with work (doorbells, lib/engine/engine_loop.c): no post may be lost.
 * - NPAIRS QP pairs, all used once, then idle long enough for the engine to drop them from
 *   its active list (and, on an lcore, to go to sleep);
 * - then one QP at a time, spread over the idle crowd, gets a SEND after an idle gap: each
 *   completes (a lost doorbell would hang it: nothing retransmits a WQE never sent);
 * - one QP posts again right after each completion, so the post races the engine's
 *   disarm-and-recheck of that QP;
 * - an idle QP in ERR flushes a receive and a send posted long after it went there;
 * - no retransmission and no drop anywhere.
 */
#include "fn.h"

enum { NPAIRS = 256, ROUNDS = 64, RACE = 2000, LEN = 64 };

static struct fn_ep ep[NPAIRS][2];
static struct droce_cq *scq[2], *rcq[2];

static void create_pairs(struct droce_pd *pd[2])
{
	struct fn_attr a = fn_attr_default();
	int p, s;

	a.depth = 8;
	for (s = 0; s < 2; s++) {
		scq[s] = droce_create_cq(pair_ctx[s], 4 * NPAIRS, NULL, NULL, 0);
		rcq[s] = droce_create_cq(pair_ctx[s], 4 * NPAIRS, NULL, NULL, 0);
		CHECK(scq[s] != NULL && rcq[s] != NULL);
	}
	for (p = 0; p < NPAIRS; p++) {
		for (s = 0; s < 2; s++) {
			struct droce_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .send_cq = scq[s],
				.recv_cq = rcq[s], .cap = { .max_send_wr = a.depth,
				.max_recv_wr = a.depth, .max_send_sge = 1, .max_recv_sge = 1 } };

			ep[p][s] = (struct fn_ep){ .side = s, .pd = pd[s], .scq = scq[s],
						   .rcq = rcq[s] };
			ep[p][s].qp = droce_create_qp(pd[s], &ia);
			CHECK(ep[p][s].qp != NULL);
		}
		fn_connect(&ep[p][0], &ep[p][1], &a);
		fn_connect(&ep[p][1], &ep[p][0], &a);
	}
}

/* A WRITE lands at the slot of the pair it names (@p id % NPAIRS): QPs of different engine
 * lcores never write the same bytes at once. */
static void post(struct droce_qp *qp, uint64_t id, enum ibv_wr_opcode op, struct fn_mem *m,
		 struct fn_mem *rem)
{
	struct ibv_sge sg = { (uintptr_t)m->buf, LEN, m->mr->lkey };
	struct ibv_send_wr w = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	w.wr.rdma.remote_addr = (uintptr_t)rem->buf + (id % NPAIRS) * LEN;
	w.wr.rdma.rkey = rem->mr->rkey;
	CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
}

/* The completion of @p id on QP @p qp from @p cq. */
static void expect(struct droce_cq *cq, struct droce_qp *qp, uint64_t id,
		   enum ibv_wc_status st)
{
	struct ibv_wc wc = fn_wait(cq);

	CHECK_EQ(wc.wr_id, id);
	CHECK_EQ(wc.status, st);
	CHECK_EQ(wc.qp_num, qp->qp_num);
}

static void wake_one_at_a_time(struct fn_mem *src, struct fn_mem *dst)
{
	int r, p;

	for (r = 0; r < ROUNDS; r++) {
		p = (r * 97 + 13) % NPAIRS;
		if (r % 8 == 0)
			fn_run(0.05);	/* every QP idle again, the lcore asleep */
		fn_post_recv(ep[p][1].qp, (uint64_t)r, dst->buf, LEN, dst->mr->lkey);
		post(ep[p][0].qp, (uint64_t)r, IBV_WR_SEND, src, dst);
		expect(scq[0], ep[p][0].qp, (uint64_t)r, IBV_WC_SUCCESS);
		expect(rcq[1], ep[p][1].qp, (uint64_t)r, IBV_WC_SUCCESS);
	}
}

static void err_flush_after_idle(struct fn_mem *src, struct fn_mem *dst)
{
	struct droce_qp *qp = ep[1][0].qp;
	struct ibv_qp_attr q = { .qp_state = IBV_QPS_ERR };

	CHECK_EQ(droce_modify_qp(qp, &q, IBV_QP_STATE), 0);
	fn_run(0.2);
	fn_post_recv(qp, 7, src->buf, LEN, src->mr->lkey);
	expect(rcq[0], qp, 7, IBV_WC_WR_FLUSH_ERR);
	fn_run(0.1);
	post(qp, 1, IBV_WR_RDMA_WRITE, src, dst);
	expect(scq[0], qp, 1, IBV_WC_WR_FLUSH_ERR);
}

int main(int argc, char **argv)
{
	struct droce_pd *pd[2];
	struct fn_mem src, dst;
	struct droce_counters c;
	int p, i;

	fn_open(argc, argv);
	pd[0] = fn_pd(0);
	pd[1] = fn_pd(1);
	fn_mem_reg(&src, pd[0], 4096, FN_ACCESS_ALL, 1);
	fn_mem_reg(&dst, pd[1], NPAIRS * LEN, FN_ACCESS_ALL, 0);
	create_pairs(pd);
	for (p = 0; p < NPAIRS; p++)
		post(ep[p][0].qp, (uint64_t)p, IBV_WR_RDMA_WRITE, &src, &dst);
	for (p = 0; p < NPAIRS; p++)
		CHECK_EQ(fn_wait(scq[0]).status, IBV_WC_SUCCESS);
	fn_run(0.5);		/* a long idle time */
	wake_one_at_a_time(&src, &dst);
	for (i = 0; i < RACE; i++) {	/* post right after the completion */
		post(ep[0][0].qp, (uint64_t)i * NPAIRS, IBV_WR_RDMA_WRITE, &src, &dst);
		expect(scq[0], ep[0][0].qp, (uint64_t)i * NPAIRS, IBV_WC_SUCCESS);
	}
	err_flush_after_idle(&src, &dst);
	c = fn_counters(0);
	CHECK_EQ(c.retransmits + c.tx_dropped + c.nak_rcvd, 0);
	for (p = 0; p < NPAIRS; p++)
		for (i = 0; i < 2; i++)
			CHECK_EQ(droce_destroy_qp(ep[p][i].qp), 0);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(droce_destroy_cq(scq[i]), 0);
		CHECK_EQ(droce_destroy_cq(rcq[i]), 0);
	}
	fn_mem_free(&src);
	fn_mem_free(&dst);
	CHECK_EQ(droce_dealloc_pd(pd[0]), 0);
	CHECK_EQ(droce_dealloc_pd(pd[1]), 0);
	fn_close();
	printf("doorbells: idle QPs woken one at a time, post after completion, ERR flush (%s): ok\n",
	       argv[1]);
	return 0;
}
