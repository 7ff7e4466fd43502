/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The control mailbox (verbs_engine.h): one implementation for every "run this on the thread
 * that drives the data path, between two of its steps, and wait" in droce: QP control through
 * an owner (verbs_owner.c) and the engine's calls into an instance (lib/engine/engine_instance.c). A FIFO
 * under a mutex: control is rare and may block, and the consumer's idle check is one
 * load-acquire of @c pending. (rte_ring would do, but the distribution's DPDK builds it with
 * the non-C11 memory model, whose barriers ThreadSanitizer cannot see.)
 */
#include <sched.h>

#include "verbs_private.h"

void verbs_mbox_init(struct verbs_mbox *mb)
{
	mb->head = NULL;
	mb->tail = NULL;
	mb->pending = 0;
	mb->open = true;
	mb->driver = NULL;
	pthread_mutex_init(&mb->lock, NULL);
}

void verbs_mbox_fini(struct verbs_mbox *mb)
{
	pthread_mutex_destroy(&mb->lock);
}

void verbs_mbox_send(struct verbs_mbox *mb, struct verbs_mbox_msg *m)
{
	m->next = NULL;
	m->done = 0;
	pthread_mutex_lock(&mb->lock);
	if (mb->open) {
		if (mb->tail != NULL)
			mb->tail->next = m;
		else
			mb->head = m;
		mb->tail = m;
		/* Pairs with the load-acquire in verbs_mbox_poll(). */
		__atomic_store_n(&mb->pending, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&mb->lock);
		/* Pairs with the store-release of done in run(). */
		while (!__atomic_load_n(&m->done, __ATOMIC_ACQUIRE))
			sched_yield();
		return;
	}
	pthread_mutex_unlock(&mb->lock);
	/* Nobody polls: run it here, excluding whoever drives the data path (an inline engine
	 * iterates under the driver mutex; possibly this very thread, later). */
	if (mb->driver != NULL)
		pthread_mutex_lock(mb->driver);
	m->fn(m);
	if (mb->driver != NULL)
		pthread_mutex_unlock(mb->driver);
}

/* Run the list @p m, oldest first. */
static unsigned int run(struct verbs_mbox_msg *m)
{
	struct verbs_mbox_msg *next;
	unsigned int n = 0;

	for (; m != NULL; m = next, n++) {
		next = m->next;	/* m lives on the sender's stack: read before done */
		m->fn(m);
		/* Pairs with the load-acquire in verbs_mbox_send(). */
		__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
	}
	return n;
}

/* Caller holds mb->lock. */
static struct verbs_mbox_msg *take(struct verbs_mbox *mb)
{
	struct verbs_mbox_msg *m = mb->head;

	mb->head = NULL;
	mb->tail = NULL;
	__atomic_store_n(&mb->pending, 0, __ATOMIC_RELAXED);
	return m;
}

unsigned int verbs_mbox_poll(struct verbs_mbox *mb)
{
	struct verbs_mbox_msg *m;

	/* Pairs with the store-release in verbs_mbox_send(). */
	if (__atomic_load_n(&mb->pending, __ATOMIC_ACQUIRE) == 0)
		return 0;
	pthread_mutex_lock(&mb->lock);
	m = take(mb);
	pthread_mutex_unlock(&mb->lock);
	return run(m);
}

void verbs_mbox_open(struct verbs_mbox *mb)
{
	pthread_mutex_lock(&mb->lock);
	mb->open = true;
	pthread_mutex_unlock(&mb->lock);
}

unsigned int verbs_mbox_close(struct verbs_mbox *mb)
{
	unsigned int n;

	/* Under the lock: a sender either queued before (run here) or runs its own after. */
	pthread_mutex_lock(&mb->lock);
	mb->open = false;
	n = run(take(mb));
	pthread_mutex_unlock(&mb->lock);
	return n;
}
