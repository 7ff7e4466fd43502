/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The distance between the benchmark's core and the engine's: one cache line bounced between
 * this lcore and the engine's lcore, the round trip in nanoseconds. Every post and every
 * completion crosses between these two cores, so a run is only comparable with another whose
 * cores were as close. On a physical machine it shows an application lcore on the wrong
 * socket; on a VM it shows where the hypervisor placed the vCPUs, which can change while a
 * run goes (doc/performance.md, "The cores' distance").
 *
 * Measured while the engine's lcore is free: before the devices are opened and after they are
 * closed (the last close stops the engine's lcores).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "perf.h"

#define C2C_BLOCKS 9
#define C2C_TRIPS 2000
#define C2C_QUIET_S 1	/* a responder that sees nothing for this long gives up */

/* The bounced line: even values from this lcore, odd ones back; the stop value ends it. */
static uint64_t c2c_line[RTE_CACHE_LINE_SIZE / sizeof(uint64_t)] __rte_cache_aligned;
#define C2C_STOP UINT64_MAX

static int c2c_responder(void *arg)
{
	uint64_t hz = rte_get_tsc_hz(), last = rte_rdtsc(), seen = 0, v;

	(void)arg;
	for (;;) {
		v = __atomic_load_n(&c2c_line[0], __ATOMIC_ACQUIRE);
		if (v == C2C_STOP)
			return 0;
		if (v != seen && (v & 1) == 0) {
			seen = v + 1;
			__atomic_store_n(&c2c_line[0], seen, __ATOMIC_RELEASE);
			last = rte_rdtsc();
		} else if (rte_rdtsc() - last > C2C_QUIET_S * hz) {
			return -1;
		}
	}
}

/* The engine's first lcore when it runs on dedicated ones ("auto": the first worker). */
static unsigned int c2c_lcore(void)
{
	return droce_engine_is_inline() ? RTE_MAX_LCORE : rte_get_next_lcore(-1, 1, 0);
}

bool perf_c2c_engine_there(void)
{
	unsigned int l = c2c_lcore();

	return l < RTE_MAX_LCORE && rte_eal_get_lcore_state(l) == RUNNING;
}

double perf_c2c_measure(void)
{
	unsigned int l = c2c_lcore(), b, i;
	uint64_t hz = rte_get_tsc_hz(), blk[C2C_BLOCKS], v = 0, t0, limit;
	bool ok = true;

	if (l >= RTE_MAX_LCORE || rte_eal_get_lcore_state(l) != WAIT)
		return 0;	/* inline engine, no worker lcore, or the engine still holds it */
	__atomic_store_n(&c2c_line[0], 0, __ATOMIC_RELEASE);
	if (rte_eal_remote_launch(c2c_responder, NULL, l) != 0)
		return 0;
	limit = rte_rdtsc() + C2C_QUIET_S * hz;
	for (b = 0; b < C2C_BLOCKS && ok; b++) {
		t0 = rte_rdtsc();
		for (i = 0; i < C2C_TRIPS && ok; i++) {
			v += 2;
			__atomic_store_n(&c2c_line[0], v, __ATOMIC_RELEASE);
			while (__atomic_load_n(&c2c_line[0], __ATOMIC_ACQUIRE) != v + 1)
				if (rte_rdtsc() > limit) {
					ok = false;	/* the responder never started */
					break;
				}
		}
		blk[b] = rte_rdtsc() - t0;
		limit = rte_rdtsc() + C2C_QUIET_S * hz;
	}
	__atomic_store_n(&c2c_line[0], C2C_STOP, __ATOMIC_RELEASE);
	if (rte_eal_wait_lcore(l) != 0 || !ok)
		return 0;
	qsort(blk, C2C_BLOCKS, sizeof(blk[0]), perf_cmp_u64);
	return (double)blk[C2C_BLOCKS / 2] * 1e9 / (double)hz / C2C_TRIPS;
}
