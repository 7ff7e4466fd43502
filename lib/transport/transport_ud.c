/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Unreliable Datagram (UD): SEND and SEND with immediate, one packet per message, addressed
 * by the WR's address handle, remote QPN and Q_Key (DETH). No ACK, no PSN check.
 *
 * Receive: the Q_Key must be the QP's (else dropped, rx_bad_qkey). The first 40 bytes of the
 * receive buffer get the GRH as verbs defines it for RoCE v2 (as rxe writes it): for IPv4,
 * 20 zero bytes then the IPv4 header as received; for IPv6, the IPv6 header as received.
 * byte_len counts those 40 bytes. A message longer than the WQE (GRH included) is dropped
 * (rx_ud_too_long) and the WQE is kept for the next one, as rxe does without an SRQ (IBA
 * class D); with an SRQ the WQE was taken out already and completes with
 * IBV_WC_REM_INV_REQ_ERR (rxe's class E), the QP going on.
 *
 * Multicast: an AH whose DGID is a group sends to the group's MAC (the engine's resolve()
 * maps it, no ARP/ND) with BTH DestQP 0xFFFFFF; the engine hands a received group frame to
 * each attached QP, which takes it here like any other.
 */
#include <string.h>

#include <rte_ip.h>

#include "transport_private.h"

#define UD_GRH_LEN 40u

uint32_t transport_port_mtu(struct droce_qp *qp)
{
	struct ibv_port_attr pa;

	if (droce_query_port(qp->context, 1, &pa) != 0)
		return 1024;
	return 128u << pa.active_mtu;	/* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5 */
}

/* The flow of @p av to @p dqpn; the MACs of the last destination are kept. */
static int ud_flow(struct transport_env *env, struct transport_qp *t, const struct verbs_av *av,
		   uint32_t dqpn)
{
	const struct ibv_global_route *g = &av->attr.grh;
	struct droce_flow *f = &t->flow;
	int rc;

	if (!t->flow_resolved || f->ipv6 != !av->ipv4 || memcmp(f->dgid, g->dgid.raw, 16) != 0 ||
	    memcmp(f->sgid, av->sgid.raw, 16) != 0) {
		memset(f, 0, sizeof(*f));
		f->ipv6 = !av->ipv4;
		memcpy(f->sgid, av->sgid.raw, 16);
		memcpy(f->dgid, g->dgid.raw, 16);
		t->flow_resolved = false;
		rc = env->resolve(env, t->dev, f);
		if (rc != 0)	/* -EAGAIN: the WQE waits; -EHOSTUNREACH: see below */
			return transport_path_park(env, t, rc);
		t->flow_resolved = true;
	}
	f->tclass = g->traffic_class;
	f->hop_limit = g->hop_limit;
	f->flow_label = g->flow_label;
	f->sport = droce_flow_sport_ud(t->qpn, dqpn);
	transport_flow_vlan(f, t->dev, av->attr.sl);
	t->dqpn = dqpn;
	return 0;
}

/* BTH DestQP: the WR's, or the multicast QPN for a group (IBA 10.5.2.6: whatever the WR
 * says, as the multicast GID names every member). */
static uint32_t ud_dest_qpn(const struct verbs_send_wqe *w)
{
	if (droce_gid_is_mcast(w->wr.ud.av.attr.grh.dgid.raw))
		return DROCE_MCAST_QPN;
	return w->wr.ud.remote_qpn & DROCE_QPN_MASK;
}

int transport_ud_send_packet(struct transport_env *env, struct transport_qp *t,
			     const struct verbs_send_wqe *w, bool *last)
{
	struct transport_req *r = &t->req;
	uint32_t qkey = w->wr.ud.remote_qkey;
	struct droce_hdr_fields h;
	struct rte_mbuf *m;
	int rc;

	rc = ud_flow(env, t, &w->wr.ud.av, ud_dest_qpn(w));
	if (rc == -EHOSTUNREACH) {
		/* Nobody answers for the destination: the message goes nowhere, as it would to a
		 * stale MAC, and completes (UD completes on transmission) rather than holding up
		 * the WQEs behind it for other destinations. Counted. */
		TCNT(env, t, tx_ud_unreachable);
		r->psn = droce_psn_add(r->psn, 1);
		*last = true;
		return 0;
	}
	if (rc != 0)
		return rc;
	m = transport_pkt_alloc(env, w->length);
	if (m == NULL)
		return -ENOMEM;
	if (w->length != 0 && transport_req_gather(t, w, 0, m, w->length, true) != IBV_WC_SUCCESS) {
		transport_mbuf_free(env, m);
		return -EFAULT;	/* deregistered under the WR: the requester fails it */
	}
	memset(&h, 0, sizeof(h));
	h.opcode = w->opcode == IBV_WR_SEND_WITH_IMM ? DROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE :
						       DROCE_OP_UD_SEND_ONLY;
	/* IBA 10.2.5 / C10-15: a WR Q_Key with the high-order bit set means the QP's own. */
	if (qkey & 0x80000000u)
		qkey = verbs_qp_attr(t->qp)->qkey;
	h.deth.qkey = qkey;
	h.deth.sqpn = t->qpn;
	h.imm = w->imm_data;
	h.se = (w->send_flags & IBV_SEND_SOLICITED) != 0;
	h.psn = r->psn;
	rc = transport_pkt_send(env, t, m, &h);
	if (rc != 0)
		return rc;
	r->psn = droce_psn_add(r->psn, 1);
	*last = true;
	return 0;
}

/* The 40-byte GRH of the received frame (verbs' layout for RoCE v2). */
static void ud_grh(const struct droce_pkt *pkt, uint8_t grh[UD_GRH_LEN])
{
	const uint8_t *l3 = pkt->hdr + pkt->l3_off;

	memset(grh, 0, UD_GRH_LEN);
	if (pkt->ipv6)
		memcpy(grh, l3, sizeof(struct rte_ipv6_hdr));
	else
		memcpy(grh + 20, l3, sizeof(struct rte_ipv4_hdr));
}

static void ud_complete(struct transport_qp *t, const struct droce_pkt *pkt, uint32_t sqpn)
{
	const struct droce_immdt *imm = droce_pkt_ext(pkt, DROCE_HDR_IMMDT);
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = IBV_WC_RECV;
	wc.byte_len = UD_GRH_LEN + pkt->payload_len;
	wc.src_qp = sqpn;
	wc.wc_flags = IBV_WC_GRH;
	wc.pkey_index = 0;	/* one P_Key (index 0), as mlx5 and rxe for a UD QP */
	/* RoCE has no LRH, so no SL or SLID: RoCE devices report the received packet's L3 header
	 * type in sl instead (mlx5: the CQE's bits 27:24 of flags_rqpn, whose low bits are
	 * 0 GRH (RoCE v1), 1 IPv6, 2 IPv4; rdma-core providers/mlx5/cq.c). Middleware reads it
	 * to find the destination address in the GRH (UCX's ud_verbs, masking with 0x7). */
	wc.sl = pkt->ipv6 ? DROCE_WC_SL_ROCE_IPV6 : DROCE_WC_SL_ROCE_IPV4;
	if (imm != NULL) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = imm->imm;
	}
	transport_recv_complete(t, &wc, droce_bth_se(droce_pkt_bth(pkt)));
}

/* Too long for the WQE: see the file comment. */
static enum transport_verdict ud_too_long(struct transport_env *env, struct transport_qp *t)
{
	enum transport_verdict v = TDROP(env, t, rx_ud_too_long);
	struct ibv_wc wc;

	if (!t->resp.rwqe_srq)
		return v;
	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_REM_INV_REQ_ERR;
	wc.opcode = IBV_WC_RECV;
	transport_recv_complete(t, &wc, false);
	return v;
}

enum transport_verdict transport_ud_rx(struct transport_env *env, struct transport_qp *t,
				       const struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	const struct droce_deth *deth = droce_pkt_ext(pkt, DROCE_HDR_DETH);
	uint8_t grh[UD_GRH_LEN];
	enum ibv_wc_status st;

	if (rte_be_to_cpu_32(deth->qkey) != verbs_qp_attr(t->qp)->qkey)
		return TDROP(env, t, rx_bad_qkey);	/* IBA 9.6.1.2 (C9-47): Q_Key mismatch */
	if (transport_unreliable_recv_get(env, t) == NULL)
		return TRANSPORT_DROP_rx_no_recv_wr;	/* counted by the call above */
	if (UD_GRH_LEN + (uint64_t)pkt->payload_len > t->resp.rwqe->length)
		return ud_too_long(env, t);
	ud_grh(pkt, grh);
	st = transport_recv_copy(t, 0, NULL, 0, grh, UD_GRH_LEN);
	if (st == IBV_WC_SUCCESS)
		st = transport_recv_copy(t, UD_GRH_LEN, m, pkt->payload_off, NULL,
					 pkt->payload_len);
	if (st != IBV_WC_SUCCESS) {
		transport_recv_fatal(t, st);	/* our receive SGE, not the frame */
		return TRANSPORT_RX_ACCEPTED;
	}
	ud_complete(t, pkt, droce_deth_sqpn(deth));
	return TRANSPORT_RX_ACCEPTED;
}
