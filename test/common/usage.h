/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * What a running droce holds of DPDK's memory, for the churn tests that check nothing grows:
 * the mbufs in use in droce0's pool and the bytes allocated on DPDK's heap (rte_malloc), all
 * sockets. Each test adds its own measure of the C heap.
 */
#ifndef DROCE_TEST_USAGE_H
#define DROCE_TEST_USAGE_H

#include <stddef.h>

#include <rte_malloc.h>
#include <rte_mempool.h>

#include "check.h"

struct test_usage {
	size_t mbufs, rte_heap;
};

static inline struct test_usage test_usage_now(void)
{
	struct rte_mempool *mp = rte_mempool_lookup("drc_pool0");
	struct rte_malloc_socket_stats st;
	struct test_usage u = { 0, 0 };
	unsigned int s;

	CHECK(mp != NULL);
	u.mbufs = rte_mempool_in_use_count(mp);
	for (s = 0; s < RTE_MAX_NUMA_NODES; s++)
		if (rte_malloc_get_socket_stats((int)s, &st) == 0)
			u.rte_heap += st.heap_allocsz_bytes;
	return u;
}

#endif /* DROCE_TEST_USAGE_H */
