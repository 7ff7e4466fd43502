/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * QPs: create errors and granted capacity, posting rules per state with *bad_wr, WR checks,
 * ENOMEM at the queue depth, selective signalling, flush on ERR (send and receive, in order),
 * RESET emptying the queues, SQE on a UC/UD send error, and control through an owner.
 */
#include <pthread.h>

#include "vt.h"

static struct droce_context *ctx, *ctx1;
static struct droce_pd *pd;
static struct droce_cq *cq;

static void test_create(void)
{
	struct droce_cq *ocq = droce_create_cq(ctx1, 4, NULL, NULL, 0);
	struct droce_qp_init_attr a;
	struct droce_qp *qp;

#define BAD_CREATE(field, val, err) do { \
	memset(&a, 0, sizeof(a)); \
	a.send_cq = cq; a.recv_cq = cq; a.qp_type = IBV_QPT_RC; \
	a.cap.max_send_wr = 1; a.cap.max_recv_wr = 1; \
	a.field = val; \
	errno = 0; \
	CHECK(droce_create_qp(pd, &a) == NULL); \
	CHECK_EQ(errno, err); \
} while (0)
	CHECK(ocq != NULL);
	BAD_CREATE(send_cq, NULL, EINVAL);
	BAD_CREATE(recv_cq, NULL, EINVAL);
	BAD_CREATE(send_cq, ocq, EINVAL);	/* another context */
	BAD_CREATE(qp_type, (enum ibv_qp_type)99, EINVAL);
	BAD_CREATE(qp_type, IBV_QPT_RAW_PACKET, EOPNOTSUPP);
	BAD_CREATE(qp_type, IBV_QPT_XRC_SEND, EOPNOTSUPP);
	BAD_CREATE(cap.max_send_wr, DROCE_MAX_QP_WR + 1, EINVAL);
	BAD_CREATE(cap.max_recv_wr, DROCE_MAX_QP_WR + 1, EINVAL);
	BAD_CREATE(cap.max_send_sge, DROCE_MAX_SGE + 1, EINVAL);
	BAD_CREATE(cap.max_recv_sge, DROCE_MAX_SGE + 1, EINVAL);
	BAD_CREATE(cap.max_inline_data, DROCE_MAX_INLINE + 1, EINVAL);
#undef BAD_CREATE
	errno = 0;
	CHECK(droce_create_qp(NULL, &a) == NULL && errno == EINVAL);
	CHECK(droce_create_qp(pd, NULL) == NULL && errno == EINVAL);
	CHECK_EQ(droce_destroy_qp(NULL), EINVAL);
	/* Granted capacity: at least what was asked, reported back. */
	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = IBV_QPT_UD;
	a.qp_context = &a;
	a.cap.max_send_wr = 5;
	a.cap.max_recv_wr = DROCE_MAX_QP_WR;
	a.cap.max_send_sge = 3;
	a.cap.max_recv_sge = DROCE_MAX_SGE;
	a.cap.max_inline_data = 100;
	qp = droce_create_qp(pd, &a);
	CHECK(qp != NULL);
	CHECK(a.cap.max_send_wr >= 5 && a.cap.max_recv_wr == DROCE_MAX_QP_WR);
	CHECK(a.cap.max_send_sge >= 3 && a.cap.max_inline_data >= 100);
	CHECK(qp->qp_num >= 2 && qp->qp_num <= 0xffffff);
	CHECK(qp->state == IBV_QPS_RESET && qp->qp_type == IBV_QPT_UD && qp->qp_context == &a);
	CHECK(verbs_qp_lookup(ctx->device, qp->qp_num) == qp);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_cq(ocq), 0);
}

static struct ibv_send_wr send_wr(uint64_t id, int flags)
{
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_SEND, .send_flags = flags };

	return wr;
}

static void test_post_states(void)
{
	static const struct { enum ibv_qp_state st; bool send, recv; } rules[] = {
		{ IBV_QPS_RESET, false, false }, { IBV_QPS_INIT, false, true },
		{ IBV_QPS_RTR, false, true }, { IBV_QPS_RTS, true, true },
		{ IBV_QPS_SQD, true, true }, { IBV_QPS_SQE, true, true },
		{ IBV_QPS_ERR, true, true },
	};
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_UC, cq, cq, 8);
	unsigned int i;

	for (i = 0; i < RTE_DIM(rules); i++) {
		struct ibv_send_wr s = send_wr(i, IBV_SEND_SIGNALED), *sbad = NULL;
		struct ibv_recv_wr r = { .wr_id = i }, *rbad = NULL;
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

		CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE), 0);
		vt_walk(qp, rules[i].st);
		vt_drain(cq);
		CHECK_EQ(droce_post_send(qp, &s, &sbad), rules[i].send ? 0 : EINVAL);
		if (!rules[i].send)
			CHECK(sbad == &s);
		CHECK_EQ(droce_post_recv(qp, &r, &rbad), rules[i].recv ? 0 : EINVAL);
		if (!rules[i].recv)
			CHECK(rbad == &r);
	}
	/* Posted in ERR: flushed by the engine's next look at the queues. */
	CHECK(verbs_sq_next(qp) == NULL);
	CHECK(verbs_rq_next(qp) == NULL);
	{
		struct ibv_wc wc[4];

		CHECK_EQ(droce_poll_cq(cq, 4, wc), 2);
		CHECK(wc[0].wr_id == 6 && wc[0].status == IBV_WC_WR_FLUSH_ERR);
		CHECK(wc[1].wr_id == 6 && wc[1].opcode == IBV_WC_RECV);
	}
	CHECK_EQ(droce_destroy_qp(qp), 0);
}

static void test_wr_checks(void)
{
	struct droce_qp *rc = vt_qp(pd, IBV_QPT_RC, cq, cq, 4);
	struct droce_qp *ud = vt_qp(pd, IBV_QPT_UD, cq, cq, 4);
	struct droce_pd *pd2 = droce_alloc_pd(ctx);
	struct ibv_qp_attr aa;
	struct droce_ah *ah2;
	static uint64_t word;
	static char big[DROCE_MAX_INLINE * 2];
	struct ibv_sge sg8 = { .addr = (uintptr_t)&word, .length = 8 };
	struct ibv_sge sgs[3] = { { .length = 1 }, { .length = 1 }, { .length = 1 } };
	struct ibv_sge sgbig = { .addr = (uintptr_t)big, .length = 65 };
	struct ibv_send_wr w[3], *bad;
	struct ibv_recv_wr r = { .sg_list = sgs, .num_sge = 3 }, *rbad;

	vt_walk(rc, IBV_QPS_RTS);
	vt_walk(ud, IBV_QPS_RTS);
	vt_fill(&aa);
	ah2 = droce_create_ah(pd2, &aa.ah_attr);
	CHECK(ah2 != NULL);
#define BAD_WR(qp, field, val) do { \
	w[0] = send_wr(1, 0); w[0].field = val; bad = NULL; \
	CHECK_EQ(droce_post_send(qp, &w[0], &bad), EINVAL); CHECK(bad == &w[0]); \
} while (0)
	BAD_WR(rc, opcode, (enum ibv_wr_opcode)99);
	BAD_WR(ud, opcode, IBV_WR_LOCAL_INV);	/* RC and UC only */
	BAD_WR(ud, opcode, IBV_WR_BIND_MW);
	BAD_WR(rc, opcode, IBV_WR_BIND_MW);	/* bind_mw.mw NULL: no window */
	BAD_WR(rc, opcode, IBV_WR_TSO);
	BAD_WR(rc, send_flags, IBV_SEND_IP_CSUM);
	BAD_WR(rc, num_sge, 3);			/* max_send_sge 2 */
	BAD_WR(rc, num_sge, -1);
	BAD_WR(ud, opcode, IBV_WR_RDMA_WRITE);
	BAD_WR(ud, opcode, IBV_WR_RDMA_READ);
	BAD_WR(ud, wr.ud.ah, NULL);
	BAD_WR(ud, wr.ud.ah, ah2);		/* AH of another PD */
	/* atomics: one 8-byte SGE, aligned remote address */
	w[0] = send_wr(1, 0);
	w[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w[0].sg_list = &sg8;
	w[0].num_sge = 1;
	w[0].wr.atomic.remote_addr = 0x1004;
	CHECK_EQ(droce_post_send(rc, &w[0], &bad), EINVAL);
	w[0].wr.atomic.remote_addr = 0x1008;
	CHECK_EQ(droce_post_send(rc, &w[0], &bad), 0);
	/* inline: up to max_inline_data (64 in vt_qp), not for READ */
	w[0] = send_wr(2, IBV_SEND_INLINE);
	w[0].sg_list = &sgbig;
	w[0].num_sge = 1;
	CHECK_EQ(droce_post_send(rc, &w[0], &bad), EINVAL);
	sgbig.length = 64;
	big[63] = 'x';
	CHECK_EQ(droce_post_send(rc, &w[0], &bad), 0);
	w[0].opcode = IBV_WR_RDMA_READ;
	CHECK_EQ(droce_post_send(rc, &w[0], &bad), EINVAL);
	/* The inline bytes were copied: the WQE no longer needs the buffer. */
	CHECK(verbs_sq_next(rc) != NULL);
	{
		const struct verbs_send_wqe *wq = verbs_sq_next(rc);

		CHECK(wq != NULL && wq->num_sge == 0 && wq->length == 64);
		CHECK_EQ(((const char *)wq->sge)[63], 'x');
	}
	/* A chain stops at the first bad WR; those before it are posted. */
	w[0] = send_wr(10, 0);
	w[1] = send_wr(11, 0);
	w[2] = send_wr(12, 0);
	w[0].next = &w[1];
	w[1].next = &w[2];
	w[1].opcode = (enum ibv_wr_opcode)99;
	CHECK_EQ(droce_post_send(rc, &w[0], &bad), EINVAL);
	CHECK(bad == &w[1]);
	CHECK(verbs_sq_next(rc)->wr_id == 10);
	CHECK(verbs_sq_next(rc) == NULL);
	CHECK_EQ(droce_post_recv(rc, &r, &rbad), EINVAL);	/* max_recv_sge 2 */
	CHECK(rbad == &r);
	CHECK_EQ(droce_post_send(NULL, &w[0], &bad), EINVAL);
	CHECK_EQ(droce_post_send(rc, NULL, &bad), EINVAL);
	CHECK_EQ(droce_post_recv(NULL, &r, &rbad), EINVAL);
	CHECK_EQ(droce_destroy_qp(rc), 0);
	CHECK_EQ(droce_destroy_qp(ud), 0);
	CHECK_EQ(droce_dealloc_pd(pd2), EBUSY);
	CHECK_EQ(droce_destroy_ah(ah2), 0);
	CHECK_EQ(droce_dealloc_pd(pd2), 0);
	vt_drain(cq);
#undef BAD_WR
}

/* ENOMEM at the granted depth; unsignalled slots come back only with a signalled one. */
static void test_depth_and_signaling(void)
{
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 8);
	struct ibv_send_wr w = send_wr(0, 0), *bad;
	struct ibv_recv_wr r = { 0 }, *rbad;
	struct ibv_wc wc[16];
	int i;

	vt_walk(qp, IBV_QPS_RTS);
	for (i = 0; i < 8; i++) {
		w.wr_id = i;
		CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
		CHECK_EQ(droce_post_recv(qp, &r, &rbad), 0);
	}
	CHECK_EQ(droce_post_send(qp, &w, &bad), ENOMEM);
	CHECK(bad == &w);
	CHECK_EQ(droce_post_recv(qp, &r, &rbad), ENOMEM);
	for (i = 0; i < 8; i++)
		CHECK(verbs_sq_next(qp) != NULL);
	CHECK_EQ(verbs_sq_complete(qp, 8), 0);
	CHECK_EQ(droce_poll_cq(cq, 16, wc), 0);		/* unsignalled: no CQE */
	CHECK_EQ(droce_post_send(qp, &w, &bad), ENOMEM);	/* and no slot back yet */
	/* Reset, then 7 unsignalled + 1 signalled: one CQE frees all 8 slots. */
	vt_to(qp, IBV_QPS_RESET);
	vt_walk(qp, IBV_QPS_RTS);
	for (i = 0; i < 8; i++) {
		w = send_wr(100 + i, i == 7 ? IBV_SEND_SIGNALED : 0);
		CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
		CHECK(verbs_sq_next(qp) != NULL);
	}
	CHECK_EQ(verbs_sq_complete(qp, 7), 0);
	CHECK_EQ(droce_post_send(qp, &w, &bad), ENOMEM);
	CHECK_EQ(verbs_sq_complete(qp, 1), 0);
	CHECK_EQ(droce_poll_cq(cq, 16, wc), 1);
	CHECK_EQ(wc[0].wr_id, 107);
	for (i = 0; i < 8; i++)
		CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	/* sq_sig_all: every WR is signalled. */
	{
		struct droce_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .sq_sig_all = 1,
						 .qp_type = IBV_QPT_RC,
						 .cap = { .max_send_wr = 4 } };

		qp = droce_create_qp(pd, &ia);
		CHECK(qp != NULL);
		vt_walk(qp, IBV_QPS_RTS);
		w = send_wr(5, 0);
		CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
		CHECK(verbs_sq_next(qp) != NULL);
		CHECK_EQ(verbs_sq_complete(qp, 1), 0);
		CHECK_EQ(droce_poll_cq(cq, 16, wc), 1);
		CHECK_EQ(droce_destroy_qp(qp), 0);
	}
}

/* N outstanding WRs (some handed to the engine, some not) -> N flush CQEs, in order. */
static void test_flush(void)
{
	enum { N = 50 };
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 64);
	struct ibv_send_wr w, *bad;
	struct ibv_recv_wr r = { 0 }, *rbad;
	struct ibv_wc wc[2 * N + 1];
	int i, n;

	vt_walk(qp, IBV_QPS_RTS);
	for (i = 0; i < N; i++) {
		w = send_wr(i, i % 3 == 0 ? IBV_SEND_SIGNALED : 0);
		CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
		r.wr_id = 1000 + i;
		CHECK_EQ(droce_post_recv(qp, &r, &rbad), 0);
	}
	for (i = 0; i < 20; i++)
		CHECK(verbs_sq_next(qp) != NULL);
	CHECK_EQ(verbs_sq_complete(qp, 4), 0);	/* WRs 0..3 done: one CQE (WR 0 and 3) */
	CHECK(verbs_rq_next(qp) != NULL);
	vt_to(qp, IBV_QPS_ERR);
	n = droce_poll_cq(cq, 2 * N + 1, wc);
	CHECK_EQ(n, 2 + (N - 4) + N);
	CHECK(wc[0].wr_id == 0 && wc[1].wr_id == 3 && wc[1].status == IBV_WC_SUCCESS);
	for (i = 0; i < N - 4; i++) {
		CHECK_EQ(wc[2 + i].wr_id, 4 + i);
		CHECK_EQ(wc[2 + i].status, IBV_WC_WR_FLUSH_ERR);
		CHECK_EQ(wc[2 + i].qp_num, qp->qp_num);
	}
	for (i = 0; i < N; i++) {
		CHECK_EQ(wc[N - 2 + i].wr_id, 1000 + i);
		CHECK_EQ(wc[N - 2 + i].status, IBV_WC_WR_FLUSH_ERR);
		CHECK_EQ(wc[N - 2 + i].opcode, IBV_WC_RECV);
	}
	/* RESET empties without completions; the queues are whole again. */
	for (i = 0; i < 64; i++)
		CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	vt_to(qp, IBV_QPS_RESET);
	CHECK_EQ(droce_poll_cq(cq, 2 * N + 1, wc), 0);
	vt_walk(qp, IBV_QPS_RTS);
	for (i = 0; i < 64; i++)
		CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	CHECK_EQ(droce_post_send(qp, &w, &bad), ENOMEM);
	CHECK_EQ(droce_destroy_qp(qp), 0);
}

/* UD send error: the error CQE, SQE, the rest of the SQ flushed, receives keep working. */
static void test_sqe(void)
{
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_UD, cq, cq, 8);
	struct droce_qp *rc = vt_qp(pd, IBV_QPT_RC, cq, cq, 8);
	struct ibv_qp_attr a;
	struct droce_ah *ah;
	struct ibv_send_wr w = send_wr(1, IBV_SEND_SIGNALED), *bad;
	struct ibv_recv_wr r = { .wr_id = 9 }, *rbad;
	struct ibv_wc wc[8];

	vt_fill(&a);
	ah = droce_create_ah(pd, &a.ah_attr);
	CHECK(ah != NULL);
	w.wr.ud.ah = ah;
	vt_walk(qp, IBV_QPS_RTS);
	CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	w.wr_id = 2;
	CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	CHECK_EQ(droce_post_recv(qp, &r, &rbad), 0);
	CHECK(verbs_sq_next(qp) != NULL);
	CHECK_EQ(verbs_sq_complete_err(qp, IBV_WC_LOC_PROT_ERR, 7), 0);
	CHECK_EQ(qp->state, IBV_QPS_SQE);
	CHECK_EQ(droce_poll_cq(cq, 8, wc), 2);
	CHECK(wc[0].wr_id == 1 && wc[0].status == IBV_WC_LOC_PROT_ERR && wc[0].vendor_err == 7);
	CHECK(wc[1].wr_id == 2 && wc[1].status == IBV_WC_WR_FLUSH_ERR);
	CHECK(verbs_rq_next(qp) != NULL);	/* the receive side still runs in SQE */
	a.qp_state = IBV_QPS_RTS;		/* SQE -> RTS recovers (no attribute needed) */
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE), 0);
	/* RC: a send error is fatal to the QP. */
	vt_walk(rc, IBV_QPS_RTS);
	CHECK_EQ(droce_post_send(rc, &w, &bad), 0);
	CHECK(verbs_sq_next(rc) != NULL);
	CHECK_EQ(verbs_sq_complete_err(rc, IBV_WC_RETRY_EXC_ERR, 0), 0);
	CHECK_EQ(rc->state, IBV_QPS_ERR);
	CHECK_EQ(verbs_sq_complete_err(rc, IBV_WC_RETRY_EXC_ERR, 0), -EINVAL);
	vt_drain(cq);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_qp(rc), 0);
	CHECK_EQ(droce_destroy_ah(ah), 0);
}

/* SQD: new WRs wait; SQ_DRAINED when the WQEs in flight are done. */
static void test_sqd(void)
{
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 8);
	struct ibv_send_wr w = send_wr(1, IBV_SEND_SIGNALED), *bad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct droce_async_event ev;

	vt_walk(qp, IBV_QPS_RTS);
	CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	CHECK(verbs_sq_next(qp) != NULL);
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
	CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	CHECK(verbs_sq_next(qp) == NULL);	/* draining: nothing new starts */
	CHECK_EQ(verbs_sq_complete(qp, 1), 0);
	CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
	CHECK(ev.event_type == IBV_EVENT_SQ_DRAINED && ev.element.qp == qp);
	droce_ack_async_event(&ev);
	a.qp_state = IBV_QPS_RTS;
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE), 0);
	CHECK(verbs_sq_next(qp) != NULL);	/* resumes */
	vt_drain(cq);
	CHECK_EQ(droce_destroy_qp(qp), 0);
}

/* An owned QP: modify is applied by the owner's loop, not by the caller. */
static int stop_owner;

static void *owner_loop(void *arg)
{
	struct verbs_owner *o = arg;

	while (!__atomic_load_n(&stop_owner, __ATOMIC_ACQUIRE))
		verbs_owner_poll(o);
	return NULL;
}

static void test_owner(void)
{
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 8);
	struct verbs_owner o;
	pthread_t t;

	CHECK_EQ(verbs_owner_init(&o, "vt_owner"), 0);
	CHECK_EQ(verbs_qp_attach(qp, &o), 0);
	CHECK_EQ(verbs_qp_attach(qp, &o), -EBUSY);
	CHECK_EQ(pthread_create(&t, NULL, owner_loop, &o), 0);
	vt_walk(qp, IBV_QPS_RTS);
	CHECK_EQ(qp->state, IBV_QPS_RTS);
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQE };

		CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	}
	CHECK_EQ(droce_destroy_qp(qp), 0);	/* detaches through the owner */
	__atomic_store_n(&stop_owner, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	verbs_owner_fini(&o);
}

int main(void)
{
	ctx = vt_open(0);
	ctx1 = vt_open(1);
	pd = droce_alloc_pd(ctx);
	cq = droce_create_cq(ctx, 256, NULL, NULL, 0);
	CHECK(pd != NULL && cq != NULL);
	test_create();
	test_post_states();
	test_wr_checks();
	test_depth_and_signaling();
	test_flush();
	test_sqe();
	test_sqd();
	test_owner();
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	CHECK_EQ(droce_close_device(ctx1), 0);
	printf("qp_post_test: OK\n");
	return 0;
}
