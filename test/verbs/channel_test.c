/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Completion channels: req_notify (next / solicited-only), the fd with poll(),
 * droce_get_cq_event() blocking and with O_NONBLOCK, cq_context, ack, destroy_cq waiting for
 * the ack, EBUSY on a channel in use, bad arguments.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include "vt.h"

static struct droce_context *ctx;
static struct droce_pd *pd;

static void complete_one(struct droce_qp *qp, bool recv, bool solicited)
{
	struct ibv_send_wr w = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr r = { 0 }, *rbad;
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV };

	if (recv) {
		CHECK_EQ(droce_post_recv(qp, &r, &rbad), 0);
		CHECK(verbs_rq_next(qp) != NULL);
		CHECK_EQ(verbs_rq_complete(qp, &wc, solicited), 0);
	} else {
		CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
		CHECK(verbs_sq_next(qp) != NULL);
		CHECK_EQ(verbs_sq_complete(qp, 1), 0);
	}
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0);
}

static void set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	CHECK(fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK) == 0);
}

static void test_notify(void)
{
	struct droce_comp_channel *ch = droce_create_comp_channel(ctx);
	struct droce_cq *cq, *ev_cq;
	struct droce_qp *qp;
	void *ev_ctx;

	CHECK(ch != NULL && ch->fd >= 0);
	cq = droce_create_cq(ctx, 64, (void *)0xc0ffee, ch, 0);
	CHECK(cq != NULL);
	CHECK_EQ(droce_destroy_comp_channel(ch), EBUSY);
	qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 16);
	vt_walk(qp, IBV_QPS_RTS);
	set_nonblock(ch->fd, true);
	/* Not armed: no event. */
	complete_one(qp, false, false);
	CHECK_EQ(readable(ch->fd), 0);
	errno = 0;
	CHECK(droce_get_cq_event(ch, &ev_cq, &ev_ctx) == -1 && errno == EAGAIN);
	/* Armed for the next completion: exactly one event. */
	CHECK_EQ(droce_req_notify_cq(cq, 0), 0);
	complete_one(qp, false, false);
	complete_one(qp, false, false);
	CHECK_EQ(readable(ch->fd), 1);
	CHECK_EQ(droce_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	CHECK(ev_cq == cq && ev_ctx == (void *)0xc0ffee);
	CHECK(droce_get_cq_event(ch, &ev_cq, &ev_ctx) == -1 && errno == EAGAIN);
	droce_ack_cq_events(cq, 1);
	/* Solicited only: an unsolicited success does not fire, a solicited one does. */
	CHECK_EQ(droce_req_notify_cq(cq, 1), 0);
	complete_one(qp, true, false);
	complete_one(qp, false, false);
	CHECK_EQ(readable(ch->fd), 0);
	complete_one(qp, true, true);
	CHECK_EQ(readable(ch->fd), 1);
	CHECK_EQ(droce_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	droce_ack_cq_events(cq, 1);
	/* ... and an error completion fires it too (IBA 11.4.2.2). */
	CHECK_EQ(droce_req_notify_cq(cq, 1), 0);
	{
		struct ibv_send_wr w = { .opcode = IBV_WR_SEND }, *bad;

		CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
		CHECK(verbs_sq_next(qp) != NULL);
		CHECK_EQ(verbs_sq_complete_err(qp, IBV_WC_RETRY_EXC_ERR, 0), 0);
	}
	CHECK_EQ(droce_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	droce_ack_cq_events(cq, 1);
	CHECK(vt_drain(cq) > 0);
	CHECK_EQ(droce_req_notify_cq(NULL, 0), EINVAL);
	errno = 0;
	CHECK(droce_get_cq_event(NULL, &ev_cq, &ev_ctx) == -1 && errno == EINVAL);
	CHECK(droce_get_cq_event(ch, NULL, &ev_ctx) == -1);
	errno = 0;
	CHECK(droce_create_comp_channel(NULL) == NULL && errno == EINVAL);
	CHECK_EQ(droce_destroy_comp_channel(NULL), EINVAL);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_destroy_comp_channel(ch), 0);
}

struct blocker {
	struct droce_comp_channel *ch;
	struct droce_cq *got;
	int rc;
	int done;
};

static void *block_get(void *arg)
{
	struct blocker *b = arg;
	void *c;

	b->rc = droce_get_cq_event(b->ch, &b->got, &c);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct destroyer {
	struct droce_cq *cq;
	int done;
};

static void *destroy_it(void *arg)
{
	struct destroyer *d = arg;

	CHECK_EQ(droce_destroy_cq(d->cq), 0);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* get_cq_event blocks until an event; destroy_cq waits until it is acked. */
static void test_block_and_destroy_wait(void)
{
	struct droce_comp_channel *ch = droce_create_comp_channel(ctx);
	struct droce_cq *cq = droce_create_cq(ctx, 16, NULL, ch, 0);
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 16);
	struct blocker b = { .ch = ch };
	struct destroyer d = { .cq = cq };
	pthread_t t;

	vt_walk(qp, IBV_QPS_RTS);
	CHECK_EQ(pthread_create(&t, NULL, block_get, &b), 0);
	usleep(100 * 1000);
	CHECK_EQ(__atomic_load_n(&b.done, __ATOMIC_ACQUIRE), 0);	/* still blocked */
	CHECK_EQ(droce_req_notify_cq(cq, 0), 0);
	complete_one(qp, false, false);
	pthread_join(t, NULL);
	CHECK(b.rc == 0 && b.got == cq);
	vt_drain(cq);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(pthread_create(&t, NULL, destroy_it, &d), 0);
	usleep(100 * 1000);
	CHECK_EQ(__atomic_load_n(&d.done, __ATOMIC_ACQUIRE), 0);	/* waits for the ack */
	droce_ack_cq_events(cq, 1);
	pthread_join(t, NULL);
	CHECK_EQ(d.done, 1);
	CHECK_EQ(droce_destroy_comp_channel(ch), 0);
}

/* Unread events of a destroyed CQ are dropped; the channel goes on working. */
static void test_unread_dropped(void)
{
	struct droce_comp_channel *ch = droce_create_comp_channel(ctx);
	struct droce_cq *a = droce_create_cq(ctx, 16, NULL, ch, 0);
	struct droce_cq *b = droce_create_cq(ctx, 16, NULL, ch, 0);
	struct droce_qp *qa = vt_qp(pd, IBV_QPT_RC, a, a, 4);
	struct droce_qp *qb = vt_qp(pd, IBV_QPT_RC, b, b, 4);
	struct droce_cq *got;
	void *c;

	vt_walk(qa, IBV_QPS_RTS);
	vt_walk(qb, IBV_QPS_RTS);
	CHECK_EQ(droce_req_notify_cq(a, 0), 0);
	CHECK_EQ(droce_req_notify_cq(b, 0), 0);
	complete_one(qa, false, false);
	complete_one(qb, false, false);
	CHECK_EQ(droce_destroy_qp(qa), 0);
	CHECK_EQ(droce_destroy_cq(a), 0);	/* its unread event goes with it */
	set_nonblock(ch->fd, true);
	CHECK_EQ(droce_get_cq_event(ch, &got, &c), 0);
	CHECK(got == b);
	droce_ack_cq_events(b, 1);
	CHECK(droce_get_cq_event(ch, &got, &c) == -1 && errno == EAGAIN);
	CHECK_EQ(droce_destroy_qp(qb), 0);
	CHECK_EQ(droce_destroy_cq(b), 0);
	CHECK_EQ(droce_destroy_comp_channel(ch), 0);
}

int main(void)
{
	ctx = vt_open(0);
	pd = droce_alloc_pd(ctx);
	CHECK(pd != NULL);
	test_notify();
	test_block_and_destroy_wait();
	test_unread_dropped();
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	printf("channel_test: OK\n");
	return 0;
}
