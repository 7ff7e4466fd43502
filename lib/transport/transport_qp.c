/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The engine-facing side of the transport (transport.h): a QP's transport state is created,
 * follows modify_qp, receives frames (requests to the responder, responses to the completer),
 * transmits (responder output first, so that the peer's requester keeps moving, then
 * requests) and keeps two timers (retransmission, RNR wait).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "transport_private.h"

RTE_LOG_REGISTER(transport_logtype, droce.transport, NOTICE);

void transport_forget_wqes(struct transport_qp *t)
{
	struct transport_req *r = &t->req;

	r->comp = r->cur = r->head;
	r->off = 0;
	r->nrd = 0;
	r->nlocal = 0;
	r->need_retry = false;
	r->rnr_wait = false;
	r->rto_deadline = NO_DEADLINE;
	r->rnr_deadline = NO_DEADLINE;
	t->resp.rwqe = NULL;
}

/*
 * In ERR verbs completes (flushes) every WQE handed out: the transport holds no reference to
 * one from the moment it learns of the move (here, or transport_qp_modified()) and takes none
 * while the QP stays there.
 */
void transport_state_sync(struct transport_qp *t)
{
	verbs_qp_apply_fatal(t->qp);
	t->state = verbs_qp_cur_state(t->qp);
	if (t->state == IBV_QPS_ERR) {
		transport_forget_wqes(t);
		if (unlikely(t->rec != NULL))
			transport_rec_err(t);
	}
}

void transport_apply_fatal(struct transport_qp *t)
{
	transport_fatal_check(t);
}

struct transport_qp *transport_qp_create(struct droce_qp *qp, struct droce_counters *dev_cnt)
{
	struct transport_qp *t;
	uint32_t n;

	if (qp == NULL || dev_cnt == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC &&
	    qp->qp_type != IBV_QPT_UD) {
		rte_errno = ENOTSUP;
		return NULL;
	}
	t = rte_zmalloc("droce_transport_qp", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	n = rte_align32pow2(RTE_MAX(verbs_qp_cap(qp)->max_send_wr, 1u));
	t->req.ring = rte_zmalloc("droce_transport_sq", sizeof(*t->req.ring) * n,
				  RTE_CACHE_LINE_SIZE);
	if (t->req.ring == NULL) {
		rte_free(t);
		rte_errno = ENOMEM;
		return NULL;
	}
	t->req.mask = n - 1;
	t->qp = qp;
	t->dev = qp->context->device;
	t->dev_cnt = dev_cnt;
	t->state = verbs_qp_cur_state(qp);
	t->fatal = verbs_qp_fatal_mark(qp);
	t->type = qp->qp_type;
	t->qpn = qp->qp_num;
	t->mtu = transport_port_mtu(qp);	/* UD keeps it; RC/UC: path_mtu at RTR */
	transport_req_reset(t, 0);
	transport_resp_reset(t);
	return t;
}

void transport_qp_destroy(struct transport_qp *t)
{
	if (t == NULL)
		return;
	rte_free(t->rec);
	rte_free(t->req.ring);
	rte_free(t);
}

/* IBA 11.2.5 attributes, as the last modify committed them. */
static void apply_attrs(struct transport_env *env, struct transport_qp *t, int mask)
{
	const struct ibv_qp_attr *a = verbs_qp_attr(t->qp);

	if (mask & IBV_QP_PATH_MTU)
		t->mtu = 128u << a->path_mtu;	/* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5 */
	if (mask & (IBV_QP_AV | IBV_QP_DEST_QPN)) {
		t->dqpn = a->dest_qp_num;
		transport_path_set(t);
	}
	if (mask & IBV_QP_RQ_PSN)
		t->resp.epsn = a->rq_psn;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		t->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		t->resp.nres = RTE_MIN(a->max_dest_rd_atomic, (uint8_t)DROCE_MAX_RD_ATOM);
	if ((mask & IBV_QP_SQ_PSN) && t->req.comp == t->req.head)
		transport_req_reset(t,
				    a->sq_psn);      /* only while nothing is outstanding (SQD) */
	if (mask & IBV_QP_TIMEOUT)
		t->req.rto_ticks = transport_rto_ticks(a->timeout, env->hz);
	if (mask & IBV_QP_RETRY_CNT)
		t->req.retry_left = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		t->req.rnr_left = a->rnr_retry;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		t->max_rd_atomic = a->max_rd_atomic;
}

unsigned int transport_flush(struct transport_env *env, struct transport_qp *t)
{
	struct transport_resp *s = &t->resp;

	if (s->since_ack != 0 && !s->err) {
		/* Accepted packets that did not ask for an ACK yet: acknowledge them now. */
		transport_resp_out_ack(env, t, AETH_ACK_UNLIMITED, droce_psn_add(s->epsn,
										 DROCE_PSN_MAX));
		s->since_ack = 0;
	}
	return transport_resp_tx(env, t, UINT_MAX);
}

void transport_qp_modified(struct transport_env *env, struct transport_qp *t, int attr_mask)
{
	enum ibv_qp_state st = verbs_qp_cur_state(t->qp);

	t->state = st;

	if (t->cc.p == NULL && env->dcqcn != NULL)
		transport_dcqcn_init(&t->cc, env->dcqcn(env, t->dev));	/* before the path: ECN */
	/* Leaving service (RESET forgets the responder's output, ERR ends it): send what is owed
	 * to the peer first. */
	if ((st == IBV_QPS_RESET || st == IBV_QPS_ERR) && (attr_mask & IBV_QP_STATE))
		transport_flush(env, t);
	if (st == IBV_QPS_RESET) {
		/* IBA 10.3.1: RESET forgets everything; the queues were emptied by verbs. */
		transport_req_reset(t, 0);
		transport_resp_reset(t);
		transport_dcqcn_init(&t->cc, t->cc.p);
		if (t->rec != NULL)
			t->rec->written = false;	/* its next ERR is written too */
		return;
	}
	if (st == IBV_QPS_ERR) {
		transport_forget_wqes(t);
		if (unlikely(t->rec != NULL))
			transport_rec_err(t);
		return;
	}
	apply_attrs(env, t, attr_mask);
	if (st == IBV_QPS_RTR && (attr_mask & IBV_QP_STATE))
		t->resp.comm_est_armed = true;
}

enum transport_verdict transport_rx(struct transport_env *env, struct transport_qp *t,
				    struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	const struct droce_bth *bth = droce_pkt_bth(pkt);
	enum transport_verdict v;
	enum ibv_qp_state st;

	transport_fatal_check(t);	/* a fatal QP enters ERR before it takes the frame */
	if (unlikely(t->rec != NULL))
		transport_rec_frame(env, t, m, TREC_RX);
	st = transport_state(t);
	/* Per QP only: the device counted the frame when its port received it (engine). */
	t->cnt.rx_packets++;
	t->cnt.rx_bytes += rte_pktmbuf_pkt_len(m);
	t->cnt.rx_roce++;
	if (unlikely((pkt->tclass & DROCE_ECN_MASK) == DROCE_ECN_CE))
		transport_cc_rx_ce(env, t, pkt);
	if (t->type != IBV_QPT_RC) {
		if (unlikely(pkt->opcode == DROCE_OP_CNP))
			v = transport_cc_rx_cnp(env, t, pkt);
		else
			v = transport_unreliable_rx(env, t, m, pkt);	/* UC, UD */
	} else if (droce_opcode_transport(pkt->opcode) != DROCE_TRANSPORT_RC) {
		if (pkt->opcode == DROCE_OP_CNP)
			v = transport_cc_rx_cnp(env, t, pkt);	/* no request, no response */
		else
			v = TDROP(env, t, rx_bad_opcode);
	} else if ((droce_bth_pkey(bth) & 0x7fff) != (DROCE_DEFAULT_PKEY & 0x7fff)) {
		v = TDROP(env, t, rx_bad_pkey);	/* IBA 9.6.1.1 (C9-42): P_Key mismatch */
	} else if (st == IBV_QPS_RESET || st == IBV_QPS_INIT) {
		v = TDROP(env, t, rx_qp_state);
	} else if (!transport_path_matches(t, pkt)) {
		v = TDROP(env, t, rx_bad_addr);	/* not from our peer: spoofed or misrouted */
	} else if (pkt->mask & DROCE_M_REQ) {
		v = transport_resp_rx(env, t, m, pkt);
	} else if (pkt->mask & DROCE_M_RESP) {
		v = transport_comp_rx(env, t, m, pkt);
	} else {
		v = TDROP(env, t, rx_bad_opcode);
	}
	transport_mbuf_free(env, m);
	return v;
}

unsigned int transport_tx(struct transport_env *env, struct transport_qp *t, unsigned int budget)
{
	enum ibv_qp_state st;
	unsigned int n;

	transport_fatal_check(t);
	st = transport_state(t);
	if (st == IBV_QPS_RESET)
		return 0;
	if (st == IBV_QPS_ERR) {
		/* WRs posted in ERR complete with flush status when looked at (verbs). */
		if (verbs_wq_pending(t->qp, true))
			verbs_sq_next(t->qp);
		if (verbs_wq_pending(t->qp, false))
			verbs_rq_next(t->qp);
		return transport_resp_tx(env, t, budget);	/* the NAK that ended the QP */
	}
	if (unlikely(t->path_wait))
		return 0;	/* as transport_tx_pending() says */
	n = transport_resp_tx(env, t, budget);
	if (t->type != IBV_QPT_RC)
		return n + transport_unreliable_tx(env, t, budget - n);
	return n + transport_req_tx(env, t, budget - n);
}

bool transport_tx_pending(const struct transport_qp *t)
{
	enum ibv_qp_state st = transport_state(t);

	if (st == IBV_QPS_RESET)
		return false;
	if (unlikely(t->path_wait) && st != IBV_QPS_ERR)
		return false;	/* no frame can leave: its deadline or transport_path_wake() */
	if (resp_pending(t))
		return true;
	if (st == IBV_QPS_ERR)
		return verbs_wq_pending(t->qp, true) || verbs_wq_pending(t->qp, false);
	if (unlikely(t->cc.wait))
		return false;	/* the pacer holds the requester: its deadline wakes it */
	return t->type == IBV_QPT_RC ? transport_req_pending(t) : transport_unreliable_pending(t);
}

uint64_t transport_deadline(const struct transport_qp *t)
{
	uint64_t d = RTE_MIN(t->req.rto_deadline, t->req.rnr_deadline);

	if (unlikely(t->path_wait))
		d = RTE_MIN(d, t->path_next);
	return unlikely(t->cc.wait) ? RTE_MIN(d, t->cc.tx_next) : d;
}

void transport_timeout(struct transport_env *env, struct transport_qp *t)
{
	enum ibv_qp_state st;

	transport_fatal_check(t);
	st = transport_state(t);
	if (t->cc.wait && (int64_t)(env->now - t->cc.tx_next) >= 0)
		t->cc.wait = false;	/* the requester looks at its pacer again */
	if (t->path_wait && (int64_t)(env->now - t->path_next) >= 0)
		t->path_wait = false;	/* the path is tried again */
	if (st != IBV_QPS_RTS && st != IBV_QPS_SQD)
		return;
	transport_comp_timeout(env, t);
}
