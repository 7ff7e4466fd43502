/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* Counter names and descriptions, from the lists in droce_counters.h; a QP's own counters and
 * state for observability. */

#include <stddef.h>

#include <rte_common.h>

#include "droce_counters.h"
#include "transport_private.h"

static const struct {
	const char *name;
	const char *desc;
} counters[] = {
#define COUNTER_NAME_DESC(n, disposition, d) { .name = #n, .desc = d },
	DROCE_COUNTERS(COUNTER_NAME_DESC)
#undef COUNTER_NAME_DESC
};

const char *droce_counter_name(unsigned int i)
{
	/* Readers index the struct by name order: its fields are these, then parse_err[]. */
	RTE_BUILD_BUG_ON(offsetof(struct droce_counters, parse_err) !=
			 RTE_DIM(counters) * sizeof(uint64_t));
	return i < RTE_DIM(counters) ? counters[i].name : NULL;
}

const char *transport_counter_desc(unsigned int i)
{
	return i < RTE_DIM(counters) ? counters[i].desc : NULL;
}

struct droce_counters *transport_qp_counters(struct transport_qp *t)
{
	return &t->cnt;
}

void transport_qp_info(const struct transport_qp *t, struct transport_qp_info *out)
{
	out->dqpn = t->dqpn;
	out->sq_psn = t->req.psn;
	out->comp_psn = t->req.comp_psn;
	out->epsn = t->resp.epsn;
	out->wqe_outstanding = t->req.head - t->req.comp;
	out->rd_atomic_outstanding = t->req.nrd;
	out->resp_out_queued = t->resp.out_tail - t->resp.out_head;
	out->retry_left = t->req.retry_left;
	out->rnr_left = t->req.rnr_left;
	out->rnr_wait = t->req.rnr_wait;
	out->cc_on = t->cc.p != NULL && t->cc.p->rp;
	out->cc_limited = t->cc.limited;
	out->cc_rate_kbps = t->cc.rc;
	out->cc_target_kbps = t->cc.rt;
	out->cc_alpha = t->cc.alpha >> (DCQCN_ALPHA_SHIFT - 10);
	out->cc_cuts = t->cc.cuts;
	out->cc_incs = t->cc.incs;
}

const char *transport_qp_state_name(unsigned int state)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return state < RTE_DIM(names) ? names[state] : "UNKNOWN";
}
