/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * An application that initialised EAL itself (a storage daemon on DPDK or SPDK) keeps it:
 * droce finds EAL up, does not call rte_eal_init() again, and its devices work on the
 * application's EAL (same lcore set, same memory).
 */
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "vt.h"

int main(int argc, char **argv)
{
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_cq *cq;
	unsigned int lcores;
	void *mem;

	CHECK(rte_eal_init(argc, argv) >= 0);
	lcores = rte_lcore_count();
	mem = rte_malloc("app", 4096, 0);	/* the application's EAL memory */
	CHECK(mem != NULL);
	CHECK(!droce_owns_eal());
	ctx = vt_open(0);
	CHECK(!droce_owns_eal());
	CHECK_EQ(rte_lcore_count(), lcores);
	pd = droce_alloc_pd(ctx);
	CHECK(pd != NULL);
	cq = droce_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq != NULL);
	CHECK(rte_malloc_validate(mem, NULL) == 0);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	/* The application still owns EAL: a second init is refused, not repeated by droce. */
	CHECK(rte_eal_init(argc, argv) < 0);
	rte_free(mem);
	CHECK_EQ(rte_eal_cleanup(), 0);
	printf("eal_app_test: OK\n");
	return 0;
}
