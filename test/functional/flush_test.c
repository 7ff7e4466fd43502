/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * RDMA FLUSH (DROCE_WR_FLUSH, opcode 0x1C) between droce0 and droce1, public API only. Proves:
 * - MRs register with DROCE_ACCESS_FLUSH_GLOBAL / _PERSISTENT and a QP takes them in its
 *   access flags;
 * - a FLUSH posted right behind RDMA WRITEs (64 KiB, many packets) completes DROCE_WC_FLUSH
 *   with byte_len = its length after them, in order, with their data in place; a FLUSH of the
 *   whole MR (VA and length ignored), a persistent + global one, and one fenced behind a READ
 *   complete too; 40 FLUSHes pipelined beyond max_rd_atomic complete in order; nothing is
 *   counted as an error at the responder;
 * - bad posts are refused with EINVAL: an SGE, IBV_SEND_INLINE, no placement type, an unknown
 *   one, an unknown selectivity level, a length over 2^31, a UC QP;
 * - the responder refuses with a NAK remote access error (IBV_WC_REM_ACCESS_ERR, its QP to
 *   ERR): an MR without FLUSH access, and a persistent FLUSH to an MR with FLUSH_GLOBAL only.
 *
 * Usage: functional_flush_test {inline|lcore}
 */
#include "fn_qp.h"

enum { LEN = 65536, N = 40 };

#define FLUSH_MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | DROCE_ACCESS_FLUSH_GLOBAL)

/* Post a FLUSH; @return droce_post_send()'s result. @p tweak changes the WR first. */
static int post_flush(struct droce_qp *qp, uint64_t wr_id, uint32_t rkey, uint64_t va,
		      uint32_t len, uint8_t type, uint8_t level, unsigned int flags,
		      void (*tweak)(struct ibv_send_wr *))
{
	struct ibv_send_wr w, *bad;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.send_flags = IBV_SEND_SIGNALED | flags;
	droce_wr_set_flush(&w, rkey, va, len, type, level);
	if (tweak != NULL)
		tweak(&w);
	return droce_post_send(qp, &w, &bad);
}

static void expect_flush_wc(struct droce_cq *cq, uint64_t wr_id, enum ibv_wc_status st,
			    uint32_t len)
{
	struct ibv_wc wc = fn_wait(cq);

	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.status, st);
	if (st == IBV_WC_SUCCESS) {
		CHECK_EQ(wc.opcode, DROCE_WC_FLUSH);
		CHECK_EQ(wc.byte_len, len);
	}
}

static void good(struct fn_ep e[2])
{
	struct fn_mem src, dst, gp, rd;
	struct droce_counters c;
	struct ibv_wc wc;
	uint64_t i;

	fn_mem_reg(&src, e[0].pd, LEN, IBV_ACCESS_LOCAL_WRITE, 0);
	fn_mem_reg(&dst, e[1].pd, LEN, FLUSH_MR_ACCESS, 0);
	fn_mem_reg(&gp, e[1].pd, 4096, IBV_ACCESS_LOCAL_WRITE | DROCE_ACCESS_FLUSH_GLOBAL |
		   DROCE_ACCESS_FLUSH_PERSISTENT, 0);
	fn_mem_reg(&rd, e[0].pd, 64, FN_ACCESS_ALL, 0);
	fn_fill(src.buf, LEN, 11);
	/* WRITEs (signalled: their completions come first) then a FLUSH of what they wrote */
	fn_post_send1(e[0].qp, 1, IBV_WR_RDMA_WRITE, src.buf, LEN / 2, src.mr->lkey, 0, NULL, 0,
		      0, (uintptr_t)dst.buf, dst.mr->rkey, 0);
	fn_post_send1(e[0].qp, 2, IBV_WR_RDMA_WRITE, src.buf + LEN / 2, LEN / 2, src.mr->lkey, 0,
		      NULL, 0, 0, (uintptr_t)dst.buf + LEN / 2, dst.mr->rkey, 0);
	CHECK_EQ(post_flush(e[0].qp, 3, dst.mr->rkey, (uintptr_t)dst.buf, LEN, DROCE_FLUSH_GLOBAL,
			    DROCE_FLUSH_RANGE, 0, NULL), 0);
	fn_wait_ok(e[0].scq, 1);
	fn_wait_ok(e[0].scq, 2);
	expect_flush_wc(e[0].scq, 3, IBV_WC_SUCCESS, LEN);
	CHECK(memcmp(src.buf, dst.buf, LEN) == 0);
	/* the whole MR (VA and length ignored); persistent + global; fenced behind a READ */
	CHECK_EQ(post_flush(e[0].qp, 4, dst.mr->rkey, 0, 1u << 31, DROCE_FLUSH_GLOBAL,
			    DROCE_FLUSH_MR, 0, NULL), 0);
	expect_flush_wc(e[0].scq, 4, IBV_WC_SUCCESS, 1u << 31);
	CHECK_EQ(post_flush(e[0].qp, 5, gp.mr->rkey, (uintptr_t)gp.buf + 100, 200,
			    DROCE_FLUSH_GLOBAL | DROCE_FLUSH_PERSISTENT, DROCE_FLUSH_RANGE, 0,
			    NULL), 0);
	expect_flush_wc(e[0].scq, 5, IBV_WC_SUCCESS, 200);
	fn_post_send1(e[0].qp, 6, IBV_WR_RDMA_READ, rd.buf, 64, rd.mr->lkey, 0, NULL, 0,
		      0, (uintptr_t)dst.buf, dst.mr->rkey, 0);
	CHECK_EQ(post_flush(e[0].qp, 7, dst.mr->rkey, (uintptr_t)dst.buf, 64, DROCE_FLUSH_GLOBAL,
			    DROCE_FLUSH_RANGE, IBV_SEND_FENCE, NULL), 0);
	wc = fn_wait(e[0].scq);
	CHECK(wc.wr_id == 6 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ);
	expect_flush_wc(e[0].scq, 7, IBV_WC_SUCCESS, 64);
	CHECK(memcmp(rd.buf, dst.buf, 64) == 0);
	/* pipelined beyond max_rd_atomic (4): in order */
	for (i = 0; i < N; i++)
		CHECK_EQ(post_flush(e[0].qp, 100 + i, dst.mr->rkey, (uintptr_t)dst.buf + i * 8,
				    8, DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE, 0, NULL), 0);
	for (i = 0; i < N; i++)
		expect_flush_wc(e[0].scq, 100 + i, IBV_WC_SUCCESS, 8);
	c = fn_qp_counters(e[1].qp);
	CHECK_EQ(c.access_err + c.inv_req_err, 0);
	fn_mem_free(&src);
	fn_mem_free(&dst);
	fn_mem_free(&gp);
	fn_mem_free(&rd);
}

static void one_sge(struct ibv_send_wr *w)
{
	static struct ibv_sge s = { 0, 8, 0 };

	w->sg_list = &s;
	w->num_sge = 1;
}

static void inline_flag(struct ibv_send_wr *w)
{
	w->send_flags |= IBV_SEND_INLINE;
}

static void too_long(struct ibv_send_wr *w)
{
	w->wr.atomic.compare_add = (1ull << 31) + 1;
}

static void reserved_bit(struct ibv_send_wr *w)
{
	w->wr.atomic.swap |= 1ull << 6;
}

static void bad_posts(struct fn_ep e[2])
{
	struct droce_qp *qp = e[0].qp;

	CHECK_EQ(post_flush(qp, 9, 1, 0, 8, DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE, 0, one_sge),
		 EINVAL);
	CHECK_EQ(post_flush(qp, 9, 1, 0, 8, DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE, 0,
			    inline_flag), EINVAL);
	CHECK_EQ(post_flush(qp, 9, 1, 0, 8, 0, DROCE_FLUSH_RANGE, 0, NULL), EINVAL);
	CHECK_EQ(post_flush(qp, 9, 1, 0, 8, 4, DROCE_FLUSH_RANGE, 0, NULL), EINVAL);
	CHECK_EQ(post_flush(qp, 9, 1, 0, 8, DROCE_FLUSH_GLOBAL, 2, 0, NULL), EINVAL);
	CHECK_EQ(post_flush(qp, 9, 1, 0, 8, DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE, 0, too_long),
		 EINVAL);
	CHECK_EQ(post_flush(qp, 9, 1, 0, 8, DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE, 0,
			    reserved_bit), EINVAL);
	fn_quiet(e[0].scq, 0.05);	/* nothing was posted */
}

/* A fresh pair: a FLUSH of @p type to an MR with @p mr_access ends in @p st; the responder's
 * QP goes to ERR. */
static void refused(int mr_access, uint8_t type, enum ibv_wc_status st)
{
	struct fn_attr a = fn_attr_default();
	struct fn_ep e[2];
	struct fn_mem m;

	a.retry_cnt = 1;
	fn_pair(e, &a);
	fn_mem_reg(&m, e[1].pd, 4096, mr_access, 0);
	CHECK_EQ(post_flush(e[0].qp, 9, m.mr->rkey, (uintptr_t)m.buf, 64, type, DROCE_FLUSH_RANGE,
			    0, NULL), 0);
	expect_flush_wc(e[0].scq, 9, st, 0);
	CHECK_EQ(fn_state(e[1].qp), IBV_QPS_ERR);
	CHECK_EQ(fn_qp_counters(e[1].qp).access_err, 1);
	fn_mem_free(&m);
	fn_pair_destroy(e);
}

int main(int argc, char **argv)
{
	struct fn_attr a = fn_attr_default();
	struct droce_pd *pd[2];
	struct fn_qp uc[2];
	struct fn_ep e[2];

	fn_open(argc, argv);
	a.access = FN_ACCESS_ALL | DROCE_ACCESS_FLUSH_GLOBAL | DROCE_ACCESS_FLUSH_PERSISTENT;
	fn_pair(e, &a);
	good(e);
	bad_posts(e);
	CHECK_EQ(fn_state(e[0].qp), IBV_QPS_RTS);
	CHECK_EQ(fn_state(e[1].qp), IBV_QPS_RTS);
	fn_pair_destroy(e);

	fn_uc_pair(uc, pd);
	CHECK_EQ(post_flush(uc[0].qp, 1, 1, 0x1000, 8, DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE, 0,
			    NULL), EINVAL);	/* RC only */
	fn_uc_pair_destroy(uc, pd);

	refused(FN_ACCESS_ALL, DROCE_FLUSH_GLOBAL, IBV_WC_REM_ACCESS_ERR);
	refused(IBV_ACCESS_LOCAL_WRITE | DROCE_ACCESS_FLUSH_GLOBAL, DROCE_FLUSH_PERSISTENT,
		IBV_WC_REM_ACCESS_ERR);
	fn_close();
	printf("flush (%s): ok\n", argv[1]);
	return 0;
}
