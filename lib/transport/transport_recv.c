/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Receive WQEs, for every transport (the RC responder, UC, UD): taken from the QP's RQ or
 * from its SRQ and held while a message fills them, filled through one SGE scatter, completed.
 * An unreliable message that is dropped (gap, no room, bad length) never completes its WQE:
 * the WQE stays held and the next message reuses it, as rxe does (class D drops).
 */
#include <string.h>

#include "transport_msg.h"

const struct verbs_recv_wqe *transport_recv_get(struct transport_qp *t)
{
	struct transport_resp *s = &t->resp;

	if (s->rwqe != NULL)
		return s->rwqe;
	if (t->qp->srq != NULL) {
		if (verbs_srq_take(t->qp->srq, &s->srq_buf) != 0)
			return NULL;
		s->rwqe = &s->srq_buf.wqe;
		s->rwqe_srq = true;
	} else {
		s->rwqe = verbs_rq_next(t->qp);
		s->rwqe_srq = false;
		if (s->rwqe == NULL)
			return NULL;
	}
	s->recv_off = 0;
	return s->rwqe;
}

enum ibv_wc_status transport_recv_copy(const struct transport_qp *t, uint32_t off,
				       const struct rte_mbuf *m, uint32_t src, const void *buf,
				       uint32_t len)
{
	const struct verbs_recv_wqe *r = t->resp.rwqe;

	return transport_sge_scatter(t, r->sge, r->num_sge, off, m, src, buf, len);
}

void transport_recv_complete(struct transport_qp *t, struct ibv_wc *wc, bool se)
{
	struct transport_resp *s = &t->resp;
	int rc;

	if (s->rwqe_srq)
		rc = verbs_srq_complete(t->qp, s->srq_buf.wqe.wr_id, wc, se);
	else
		rc = verbs_rq_complete(t->qp, wc, se);
	s->rwqe = NULL;
	s->recv_off = 0;
	/* An error completion moves an RC QP to ERR; -ENOSPC: the receive CQ overran. */
	if (unlikely(rc < 0 || wc->status != IBV_WC_SUCCESS))
		transport_state_sync(t);
}

void transport_recv_complete_msg(struct transport_qp *t, enum ibv_wc_status st,
				 enum ibv_wc_opcode op,
				 uint32_t byte_len, const struct droce_pkt *pkt)
{
	struct ibv_wc wc;
	bool se = false;

	memset(&wc, 0, sizeof(wc));
	wc.status = st;
	wc.opcode = op;
	wc.byte_len = byte_len;
	wc.src_qp = t->dqpn;
	if (pkt != NULL && st == IBV_WC_SUCCESS) {
		const struct droce_immdt *imm = droce_pkt_ext(pkt, DROCE_HDR_IMMDT);

		if (imm != NULL) {
			wc.wc_flags |= IBV_WC_WITH_IMM;
			wc.imm_data = imm->imm;
		}
		if (pkt->mask & DROCE_M_INV) {	/* its window was invalidated (RC) */
			wc.wc_flags |= IBV_WC_WITH_INV;
			wc.invalidated_rkey = transport_ieth_rkey(pkt);
		}
		se = droce_bth_se(droce_pkt_bth(pkt));
	}
	transport_recv_complete(t, &wc, se);
}

/* A bad receive SGE (IBA class A, as rxe's malformed WQE): the WQE completes in error and
 * the QP goes to ERR. */
void transport_recv_fatal(struct transport_qp *t, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.status = st;
	wc.opcode = IBV_WC_RECV;
	transport_recv_complete(t, &wc, false);
	verbs_qp_error(t->qp, IBV_EVENT_QP_FATAL);
	transport_state_sync(t);
}
