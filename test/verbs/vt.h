/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* Helpers shared by the verbs tests: checks, a device, QPs walked through their states. */
#ifndef VT_H
#define VT_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce.h"
#include <rte_common.h>

#include "verbs_engine.h"

#define VT_SKIP 77

#include "check.h"
#include "qp_attr.h"

/* Open device @p idx of the configuration (the embedded default has two). */
static inline struct droce_context *vt_open(int idx)
{
	struct droce_device **list;
	struct droce_context *ctx;
	int n = 0;

	list = droce_get_device_list(&n);
	CHECK(list != NULL);
	CHECK(n > idx);
	ctx = droce_open_device(list[idx]);
	CHECK(ctx != NULL);
	droce_free_device_list(list);
	return ctx;
}

static inline struct droce_qp *vt_qp(struct droce_pd *pd, enum ibv_qp_type t,
				     struct droce_cq *scq, struct droce_cq *rcq, uint32_t depth)
{
	struct droce_qp_init_attr a = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = t,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
	};
	struct droce_qp *qp = droce_create_qp(pd, &a);

	CHECK(qp != NULL);
	return qp;
}

/* The minimal attributes of each forward transition. */
static inline void vt_fill(struct ibv_qp_attr *a)
{
	test_qp_attr_fill(a);
}

static inline int vt_req_mask(enum ibv_qp_type t, enum ibv_qp_state to)
{
	switch (to) {
	case IBV_QPS_INIT:
		return IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       (t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	case IBV_QPS_RTR:
		if (t == IBV_QPT_UD)
			return 0;
		return IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       (t == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0);
	case IBV_QPS_RTS:
		return IBV_QP_SQ_PSN | (t == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0);
	default:
		return 0;
	}
}

static inline void vt_to(struct droce_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a;

	vt_fill(&a);
	a.qp_state = st;
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | vt_req_mask(qp->qp_type, st)), 0);
}

/* RESET -> ... -> @p st along the ordinary path (SQE: via a send error, UC/UD only). */
static inline void vt_walk(struct droce_qp *qp, enum ibv_qp_state st)
{
	static const enum ibv_qp_state path[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	unsigned int i;

	if (st == IBV_QPS_RESET)
		return;
	if (st == IBV_QPS_ERR) {
		vt_to(qp, IBV_QPS_INIT);
		vt_to(qp, IBV_QPS_ERR);
		return;
	}
	for (i = 0; i < 3; i++) {
		vt_to(qp, path[i]);
		if (path[i] == st)
			return;
	}
	if (st == IBV_QPS_SQD) {
		vt_to(qp, IBV_QPS_SQD);
		return;
	}
	/* SQE: a send that fails (UC/UD). */
	{
		struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND }, *bad;
		struct droce_ah *ah = NULL;
		struct ibv_qp_attr a;

		if (qp->qp_type == IBV_QPT_UD) {
			vt_fill(&a);
			ah = droce_create_ah(qp->pd, &a.ah_attr);
			CHECK(ah != NULL);
			wr.wr.ud.ah = ah;
		}
		CHECK_EQ(droce_post_send(qp, &wr, &bad), 0);
		if (ah != NULL)
			CHECK_EQ(droce_destroy_ah(ah), 0);
		CHECK(verbs_sq_next(qp) != NULL);
		verbs_sq_complete_err(qp, IBV_WC_LOC_LEN_ERR, 0);
		CHECK_EQ(qp->state, IBV_QPS_SQE);
	}
}

static inline int vt_drain(struct droce_cq *cq)
{
	struct ibv_wc wc[16];
	int n, total = 0;

	while ((n = droce_poll_cq(cq, 16, wc)) > 0)
		total += n;
	return total;
}

#endif
