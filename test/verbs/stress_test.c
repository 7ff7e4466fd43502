/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Multi-threaded rings: SEND_THREADS application threads post sends to one QP, one posts
 * receives, a stand-in engine thread owns the QP (consumes WQEs, completes them, applies
 * control requests), POLL_THREADS threads poll the shared CQ. Every wr_id must come back
 * exactly once: nothing lost, nothing duplicated. At the end the QP is moved to ERR while WRs
 * are still outstanding (applied by the owner), and the flush completions are counted too.
 */
#include <pthread.h>
#include <sched.h>

#include "vt.h"

enum {
	SEND_THREADS = 3,
	POLL_THREADS = 2,
	PER_SENDER = 600000,
	RECVS = 600000,
	ID_BITS = 20,
	TOTAL = SEND_THREADS * PER_SENDER + RECVS,
};

static struct droce_qp *qp;
static struct droce_cq *cq;
static uint8_t seen[(SEND_THREADS + 1) << ID_BITS];
static uint64_t polled;
static int stop_engine, stop_pollers, producers_left = SEND_THREADS + 1;

static void *sender(void *arg)
{
	uint64_t t = (uintptr_t)arg, i;
	struct ibv_send_wr w = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	for (i = 0; i < PER_SENDER; i++) {
		w.wr_id = (t << ID_BITS) | i;
		while (droce_post_send(qp, &w, &bad) == ENOMEM)
			sched_yield();
	}
	__atomic_fetch_sub(&producers_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *receiver(void *arg)
{
	struct ibv_recv_wr r = { 0 }, *bad;
	uint64_t i;

	RTE_SET_USED(arg);
	for (i = 0; i < RECVS; i++) {
		r.wr_id = ((uint64_t)SEND_THREADS << ID_BITS) | i;
		while (droce_post_recv(qp, &r, &bad) == ENOMEM)
			sched_yield();
	}
	__atomic_fetch_sub(&producers_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool qp_gone;	/* engine thread only */

static void on_detach(struct verbs_owner *o, struct droce_qp *q)
{
	RTE_SET_USED(o);
	CHECK(q == qp);
	qp_gone = true;
}

static void *engine(void *arg)
{
	struct verbs_owner *o = arg;
	struct ibv_wc in = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .byte_len = 1 };

	while (!__atomic_load_n(&stop_engine, __ATOMIC_ACQUIRE)) {
		unsigned int n = 0, busy = verbs_owner_poll(o);

		if (qp_gone) {
			sched_yield();
			continue;
		}

		while (n < 32 && verbs_sq_next(qp) != NULL)
			n++;
		if (n > 0)
			CHECK_EQ(verbs_sq_complete(qp, n), 0);
		busy += n;
		for (n = 0; n < 32 && verbs_rq_next(qp) != NULL; n++)
			CHECK_EQ(verbs_rq_complete(qp, &in, false), 0);
		busy += n;
		if (busy == 0)
			sched_yield();
	}
	return NULL;
}

static void *poller(void *arg)
{
	struct ibv_wc wc[32];
	int i, n;

	RTE_SET_USED(arg);
	while (!__atomic_load_n(&stop_pollers, __ATOMIC_ACQUIRE)) {
		n = droce_poll_cq(cq, 32, wc);
		CHECK(n >= 0);
		for (i = 0; i < n; i++) {
			CHECK(wc[i].wr_id < sizeof(seen));
			CHECK(wc[i].status == IBV_WC_SUCCESS || wc[i].status == IBV_WC_WR_FLUSH_ERR);
			/* a duplicate would find its byte already set */
			CHECK_EQ(__atomic_exchange_n(&seen[wc[i].wr_id], 1, __ATOMIC_RELAXED), 0);
		}
		__atomic_fetch_add(&polled, (uint64_t)n, __ATOMIC_RELEASE);
		if (n == 0)
			sched_yield();
	}
	return NULL;
}

int main(void)
{
	struct droce_context *ctx = vt_open(0);
	struct droce_pd *pd = droce_alloc_pd(ctx);
	pthread_t snd[SEND_THREADS], rcv, eng, pol[POLL_THREADS];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct verbs_owner o;
	uint64_t i, expect;

	cq = droce_create_cq(ctx, DROCE_MAX_CQE, NULL, NULL, 0);
	CHECK(pd != NULL && cq != NULL);
	qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 1024);
	vt_walk(qp, IBV_QPS_RTS);
	CHECK_EQ(verbs_owner_init(&o, "stress_owner"), 0);
	o.detached = on_detach;
	CHECK_EQ(verbs_qp_attach(qp, &o), 0);
	CHECK_EQ(pthread_create(&eng, NULL, engine, &o), 0);
	for (i = 0; i < POLL_THREADS; i++)
		CHECK_EQ(pthread_create(&pol[i], NULL, poller, NULL), 0);
	for (i = 0; i < SEND_THREADS; i++)
		CHECK_EQ(pthread_create(&snd[i], NULL, sender, (void *)(uintptr_t)i), 0);
	CHECK_EQ(pthread_create(&rcv, NULL, receiver, NULL), 0);
	/* Once most WRs are through, move the QP to ERR under load: the owner applies it. */
	while (__atomic_load_n(&polled, __ATOMIC_ACQUIRE) < TOTAL * 9 / 10)
		sched_yield();
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE), 0);
	for (i = 0; i < SEND_THREADS; i++)
		pthread_join(snd[i], NULL);
	pthread_join(rcv, NULL);
	/* WRs posted after the switch to ERR are flushed by the engine loop. */
	expect = TOTAL;
	while (__atomic_load_n(&polled, __ATOMIC_ACQUIRE) < expect)
		sched_yield();
	__atomic_store_n(&stop_pollers, 1, __ATOMIC_RELEASE);
	for (i = 0; i < POLL_THREADS; i++)
		pthread_join(pol[i], NULL);
	CHECK_EQ(polled, expect);
	CHECK_EQ(vt_drain(cq), 0);
	for (i = 0; i < SEND_THREADS; i++) {
		uint64_t j;

		for (j = 0; j < PER_SENDER; j++)
			CHECK_EQ(seen[(i << ID_BITS) | j], 1);
	}
	for (i = 0; i < RECVS; i++)
		CHECK_EQ(seen[((uint64_t)SEND_THREADS << ID_BITS) | i], 1);
	CHECK_EQ(qp->state, IBV_QPS_ERR);
	CHECK_EQ(droce_destroy_qp(qp), 0);	/* detached by the running owner first */
	__atomic_store_n(&stop_engine, 1, __ATOMIC_RELEASE);
	pthread_join(eng, NULL);
	verbs_owner_fini(&o);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	printf("stress_test: %d completions, each once\n", TOTAL);
	return 0;
}
