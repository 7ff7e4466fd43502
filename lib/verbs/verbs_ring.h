/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * Index ring shared by the application side and the engine side of a queue.
 *
 * A ring is @c size slots (a power of two) and two free-running 32-bit indices:
 * - @c head: written only by the producer side, after the slot contents are written
 *   (store-release, verbs_ring_publish()); read by the consumer side with load-acquire
 *   (verbs_ring_ready()), so the slot contents are visible before the index that covers them.
 * - @c tail: written only by the consumer side when it no longer reads slots before it
 *   (store-release, verbs_ring_retire()); read by the producer side with load-acquire
 *   (verbs_ring_room()), so a slot is never overwritten while the consumer still reads it.
 *
 * There is one producer and one consumer at a time. Several threads on one side serialise on a
 * lock that belongs to that side only (the producer lock of an SQ/RQ/SRQ is taken by
 * application threads, never by the engine; the producer lock of a CQ is taken by engine
 * lcores, never by pollers), so neither side ever waits for the other.
 */
#ifndef VERBS_RING_H
#define VERBS_RING_H

#include <stdint.h>

#include <rte_common.h>
#include <rte_pause.h>

struct verbs_ring {
	uint32_t head __rte_cache_aligned;	/**< producer side writes */
	uint32_t tail __rte_cache_aligned;	/**< consumer side writes */
	uint32_t size __rte_cache_aligned;	/**< slots, a power of two */
	uint32_t mask;
};

static inline void verbs_ring_init(struct verbs_ring *r, uint32_t size)
{
	r->head = 0;
	r->tail = 0;
	r->size = size;
	r->mask = size - 1;
}

/** Producer side: free slots. @p head is the producer's own (private) head. */
static inline uint32_t verbs_ring_room(const struct verbs_ring *r, uint32_t head)
{
	/* Pairs with the store-release of tail in verbs_ring_retire(). */
	uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

	return r->size - (head - tail);
}

/** Producer side: make the slots up to @p head visible to the consumer. */
static inline void verbs_ring_publish(struct verbs_ring *r, uint32_t head)
{
	/* Pairs with the load-acquire of head in verbs_ring_ready(). */
	__atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
}

/** Consumer side: slots filled from @p pos on. */
static inline uint32_t verbs_ring_ready(const struct verbs_ring *r, uint32_t pos)
{
	/* Pairs with the store-release of head in verbs_ring_publish(). */
	uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

	return head - pos;
}

/** Consumer side: give the slots before @p tail back to the producer. */
static inline void verbs_ring_retire(struct verbs_ring *r, uint32_t tail)
{
	/* Pairs with the load-acquire of tail in verbs_ring_room(). */
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
}

/** Producer side's own view of head (only the producer side writes it). */
static inline uint32_t verbs_ring_head(const struct verbs_ring *r)
{
	return __atomic_load_n(&r->head, __ATOMIC_RELAXED);
}

/** Consumer side's own view of tail (only the consumer side writes it). */
static inline uint32_t verbs_ring_tail(const struct verbs_ring *r)
{
	return __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
}

/**
 * A side lock: serialises the threads of one side of a ring (application producers of an
 * SQ/RQ/SRQ, application pollers of a CQ, engine producers of a CQ, engine consumers of an
 * SRQ). Test-and-test-and-set on C11 atomics, so its ordering is visible to ThreadSanitizer
 * (rte_spinlock on x86 is inline assembly).
 */
typedef struct {
	uint32_t locked;
} verbs_lock_t;

static inline void verbs_lock_init(verbs_lock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELAXED);
}

static inline void verbs_lock(verbs_lock_t *l)
{
	/* Pairs with the store-release in verbs_unlock() of the previous holder. */
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) != 0)
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED) != 0)
			rte_pause();
}

static inline void verbs_unlock(verbs_lock_t *l)
{
	/* Pairs with the acquire exchange in verbs_lock(). */
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

static inline uint32_t verbs_pow2_ceil(uint32_t v)
{
	return v <= 1 ? 1 : (uint32_t)1 << (32 - __builtin_clz(v - 1));
}

#endif /* VERBS_RING_H */
