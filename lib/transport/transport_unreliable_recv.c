/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The receive side of the unreliable transports (UC, UD): a frame's checks before transport_uc.c or
 * transport_ud.c take it. Their receive WQEs come from transport_recv.c.
 */

#include "transport_private.h"

const struct verbs_recv_wqe *transport_unreliable_recv_get(struct transport_env *env,
							   struct transport_qp *t)
{
	const struct verbs_recv_wqe *r = transport_recv_get(t);

	if (r == NULL)
		TCNT(env, t, rx_no_recv_wr);	/* UC/UD: the message is dropped */
	return r;
}

/* A frame for a UC or UD QP: opcode of the QP's transport, P_Key, state, for UC the peer's
 * address; then transport_uc.c/ud.c. */
enum transport_verdict transport_unreliable_rx(struct transport_env *env,
					       struct transport_qp *t, const struct rte_mbuf *m,
					       const struct droce_pkt *pkt)
{
	enum droce_transport want = t->type == IBV_QPT_UD ? DROCE_TRANSPORT_UD :
							    DROCE_TRANSPORT_UC;
	enum ibv_qp_state st = transport_state(t);

	if (droce_opcode_transport(pkt->opcode) != want)
		return TDROP(env, t, rx_bad_opcode);
	if ((droce_bth_pkey(droce_pkt_bth(pkt)) & 0x7fff) != (DROCE_DEFAULT_PKEY & 0x7fff))
		return TDROP(env, t, rx_bad_pkey);	/* IBA 9.6.1.1 (C9-42): P_Key mismatch */
	if (st != IBV_QPS_RTR && st != IBV_QPS_RTS && st != IBV_QPS_SQD && st != IBV_QPS_SQE)
		return TDROP(env, t, rx_qp_state);	/* IBA 10.3.1: RTR, RTS, SQD, SQE */
	if (t->type == IBV_QPT_UD)
		return transport_ud_rx(env, t, m, pkt);
	if (!transport_path_matches(t, pkt))
		return TDROP(env, t, rx_bad_addr);	/* UC is connected too: our peer's only */
	return transport_uc_rx(env, t, m, pkt);
}
