/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * struct ibv_qp_ex's wr_* ops (the "new post-send API": ibv_wr_start(), ibv_wr_rdma_write(),
 * ibv_wr_set_sge(), ..., ibv_wr_complete()) built on droce_post_send(): each wr_<opcode>
 * fills the next struct ibv_send_wr of a per-QP batch, the setters complete it, and
 * wr_complete posts the batch as one chain. An op droce does not do (TSO, XRC) makes the
 * batch fail with EOPNOTSUPP at wr_complete.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat_private.h"

#define SEND_OPS_OK (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		     IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		     IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE | \
		     IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW | \
		     IBV_QP_EX_WITH_SEND_WITH_INV)

static struct compat_wr_batch *batch_of(struct ibv_qp_ex *qpx)
{
	return &compat_container_of(qpx, struct compat_qp, ibvx)->batch;
}

static void batch_fail(struct compat_wr_batch *b, int err)
{
	if (b->err == 0)
		b->err = err;
}

/* The next WR of the batch, or NULL (the batch fails with ENOMEM). */
static struct ibv_send_wr *next_wr(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
	struct compat_wr_batch *b = batch_of(qpx);
	struct ibv_send_wr *wr;

	if (b->n == b->cap) {
		batch_fail(b, ENOMEM);
		return NULL;
	}
	wr = &b->wr[b->n];
	memset(wr, 0, sizeof(*wr));
	wr->sg_list = &b->sge[(size_t)b->n * b->max_sge];
	wr->wr_id = qpx->wr_id;
	wr->send_flags = qpx->wr_flags;
	wr->opcode = op;
	b->n++;
	return wr;
}

/* The WR the setters complete: the last one started. */
static struct ibv_send_wr *cur_wr(struct ibv_qp_ex *qpx)
{
	struct compat_wr_batch *b = batch_of(qpx);

	if (b->n == 0) {
		batch_fail(b, EINVAL);
		return NULL;
	}
	return &b->wr[b->n - 1];
}

static void rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		 __be32 imm)
{
	struct ibv_send_wr *wr = next_wr(qpx, op);

	if (wr == NULL)
		return;
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	wr->imm_data = imm;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		   uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *wr = next_wr(qpx, op);

	if (wr == NULL)
		return;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			      uint64_t compare, uint64_t swap)
{
	atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
				uint64_t add)
{
	atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

/* The 8 bytes are copied into the batch now (the caller's buffer need not outlive the call),
 * and from there as inline data by droce_post_send() at wr_complete. */
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			    const void *data)
{
	struct compat_wr_batch *b = batch_of(qpx);
	struct ibv_send_wr *wr = next_wr(qpx, IBV_WR_ATOMIC_WRITE);

	if (wr == NULL)
		return;
	memcpy(&b->aw[b->n - 1], data, sizeof(b->aw[0]));
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	wr->sg_list[0].addr = (uintptr_t)&b->aw[b->n - 1];
	wr->sg_list[0].length = sizeof(b->aw[0]);
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	next_wr(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *wr = next_wr(qpx, IBV_WR_SEND_WITH_IMM);

	if (wr != NULL)
		wr->imm_data = imm;
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct ibv_send_wr *wr = cur_wr(qpx);

	if (wr == NULL)
		return;
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = remote_qpn;
	wr->wr.ud.remote_qkey = remote_qkey;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg)
{
	struct compat_wr_batch *b = batch_of(qpx);
	struct ibv_send_wr *wr = cur_wr(qpx);

	if (wr == NULL)
		return;
	if (num_sge > b->max_sge) {
		batch_fail(b, EINVAL);
		return;
	}
	memcpy(wr->sg_list, sg, num_sge * sizeof(*sg));
	wr->num_sge = (int)num_sge;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

/* Inline data: droce copies it at post time (wr_complete), as IBV_SEND_INLINE allows. */
static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf)
{
	struct compat_wr_batch *b = batch_of(qpx);
	struct ibv_send_wr *wr = cur_wr(qpx);
	size_t i;

	if (wr == NULL)
		return;
	if (num_buf > b->max_sge) {
		batch_fail(b, EINVAL);
		return;
	}
	for (i = 0; i < num_buf; i++) {
		wr->sg_list[i].addr = (uintptr_t)buf[i].addr;
		wr->sg_list[i].length = (uint32_t)buf[i].length;
		wr->sg_list[i].lkey = 0;
	}
	wr->num_sge = (int)num_buf;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct compat_wr_batch *b = batch_of(qpx);

	b->n = 0;
	b->err = 0;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct compat_qp *q = compat_container_of(qpx, struct compat_qp, ibvx);
	struct compat_wr_batch *b = &q->batch;
	struct ibv_send_wr *bad;
	uint32_t i;
	int rc = b->err;

	if (rc == 0 && b->n > 0) {
		for (i = 0; i + 1 < b->n; i++)
			b->wr[i].next = &b->wr[i + 1];
		b->wr[b->n - 1].next = NULL;
		rc = droce_post_send(q->d, b->wr, &bad);
	}
	b->n = 0;
	b->err = 0;
	return compat_err(rc);
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	wr_start(qpx);
}

/* A type-2 window (droce_post_send() refuses a type-1 one: ibv_bind_mw(3) binds those). */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *wr = next_wr(qpx, IBV_WR_BIND_MW);

	if (wr == NULL)
		return;
	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	wr->bind_mw.bind_info = *info;
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *wr = next_wr(qpx, IBV_WR_LOCAL_INV);

	if (wr != NULL)
		wr->invalidate_rkey = rkey;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *wr = next_wr(qpx, IBV_WR_SEND_WITH_INV);

	if (wr != NULL)
		wr->invalidate_rkey = rkey;
}

/* The ops droce does not do: the batch fails at wr_complete with EOPNOTSUPP. */
static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr; (void)hdr_sz; (void)mss;
	batch_fail(batch_of(qpx), EOPNOTSUPP);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	(void)srqn;
	batch_fail(batch_of(qpx), EOPNOTSUPP);
}


static void set_ops(struct ibv_qp_ex *x)
{
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_send_tso = wr_send_tso;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_atomic_write = wr_atomic_write;
}

/* @return 0, EOPNOTSUPP (an op droce does not do was asked for), ENOMEM. */
int compat_qp_ex_init(struct compat_qp *q, uint64_t send_ops_flags)
{
	struct ibv_qp_attr attr;
	struct droce_qp_init_attr init;
	struct compat_wr_batch *b = &q->batch;
	int rc;

	if (send_ops_flags & ~(uint64_t)SEND_OPS_OK)
		return EOPNOTSUPP;
	rc = droce_query_qp(q->d, &attr, IBV_QP_CAP, &init);
	if (rc != 0)
		return rc;
	b->cap = init.cap.max_send_wr > 0 ? init.cap.max_send_wr : 1;
	b->max_sge = init.cap.max_send_sge > 0 ? init.cap.max_send_sge : 1;
	b->wr = calloc(b->cap, sizeof(*b->wr));
	b->sge = calloc((size_t)b->cap * b->max_sge, sizeof(*b->sge));
	b->aw = calloc(b->cap, sizeof(*b->aw));
	if (b->wr == NULL || b->sge == NULL || b->aw == NULL) {
		compat_qp_ex_fini(q);
		return ENOMEM;
	}
	set_ops(&q->ibvx);
	return 0;
}

void compat_qp_ex_fini(struct compat_qp *q)
{
	free(q->batch.wr);
	free(q->batch.sge);
	free(q->batch.aw);
	q->batch.wr = NULL;
	q->batch.sge = NULL;
	q->batch.aw = NULL;
}
