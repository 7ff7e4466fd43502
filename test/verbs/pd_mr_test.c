/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* PD and MR: good paths, EBUSY, access flag rules, key uniqueness and randomness. */
#include "vt.h"

#define NMR 512

static struct droce_device *mr_dev;

static void test_pd(struct droce_context *ctx)
{
	struct droce_pd *pd = droce_alloc_pd(ctx);
	static char buf[64];
	struct droce_mr *mr;

	CHECK(pd != NULL);
	errno = 0;
	CHECK(droce_alloc_pd(NULL) == NULL && errno == EINVAL);
	CHECK_EQ(droce_dealloc_pd(NULL), EINVAL);
	mr = droce_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	CHECK_EQ(droce_dealloc_pd(pd), EBUSY);
	CHECK_EQ(droce_dereg_mr(mr), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
}

static void test_access(struct droce_pd *pd)
{
	static const struct { int access; int err; } cases[] = {
		{ 0, 0 },
		{ IBV_ACCESS_LOCAL_WRITE, 0 },
		{ IBV_ACCESS_REMOTE_READ, 0 },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0 },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, 0 },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC, 0 },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING, 0 },
		{ IBV_ACCESS_REMOTE_WRITE, EINVAL },	/* needs LOCAL_WRITE */
		{ IBV_ACCESS_REMOTE_ATOMIC, EINVAL },
		{ IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, EINVAL },
		{ IBV_ACCESS_MW_BIND, EOPNOTSUPP },
		{ IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE, EOPNOTSUPP },
		{ IBV_ACCESS_ZERO_BASED, EOPNOTSUPP },
		{ 1 << 19, EINVAL },	/* unknown, outside the optional range */
	};
	static char buf[4096];
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		struct droce_mr *mr;

		errno = 0;
		mr = droce_reg_mr(pd, buf, sizeof(buf), cases[i].access);
		if (cases[i].err == 0) {
			CHECK(mr != NULL);
			CHECK(mr->addr == buf && mr->length == sizeof(buf) && mr->pd == pd);
			CHECK(verbs_mr_lookup(mr_dev, mr->lkey, false) == mr);
			CHECK(verbs_mr_lookup(mr_dev, mr->rkey, true) == mr);
			CHECK_EQ(droce_dereg_mr(mr), 0);
		} else {
			CHECK(mr == NULL);
			CHECK_EQ(errno, cases[i].err);
		}
	}
	errno = 0;
	CHECK(droce_reg_mr(NULL, buf, 1, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(droce_reg_mr(pd, NULL, 1, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(droce_reg_mr(pd, buf, 0, 0) == NULL && errno == EINVAL);
	CHECK_EQ(droce_dereg_mr(NULL), EINVAL);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Keys unique among live MRs; the non-index bits vary (not a counter). */
static void test_keys(struct droce_pd *pd)
{
	static char buf[NMR];
	static struct droce_mr *mr[NMR];
	static uint32_t keys[2 * NMR];
	uint32_t hi_or = 0, hi_and = ~0u, stale;
	int i;

	for (i = 0; i < NMR; i++) {
		mr[i] = droce_reg_mr(pd, &buf[i], 1, IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_WRITE);
		CHECK(mr[i] != NULL);
		keys[2 * i] = mr[i]->lkey;
		keys[2 * i + 1] = mr[i]->rkey;
		hi_or |= mr[i]->rkey >> DROCE_MR_INDEX_BITS;
		hi_and &= mr[i]->rkey >> DROCE_MR_INDEX_BITS;
	}
	qsort(keys, 2 * NMR, sizeof(keys[0]), cmp_u32);
	for (i = 1; i < 2 * NMR; i++)
		CHECK(keys[i] != keys[i - 1]);
	CHECK(hi_or == (1u << (32 - DROCE_MR_INDEX_BITS)) - 1 && hi_and == 0);
	/* A deregistered key no longer resolves. */
	stale = mr[0]->rkey;
	CHECK_EQ(droce_dereg_mr(mr[0]), 0);
	CHECK(verbs_mr_lookup(mr_dev, stale, true) == NULL);
	for (i = 1; i < NMR; i++)
		CHECK_EQ(droce_dereg_mr(mr[i]), 0);
}

int main(void)
{
	struct droce_context *ctx = vt_open(0);
	struct droce_pd *pd;

	mr_dev = ctx->device;
	test_pd(ctx);
	pd = droce_alloc_pd(ctx);
	CHECK(pd != NULL);
	test_access(pd);
	test_keys(pd);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	printf("pd_mr_test: OK\n");
	return 0;
}
