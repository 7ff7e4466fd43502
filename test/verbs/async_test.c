/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Async events: every event type droce raises, with the right element; async_fd blocking and
 * O_NONBLOCK (EAGAIN), poll(); FIFO order; several reader threads each get each event once;
 * destroying an object waits until its delivered events are acked.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include "vt.h"

static struct droce_context *ctx;
static struct droce_pd *pd;
static struct droce_cq *cq;

static void test_types_and_order(void)
{
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 4);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct droce_srq *srq = droce_create_srq(pd, &sa);
	static const enum ibv_event_type qp_ev[] = {
		IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_ACCESS_ERR,
		IBV_EVENT_COMM_EST, IBV_EVENT_SQ_DRAINED, IBV_EVENT_PATH_MIG_ERR,
		IBV_EVENT_QP_LAST_WQE_REACHED,
	};
	static const enum ibv_event_type dev_ev[] = {
		IBV_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ERR, IBV_EVENT_GID_CHANGE,
		IBV_EVENT_DEVICE_FATAL,
	};
	struct droce_async_event ev;
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	unsigned int i;

	CHECK(srq != NULL);
	CHECK_EQ(poll(&p, 1, 0), 0);
	for (i = 0; i < RTE_DIM(qp_ev); i++)
		verbs_qp_event(qp, qp_ev[i]);
	verbs_srq_event(srq, IBV_EVENT_SRQ_LIMIT_REACHED);
	for (i = 0; i < RTE_DIM(dev_ev); i++)
		verbs_device_event(ctx->device, dev_ev[i]);
	verbs_srq_event(srq, IBV_EVENT_SRQ_ERR);
	CHECK_EQ(poll(&p, 1, 0), 1);
	for (i = 0; i < RTE_DIM(qp_ev); i++) {
		CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
		CHECK(ev.event_type == qp_ev[i] && ev.element.qp == qp);
		droce_ack_async_event(&ev);
	}
	CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
	CHECK(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq);
	droce_ack_async_event(&ev);
	for (i = 0; i < RTE_DIM(dev_ev); i++) {
		CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
		CHECK(ev.event_type == dev_ev[i] && ev.element.port_num == 1);
		droce_ack_async_event(&ev);
	}
	CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
	CHECK(ev.event_type == IBV_EVENT_SRQ_ERR && ev.element.srq == srq);
	droce_ack_async_event(&ev);
	/* SRQ_ERR puts the SRQ in error: posting fails. */
	{
		struct ibv_recv_wr r = { 0 }, *bad;

		CHECK_EQ(droce_post_srq_recv(srq, &r, &bad), EINVAL);
	}
	CHECK_EQ(poll(&p, 1, 0), 0);
	/* Non-blocking after O_NONBLOCK. */
	CHECK(fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK) == 0);
	errno = 0;
	CHECK(droce_get_async_event(ctx, &ev) == -1 && errno == EAGAIN);
	CHECK(fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) & ~O_NONBLOCK) == 0);
	errno = 0;
	CHECK(droce_get_async_event(NULL, &ev) == -1 && errno == EINVAL);
	CHECK(droce_get_async_event(ctx, NULL) == -1);
	droce_ack_async_event(NULL);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_srq(srq), 0);
}

enum { READERS = 4, EVENTS = 20000 };

struct reader {
	pthread_t t;
	unsigned long count;
};

static struct droce_qp *many_qp;
static void *reader(void *arg)
{
	struct reader *r = arg;
	struct droce_async_event ev;

	for (;;) {
		CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)	/* stop marker */
			return NULL;
		CHECK(ev.element.qp == many_qp);
		r->count++;
		droce_ack_async_event(&ev);
	}
}

static void test_readers(void)
{
	struct reader rd[READERS];
	unsigned long total = 0;
	unsigned int i;

	memset(rd, 0, sizeof(rd));
	many_qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 4);
	for (i = 0; i < READERS; i++)
		CHECK_EQ(pthread_create(&rd[i].t, NULL, reader, &rd[i]), 0);
	for (i = 0; i < EVENTS; i++)
		verbs_qp_event(many_qp, IBV_EVENT_COMM_EST);
	for (i = 0; i < READERS; i++)
		verbs_device_event(ctx->device, IBV_EVENT_DEVICE_FATAL);
	for (i = 0; i < READERS; i++) {
		pthread_join(rd[i].t, NULL);
		total += rd[i].count;
	}
	CHECK_EQ(total, EVENTS);	/* each once, none lost */
	CHECK_EQ(droce_destroy_qp(many_qp), 0);
}

struct destroyer {
	struct droce_qp *qp;
	int done;
};

static void *destroy_it(void *arg)
{
	struct destroyer *d = arg;

	CHECK_EQ(droce_destroy_qp(d->qp), 0);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_destroy_waits(void)
{
	struct destroyer d = { .qp = vt_qp(pd, IBV_QPT_UD, cq, cq, 4) };
	struct droce_async_event ev;
	pthread_t t;

	verbs_qp_event(d.qp, IBV_EVENT_COMM_EST);
	verbs_qp_event(d.qp, IBV_EVENT_QP_FATAL);	/* never read: dropped at destroy */
	CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
	CHECK_EQ(pthread_create(&t, NULL, destroy_it, &d), 0);
	usleep(100 * 1000);
	CHECK_EQ(__atomic_load_n(&d.done, __ATOMIC_ACQUIRE), 0);
	droce_ack_async_event(&ev);
	pthread_join(t, NULL);
	CHECK_EQ(d.done, 1);
	CHECK(fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK) == 0);
	CHECK(droce_get_async_event(ctx, &ev) == -1 && errno == EAGAIN);
}

int main(void)
{
	ctx = vt_open(0);
	pd = droce_alloc_pd(ctx);
	cq = droce_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(pd != NULL && cq != NULL);
	test_types_and_order();
	test_readers();
	test_destroy_waits();
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	printf("async_test: OK\n");
	return 0;
}
