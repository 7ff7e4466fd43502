/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * RDMA ATOMIC_WRITE (IBV_WR_ATOMIC_WRITE, opcode 0x1D) between droce0 and droce1, public API
 * only. Proves:
 * - the 8 bytes land at the 8-byte aligned VA as given, nothing around them touched; the WR
 *   completes IBV_WC_ATOMIC_WRITE with byte_len 8; inline, the bytes are taken at post (the
 *   source is overwritten right after the post);
 * - 40 ATOMIC_WRITEs from registered memory (an SGE each) to one address with max_rd_atomic 4
 *   all complete in order and the last value stays; a READ after them sees it;
 * - bad posts are refused with EINVAL: a misaligned VA, 4 or 16 bytes, a UC QP;
 * - the responder refuses with the NAK rxe sends: an MR without REMOTE_WRITE
 *   (IBV_WC_REM_ACCESS_ERR), a QP without REMOTE_WRITE (IBV_WC_REM_INV_REQ_ERR); memory
 *   untouched.
 *
 * Usage: functional_atomic_write_test {inline|lcore}
 */
#include "fn_qp.h"

enum { LEN = 4096, CANARY = 0x77, N = 40 };

/* An ATOMIC_WRITE of @p len bytes at @p src: inline when @p lkey is 0. */
static void post_aw(struct droce_qp *qp, uint64_t wr_id, uint64_t *src, uint32_t len,
		    uint32_t lkey, uint64_t va, uint32_t rkey, int expect)
{
	struct ibv_sge s = { (uintptr_t)src, len, lkey };
	struct ibv_send_wr w = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_ATOMIC_WRITE,
				 .send_flags = IBV_SEND_SIGNALED |
					       (lkey == 0 ? IBV_SEND_INLINE : 0) }, *bad;

	w.wr.rdma.remote_addr = va;
	w.wr.rdma.rkey = rkey;
	CHECK_EQ(droce_post_send(qp, &w, &bad), expect);
}

static void expect_wc(struct droce_cq *cq, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc = fn_wait(cq);

	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.status, st);
	if (st == IBV_WC_SUCCESS) {
		CHECK_EQ(wc.opcode, IBV_WC_ATOMIC_WRITE);
		CHECK_EQ(wc.byte_len, 8);
	}
}

static void good(struct fn_ep e[2], struct fn_mem *dst)
{
	uint64_t v = 0x0123456789abcdefull, got, i;
	uint64_t va = (uintptr_t)dst->buf + 64;
	struct fn_mem rd, src;

	post_aw(e[0].qp, 1, &v, 8, 0, va, dst->mr->rkey, 0);
	v = 0;		/* taken at post */
	expect_wc(e[0].scq, 1, IBV_WC_SUCCESS);
	memcpy(&got, dst->buf + 64, 8);
	CHECK_EQ(got, 0x0123456789abcdefull);
	CHECK(fn_all(dst->buf, 64, CANARY) && fn_all(dst->buf + 72, LEN - 72, CANARY));
	/* Many, pipelined beyond max_rd_atomic: in order, the last one stays. */
	fn_mem_reg(&src, e[0].pd, N * 8, IBV_ACCESS_LOCAL_WRITE, 0);
	for (i = 0; i < N; i++) {
		uint64_t *p = (uint64_t *)(void *)(src.buf + i * 8);

		*p = 1000 + i;
		post_aw(e[0].qp, 100 + i, p, 8, src.mr->lkey, va + 8, dst->mr->rkey, 0);
	}
	for (i = 0; i < N; i++)
		expect_wc(e[0].scq, 100 + i, IBV_WC_SUCCESS);
	memcpy(&got, dst->buf + 72, 8);
	CHECK_EQ(got, 1000 + N - 1);
	fn_mem_free(&src);
	fn_mem_reg(&rd, e[0].pd, 64, FN_ACCESS_ALL, 0);
	fn_post_send1(e[0].qp, 2, IBV_WR_RDMA_READ, rd.buf, 16, rd.mr->lkey, 0, NULL, 0, 0, va,
		      dst->mr->rkey, 0);
	{
		struct ibv_wc wc = fn_wait(e[0].scq);

		CHECK(wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_RDMA_READ);
	}
	CHECK(memcmp(rd.buf, dst->buf + 64, 16) == 0);
	fn_mem_free(&rd);
	/* Refused at post. */
	post_aw(e[0].qp, 3, &v, 8, 0, va + 4, dst->mr->rkey, EINVAL);
	post_aw(e[0].qp, 3, &v, 4, 0, va, dst->mr->rkey, EINVAL);
	{
		uint64_t two[2] = { 1, 2 };

		post_aw(e[0].qp, 3, two, 16, 0, va, dst->mr->rkey, EINVAL);
	}
}

/* A fresh pair whose responder QP allows @p qp_access, writing to an MR with @p mr_access:
 * the WR ends in @p st and the memory stays as it was. */
static void refused(int qp_access, int mr_access, enum ibv_wc_status st)
{
	struct fn_attr a = fn_attr_default();
	uint64_t v = 42;
	struct fn_ep e[2];
	struct fn_mem m;

	a.access = qp_access;
	a.retry_cnt = 1;
	fn_pair(e, &a);
	fn_mem_reg(&m, e[1].pd, LEN, mr_access, CANARY);
	post_aw(e[0].qp, 9, &v, 8, 0, (uintptr_t)m.buf, m.mr->rkey, 0);
	expect_wc(e[0].scq, 9, st);
	CHECK(fn_all(m.buf, LEN, CANARY));
	CHECK_EQ(fn_state(e[1].qp), IBV_QPS_ERR);
	fn_mem_free(&m);
	fn_pair_destroy(e);
}

int main(int argc, char **argv)
{
	struct fn_attr a = fn_attr_default();
	struct fn_ep e[2];
	struct fn_mem dst;
	struct droce_pd *pd[2];
	struct fn_qp uc[2];
	uint64_t v = 1;

	fn_open(argc, argv);
	fn_pair(e, &a);
	fn_mem_reg(&dst, e[1].pd, LEN, FN_ACCESS_ALL, CANARY);
	good(e, &dst);
	CHECK_EQ(fn_state(e[0].qp), IBV_QPS_RTS);
	CHECK_EQ(fn_state(e[1].qp), IBV_QPS_RTS);
	fn_mem_free(&dst);
	fn_pair_destroy(e);

	fn_uc_pair(uc, pd);
	post_aw(uc[0].qp, 1, &v, 8, 0, 0x1000, 1, EINVAL);	/* RC only */
	fn_uc_pair_destroy(uc, pd);

	refused(FN_ACCESS_ALL, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
		IBV_WC_REM_ACCESS_ERR);
	refused(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, FN_ACCESS_ALL,
		IBV_WC_REM_INV_REQ_ERR);
	fn_close();
	printf("atomic write (%s): ok\n", argv[1]);
	return 0;
}
