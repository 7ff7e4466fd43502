/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Memory registered under an I/O virtual address (droce_reg_mr_iova2(), ibv_reg_mr_iova2(3))
 * through the engine, public API only. droce1's MR M is registered at iova IB and droce0's MR S
 * at iova IA, neither its address. Proves:
 * - A's RDMA WRITE, RDMA READ and FETCH_AND_ADD name M by IB + offset and reach M's memory at
 *   that offset (nothing around it touched); A's local SGEs name S by IA + offset;
 * - B's receive SGE names M by IB + offset: A's SEND lands there;
 * - a zero-based MR (IBV_ACCESS_ZERO_BASED) is written at VA 0 + offset;
 * - a WRITE that gives M's process address with M's rkey (outside [IB, IB + len)) completes
 *   IBV_WC_REM_ACCESS_ERR and writes nothing; a SEND whose SGE gives S's process address
 *   with S's lkey completes IBV_WC_LOC_PROT_ERR and sends nothing.
 *
 * Usage: functional_iova_test {inline|lcore}
 */
#include "fn_qp.h"

enum { LEN = 16384, CANARY = 0x5c };

#define IA 0x600000000000ull
#define IB 0x500000000000ull

struct imem {
	uint8_t *buf;
	struct droce_mr *mr;
};

static void imem_reg(struct imem *m, struct droce_pd *pd, uint64_t iova, int access)
{
	m->buf = aligned_alloc(4096, LEN);
	CHECK(m->buf != NULL);
	memset(m->buf, CANARY, LEN);
	m->mr = droce_reg_mr_iova2(pd, m->buf, LEN, iova, (unsigned int)access);
	CHECK(m->mr != NULL);
	CHECK(m->mr->addr == m->buf);
}

static void imem_free(struct imem *m)
{
	CHECK_EQ(droce_dereg_mr(m->mr), 0);
	free(m->buf);
}

static struct ibv_wc send_wc(struct fn_ep *e, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc = fn_wait(e->scq);

	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.status, st);
	return wc;
}

static void fetch_add(struct fn_ep *e, struct imem *src, uint64_t local, uint64_t remote,
		      uint32_t rkey, uint64_t add)
{
	struct ibv_sge s = { local, 8, src->mr->lkey };
	struct ibv_send_wr w = { .wr_id = 4, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	w.wr.atomic.remote_addr = remote;
	w.wr.atomic.rkey = rkey;
	w.wr.atomic.compare_add = add;
	CHECK_EQ(droce_post_send(e->qp, &w, &bad), 0);
	send_wc(e, 4, IBV_WC_SUCCESS);
}

static void good_paths(struct fn_ep e[2], struct imem *a, struct imem *b, struct droce_pd *pd1)
{
	uint64_t old = 5, v;
	struct imem z;
	struct ibv_wc wc;

	/* WRITE 4 KiB from IA to IB + 1000. */
	fn_fill(a->buf, 4096, 1);
	fn_post_send1(e[0].qp, 1, IBV_WR_RDMA_WRITE, (void *)(uintptr_t)IA, 4096, a->mr->lkey, 0,
		      NULL, 0, 0, IB + 1000, b->mr->rkey, 0);
	send_wc(&e[0], 1, IBV_WC_SUCCESS);
	CHECK(memcmp(b->buf + 1000, a->buf, 4096) == 0);
	CHECK(b->buf[999] == CANARY && b->buf[5096] == CANARY);
	/* READ 2 KiB from IB + 8192 to IA + 8192. */
	fn_fill(b->buf + 8192, 2048, 2);
	fn_post_send1(e[0].qp, 2, IBV_WR_RDMA_READ, (void *)(uintptr_t)(IA + 8192), 2048,
		      a->mr->lkey, 0, NULL, 0, 0, IB + 8192, b->mr->rkey, 0);
	send_wc(&e[0], 2, IBV_WC_SUCCESS);
	CHECK(memcmp(a->buf + 8192, b->buf + 8192, 2048) == 0);
	CHECK(a->buf[8191] == CANARY && a->buf[8192 + 2048] == CANARY);
	/* FETCH_AND_ADD at IB + 12288, the old value to IA + 12288. */
	memcpy(b->buf + 12288, &old, 8);
	fetch_add(&e[0], a, IA + 12288, IB + 12288, b->mr->rkey, 3);
	memcpy(&v, a->buf + 12288, 8);
	CHECK_EQ(v, 5);
	memcpy(&v, b->buf + 12288, 8);
	CHECK_EQ(v, 8);
	/* SEND 200 bytes from IA into B's receive buffer at IB + 14000. */
	fn_post_recv(e[1].qp, 9, (void *)(uintptr_t)(IB + 14000), 256, b->mr->lkey);
	fn_post_send1(e[0].qp, 3, IBV_WR_SEND, (void *)(uintptr_t)IA, 200, a->mr->lkey, 0, NULL,
		      0, 0, 0, 0, 0);
	send_wc(&e[0], 3, IBV_WC_SUCCESS);
	wc = fn_wait(e[1].rcq);
	CHECK_EQ(wc.wr_id, 9);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 200);
	CHECK(memcmp(b->buf + 14000, a->buf, 200) == 0);
	CHECK(b->buf[14200] == CANARY);
	/* A zero-based MR: VA 64 is its 65th byte. */
	z.buf = aligned_alloc(4096, 4096);
	CHECK(z.buf != NULL);
	memset(z.buf, CANARY, 4096);
	z.mr = droce_reg_mr(pd1, z.buf, 4096, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE);
	CHECK(z.mr != NULL);
	fn_post_send1(e[0].qp, 5, IBV_WR_RDMA_WRITE, (void *)(uintptr_t)IA, 100, a->mr->lkey, 0,
		      NULL, 0, 0, 64, z.mr->rkey, 0);
	send_wc(&e[0], 5, IBV_WC_SUCCESS);
	CHECK(memcmp(z.buf + 64, a->buf, 100) == 0);
	CHECK(z.buf[63] == CANARY && z.buf[164] == CANARY);
	CHECK_EQ(droce_dereg_mr(z.mr), 0);
	free(z.buf);
}

int main(int argc, char **argv)
{
	struct fn_attr at = fn_attr_default();
	struct fn_ep e[2], f[2];
	struct imem a, b;
	uint8_t *copy;

	fn_open(argc, argv);
	fn_pair(e, &at);
	imem_reg(&a, e[0].pd, IA, FN_ACCESS_ALL);
	imem_reg(&b, e[1].pd, IB, FN_ACCESS_ALL);
	good_paths(e, &a, &b, e[1].pd);

	/* M's process address is not an address its rkey names: nothing is written. */
	copy = malloc(LEN);
	CHECK(copy != NULL);
	memcpy(copy, b.buf, LEN);
	fn_post_send1(e[0].qp, 6, IBV_WR_RDMA_WRITE, (void *)(uintptr_t)IA, 64, a.mr->lkey, 0,
		      NULL, 0, 0, (uintptr_t)b.buf, b.mr->rkey, 0);
	send_wc(&e[0], 6, IBV_WC_REM_ACCESS_ERR);
	CHECK(memcmp(copy, b.buf, LEN) == 0);
	CHECK_EQ(fn_state(e[0].qp), IBV_QPS_ERR);
	free(copy);

	/* Nor is S's process address one its lkey names: the SEND fails locally. */
	fn_pair(f, &at);
	fn_post_send1(f[0].qp, 7, IBV_WR_SEND, a.buf, 64, a.mr->lkey, 0, NULL, 0, 0, 0, 0, 0);
	send_wc(&f[0], 7, IBV_WC_LOC_PROT_ERR);
	CHECK_EQ(fn_qp_counters(f[1].qp).rx_packets, 0);

	imem_free(&a);
	imem_free(&b);
	fn_pair_destroy(e);
	fn_pair_destroy(f);
	fn_close();
	printf("iova (%s): ok\n", argv[1]);
	return 0;
}
