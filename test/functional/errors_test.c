/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Every RC error path through the engine, each on a fresh QP pair (droce0 requests, droce1
 * responds): bad R_Key, out of bounds, missing MR access flag, wrong PD (REM_ACCESS_ERR),
 * missing QP access flag and a SEND longer than the receive (REM_INV_REQ_ERR; LOC_LEN_ERR on
 * the receive), a bad L_Key (LOC_PROT_ERR, nothing sent), RNR (no receive, then one posted:
 * success; and RNR_RETRY_EXC_ERR with a small rnr_retry), retry exhaustion against a peer
 * whose QP was destroyed or is in ERR (RETRY_EXC_ERR after retry_cnt retries). Each: the
 * right status on both sides (the following WRs flushed, both QPs in ERR where IBA says so),
 * the responder's memory untouched, the counters moved.
 */
#include "fn.h"

enum { LEN = 4096, CANARY = 0xee };

struct ctx {
	struct fn_ep ep[2];
	struct fn_mem loc, tgt;		/* loc on droce0, tgt on droce1 */
	struct droce_counters c0, c1;	/* at the start */
};

static void start(struct ctx *x, const struct fn_attr *a, int tgt_access)
{
	fn_pair(x->ep, a);
	fn_mem_reg(&x->loc, x->ep[0].pd, LEN, FN_ACCESS_ALL, 0x11);
	fn_mem_reg(&x->tgt, x->ep[1].pd, LEN, tgt_access, CANARY);
	x->c0 = fn_counters(0);
	x->c1 = fn_counters(1);
}

static void finish(struct ctx *x)
{
	CHECK(fn_all(x->tgt.buf, LEN, CANARY));
	fn_mem_free(&x->loc);
	fn_mem_free(&x->tgt);
	fn_pair_destroy(x->ep);
}

/* Post @p op (SIGNALED) of @p len bytes at remote @p addr/@p rkey, then a SEND behind it. */
static void post2(struct ctx *x, enum ibv_wr_opcode op, uint32_t len, uint64_t addr,
		  uint32_t rkey, uint32_t lkey)
{
	struct ibv_sge s = { (uintptr_t)x->loc.buf, len, lkey };
	struct ibv_send_wr w[2], *bad;

	memset(w, 0, sizeof(w));
	w[0] = (struct ibv_send_wr){ .wr_id = 1, .next = &w[1], .sg_list = &s, .num_sge = 1,
				     .opcode = op, .send_flags = IBV_SEND_SIGNALED };
	w[0].wr.rdma.remote_addr = addr;
	w[0].wr.rdma.rkey = rkey;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w[0].wr.atomic.remote_addr = addr;
		w[0].wr.atomic.rkey = rkey;
		w[0].wr.atomic.compare_add = 1;
	}
	w[1] = (struct ibv_send_wr){ .wr_id = 2, .opcode = IBV_WR_SEND,
				     .send_flags = IBV_SEND_SIGNALED };
	CHECK_EQ(droce_post_send(x->ep[0].qp, w, &bad), 0);
}

static void expect(struct droce_cq *cq, uint64_t wr_id, enum ibv_wc_status st, uint32_t qpn)
{
	struct ibv_wc wc = fn_wait(cq);
	struct fn_wc e = { .wr_id = wr_id, .status = st, .qp_num = qpn };

	FN_CHECK_WC(wc, e);
}

static void expect_ok(struct droce_cq *cq, uint64_t wr_id, enum ibv_wc_opcode op, uint32_t len,
		      uint32_t qpn, uint32_t src_qp)
{
	struct ibv_wc wc = fn_wait(cq);
	struct fn_wc e = { .wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = op,
			   .byte_len = len, .qp_num = qpn, .src_qp = src_qp };

	FN_CHECK_WC(wc, e);
}

/* The requester got @p st for WR 1 and a flush for WR 2; the responder's receive (wr 9) was
 * flushed (its QP in ERR) or, with @p recv_st, completed with that status. */
static void both_sides(struct ctx *x, enum ibv_wc_status st, enum ibv_wc_status recv_st)
{
	expect(x->ep[0].scq, 1, st, x->ep[0].qp->qp_num);
	expect(x->ep[0].scq, 2, IBV_WC_WR_FLUSH_ERR, x->ep[0].qp->qp_num);
	CHECK_EQ(fn_state(x->ep[0].qp), IBV_QPS_ERR);
	expect(x->ep[1].rcq, 9, recv_st, x->ep[1].qp->qp_num);
	CHECK_EQ(fn_state(x->ep[1].qp), IBV_QPS_ERR);
}

#define DELTA(side, x, f) (fn_counters(side).f - (x)->c##side.f)

/* A remote access error found by the responder: REM_ACCESS_ERR, access_err counted. */
static void access_case(enum ibv_wr_opcode op, int tgt_access, int pd_other, uint64_t off,
			uint32_t len, uint32_t rkey_xor)
{
	struct fn_attr a = fn_attr_default();
	struct droce_pd *pd2 = NULL;
	struct droce_mr *mr2 = NULL;
	struct ctx x;
	uint32_t rkey;

	start(&x, &a, tgt_access);
	rkey = x.tgt.mr->rkey ^ rkey_xor;
	if (pd_other) {
		/* The same memory registered in another PD of droce1. */
		pd2 = fn_pd(1);
		mr2 = droce_reg_mr(pd2, x.tgt.buf, LEN, FN_ACCESS_ALL);
		CHECK(mr2 != NULL);
		rkey = mr2->rkey;
	}
	memset(x.loc.buf, 0x11, LEN);
	fn_post_recv(x.ep[1].qp, 9, x.tgt.buf, 16, x.tgt.mr->lkey);
	post2(&x, op, len, (uintptr_t)x.tgt.buf + off, rkey, x.loc.mr->lkey);
	both_sides(&x, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(DELTA(1, &x, access_err), 1);
	CHECK_EQ(DELTA(0, &x, nak_rcvd), 1);
	CHECK(fn_all(x.loc.buf, LEN, 0x11));	/* a failed READ/ATOMIC wrote nothing here */
	if (mr2 != NULL) {
		CHECK_EQ(droce_dereg_mr(mr2), 0);
		CHECK_EQ(droce_dealloc_pd(pd2), 0);
	}
	finish(&x);
}

static void test_access(void)
{
	access_case(IBV_WR_RDMA_WRITE, FN_ACCESS_ALL, 0, 0, 64, 0x00800000);	/* bad rkey */
	access_case(IBV_WR_RDMA_READ, FN_ACCESS_ALL, 0, 0, 64, 0x00800000);
	access_case(IBV_WR_ATOMIC_FETCH_AND_ADD, FN_ACCESS_ALL, 0, 0, 8, 0x00800000);
	access_case(IBV_WR_RDMA_WRITE, FN_ACCESS_ALL, 0, LEN - 32, 64, 0);	/* bounds */
	access_case(IBV_WR_RDMA_READ, FN_ACCESS_ALL, 0, LEN - 32, 64, 0);
	access_case(IBV_WR_RDMA_WRITE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 0, 0,
		    64, 0);						/* no REMOTE_WRITE */
	access_case(IBV_WR_RDMA_READ, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0, 0,
		    64, 0);						/* no REMOTE_READ */
	access_case(IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_REMOTE_WRITE, 0, 0, 8, 0);		/* no REMOTE_ATOMIC */
	access_case(IBV_WR_RDMA_WRITE, FN_ACCESS_ALL, 1, 0, 64, 0);	/* wrong PD */
}

/* The responder QP does not allow RDMA WRITE: invalid request (as rxe). */
static void test_qp_access(void)
{
	struct fn_attr a = fn_attr_default();
	struct ctx x;

	a.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	start(&x, &a, FN_ACCESS_ALL);
	fn_post_recv(x.ep[1].qp, 9, x.tgt.buf, 16, x.tgt.mr->lkey);
	post2(&x, IBV_WR_RDMA_WRITE, 64, (uintptr_t)x.tgt.buf, x.tgt.mr->rkey, x.loc.mr->lkey);
	both_sides(&x, IBV_WC_REM_INV_REQ_ERR, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(DELTA(1, &x, inv_req_err), 1);
	finish(&x);
}

/* A SEND longer than the receive buffer: LOC_LEN_ERR there, REM_INV_REQ_ERR here. */
static void test_length(void)
{
	struct fn_attr a = fn_attr_default();
	struct fn_mem rb;
	struct ctx x;

	start(&x, &a, FN_ACCESS_ALL);
	fn_mem_reg(&rb, x.ep[1].pd, 256, FN_ACCESS_ALL, CANARY);
	fn_post_recv(x.ep[1].qp, 9, rb.buf, 100, rb.mr->lkey);
	post2(&x, IBV_WR_SEND, 200, 0, 0, x.loc.mr->lkey);
	both_sides(&x, IBV_WC_REM_INV_REQ_ERR, IBV_WC_LOC_LEN_ERR);
	CHECK_EQ(DELTA(1, &x, inv_req_err), 1);
	CHECK(fn_all(rb.buf, 256, CANARY));
	fn_mem_free(&rb);
	finish(&x);
}

/* A bad L_Key: LOC_PROT_ERR, no packet leaves, the responder is untouched and in RTS. */
static void test_lkey(void)
{
	struct fn_attr a = fn_attr_default();
	struct ctx x;

	start(&x, &a, FN_ACCESS_ALL);
	post2(&x, IBV_WR_RDMA_WRITE, 64, (uintptr_t)x.tgt.buf, x.tgt.mr->rkey,
	      x.loc.mr->lkey ^ 0x00800000);
	expect(x.ep[0].scq, 1, IBV_WC_LOC_PROT_ERR, x.ep[0].qp->qp_num);
	expect(x.ep[0].scq, 2, IBV_WC_WR_FLUSH_ERR, x.ep[0].qp->qp_num);
	fn_run(0.01);
	CHECK_EQ(fn_state(x.ep[1].qp), IBV_QPS_RTS);
	CHECK_EQ(DELTA(1, &x, rx_roce), 0);
	finish(&x);
}

/* No receive posted: RNR NAKs until one is posted, then success on both sides; with
 * rnr_retry 2 and none ever posted: RNR_RETRY_EXC_ERR. */
static void test_rnr(void)
{
	struct fn_attr a = fn_attr_default();
	struct fn_mem rb;
	struct ctx x;

	a.min_rnr_timer = 1;	/* 0.01 ms */
	start(&x, &a, FN_ACCESS_ALL);
	fn_mem_reg(&rb, x.ep[1].pd, 256, FN_ACCESS_ALL, CANARY);
	post2(&x, IBV_WR_SEND, 100, 0, 0, x.loc.mr->lkey);
	fn_quiet(x.ep[0].scq, 0.05);
	CHECK(DELTA(1, &x, rnr_nak_sent) >= 2);
	CHECK(DELTA(0, &x, rnr_nak_rcvd) >= 2);
	CHECK(fn_all(rb.buf, 256, CANARY));
	fn_post_recv(x.ep[1].qp, 9, rb.buf, 100, rb.mr->lkey);
	fn_post_recv(x.ep[1].qp, 10, rb.buf + 128, 100, rb.mr->lkey);
	expect_ok(x.ep[1].rcq, 9, IBV_WC_RECV, 100, x.ep[1].qp->qp_num, x.ep[0].qp->qp_num);
	expect_ok(x.ep[1].rcq, 10, IBV_WC_RECV, 0, x.ep[1].qp->qp_num, x.ep[0].qp->qp_num);
	expect_ok(x.ep[0].scq, 1, IBV_WC_SEND, 100, x.ep[0].qp->qp_num, 0);
	expect_ok(x.ep[0].scq, 2, IBV_WC_SEND, 0, x.ep[0].qp->qp_num, 0);
	CHECK(memcmp(rb.buf, x.loc.buf, 100) == 0);
	CHECK_EQ(DELTA(0, &x, rnr_retry_exceeded), 0);
	fn_mem_free(&rb);
	finish(&x);

	a.rnr_retry = 2;
	start(&x, &a, FN_ACCESS_ALL);
	post2(&x, IBV_WR_SEND, 100, 0, 0, x.loc.mr->lkey);
	expect(x.ep[0].scq, 1, IBV_WC_RNR_RETRY_EXC_ERR, x.ep[0].qp->qp_num);
	expect(x.ep[0].scq, 2, IBV_WC_WR_FLUSH_ERR, x.ep[0].qp->qp_num);
	CHECK_EQ(DELTA(0, &x, rnr_nak_rcvd), 3);
	CHECK_EQ(DELTA(0, &x, rnr_retry_exceeded), 1);
	CHECK_EQ(fn_state(x.ep[1].qp), IBV_QPS_RTS);	/* RNR does not end the responder */
	finish(&x);
}

/* The peer is silent (its QP destroyed, or in ERR): RETRY_EXC_ERR after retry_cnt retries. */
static void silent_peer(bool destroy)
{
	struct fn_attr a = fn_attr_default();
	struct ibv_qp_attr q = { .qp_state = IBV_QPS_ERR };
	struct ctx x;

	a.timeout = 8;		/* ~1 ms */
	a.retry_cnt = 3;
	start(&x, &a, FN_ACCESS_ALL);
	if (destroy) {
		CHECK_EQ(droce_destroy_qp(x.ep[1].qp), 0);
		x.ep[1].qp = NULL;
	} else {
		CHECK_EQ(droce_modify_qp(x.ep[1].qp, &q, IBV_QP_STATE), 0);
	}
	post2(&x, IBV_WR_RDMA_WRITE, 64, (uintptr_t)x.tgt.buf, x.tgt.mr->rkey, x.loc.mr->lkey);
	expect(x.ep[0].scq, 1, IBV_WC_RETRY_EXC_ERR, x.ep[0].qp->qp_num);
	expect(x.ep[0].scq, 2, IBV_WC_WR_FLUSH_ERR, x.ep[0].qp->qp_num);
	CHECK_EQ(fn_state(x.ep[0].qp), IBV_QPS_ERR);
	CHECK(DELTA(0, &x, retransmits) >= 3);
	CHECK_EQ(DELTA(0, &x, retry_exceeded), 1);
	if (destroy)
		CHECK(DELTA(1, &x, rx_unknown_qp) >= 4);
	else
		CHECK(DELTA(1, &x, rx_qp_state) >= 4);
	finish(&x);
}

int main(int argc, char **argv)
{
	fn_open(argc, argv);
	test_access();
	test_qp_access();
	test_length();
	test_lkey();
	test_rnr();
	silent_peer(true);
	silent_peer(false);
	fn_close();
	printf("error paths (%s): ok\n", argv[1]);
	return 0;
}
