/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The RC completer: ACKs, NAKs, READ responses and atomic ACKs become send completions.
 * ACKs are cumulative (IBA 9.7.5.1.1): a response for PSN p completes every SEND/WRITE
 * that ended before it. A READ or ATOMIC completes only with its own response; a later
 * response (an ACK, a READ response or atomic ACK past the one expected) means the expected
 * ones were lost, and the requester goes back for them at once: an implied NAK sequence
 * error. NAKs retransmit (sequence error), wait (RNR) or end the QP (class B/C/D remote
 * errors). A response that cannot be the one for its PSN (a READ response or atomic ACK
 * naming a PSN of another kind of request, a READ response of the wrong size or place at the
 * PSN expected) ends the QP with IBV_WC_BAD_RESP_ERR (rxe's COMPST_ERROR for them).
 */
#include <string.h>

#include "transport_private.h"

/* Results of one response, gathered before the completions are written. */
struct comp_ctx {
	uint32_t ndone;		/* WQEs completed successfully, oldest first */
	bool progress;
	bool cut;		/* a retry cut the recovery window */
	bool bad;		/* the response cannot be the one for its PSN */
};

static struct req_wqe *head_wqe(struct transport_qp *t)
{
	struct transport_req *r = &t->req;
	struct req_wqe *e;

	if (r->comp == r->head)
		return NULL;
	e = &r->ring[r->comp & r->mask];
	return e->started ? e : NULL;
}

static void comp_one(struct transport_qp *t, struct comp_ctx *c, struct req_wqe *e)
{
	struct transport_req *r = &t->req;

	if (unlikely(e->kind == RK_LOCAL)) {	/* no PSN, no resource */
		r->nlocal--;
	} else {
		if (req_kind_rd_atomic(e->kind))
			r->nrd--;
		if (droce_psn_le(r->comp_psn, e->last_psn))
			r->comp_psn = droce_psn_add(e->last_psn, 1);
	}
	r->comp++;
	c->ndone++;
	c->progress = true;
}

/* Complete the SEND/WRITE WQEs that end before @psn (at it too when @incl), and the done local
 * operations between them. */
static void comp_implicit(struct transport_qp *t, struct comp_ctx *c, uint32_t psn, bool incl)
{
	struct req_wqe *e;
	int32_t d;

	for (;;) {
		while ((e = head_wqe(t)) != NULL && e->kind <= RK_WRITE) {
			d = droce_psn_diff(psn, e->last_psn);
			if (d < 0 || (d == 0 && !incl))
				return;
			comp_one(t, c, e);
		}
		if (likely(e == NULL || e->kind != RK_LOCAL))
			return;
		comp_one(t, c, e);	/* done: started */
	}
}

/* The done local operations at the head: every WQE before them completed. */
static void comp_local_head(struct transport_qp *t, struct comp_ctx *c)
{
	struct req_wqe *e;

	while ((e = head_wqe(t)) != NULL && e->kind == RK_LOCAL)
		comp_one(t, c, e);
}

/* Write the successful completions gathered in @c. */
static void comp_flush(struct transport_qp *t, struct comp_ctx *c)
{
	if (c->ndone != 0 && verbs_sq_complete(t->qp, c->ndone) < 0)
		transport_state_sync(t);	/* the send CQ overran */
	c->ndone = 0;
}

/* The head WQE failed with @st: its completion moves the QP to ERR and flushes the rest
 * (IBA 10.8.3.3: an RC requester error is fatal for the QP). */
static void comp_fail(struct transport_qp *t, struct comp_ctx *c, enum ibv_wc_status st)
{
	comp_flush(t, c);
	verbs_sq_complete_err(t->qp, st, 0);
	transport_state_sync(t);
}

void transport_comp_locals(struct transport_qp *t)
{
	struct comp_ctx c = { 0 };

	comp_local_head(t, &c);
	comp_flush(t, &c);
}

void transport_comp_local_err(struct transport_env *env, struct transport_qp *t)
{
	struct transport_req *r = &t->req;
	struct comp_ctx c = { 0 };
	const struct req_wqe *e;

	RTE_SET_USED(env);
	if (r->comp == r->head)
		return;
	/* The oldest WQE only: a started one (its memory deregistered under it, send_packet())
	 * fails once every WQE before it completed. */
	e = &r->ring[r->comp & r->mask];
	if (e->err)
		comp_fail(t, &c, e->err);
}

/* The retransmission timer runs while PSNs are unacknowledged (C9-140). */
static void rto_rearm(struct transport_env *env, struct transport_qp *t)
{
	struct transport_req *r = &t->req;

	if (r->rto_ticks != 0 && droce_psn_lt(r->comp_psn, r->psn_hwm) && !r->rnr_wait)
		r->rto_deadline = env->now + r->rto_ticks;
	else
		r->rto_deadline = NO_DEADLINE;
}

/* What starts a retry. */
enum retry_cause { RETRY_NAK, RETRY_IMPLIED_NAK, RETRY_TIMEOUT };

/*
 * The recovery window. Go-back-N resends everything from the oldest unacknowledged PSN, and a
 * requester that resent its whole window at each retry would flood a responder that is slow
 * rather than gone: Linux Soft-RoCE in a busy VM answers 16 QPs' 64-packet messages 100-200
 * ms late, each of droce's 67 ms timeouts (perftest's and the pingpongs' timeout 14) resent
 * all 1 024 packets again, the backlog grew and a QP failed with RETRY_EXC_ERR while the peer
 * was alive. So a retry cuts the window, as TCP does: to one packet after a timeout (nothing
 * is known to get through), to half of what was outstanding after a NAK (the peer is alive
 * and answered; one packet was lost). Each PSN acknowledged then opens it by one (doubling
 * per round trip) up to TRANSPORT_MAX_UNACKED, the requester's limit. The packet that fills the
 * window asks for an ACK (transport_req.c), since Linux acknowledges only packets with AckReq set.
 */
static void window_cut(struct transport_env *env, struct transport_qp *t, struct comp_ctx *c,
		       enum retry_cause cause)
{
	struct transport_req *r = &t->req;
	uint32_t w = 1;

	if (cause != RETRY_TIMEOUT)
		w = RTE_MAX((uint32_t)droce_psn_diff(r->psn_hwm, r->comp_psn) / 2, 1u);
	r->cwnd = RTE_MIN(r->cwnd, w);
	c->cut = true;
	TCNT(env, t, window_cut);
}

static void window_open(struct transport_req *r, uint32_t acked)
{
	r->cwnd = RTE_MIN(r->cwnd + acked, (uint32_t)TRANSPORT_MAX_UNACKED);
}

/*
 * Each retry (timeout, sequence NAK, implied NAK) uses one of retry_cnt; none left is fatal.
 * Responses already in flight behind a gap (more NAKs, responses past a lost one) do not
 * start another retry until one made progress (rxe's started_retry); timeouts always do.
 */
static void comp_retry(struct transport_env *env, struct transport_qp *t, struct comp_ctx *c,
		       enum retry_cause cause)
{
	struct transport_req *r = &t->req;

	if (cause == RETRY_TIMEOUT)
		TCNT(env, t, rto_expired);
	else if (r->retry_started)
		return;
	if (r->retry_left == 0) {
		const struct req_wqe *h = head_wqe(t);

		TRANSPORT_LOG(DEBUG, "qp %u: retries exhausted at psn %u (sent up to %u), head %s "
			      "psn %u-%u", t->qpn, r->comp_psn, r->psn_hwm,
			      h == NULL ? "none" : h->kind == RK_READ ? "READ" :
			      h->kind == RK_ATOMIC ? "ATOMIC" : h->kind == RK_ATOMIC_WRITE ?
			      "ATOMIC_WRITE" : h->kind == RK_FLUSH ? "FLUSH" : "SEND/WRITE",
			      h != NULL ? h->first_psn : 0, h != NULL ? h->last_psn : 0);
		TCNT(env, t, retry_exceeded);
		if (unlikely(t->rec != NULL))
			transport_rec_event(t, TREC_EV_RETRY_EXCEEDED);
		comp_fail(t, c, IBV_WC_RETRY_EXC_ERR);
		return;
	}
	if (cause == RETRY_IMPLIED_NAK)
		TCNT(env, t, implied_nak);
	r->retry_left--;
	r->retry_started = true;
	window_cut(env, t, c, cause);
	transport_req_retry(t);
	rto_rearm(env, t);
	if (unlikely(t->rec != NULL))
		transport_rec_event(t, cause == RETRY_TIMEOUT ? TREC_EV_RETRY_TIMEOUT :
				    cause == RETRY_NAK ? TREC_EV_RETRY_NAK :
				    TREC_EV_RETRY_IMPLIED_NAK);
}

static void reset_retries(struct transport_qp *t)
{
	const struct ibv_qp_attr *a = verbs_qp_attr(t->qp);

	t->req.retry_left = a->retry_cnt;
	t->req.rnr_left = a->rnr_retry;
	t->req.retry_started = false;
}

/* A response for @psn must be for a PSN sent and not yet acknowledged. */
static bool psn_expected(const struct transport_req *r, uint32_t psn)
{
	return !droce_psn_lt(psn, r->comp_psn) && droce_psn_lt(psn, r->psn_hwm);
}

static void on_ack(struct transport_env *env, struct transport_qp *t, struct comp_ctx *c,
		   uint32_t psn)
{
	struct transport_req *r = &t->req;
	struct req_wqe *e;

	comp_implicit(t, c, psn, true);
	e = head_wqe(t);
	if (e == NULL)
		return;
	if (e->kind <= RK_WRITE) {
		if (!droce_psn_lt(psn, e->first_psn)) {	/* part of a long message */
			r->comp_psn = droce_psn_add(psn, 1);
			c->progress = true;
		}
	} else if (!droce_psn_lt(psn, e->first_psn)) {
		/* ACKed past a READ/ATOMIC whose response never came: ask again. */
		comp_retry(env, t, c, RETRY_IMPLIED_NAK);
	}
}

static void on_nak(struct transport_env *env, struct transport_qp *t, struct comp_ctx *c,
		   uint32_t psn, uint8_t syn)
{
	struct transport_req *r = &t->req;
	struct req_wqe *e;

	comp_implicit(t, c, psn, false);
	e = head_wqe(t);
	if (e == NULL)
		return;
	if (e->kind <= RK_WRITE && droce_psn_lt(r->comp_psn, psn) &&
	    !droce_psn_lt(psn, e->first_psn)) {
		r->comp_psn = psn;	/* NAK(p) acknowledges everything before p */
		c->progress = true;
	}
	if ((syn & DROCE_AETH_TYPE_MASK) == DROCE_AETH_RNR_NAK) {
		TCNT(env, t, rnr_nak_rcvd);
		if (r->rnr_left == 0) {
			TCNT(env, t, rnr_retry_exceeded);
			if (unlikely(t->rec != NULL))
				transport_rec_event(t, TREC_EV_RNR_RETRY_EXCEEDED);
			comp_fail(t, c, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (r->rnr_left != 7)	/* rnr_retry 7 means retry forever */
			r->rnr_left--;
		r->rnr_wait = true;
		r->rnr_deadline = env->now + transport_rnr_ticks(syn & DROCE_AETH_VALUE_MASK,
								  env->hz);
		r->rto_deadline = NO_DEADLINE;
		if (unlikely(t->rec != NULL))
			transport_rec_event(t, TREC_EV_RNR_NAK);
		return;
	}
	TCNT(env, t, nak_rcvd);
	switch (syn & DROCE_AETH_VALUE_MASK) {
	case DROCE_NAK_PSN_SEQ_ERR:
		comp_retry(env, t, c, RETRY_NAK);
		break;
	case DROCE_NAK_INV_REQ:
		comp_fail(t, c, IBV_WC_REM_INV_REQ_ERR);
		break;
	case DROCE_NAK_REM_ACCESS:
		comp_fail(t, c, IBV_WC_REM_ACCESS_ERR);
		break;
	case DROCE_NAK_INV_RD_REQ:
		comp_fail(t, c, IBV_WC_REM_INV_RD_REQ_ERR);
		break;
	default:
		comp_fail(t, c, IBV_WC_REM_OP_ERR);
		break;
	}
}

/* Is @p psn one of the head WQE @p e's (after the implicit completions before it)? A
 * response of another kind there is a bad response. */
static bool is_other_kind(const struct req_wqe *e, uint8_t kind, uint32_t psn)
{
	return e != NULL && e->kind != kind && !droce_psn_lt(psn, e->first_psn) &&
	       !droce_psn_lt(e->last_psn, psn);
}

/* The head WQE @p e is an ATOMIC_WRITE or a FLUSH: its answer is an RDMA READ response ONLY
 * without payload at its PSN (as rxe answers both); anything else there is a bad response. */
static bool on_empty_read_resp(struct comp_ctx *c, const struct droce_pkt *pkt,
			       uint32_t psn, struct req_wqe *e)
{
	if (psn != e->first_psn)
		return false;	/* lost packets before it: an implied NAK (transport_comp_rx()) */
	if (pkt->payload_len != 0 || (pkt->mask & DROCE__ONLY) != DROCE__ONLY) {
		c->bad = true;
		return false;
	}
	return true;
}

/* @return false when the response does not fit the head WQE (dropped, counted; c->bad
 * when it cannot be the response for its PSN). */
static bool on_read_resp(struct transport_qp *t, struct comp_ctx *c, const struct rte_mbuf *m,
			 const struct droce_pkt *pkt, uint32_t psn)
{
	struct transport_req *r = &t->req;
	struct req_wqe *e;
	uint32_t off, want;

	comp_implicit(t, c, psn, false);
	e = head_wqe(t);
	if (e != NULL && (e->kind == RK_ATOMIC_WRITE || e->kind == RK_FLUSH)) {
		if (!on_empty_read_resp(c, pkt, psn, e))
			return false;
		comp_one(t, c, e);
		return true;
	}
	c->bad = is_other_kind(e, RK_READ, psn);
	if (e == NULL || e->kind != RK_READ || psn != r->comp_psn ||
	    droce_psn_lt(e->last_psn, psn))
		return false;	/* lost packets before it: an implied NAK (transport_comp_rx()) */
	off = (uint32_t)droce_psn_diff(psn, e->first_psn) * t->mtu;
	want = RTE_MIN(e->w->length - off, t->mtu);
	if (pkt->payload_len != want || (psn == e->last_psn) != !!(pkt->mask & DROCE_M_LAST)) {
		c->bad = true;	/* every response for this PSN has this size and place */
		return false;
	}
	/* Each SGE checked again: it may have been deregistered since the WQE started. */
	if (transport_sge_scatter(t, e->w->sge, e->w->num_sge, off, m, pkt->payload_off, NULL,
				  want) != IBV_WC_SUCCESS) {
		comp_fail(t, c, IBV_WC_LOC_PROT_ERR);	/* its memory was deregistered */
		return true;
	}
	r->comp_psn = droce_psn_add(psn, 1);
	c->progress = true;
	if (psn == e->last_psn)
		comp_one(t, c, e);
	return true;
}

static bool on_atomic_ack(struct transport_qp *t, struct comp_ctx *c,
			  const struct droce_pkt *pkt, uint32_t psn)
{
	const struct droce_atmack *a = droce_pkt_ext(pkt, DROCE_HDR_ATMACK);
	struct req_wqe *e;
	uint64_t orig;

	comp_implicit(t, c, psn, false);
	e = head_wqe(t);
	c->bad = is_other_kind(e, RK_ATOMIC, psn);
	if (e == NULL || e->kind != RK_ATOMIC || e->first_psn != psn)
		return false;
	/* The original value, in host order, into the WQE's 8-byte SGE (IBA 9.4.5). */
	orig = rte_be_to_cpu_64(a->orig);
	if (transport_sge_check(t, &e->w->sge[0], IBV_ACCESS_LOCAL_WRITE) != IBV_WC_SUCCESS) {
		comp_fail(t, c, IBV_WC_LOC_PROT_ERR);	/* its memory was deregistered */
		return true;
	}
	memcpy((void *)(uintptr_t)e->w->sge[0].addr, &orig, sizeof(orig));
	comp_one(t, c, e);
	return true;
}

enum transport_verdict transport_comp_rx(struct transport_env *env, struct transport_qp *t,
					 const struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	struct transport_req *r = &t->req;
	uint32_t psn = droce_bth_psn(droce_pkt_bth(pkt));
	const struct droce_aeth *aeth = droce_pkt_ext(pkt, DROCE_HDR_AETH);
	enum ibv_qp_state st = transport_state(t);
	struct comp_ctx c = { 0 };
	uint8_t syn = aeth != NULL ? droce_aeth_syndrome(aeth) : 0;
	uint32_t from = r->comp_psn;
	enum transport_verdict v = TRANSPORT_RX_ACCEPTED;
	bool ok = true;

	if (st != IBV_QPS_RTS && st != IBV_QPS_SQD)
		return TDROP(env, t, rx_qp_state);
	if (!psn_expected(r, psn))
		return TDROP(env, t, rx_resp_dropped);	/* duplicate or stale response */
	if (pkt->mask & DROCE_M_READ) {
		ok = on_read_resp(t, &c, m, pkt, psn);
	} else if (pkt->mask & DROCE_M_ATOMIC) {
		ok = on_atomic_ack(t, &c, pkt, psn);
	} else if ((syn & DROCE_AETH_TYPE_MASK) == DROCE_AETH_ACK) {
		TCNT(env, t, ack_rcvd);
		on_ack(env, t, &c, psn);
	} else {
		on_nak(env, t, &c, psn, syn);
	}
	if (c.bad) {
		v = TDROP(env, t, rx_bad_resp);
		comp_fail(t, &c, IBV_WC_BAD_RESP_ERR);
	} else if (!ok) {
		const struct req_wqe *e = head_wqe(t);

		v = TDROP(env, t, rx_resp_dropped);
		/* A READ response or atomic ACK past the one the head READ/ATOMIC waits for:
		 * those between were lost (responses come in PSN order). Asking again now, not
		 * after the local ACK timeout, matters: with Linux's rdma_cm over RoCE the
		 * timeout is 19 (2.1 s), and a long READ over a lossy link loses a packet of
		 * nearly every response. */
		if (e != NULL && req_kind_rd_atomic(e->kind) && droce_psn_lt(r->comp_psn, psn))
			comp_retry(env, t, &c, RETRY_IMPLIED_NAK);
	}
	if (transport_state(t) == IBV_QPS_ERR)
		return v;	/* comp_fail() wrote every completion */
	if (c.progress) {
		reset_retries(t);
		rto_rearm(env, t);
		if (!c.cut)
			window_open(r, (uint32_t)droce_psn_diff(r->comp_psn, from));
	}
	/* The requester may be retransmitting what was just acknowledged: skip ahead. */
	if (!r->need_retry && droce_psn_lt(r->psn, r->comp_psn))
		transport_req_retry(t);
	if (unlikely(r->nlocal != 0))
		comp_local_head(t, &c);	/* after a READ or atomic, say */
	comp_flush(t, &c);
	transport_comp_local_err(env, t);
	return v;
}

void transport_comp_timeout(struct transport_env *env, struct transport_qp *t)
{
	struct transport_req *r = &t->req;
	struct comp_ctx c = { 0 };

	if (r->rnr_wait && env->now >= r->rnr_deadline) {
		/* After the RNR timer, the NAKed request is sent again. */
		r->rnr_wait = false;
		r->rnr_deadline = NO_DEADLINE;
		transport_req_retry(t);
		rto_rearm(env, t);
		if (unlikely(t->rec != NULL))
			transport_rec_event(t, TREC_EV_RNR_WAIT_OVER);
	}
	if (r->rto_deadline != NO_DEADLINE && env->now >= r->rto_deadline) {
		if (droce_psn_lt(r->comp_psn, r->psn_hwm))
			comp_retry(env, t, &c, RETRY_TIMEOUT);
		else
			r->rto_deadline = NO_DEADLINE;
	}
}
