/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Memory windows (ibv_alloc_mw(3), ibv_bind_mw(3); IBA 10.6.7). A window gives remote access
 * to a range of an MR under an R_Key of its own, which a bind changes (its low 8 bits) and an
 * invalidation revokes without touching the MR.
 *
 * Keys: bit 31 is set in every window's R_Key and in no MR key (verbs_pd_mr.c), so the responder
 * tells them apart without a lookup; bits 8..8+DROCE_MW_INDEX_BITS-1 index the device's window
 * table, the bits above them are random per window, the low 8 bits are the consumer key.
 *
 * Rules, as Linux Soft-RoCE (rxe_mw.c) applies the IBA ones: a type-1 window is valid from
 * its allocation and a bind replaces its binding (length 0 leaves it bound to nothing); it is
 * never invalidated. A type-2 window is free until an IBV_WR_BIND_MW binds it through a QP of
 * its PD, and then reachable only through that QP (type 2B), until IBV_WR_LOCAL_INV or a SEND
 * with invalidate frees it. The MR must have IBV_ACCESS_MW_BIND, LOCAL_WRITE for a writable
 * window, and cover the range; it cannot be deregistered while a window is bound to it.
 * Binds and invalidations run on the engine side, in the QP's send order (transport_req.c,
 * transport_unreliable_req.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "verbs_private.h"

#define MW_KEY_SHIFT 8
#define MW_INDEX_MASK ((1u << DROCE_MW_INDEX_BITS) - 1)
#define MW_CONSUMER_KEY 0xffu
#define MW_ACCESS_OK (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED)

static inline uint32_t mw_slot(uint32_t rkey)
{
	return (rkey >> MW_KEY_SHIFT) & MW_INDEX_MASK;
}

static uint32_t mw_new_key(uint32_t index)
{
	uint32_t r = 0;

	while (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		;	/* EINTR only */
	return VERBS_KEY_MW | (r & ~(VERBS_KEY_MW | (MW_INDEX_MASK << MW_KEY_SHIFT))) |
	       (index << MW_KEY_SHIFT);
}

bool verbs_mr_mw_get(struct droce_mr *m)
{
	struct verbs_mr *mr = to_vmr(m);

	/* Pairs with the compare-exchange in mr_mw_lock(): either it sees this reference and
	 * refuses the deregistration, or this sees the lock and backs off. */
	if (__atomic_fetch_add(&mr->n_mw, 1, __ATOMIC_SEQ_CST) & MR_MW_LOCKED) {
		__atomic_fetch_sub(&mr->n_mw, 1, __ATOMIC_SEQ_CST);
		return false;
	}
	return true;
}

void verbs_mr_mw_put(struct droce_mr *m)
{
	__atomic_fetch_sub(&to_vmr(m)->n_mw, 1, __ATOMIC_SEQ_CST);
}

struct droce_mw *droce_alloc_mw(struct droce_pd *pd, enum ibv_mw_type type)
{
	struct droce_device *dev;
	struct verbs_mw *mw;
	uint32_t i, idx;

	if (pd == NULL || (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	dev = pd->context->device;
	mw->pub.context = pd->context;
	mw->pub.pd = pd;
	mw->pub.type = type;
	mw->pd = pd;
	/* rxe: a type-1 window is valid (bound to nothing) from the start, a type-2 one free. */
	mw->state = type == IBV_MW_TYPE_1 ? MW_VALID : MW_FREE;
	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < DROCE_MAX_MW; i++) {
		idx = (dev->mw_next + i) % DROCE_MAX_MW;
		if (dev->mw_tbl[idx] == NULL)
			break;
	}
	if (i == DROCE_MAX_MW) {
		pthread_mutex_unlock(&dev->lock);
		free(mw);
		errno = ENOMEM;
		return NULL;
	}
	dev->mw_next = idx + 1;
	mw->index = idx;
	mw->rkey = mw_new_key(idx);
	mw->pub.rkey = mw->rkey;
	mw->pub.handle = idx;
	__atomic_fetch_add(&pd->usecnt, 1, __ATOMIC_RELAXED);
	/* Pairs with the load-acquire in mw_get(): the window is complete when seen. */
	__atomic_store_n(&dev->mw_tbl[idx], mw, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	return &mw->pub;
}

/* Drop the binding (caller holds mw->lock). */
static void mw_unbind(struct verbs_mw *mw)
{
	if (mw->mr != NULL)
		verbs_mr_mw_put(mw->mr);
	if (mw->qp != NULL)
		__atomic_fetch_sub(&to_vqp((struct droce_qp *)(uintptr_t)mw->qp)->n_mw, 1,
				   __ATOMIC_RELAXED);
	mw->mr = NULL;
	mw->qp = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
	mw->zero_based = 0;
}

int droce_dealloc_mw(struct droce_mw *m)
{
	struct droce_device *dev;
	struct verbs_mw *mw;
	const struct verbs_engine_ops *ops = verbs_engine_ops_get();

	if (m == NULL)
		return EINVAL;
	mw = to_vmw(m);
	dev = mw->pd->context->device;
	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&dev->mw_tbl[mw->index], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	/* A bind the engine looked the window up for before the slot was cleared finds it
	 * dead (bind_locked()), so nothing is bound to it after this. */
	verbs_lock(&mw->lock);
	mw_unbind(mw);
	mw->state = MW_DEAD;
	verbs_unlock(&mw->lock);
	/* As droce_dereg_mr(): no engine iteration still uses a lookup of the window. */
	if (ops != NULL && ops->mr_quiesce != NULL)
		ops->mr_quiesce(dev);
	__atomic_fetch_sub(&mw->pd->usecnt, 1, __ATOMIC_RELEASE);
	free(mw);
	return 0;
}

/* The window in slot @p index of @p dev, locked, or NULL. */
static struct verbs_mw *mw_get(struct droce_device *dev, uint32_t index)
{
	/* Pairs with the store-release in droce_alloc_mw(). */
	struct verbs_mw *mw = __atomic_load_n(&dev->mw_tbl[index & MW_INDEX_MASK],
					      __ATOMIC_ACQUIRE);

	if (mw != NULL)
		verbs_lock(&mw->lock);
	return mw;
}

/* ---- Posting a bind (application side) ---- */

/* The bind WQE fields of a bind of @p mw to @p info under @p rkey. @return 0 or EINVAL. */
static int bind_fill(struct verbs_send_wqe *w, const struct verbs_mw *mw, uint32_t rkey,
		     const struct ibv_mw_bind_info *info)
{
	if ((info->mw_access_flags & ~MW_ACCESS_OK) != 0 ||
	    (info->mr == NULL && (info->addr != 0 || info->length != 0)))
		return EINVAL;
	w->num_sge = 0;
	w->length = 0;
	w->wr.bind.mw_index = mw->index;
	w->wr.bind.rkey = rkey;
	w->wr.bind.mr_lkey = info->mr != NULL ? info->mr->lkey : 0;
	w->wr.bind.addr = info->addr;
	w->wr.bind.length = info->length;
	w->wr.bind.access = info->mw_access_flags;
	return 0;
}

int verbs_bind_wqe_fill(struct droce_qp *qp, struct verbs_send_wqe *w,
			const struct ibv_send_wr *wr, bool type1)
{
	const struct ibv_mw *m = wr->bind_mw.mw;
	struct droce_device *dev = qp->context->device;
	struct verbs_mw *mw;

	if (m == NULL)
		return EINVAL;
	if (type1) {	/* droce_bind_mw(): its own droce_mw */
		mw = to_vmw((struct droce_mw *)(uintptr_t)m);
	} else {
		/* By its handle, the table slot (a droce_mw and compat's copy both have it). */
		if (m->handle >= DROCE_MAX_MW)
			return EINVAL;
		mw = __atomic_load_n(&dev->mw_tbl[m->handle], __ATOMIC_ACQUIRE);
		/* ibv_bind_mw(3): a type-1 window is bound by the verb, a type-2 one by this WR. */
		if (mw == NULL || mw->pub.type != IBV_MW_TYPE_2)
			return EINVAL;
	}
	return bind_fill(w, mw, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
}

int droce_bind_mw(struct droce_qp *qp, struct droce_mw *m, struct ibv_mw_bind *mw_bind)
{
	const struct ibv_mw_bind_info *info;
	const struct droce_mr *mr;
	struct ibv_send_wr wr, *bad = NULL;
	struct verbs_mw *mw;
	int rc;

	if (qp == NULL || m == NULL || mw_bind == NULL)
		return EINVAL;
	mw = to_vmw(m);
	info = &mw_bind->bind_info;
	if (m->type != IBV_MW_TYPE_1 || mw->pd->context->device != qp->context->device ||
	    (info->mw_access_flags & IBV_ACCESS_ZERO_BASED))
		return EINVAL;	/* ZERO_BASED type 1: o10-36.2.2, rxe's provider too */
	if (info->mr == NULL && (info->addr != 0 || info->length != 0))
		return EINVAL;
	if (info->mr != NULL) {
		mr = verbs_mr_lookup(qp->context->device, info->mr->lkey, false);
		if (mr != NULL && mr->pd != mw->pd)
			return EPERM;	/* as ibv_bind_mw() */
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = (struct ibv_mw *)m;
	wr.bind_mw.rkey = ibv_inc_rkey(m->rkey);
	wr.bind_mw.bind_info = *info;
	rc = verbs_post_send(qp, &wr, &bad, true);
	if (rc == 0)
		m->rkey = wr.bind_mw.rkey;	/* ibv_bind_mw(3): the key after the bind */
	return rc;
}

/* ---- Engine side ---- */

/* rxe_check_bind_mw()'s rules for the MR (C10-73, C10-74, C10-75). */
static bool bind_mr_ok(const struct verbs_mw *mw, const struct droce_mr *mr,
		       const struct verbs_send_wqe *w)
{
	int acc = verbs_mr_access(mr);
	uint64_t iova = verbs_mr_iova(mr);

	if (mr->pd != mw->pd || !(acc & IBV_ACCESS_MW_BIND))
		return false;
	if ((w->wr.bind.access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(acc & IBV_ACCESS_LOCAL_WRITE))
		return false;
	return w->wr.bind.addr >= iova && w->wr.bind.addr - iova <= mr->length &&
	       w->wr.bind.length <= mr->length - (w->wr.bind.addr - iova);
}

static enum ibv_wc_status bind_locked(struct droce_qp *qp, struct verbs_mw *mw,
				      const struct verbs_send_wqe *w)
{
	struct droce_device *dev = qp->context->device;
	struct droce_mr *mr = NULL;

	if (mw->state == MW_DEAD)
		return IBV_WC_MW_BIND_ERR;
	if (mw->pub.type == IBV_MW_TYPE_2) {
		/* o10-37.2.30: a bound window is invalidated before it is bound again; C10-72:
		 * through a QP of its PD; o10-37.2.40: to an MR; only the consumer key changes. */
		if (mw->state != MW_FREE || qp->pd != mw->pd || w->wr.bind.length == 0 ||
		    ((w->wr.bind.rkey ^ mw->rkey) & ~MW_CONSUMER_KEY) != 0)
			return IBV_WC_MW_BIND_ERR;
	}
	if (w->wr.bind.length != 0) {
		mr = verbs_mr_lookup(dev, w->wr.bind.mr_lkey, false);
		if (mr == NULL || !bind_mr_ok(mw, mr, w) || !verbs_mr_mw_get(mr))
			return IBV_WC_MW_BIND_ERR;
	}
	mw_unbind(mw);
	mw->mr = mr;
	mw->addr = w->wr.bind.addr;
	mw->length = w->wr.bind.length;
	mw->access = (int)(w->wr.bind.access & ~IBV_ACCESS_ZERO_BASED);
	mw->zero_based = !!(w->wr.bind.access & IBV_ACCESS_ZERO_BASED);
	mw->rkey = (mw->rkey & ~MW_CONSUMER_KEY) | (w->wr.bind.rkey & MW_CONSUMER_KEY);
	mw->state = MW_VALID;
	if (mw->pub.type == IBV_MW_TYPE_2) {
		mw->qp = qp;
		__atomic_fetch_add(&to_vqp(qp)->n_mw, 1, __ATOMIC_RELAXED);
	}
	return IBV_WC_SUCCESS;
}

enum ibv_wc_status verbs_local_bind(struct droce_qp *qp, const struct verbs_send_wqe *w)
{
	struct verbs_mw *mw = mw_get(qp->context->device, w->wr.bind.mw_index);
	enum ibv_wc_status st;

	if (mw == NULL)
		return IBV_WC_MW_BIND_ERR;	/* deallocated since the post */
	st = bind_locked(qp, mw, w);
	verbs_unlock(&mw->lock);
	return st;
}

/* Free the bound type-2 window @p mw (locked) if @p qp may: o10-37.2.26, type 1 never. */
static bool inv_locked(struct verbs_mw *mw, const struct droce_qp *qp, uint32_t rkey,
		       bool remote)
{
	if (mw->rkey != rkey || mw->pub.type != IBV_MW_TYPE_2 || mw->state != MW_VALID ||
	    mw->pd != qp->pd || (remote && mw->qp != qp))
		return false;
	mw_unbind(mw);
	mw->state = MW_FREE;
	return true;
}

static bool invalidate(struct droce_qp *qp, uint32_t rkey, bool remote)
{
	struct verbs_mw *mw;
	bool ok;

	if (!(rkey & VERBS_KEY_MW))
		return false;	/* an MR: droce has no fast-registration MR to invalidate */
	mw = mw_get(qp->context->device, mw_slot(rkey));
	if (mw == NULL)
		return false;
	ok = inv_locked(mw, qp, rkey, remote);
	verbs_unlock(&mw->lock);
	return ok;
}

enum ibv_wc_status verbs_local_inv(struct droce_qp *qp, uint32_t rkey)
{
	return invalidate(qp, rkey, false) ? IBV_WC_SUCCESS : IBV_WC_LOC_QP_OP_ERR;
}

bool verbs_remote_inv(struct droce_qp *qp, uint32_t rkey)
{
	return invalidate(qp, rkey, true);
}

void verbs_mw_qp_gone(struct droce_qp *qp)
{
	struct droce_device *dev = qp->context->device;
	struct verbs_mw *mw;
	uint32_t i;

	if (__atomic_load_n(&to_vqp(qp)->n_mw, __ATOMIC_ACQUIRE) == 0)
		return;
	pthread_mutex_lock(&dev->lock);	/* no window is freed meanwhile */
	for (i = 0; i < DROCE_MAX_MW; i++) {
		mw = dev->mw_tbl[i];
		if (mw == NULL)
			continue;
		verbs_lock(&mw->lock);
		if (mw->qp == qp)
			inv_locked(mw, qp, mw->rkey, true);
		verbs_unlock(&mw->lock);
	}
	pthread_mutex_unlock(&dev->lock);
}

uint8_t *verbs_mw_remote_mem(struct droce_device *dev, const struct droce_pd *pd,
			     const struct droce_qp *qp, uint32_t rkey, uint64_t va, uint32_t len,
			     int access)
{
	struct verbs_mw *mw = mw_get(dev, mw_slot(rkey));
	const struct droce_mr *mr;
	uint8_t *addr = NULL;
	uint64_t off;

	if (mw == NULL)
		return NULL;
	/* rxe_lookup_mw(): key, PD, the binding QP for type 2, a binding, the access. */
	if (mw->rkey != rkey || mw->state != MW_VALID || mw->length == 0 || mw->pd != pd ||
	    (mw->pub.type == IBV_MW_TYPE_2 && mw->qp != qp) || (mw->access & access) != access)
		goto out;
	if (mw->zero_based) {
		off = va;
	} else {
		if (va < mw->addr)
			goto out;
		off = va - mw->addr;
	}
	if (off > mw->length || len > mw->length - off)
		goto out;
	mr = mw->mr;	/* bound: it cannot be deregistered (n_mw) */
	addr = (uint8_t *)mr->addr + (mw->addr + off - verbs_mr_iova(mr));
out:
	verbs_unlock(&mw->lock);
	return addr;
}
