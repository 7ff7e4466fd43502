/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Every error of droce_attach_mcast()/droce_detach_mcast() and the multicast limits, through
 * the public API only: shared by the verbs test (no engine) and the functional test (engine
 * inline and on an lcore), so both layers answer the same.
 */
#ifndef MCAST_ERRORS_H
#define MCAST_ERRORS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "droce.h"

#include "check.h"

/* ff0e::<n> (an IPv6 group) or ::ffff:239.1.<n> (an IPv4-mapped one). */
static inline union ibv_gid mcast_gid(bool v4, uint16_t n)
{
	union ibv_gid g;

	memset(&g, 0, sizeof(g));
	if (v4) {
		g.raw[10] = g.raw[11] = 0xff;
		g.raw[12] = 239;
		g.raw[13] = 1;
	} else {
		g.raw[0] = 0xff;
		g.raw[1] = 0x0e;
	}
	g.raw[14] = (uint8_t)(n >> 8);
	g.raw[15] = (uint8_t)n;
	return g;
}

static inline union ibv_gid mcast_v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	union ibv_gid g;

	memset(&g, 0, sizeof(g));
	g.raw[10] = g.raw[11] = 0xff;
	g.raw[12] = a;
	g.raw[13] = b;
	g.raw[14] = c;
	g.raw[15] = d;
	return g;
}

static inline struct droce_qp *mcast_qp(struct droce_pd *pd, struct droce_cq *cq,
					 enum ibv_qp_type t)
{
	struct droce_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = t,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct droce_qp *qp = droce_create_qp(pd, &a);

	CHECK(qp != NULL);
	return qp;
}

/* Non-UD QPs, NULLs, GIDs that are not groups, the idempotent attach, detach of a group the
 * QP is not in, the ignored LID, destroy while attached. */
static inline void mcast_check_args(struct droce_pd *pd, struct droce_cq *cq)
{
	struct droce_qp *rc = mcast_qp(pd, cq, IBV_QPT_RC), *uc = mcast_qp(pd, cq, IBV_QPT_UC);
	struct droce_qp *ud = mcast_qp(pd, cq, IBV_QPT_UD);
	union ibv_gid g4 = mcast_gid(true, 1), g6 = mcast_gid(false, 1), bad;
	static const union ibv_gid *none;
	const union ibv_gid good[] = { mcast_v4(224, 0, 0, 0), mcast_v4(239, 255, 255, 255),
				       mcast_gid(false, 0), g4, g6 };
	unsigned int i;

	CHECK_EQ(droce_attach_mcast(rc, &g4, 0), EINVAL);
	CHECK_EQ(droce_attach_mcast(uc, &g6, 0), EINVAL);
	CHECK_EQ(droce_detach_mcast(rc, &g4, 0), EINVAL);
	CHECK_EQ(droce_attach_mcast(NULL, &g4, 0), EINVAL);
	CHECK_EQ(droce_attach_mcast(ud, none, 0), EINVAL);
	CHECK_EQ(droce_detach_mcast(NULL, &g4, 0), EINVAL);
	CHECK_EQ(droce_detach_mcast(ud, none, 0), EINVAL);
	/* Not groups: unicast IPv4-mapped (also 223.255.255.255 and 240.0.0.1 around class D),
	 * unicast and link-local IPv6, the zero GID. */
	{
		const union ibv_gid unicast[] = { mcast_v4(10, 99, 0, 1),
			mcast_v4(223, 255, 255, 255), mcast_v4(240, 0, 0, 1) };

		for (i = 0; i < RTE_DIM(unicast); i++)
			CHECK_EQ(droce_attach_mcast(ud, &unicast[i], 0), EINVAL);
	}
	memset(&bad, 0, sizeof(bad));
	CHECK_EQ(droce_attach_mcast(ud, &bad, 0), EINVAL);
	bad.raw[0] = 0xfd;
	bad.raw[15] = 1;
	CHECK_EQ(droce_attach_mcast(ud, &bad, 0), EINVAL);
	bad.raw[0] = 0xfe;
	bad.raw[1] = 0x80;
	CHECK_EQ(droce_attach_mcast(ud, &bad, 0), EINVAL);
	CHECK_EQ(droce_detach_mcast(ud, &bad, 0), EINVAL);
	/* Groups: attach, a second attach changes nothing, one detach, a second one fails. */
	for (i = 0; i < RTE_DIM(good); i++) {
		CHECK_EQ(droce_detach_mcast(ud, &good[i], 0), EINVAL);	/* not attached */
		CHECK_EQ(droce_attach_mcast(ud, &good[i], 0), 0);
		CHECK_EQ(droce_attach_mcast(ud, &good[i], 0xc001), 0);
		CHECK_EQ(droce_detach_mcast(ud, &good[i], 0xc002), 0);	/* LID ignored */
		CHECK_EQ(droce_detach_mcast(ud, &good[i], 0), EINVAL);
	}
	/* A QP attached to a group cannot be destroyed (Linux: EBUSY). */
	CHECK_EQ(droce_attach_mcast(ud, &g4, 0), 0);
	CHECK_EQ(droce_attach_mcast(ud, &g6, 0), 0);
	CHECK_EQ(droce_destroy_qp(ud), EBUSY);
	CHECK_EQ(droce_detach_mcast(ud, &g4, 0), 0);
	CHECK_EQ(droce_destroy_qp(ud), EBUSY);
	CHECK_EQ(droce_detach_mcast(ud, &g6, 0), 0);
	CHECK_EQ(droce_destroy_qp(ud), 0);
	CHECK_EQ(droce_destroy_qp(rc), 0);
	CHECK_EQ(droce_destroy_qp(uc), 0);
}

/* The three limits droce_query_device() reports, each reached and then refused (ENOMEM). */
static inline void mcast_check_limits(struct droce_context *ctx, struct droce_pd *pd,
				      struct droce_cq *cq)
{
	struct ibv_device_attr da;
	struct droce_qp **qp;
	int grp, per, tot, i, j, nq;

	CHECK_EQ(droce_query_device(ctx, &da), 0);
	grp = da.max_mcast_grp;
	per = da.max_mcast_qp_attach;
	tot = da.max_total_mcast_qp_attach;
	CHECK(grp > 0 && per > 0 && tot > 0);
	CHECK(tot % per == 0 && tot / per < grp);	/* the total is reachable below grp */
	nq = per + 1;
	qp = calloc((size_t)nq, sizeof(*qp));
	CHECK(qp != NULL);
	for (i = 0; i < nq; i++)
		qp[i] = mcast_qp(pd, cq, IBV_QPT_UD);
	/* max_mcast_grp: one QP in grp groups, not one more (an attach it has still works). */
	for (j = 0; j < grp; j++) {
		union ibv_gid g = mcast_gid(j & 1, (uint16_t)j);

		CHECK_EQ(droce_attach_mcast(qp[0], &g, 0), 0);
	}
	{
		union ibv_gid g = mcast_gid(false, 0x7fff), g0 = mcast_gid(false, 0);

		CHECK_EQ(droce_attach_mcast(qp[1], &g, 0), ENOMEM);
		CHECK_EQ(droce_attach_mcast(qp[0], &g0, 0), 0);
	}
	for (j = 0; j < grp; j++) {
		union ibv_gid g = mcast_gid(j & 1, (uint16_t)j);

		CHECK_EQ(droce_detach_mcast(qp[0], &g, 0), 0);
	}
	/* max_mcast_qp_attach: per QPs in one group, not one more. */
	{
		union ibv_gid g = mcast_gid(true, 0x100);

		for (i = 0; i < per; i++)
			CHECK_EQ(droce_attach_mcast(qp[i], &g, 0), 0);
		CHECK_EQ(droce_attach_mcast(qp[per], &g, 0), ENOMEM);
		for (i = 0; i < per; i++)
			CHECK_EQ(droce_detach_mcast(qp[i], &g, 0), 0);
		CHECK_EQ(droce_detach_mcast(qp[per], &g, 0), EINVAL);
	}
	/* max_total_mcast_qp_attach: per QPs in tot / per groups, then a new group refused. */
	for (j = 0; j < tot / per; j++) {
		union ibv_gid g = mcast_gid(false, (uint16_t)(0x200 + j));

		for (i = 0; i < per; i++)
			CHECK_EQ(droce_attach_mcast(qp[i], &g, 0), 0);
	}
	{
		union ibv_gid g = mcast_gid(false, 0x300);

		CHECK_EQ(droce_attach_mcast(qp[per], &g, 0), ENOMEM);
	}
	for (j = 0; j < tot / per; j++) {
		union ibv_gid g = mcast_gid(false, (uint16_t)(0x200 + j));

		for (i = 0; i < per; i++)
			CHECK_EQ(droce_detach_mcast(qp[i], &g, 0), 0);
	}
	for (i = 0; i < nq; i++)
		CHECK_EQ(droce_destroy_qp(qp[i]), 0);
	free(qp);
	printf("mcast limits: %d groups, %d QPs per group, %d attachments; then ENOMEM\n", grp,
	       per, tot);
}

#endif
