/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce_attach_mcast()/droce_detach_mcast() at the verbs layer (no engine): every bad input,
 * the idempotent attach, detach of a group not attached, destroy of an attached QP (EBUSY),
 * the limits droce_query_device() reports, and the groups of one device independent of
 * another's.
 */
#include "vt.h"

#include "mcast_errors.h"

/* Groups are per device: droce1's QP attaches what droce0's QPs fill up. */
static void per_device(struct droce_context *ctx0, struct droce_pd *pd0, struct droce_cq *cq0)
{
	struct droce_context *ctx1 = vt_open(1);
	struct droce_pd *pd1 = droce_alloc_pd(ctx1);
	struct droce_cq *cq1 = droce_create_cq(ctx1, 16, NULL, NULL, 0);
	union ibv_gid g = mcast_gid(true, 7);
	struct droce_qp *a, *b;

	CHECK(pd1 != NULL && cq1 != NULL);
	a = mcast_qp(pd0, cq0, IBV_QPT_UD);
	b = mcast_qp(pd1, cq1, IBV_QPT_UD);
	CHECK_EQ(droce_attach_mcast(a, &g, 0), 0);
	CHECK_EQ(droce_detach_mcast(b, &g, 0), EINVAL);	/* b's device has no such group */
	CHECK_EQ(droce_attach_mcast(b, &g, 0), 0);
	CHECK_EQ(droce_detach_mcast(a, &g, 0), 0);
	CHECK_EQ(droce_detach_mcast(a, &g, 0), EINVAL);
	CHECK_EQ(droce_detach_mcast(b, &g, 0), 0);
	CHECK_EQ(droce_destroy_qp(a), 0);
	CHECK_EQ(droce_destroy_qp(b), 0);
	CHECK_EQ(droce_destroy_cq(cq1), 0);
	CHECK_EQ(droce_dealloc_pd(pd1), 0);
	CHECK_EQ(droce_close_device(ctx1), 0);
	RTE_SET_USED(ctx0);
}

int main(void)
{
	struct droce_context *ctx = vt_open(0);
	struct droce_pd *pd = droce_alloc_pd(ctx);
	struct droce_cq *cq = droce_create_cq(ctx, 64, NULL, NULL, 0);

	CHECK(pd != NULL && cq != NULL);
	mcast_check_args(pd, cq);
	mcast_check_limits(ctx, pd, cq);
	per_device(ctx, pd, cq);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	printf("mcast_test: OK\n");
	return 0;
}
