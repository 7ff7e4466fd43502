/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Every RC opcode at sizes 0, 1, MTU-1, MTU, MTU+1, 3 MTU + 7 and 1 MiB, at path MTU 256, 1024
 * and 4096, through two real devices: data verified byte for byte (and the bytes around it
 * untouched), completions checked on both sides (opcode, byte_len, immediate, solicited),
 * several SGEs on both sides, inline sends, atomics, PSNs that wrap. (SEND with invalidate
 * ends the responder's QP: errors_test.c.)
 */
#include "tt.h"

#define BIG (1u << 20)
#define SLACK 4096
#define NS_LIMIT 20000000000ull	/* 20 s of simulated time per operation */

static struct tt tt;
static uint8_t *lbuf, *rbuf, *shadow;
static struct droce_mr *lmr, *rmr;

static bool needs_recv(enum ibv_wr_opcode op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
	       op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

/* Up to three SGEs over [buf, buf + len) with key @p key. */
static int split(struct ibv_sge *sge, uint8_t *buf, uint32_t len, uint32_t key)
{
	uint32_t a = len / 3, b = 2 * len / 3;
	int n = 0;

	if (len < 3) {
		sge[0] = (struct ibv_sge){ (uintptr_t)buf, len, key };
		return 1;
	}
	sge[n++] = (struct ibv_sge){ (uintptr_t)buf, a, key };
	sge[n++] = (struct ibv_sge){ (uintptr_t)buf + a, b - a, key };
	sge[n++] = (struct ibv_sge){ (uintptr_t)buf + b, len - b, key };
	return n;
}

static void one(struct tt_qp *q, enum ibv_wr_opcode op, uint32_t len, uint32_t seed,
		bool inl)
{
	struct tt_qp *p = q->peer;
	struct ibv_sge lsge[3], rsge[3];
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	bool rd = op == IBV_WR_RDMA_READ;
	uint8_t *src = rd ? rbuf : lbuf, *dst = rd ? lbuf : rbuf;
	uint32_t imm = 0xa0b0c000 | (seed & 0xff);

	tt_fill(src, len, seed);
	memset(dst, 0xee, len + SLACK);
	if (needs_recv(op)) {
		int n = op == IBV_WR_RDMA_WRITE_WITH_IMM ? 0 : split(rsge, rbuf, len + 64,
								     rmr->lkey);
		tt_post_recv(p, seed, rsge, n);
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = seed;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | (inl ? IBV_SEND_INLINE : 0);
	wr.sg_list = lsge;
	wr.num_sge = split(lsge, lbuf, len, lmr->lkey);
	wr.imm_data = rte_cpu_to_be_32(imm);
	wr.wr.rdma.remote_addr = (uintptr_t)rbuf;
	wr.wr.rdma.rkey = rmr->rkey;
	tt_post_send(q, &wr);

	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, NS_LIMIT), 1);
	if (wc.status != IBV_WC_SUCCESS)
		fprintf(stderr, "op %d len %u: status %d\n", op, len, wc.status);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, seed);
	if (needs_recv(op)) {
		CHECK_EQ(tt_wait_cqes(&tt, p->rcq, 1, &wc, NS_LIMIT), 1);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, seed);
		CHECK_EQ(wc.byte_len, len);
		CHECK_EQ(wc.opcode, op == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RECV_RDMA_WITH_IMM :
								       IBV_WC_RECV);
		if (op == IBV_WR_SEND) {
			CHECK_EQ(wc.wc_flags & (IBV_WC_WITH_INV | IBV_WC_WITH_IMM), 0);
		} else {
			CHECK_EQ(wc.wc_flags & IBV_WC_WITH_IMM, IBV_WC_WITH_IMM);
			CHECK_EQ(rte_be_to_cpu_32(wc.imm_data), imm);
		}
		CHECK_EQ(wc.qp_num, p->qp->qp_num);
		CHECK_EQ(wc.src_qp, q->qp->qp_num);
	}
	tt_fill(shadow, len, seed);
	if (memcmp(dst, shadow, len) != 0) {
		fprintf(stderr, "op %d len %u inline %d: data differs\n", op, len, inl);
		exit(1);
	}
	memset(shadow, 0xee, SLACK);
	CHECK(memcmp(dst + len, shadow, SLACK) == 0);
}

static void atomics(struct tt_qp *q)
{
	uint64_t *remote = (uint64_t *)(rbuf + 64), *local = (uint64_t *)lbuf;
	struct ibv_sge sge = { (uintptr_t)local, 8, lmr->lkey };
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	*remote = 1000;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)remote;
	wr.wr.atomic.rkey = rmr->rkey;

	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.compare_add = 5;
	*local = 0;
	tt_post_send(q, &wr);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_FETCH_ADD);
	CHECK_EQ(*local, 1000);
	CHECK_EQ(*remote, 1005);

	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;	/* compare fails: no swap */
	wr.wr.atomic.compare_add = 1;
	wr.wr.atomic.swap = 77;
	tt_post_send(q, &wr);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_COMP_SWAP);
	CHECK_EQ(*local, 1005);
	CHECK_EQ(*remote, 1005);

	wr.wr.atomic.compare_add = 1005;	/* compare matches: swapped */
	wr.wr.atomic.swap = 0xfedcba9876543210ull;
	tt_post_send(q, &wr);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(*local, 1005);
	CHECK(*remote == 0xfedcba9876543210ull);
}

int main(int argc, char **argv)
{
	static const enum ibv_mtu mtus[] = { IBV_MTU_256, IBV_MTU_1024, IBV_MTU_4096 };
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	};
	struct tt_opts o;
	unsigned int m, i, s;
	uint32_t seed = 1;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;

	tt_init(&tt, argc, argv, 1);
	lbuf = aligned_alloc(4096, BIG + SLACK);
	rbuf = aligned_alloc(4096, BIG + SLACK);
	shadow = malloc(BIG + SLACK);
	CHECK(lbuf != NULL && rbuf != NULL && shadow != NULL);
	lmr = tt_mr(&tt, 0, lbuf, BIG + SLACK, access);
	rmr = tt_mr(&tt, 1, rbuf, BIG + SLACK, access);

	for (m = 0; m < RTE_DIM(mtus); m++) {
		uint32_t mtu = 128u << mtus[m];
		uint32_t sizes[] = { 0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu + 7, BIG };
		struct tt_qp *q;

		tt_opts_default(&o);
		o.mtu = mtus[m];
		q = tt_pair(&tt, &o);
		for (i = 0; i < RTE_DIM(ops); i++)
			for (s = 0; s < RTE_DIM(sizes); s++)
				one(q, ops[i], sizes[s], seed++, false);
		/* inline: SEND and WRITE up to max_inline */
		for (s = 0; s < 4; s++) {
			uint32_t len = (uint32_t[]){ 0, 1, 100, 256 }[s];

			one(q, IBV_WR_SEND, len, seed++, true);
			one(q, IBV_WR_RDMA_WRITE_WITH_IMM, len, seed++, true);
		}
		atomics(q);
		printf("mtu %u: ok (%llu frames so far, ack_sent %llu, ack_rcvd %llu)\n", mtu,
		       (unsigned long long)tt.frames, (unsigned long long)tt.cnt[1].ack_sent,
		       (unsigned long long)tt.cnt[0].ack_rcvd);
		CHECK_EQ(tt.cnt[0].retransmits + tt.cnt[1].retransmits, 0);
		CHECK_EQ(tt.cnt[1].duplicate_request + tt.cnt[1].out_of_sequence, 0);
	}
	return 0;
}
