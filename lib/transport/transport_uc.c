/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Unreliable Connected (UC): SEND, SEND with immediate, RDMA WRITE, RDMA WRITE with
 * immediate, segmented by the path MTU; no ACK, no retransmission.
 *
 * Responder (as IBA 9.7.5.1 for UC and rxe do): a packet whose PSN is not the expected one,
 * or that breaks the FIRST/MIDDLE/LAST sequence, ends the message in progress, which is
 * dropped whole: its receive WQE is not completed but rewound and reused by the next message.
 * A FIRST or ONLY packet always starts a new message (and resynchronises the PSN); MIDDLE and
 * LAST packets of a dropped message are dropped. Bytes of an RDMA WRITE already placed stay
 * in memory (they cannot be taken back); only completions tell what arrived.
 */
#include <string.h>

#include "transport_msg.h"

/* ---- requester ---- */

int transport_uc_send_packet(struct transport_env *env, struct transport_qp *t,
			     const struct verbs_send_wqe *w, bool *last)
{
	struct transport_req *r = &t->req;
	uint32_t off = r->off, rem = w->length - off, len;
	bool first = off == 0, write = w->opcode == IBV_WR_RDMA_WRITE ||
				       w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
	struct droce_hdr_fields h;
	struct rte_mbuf *m;
	int rc;

	rc = transport_path_ready(env, t);
	if (rc != 0)
		return rc;
	memset(&h, 0, sizeof(h));
	*last = rem <= t->mtu;
	len = RTE_MIN(rem, t->mtu);
	/* IBA 9.2.2.1: UC's opcode is RC's operation under UC's transport bits. */
	h.opcode = (uint8_t)(DROCE_TRANSPORT_UC << 5 |
			     (transport_wr_ops[w->opcode][transport_msg_pos(first, *last)] & 0x1f));
	if (first && write) {
		h.reth.va = w->wr.rdma.remote_addr;
		h.reth.rkey = w->wr.rdma.rkey;
		h.reth.len = w->length;
	}
	if (*last) {
		h.imm = w->imm_data;
		h.se = (w->send_flags & IBV_SEND_SOLICITED) &&
		       w->opcode != IBV_WR_RDMA_WRITE;
	}
	h.psn = r->psn;
	m = transport_pkt_alloc(env, len);
	if (m == NULL)
		return -ENOMEM;
	if (len != 0 && transport_req_gather(t, w, off, m, len, true) != IBV_WC_SUCCESS) {
		transport_mbuf_free(env, m);
		return -EFAULT;	/* deregistered under the WR: the requester fails it */
	}
	rc = transport_pkt_send(env, t, m, &h);
	if (rc != 0)
		return rc;
	r->psn = droce_psn_add(r->psn, 1);
	r->off += len;
	return 0;
}

/* ---- responder ---- */

/* Drop the message in progress, if any: its WQE (held) is rewound for the next one.
 * @return TRANSPORT_DROP_rx_uc_msg_dropped when there was one (counted), else accepted. */
static enum transport_verdict uc_abort(struct transport_env *env, struct transport_qp *t)
{
	struct transport_resp *s = &t->resp;
	enum transport_verdict v = TRANSPORT_RX_ACCEPTED;

	if (transport_msg_open(s->prev_mask))
		v = TDROP(env, t, rx_uc_msg_dropped);
	s->prev_mask = 0;
	s->recv_off = 0;
	s->wr_resid = 0;
	return v;
}

/*
 * The packets of a SEND and of an RDMA WRITE. @return accepted, or the reason the packet and
 * its message are dropped: counted here (access_err), by transport_unreliable_recv_get()
 * (rx_no_recv_wr), or, when it is TRANSPORT_DROP_rx_uc_msg_dropped, by transport_uc_rx()'s
 * uc_abort() that follows.
 */
static enum transport_verdict uc_send(struct transport_env *env, struct transport_qp *t,
				      const struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	enum ibv_wc_status st;

	if (transport_unreliable_recv_get(env, t) == NULL)
		return TRANSPORT_DROP_rx_no_recv_wr;
	if (!transport_recv_fits(t, pkt->payload_len))
		return TRANSPORT_DROP_rx_uc_msg_dropped;
	st = transport_recv_append(t, m, pkt);
	if (st != IBV_WC_SUCCESS) {
		transport_recv_fatal(t, st);	/* our receive SGE, not the frame */
		return TRANSPORT_RX_ACCEPTED;
	}
	if (pkt->mask & DROCE_M_LAST)
		transport_recv_complete_msg(t, IBV_WC_SUCCESS, IBV_WC_RECV, t->resp.recv_off, pkt);
	return TRANSPORT_RX_ACCEPTED;
}

static enum transport_verdict uc_write_first(struct transport_env *env, struct transport_qp *t,
					     const struct droce_pkt *pkt)
{
	struct transport_resp *s = &t->resp;
	uint32_t len = transport_wr_begin(s, pkt);

	if (len == 0)
		return TRANSPORT_RX_ACCEPTED;
	if ((verbs_qp_attr(t->qp)->qp_access_flags & IBV_ACCESS_REMOTE_WRITE) &&
	    transport_rkey_mem(t, s->wr_rkey, s->wr_va, len, IBV_ACCESS_REMOTE_WRITE) != NULL)
		return TRANSPORT_RX_ACCEPTED;
	return TDROP(env, t, access_err);	/* UC: class D, the message is dropped silently */
}

static enum transport_verdict uc_write(struct transport_env *env, struct transport_qp *t,
				       const struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	struct transport_resp *s = &t->resp;
	enum transport_verdict v;

	if (pkt->mask & DROCE_M_FIRST) {
		v = uc_write_first(env, t, pkt);
		if (v != TRANSPORT_RX_ACCEPTED)
			return v;
	}
	if (!transport_wr_len_ok(s, pkt->mask, pkt->payload_len))
		return TRANSPORT_DROP_rx_uc_msg_dropped;
	/* WRITE with immediate needs a receive WQE before its last packet lands. */
	if ((pkt->mask & DROCE_M_RWR) && transport_unreliable_recv_get(env, t) == NULL)
		return TRANSPORT_DROP_rx_no_recv_wr;
	/* Each packet: the MR may have been deregistered since the first one. */
	if (!transport_wr_place(t, m, pkt, NULL))
		return TDROP(env, t, access_err);
	if (pkt->mask & DROCE_M_RWR)
		transport_recv_complete_msg(t, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
					    s->wr_len, pkt);
	return TRANSPORT_RX_ACCEPTED;
}

enum transport_verdict transport_uc_rx(struct transport_env *env, struct transport_qp *t,
				       const struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	struct transport_resp *s = &t->resp;
	uint32_t psn = droce_bth_psn(droce_pkt_bth(pkt));
	enum ibv_qp_state st = transport_state(t);
	enum transport_verdict v, pv;

	if (st == IBV_QPS_RTR && s->comm_est_armed) {	/* IBA 11.6.3: first packet in RTR */
		s->comm_est_armed = false;
		verbs_qp_event(t->qp, IBV_EVENT_COMM_EST);
	}
	if (psn != s->epsn || !transport_msg_seq_ok(s->prev_mask, pkt->mask)) {
		v = uc_abort(env, t);
		if (!(pkt->mask & DROCE_M_FIRST)) {
			/* The message it belonged to (if still open) first, then the packet. */
			pv = TDROP(env, t, rx_uc_pkt_dropped);
			return v != TRANSPORT_RX_ACCEPTED ? v : pv;
		}
	}
	if (!(pkt->mask & DROCE_M_REQ) || !transport_msg_len_ok(t, pkt->mask, pkt->payload_len))
		v = TDROP(env, t, inv_req_err);
	else
		v = (pkt->mask & DROCE_M_SEND) ? uc_send(env, t, m, pkt) :
						 uc_write(env, t, m, pkt);
	if (v != TRANSPORT_RX_ACCEPTED) {
		/* Dropped with its message (rx_uc_msg_dropped, counted by uc_abort() as the
		 * message is left open here): the rest follows the PSN gap rule above. */
		s->prev_mask = pkt->mask & ~DROCE_M_LAST;
		s->prev_mask |= DROCE_M_MIDDLE;
		uc_abort(env, t);
		return v;
	}
	s->epsn = droce_psn_add(psn, 1);
	s->prev_mask = pkt->mask;
	return TRANSPORT_RX_ACCEPTED;
}
