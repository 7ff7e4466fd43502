/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The requester of the unreliable transports (UC, UD): no ACK, no retransmission, no timer.
 * A send WQE completes as soon as its last packet is handed to the port (IBA 9.8.x: UC and UD
 * requesters complete on transmission). Packets come from transport_uc.c (segmented by the path MTU)
 * and transport_ud.c (one packet per message). It uses the RC requester's ring and indices with
 * comp == cur: a WQE is complete once it is past.
 */
#include <errno.h>

#include "transport_private.h"

/* Local checks (IBA 10.8.3.x local errors); an error completes the WQE and stops the SQ
 * (verbs moves UC/UD to SQE and flushes the rest). */
static enum ibv_wc_status unreliable_check(const struct transport_qp *t,
				     const struct verbs_send_wqe *w)
{
	enum ibv_wc_status st;
	uint32_t i;

	if (w->length > (1u << 31))	/* IBA 9.4: messages are at most 2^31 bytes */
		return IBV_WC_LOC_LEN_ERR;
	/* UD: one packet; droce_post_send() already refuses longer WRs (EINVAL). */
	if (t->type == IBV_QPT_UD && w->length > t->mtu)
		return IBV_WC_LOC_LEN_ERR;
	for (i = 0; i < w->num_sge; i++) {
		st = transport_sge_check(t, &w->sge[i], 0);
		if (st != IBV_WC_SUCCESS)
			return st;
	}
	return IBV_WC_SUCCESS;
}

static struct req_wqe *unreliable_current(struct transport_qp *t)
{
	struct transport_req *r = &t->req;
	const struct verbs_send_wqe *w;
	struct req_wqe *e;

	if (r->cur != r->head)
		return &r->ring[r->cur & r->mask];
	w = verbs_sq_next(t->qp);
	if (w == NULL)
		return NULL;
	e = &r->ring[r->head++ & r->mask];
	e->w = w;
	e->err = unreliable_check(t, w);
	e->started = 0;
	r->off = 0;
	return e;
}

static void unreliable_done(struct transport_qp *t)
{
	struct transport_req *r = &t->req;

	r->cur++;
	r->comp = r->cur;
	r->off = 0;
	if (verbs_sq_complete(t->qp, 1) < 0)
		transport_state_sync(t);	/* the send CQ overran */
}

unsigned int transport_unreliable_tx(struct transport_env *env, struct transport_qp *t,
				     unsigned int budget)
{
	enum ibv_qp_state st = transport_state(t);
	unsigned int sent = 0;
	struct req_wqe *e;
	bool last;
	int rc;

	if (st == IBV_QPS_SQE && verbs_wq_pending(t->qp, true))
		verbs_sq_next(t->qp);	/* WRs posted in SQE: flushed by verbs */
	if (st != IBV_QPS_RTS && st != IBV_QPS_SQD)
		return 0;
	while (sent < budget) {
		e = unreliable_current(t);
		if (e == NULL)
			break;
		if (e->err) {
			verbs_sq_complete_err(t->qp, e->err, 0);
			transport_state_sync(t);	/* SQE */
			transport_forget_wqes(t);
			break;
		}
		if (unlikely(e->w->opcode == IBV_WR_BIND_MW || e->w->opcode == IBV_WR_LOCAL_INV)) {
			e->err = transport_req_local(t, e->w);	/* in order, as the RC requester */
			if (e->err == IBV_WC_SUCCESS)
				unreliable_done(t);
			continue;
		}
		if (!transport_cc_tx_ok(env, t))
			break;	/* the DCQCN pacer */
		last = false;
		rc = t->type == IBV_QPT_UD ? transport_ud_send_packet(env, t, e->w, &last) :
					     transport_uc_send_packet(env, t, e->w, &last);
		if (rc == -EFAULT) {
			/* Its memory was deregistered under the WR: a local protection error,
			 * as the lkey check of a new WR would give (next turn of the loop). */
			e->err = IBV_WC_LOC_PROT_ERR;
			continue;
		}
		if (rc != 0)
			break;	/* MAC being resolved, no mbuf: the WQE waits */
		sent++;
		if (last)
			unreliable_done(t);
	}
	return sent;
}

bool transport_unreliable_pending(const struct transport_qp *t)
{
	enum ibv_qp_state st = transport_state(t);

	if (st == IBV_QPS_SQE)
		return verbs_wq_pending(t->qp, true);
	if (st != IBV_QPS_RTS && st != IBV_QPS_SQD)
		return false;
	return t->req.cur != t->req.head ||
	       (st == IBV_QPS_RTS && verbs_wq_pending(t->qp, true));
}
