/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The RC responder: admission, PSN checks (IBA 9.7.5.1), opcode sequence, resources, length
 * and R_Key checks, then execution of SEND, RDMA WRITE, RDMA READ, ATOMIC, ATOMIC_WRITE and
 * FLUSH requests. The checks run in the order rxe runs them (PSN, opcode sequence, opcode
 * validity, resources, length, R_Key), so no byte of memory is written before every check has
 * passed.
 * Responses leave through transport_resp_out.c, in PSN order.
 */
#include <string.h>

#include "transport_msg.h"

/* What one request packet leads to. */
enum resp_result {
	RR_OK,
	RR_RNR,		/* no receive WQE: RNR NAK, the packet is not consumed */
	RR_INV_REQ,	/* NAK invalid request (class C): opcode not supported or out of
			 * sequence; IBA's Invalid Request WQ error (QP_REQ_ERR) */
	RR_INV_ACC,	/* NAK invalid request (class C): a length error, a misaligned atomic;
			 * IBA's Local Access Violation WQ error (QP_ACCESS_ERR), as the verbs
			 * manual lists them */
	RR_RD_EXCESS,	/* as RR_INV_ACC: too many READ/atomic requests (rx_rd_atomic_excess) */
	RR_LEN,		/* receive buffer too small: as RR_INV_ACC, the WQE LOC_LEN_ERR */
	RR_ACCESS,	/* NAK remote access error (class C) */
	RR_OP_ERR,	/* NAK remote operational error: a bad receive SGE */
	RR_INV_RKEY,	/* SEND with invalidate: no window it may invalidate (rxe's class J) */
};

void transport_resp_reset(struct transport_qp *t)
{
	struct transport_resp *s = &t->resp;

	s->rwqe = NULL;
	s->prev_mask = 0;
	s->nak_sent = false;
	s->comm_est_armed = false;
	s->err = false;
	s->since_ack = 0;
	s->msn = 0;
	s->res_next = 0;
	memset(s->res, 0, sizeof(s->res));
	s->out_head = s->out_tail = 0;
}

/* IBA 9.4.3 / 9.4.4 (C9-88): R_Key, PD, bounds and access are checked before memory is touched;
 * a zero-length transfer needs no valid R_Key. */
static enum resp_result rkey_check(const struct transport_qp *t, uint32_t rkey, uint64_t va,
				   uint32_t len, int access, uint8_t **addr)
{
	*addr = NULL;
	if (len == 0)
		return RR_OK;
	*addr = transport_rkey_mem(t, rkey, va, len, access);
	return *addr != NULL ? RR_OK : RR_ACCESS;
}

/* As rxe's check_op_valid: the QP must be enabled for the remote operation. */
static bool qp_allows(const struct transport_qp *t, uint32_t mask)
{
	int acc = verbs_qp_attr(t->qp)->qp_access_flags;

	if ((mask & (DROCE_M_WRITE | DROCE_M_ATMWR)) && !(acc & IBV_ACCESS_REMOTE_WRITE))
		return false;
	if ((mask & DROCE_M_READ) && !(acc & IBV_ACCESS_REMOTE_READ))
		return false;
	if ((mask & DROCE_M_ATOMIC) && !(acc & IBV_ACCESS_REMOTE_ATOMIC))
		return false;
	return true;
}

static enum transport_verdict resp_error(struct transport_env *env, struct transport_qp *t,
					 enum resp_result rr, uint32_t psn);

static enum resp_result do_send(struct transport_qp *t, const struct rte_mbuf *m,
				const struct droce_pkt *pkt)
{
	struct transport_resp *s = &t->resp;
	uint32_t len = pkt->payload_len;

	/* As rxe's check_resource: a SEND needs a receive WQE from its first packet on. */
	if (transport_recv_get(t) == NULL)
		return RR_RNR;
	if (!transport_msg_len_ok(t, pkt->mask, len))
		return RR_INV_ACC;
	if (!transport_recv_fits(t, len))
		return RR_LEN;
	if (transport_recv_append(t, m, pkt) != IBV_WC_SUCCESS)
		return RR_OP_ERR;
	if (pkt->mask & DROCE_M_LAST) {
		/* As rxe: the data is placed, then the window is invalidated; an R_Key that
		 * names no type-2 window bound through this QP (an MR: droce has no
		 * fast-registration MR) fails the receive (RR_INV_RKEY). */
		if (unlikely(pkt->mask & DROCE_M_INV) &&
		    !verbs_remote_inv(t->qp, transport_ieth_rkey(pkt)))
			return RR_INV_RKEY;
		s->msn = (s->msn + 1) & DROCE_MSN_MASK;
		transport_recv_complete_msg(t, IBV_WC_SUCCESS, IBV_WC_RECV, s->recv_off, pkt);
	}
	return RR_OK;
}

static enum resp_result do_write(struct transport_qp *t, const struct rte_mbuf *m,
				 const struct droce_pkt *pkt)
{
	struct transport_resp *s = &t->resp;
	uint32_t len = pkt->payload_len;
	uint8_t *addr = NULL;
	enum resp_result rr;

	/* WRITE with immediate consumes a receive WQE (IBA 9.4.4.2): RNR before any byte. */
	if ((pkt->mask & DROCE_M_RWR) && transport_recv_get(t) == NULL)
		return RR_RNR;
	if (pkt->mask & DROCE_M_FIRST) {
		uint32_t dlen = transport_wr_begin(s, pkt);

		if (dlen > (1u << 31))
			return RR_INV_ACC;
		rr = rkey_check(t, s->wr_rkey, s->wr_va, dlen, IBV_ACCESS_REMOTE_WRITE, &addr);
		if (rr != RR_OK)
			return rr;
	}
	if (!transport_msg_len_ok(t, pkt->mask, len) || !transport_wr_len_ok(s, pkt->mask, len))
		return RR_INV_ACC;
	/* Later packets: the MR may have been deregistered since the first one (as rxe, an
	 * R_Key violation: NAK remote access error). */
	if (!transport_wr_place(t, m, pkt, addr))
		return RR_ACCESS;
	if (pkt->mask & DROCE_M_LAST) {
		s->msn = (s->msn + 1) & DROCE_MSN_MASK;
		if (pkt->mask & DROCE_M_IMM)	/* byte_len: the RDMA length, as rxe reports */
			transport_recv_complete_msg(t, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
						    s->wr_len,
						    pkt);
	}
	return RR_OK;
}

/*
 * Is the resource res_alloc() would reuse (the oldest) still needed? Resources are taken in
 * PSN order, so a requester that keeps to our max_dest_rd_atomic (IBA 9.5) has completed the
 * oldest one's request before it sends this one:
 * - its original response went out whole and a replay of it is queued (a retry crossed the
 *   response): the replay is dropped (rx_dup_dropped) and the resource reused, as rxe reuses
 *   its oldest resource;
 * - its original response has not gone out whole: the requester has more READ/ATOMIC requests
 *   outstanding than max_dest_rd_atomic. Reusing it would answer the older request's PSNs
 *   with this one's data: true, and the caller's RR_RD_EXCESS, the class C error "too many
 *   RDMA READ or atomic requests" (NAK invalid request, QP to ERR).
 */
static bool res_busy(struct transport_env *env, struct transport_qp *t)
{
	struct transport_resp *s = &t->resp;
	struct resp_res *r = &s->res[s->res_next % s->nres];

	if (!r->queued)
		return false;
	if (r->answered) {
		r->queued = false;	/* transport_resp_tx() skips its entry */
		TCNT(env, t, rx_dup_dropped);
		return false;
	}
	return true;
}

/* The next responder resource (a ring of max_dest_rd_atomic entries, oldest reused). */
static uint32_t res_alloc(struct transport_qp *t)
{
	struct transport_resp *s = &t->resp;
	uint32_t i = s->res_next++ % s->nres;

	memset(&s->res[i], 0, sizeof(s->res[i]));
	return i;
}

/* A responder resource for the request at @p psn, with the next MSN: the whole of a one-packet
 * request's (ATOMIC, ATOMIC_WRITE, FLUSH); a READ sets its last PSN and range after. */
static struct resp_res *res_take(struct transport_qp *t, uint8_t kind, uint32_t psn)
{
	struct transport_resp *s = &t->resp;
	struct resp_res *r = &s->res[res_alloc(t)];

	r->kind = kind;
	r->first_psn = psn;
	r->last_psn = psn;
	r->start_psn = psn;
	s->msn = (s->msn + 1) & DROCE_MSN_MASK;
	r->msn = s->msn;
	return r;
}

static enum resp_result do_read(struct transport_env *env, struct transport_qp *t, const struct droce_pkt *pkt,
				uint32_t psn)
{
	struct transport_resp *s = &t->resp;
	const struct droce_reth *reth = droce_pkt_ext(pkt, DROCE_HDR_RETH);
	uint32_t dlen = rte_be_to_cpu_32(reth->len);
	struct resp_res *r;
	enum resp_result rr;
	uint8_t *addr;

	/* READ/ATOMIC need responder resources (max_dest_rd_atomic > 0). */
	if (s->nres == 0 || dlen > (1u << 31))
		return RR_INV_ACC;
	rr = rkey_check(t, rte_be_to_cpu_32(reth->rkey), rte_be_to_cpu_64(reth->va), dlen,
			IBV_ACCESS_REMOTE_READ, &addr);
	if (rr != RR_OK)
		return rr;
	if (res_busy(env, t))
		return RR_RD_EXCESS;
	r = res_take(t, RK_READ, psn);
	r->last_psn = droce_psn_add(psn, RTE_MAX(div_up(dlen, t->mtu), 1u) - 1);
	r->va = rte_be_to_cpu_64(reth->va);
	r->rkey = rte_be_to_cpu_32(reth->rkey);
	r->len = dlen;
	r->va_org = r->va;
	r->len_org = dlen;
	transport_resp_out_res(env, t, (uint32_t)(r - s->res));
	return RR_OK;
}

static enum resp_result do_atomic(struct transport_env *env, struct transport_qp *t, const struct droce_pkt *pkt,
				  uint32_t psn)
{
	struct transport_resp *s = &t->resp;
	const struct droce_atmeth *a = droce_pkt_ext(pkt, DROCE_HDR_ATMETH);
	uint64_t va = rte_be_to_cpu_64(a->va), orig;
	struct resp_res *r;
	enum resp_result rr;
	uint8_t *addr;

	/* IBA 9.4.5: atomics act on 8 bytes at an 8-byte aligned VA; rxe answers a
	 * misaligned one with NAK invalid request. */
	if (s->nres == 0 || (va & 7))
		return RR_INV_ACC;
	rr = rkey_check(t, rte_be_to_cpu_32(a->rkey), va, 8, IBV_ACCESS_REMOTE_ATOMIC, &addr);
	if (rr != RR_OK)
		return rr;
	if (res_busy(env, t))
		return RR_RD_EXCESS;	/* before the atomic executes */
	if (pkt->opcode == DROCE_OP_RC_COMPARE_SWAP) {
		orig = rte_be_to_cpu_64(a->cmp);
		__atomic_compare_exchange_n((uint64_t *)addr, &orig, rte_be_to_cpu_64(a->swap_add),
					    false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add((uint64_t *)addr, rte_be_to_cpu_64(a->swap_add),
					  __ATOMIC_SEQ_CST);
	}
	r = res_take(t, RK_ATOMIC, psn);
	r->orig = orig;
	transport_resp_out_res(env, t, (uint32_t)(r - s->res));
	return RR_OK;
}

/*
 * RDMA ATOMIC_WRITE (IBA 1.5; rxe since Linux 6.2): the 8 bytes of the payload replace the 8
 * at the RETH's VA in one store, after everything before it (a release store, as rxe's).
 * RETH length and payload are 8, the VA 8-byte aligned, the MR and QP allow REMOTE_WRITE; it
 * takes a responder resource, and its answer is an RDMA READ response ONLY without payload
 * (transport_resp_out.c), replayed for a duplicate without writing again.
 */
static enum resp_result do_atomic_write(struct transport_env *env, struct transport_qp *t,
					const struct rte_mbuf *m, const struct droce_pkt *pkt,
					uint32_t psn)
{
	struct transport_resp *s = &t->resp;
	const struct droce_reth *reth = droce_pkt_ext(pkt, DROCE_HDR_RETH);
	uint64_t va = rte_be_to_cpu_64(reth->va), v;
	enum resp_result rr;
	uint8_t *addr;

	if (s->nres == 0 || rte_be_to_cpu_32(reth->len) != 8 || pkt->payload_len != 8 ||
	    (va & 7))
		return RR_INV_ACC;
	rr = rkey_check(t, rte_be_to_cpu_32(reth->rkey), va, 8, IBV_ACCESS_REMOTE_WRITE, &addr);
	if (rr != RR_OK)
		return rr;
	if (res_busy(env, t))
		return RR_RD_EXCESS;
	transport_pkt_read(m, pkt->payload_off, (uint8_t *)&v, sizeof(v));
	__atomic_store_n((uint64_t *)addr, v, __ATOMIC_RELEASE);
	transport_resp_out_res(env, t, (uint32_t)(res_take(t, RK_ATOMIC_WRITE, psn) - s->res));
	return RR_OK;
}

/*
 * RDMA FLUSH (IBA 1.5; rxe since Linux 6.2). The FETH names the placement types (a non-empty
 * set of global visibility and persistence; anything else, or a selectivity level other than
 * range or MR, is a malformed request: NAK invalid request, counted inv_req_err) and the MR
 * needs the access flag of each (DROCE_ACCESS_FLUSH_GLOBAL / _PERSISTENT; the QP's access
 * flags are not looked at, as rxe's check_op_valid()). Selectivity range: [VA, VA + length)
 * must lie in the MR (length 0 too: the R_Key is checked, as rxe); MR: the whole MR, the VA
 * and length are ignored. Anything else is an R_Key violation (NAK remote access error).
 * Requests are executed in PSN order, so every earlier WRITE of the QP has been placed; the
 * store fence makes them visible before the answer is built. droce has no persistent memory:
 * a persistent FLUSH does the same (doc/api.md). It takes a responder resource, as READ, and
 * is answered with an RDMA READ response ONLY without payload (as rxe), replayed for a retry
 * without flushing again.
 */
static enum resp_result do_flush(struct transport_env *env, struct transport_qp *t,
				 const struct droce_pkt *pkt, uint32_t psn)
{
	struct transport_resp *s = &t->resp;
	const struct droce_feth *feth = droce_pkt_ext(pkt, DROCE_HDR_FETH);
	const struct droce_reth *reth = droce_pkt_ext(pkt, DROCE_HDR_RETH);
	uint8_t plt = droce_feth_plt(feth), sel = droce_feth_sel(feth);
	uint32_t rkey = rte_be_to_cpu_32(reth->rkey);
	int access = 0;
	size_t mr_len;
	uint8_t *addr;

	if (plt == 0 || (plt & ~(DROCE_FLUSH_GLOBAL | DROCE_FLUSH_PERSISTENT)) ||
	    sel > DROCE_FLUSH_MR)
		return RR_INV_REQ;
	if (s->nres == 0)
		return RR_INV_ACC;
	if (plt & DROCE_FLUSH_GLOBAL)
		access |= DROCE_ACCESS_FLUSH_GLOBAL;
	if (plt & DROCE_FLUSH_PERSISTENT)
		access |= DROCE_ACCESS_FLUSH_PERSISTENT;
	if (sel == DROCE_FLUSH_MR)
		addr = verbs_mr_remote_whole(t->dev, t->qp->pd, rkey, access, &mr_len);
	else
		addr = transport_rkey_mem(t, rkey, rte_be_to_cpu_64(reth->va),
					  rte_be_to_cpu_32(reth->len), access);
	if (addr == NULL)
		return RR_ACCESS;
	if (res_busy(env, t))
		return RR_RD_EXCESS;
	rte_wmb();
	transport_resp_out_res(env, t, (uint32_t)(res_take(t, RK_FLUSH, psn) - s->res));
	return RR_OK;
}

static struct resp_res *res_find(struct transport_qp *t, uint8_t kind, uint32_t psn)
{
	struct transport_resp *s = &t->resp;
	uint32_t i;

	for (i = 0; i < s->nres; i++) {
		struct resp_res *r = &s->res[i];

		if (r->kind == kind && droce_psn_in_window(psn, r->first_psn,
			droce_psn_diff(r->last_psn, r->first_psn) + 1))
			return r;
	}
	return NULL;
}

/*
 * IBA 9.7.5.1.2 (C9-105..C9-113): a duplicate SEND/WRITE is ACKed again; a duplicate READ is
 * answered again from its RETH (memory is read again, as rxe does); a duplicate ATOMIC is
 * answered from the saved result and never executed twice, a duplicate ATOMIC_WRITE or FLUSH
 * answered again and not executed again.
 */
static enum transport_verdict resp_duplicate(struct transport_env *env, struct transport_qp *t,
					     const struct droce_pkt *pkt, uint32_t psn)
{
	struct transport_resp *s = &t->resp;
	struct resp_res *r = NULL;

	TCNT(env, t, duplicate_request);
	if (pkt->mask & (DROCE_M_SEND | DROCE_M_WRITE)) {
		transport_resp_out_ack(env, t, AETH_ACK_UNLIMITED, droce_psn_add(s->epsn,
										 DROCE_PSN_MAX));
		return TRANSPORT_RX_ACCEPTED;
	}
	if (pkt->mask & DROCE_M_READ) {
		const struct droce_reth *reth = droce_pkt_ext(pkt, DROCE_HDR_RETH);
		uint32_t dlen = rte_be_to_cpu_32(reth->len);
		uint64_t va = rte_be_to_cpu_64(reth->va);
		uint8_t *addr;

		r = res_find(t, RK_READ, psn);
		/* A replay names the R_Key of the READ it repeats (rxe replays from the key it
		 * kept) and a part of its range (as rxe checks): anything else is not a replay
		 * of it and is dropped. */
		if (r == NULL || rte_be_to_cpu_32(reth->rkey) != r->rkey || va < r->va_org ||
		    dlen > r->len_org || va - r->va_org > r->len_org - dlen)
			return TDROP(env, t, rx_dup_dropped);
		if (rkey_check(t, rte_be_to_cpu_32(reth->rkey), rte_be_to_cpu_64(reth->va), dlen,
			       IBV_ACCESS_REMOTE_READ, &addr) != RR_OK) {
			/* The READ's memory was deregistered since it was answered: as rxe's
			 * replay (an R_Key violation), NAK remote access error, QP to ERR. */
			return resp_error(env, t, RR_ACCESS, psn);
		}
		r->va = va;
		r->rkey = rte_be_to_cpu_32(reth->rkey);
		r->len = dlen;
		r->off = 0;
		r->start_psn = psn;
	} else if (pkt->mask & (DROCE_M_ATOMIC | DROCE_M_ATMWR | DROCE_M_FLUSH)) {
		r = res_find(t, (pkt->mask & DROCE_M_ATOMIC) ? RK_ATOMIC :
				(pkt->mask & DROCE_M_ATMWR) ? RK_ATOMIC_WRITE : RK_FLUSH, psn);
		if (r == NULL)
			return TDROP(env, t, rx_dup_dropped);
	} else {
		return TDROP(env, t, rx_dup_dropped);
	}
	if (!r->queued)
		transport_resp_out_res(env, t, r - s->res);
	return TRANSPORT_RX_ACCEPTED;
}

/*
 * Class A/C errors (IBA 9.9.3.1.x): NAK, complete the receive WQE in error if one is held,
 * and put the QP in ERR with the affiliated event the verbs documentation gives the error
 * (ibv_get_async_event(3); NVIDIA's RDMA Aware Programming manual lists which error raises
 * which; rxe raises none). RR_INV_RKEY (rxe's class J) is not NAKed: the caller ACKed it.
 */
static enum transport_verdict resp_error(struct transport_env *env, struct transport_qp *t,
					 enum resp_result rr, uint32_t psn)
{
	struct transport_resp *s = &t->resp;
	enum transport_verdict v = TRANSPORT_RX_ACCEPTED;	/* RR_OP_ERR: our receive SGE */
	uint8_t code = DROCE_NAK_INV_REQ;
	enum ibv_wc_status st = IBV_WC_REM_INV_REQ_ERR;
	int ev = IBV_EVENT_QP_ACCESS_ERR;

	if (rr == RR_ACCESS) {
		code = DROCE_NAK_REM_ACCESS;
		st = IBV_WC_REM_ACCESS_ERR;
		ev = IBV_EVENT_QP_ACCESS_ERR;
		v = TDROP(env, t, access_err);
	} else if (rr == RR_OP_ERR) {
		code = DROCE_NAK_REM_OP;
		st = IBV_WC_LOC_PROT_ERR;
		ev = IBV_EVENT_QP_FATAL;
	} else {
		if (rr == RR_INV_REQ || rr == RR_INV_RKEY)
			ev = IBV_EVENT_QP_REQ_ERR;
		if (rr == RR_LEN)
			st = IBV_WC_LOC_LEN_ERR;
		v = TDROP(env, t, inv_req_err);
		if (rr == RR_RD_EXCESS)	/* the verdict names the reason, not its class */
			v = TDROP(env, t, rx_rd_atomic_excess);
	}
	if (rr != RR_INV_RKEY)
		transport_resp_out_ack(env, t, DROCE_AETH_NAK | code, psn);
	s->err = true;
	if (s->rwqe != NULL)
		transport_recv_complete_msg(t, st, IBV_WC_RECV, s->recv_off, NULL);
	verbs_qp_error(t->qp, ev);
	transport_state_sync(t);
	return v;
}

void transport_resp_access_err(struct transport_env *env, struct transport_qp *t, uint32_t psn)
{
	if (!t->resp.err)	/* a response owed before the error ended the QP: just stop */
		resp_error(env, t, RR_ACCESS, psn);
}

static enum resp_result resp_execute(struct transport_env *env, struct transport_qp *t, const struct rte_mbuf *m,
				     const struct droce_pkt *pkt, uint32_t psn)
{
	if (pkt->mask & DROCE_M_SEND)
		return do_send(t, m, pkt);
	if (pkt->mask & DROCE_M_WRITE)
		return do_write(t, m, pkt);
	if (pkt->mask & DROCE_M_READ)
		return do_read(env, t, pkt, psn);
	if (pkt->mask & DROCE_M_ATOMIC)
		return do_atomic(env, t, pkt, psn);
	if (pkt->mask & DROCE_M_ATMWR)
		return do_atomic_write(env, t, m, pkt, psn);
	if (pkt->mask & DROCE_M_FLUSH)
		return do_flush(env, t, pkt, psn);
	return RR_INV_REQ;	/* no other request opcode exists */
}

/* After an accepted packet: advance the expected PSN and ACK what asked for it (an
 * AckReq is answered; coalesced ACKs are cumulative). */
static void resp_accepted(struct transport_env *env, struct transport_qp *t,
			  const struct droce_pkt *pkt, uint32_t psn)
{
	struct transport_resp *s = &t->resp;
	const struct resp_res *r;

	s->prev_mask = pkt->mask;
	if (pkt->mask & DROCE_M_READ) {
		r = res_find(t, RK_READ, psn);
		s->epsn = droce_psn_add(r->last_psn, 1);
		s->since_ack = 0;
		return;
	}
	s->epsn = droce_psn_add(psn, 1);
	if (pkt->mask & (DROCE_M_ATOMIC | DROCE_M_ATMWR | DROCE_M_FLUSH)) {	/* its response */
		s->since_ack = 0;
		return;
	}
	if (droce_bth_ackreq(droce_pkt_bth(pkt)) || ++s->since_ack >= TRANSPORT_ACKREQ_EVERY * 2) {
		transport_resp_out_ack(env, t, AETH_ACK_UNLIMITED, psn);
		s->since_ack = 0;
	}
}

enum transport_verdict transport_resp_rx(struct transport_env *env, struct transport_qp *t,
					 const struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	struct transport_resp *s = &t->resp;
	enum ibv_qp_state st = transport_state(t);
	uint32_t psn = droce_bth_psn(droce_pkt_bth(pkt));
	enum transport_verdict v = TRANSPORT_RX_ACCEPTED;
	enum resp_result rr;
	int32_t d;

	/* IBA 10.3.1: requests are accepted in RTR, RTS, SQD (and SQE). */
	if (s->err || (st != IBV_QPS_RTR && st != IBV_QPS_RTS && st != IBV_QPS_SQD &&
		       st != IBV_QPS_SQE))
		return TDROP(env, t, rx_qp_state);
	d = droce_psn_diff(psn, s->epsn);
	if (d > 0) {
		/* Out of sequence: one NAK per gap, then silence until epsn arrives. */
		TCNT(env, t, out_of_sequence);
		if (!s->nak_sent) {
			s->nak_sent = true;
			transport_resp_out_ack(env, t, DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR,
					       s->epsn);
			TCNT(env, t, seq_nak_sent);
		}
		return TRANSPORT_RX_ACCEPTED;	/* answered: the requester goes back */
	}
	if (d < 0)
		return resp_duplicate(env, t, pkt, psn);
	if (!transport_msg_seq_ok(s->prev_mask, pkt->mask)) {
		/* An RC request in sequence whose opcode does not fit the message open (or that
		 * continues none) is a class C error: NAK invalid request, the QP to error, as
		 * rxe answers its missing FIRST / missing LAST. A lost or reordered
		 * packet never gets here: its PSN is out of sequence above. */
		v = TDROP(env, t, rx_opcode_seq);
		resp_error(env, t, RR_INV_REQ, psn);
		return v;
	}
	s->nak_sent = false;
	rr = qp_allows(t, pkt->mask) ? resp_execute(env, t, m, pkt, psn) : RR_INV_REQ;
	switch (rr) {
	case RR_OK:
		/* IBA 11.6.3: the first packet accepted in RTR (not one dropped or NAKed). */
		if (unlikely(s->comm_est_armed)) {
			s->comm_est_armed = false;
			if (transport_state(t) == IBV_QPS_RTR)
				verbs_qp_event(t->qp, IBV_EVENT_COMM_EST);
		}
		resp_accepted(env, t, pkt, psn);
		break;
	case RR_INV_RKEY:
		/* As rxe (class J): the message is ACKed as its AckReq asks, the receive WQE
		 * completes REM_INV_REQ_ERR and the QP goes to ERR. */
		if (droce_bth_ackreq(droce_pkt_bth(pkt)))
			transport_resp_out_ack(env, t, AETH_ACK_UNLIMITED, psn);
		v = resp_error(env, t, rr, psn);
		break;
	case RR_RNR:
		/* RNR NAK with our min_rnr_timer; the packet is not consumed. Later
		 * packets are out of sequence and stay silent until the retry arrives. */
		transport_resp_out_ack(env, t, DROCE_AETH_RNR_NAK | (t->min_rnr_timer & 0x1f), psn);
		s->nak_sent = true;
		TCNT(env, t, rnr_nak_sent);
		break;
	default:
		v = resp_error(env, t, rr, psn);
		break;
	}
	return v;
}
