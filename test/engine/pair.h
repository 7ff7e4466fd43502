/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* Helpers for the tests over the ring pair droce0 <-> droce1 (pair_inline.ini, pair_lcore.ini):
 * droce starts EAL itself; the engine runs inline or on lcore 1. Public API only (the
 * functional tests use it too). */
#ifndef PAIR_H
#define PAIR_H

#include <sched.h>
#include <stdbool.h>

#include <rte_cycles.h>

#include "check.h"
#include "droce.h"
#include "droce_engine.h"

static struct droce_context *pair_ctx[2];
static bool pair_inline;

static inline void pair_open(void)
{
	struct droce_device **list;
	int n, i;

	list = droce_get_device_list(&n);
	CHECK(list != NULL && n == 2);
	for (i = 0; i < 2; i++) {
		pair_ctx[i] = droce_open_device(list[i]);
		CHECK(pair_ctx[i] != NULL);
	}
	droce_free_device_list(list);
	pair_inline = droce_engine_is_inline();
}

/* Let the engine run a little: poll it inline, or yield to the lcore. */
static inline void pair_step(void)
{
	if (pair_inline)
		CHECK(droce_engine_poll(pair_ctx[0]) >= 0);
	else
		sched_yield();
}

static inline uint64_t pair_deadline(double s)
{
	return rte_get_tsc_cycles() + (uint64_t)(s * (double)rte_get_tsc_hz());
}

#endif
