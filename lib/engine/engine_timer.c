/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Transport timers: a binary min-heap of the QPs whose transport has an armed deadline
 * (retransmit, RNR wait, ACK coalescing), keyed by TSC. Each iteration looks at the root only,
 * so the cost with many QPs and nothing due is one comparison; arming, moving or cancelling a
 * deadline is O(log n). Each QP knows its heap slot (heap_idx). Owner instance only.
 */
#include <errno.h>
#include <stdlib.h>

#include <rte_malloc.h>

#include "engine_private.h"

#define NOT_IN_HEAP UINT32_MAX

int engine_timers_init(struct engine_timers *t, uint32_t cap)
{
	t->heap = rte_calloc("droce_engine_timers", cap, sizeof(*t->heap), 0);
	t->n = 0;
	t->cap = cap;
	return t->heap == NULL ? -ENOMEM : 0;
}

void engine_timers_free(struct engine_timers *t)
{
	rte_free(t->heap);
	t->heap = NULL;
	t->n = 0;
}

static void place(struct engine_timers *t, uint32_t i, struct engine_qp *eq)
{
	t->heap[i] = eq;
	eq->heap_idx = i;
}

static void sift_up(struct engine_timers *t, uint32_t i)
{
	struct engine_qp *eq = t->heap[i];

	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (t->heap[p]->deadline <= eq->deadline)
			break;
		place(t, i, t->heap[p]);
		i = p;
	}
	place(t, i, eq);
}

static void sift_down(struct engine_timers *t, uint32_t i)
{
	struct engine_qp *eq = t->heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= t->n)
			break;
		if (c + 1 < t->n && t->heap[c + 1]->deadline < t->heap[c]->deadline)
			c++;
		if (eq->deadline <= t->heap[c]->deadline)
			break;
		place(t, i, t->heap[c]);
		i = c;
	}
	place(t, i, eq);
}

static void remove_at(struct engine_timers *t, uint32_t i)
{
	struct engine_qp *last = t->heap[--t->n];

	t->heap[i]->heap_idx = NOT_IN_HEAP;
	if (i == t->n)
		return;
	place(t, i, last);
	sift_down(t, i);
	sift_up(t, last->heap_idx);
}

void engine_timers_set(struct engine_timers *t, struct engine_qp *eq, uint64_t deadline)
{
	uint64_t old = eq->deadline;

	if (deadline == old)
		return;
	eq->deadline = deadline;
	if (old == UINT64_MAX) {
		/* Not in the heap yet: the heap holds at most every QP, so there is room. */
		place(t, t->n++, eq);
		sift_up(t, eq->heap_idx);
	} else if (deadline == UINT64_MAX) {
		remove_at(t, eq->heap_idx);
	} else if (deadline < old) {
		sift_up(t, eq->heap_idx);
	} else {
		sift_down(t, eq->heap_idx);
	}
}

struct engine_qp *engine_timers_expired(const struct engine_timers *t, uint64_t now)
{
	if (t->n == 0 || t->heap[0]->deadline > now)
		return NULL;
	return t->heap[0];
}
