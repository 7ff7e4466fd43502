/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Memory windows through the engine, public API only (droce_alloc_mw(), droce_bind_mw(),
 * IBV_WR_BIND_MW, IBV_WR_LOCAL_INV, SEND with invalidate). droce1 (B) owns MR M (MW_BIND) and
 * the windows; droce0 (A) reaches them. Every pair of QPs is made in the same two PDs. Proves:
 * - a type-2 window bound by a WR completes IBV_WC_BIND_MW; A's WRITE and READ through its
 *   R_Key reach M at the window's place; a SEND posted right after the bind (before its
 *   completion is read) carries a key that already works; M cannot be deregistered (EBUSY);
 * - A's SEND with invalidate frees it: B's receive has IBV_WC_WITH_INV and the key; a later
 *   WRITE through it completes IBV_WC_REM_ACCESS_ERR and writes nothing;
 * - rebound (the next key) and then IBV_WR_LOCAL_INV: IBV_WC_LOCAL_INV, and the key is dead;
 * - a zero-based window is reached at VA 0 + offset;
 * - type 2B: a QP of the same PD that did not bind it gets IBV_WC_REM_ACCESS_ERR; a WRITE
 *   past the window's end, and a READ through a window bound without REMOTE_READ, too;
 * - binds that must fail complete IBV_WC_MW_BIND_ERR (QP to ERR): a QP of another PD, an MR
 *   without MW_BIND, a range outside the MR, a key whose upper 24 bits differ, a bound window;
 * - type 1: droce_bind_mw() moves mw->rkey on (ibv_inc_rkey()), completes IBV_WC_BIND_MW, the
 *   new key reads and the old one does not; a bind of length 0 unbinds; it refuses a type-2
 *   window, ZERO_BASED (EINVAL) and an MR of another PD (EPERM); LOCAL_INV of a type-1 key
 *   completes IBV_WC_LOC_QP_OP_ERR, and a SEND with invalidate of one fails B's receive
 *   (IBV_WC_REM_INV_REQ_ERR) as rxe does;
 * - UC: a bind and a LOCAL_INV on a UC QP complete; A's WRITE through the key lands, after
 *   the LOCAL_INV it is dropped;
 * - a bind posted between two WRITEs completes between them, after the first one's ACK;
 * - destroying the QP that bound a type-2 window frees it (another QP binds it again);
 *   droce_dealloc_mw() of a bound window releases the MR.
 *
 * Usage: functional_mw_test {inline|lcore}
 */
#include "fn_qp.h"

enum { LEN = 16384, CANARY = 0x5c, WIN = 4096, WOFF = 4096 };

/* doc/api.md: bit 31 is set in every window's R_Key and in no MR key. */
#define KEY_MW (1u << 31)

#define M_ACCESS (FN_ACCESS_ALL | IBV_ACCESS_MW_BIND)
#define W_RW (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static struct fn_attr at;
static struct droce_pd *pda, *pdb;
static struct fn_mem a, m;	/* A's buffer, B's MR M */

static void pair_pd(struct fn_ep e[2])
{
	fn_ep_create(&e[0], 0, pda, &at);
	fn_ep_create(&e[1], 1, pdb, &at);
	fn_connect(&e[0], &e[1], &at);
	fn_connect(&e[1], &e[0], &at);
}

static void pair_done(struct fn_ep e[2])
{
	fn_ep_destroy(&e[0]);
	fn_ep_destroy(&e[1]);
}

static struct ibv_wc wait_st(struct droce_cq *cq, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc = fn_wait(cq);

	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.status, st);
	return wc;
}

static int post_bind(struct droce_qp *qp, uint64_t wr_id, struct droce_mw *mw, uint32_t rkey,
		     struct droce_mr *mr, uint64_t addr, uint64_t len, unsigned int access)
{
	struct ibv_send_wr w = { .wr_id = wr_id, .opcode = IBV_WR_BIND_MW,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	w.bind_mw.mw = (struct ibv_mw *)mw;
	w.bind_mw.rkey = rkey;
	w.bind_mw.bind_info.mr = (struct ibv_mr *)mr;
	w.bind_mw.bind_info.addr = addr;
	w.bind_mw.bind_info.length = len;
	w.bind_mw.bind_info.mw_access_flags = access;
	return droce_post_send(qp, &w, &bad);
}

/* Bind type-2 @p mw through @p b to M's window, with the next key; @return the key. */
static uint32_t bind2(struct fn_ep *b, struct droce_mw *mw, uint32_t key, unsigned int access,
		      enum ibv_wc_status st)
{
	uint32_t rkey = ibv_inc_rkey(key);
	struct ibv_wc wc;

	CHECK_EQ(post_bind(b->qp, 50, mw, rkey, m.mr, (uintptr_t)m.buf + WOFF, WIN, access), 0);
	wc = wait_st(b->scq, 50, st);
	if (st == IBV_WC_SUCCESS)
		CHECK_EQ(wc.opcode, IBV_WC_BIND_MW);
	return rkey;
}

static void post_inv(struct droce_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op, uint32_t rkey)
{
	struct ibv_sge s = { (uintptr_t)a.buf, 16, a.mr->lkey };
	struct ibv_send_wr w = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey }, *bad;

	CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
}

/* A's @p op of @p len bytes at B's @p raddr through @p rkey; @return its status. */
static enum ibv_wc_status rdma(struct fn_ep *e, enum ibv_wr_opcode op, uint64_t raddr,
			       uint32_t len, uint32_t rkey)
{
	fn_post_send1(e->qp, 7, op, a.buf, len, a.mr->lkey, 0, NULL, 0, 0, raddr, rkey, 0);
	return fn_wait(e->scq).status;
}

/* A bad remote access through @p rkey: REM_ACCESS_ERR, M untouched; the pair is spent. */
static void denied(enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey, struct fn_ep e[2])
{
	uint8_t copy[LEN];

	memcpy(copy, m.buf, LEN);
	fn_fill(a.buf, 64, 9);
	CHECK_EQ(rdma(&e[0], op, raddr, 64, rkey), IBV_WC_REM_ACCESS_ERR);
	CHECK(memcmp(copy, m.buf, LEN) == 0);
	pair_done(e);
}

/* Bind, use, SEND with invalidate; rebind, LOCAL_INV. @return the last key used. */
static uint32_t type2_bind_invalidate(struct droce_mw *w2)
{
	uint64_t base = (uintptr_t)m.buf + WOFF;
	struct ibv_send_wr sw, *bad;
	struct ibv_sge s;
	struct fn_ep e[2];
	struct ibv_wc wc;
	uint32_t k, got = 0;

	pair_pd(e);
	/* Bind, then at once a SEND carrying the key (inline): it leaves after the bind. */
	k = ibv_inc_rkey(w2->rkey);
	CHECK_EQ(post_bind(e[1].qp, 50, w2, k, m.mr, base, WIN, W_RW), 0);
	fn_post_recv(e[0].qp, 60, a.buf + 8192, 64, a.mr->lkey);
	s = (struct ibv_sge){ (uintptr_t)&k, sizeof(k), 0 };
	sw = (struct ibv_send_wr){ .wr_id = 51, .sg_list = &s, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE };
	CHECK_EQ(droce_post_send(e[1].qp, &sw, &bad), 0);
	wc = wait_st(e[1].scq, 50, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_BIND_MW);
	CHECK_EQ(wc.byte_len, 0);
	wait_st(e[1].scq, 51, IBV_WC_SUCCESS);
	wait_st(e[0].rcq, 60, IBV_WC_SUCCESS);
	memcpy(&got, a.buf + 8192, sizeof(got));
	CHECK_EQ(got, k);
	CHECK((k & 0xffffff00) == (w2->rkey & 0xffffff00) && (k & KEY_MW));
	/* WRITE and READ through the window land at its place in M. */
	fn_fill(a.buf, 1024, 3);
	CHECK_EQ(rdma(&e[0], IBV_WR_RDMA_WRITE, base + 100, 1024, got), IBV_WC_SUCCESS);
	CHECK(memcmp(m.buf + WOFF + 100, a.buf, 1024) == 0);
	CHECK(m.buf[WOFF + 99] == CANARY && m.buf[WOFF + 1124] == CANARY);
	fn_fill(m.buf + WOFF + 2000, 512, 4);
	CHECK_EQ(rdma(&e[0], IBV_WR_RDMA_READ, base + 2000, 512, got), IBV_WC_SUCCESS);
	CHECK(memcmp(a.buf, m.buf + WOFF + 2000, 512) == 0);
	CHECK_EQ(droce_dereg_mr(m.mr), EBUSY);	/* a window is bound to it */
	/* A's SEND with invalidate frees it. */
	fn_post_recv(e[1].qp, 61, m.buf, 64, m.mr->lkey);
	post_inv(e[0].qp, 52, IBV_WR_SEND_WITH_INV, got);
	wait_st(e[0].scq, 52, IBV_WC_SUCCESS);
	wc = wait_st(e[1].rcq, 61, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK(wc.wc_flags & IBV_WC_WITH_INV);
	CHECK_EQ(wc.invalidated_rkey, got);
	CHECK_EQ(wc.byte_len, 16);
	memset(m.buf, CANARY, 64);
	denied(IBV_WR_RDMA_WRITE, base, got, e);	/* used after invalidation */

	/* Free again: rebound with the next key through a new pair, then LOCAL_INV. */
	pair_pd(e);
	k = bind2(&e[1], w2, got, W_RW, IBV_WC_SUCCESS);
	CHECK_EQ(rdma(&e[0], IBV_WR_RDMA_READ, base, 64, k), IBV_WC_SUCCESS);
	post_inv(e[1].qp, 53, IBV_WR_LOCAL_INV, k);
	wc = wait_st(e[1].scq, 53, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_LOCAL_INV);
	denied(IBV_WR_RDMA_READ, base, k, e);
	return k;
}

/* Zero-based, type 2B, range and access. */
static uint32_t type2_rules(struct droce_mw *w2, uint32_t key)
{
	uint64_t base = (uintptr_t)m.buf + WOFF;
	struct fn_ep e[2], f[2];
	uint32_t k;

	memset(m.buf, CANARY, LEN);
	pair_pd(e);
	pair_pd(f);
	k = ibv_inc_rkey(key);
	CHECK_EQ(post_bind(e[1].qp, 54, w2, k, m.mr, base, WIN,
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED), 0);
	wait_st(e[1].scq, 54, IBV_WC_SUCCESS);
	fn_fill(a.buf, 100, 5);
	CHECK_EQ(rdma(&e[0], IBV_WR_RDMA_WRITE, 64, 100, k), IBV_WC_SUCCESS);
	CHECK(memcmp(m.buf + WOFF + 64, a.buf, 100) == 0);
	CHECK(m.buf[WOFF + 63] == CANARY && m.buf[WOFF + 164] == CANARY);
	memset(m.buf + WOFF + 64, CANARY, 100);
	denied(IBV_WR_RDMA_WRITE, 64, k, f);	/* f[1] did not bind it (2B) */
	denied(IBV_WR_RDMA_READ, 0, k, e);	/* bound without REMOTE_READ */
	/* e[1] is gone: the window was freed with it; bind it again, and write past it. */
	pair_pd(e);
	k = bind2(&e[1], w2, k, W_RW, IBV_WC_SUCCESS);
	denied(IBV_WR_RDMA_WRITE, base + WIN - 32, k, e);
	return k;
}

/* Binds that must fail: each completes IBV_WC_MW_BIND_ERR and ends its QP. */
static void bind_errors(struct droce_mw *w2, uint32_t key)
{
	struct droce_pd *pdc = fn_pd(1);
	struct fn_mem nb;
	struct fn_ep e[2], c;
	uint32_t k = ibv_inc_rkey(key);

	fn_mem_reg(&nb, pdb, 4096, FN_ACCESS_ALL, 0);	/* no MW_BIND */
	pair_pd(e);
	CHECK_EQ(post_bind(e[1].qp, 55, w2, k, nb.mr, (uintptr_t)nb.buf, 4096, W_RW), 0);
	wait_st(e[1].scq, 55, IBV_WC_MW_BIND_ERR);
	CHECK_EQ(fn_state(e[1].qp), IBV_QPS_ERR);
	pair_done(e);
	pair_pd(e);	/* outside M */
	CHECK_EQ(post_bind(e[1].qp, 56, w2, k, m.mr, (uintptr_t)m.buf + LEN - 8, 16, W_RW), 0);
	wait_st(e[1].scq, 56, IBV_WC_MW_BIND_ERR);
	pair_done(e);
	pair_pd(e);	/* a key whose upper 24 bits are not the window's */
	CHECK_EQ(post_bind(e[1].qp, 57, w2, k ^ 0x100, m.mr, (uintptr_t)m.buf, 64, W_RW), 0);
	wait_st(e[1].scq, 57, IBV_WC_MW_BIND_ERR);
	pair_done(e);
	pair_pd(e);	/* bound already: the second bind fails */
	k = bind2(&e[1], w2, key, W_RW, IBV_WC_SUCCESS);
	CHECK_EQ(post_bind(e[1].qp, 58, w2, ibv_inc_rkey(k), m.mr, (uintptr_t)m.buf, 64, W_RW),
		 0);
	wait_st(e[1].scq, 58, IBV_WC_MW_BIND_ERR);
	pair_done(e);	/* (the window is freed with its QP) */
	/* A QP of another PD. */
	fn_ep_create(&c, 1, pdc, &at);
	fn_connect(&c, &c, &at);
	CHECK_EQ(post_bind(c.qp, 59, w2, ibv_inc_rkey(k), m.mr, (uintptr_t)m.buf, 64, W_RW), 0);
	wait_st(c.scq, 59, IBV_WC_MW_BIND_ERR);
	fn_ep_destroy(&c);
	CHECK_EQ(droce_dealloc_pd(pdc), 0);
	fn_mem_free(&nb);
}

/* Type 1: bound by droce_bind_mw(), never invalidated. */
static void type1(void)
{
	uint64_t base = (uintptr_t)m.buf + WOFF;
	struct droce_mw *w1 = droce_alloc_mw(pdb, IBV_MW_TYPE_1), *w2;
	struct ibv_mw_bind mb = { .wr_id = 70, .send_flags = IBV_SEND_SIGNALED };
	struct droce_pd *pdo;
	struct fn_mem o;
	struct fn_ep e[2];
	struct ibv_wc wc;
	uint32_t k0, k;

	CHECK(w1 != NULL && w1->type == IBV_MW_TYPE_1 && w1->pd == pdb);
	k0 = w1->rkey;
	pair_pd(e);
	mb.bind_info = (struct ibv_mw_bind_info){ (struct ibv_mr *)m.mr, base, WIN,
						  IBV_ACCESS_REMOTE_READ };
	CHECK_EQ(droce_bind_mw(e[1].qp, w1, &mb), 0);
	k = w1->rkey;
	CHECK_EQ(k, ibv_inc_rkey(k0));
	wc = wait_st(e[1].scq, 70, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_BIND_MW);
	fn_fill(m.buf + WOFF, 256, 6);
	CHECK_EQ(rdma(&e[0], IBV_WR_RDMA_READ, base, 256, k), IBV_WC_SUCCESS);
	CHECK(memcmp(a.buf, m.buf + WOFF, 256) == 0);
	/* Bad posts: a type-2 window, ZERO_BASED, an MR of another PD, addr without MR. */
	w2 = droce_alloc_mw(pdb, IBV_MW_TYPE_2);
	CHECK(w2 != NULL);
	CHECK_EQ(droce_bind_mw(e[1].qp, w2, &mb), EINVAL);
	CHECK_EQ(droce_dealloc_mw(w2), 0);
	mb.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED;
	CHECK_EQ(droce_bind_mw(e[1].qp, w1, &mb), EINVAL);
	pdo = fn_pd(1);
	fn_mem_reg(&o, pdo, 4096, M_ACCESS, 0);
	mb.bind_info = (struct ibv_mw_bind_info){ (struct ibv_mr *)o.mr, (uintptr_t)o.buf, 64,
						  IBV_ACCESS_REMOTE_READ };
	CHECK_EQ(droce_bind_mw(e[1].qp, w1, &mb), EPERM);
	fn_mem_free(&o);
	CHECK_EQ(droce_dealloc_pd(pdo), 0);
	mb.bind_info = (struct ibv_mw_bind_info){ NULL, base, 64, 0 };
	CHECK_EQ(droce_bind_mw(e[1].qp, w1, &mb), EINVAL);
	CHECK_EQ(droce_bind_mw(NULL, w1, &mb), EINVAL);
	CHECK_EQ(w1->rkey, k);	/* refused binds leave the key */
	/* Bind again: the old key names nothing; the new one writes (REMOTE_WRITE now). */
	mb.bind_info = (struct ibv_mw_bind_info){ (struct ibv_mr *)m.mr, base, WIN, W_RW };
	CHECK_EQ(droce_bind_mw(e[1].qp, w1, &mb), 0);
	wait_st(e[1].scq, 70, IBV_WC_SUCCESS);
	CHECK(w1->rkey != k);
	k = w1->rkey;
	fn_fill(a.buf, 64, 7);
	CHECK_EQ(rdma(&e[0], IBV_WR_RDMA_WRITE, base + 8, 64, k), IBV_WC_SUCCESS);
	CHECK(memcmp(m.buf + WOFF + 8, a.buf, 64) == 0);
	/* LOCAL_INV of a type-1 key: IBV_WC_LOC_QP_OP_ERR (o10-37.2.26). */
	post_inv(e[1].qp, 71, IBV_WR_LOCAL_INV, k);
	wait_st(e[1].scq, 71, IBV_WC_LOC_QP_OP_ERR);
	pair_done(e);
	/* Unbound (length 0): its key names nothing. A SEND with invalidate of a type-1 key
	 * fails B's receive, as rxe (the window stays as it was). */
	pair_pd(e);
	mb.bind_info = (struct ibv_mw_bind_info){ NULL, 0, 0, 0 };
	CHECK_EQ(droce_bind_mw(e[1].qp, w1, &mb), 0);
	wait_st(e[1].scq, 70, IBV_WC_SUCCESS);
	fn_post_recv(e[1].qp, 72, m.buf, 64, m.mr->lkey);
	post_inv(e[0].qp, 73, IBV_WR_SEND_WITH_INV, w1->rkey);
	wait_st(e[0].scq, 73, IBV_WC_SUCCESS);
	wait_st(e[1].rcq, 72, IBV_WC_REM_INV_REQ_ERR);
	memset(m.buf, CANARY, 64);
	pair_done(e);
	pair_pd(e);
	denied(IBV_WR_RDMA_READ, base, w1->rkey, e);
	CHECK_EQ(droce_dealloc_mw(w1), 0);
}

/* UC completes a WRITE on transmission: a SEND after it, received, says it was handled (UC
 * keeps the order). Its 16 bytes land at the end of M. */
static void uc_fence(struct fn_qp *qa, struct fn_qp *qb)
{
	fn_post_recv(qb->qp, 95, m.buf + LEN - 64, 64, m.mr->lkey);
	fn_post_send1(qa->qp, 94, IBV_WR_SEND, a.buf, 16, a.mr->lkey, 0, NULL, 0, 0, 0, 0, 0);
	wait_st(qa->cq, 94, IBV_WC_SUCCESS);
	wait_st(qb->cq, 95, IBV_WC_SUCCESS);
}

/* UC: a bind and LOCAL_INV on a UC QP; A's WRITE through the key lands, then is dropped. */
static void uc(struct droce_mw *w, uint32_t key)
{
	uint64_t base = (uintptr_t)m.buf + WOFF;
	struct fn_qp qa, qb;
	struct ibv_wc wc;
	uint32_t k = ibv_inc_rkey(key);

	memset(m.buf, CANARY, LEN);
	fn_qp_create(&qa, 0, pda, IBV_QPT_UC, NULL, 16);
	fn_qp_create(&qb, 1, pdb, IBV_QPT_UC, NULL, 16);
	fn_uc_connect(&qa, &qb, IBV_MTU_1024, GID_V4);
	fn_uc_connect(&qb, &qa, IBV_MTU_1024, GID_V4);
	CHECK_EQ(post_bind(qb.qp, 90, w, k, m.mr, base, WIN, IBV_ACCESS_REMOTE_WRITE), 0);
	wc = wait_st(qb.cq, 90, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_BIND_MW);
	fn_fill(a.buf, 2048, 8);
	fn_post_send1(qa.qp, 91, IBV_WR_RDMA_WRITE, a.buf, 2048, a.mr->lkey, 0, NULL, 0, 0,
		      base + 512, k, 0);
	wait_st(qa.cq, 91, IBV_WC_SUCCESS);
	uc_fence(&qa, &qb);
	CHECK(memcmp(m.buf + WOFF + 512, a.buf, 2048) == 0);
	post_inv(qb.qp, 92, IBV_WR_LOCAL_INV, k);
	CHECK_EQ(wait_st(qb.cq, 92, IBV_WC_SUCCESS).opcode, IBV_WC_LOCAL_INV);
	memset(m.buf, CANARY, LEN);
	fn_post_send1(qa.qp, 93, IBV_WR_RDMA_WRITE, a.buf, 64, a.mr->lkey, 0, NULL, 0, 0, base,
		      k, 0);
	wait_st(qa.cq, 93, IBV_WC_SUCCESS);
	uc_fence(&qa, &qb);
	CHECK(fn_all(m.buf, LEN - 64, CANARY));	/* dropped (UC has no NAK) */
	fn_qp_destroy(&qa);
	fn_qp_destroy(&qb);
}

int main(int argc, char **argv)
{
	struct droce_mw *w2, *w3;
	struct fn_ep e[2];
	uint32_t k;

	fn_open(argc, argv);
	at = fn_attr_default();
	pda = fn_pd(0);
	pdb = fn_pd(1);
	fn_mem_reg(&a, pda, LEN, FN_ACCESS_ALL, 0);
	fn_mem_reg(&m, pdb, LEN, M_ACCESS, CANARY);
	CHECK(droce_alloc_mw(NULL, IBV_MW_TYPE_2) == NULL && errno == EINVAL);
	CHECK(droce_alloc_mw(pdb, (enum ibv_mw_type)3) == NULL && errno == EINVAL);
	w2 = droce_alloc_mw(pdb, IBV_MW_TYPE_2);
	CHECK(w2 != NULL && w2->type == IBV_MW_TYPE_2 && (w2->rkey & KEY_MW));
	CHECK_EQ(droce_dealloc_pd(pdb), EBUSY);

	k = type2_bind_invalidate(w2);
	k = type2_rules(w2, k);
	bind_errors(w2, k);
	uc(w2, k);
	type1();

	/* A bound window deallocated releases M; a QP destroyed frees what it bound. */
	pair_pd(e);
	w3 = droce_alloc_mw(pdb, IBV_MW_TYPE_2);
	CHECK(w3 != NULL);
	/* Between two WRITEs, a bind completes in its place: after the first one's ACK. */
	fn_post_send1(e[1].qp, 80, IBV_WR_RDMA_WRITE, m.buf, 8192, m.mr->lkey, 0, NULL, 0, 0,
		      (uintptr_t)a.buf, a.mr->rkey, 0);
	CHECK_EQ(post_bind(e[1].qp, 81, w3, ibv_inc_rkey(w3->rkey), m.mr, (uintptr_t)m.buf, 64,
			   W_RW), 0);
	fn_post_send1(e[1].qp, 82, IBV_WR_RDMA_WRITE, m.buf, 64, m.mr->lkey, 0, NULL, 0, 0,
		      (uintptr_t)a.buf, a.mr->rkey, 0);
	CHECK_EQ(wait_st(e[1].scq, 80, IBV_WC_SUCCESS).opcode, IBV_WC_RDMA_WRITE);
	CHECK_EQ(wait_st(e[1].scq, 81, IBV_WC_SUCCESS).opcode, IBV_WC_BIND_MW);
	CHECK_EQ(wait_st(e[1].scq, 82, IBV_WC_SUCCESS).opcode, IBV_WC_RDMA_WRITE);
	post_inv(e[1].qp, 83, IBV_WR_LOCAL_INV, ibv_inc_rkey(w3->rkey));
	wait_st(e[1].scq, 83, IBV_WC_SUCCESS);
	bind2(&e[1], w3, ibv_inc_rkey(w3->rkey), W_RW, IBV_WC_SUCCESS);
	k = bind2(&e[1], w2, k, W_RW, IBV_WC_SUCCESS);
	CHECK_EQ(droce_dealloc_mw(w3), 0);
	CHECK_EQ(droce_dereg_mr(m.mr), EBUSY);	/* w2 still */
	pair_done(e);
	pair_pd(e);
	k = bind2(&e[1], w2, k, W_RW, IBV_WC_SUCCESS);	/* free again */
	CHECK_EQ(droce_dealloc_mw(w2), 0);
	pair_done(e);
	CHECK_EQ(droce_dealloc_mw(NULL), EINVAL);
	fn_mem_free(&m);
	fn_mem_free(&a);
	CHECK_EQ(droce_dealloc_pd(pda), 0);
	CHECK_EQ(droce_dealloc_pd(pdb), 0);
	fn_close();
	printf("mw (%s): ok\n", argv[1]);
	return 0;
}
