/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Every RC opcode at every interesting size (argv: mode, path MTU 1024 or 4096, optionally
 * the GID both paths use: v4 (default), v6 or ll, fn_gid_arg()): SEND, SEND_WITH_IMM,
 * RDMA_WRITE, RDMA_WRITE_WITH_IMM and RDMA_READ with 0, 1, MTU-1, MTU, MTU+1 and 1 MiB bytes;
 * ATOMIC_CMP_AND_SWP and ATOMIC_FETCH_AND_ADD (8 bytes, swap taken and not taken). The data
 * arrives intact and nothing around it is touched; every field of both sides' completions is
 * checked; the responder side sees no completion for WRITE and READ. Over an IPv6 GID both
 * ends resolved each other by neighbour discovery.
 * Last, SEND_WITH_INV naming a plain MR of the responder: droce has nothing a remote
 * invalidation may invalidate, so, as rxe, the sender's WR succeeds (the message is ACKed),
 * the receive WR completes IBV_WC_REM_INV_REQ_ERR and the responder's QP goes to ERR.
 */
#include "fn.h"

enum { BIG = 1 << 20, GUARD = 64, CANARY = 0xee };

static struct fn_ep ep[2];
static struct fn_mem src, dst, inv;	/* src on droce0, dst and inv on droce1 */
static uint32_t mtu;

static void check_data(const uint8_t *to, const uint8_t *from, uint32_t len)
{
	CHECK(memcmp(to, from, len) == 0);
	CHECK(fn_all(to + len, GUARD, CANARY));
}

static void post(struct ibv_send_wr *w, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)src.buf, len, src.mr->lkey };
	struct ibv_send_wr *bad;

	w->sg_list = &s;
	w->num_sge = len != 0;
	w->send_flags |= IBV_SEND_SIGNALED;
	CHECK_EQ(droce_post_send(ep[0].qp, w, &bad), 0);
}

static void expect_send_wc(uint64_t wr_id, enum ibv_wc_opcode op, uint32_t len)
{
	struct ibv_wc wc = fn_wait(ep[0].scq);
	struct fn_wc e = { .wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = op,
			   .byte_len = len, .qp_num = ep[0].qp->qp_num };

	FN_CHECK_WC(wc, e);
}

static void expect_recv_wc(uint64_t wr_id, enum ibv_wc_opcode op, uint32_t len,
			   unsigned int flags, uint32_t imm)
{
	struct ibv_wc wc = fn_wait(ep[1].rcq);
	struct fn_wc e = { .wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = op,
			   .byte_len = len, .imm = imm, .wc_flags = flags,
			   .qp_num = ep[1].qp->qp_num, .src_qp = ep[0].qp->qp_num };

	FN_CHECK_WC(wc, e);
}

/* SEND, SEND_WITH_IMM of @p len bytes. */
static void one_send(enum ibv_wr_opcode op, uint32_t len, uint64_t id)
{
	struct ibv_send_wr w = { .wr_id = id, .opcode = op };
	unsigned int flags = 0;
	uint32_t imm = 0;

	memset(dst.buf, CANARY, len + GUARD);
	fn_fill(src.buf, len, (uint32_t)id);
	fn_post_recv(ep[1].qp, id + 1, dst.buf, BIG, dst.mr->lkey);
	if (op == IBV_WR_SEND_WITH_IMM) {
		w.imm_data = htonl(0xa5000000u | (uint32_t)id);
		imm = w.imm_data;
		flags = IBV_WC_WITH_IMM;
	}
	post(&w, len);
	expect_send_wc(id, IBV_WC_SEND, len);
	expect_recv_wc(id + 1, IBV_WC_RECV, len, flags, imm);
	check_data(dst.buf, src.buf, len);
}

/* RDMA_WRITE (with immediate) of @p len bytes at an odd offset of the remote buffer. */
static void one_write(bool with_imm, uint32_t len, uint64_t id)
{
	struct ibv_send_wr w = { .wr_id = id, .opcode = with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM :
				 IBV_WR_RDMA_WRITE };

	memset(dst.buf, CANARY, dst.len);
	fn_fill(src.buf, len, (uint32_t)id);
	w.wr.rdma.remote_addr = (uintptr_t)dst.buf + GUARD + 3;
	w.wr.rdma.rkey = dst.mr->rkey;
	if (with_imm) {
		fn_post_recv(ep[1].qp, id + 1, NULL, 0, 0);
		w.imm_data = htonl((uint32_t)id * 3);
	}
	post(&w, len);
	expect_send_wc(id, IBV_WC_RDMA_WRITE, len);
	if (with_imm)
		expect_recv_wc(id + 1, IBV_WC_RECV_RDMA_WITH_IMM, len, IBV_WC_WITH_IMM,
			       htonl((uint32_t)id * 3));
	CHECK(fn_all(dst.buf, GUARD + 3, CANARY));
	check_data(dst.buf + GUARD + 3, src.buf, len);
}

/* RDMA_READ of @p len bytes from an odd offset of the remote buffer. */
static void one_read(uint32_t len, uint64_t id)
{
	struct ibv_send_wr w = { .wr_id = id, .opcode = IBV_WR_RDMA_READ };

	fn_fill(dst.buf, BIG + GUARD, (uint32_t)id);
	memset(src.buf, CANARY, BIG + GUARD);
	w.wr.rdma.remote_addr = (uintptr_t)dst.buf + 5;
	w.wr.rdma.rkey = dst.mr->rkey;
	post(&w, len);
	expect_send_wc(id, IBV_WC_RDMA_READ, len);
	check_data(src.buf, dst.buf + 5, len);
}

static void one_atomic(enum ibv_wr_opcode op, uint64_t cmp, uint64_t swap, uint64_t id)
{
	struct ibv_send_wr w = { .wr_id = id, .opcode = op };
	uint64_t *remote = (uint64_t *)(void *)(dst.buf + 64), *local = (uint64_t *)(void *)src.buf;
	uint64_t before = 0x1122334455667788ull + id, after;

	memset(dst.buf, CANARY, 256);
	*remote = before;
	*local = 0;
	w.wr.atomic.remote_addr = (uintptr_t)remote;
	w.wr.atomic.rkey = dst.mr->rkey;
	w.wr.atomic.compare_add = op == IBV_WR_ATOMIC_CMP_AND_SWP ? cmp : swap;
	w.wr.atomic.swap = swap;
	post(&w, 8);
	expect_send_wc(id, op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD, 8);
	after = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? before + swap :
		(cmp == before ? swap : before);
	CHECK(*local == before);
	CHECK(*remote == after);
	CHECK(fn_all(dst.buf, 64, CANARY) && fn_all(dst.buf + 72, 256 - 72, CANARY));
}

/* SEND_WITH_INV naming a plain MR (the header comment): both sides' completions and states. */
static void send_with_inv_plain_mr(void)
{
	struct ibv_send_wr w = { .wr_id = 5, .opcode = IBV_WR_SEND_WITH_INV };
	struct ibv_wc wc;

	fn_fill(src.buf, mtu + 1, 5);
	fn_post_recv(ep[1].qp, 6, dst.buf, BIG, dst.mr->lkey);
	w.invalidate_rkey = inv.mr->rkey;
	post(&w, mtu + 1);
	expect_send_wc(5, IBV_WC_SEND, mtu + 1);
	wc = fn_wait(ep[1].rcq);
	CHECK_EQ(wc.wr_id, 6);
	CHECK_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(wc.wc_flags & IBV_WC_WITH_INV, 0);
	CHECK_EQ(fn_state(ep[1].qp), IBV_QPS_ERR);
	CHECK_EQ(fn_state(ep[0].qp), IBV_QPS_RTS);
}

static void all_sizes(void)
{
	const uint32_t sizes[] = { 0, 1, mtu - 1, mtu, mtu + 1, BIG };
	uint64_t id = 100;
	unsigned int i;

	for (i = 0; i < RTE_DIM(sizes); i++, id += 100) {
		one_send(IBV_WR_SEND, sizes[i], id);
		one_send(IBV_WR_SEND_WITH_IMM, sizes[i], id + 10);
		one_write(false, sizes[i], id + 30);
		one_write(true, sizes[i], id + 40);
		one_read(sizes[i], id + 50);
	}
	one_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 0x1122334455667788ull + 7, 42, 7);
	one_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 1, 42, 8);
	one_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 0x100000001ull, 9);
	one_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 0, UINT64_MAX, 10);	/* wraps */
}

int main(int argc, char **argv)
{
	struct fn_attr a = fn_attr_default();
	struct droce_counters c;
	struct ibv_wc wc;

	CHECK(argc == 3 || argc == 4);
	fn_open(argc, argv);
	a.gid = (uint8_t)fn_gid_arg(argc == 4 ? argv[3] : "v4");
	mtu = (uint32_t)atoi(argv[2]);
	CHECK(mtu == 1024 || mtu == 4096);
	a.mtu = mtu == 1024 ? IBV_MTU_1024 : IBV_MTU_4096;
	fn_pair(ep, &a);
	fn_mem_reg(&src, ep[0].pd, BIG + 4 * GUARD, FN_ACCESS_ALL, CANARY);
	fn_mem_reg(&dst, ep[1].pd, BIG + 4 * GUARD, FN_ACCESS_ALL, CANARY);
	fn_mem_reg(&inv, ep[1].pd, 4096, FN_ACCESS_ALL, 0);
	all_sizes();
	/* WRITE and READ made no completion on the responder; both QPs are still in RTS. */
	CHECK_EQ(droce_poll_cq(ep[1].rcq, 1, &wc), 0);
	CHECK_EQ(droce_poll_cq(ep[1].scq, 1, &wc), 0);
	CHECK_EQ(fn_state(ep[0].qp), IBV_QPS_RTS);
	CHECK_EQ(fn_state(ep[1].qp), IBV_QPS_RTS);
	c = fn_counters(0);
	CHECK_EQ(c.nak_rcvd + c.retransmits + c.retry_exceeded + c.rx_bad_frame, 0);
	fn_check_gid_family(a.gid);
	send_with_inv_plain_mr();
	fn_mem_free(&src);
	fn_mem_free(&dst);
	fn_mem_free(&inv);
	fn_pair_destroy(ep);
	fn_close();
	printf("opcodes (%s, MTU %u, GID %u): ok\n", argv[1], mtu, a.gid);
	return 0;
}
