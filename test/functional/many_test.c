/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Concurrency and ordering through the engine:
 * - 64 QP pairs at once, SENDs and WRITEs posted round-robin over all of them, every
 *   message arriving intact on its own QP, in order;
 * - RDMA READs and FETCH_ADDs posted three times max_rd_atomic deep (16): the requester
 *   keeps at most max_rd_atomic outstanding, all complete, data and results right;
 * - inline SENDs up to max_inline_data: the buffer is reused at once after the post, the
 *   L_Key is not even valid, the receiver gets what was posted;
 * - a fenced WRITE after a READ sends what the READ brought: the fence held it back.
 */
#include "fn.h"

enum { NPAIRS = 64, MSGS = 16, MLEN = 3000, RD = 16, INLINE = 256 };

static void many_qps(void)
{
	static struct fn_ep ep[NPAIRS][2];
	struct fn_attr a = fn_attr_default();
	struct droce_pd *pd[2] = { fn_pd(0), fn_pd(1) };
	struct fn_mem src, dst;
	uint8_t want[MLEN];
	int p, m;

	a.depth = 2 * MSGS;
	fn_mem_reg(&src, pd[0], (size_t)NPAIRS * MSGS * MLEN, FN_ACCESS_ALL, 0);
	fn_mem_reg(&dst, pd[1], (size_t)NPAIRS * MSGS * MLEN * 2, FN_ACCESS_ALL, 0);
	for (p = 0; p < NPAIRS; p++) {
		fn_ep_create(&ep[p][0], 0, pd[0], &a);
		fn_ep_create(&ep[p][1], 1, pd[1], &a);
		fn_connect(&ep[p][0], &ep[p][1], &a);
		fn_connect(&ep[p][1], &ep[p][0], &a);
	}
	for (m = 0; m < MSGS; m++) {
		for (p = 0; p < NPAIRS; p++) {
			size_t k = (size_t)p * MSGS + (size_t)m;
			uint8_t *s = src.buf + k * MLEN;
			struct ibv_sge sg = { (uintptr_t)s, MLEN - m, src.mr->lkey };
			struct ibv_send_wr w = { .wr_id = k, .sg_list = &sg, .num_sge = 1,
				.opcode = m % 2 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED }, *bad;

			fn_fill(s, MLEN, (uint32_t)k);
			w.wr.rdma.remote_addr = (uintptr_t)dst.buf + (NPAIRS * MSGS + k) * MLEN;
			w.wr.rdma.rkey = dst.mr->rkey;
			if (m % 2 == 0)
				fn_post_recv(ep[p][1].qp, k, dst.buf + k * MLEN, MLEN, dst.mr->lkey);
			CHECK_EQ(droce_post_send(ep[p][0].qp, &w, &bad), 0);
		}
	}
	for (p = 0; p < NPAIRS; p++) {
		for (m = 0; m < MSGS; m++) {
			size_t k = (size_t)p * MSGS + (size_t)m;
			struct ibv_wc wc = fn_wait(ep[p][0].scq);
			struct fn_wc e = { .wr_id = k, .status = IBV_WC_SUCCESS,
				.opcode = m % 2 ? IBV_WC_RDMA_WRITE : IBV_WC_SEND,
				.byte_len = MLEN - (uint32_t)m, .qp_num = ep[p][0].qp->qp_num };

			FN_CHECK_WC(wc, e);
			fn_fill(want, MLEN, (uint32_t)k);
			if (m % 2 == 0) {
				struct fn_wc r = { .wr_id = k, .status = IBV_WC_SUCCESS,
					.opcode = IBV_WC_RECV, .byte_len = MLEN - (uint32_t)m,
					.qp_num = ep[p][1].qp->qp_num,
					.src_qp = ep[p][0].qp->qp_num };

				wc = fn_wait(ep[p][1].rcq);
				FN_CHECK_WC(wc, r);
				CHECK(memcmp(dst.buf + k * MLEN, want, MLEN - m) == 0);
			} else {
				CHECK(memcmp(dst.buf + (NPAIRS * MSGS + k) * MLEN, want,
					     MLEN - m) == 0);
			}
		}
	}
	for (p = 0; p < NPAIRS; p++) {
		fn_ep_destroy(&ep[p][0]);
		fn_ep_destroy(&ep[p][1]);
	}
	fn_mem_free(&src);
	fn_mem_free(&dst);
	CHECK_EQ(droce_dealloc_pd(pd[0]), 0);
	CHECK_EQ(droce_dealloc_pd(pd[1]), 0);
}

/* 3 * RD READs and 3 * RD FETCH_ADDs posted at once with max_rd_atomic = RD. */
static void rd_atomic_depth(void)
{
	struct fn_attr a = fn_attr_default();
	struct fn_ep ep[2];
	struct fn_mem loc, rem;
	struct ibv_send_wr w[6 * RD], *bad;
	struct ibv_sge sg[6 * RD];
	uint64_t *ctr, v;
	int i;

	a.rd_atomic = RD;
	a.depth = 8 * RD;
	fn_pair(ep, &a);
	fn_mem_reg(&loc, ep[0].pd, 6 * RD * 4096, FN_ACCESS_ALL, 0);
	fn_mem_reg(&rem, ep[1].pd, 6 * RD * 4096 + 8, FN_ACCESS_ALL, 0);
	fn_fill(rem.buf, 6 * RD * 4096, 5);
	ctr = (uint64_t *)(void *)(rem.buf + 6 * RD * 4096);
	*ctr = 1000;
	memset(w, 0, sizeof(w));
	for (i = 0; i < 6 * RD; i++) {
		bool rd = i % 2 == 0;

		sg[i] = (struct ibv_sge){ (uintptr_t)loc.buf + (size_t)i * 4096, rd ? 4000 : 8,
					  loc.mr->lkey };
		w[i] = (struct ibv_send_wr){ .wr_id = (uint64_t)i, .sg_list = &sg[i],
			.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
			.opcode = rd ? IBV_WR_RDMA_READ : IBV_WR_ATOMIC_FETCH_AND_ADD,
			.next = i + 1 < 6 * RD ? &w[i + 1] : NULL };
		if (rd) {
			w[i].wr.rdma.remote_addr = (uintptr_t)rem.buf + (size_t)i * 4096;
			w[i].wr.rdma.rkey = rem.mr->rkey;
		} else {
			w[i].wr.atomic.remote_addr = (uintptr_t)ctr;
			w[i].wr.atomic.rkey = rem.mr->rkey;
			w[i].wr.atomic.compare_add = 1;
		}
	}
	CHECK_EQ(droce_post_send(ep[0].qp, w, &bad), 0);
	for (i = 0; i < 6 * RD; i++) {
		struct ibv_wc wc = fn_wait(ep[0].scq);
		struct fn_wc e = { .wr_id = (uint64_t)i, .status = IBV_WC_SUCCESS,
			.opcode = i % 2 ? IBV_WC_FETCH_ADD : IBV_WC_RDMA_READ,
			.byte_len = i % 2 ? 8 : 4000, .qp_num = ep[0].qp->qp_num };

		FN_CHECK_WC(wc, e);
		if (i % 2 == 0) {
			CHECK(memcmp(loc.buf + (size_t)i * 4096, rem.buf + (size_t)i * 4096,
				     4000) == 0);
		} else {
			memcpy(&v, loc.buf + (size_t)i * 4096, 8);
			CHECK_EQ(v, 1000 + (uint64_t)i / 2);
		}
	}
	CHECK_EQ(*ctr, 1000 + 3 * RD);
	fn_mem_free(&loc);
	fn_mem_free(&rem);
	fn_pair_destroy(ep);
}

/* Inline SENDs of 1..INLINE bytes from a stack buffer reused right after each post. */
static void inline_sends(void)
{
	struct fn_attr a = fn_attr_default();
	struct fn_ep ep[2];
	struct fn_mem rb;
	uint8_t buf[INLINE], want[INLINE];
	const uint32_t lens[] = { 1, 17, 64, 255, INLINE };
	unsigned int i;

	a.max_inline = INLINE;
	fn_pair(ep, &a);
	fn_mem_reg(&rb, ep[1].pd, RTE_DIM(lens) * INLINE, FN_ACCESS_ALL, 0);
	for (i = 0; i < RTE_DIM(lens); i++)
		fn_post_recv(ep[1].qp, i, rb.buf + i * INLINE, INLINE, rb.mr->lkey);
	for (i = 0; i < RTE_DIM(lens); i++) {
		struct ibv_sge sg = { (uintptr_t)buf, lens[i], 0xdeadbeef };
		struct ibv_send_wr w = { .wr_id = i, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE },
			*bad;

		fn_fill(buf, lens[i], i);
		CHECK_EQ(droce_post_send(ep[0].qp, &w, &bad), 0);
		memset(buf, 0, sizeof(buf));	/* the data was taken at post time */
	}
	for (i = 0; i < RTE_DIM(lens); i++) {
		struct ibv_wc wc = fn_wait(ep[0].scq);
		struct fn_wc e = { .wr_id = i, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_SEND,
			.byte_len = lens[i], .qp_num = ep[0].qp->qp_num };
		struct fn_wc r = { .wr_id = i, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
			.byte_len = lens[i], .qp_num = ep[1].qp->qp_num,
			.src_qp = ep[0].qp->qp_num };

		FN_CHECK_WC(wc, e);
		wc = fn_wait(ep[1].rcq);
		FN_CHECK_WC(wc, r);
		fn_fill(want, lens[i], i);
		CHECK(memcmp(rb.buf + i * INLINE, want, lens[i]) == 0);
	}
	fn_mem_free(&rb);
	fn_pair_destroy(ep);
}

/* READ remote A into L, then a fenced WRITE of L to remote B: B gets A's bytes. */
static void fence_write_after_read(void)
{
	enum { FLEN = 64 * 1024 };
	struct fn_attr a = fn_attr_default();
	struct fn_ep ep[2];
	struct fn_mem loc, rem;
	struct ibv_sge sg = { 0, FLEN, 0 };
	struct ibv_send_wr w[2], *bad;
	int round;

	fn_pair(ep, &a);
	fn_mem_reg(&loc, ep[0].pd, FLEN, FN_ACCESS_ALL, 0);
	fn_mem_reg(&rem, ep[1].pd, 2 * FLEN, FN_ACCESS_ALL, 0);
	sg.addr = (uintptr_t)loc.buf;
	sg.lkey = loc.mr->lkey;
	for (round = 0; round < 8; round++) {
		fn_fill(rem.buf, FLEN, 100 + (uint32_t)round);
		memset(loc.buf, 0x5a, FLEN);
		memset(w, 0, sizeof(w));
		w[0] = (struct ibv_send_wr){ .wr_id = 1, .next = &w[1], .sg_list = &sg,
			.num_sge = 1, .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
		w[0].wr.rdma.remote_addr = (uintptr_t)rem.buf;
		w[0].wr.rdma.rkey = rem.mr->rkey;
		w[1] = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE };
		w[1].wr.rdma.remote_addr = (uintptr_t)rem.buf + FLEN;
		w[1].wr.rdma.rkey = rem.mr->rkey;
		CHECK_EQ(droce_post_send(ep[0].qp, w, &bad), 0);
		CHECK_EQ(fn_wait(ep[0].scq).status, IBV_WC_SUCCESS);
		CHECK_EQ(fn_wait(ep[0].scq).status, IBV_WC_SUCCESS);
		CHECK(memcmp(rem.buf + FLEN, rem.buf, FLEN) == 0);
	}
	fn_mem_free(&loc);
	fn_mem_free(&rem);
	fn_pair_destroy(ep);
}

int main(int argc, char **argv)
{
	struct droce_counters c;

	fn_open(argc, argv);
	many_qps();
	rd_atomic_depth();
	inline_sends();
	fence_write_after_read();
	c = fn_counters(0);
	if (getenv("FN_DEBUG"))
		fprintf(stderr, "nak_rcvd %llu retry_exceeded %llu rnr_nak_rcvd %llu seq_nak_sent %llu "
			"rnr_nak_sent %llu retransmits %llu tx_dropped %llu out_of_seq %llu\n",
			(unsigned long long)c.nak_rcvd, (unsigned long long)c.retry_exceeded,
			(unsigned long long)c.rnr_nak_rcvd, (unsigned long long)c.seq_nak_sent,
			(unsigned long long)c.rnr_nak_sent, (unsigned long long)c.retransmits,
			(unsigned long long)c.tx_dropped, (unsigned long long)c.out_of_sequence);
	CHECK_EQ(c.nak_rcvd + c.retry_exceeded + c.rnr_nak_rcvd, 0);
	fn_close();
	printf("many QPs, rd_atomic depth, inline, fence (%s): ok\n", argv[1]);
	return 0;
}
