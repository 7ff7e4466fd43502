/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* PD and MR: good paths, EBUSY, access flag rules, key uniqueness and randomness, iova
 * registration and the translation of posted SGEs, re-registration. */
#include "vt.h"
#include "verbs_private.h"

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
		{ IBV_ACCESS_MW_BIND, 0 },
		{ IBV_ACCESS_HUGETLB, EOPNOTSUPP },
		{ IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE, EOPNOTSUPP },
		{ IBV_ACCESS_ZERO_BASED, 0 },
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

/* ibv_reg_mr_iova2(3): the keys name the MR by its iova; bad iovas; SGEs translated at post. */
static void test_iova(struct droce_pd *pd)
{
	static char buf[3 * 4096];
	uintptr_t off = (uintptr_t)&buf[100] & 4095;
	uint64_t iova = 0x7e0000000000ull + off;
	struct droce_mr *mr, *plain, *zb;
	struct ibv_sge sge[6];

	mr = droce_reg_mr_iova2(pd, &buf[100], 8192, iova, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	CHECK(mr->addr == &buf[100] && mr->length == 8192);
	CHECK_EQ(verbs_mr_iova(mr), iova);
	CHECK_EQ(verbs_n_iova_mr, 1);
	zb = droce_reg_mr(pd, &buf[100], 64, IBV_ACCESS_ZERO_BASED);
	CHECK(zb != NULL);
	CHECK_EQ(verbs_mr_iova(zb), off);
	CHECK_EQ(verbs_n_iova_mr, 2);
	plain = droce_reg_mr(pd, buf, sizeof(buf), 0);
	CHECK(plain != NULL);
	CHECK_EQ(verbs_mr_iova(plain), (uintptr_t)buf);
	/* Bad: another offset in the page, a range that wraps, the usual NULLs. */
	errno = 0;
	CHECK(droce_reg_mr_iova2(pd, &buf[100], 64, iova + 1, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(droce_reg_mr_iova2(pd, &buf[100], 8192, UINT64_MAX - 4095 + off, 0) == NULL &&
	      errno == EINVAL);
	errno = 0;
	CHECK(droce_reg_mr_iova2(NULL, &buf[100], 64, iova, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(droce_reg_mr_iova2(pd, &buf[100], 64, iova, IBV_ACCESS_ON_DEMAND) == NULL &&
	      errno == EOPNOTSUPP);
	/* Posted SGEs: into the MR by its iova -> its memory; outside its iova range (the
	 * process address included) -> 0, which the engine refuses; other keys untouched. */
	sge[0] = (struct ibv_sge){ iova + 10, 20, mr->lkey };
	sge[1] = (struct ibv_sge){ iova + 8192 - 4, 4, mr->lkey };
	sge[2] = (struct ibv_sge){ iova + 8192 - 4, 5, mr->lkey };
	sge[3] = (struct ibv_sge){ (uintptr_t)&buf[100], 4, mr->lkey };
	sge[4] = (struct ibv_sge){ (uintptr_t)&buf[7], 4, plain->lkey };
	sge[5] = (struct ibv_sge){ 5, 4, zb->lkey };
	verbs_sge_iova(mr_dev, sge, 6);
	CHECK(sge[0].addr == (uintptr_t)&buf[110]);
	CHECK(sge[1].addr == (uintptr_t)&buf[100 + 8192 - 4]);
	CHECK_EQ(sge[2].addr, 0);
	CHECK_EQ(sge[3].addr, 0);
	CHECK(sge[4].addr == (uintptr_t)&buf[7]);
	CHECK_EQ(sge[5].addr, 0);	/* below the zero-based MR's first byte (off >= 5) */
	CHECK(off >= 5);
	CHECK_EQ(droce_dereg_mr(mr), 0);
	CHECK_EQ(droce_dereg_mr(zb), 0);
	CHECK_EQ(verbs_n_iova_mr, 0);
	CHECK_EQ(droce_dereg_mr(plain), 0);
}

/* ibv_rereg_mr(3): each kind of change, new keys every time, the MR untouched by a failure. */
static void test_rereg(struct droce_context *ctx, struct droce_pd *pd)
{
	static char buf[8192];
	struct droce_pd *pd2 = droce_alloc_pd(ctx);
	struct droce_mr *mr = droce_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	uint32_t lkey, rkey;

	CHECK(pd2 != NULL && mr != NULL);
	lkey = mr->lkey;
	rkey = mr->rkey;
	/* Failures leave it as it was. */
	CHECK_EQ(droce_rereg_mr(NULL, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0), EINVAL);
	CHECK_EQ(droce_rereg_mr(mr, 8, NULL, NULL, 0, 0), EINVAL);
	CHECK_EQ(droce_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0), EINVAL);
	CHECK_EQ(droce_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 64, 0), EINVAL);
	CHECK_EQ(droce_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf, 0, 0), EINVAL);
	CHECK_EQ(droce_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				IBV_ACCESS_REMOTE_WRITE), EINVAL);
	CHECK_EQ(droce_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				IBV_ACCESS_HUGETLB), EOPNOTSUPP);
	CHECK_EQ(droce_rereg_mr(mr, 0, NULL, NULL, 0, 0), 0);
	CHECK(mr->lkey == lkey && mr->rkey == rkey && mr->addr == buf && mr->pd == pd);
	CHECK(verbs_mr_lookup(mr_dev, rkey, true) == mr);
	/* Access: new keys; the old ones name nothing. */
	CHECK_EQ(droce_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), 0);
	CHECK_EQ(verbs_mr_access(mr), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr->lkey != lkey && mr->rkey != rkey);
	CHECK(verbs_mr_lookup(mr_dev, rkey, true) == NULL);
	CHECK(verbs_mr_lookup(mr_dev, lkey, false) == NULL);
	CHECK(verbs_mr_lookup(mr_dev, mr->rkey, true) == mr);
	CHECK(verbs_mr_lookup(mr_dev, mr->lkey, false) == mr);
	/* Translation: the new range, its iova the new address. */
	CHECK_EQ(droce_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, &buf[4096], 2048, 0),
		 0);
	CHECK(mr->addr == &buf[4096] && mr->length == 2048);
	CHECK_EQ(verbs_mr_iova(mr), (uintptr_t)&buf[4096]);
	CHECK(verbs_mr_remote_mem(mr_dev, pd, NULL, mr->rkey, (uintptr_t)&buf[4096 + 2000], 48,
				  IBV_ACCESS_REMOTE_WRITE) == (uint8_t *)&buf[4096 + 2000]);
	CHECK(verbs_mr_remote_mem(mr_dev, pd, NULL, mr->rkey, (uintptr_t)buf, 8,
				  IBV_ACCESS_REMOTE_WRITE) == NULL);
	/* PD: the MR holds the new one, not the old. */
	CHECK_EQ(droce_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	CHECK(mr->pd == pd2);
	CHECK_EQ(droce_dealloc_pd(pd2), EBUSY);
	CHECK(verbs_mr_remote_mem(mr_dev, pd, NULL, mr->rkey, (uintptr_t)&buf[4096], 8,
				  IBV_ACCESS_REMOTE_WRITE) == NULL);
	CHECK_EQ(droce_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, 0), 0);
	CHECK_EQ(droce_dealloc_pd(pd2), 0);
	CHECK_EQ(droce_dereg_mr(mr), 0);
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
	/* Bit 31 is a window's (verbs_mw.c): clear in every MR key, the bits below it random. */
	CHECK(hi_or == (1u << (31 - DROCE_MR_INDEX_BITS)) - 1 && hi_and == 0);
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
	test_iova(pd);
	test_rereg(ctx, pd);
	test_keys(pd);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	printf("pd_mr_test: OK\n");
	return 0;
}
