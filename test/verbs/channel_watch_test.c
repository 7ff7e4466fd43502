/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A watched completion channel (droce_comp_channel_watch()): events reach a watcher in memory
 * and not through the fd; droce_comp_channel_take() and droce_get_cq_event() take them; the
 * events left when the last watcher stops move to the fd, and take() then says so (ENOMSG)
 * until they are read; a token whose CQ was destroyed is skipped. Then a race: a waiter that alternately spins (watching, for a random number of
 * takes) and blocks in droce_get_cq_event(), against a completer that completes as soon as
 * the CQ is armed: every event is got exactly once (a lost one hangs the test, a second one
 * shows as a readable fd or a token at the end). Bad input: NULL arguments, stopping a
 * channel nobody watches.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "vt.h"

#define RACE_EVENTS 5000

static struct droce_context *ctx;
static struct droce_pd *pd;

static void complete_one(struct droce_qp *qp)
{
	struct ibv_send_wr w = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	CHECK(verbs_sq_next(qp) != NULL);
	CHECK_EQ(verbs_sq_complete(qp, 1), 0);
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0);
}

static void test_watch_take_move(void)
{
	struct droce_comp_channel *ch = droce_create_comp_channel(ctx);
	struct droce_cq *a = droce_create_cq(ctx, 16, (void *)0xa, ch, 0);
	struct droce_cq *b = droce_create_cq(ctx, 16, (void *)0xb, ch, 0);
	struct droce_qp *qa = vt_qp(pd, IBV_QPT_RC, a, a, 16);
	struct droce_qp *qb = vt_qp(pd, IBV_QPT_RC, b, b, 16);
	struct droce_cq *got;
	void *c;

	CHECK(ch != NULL && a != NULL && b != NULL);
	vt_walk(qa, IBV_QPS_RTS);
	vt_walk(qb, IBV_QPS_RTS);
	CHECK_EQ(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);

	/* Watched: the event waits in memory, the fd stays quiet. */
	CHECK_EQ(droce_comp_channel_watch(ch, 1), 0);
	CHECK_EQ(droce_comp_channel_take(ch, &got, &c), EAGAIN);
	CHECK_EQ(droce_req_notify_cq(a, 0), 0);
	complete_one(qa);
	CHECK_EQ(readable(ch->fd), 0);
	CHECK_EQ(droce_comp_channel_take(ch, &got, &c), 0);
	CHECK(got == a && c == (void *)0xa);
	CHECK_EQ(droce_comp_channel_take(ch, &got, &c), EAGAIN);
	droce_ack_cq_events(a, 1);

	/* droce_get_cq_event() takes a watched event too. */
	CHECK_EQ(droce_req_notify_cq(b, 0), 0);
	complete_one(qb);
	CHECK_EQ(droce_get_cq_event(ch, &got, &c), 0);
	CHECK(got == b && c == (void *)0xb);
	droce_ack_cq_events(b, 1);

	/* Two watchers, two events: one taken; the other moves to the fd only when the last
	 * watcher stops. */
	CHECK_EQ(droce_comp_channel_watch(ch, 1), 0);
	CHECK_EQ(droce_req_notify_cq(a, 0), 0);
	CHECK_EQ(droce_req_notify_cq(b, 0), 0);
	complete_one(qa);
	complete_one(qb);
	CHECK_EQ(droce_comp_channel_take(ch, &got, &c), 0);
	CHECK(got == a);
	CHECK_EQ(droce_comp_channel_watch(ch, 0), 0);
	CHECK_EQ(readable(ch->fd), 0);
	CHECK_EQ(droce_comp_channel_watch(ch, 0), 0);
	CHECK_EQ(readable(ch->fd), 1);
	CHECK_EQ(droce_comp_channel_take(ch, &got, &c), ENOMSG);	/* in the fd now */
	CHECK_EQ(droce_get_cq_event(ch, &got, &c), 0);
	CHECK(got == b);
	CHECK_EQ(droce_comp_channel_take(ch, &got, &c), EAGAIN);	/* read from the fd */
	CHECK(droce_get_cq_event(ch, &got, &c) == -1 && errno == EAGAIN);
	droce_ack_cq_events(a, 1);
	droce_ack_cq_events(b, 1);

	/* A token whose CQ is destroyed before it is taken is skipped. */
	CHECK_EQ(droce_comp_channel_watch(ch, 1), 0);
	CHECK_EQ(droce_req_notify_cq(a, 0), 0);
	complete_one(qa);
	CHECK_EQ(droce_destroy_qp(qa), 0);
	CHECK_EQ(droce_destroy_cq(a), 0);
	CHECK_EQ(droce_comp_channel_take(ch, &got, &c), EAGAIN);
	CHECK_EQ(droce_comp_channel_watch(ch, 0), 0);
	CHECK_EQ(readable(ch->fd), 0);

	/* Bad input. */
	CHECK_EQ(droce_comp_channel_watch(ch, 0), EINVAL);	/* nobody watches */
	CHECK_EQ(droce_comp_channel_watch(NULL, 1), EINVAL);
	CHECK_EQ(droce_comp_channel_take(NULL, &got, &c), EINVAL);
	CHECK_EQ(droce_comp_channel_take(ch, NULL, &c), EINVAL);
	CHECK_EQ(droce_comp_channel_take(ch, &got, NULL), EINVAL);

	vt_drain(b);
	CHECK_EQ(droce_destroy_qp(qb), 0);
	CHECK_EQ(droce_destroy_cq(b), 0);
	CHECK_EQ(droce_destroy_comp_channel(ch), 0);
}

struct race {
	struct droce_comp_channel *ch;
	struct droce_cq *cq;
	uint32_t armed;		/* the waiter's arm count: the completer completes once per arm */
	unsigned int spun, blocked;
};

static void *race_waiter(void *arg)
{
	struct race *r = arg;
	unsigned int seed = 1, i, n, spins;
	struct droce_cq *got;
	void *c;
	bool ok;

	for (i = 0; i < RACE_EVENTS; i++) {
		CHECK_EQ(droce_req_notify_cq(r->cq, 0), 0);
		__atomic_store_n(&r->armed, i + 1, __ATOMIC_RELEASE);
		/* 0 to 63 takes (0: straight to blocking), every 16th time until it comes */
		spins = i % 16 == 0 ? UINT_MAX : (unsigned int)rand_r(&seed) % 64;
		ok = false;
		CHECK_EQ(droce_comp_channel_watch(r->ch, 1), 0);
		for (n = 0; n < spins && !ok; n++)
			ok = droce_comp_channel_take(r->ch, &got, &c) == 0;
		CHECK_EQ(droce_comp_channel_watch(r->ch, 0), 0);
		if (ok) {
			r->spun++;
		} else {
			CHECK_EQ(droce_get_cq_event(r->ch, &got, &c), 0);
			r->blocked++;
		}
		CHECK(got == r->cq);
		droce_ack_cq_events(got, 1);
		vt_drain(r->cq);
	}
	return NULL;
}

static void test_watch_race(void)
{
	struct race r = { .ch = droce_create_comp_channel(ctx) };
	struct droce_qp *qp;
	struct droce_cq *got;
	pthread_t t;
	uint32_t i;
	void *c;

	r.cq = droce_create_cq(ctx, 64, NULL, r.ch, 0);
	qp = vt_qp(pd, IBV_QPT_RC, r.cq, r.cq, 16);
	vt_walk(qp, IBV_QPS_RTS);
	CHECK_EQ(pthread_create(&t, NULL, race_waiter, &r), 0);
	for (i = 1; i <= RACE_EVENTS; i++) {
		while (__atomic_load_n(&r.armed, __ATOMIC_ACQUIRE) < i)
			;
		complete_one(qp);
	}
	pthread_join(t, NULL);
	printf("channel_watch: %u events taken spinning, %u blocking\n", r.spun, r.blocked);
	CHECK(r.spun >= RACE_EVENTS / 16 && r.blocked > 0);	/* both ways were taken */
	CHECK_EQ(readable(r.ch->fd), 0);	/* no event twice */
	CHECK_EQ(droce_comp_channel_watch(r.ch, 1), 0);
	CHECK_EQ(droce_comp_channel_take(r.ch, &got, &c), EAGAIN);
	CHECK_EQ(droce_comp_channel_watch(r.ch, 0), 0);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_cq(r.cq), 0);
	CHECK_EQ(droce_destroy_comp_channel(r.ch), 0);
}

int main(void)
{
	ctx = vt_open(0);
	pd = droce_alloc_pd(ctx);
	CHECK(pd != NULL);
	test_watch_take_move();
	test_watch_race();
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	printf("channel_watch_test: OK\n");
	return 0;
}
