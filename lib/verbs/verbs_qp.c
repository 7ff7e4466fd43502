/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Queue pairs: create, destroy, query, and the application side of the send and receive
 * queues (droce_post_send(), droce_post_recv()). Posting takes only the queue's producer
 * spinlock (application side, verbs_ring.h), reads the QP state with load-acquire, publishes
 * the new head with store-release and (send) rings the owner's doorbell with atomic
 * exchange/fetch-or (verbs_owner.c): no system call, no lock the engine takes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_private.h"

#define SEND_FLAGS_OK (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE)

static int check_type(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		return 0;
	case IBV_QPT_RAW_PACKET:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
	case IBV_QPT_DRIVER:
		return EOPNOTSUPP;
	default:
		return EINVAL;
	}
}

static int check_init(struct droce_pd *pd, const struct droce_qp_init_attr *a)
{
	const struct ibv_qp_cap *c = &a->cap;
	int rc = check_type(a->qp_type);

	if (rc != 0)
		return rc;
	if (a->send_cq == NULL || a->recv_cq == NULL ||
	    a->send_cq->context != pd->context || a->recv_cq->context != pd->context)
		return EINVAL;
	if (a->srq != NULL && a->srq->context != pd->context)
		return EINVAL;
	if (c->max_send_wr > DROCE_MAX_QP_WR || c->max_send_sge > DROCE_MAX_SGE ||
	    c->max_inline_data > DROCE_MAX_INLINE)
		return EINVAL;
	if (a->srq == NULL && (c->max_recv_wr > DROCE_MAX_QP_WR ||
			       c->max_recv_sge > DROCE_MAX_SGE))
		return EINVAL;
	return 0;
}

static int alloc_queues(struct verbs_qp *qp, struct droce_qp_init_attr *a)
{
	struct ibv_qp_cap *c = &a->cap;
	uint32_t sge_room = c->max_send_sge * (uint32_t)sizeof(struct ibv_sge);

	/* A send WQE has room for its SGEs' 16 bytes each anyway: inline data up to that much is
	 * granted too, as rxe does (rdma_xclient posts 16 inline bytes having asked for none). */
	if (c->max_inline_data < sge_room)
		c->max_inline_data = RTE_MIN(sge_room, (uint32_t)DROCE_MAX_INLINE);
	if (verbs_wq_alloc(&qp->sq, c->max_send_wr, sizeof(struct verbs_send_wqe),
			   c->max_send_sge, c->max_inline_data) != 0)
		return ENOMEM;
	c->max_send_wr = qp->sq.r.size;
	if (a->srq != NULL) {
		c->max_recv_wr = 0;
		c->max_recv_sge = 0;
	} else {
		if (verbs_wq_alloc(&qp->rq, c->max_recv_wr, sizeof(struct verbs_recv_wqe),
				   c->max_recv_sge, 0) != 0)
			return ENOMEM;
		c->max_recv_wr = qp->rq.r.size;
	}
	qp->cap = *c;
	return 0;
}

/* Publish @p qp in the device's QP table; its number follows from the slot. The GSI QP
 * (@p gsi) has the one slot after the others. */
static int insert_qp(struct droce_device *dev, struct verbs_qp *qp, bool gsi)
{
	uint32_t i, idx = DROCE_MAX_QP;

	pthread_mutex_lock(&dev->lock);
	if (gsi) {
		if (dev->qp_tbl[idx] != NULL) {
			pthread_mutex_unlock(&dev->lock);
			return EEXIST;
		}
		qp->pub.qp_num = DROCE_GSI_QPN;
	} else {
		for (i = 0; i < DROCE_MAX_QP; i++) {
			idx = (dev->qp_next + i) % DROCE_MAX_QP;
			if (dev->qp_tbl[idx] == NULL)
				break;
		}
		if (i == DROCE_MAX_QP) {
			pthread_mutex_unlock(&dev->lock);
			return ENOMEM;
		}
		dev->qp_next = idx + 1;	/* do not reuse a number at once: stale packets */
		qp->pub.qp_num = DROCE_QPN_BASE + idx;
	}
	qp->index = idx;
	qp->pub.handle = idx;
	/* Pairs with the load-acquire in verbs_qp_lookup(). */
	__atomic_store_n(&dev->qp_tbl[idx], &qp->pub, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

static void take_refs(struct verbs_qp *qp, int d)
{
	struct droce_qp *q = &qp->pub;

	__atomic_fetch_add(&q->pd->usecnt, d, __ATOMIC_ACQ_REL);
	__atomic_fetch_add(&to_vcq(q->send_cq)->n_users, d, __ATOMIC_ACQ_REL);
	__atomic_fetch_add(&to_vcq(q->recv_cq)->n_users, d, __ATOMIC_ACQ_REL);
	if (q->srq != NULL)
		__atomic_fetch_add(&to_vsrq(q->srq)->n_users, d, __ATOMIC_ACQ_REL);
}

static void free_qp(struct verbs_qp *qp)
{
	verbs_wq_free(&qp->sq);
	verbs_wq_free(&qp->rq);
	pthread_mutex_destroy(&qp->ctl_lock);
	free(qp);
}

/* With an engine registered, every QP is owned by one of its lcores from creation on. */
static int hand_to_engine(struct verbs_qp *qp)
{
	const struct verbs_engine_ops *ops = verbs_engine_ops_get();

	return ops != NULL ? -ops->qp_created(&qp->pub) : 0;
}

static struct droce_qp *create_qp(struct droce_pd *pd, struct droce_qp_init_attr *a, bool gsi)
{
	struct verbs_qp *qp = NULL;
	int rc;

	if (pd == NULL || a == NULL || (gsi && a->qp_type != IBV_QPT_UD)) {
		errno = EINVAL;
		return NULL;
	}
	rc = check_init(pd, a);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	if (posix_memalign((void **)&qp, RTE_CACHE_LINE_SIZE, sizeof(*qp)) != 0) {
		errno = ENOMEM;
		return NULL;
	}
	memset(qp, 0, sizeof(*qp));
	pthread_mutex_init(&qp->ctl_lock, NULL);
	rc = alloc_queues(qp, a);
	if (rc == 0) {
		qp->pub.context = pd->context;
		qp->pub.qp_context = a->qp_context;
		qp->pub.pd = pd;
		qp->pub.send_cq = a->send_cq;
		qp->pub.recv_cq = a->recv_cq;
		qp->pub.srq = a->srq;
		qp->pub.qp_type = a->qp_type;
		qp->pub.state = IBV_QPS_RESET;
		qp->sq_sig_all = a->sq_sig_all;
		qp->attr.cap = qp->cap;
		rc = insert_qp(pd->context->device, qp, gsi);
	}
	if (rc != 0) {
		free_qp(qp);
		errno = rc;
		return NULL;
	}
	take_refs(qp, 1);
	rc = hand_to_engine(qp);
	if (rc != 0) {
		droce_destroy_qp(&qp->pub);
		errno = rc;
		return NULL;
	}
	return &qp->pub;
}

struct droce_qp *droce_create_qp(struct droce_pd *pd, struct droce_qp_init_attr *a)
{
	return create_qp(pd, a, false);
}

struct droce_qp *verbs_create_gsi_qp(struct droce_pd *pd, struct droce_qp_init_attr *a)
{
	return create_qp(pd, a, true);
}

void verbs_qp_set_release(struct droce_qp *q, verbs_qp_release_fn *fn)
{
	__atomic_store_n(&to_vqp(q)->release, fn, __ATOMIC_RELEASE);
}

int droce_destroy_qp(struct droce_qp *q)
{
	verbs_qp_release_fn *release;
	struct droce_device *dev;
	struct verbs_qp *qp;

	if (q == NULL)
		return EINVAL;
	qp = to_vqp(q);
	dev = q->context->device;
	if (verbs_qp_mcast_busy(qp) != 0)
		return EBUSY;	/* as Linux uverbs: detach from every group first */
	release = __atomic_exchange_n(&qp->release, NULL, __ATOMIC_ACQ_REL);
	if (release != NULL)
		release(q);	/* the CM id that holds it forgets it */
	/* Out of the table first: the owner applies the detach between two iterations, so after
	 * it no lookup that still found the QP can be in progress. */
	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&dev->qp_tbl[qp->index], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	if (__atomic_load_n(&qp->owner, __ATOMIC_ACQUIRE) != NULL)
		verbs_owner_detach(qp);
	verbs_async_forget(q->context, q, &qp->async);
	verbs_mw_qp_gone(q);	/* type-2 windows it bound are reachable through it only */
	take_refs(qp, -1);
	free_qp(qp);
	return 0;
}

int droce_query_qp(struct droce_qp *q, struct ibv_qp_attr *attr, int attr_mask,
		   struct droce_qp_init_attr *init)
{
	struct verbs_qp *qp;

	RTE_SET_USED(attr_mask);	/* everything is returned, as rxe does */
	if (q == NULL || attr == NULL || init == NULL)
		return EINVAL;
	qp = to_vqp(q);
	pthread_mutex_lock(&qp->ctl_lock);
	*attr = qp->attr;
	attr->qp_state = (enum ibv_qp_state)verbs_qp_state(qp);
	attr->cur_qp_state = attr->qp_state;
	attr->cap = qp->cap;
	attr->sq_draining = attr->qp_state == IBV_QPS_SQD &&
			    __atomic_load_n(&qp->sqd_notify, __ATOMIC_ACQUIRE) != 0;
	pthread_mutex_unlock(&qp->ctl_lock);
	init->qp_context = q->qp_context;
	init->send_cq = q->send_cq;
	init->recv_cq = q->recv_cq;
	init->srq = q->srq;
	init->cap = qp->cap;
	init->qp_type = q->qp_type;
	init->sq_sig_all = qp->sq_sig_all;
	return 0;
}

/* ---- Posting ---- */

static bool opcode_ok(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	switch ((uint32_t)op) {	/* DROCE_WR_FLUSH is not in rdma-core 44's enum */
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return t != IBV_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:	/* IBA 9.4.1: RC only (SEND_*_WITH_INVALIDATE) */
	case IBV_WR_ATOMIC_WRITE:
	case DROCE_WR_FLUSH:
		return t == IBV_QPT_RC;
	case IBV_WR_BIND_MW:		/* ibv_post_send(3): UC, RC (and XRC) */
	case IBV_WR_LOCAL_INV:
		return t == IBV_QPT_RC || t == IBV_QPT_UC;
	default:
		return false;
	}
}

static bool is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* A FLUSH as droce_wr_set_flush() (droce.h) writes it: no SGE, not inline, a length of at
 * most 2^31, a non-empty set of known placement types and a known selectivity level. */
static bool flush_ok(const struct ibv_send_wr *wr)
{
	uint64_t feth = wr->wr.atomic.swap, plt = feth & 0xf, level = feth >> 4;

	return wr->num_sge == 0 && !(wr->send_flags & IBV_SEND_INLINE) &&
	       wr->wr.atomic.compare_add <= (1u << 31) && plt != 0 &&
	       !(plt & ~(uint64_t)(DROCE_FLUSH_GLOBAL | DROCE_FLUSH_PERSISTENT)) &&
	       level <= DROCE_FLUSH_MR;
}

static int check_send(const struct verbs_qp *qp, const struct ibv_send_wr *wr)
{
	uint64_t len = 0;
	int i;

	if (!opcode_ok(qp->pub.qp_type, wr->opcode) || (wr->send_flags & ~SEND_FLAGS_OK))
		return EINVAL;
	/* Local operations: no data, sg_list and num_sge are not read (verbs_bind_wqe_fill()
	 * checks a bind). */
	if (unlikely(wr->opcode >= IBV_WR_LOCAL_INV) &&
	    (wr->opcode == IBV_WR_BIND_MW || wr->opcode == IBV_WR_LOCAL_INV))
		return (wr->send_flags & IBV_SEND_INLINE) ? EINVAL : 0;
	if (wr->num_sge < 0 || (wr->num_sge > 0 && wr->sg_list == NULL))
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	/* SEND and WRITE (opcodes below RDMA_READ) pass none of the checks of this block. */
	if (unlikely(wr->opcode >= IBV_WR_RDMA_READ)) {
		/* ATOMIC_WRITE: 8 bytes (SGEs or inline) to an 8-byte aligned address. */
		if (wr->opcode == IBV_WR_ATOMIC_WRITE && (len != 8 || (wr->wr.rdma.remote_addr & 7)))
			return EINVAL;
		if (wr->opcode == DROCE_WR_FLUSH && !flush_ok(wr))
			return EINVAL;
		if ((wr->send_flags & IBV_SEND_INLINE) &&
		    (wr->opcode == IBV_WR_RDMA_READ || is_atomic(wr->opcode)))
			return EINVAL;
		/* IBA 9.4.5: atomics are 8 bytes at an 8-byte aligned address. */
		if (is_atomic(wr->opcode) && (wr->num_sge != 1 || wr->sg_list[0].length != 8 ||
					      (wr->wr.atomic.remote_addr & 7)))
			return EINVAL;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (len > qp->sq.max_inline)
			return EINVAL;
	} else if ((uint32_t)wr->num_sge > qp->sq.max_sge) {
		return EINVAL;
	}
	if (qp->pub.qp_type == IBV_QPT_UD &&
	    (wr->wr.ud.ah == NULL || to_vah(wr->wr.ud.ah)->pd != qp->pub.pd))
		return EINVAL;
	/* UD: one packet per message, at most the port's active MTU (IBA C10-93.1.1 wants no
	 * packet for a longer one; refusing the post tells the application why). */
	if (qp->pub.qp_type == IBV_QPT_UD &&
	    len > (128u << qp->pub.context->device->active_mtu))
		return EINVAL;
	return len > UINT32_MAX ? EINVAL : 0;
}

/* @return 0, or EINVAL (a bind naming no window it may bind). */
static int fill_send(struct verbs_qp *qp, struct verbs_send_wqe *w, const struct ibv_send_wr *wr,
		     bool bind1)
{
	uint32_t i, off = 0;

	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	w->imm_data = wr->imm_data;	/* LOCAL_INV: invalidate_rkey shares its bytes */
	w->signaled = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
	w->length = 0;
	if (unlikely(wr->opcode >= IBV_WR_LOCAL_INV)) {
		if (wr->opcode == IBV_WR_BIND_MW)
			return verbs_bind_wqe_fill(&qp->pub, w, wr, bind1);
		if (wr->opcode == IBV_WR_LOCAL_INV) {
			w->num_sge = 0;
			return 0;
		}
	}
	for (i = 0; i < (uint32_t)wr->num_sge; i++)
		w->length += wr->sg_list[i].length;
	if (qp->pub.qp_type == IBV_QPT_UD) {
		w->wr.ud.av = to_vah(wr->wr.ud.ah)->av;
		w->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		w->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
	} else if (is_atomic(wr->opcode) || wr->opcode == DROCE_WR_FLUSH) {
		w->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		w->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		w->wr.atomic.swap = wr->wr.atomic.swap;	/* FLUSH: the FETH word */
		w->wr.atomic.rkey = wr->wr.atomic.rkey;
		if (wr->opcode == DROCE_WR_FLUSH)	/* its RETH length and byte_len */
			w->length = (uint32_t)wr->wr.atomic.compare_add;
	} else {
		w->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->wr.rdma.rkey = wr->wr.rdma.rkey;
	}
	if (!(wr->send_flags & IBV_SEND_INLINE)) {
		w->num_sge = (uint32_t)wr->num_sge;
		if (w->num_sge != 0)    /* sg_list may be NULL when num_sge is 0 */
			memcpy(w->sge, wr->sg_list, w->num_sge * sizeof(struct ibv_sge));
		verbs_sge_iova(qp->pub.context->device, w->sge, w->num_sge);
		return 0;
	}
	w->num_sge = 0;
	for (i = 0; i < (uint32_t)wr->num_sge; i++) {
		if (wr->sg_list[i].length == 0)
			continue;
		memcpy((uint8_t *)w->sge + off, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		off += wr->sg_list[i].length;
	}
	return 0;
}

static bool send_state_ok(uint32_t st)
{
	return st == IBV_QPS_RTS || st == IBV_QPS_SQD || st == IBV_QPS_SQE || st == IBV_QPS_ERR;
}

int droce_post_send(struct droce_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return verbs_post_send(q, wr, bad_wr, false);
}

int verbs_post_send(struct droce_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr,
		    bool bind1)
{
	struct verbs_qp *qp;
	uint32_t head, head0;
	int rc = 0;

	if (bad_wr != NULL)
		*bad_wr = wr;
	if (q == NULL || wr == NULL || bad_wr == NULL)
		return EINVAL;
	qp = to_vqp(q);
	if (!send_state_ok(verbs_qp_state(qp)))
		return EINVAL;
	verbs_lock(&qp->sq.lock);
	head0 = head = verbs_ring_head(&qp->sq.r);
	for (; wr != NULL; wr = wr->next) {
		rc = check_send(qp, wr);
		if (rc == 0 && verbs_ring_room(&qp->sq.r, head) == 0)
			rc = ENOMEM;
		if (rc == 0)	/* the slot is not published before head moves past it */
			rc = fill_send(qp, verbs_wq_slot(&qp->sq, head), wr, bind1);
		if (rc != 0) {
			*bad_wr = wr;
			break;
		}
		head++;
	}
	verbs_ring_publish(&qp->sq.r, head);
	verbs_unlock(&qp->sq.lock);
	if (head != head0)
		verbs_qp_db_ring(q);	/* the doorbell: after the head it announces */
	return rc;
}

int droce_post_recv(struct droce_qp *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct verbs_qp *qp;
	uint32_t head;
	int rc = 0;

	if (bad_wr != NULL)
		*bad_wr = wr;
	if (q == NULL || wr == NULL || bad_wr == NULL)
		return EINVAL;
	qp = to_vqp(q);
	if (q->srq != NULL || verbs_qp_state(qp) == IBV_QPS_RESET)
		return EINVAL;
	verbs_lock(&qp->rq.lock);
	head = verbs_ring_head(&qp->rq.r);
	for (; wr != NULL; wr = wr->next) {
		rc = verbs_wq_put_recv(q->context->device, &qp->rq, &head, wr);
		if (rc != 0) {
			*bad_wr = wr;
			break;
		}
	}
	verbs_ring_publish(&qp->rq.r, head);
	verbs_unlock(&qp->rq.lock);
	return rc;
}

struct droce_qp *verbs_qp_lookup(struct droce_device *dev, uint32_t qpn)
{
	uint32_t idx = verbs_qpn_slot(qpn);

	if (idx == UINT32_MAX)
		return NULL;
	/* Pairs with the store-release in insert_qp(). */
	return __atomic_load_n(&dev->qp_tbl[idx], __ATOMIC_ACQUIRE);
}
