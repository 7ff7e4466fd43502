/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Completion channels. A channel is an eventfd in semaphore mode plus a FIFO of the CQs that
 * have unread events (channel->lock). The engine side adds an event when an armed CQ fires
 * (verbs_cq.c notify()); droce_get_cq_event() takes one token from the eventfd (blocking unless the
 * application set O_NONBLOCK on channel->fd) and pops one event. Destroying a CQ drops its
 * unread events (their tokens go stale and are skipped) and waits for the acks of the events
 * already returned.
 *
 * While a thread spins for events (droce_comp_channel_watch()), an event's token is handed over
 * in memory (ch->tokens) instead: the spinner sees it with a load and takes it with a
 * compare-and-swap, where the eventfd costs a write, a poll and a read. Each token is claimed
 * once, by a waiter or, when nobody watches any more, by whoever moves it to the eventfd:
 * the signaller adds a token, then looks for watchers; a watcher that stops subtracts itself,
 * then moves what is left. In the one order of these sequentially consistent operations,
 * either the signaller sees the watcher or the watcher sees the token. ch->fd_tokens counts the
 * tokens in the eventfd (added before the write, removed after the read), so that a watcher
 * learns without a system call that an event waits there.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_private.h"

struct droce_comp_channel *droce_create_comp_channel(struct droce_context *context)
{
	struct verbs_channel *ch;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->pub.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ch->pub.fd < 0) {
		int e = errno;

		free(ch);
		errno = e;
		return NULL;
	}
	ch->pub.context = context;
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->cond, NULL);
	TAILQ_INIT(&ch->pending);
	verbs_ctx_get(context);
	return &ch->pub;
}

int droce_destroy_comp_channel(struct droce_comp_channel *channel)
{
	struct verbs_channel *ch;

	if (channel == NULL)
		return EINVAL;
	if (__atomic_load_n(&channel->refcnt, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	ch = to_vchan(channel);
	close(channel->fd);
	pthread_mutex_destroy(&ch->lock);
	pthread_cond_destroy(&ch->cond);
	verbs_ctx_put(channel->context);
	free(ch);
	return 0;
}

/* Take one token handed over in memory. @return true if there was one. */
static bool token_claim(struct verbs_channel *ch)
{
	uint32_t t = __atomic_load_n(&ch->tokens, __ATOMIC_SEQ_CST);

	while (t != 0)
		if (__atomic_compare_exchange_n(&ch->tokens, &t, t - 1, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return true;
	return false;
}

/* Nobody watches: the tokens still in memory go to the eventfd. */
static void tokens_to_fd(struct verbs_channel *ch)
{
	while (__atomic_load_n(&ch->watchers, __ATOMIC_SEQ_CST) == 0 && token_claim(ch)) {
		__atomic_add_fetch(&ch->fd_tokens, 1, __ATOMIC_RELEASE);
		verbs_efd_give(ch->pub.fd);
	}
}

void verbs_channel_signal(struct verbs_cq *cq)
{
	struct verbs_channel *ch = to_vchan(cq->pub.channel);

	pthread_mutex_lock(&ch->lock);
	if (cq->comp_pending++ == 0)
		TAILQ_INSERT_TAIL(&ch->pending, cq, chan_next);
	pthread_mutex_unlock(&ch->lock);
	__atomic_add_fetch(&ch->tokens, 1, __ATOMIC_SEQ_CST);
	tokens_to_fd(ch);
}

int droce_comp_channel_watch(struct droce_comp_channel *channel, int on)
{
	struct verbs_channel *ch;
	uint32_t w;

	if (channel == NULL)
		return EINVAL;
	ch = to_vchan(channel);
	if (on) {
		__atomic_add_fetch(&ch->watchers, 1, __ATOMIC_SEQ_CST);
		return 0;
	}
	w = __atomic_load_n(&ch->watchers, __ATOMIC_SEQ_CST);
	do {
		if (w == 0)
			return EINVAL;	/* not watched */
	} while (!__atomic_compare_exchange_n(&ch->watchers, &w, w - 1, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_SEQ_CST));
	tokens_to_fd(ch);
	return 0;
}

/* Pop the oldest event, with a token already taken. @return false if the token was stale. */
static bool channel_pop(struct verbs_channel *ch, struct droce_cq **cq, void **cq_context)
{
	struct verbs_cq *c;

	pthread_mutex_lock(&ch->lock);
	c = TAILQ_FIRST(&ch->pending);
	if (c == NULL) {
		pthread_mutex_unlock(&ch->lock);	/* stale token */
		return false;
	}
	TAILQ_REMOVE(&ch->pending, c, chan_next);
	if (--c->comp_pending != 0)
		TAILQ_INSERT_TAIL(&ch->pending, c, chan_next);
	c->comp.delivered++;
	pthread_mutex_unlock(&ch->lock);
	*cq = &c->pub;
	*cq_context = c->pub.cq_context;
	return true;
}

int droce_get_cq_event(struct droce_comp_channel *channel, struct droce_cq **cq,
		       void **cq_context)
{
	struct verbs_channel *ch;

	if (channel == NULL || cq == NULL || cq_context == NULL) {
		errno = EINVAL;
		return -1;
	}
	ch = to_vchan(channel);
	do {
		if (!token_claim(ch)) {
			if (verbs_efd_take(channel->fd) < 0)
				return -1;
			__atomic_sub_fetch(&ch->fd_tokens, 1, __ATOMIC_RELEASE);
		}
	} while (!channel_pop(ch, cq, cq_context));
	return 0;
}

int droce_comp_channel_take(struct droce_comp_channel *channel, struct droce_cq **cq,
			    void **cq_context)
{
	struct verbs_channel *ch;

	if (channel == NULL || cq == NULL || cq_context == NULL)
		return EINVAL;
	ch = to_vchan(channel);
	while (token_claim(ch))
		if (channel_pop(ch, cq, cq_context))
			return 0;
	return __atomic_load_n(&ch->fd_tokens, __ATOMIC_ACQUIRE) != 0 ? ENOMSG : EAGAIN;
}

void droce_ack_cq_events(struct droce_cq *c, unsigned int nevents)
{
	struct verbs_channel *ch;
	struct verbs_cq *cq;

	if (c == NULL || c->channel == NULL || nevents == 0)
		return;
	cq = to_vcq(c);
	ch = to_vchan(c->channel);
	pthread_mutex_lock(&ch->lock);
	cq->comp.acked += nevents;
	pthread_cond_broadcast(&ch->cond);
	pthread_mutex_unlock(&ch->lock);
}

void verbs_channel_forget(struct verbs_cq *cq)
{
	struct verbs_channel *ch = to_vchan(cq->pub.channel);

	pthread_mutex_lock(&ch->lock);
	if (cq->comp_pending != 0) {
		TAILQ_REMOVE(&ch->pending, cq, chan_next);
		cq->comp_pending = 0;
	}
	while ((int32_t)(cq->comp.delivered - cq->comp.acked) > 0)
		pthread_cond_wait(&ch->cond, &ch->lock);
	pthread_mutex_unlock(&ch->lock);
}
