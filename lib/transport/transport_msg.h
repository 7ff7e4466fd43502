/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * The request packets of SEND and RDMA WRITE messages as a responder takes them, the same for
 * RC (transport_resp.c) and UC (transport_uc.c): the checks a packet passes against its
 * message (opcode sequence, payload length against the path MTU, against the receive WQE,
 * against the WRITE's RETH), the copy of a SEND into its receive WQE, the placement of a
 * WRITE, the completion of a message. Each check says yes or no; what a no leads to is the
 * transport's (IBA 9.9): RC NAKs it (class C: NAK invalid request or remote access error, the
 * QP to ERR), UC drops the message silently (class D) and takes the next from its FIRST
 * packet. Each caller keeps its own order of checks. Not installed.
 */
#ifndef TRANSPORT_MSG_H
#define TRANSPORT_MSG_H

#include "transport_private.h"

/** Is a message open after the accepted packet @p prev (its FIRST or a MIDDLE, not its LAST)? */
static inline bool transport_msg_open(uint32_t prev)
{
	return (prev & (DROCE_M_FIRST | DROCE_M_MIDDLE)) && !(prev & DROCE_M_LAST);
}

/** IBA 9.8.3 (C9-34..): a MIDDLE or LAST packet continues the message of its kind that the
 *  accepted packet @p prev left open; anything else starts a message (FIRST or ONLY). */
static inline bool transport_msg_seq_ok(uint32_t prev, uint32_t mask)
{
	bool open = transport_msg_open(prev);

	if (open && (prev & DROCE_M_SEND))
		return (mask & DROCE_M_SEND) && !(mask & DROCE_M_FIRST);
	if (open && (prev & DROCE_M_WRITE))
		return (mask & DROCE_M_WRITE) && !(mask & DROCE_M_FIRST);
	return (mask & DROCE_M_FIRST) != 0;
}

/** Payload length: FIRST and MIDDLE packets carry exactly one path MTU, the LAST one 1..MTU
 *  (0..MTU when it is the only one). */
static inline bool transport_msg_len_ok(const struct transport_qp *t, uint32_t mask,
					uint32_t len)
{
	if (!(mask & DROCE_M_LAST))
		return len == t->mtu;
	if (!(mask & DROCE_M_FIRST) && len == 0)
		return false;
	return len <= t->mtu;
}

/** Do @p len more bytes of a SEND fit the held receive WQE? */
static inline bool transport_recv_fits(const struct transport_qp *t, uint32_t len)
{
	return (uint64_t)t->resp.recv_off + len <= t->resp.rwqe->length;
}

/** A SEND packet's payload into the held receive WQE after what it holds (it fits:
 *  transport_recv_fits()). @return IBV_WC_SUCCESS, or IBV_WC_LOC_PROT_ERR (a receive SGE
 *  that names no writable MR; the bytes are not counted as received). */
static inline enum ibv_wc_status transport_recv_append(struct transport_qp *t,
						       const struct rte_mbuf *m,
						       const struct droce_pkt *pkt)
{
	enum ibv_wc_status st = transport_recv_copy(t, t->resp.recv_off, m, pkt->payload_off, NULL,
						    pkt->payload_len);

	if (st == IBV_WC_SUCCESS)
		t->resp.recv_off += pkt->payload_len;
	return st;
}

/** A WRITE's FIRST packet: its RETH says where the message goes, under which R_Key, and how
 *  long it is. @return that length. */
static inline uint32_t transport_wr_begin(struct transport_resp *s, const struct droce_pkt *pkt)
{
	const struct droce_reth *reth = droce_pkt_ext(pkt, DROCE_HDR_RETH);

	s->wr_va = rte_be_to_cpu_64(reth->va);
	s->wr_rkey = rte_be_to_cpu_32(reth->rkey);
	s->wr_resid = s->wr_len = rte_be_to_cpu_32(reth->len);
	return s->wr_len;
}

/** Does a WRITE packet's payload of @p len fit what its message has left (a LAST's: all)? */
static inline bool transport_wr_len_ok(const struct transport_resp *s, uint32_t mask,
				       uint32_t len)
{
	return len <= s->wr_resid && (!(mask & DROCE_M_LAST) || len == s->wr_resid);
}

/**
 * A WRITE packet's payload to where its message stands: @p addr, or when NULL what the
 * message's R_Key names there now (the MR may have been deregistered since the first packet).
 * @return false: no MR of the R_Key covers it any more (nothing written).
 */
static inline bool transport_wr_place(struct transport_qp *t, const struct rte_mbuf *m,
				      const struct droce_pkt *pkt, uint8_t *addr)
{
	struct transport_resp *s = &t->resp;
	uint32_t len = pkt->payload_len;

	if (len != 0) {
		if (addr == NULL)
			addr = transport_rkey_mem(t, s->wr_rkey, s->wr_va, len,
						  IBV_ACCESS_REMOTE_WRITE);
		if (addr == NULL)
			return false;
		transport_pkt_read(m, pkt->payload_off, addr, len);
		s->wr_va += len;
	}
	s->wr_resid -= len;
	return true;
}

/** The R_Key a SEND with invalidate names (its IETH). */
static inline uint32_t transport_ieth_rkey(const struct droce_pkt *pkt)
{
	const struct droce_ieth *ieth = droce_pkt_ext(pkt, DROCE_HDR_IETH);

	return rte_be_to_cpu_32(ieth->rkey);
}

#endif /* TRANSPORT_MSG_H */
