/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The engine side of the work queues (verbs_engine.h): handing out WQEs, completing them with
 * selective signalling, error transitions and flushes. Everything here runs as the consumer
 * of the QP's queues (the owner, or the single driver of an unowned QP): fetch and done are
 * private to it, tail is published with store-release (verbs_ring_retire()).
 */
#include <errno.h>
#include <string.h>

#include "verbs_private.h"

static enum ibv_wc_opcode wc_opcode(uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case DROCE_WR_FLUSH:
		return DROCE_WC_FLUSH;
	default:
		return IBV_WC_SEND;
	}
}

static void send_wc(const struct verbs_qp *qp, const struct verbs_send_wqe *w,
		    enum ibv_wc_status st, uint32_t vendor_err, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = st;
	wc->opcode = wc_opcode(w->opcode);
	wc->vendor_err = vendor_err;
	wc->byte_len = w->length;
	wc->qp_num = qp->pub.qp_num;
}

/* Complete every send WQE not yet completed with FLUSH_ERR, oldest first. */
/*
 * WQEs published and not yet handed out. The head the producer moves is loaded again only when
 * the last load's WQEs are used up: the engine reads the line the application writes once per
 * batch of posts, not once per WQE.
 */
static uint32_t wq_ready(struct verbs_wq *q)
{
	if (q->seen_head == q->fetch)
		q->seen_head = q->fetch + verbs_ring_ready(&q->r, q->fetch);
	return q->seen_head - q->fetch;
}

static void flush_sq(struct verbs_qp *qp)
{
	struct verbs_cq *cq = to_vcq(qp->pub.send_cq);
	struct verbs_wq *q = &qp->sq;
	uint32_t head = verbs_ring_ready(&q->r, q->done) + q->done;
	struct ibv_wc wc;

	while (q->done != head) {
		send_wc(qp, verbs_wq_slot(q, q->done), IBV_WC_WR_FLUSH_ERR, 0, &wc);
		verbs_ring_retire(&q->r, ++q->done);	/* slot free before its CQE shows */
		verbs_cq_push(cq, &wc, false);
	}
	q->fetch = q->seen_head = q->done;
}

static void flush_rq(struct verbs_qp *qp)
{
	struct verbs_cq *cq = to_vcq(qp->pub.recv_cq);
	struct verbs_wq *q = &qp->rq;
	uint32_t head;
	struct ibv_wc wc;

	if (qp->pub.srq != NULL)
		return;	/* SRQ WQEs belong to the SRQ, not to this QP */
	head = verbs_ring_ready(&q->r, q->done) + q->done;
	while (q->done != head) {
		const struct verbs_recv_wqe *w = verbs_wq_slot(q, q->done);

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = IBV_WC_RECV;
		wc.qp_num = qp->pub.qp_num;
		verbs_ring_retire(&q->r, ++q->done);	/* slot free before its CQE shows */
		verbs_cq_push(cq, &wc, false);
	}
	q->fetch = q->seen_head = q->done;
}

int verbs_qp_flush(struct verbs_qp *qp, bool sq, bool rq)
{
	if (sq)
		flush_sq(qp);
	if (rq)
		flush_rq(qp);
	return 0;
}

void verbs_qp_set_state(struct verbs_qp *qp, enum ibv_qp_state st)
{
	qp->attr.qp_state = st;
	__atomic_store_n(&qp->pub.state, st, __ATOMIC_RELAXED);
	/* Pairs with the load-acquire in verbs_qp_state(). */
	__atomic_store_n(&qp->state, (uint32_t)st, __ATOMIC_RELEASE);
}

void verbs_qp_reset_queues(struct verbs_qp *qp)
{
	struct verbs_wq *qs[2] = { &qp->sq, &qp->rq };
	unsigned int i;

	for (i = 0; i < RTE_DIM(qs); i++) {
		if (qs[i]->buf == NULL)
			continue;
		verbs_lock(&qs[i]->lock);	/* no post runs meanwhile */
		qs[i]->fetch = 0;
		qs[i]->done = 0;
		qs[i]->seen_head = 0;
		verbs_ring_retire(&qs[i]->r, 0);
		verbs_ring_publish(&qs[i]->r, 0);
		verbs_unlock(&qs[i]->lock);
	}
}

/* Caller holds ctl_lock. IBA 10.3.1 / 11.6.3: in ERR every WQE completes with flush status;
 * a QP on an SRQ reports the last WQE reached. */
/* Move to ERR without flushing yet; false when the QP was in RESET or ERR already. */
static bool to_err_locked(struct verbs_qp *qp)
{
	uint32_t st = verbs_qp_state(qp);

	if (st == IBV_QPS_RESET || st == IBV_QPS_ERR)
		return false;
	verbs_qp_set_state(qp, IBV_QPS_ERR);
	return true;
}

static void flush_err_locked(struct verbs_qp *qp)
{
	verbs_qp_flush(qp, true, true);
	if (qp->pub.srq != NULL)
		verbs_qp_event(&qp->pub, IBV_EVENT_QP_LAST_WQE_REACHED);
}

static void enter_err_locked(struct verbs_qp *qp)
{
	if (to_err_locked(qp))
		flush_err_locked(qp);
}

void verbs_qp_enter_err(struct verbs_qp *qp)
{
	pthread_mutex_lock(&qp->ctl_lock);
	enter_err_locked(qp);
	pthread_mutex_unlock(&qp->ctl_lock);
}

void verbs_qp_check_cqs(struct verbs_qp *qp)
{
	verbs_cq_fail(to_vcq(qp->pub.send_cq));
	verbs_cq_fail(to_vcq(qp->pub.recv_cq));
}

const struct verbs_send_wqe *verbs_sq_next(struct droce_qp *q)
{
	struct verbs_qp *qp = to_vqp(q);
	struct verbs_wq *sq = &qp->sq;
	uint32_t st = verbs_qp_state(qp);

	if (st == IBV_QPS_ERR || st == IBV_QPS_SQE) {
		/* WRs posted in these states complete with flush status (IBA 10.8.3.x). */
		if (verbs_ring_ready(&sq->r, sq->done) != 0) {
			flush_sq(qp);
			verbs_qp_check_cqs(qp);
		}
		return NULL;
	}
	if (st != IBV_QPS_RTS || wq_ready(sq) == 0)
		return NULL;
	return verbs_wq_slot(sq, sq->fetch++);
}

/* SQD: the drain is complete when every WQE handed out has completed (IBA 10.3.1 SQD). */
static void check_drained(struct verbs_qp *qp)
{
	uint32_t one = 1;

	if (qp->sq.done == qp->sq.fetch && verbs_qp_state(qp) == IBV_QPS_SQD &&
	    __atomic_compare_exchange_n(&qp->sqd_notify, &one, 0, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		verbs_qp_event(&qp->pub, IBV_EVENT_SQ_DRAINED);
}

int verbs_sq_complete(struct droce_qp *q, uint32_t n)
{
	struct verbs_qp *qp = to_vqp(q);
	struct verbs_cq *cq = to_vcq(q->send_cq);
	struct verbs_wq *sq = &qp->sq;
	struct ibv_wc wc;
	int rc = 0;

	if (n > sq->fetch - sq->done)
		return -EINVAL;
	while (n-- > 0) {
		const struct verbs_send_wqe *w = verbs_wq_slot(sq, sq->done);

		sq->done++;
		if (!w->signaled)
			continue;	/* its slot is freed with the next signalled one */
		send_wc(qp, w, IBV_WC_SUCCESS, 0, &wc);
		/* Free the slots before the completion shows: an application that counts
		 * polled completions to know its free slots may post the moment it sees it. */
		verbs_ring_retire(&sq->r, sq->done);
		if (verbs_cq_push(cq, &wc, false) < 0)
			rc = -ENOSPC;
	}
	check_drained(qp);
	if (rc < 0)
		verbs_qp_check_cqs(qp);
	return rc;
}

int verbs_sq_complete_err(struct droce_qp *q, enum ibv_wc_status status, uint32_t vendor_err)
{
	struct verbs_qp *qp = to_vqp(q);
	struct verbs_wq *sq = &qp->sq;
	bool changed = false;
	struct ibv_wc wc;
	int rc;

	if (sq->fetch == sq->done || status == IBV_WC_SUCCESS)
		return -EINVAL;
	send_wc(qp, verbs_wq_slot(sq, sq->done), status, vendor_err, &wc);
	verbs_ring_retire(&sq->r, ++sq->done);	/* slot free before its CQE shows */
	/* The state changes before the error completion shows (an application that polls it
	 * then finds the QP in ERR/SQE), and the flush completions follow it. */
	pthread_mutex_lock(&qp->ctl_lock);
	if (q->qp_type == IBV_QPT_RC) {
		changed = to_err_locked(qp);	/* IBA 10.8.3.3: RC send errors put the QP in ERR */
	} else if (verbs_qp_state(qp) == IBV_QPS_RTS || verbs_qp_state(qp) == IBV_QPS_SQD) {
		verbs_qp_set_state(qp, IBV_QPS_SQE);	/* UC/UD: only the send queue stops */
		changed = true;
	}
	rc = verbs_cq_push(to_vcq(q->send_cq), &wc, false);
	if (changed && q->qp_type == IBV_QPT_RC)
		flush_err_locked(qp);
	else if (changed)
		flush_sq(qp);
	pthread_mutex_unlock(&qp->ctl_lock);
	verbs_qp_check_cqs(qp);
	return rc;
}

const struct verbs_recv_wqe *verbs_rq_next(struct droce_qp *q)
{
	struct verbs_qp *qp = to_vqp(q);
	struct verbs_wq *rq = &qp->rq;
	uint32_t st;

	if (q->srq != NULL)
		return NULL;
	st = verbs_qp_state(qp);
	if (st == IBV_QPS_ERR) {
		if (verbs_ring_ready(&rq->r, rq->done) != 0) {
			flush_rq(qp);
			verbs_qp_check_cqs(qp);
		}
		return NULL;
	}
	if (st == IBV_QPS_RESET || st == IBV_QPS_INIT || wq_ready(rq) == 0)
		return NULL;
	return verbs_wq_slot(rq, rq->fetch++);
}

static int push_recv(struct verbs_qp *qp, uint64_t wr_id, const struct ibv_wc *in,
		     bool solicited)
{
	struct ibv_wc wc = *in;
	int rc;

	wc.wr_id = wr_id;
	wc.qp_num = qp->pub.qp_num;
	/* IBA 10.8.3: responder errors end an RC QP (in ERR before the error completion
	 * shows, flushes after it); UC/UD receive errors are class D/E (the QP goes on) and the
	 * transport moves the QP to ERR itself when one is fatal. */
	if (wc.status != IBV_WC_SUCCESS && qp->pub.qp_type == IBV_QPT_RC) {
		bool changed;

		pthread_mutex_lock(&qp->ctl_lock);
		changed = to_err_locked(qp);
		rc = verbs_cq_push(to_vcq(qp->pub.recv_cq), &wc, solicited);
		if (changed)
			flush_err_locked(qp);
		pthread_mutex_unlock(&qp->ctl_lock);
	} else {
		rc = verbs_cq_push(to_vcq(qp->pub.recv_cq), &wc, solicited);
	}
	if (rc < 0 || wc.status != IBV_WC_SUCCESS)
		verbs_qp_check_cqs(qp);
	return rc;
}

int verbs_rq_complete(struct droce_qp *q, const struct ibv_wc *wc, bool solicited)
{
	struct verbs_qp *qp = to_vqp(q);
	struct verbs_wq *rq = &qp->rq;
	uint64_t wr_id;

	if (q->srq != NULL || wc == NULL || rq->fetch == rq->done)
		return -EINVAL;
	wr_id = ((const struct verbs_recv_wqe *)verbs_wq_slot(rq, rq->done))->wr_id;
	rq->done++;
	verbs_ring_retire(&rq->r, rq->done);
	return push_recv(qp, wr_id, wc, solicited);
}

int verbs_srq_complete(struct droce_qp *q, uint64_t wr_id, const struct ibv_wc *wc,
		       bool solicited)
{
	if (q->srq == NULL || wc == NULL)
		return -EINVAL;
	return push_recv(to_vqp(q), wr_id, wc, solicited);
}

void verbs_qp_error(struct droce_qp *q, int event)
{
	struct verbs_qp *qp = to_vqp(q);

	verbs_qp_enter_err(qp);
	if (event >= 0)
		verbs_qp_event(q, (enum ibv_event_type)event);
	verbs_qp_check_cqs(qp);
}

const struct ibv_qp_attr *verbs_qp_attr(const struct droce_qp *q)
{
	return &container_of(q, const struct verbs_qp, pub)->attr;
}

const struct verbs_av *verbs_qp_av(const struct droce_qp *q)
{
	return &container_of(q, const struct verbs_qp, pub)->av;
}

const struct ibv_qp_cap *verbs_qp_cap(const struct droce_qp *q)
{
	return &container_of(q, const struct verbs_qp, pub)->cap;
}

enum ibv_qp_state verbs_qp_cur_state(const struct droce_qp *q)
{
	return (enum ibv_qp_state)verbs_qp_state(container_of(q, const struct verbs_qp, pub));
}

const uint32_t *verbs_qp_fatal_mark(const struct droce_qp *q)
{
	return &container_of(q, const struct verbs_qp, pub)->fatal;
}

void verbs_qp_apply_fatal(struct droce_qp *q)
{
	struct verbs_qp *qp = to_vqp(q);

	if (__atomic_load_n(&qp->fatal, __ATOMIC_ACQUIRE))
		verbs_qp_enter_err(qp);
}

bool verbs_wq_pending(const struct droce_qp *q, bool sq)
{
	const struct verbs_qp *qp = container_of(q, const struct verbs_qp, pub);
	const struct verbs_wq *wq = sq ? &qp->sq : &qp->rq;

	if (!sq && q->srq != NULL)
		return false;
	return wq->buf != NULL && verbs_ring_ready(&wq->r, wq->fetch) != 0;
}

void verbs_wq_fill(const struct droce_qp *q, bool sq, struct verbs_fill *out)
{
	const struct verbs_qp *qp = container_of(q, const struct verbs_qp, pub);
	const struct verbs_wq *wq = sq ? &qp->sq : &qp->rq;
	uint32_t tail;

	memset(out, 0, sizeof(*out));
	if (wq->buf == NULL)
		return;		/* the RQ of a QP with an SRQ */
	tail = verbs_ring_tail(&wq->r);
	out->depth = wq->r.size;
	out->used = verbs_ring_ready(&wq->r, tail);
	out->active = wq->fetch - tail;
}
