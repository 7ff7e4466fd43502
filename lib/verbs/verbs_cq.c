/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Completion queues. The CQ ring (verbs_ring.h) is produced by the engine side (cq->prod_lock
 * serialises engine lcores; pollers never take it) and consumed by droce_poll_cq() (cq->poll_lock
 * serialises application pollers; the engine never takes it).
 *
 * Arming (droce_req_notify_cq) against a completion being added: the application stores
 * cq->armed, then polls (loads r.head); the producer stores r.head, then loads cq->armed. One
 * of the two must see the other's store, or the application sleeps in droce_get_cq_event()
 * on a CQ that holds a completion. Release/acquire does not give that (a store may still wait
 * in the store buffer while the later load runs, which x86 does), so these four accesses are
 * sequentially consistent (test verbs cq_arm_while_completing_loses_no_event).
 *
 * Overrun: a completion that finds the ring full is not written. The CQ enters error (state 1),
 * later completions for it are counted in cq->dropped, and droce_poll_cq() still returns the
 * completions written before (as rxe's CQ, whose queue stays readable), then -EIO. Then,
 * outside any QP lock, verbs_cq_fail() raises IBV_EVENT_CQ_ERR once (state 2) and fails every QP
 * that uses the CQ (IBV_EVENT_QP_FATAL, QP to ERR).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_private.h"

enum { CQ_OK, CQ_OVERRUN, CQ_FAILED };

/* CQ handles: unique in the process, so telemetry can name a CQ (/droce/cqs). */
static uint32_t cq_handles;

static struct ibv_wc *ring_alloc(uint32_t size)
{
	return verbs_ring_mem_alloc(size, sizeof(struct ibv_wc));
}

static void ring_free(struct ibv_wc *wc, uint32_t size)
{
	verbs_ring_mem_free(wc, size, sizeof(struct ibv_wc));
}

static int check_create(struct droce_context *context, int cqe,
			struct droce_comp_channel *channel, int comp_vector)
{
	if (context == NULL || cqe < 1 || cqe > DROCE_MAX_CQE)
		return EINVAL;
	if (channel != NULL && channel->context != context)
		return EINVAL;
	if (comp_vector < 0 || comp_vector >= context->num_comp_vectors)
		return EINVAL;
	return 0;
}

static int count_cq(struct droce_device *dev, int delta)
{
	int rc = 0;

	pthread_mutex_lock(&dev->lock);
	if (delta > 0 && dev->n_cq == DROCE_MAX_CQ)
		rc = ENOMEM;
	else
		dev->n_cq += delta;
	pthread_mutex_unlock(&dev->lock);
	return rc;
}

struct droce_cq *droce_create_cq(struct droce_context *context, int cqe, void *cq_context,
				 struct droce_comp_channel *channel, int comp_vector)
{
	struct verbs_cq *cq = NULL;
	uint32_t size;
	int rc;

	rc = check_create(context, cqe, channel, comp_vector);
	if (rc == 0)
		rc = count_cq(context->device, 1);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	size = verbs_pow2_ceil((uint32_t)cqe);
	if (posix_memalign((void **)&cq, RTE_CACHE_LINE_SIZE, sizeof(*cq)) != 0)
		goto nomem;
	memset(cq, 0, sizeof(*cq));
	cq->wc = ring_alloc(size);
	if (cq->wc == NULL)
		goto nomem;
	verbs_ring_init(&cq->r, size);
	verbs_lock_init(&cq->prod_lock);
	verbs_lock_init(&cq->poll_lock);
	cq->pub.context = context;
	cq->pub.channel = channel;
	cq->pub.cq_context = cq_context;
	cq->pub.cqe = (int)size;
	cq->pub.handle = __atomic_fetch_add(&cq_handles, 1, __ATOMIC_RELAXED);
	if (channel != NULL)
		__atomic_fetch_add(&channel->refcnt, 1, __ATOMIC_RELAXED);
	verbs_ctx_get(context);
	return &cq->pub;
nomem:
	free(cq);
	count_cq(context->device, -1);
	errno = ENOMEM;
	return NULL;
}

int droce_resize_cq(struct droce_cq *c, int cqe)
{
	struct verbs_cq *cq;
	struct ibv_wc *nw;
	uint32_t size, old, n, i, tail;
	int rc = 0;

	if (c == NULL || cqe < 1 || cqe > DROCE_MAX_CQE)
		return EINVAL;
	cq = to_vcq(c);
	size = verbs_pow2_ceil((uint32_t)cqe);
	nw = ring_alloc(size);
	if (nw == NULL)
		return ENOMEM;
	verbs_lock(&cq->poll_lock);
	verbs_lock(&cq->prod_lock);
	tail = verbs_ring_tail(&cq->r);
	n = verbs_ring_head(&cq->r) - tail;
	if (__atomic_load_n(&cq->error, __ATOMIC_ACQUIRE) != CQ_OK)
		rc = EIO;
	else if (n > size)
		rc = EINVAL;
	old = size;		/* what nw holds at the end: the new ring, or the old one */
	if (rc == 0) {
		for (i = 0; i < n; i++)
			nw[i] = cq->wc[(tail + i) & cq->r.mask];
		RTE_SWAP(nw, cq->wc);
		old = cq->r.mask + 1;
		verbs_ring_init(&cq->r, size);
		cq->r.head = n;
		c->cqe = (int)size;
	}
	verbs_unlock(&cq->prod_lock);
	verbs_unlock(&cq->poll_lock);
	ring_free(nw, old);
	return rc;
}

int droce_destroy_cq(struct droce_cq *c)
{
	struct verbs_cq *cq;

	if (c == NULL)
		return EINVAL;
	cq = to_vcq(c);
	if (__atomic_load_n(&cq->n_users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	if (c->channel != NULL) {
		verbs_channel_forget(cq);
		__atomic_fetch_sub(&c->channel->refcnt, 1, __ATOMIC_RELEASE);
	}
	verbs_async_forget(c->context, c, &cq->async);
	count_cq(c->context->device, -1);
	verbs_ctx_put(c->context);
	ring_free(cq->wc, cq->r.mask + 1);
	free(cq);
	return 0;
}

int droce_poll_cq(struct droce_cq *c, int num_entries, struct ibv_wc *wc)
{
	struct verbs_cq *cq;
	uint32_t tail, n, i;
	bool failed;

	if (c == NULL || num_entries < 0 || (wc == NULL && num_entries > 0))
		return -EINVAL;
	cq = to_vcq(c);
	verbs_lock(&cq->poll_lock);
	/* The error is read first: the producers set it after their last push (prod_lock), so
	 * once it is seen the head below is final, and an empty ring stays empty: -EIO. */
	failed = __atomic_load_n(&cq->error, __ATOMIC_ACQUIRE) != CQ_OK;
	tail = verbs_ring_tail(&cq->r);
	/* Seq-cst, and acquire too (the slots): after an arm, see the head or be seen armed. */
	n = __atomic_load_n(&cq->r.head, __ATOMIC_SEQ_CST) - tail;
	if (n == 0 && failed) {
		verbs_unlock(&cq->poll_lock);
		return -EIO;
	}
	n = RTE_MIN(n, (uint32_t)num_entries);
	for (i = 0; i < n; i++)
		wc[i] = cq->wc[(tail + i) & cq->r.mask];
	verbs_ring_retire(&cq->r, tail + n);
	verbs_unlock(&cq->poll_lock);
	return (int)n;
}

int droce_req_notify_cq(struct droce_cq *c, int solicited_only)
{
	if (c == NULL)
		return EINVAL;
	/* A CQ without a channel has no event to give: 0 and nothing armed, as Linux's
	 * providers answer (rxe, mlx5; the verbs layer's arm is only read for a channel). */
	if (c->channel == NULL)
		return 0;
	/* Seq-cst: ordered before the next poll's load of the head (file comment). */
	__atomic_store_n(&to_vcq(c)->armed, solicited_only ? CQ_ARM_SOLICITED : CQ_ARM_NEXT,
			 __ATOMIC_SEQ_CST);
	return 0;
}

/* IBA 11.4.2.2: an armed CQ signals on the next completion, or with solicited-only on the next
 * solicited or error completion. */
static void notify(struct verbs_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	/* Seq-cst: after the store of the head in verbs_cq_push() (file comment). */
	uint32_t a = __atomic_load_n(&cq->armed, __ATOMIC_SEQ_CST);

	if (a == CQ_ARM_NONE)
		return;
	if (a == CQ_ARM_SOLICITED && !solicited && wc->status == IBV_WC_SUCCESS)
		return;
	if (__atomic_compare_exchange_n(&cq->armed, &a, CQ_ARM_NONE, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		verbs_channel_signal(cq);
}

int verbs_cq_push(struct verbs_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	uint32_t head;

	verbs_lock(&cq->prod_lock);
	head = verbs_ring_head(&cq->r);
	if (__atomic_load_n(&cq->error, __ATOMIC_RELAXED) != CQ_OK ||
	    verbs_ring_room(&cq->r, head) == 0) {
		uint32_t ok = CQ_OK;

		__atomic_compare_exchange_n(&cq->error, &ok, CQ_OVERRUN, false, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
		cq->dropped++;
		verbs_unlock(&cq->prod_lock);
		return -ENOSPC;
	}
	cq->wc[head & cq->r.mask] = *wc;
	if (cq->pub.channel != NULL)	/* seq-cst (and release): before notify()'s load */
		__atomic_store_n(&cq->r.head, head + 1, __ATOMIC_SEQ_CST);
	else
		verbs_ring_publish(&cq->r, head + 1);
	verbs_unlock(&cq->prod_lock);
	if (cq->pub.channel != NULL)
		notify(cq, wc, solicited);
	return 0;
}

/* Caller holds dev->lock. Does @p qp feed a CQ that overran? */
static bool qp_hit(const struct verbs_qp *qp)
{
	return __atomic_load_n(&to_vcq(qp->pub.send_cq)->error, __ATOMIC_ACQUIRE) != CQ_OK ||
	       __atomic_load_n(&to_vcq(qp->pub.recv_cq)->error, __ATOMIC_ACQUIRE) != CQ_OK;
}

static bool raise_cq_err(struct droce_cq *c)
{
	uint32_t st = CQ_OVERRUN;
	struct droce_async_event ev = { .element.cq = c, .event_type = IBV_EVENT_CQ_ERR };

	if (!__atomic_compare_exchange_n(&to_vcq(c)->error, &st, CQ_FAILED, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return false;
	VERBS_LOG(ERR, "CQ %p overrun: IBV_EVENT_CQ_ERR", (void *)c);
	verbs_async_raise(c->context, &ev);
	return true;
}

/* One pass over the QPs of @p dev: raise CQ_ERR for CQs that overran, fail their QPs. */
static bool fail_pass(struct droce_device *dev)
{
	bool progress = false;
	uint32_t i, zero;

	for (i = 0; i < DROCE_QP_SLOTS; i++) {
		struct droce_qp *q = dev->qp_tbl[i];

		if (q == NULL)
			continue;
		progress |= raise_cq_err(q->send_cq);
		progress |= raise_cq_err(q->recv_cq);
		zero = 0;
		if (!qp_hit(to_vqp(q)) ||
		    !__atomic_compare_exchange_n(&to_vqp(q)->fatal, &zero, 1, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		verbs_qp_event(q, IBV_EVENT_QP_FATAL);
		/* An owned QP goes to ERR when its owner applies the mark (verbs_qp_apply_fatal()):
		 * its doorbell makes the owner look at it now, even when nothing is posted or
		 * arrives for it. */
		if (__atomic_load_n(&to_vqp(q)->owner, __ATOMIC_ACQUIRE) == NULL)
			verbs_qp_enter_err(to_vqp(q));
		else
			verbs_qp_db_ring(q);
		progress = true;
	}
	return progress;
}

void verbs_cq_fail(struct verbs_cq *cq)
{
	struct droce_device *dev = cq->pub.context->device;

	if (__atomic_load_n(&cq->error, __ATOMIC_ACQUIRE) != CQ_OVERRUN)
		return;
	pthread_mutex_lock(&dev->lock);
	/* Flushing a failed QP may overrun another CQ: repeat until nothing changes. */
	while (fail_pass(dev))
		;
	pthread_mutex_unlock(&dev->lock);
}

void verbs_cq_fill(const struct droce_cq *c, struct verbs_fill *out)
{
	const struct verbs_cq *cq = container_of(c, const struct verbs_cq, pub);
	/* Pairs with the store-release of tail in droce_poll_cq(). */
	uint32_t tail = __atomic_load_n(&cq->r.tail, __ATOMIC_ACQUIRE);

	memset(out, 0, sizeof(*out));
	out->depth = cq->r.size;
	out->used = verbs_ring_ready(&cq->r, tail);
	out->error = __atomic_load_n(&cq->error, __ATOMIC_RELAXED) != CQ_OK;
}
