/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Async events. Each context has a FIFO of events (ev_lock) and an eventfd in semaphore mode
 * that counts them: a reader takes one token (read() blocks unless the application made the fd
 * O_NONBLOCK) and then pops one event, so several readers each get a different event and the
 * FIFO order is kept. poll()/epoll() on async_fd see it readable while events wait.
 *
 * Destroying an object drops its unread events (their tokens become stale: a reader that
 * takes one finds no event and takes the next token) and waits until every event already
 * returned for it is acked, as rdma-core does with its events_completed counters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_private.h"

int verbs_efd_take(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? 0 : -1;
}

void verbs_efd_give(int fd)
{
	uint64_t one = 1;

	/* Only fails when the counter would overflow 2^64-2: cannot happen. */
	if (write(fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		VERBS_LOG(ERR, "eventfd write failed: %s", strerror(errno));
}

int verbs_async_init(struct verbs_ctx *ctx)
{
	ctx->pub.async_fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ctx->pub.async_fd < 0)
		return errno;
	pthread_mutex_init(&ctx->ev_lock, NULL);
	pthread_cond_init(&ctx->ev_cond, NULL);
	TAILQ_INIT(&ctx->events);
	return 0;
}

void verbs_async_fini(struct verbs_ctx *ctx)
{
	struct verbs_async_item *it;

	while ((it = TAILQ_FIRST(&ctx->events)) != NULL) {
		TAILQ_REMOVE(&ctx->events, it, next);
		free(it);
	}
	close(ctx->pub.async_fd);
	pthread_mutex_destroy(&ctx->ev_lock);
	pthread_cond_destroy(&ctx->ev_cond);
}

/* The object an event names, and its counters; NULL for port/device events. */
static struct verbs_evcnt *evcnt_of(const struct droce_async_event *ev, const void **obj)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		*obj = ev->element.cq;
		return &to_vcq(ev->element.cq)->async;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		*obj = ev->element.qp;
		return &to_vqp(ev->element.qp)->async;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		*obj = ev->element.srq;
		return &to_vsrq(ev->element.srq)->async;
	default:
		*obj = NULL;
		return NULL;
	}
}

void verbs_async_raise(struct droce_context *c, const struct droce_async_event *ev)
{
	struct verbs_ctx *ctx = to_vctx(c);
	struct verbs_async_item *it = malloc(sizeof(*it));

	if (it == NULL) {
		VERBS_LOG(ERR, "out of memory: async event %s lost",
			  droce_event_type_str(ev->event_type));
		return;
	}
	it->ev = *ev;
	pthread_mutex_lock(&ctx->ev_lock);
	TAILQ_INSERT_TAIL(&ctx->events, it, next);
	pthread_mutex_unlock(&ctx->ev_lock);
	verbs_efd_give(c->async_fd);
}

int droce_get_async_event(struct droce_context *context, struct droce_async_event *event)
{
	struct verbs_ctx *ctx;
	struct verbs_async_item *it;
	struct verbs_evcnt *cnt;
	const void *obj;

	if (context == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	ctx = to_vctx(context);
	for (;;) {
		if (verbs_efd_take(context->async_fd) < 0)
			return -1;
		pthread_mutex_lock(&ctx->ev_lock);
		it = TAILQ_FIRST(&ctx->events);
		if (it != NULL)
			break;
		pthread_mutex_unlock(&ctx->ev_lock);	/* stale token */
	}
	TAILQ_REMOVE(&ctx->events, it, next);
	cnt = evcnt_of(&it->ev, &obj);
	if (cnt != NULL)
		cnt->delivered++;
	pthread_mutex_unlock(&ctx->ev_lock);
	*event = it->ev;
	free(it);
	return 0;
}

static struct droce_context *event_ctx(const struct droce_async_event *ev, const void *obj)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ((const struct droce_cq *)obj)->context;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ((const struct droce_srq *)obj)->context;
	default:
		return ((const struct droce_qp *)obj)->context;
	}
}

void droce_ack_async_event(struct droce_async_event *event)
{
	struct verbs_evcnt *cnt;
	struct verbs_ctx *ctx;
	const void *obj;

	if (event == NULL)
		return;
	cnt = evcnt_of(event, &obj);
	if (cnt == NULL)
		return;
	ctx = to_vctx(event_ctx(event, obj));
	pthread_mutex_lock(&ctx->ev_lock);
	cnt->acked++;
	pthread_cond_broadcast(&ctx->ev_cond);
	pthread_mutex_unlock(&ctx->ev_lock);
}

void verbs_async_forget(struct droce_context *c, const void *obj, struct verbs_evcnt *cnt)
{
	struct verbs_ctx *ctx = to_vctx(c);
	struct verbs_async_item *it, *nx;
	const void *o;

	pthread_mutex_lock(&ctx->ev_lock);
	for (it = TAILQ_FIRST(&ctx->events); it != NULL; it = nx) {
		nx = TAILQ_NEXT(it, next);
		if (evcnt_of(&it->ev, &o) != NULL && o == obj) {
			TAILQ_REMOVE(&ctx->events, it, next);
			free(it);
		}
	}
	while (cnt->acked != cnt->delivered)
		pthread_cond_wait(&ctx->ev_cond, &ctx->ev_lock);
	pthread_mutex_unlock(&ctx->ev_lock);
}

void verbs_device_event(struct droce_device *dev, enum ibv_event_type event)
{
	struct droce_async_event ev = { .element.port_num = 1, .event_type = event };
	struct verbs_ctx *ctx;

	pthread_mutex_lock(&dev->lock);
	TAILQ_FOREACH(ctx, &dev->contexts, next)
		verbs_async_raise(&ctx->pub, &ev);
	pthread_mutex_unlock(&dev->lock);
}

void verbs_qp_event(struct droce_qp *qp, enum ibv_event_type event)
{
	struct droce_async_event ev = { .element.qp = qp, .event_type = event };

	verbs_async_raise(qp->context, &ev);
}

void verbs_srq_event(struct droce_srq *srq, enum ibv_event_type event)
{
	struct droce_async_event ev = { .element.srq = srq, .event_type = event };

	if (event == IBV_EVENT_SRQ_ERR)
		__atomic_store_n(&to_vsrq(srq)->error, 1, __ATOMIC_RELEASE);
	verbs_async_raise(srq->context, &ev);
}
