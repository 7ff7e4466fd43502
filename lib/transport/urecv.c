/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Receive WQEs of the unreliable transports (UC, UD): taken from the QP's RQ or from its SRQ,
 * filled, completed. A message that is dropped (gap, no room, bad length) never completes its
 * WQE: the WQE is rewound and reused by the next message, as rxe does (class D drops).
 */
#include <string.h>

#include "transport_private.h"

const struct verbs_recv_wqe *urecv_get(struct transport_env *env, struct transport_qp *t)
{
	struct transport_resp *s = &t->resp;

	if (s->rwqe != NULL)
		return s->rwqe;
	if (t->qp->srq != NULL) {
		if (verbs_srq_take(t->qp->srq, &s->srq_buf) != 0) {
			TCNT(env, t, rx_no_recv_wr);
			return NULL;
		}
		s->rwqe = &s->srq_buf.wqe;
		s->rwqe_srq = true;
	} else {
		s->rwqe = verbs_rq_next(t->qp);
		s->rwqe_srq = false;
		if (s->rwqe == NULL) {
			TCNT(env, t, rx_no_recv_wr);
			return NULL;
		}
	}
	s->recv_off = 0;
	return s->rwqe;
}

/*
 * Copy @p len bytes into the held WQE at message offset @p off, from frame offset @p src of
 * @p m, or from @p buf when @p m is NULL. The caller checked that they fit.
 */
enum ibv_wc_status urecv_copy(const struct transport_qp *t, uint32_t off,
			      const struct rte_mbuf *m, uint32_t src, const void *buf,
			      uint32_t len)
{
	const struct verbs_recv_wqe *r = t->resp.rwqe;
	const uint8_t *b = buf;
	uint32_t i, n;

	for (i = 0; i < r->num_sge && len != 0; i++) {
		const struct ibv_sge *sge = &r->sge[i];
		uint8_t *dst;

		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		if (transport_sge_check(t, sge, IBV_ACCESS_LOCAL_WRITE) != IBV_WC_SUCCESS)
			return IBV_WC_LOC_PROT_ERR;
		n = RTE_MIN(len, sge->length - off);
		dst = (uint8_t *)(uintptr_t)sge->addr + off;
		if (m != NULL)
			transport_pkt_read(m, src, dst, n);
		else
			memcpy(dst, b + src, n);
		src += n;
		len -= n;
		off = 0;
	}
	return IBV_WC_SUCCESS;
}

void urecv_complete(struct transport_qp *t, struct ibv_wc *wc, bool se)
{
	struct transport_resp *s = &t->resp;

	if (s->rwqe_srq)
		verbs_srq_complete(t->qp, s->srq_buf.wqe.wr_id, wc, se);
	else
		verbs_rq_complete(t->qp, wc, se);
	s->rwqe = NULL;
	s->recv_off = 0;
}

/* A bad receive SGE (IBA class A, as rxe's malformed WQE): the WQE completes in error and
 * the QP goes to ERR. */
void urecv_fatal(struct transport_qp *t, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.status = st;
	wc.opcode = IBV_WC_RECV;
	urecv_complete(t, &wc, false);
	verbs_qp_error(t->qp, IBV_EVENT_QP_FATAL);
	transport_forget_wqes(t);
}

/* A frame for a UC or UD QP: opcode of the QP's transport, P_Key, state, for UC the peer's
 * address; then uc.c/ud.c. */
void urecv_rx(struct transport_env *env, struct transport_qp *t, const struct rte_mbuf *m,
	      const struct droce_pkt *pkt)
{
	enum droce_transport want = t->type == IBV_QPT_UD ? DROCE_TRANSPORT_UD :
							    DROCE_TRANSPORT_UC;
	enum ibv_qp_state st = transport_state(t);

	if (droce_opcode_transport(pkt->opcode) != want) {
		TCNT(env, t, rx_bad_opcode);
	} else if ((droce_bth_pkey(droce_pkt_bth(pkt)) & 0x7fff) !=
		   (DROCE_DEFAULT_PKEY & 0x7fff)) {
		TCNT(env, t, rx_bad_pkey);	/* IBA 9.6.1.1 (C9-42): P_Key mismatch */
	} else if (st != IBV_QPS_RTR && st != IBV_QPS_RTS && st != IBV_QPS_SQD &&
		   st != IBV_QPS_SQE) {
		TCNT(env, t, rx_qp_state);	/* IBA 10.3.1: receive in RTR, RTS, SQD, SQE */
	} else if (t->type == IBV_QPT_UD) {
		ud_rx(env, t, m, pkt);
	} else if (!transport_path_matches(t, pkt)) {
		TCNT(env, t, rx_bad_addr);	/* UC is connected too: our peer's frames only */
	} else {
		uc_rx(env, t, m, pkt);
	}
}
