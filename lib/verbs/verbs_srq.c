/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Work queue storage and shared receive queues.
 *
 * A work queue (SQ, RQ, SRQ) is a verbs_ring of fixed-size WQE slots. Application threads
 * produce under q->lock (never taken by the engine); the engine side consumes. An SRQ is consumed
 * by every engine lcore that owns one of its QPs: they serialise on srq->cons_lock (never taken
 * by the application) and copy each WQE out (verbs_srq_take()), so a slot is free as soon as it
 * is taken and receive completions may come in any order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_private.h"

int verbs_wq_alloc(struct verbs_wq *q, uint32_t depth, uint32_t hdr, uint32_t max_sge,
		   uint32_t max_inline)
{
	uint32_t body = RTE_MAX(max_sge * (uint32_t)sizeof(struct ibv_sge), max_inline);

	memset(q, 0, sizeof(*q));
	q->stride = RTE_ALIGN_CEIL(hdr + body, 64u);
	q->max_sge = max_sge;
	q->max_inline = max_inline;
	verbs_ring_init(&q->r, verbs_pow2_ceil(depth));
	verbs_lock_init(&q->lock);
	q->buf = verbs_ring_mem_alloc(q->r.size, q->stride);
	return q->buf != NULL ? 0 : ENOMEM;
}

void verbs_wq_free(struct verbs_wq *q)
{
	verbs_ring_mem_free(q->buf, q->r.size, q->stride);
	q->buf = NULL;
}

int verbs_wq_put_recv(struct droce_device *dev, struct verbs_wq *q, uint32_t *head,
		      const struct ibv_recv_wr *wr)
{
	struct verbs_recv_wqe *w;
	uint32_t i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > q->max_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return EINVAL;
	if (verbs_ring_room(&q->r, *head) == 0)
		return ENOMEM;
	w = verbs_wq_slot(q, *head);
	w->wr_id = wr->wr_id;
	w->num_sge = (uint32_t)wr->num_sge;
	w->length = 0;
	for (i = 0; i < w->num_sge; i++) {
		w->sge[i] = wr->sg_list[i];
		w->length += wr->sg_list[i].length;
	}
	verbs_sge_iova(dev, w->sge, w->num_sge);
	(*head)++;
	return 0;
}

static int check_srq_attr(const struct ibv_srq_attr *a)
{
	if (a->max_wr == 0 || a->max_wr > DROCE_MAX_SRQ_WR || a->max_sge > DROCE_MAX_SGE)
		return EINVAL;
	return 0;
}

struct droce_srq *droce_create_srq(struct droce_pd *pd, struct ibv_srq_init_attr *init_attr)
{
	struct verbs_srq *srq;
	int rc;

	if (pd == NULL || init_attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	rc = check_srq_attr(&init_attr->attr);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL || verbs_wq_alloc(&srq->q, init_attr->attr.max_wr,
					  sizeof(struct verbs_recv_wqe),
					  init_attr->attr.max_sge, 0) != 0) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	verbs_lock_init(&srq->cons_lock);
	pthread_mutex_init(&srq->ctl_lock, NULL);
	srq->pub.context = pd->context;
	srq->pub.srq_context = init_attr->srq_context;
	srq->pub.pd = pd;
	/* ibv_create_srq(3): srq_limit is not used at creation; the limit starts disarmed. */
	init_attr->attr.max_wr = srq->q.r.size;
	init_attr->attr.srq_limit = 0;
	__atomic_fetch_add(&pd->usecnt, 1, __ATOMIC_RELAXED);
	return &srq->pub;
}

int droce_modify_srq(struct droce_srq *s, struct ibv_srq_attr *attr, int attr_mask)
{
	struct verbs_srq *srq;

	if (s == NULL || attr == NULL || (attr_mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)))
		return EINVAL;
	if (attr_mask & IBV_SRQ_MAX_WR)
		return EINVAL;	/* no IBV_DEVICE_SRQ_RESIZE */
	srq = to_vsrq(s);
	if ((attr_mask & IBV_SRQ_LIMIT) && attr->srq_limit > srq->q.r.size)
		return EINVAL;
	if (attr_mask & IBV_SRQ_LIMIT)
		__atomic_store_n(&srq->limit, attr->srq_limit, __ATOMIC_RELEASE);
	return 0;
}

int droce_query_srq(struct droce_srq *s, struct ibv_srq_attr *attr)
{
	struct verbs_srq *srq;

	if (s == NULL || attr == NULL)
		return EINVAL;
	srq = to_vsrq(s);
	attr->max_wr = srq->q.r.size;
	attr->max_sge = srq->q.max_sge;
	attr->srq_limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	return 0;
}

int droce_destroy_srq(struct droce_srq *s)
{
	struct verbs_srq *srq;

	if (s == NULL)
		return EINVAL;
	srq = to_vsrq(s);
	if (__atomic_load_n(&srq->n_users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	verbs_async_forget(s->context, s, &srq->async);
	__atomic_fetch_sub(&s->pd->usecnt, 1, __ATOMIC_RELEASE);
	verbs_wq_free(&srq->q);
	pthread_mutex_destroy(&srq->ctl_lock);
	free(srq);
	return 0;
}

int droce_post_srq_recv(struct droce_srq *s, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct verbs_srq *srq;
	uint32_t head;
	int rc = 0;

	if (bad_wr != NULL)
		*bad_wr = wr;
	if (s == NULL || wr == NULL || bad_wr == NULL)
		return EINVAL;
	srq = to_vsrq(s);
	if (__atomic_load_n(&srq->error, __ATOMIC_ACQUIRE))
		return EINVAL;
	verbs_lock(&srq->q.lock);
	head = verbs_ring_head(&srq->q.r);
	for (; wr != NULL; wr = wr->next) {
		rc = verbs_wq_put_recv(s->context->device, &srq->q, &head, wr);
		if (rc != 0) {
			*bad_wr = wr;
			break;
		}
	}
	verbs_ring_publish(&srq->q.r, head);
	verbs_unlock(&srq->q.lock);
	return rc;
}

int verbs_srq_take(struct droce_srq *s, struct verbs_recv_wqe_buf *out)
{
	struct verbs_srq *srq = to_vsrq(s);
	const struct verbs_recv_wqe *w;
	uint32_t tail, left, limit;

	verbs_lock(&srq->cons_lock);
	tail = verbs_ring_tail(&srq->q.r);
	left = verbs_ring_ready(&srq->q.r, tail);
	if (left == 0) {
		verbs_unlock(&srq->cons_lock);
		return -ENOENT;
	}
	w = verbs_wq_slot(&srq->q, tail);
	memcpy(&out->wqe, w, sizeof(*w) + w->num_sge * sizeof(struct ibv_sge));
	verbs_ring_retire(&srq->q.r, tail + 1);
	verbs_unlock(&srq->cons_lock);
	/* IBA 10.2.9.2: the limit event fires once when the WQE count drops below the limit. */
	limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	if (limit != 0 && left - 1 < limit &&
	    __atomic_compare_exchange_n(&srq->limit, &limit, 0, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		verbs_srq_event(s, IBV_EVENT_SRQ_LIMIT_REACHED);
	return 0;
}
