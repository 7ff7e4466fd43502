/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Protection domains and memory regions.
 *
 * Keys: the low DROCE_MR_INDEX_BITS of an lkey or rkey index the device's MR table (so the
 * engine finds an MR in one step and two live MRs never share a key); bit 31 is clear (it
 * marks a memory window's R_Key, verbs_mw.c); the other 19 bits are fresh random bits from
 * getrandom() for each key, so a peer cannot guess a valid rkey from another one (rdma-core's
 * index<<8 | 8-bit key would leave 1 in 256).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "verbs_private.h"

#define KEY_INDEX_MASK ((1u << DROCE_MR_INDEX_BITS) - 1)
/* Seconds droce_dereg_mr() waits for zero-copy frames that still carry the MR's memory. */
#define MR_DRAIN_S 2

/* Access bits droce accepts; the optional range is advisory and ignored (as rdma-core). */
#define MR_ACCESS_OK (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | \
		      DROCE_ACCESS_FLUSH_GLOBAL | DROCE_ACCESS_FLUSH_PERSISTENT)
#define MR_ACCESS_UNSUPPORTED (IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB)
/* An iova keeps its address's offset in the page (as the kernel's reg_mr requires). */
#define MR_PAGE_MASK 4095u

uint32_t verbs_n_iova_mr;

struct droce_pd *droce_alloc_pd(struct droce_context *context)
{
	struct droce_device *dev;
	struct droce_pd *pd;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	dev = context->device;
	pthread_mutex_lock(&dev->lock);
	if (dev->n_pd == DROCE_MAX_PD) {
		pthread_mutex_unlock(&dev->lock);
		errno = ENOMEM;
		return NULL;
	}
	dev->n_pd++;
	pthread_mutex_unlock(&dev->lock);
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		pthread_mutex_lock(&dev->lock);
		dev->n_pd--;
		pthread_mutex_unlock(&dev->lock);
		errno = ENOMEM;
		return NULL;
	}
	pd->context = context;
	verbs_ctx_get(context);
	return pd;
}

int droce_dealloc_pd(struct droce_pd *pd)
{
	struct droce_device *dev;

	if (pd == NULL)
		return EINVAL;
	if (__atomic_load_n(&pd->usecnt, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	dev = pd->context->device;
	pthread_mutex_lock(&dev->lock);
	dev->n_pd--;
	pthread_mutex_unlock(&dev->lock);
	verbs_ctx_put(pd->context);
	free(pd);
	return 0;
}

static uint32_t make_key(uint32_t index)
{
	uint32_t r = 0;

	while (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		;	/* EINTR only: the pool is initialised long before */
	/* Bit 31 clear: it marks a memory window's R_Key (verbs_mw.c). */
	return (r & ~(KEY_INDEX_MASK | VERBS_KEY_MW)) | index;
}

/* No window is bound to @p mr, and none can be until mr_mw_unlock(). Pairs with
 * verbs_mr_mw_get(). */
static bool mr_mw_lock(struct verbs_mr *mr)
{
	uint32_t zero = 0;

	return __atomic_compare_exchange_n(&mr->n_mw, &zero, MR_MW_LOCKED, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static int check_access(int access)
{
	int hard = access & ~(IBV_ACCESS_OPTIONAL_RANGE | IBV_ACCESS_ZERO_BASED);

	if (hard & MR_ACCESS_UNSUPPORTED)
		return EOPNOTSUPP;
	if (hard & ~MR_ACCESS_OK)
		return EINVAL;
	/* IBA 10.6.3.1 (and rdma-core): remote write or atomic needs local write. */
	if ((hard & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(hard & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

/* Find a free MR table slot and publish @p mr in it. */
static int insert_mr(struct droce_device *dev, struct verbs_mr *mr)
{
	uint32_t i, idx;

	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < DROCE_MAX_MR; i++) {
		idx = (dev->mr_next + i) % DROCE_MAX_MR;
		if (dev->mr_tbl[idx] == NULL)
			break;
	}
	if (i == DROCE_MAX_MR) {
		pthread_mutex_unlock(&dev->lock);
		return ENOMEM;
	}
	dev->mr_next = idx + 1;
	mr->index = idx;
	mr->pub.lkey = make_key(idx);
	mr->pub.rkey = make_key(idx);
	/* Pairs with the load-acquire in verbs_mr_lookup(): the MR is complete when seen. */
	__atomic_store_n(&dev->mr_tbl[idx], &mr->pub, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

struct droce_mr *droce_reg_mr(struct droce_pd *pd, void *addr, size_t length, int access)
{
	/* IBV_ACCESS_ZERO_BASED: the MR's first byte is at 0 + its offset in the page. */
	uint64_t iova = (uintptr_t)addr & ((access & IBV_ACCESS_ZERO_BASED) ? MR_PAGE_MASK :
					   UINT64_MAX);

	return droce_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

struct droce_mr *droce_reg_mr_iova2(struct droce_pd *pd, void *addr, size_t length,
				    uint64_t iova, unsigned int acc)
{
	int access = (int)acc;
	struct verbs_mr *mr;
	int rc;

	if (pd == NULL || addr == NULL || length == 0 || iova + length - 1 < iova ||
	    ((iova ^ (uintptr_t)addr) & MR_PAGE_MASK) != 0) {
		errno = EINVAL;
		return NULL;
	}
	rc = check_access(access);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	/* Cache lines of its own: the engine reads it for every packet, and with calloc() it
	 * shared lines with whatever the application allocated next (a profile showed the
	 * key comparison as the lookup's whole cost). */
	mr = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(sizeof(*mr), RTE_CACHE_LINE_SIZE));
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(mr, 0, sizeof(*mr));
	mr->pub.context = pd->context;
	mr->pub.pd = pd;
	mr->pub.addr = addr;
	mr->pub.length = length;
	mr->access = access & MR_ACCESS_OK;
	mr->iova = iova;
	rc = insert_mr(pd->context->device, mr);
	if (rc != 0) {
		free(mr);
		errno = rc;
		return NULL;
	}
	if (iova != (uintptr_t)addr)
		__atomic_fetch_add(&verbs_n_iova_mr, 1, __ATOMIC_RELAXED);
	mr->pub.handle = mr->index;
	__atomic_fetch_add(&pd->usecnt, 1, __ATOMIC_RELAXED);
	return &mr->pub;
}

/*
 * Zero-copy TX segments of @p mr are still somewhere between the engine and the peer (a
 * device buffer, a ring, the peer's receive path): wait for their free, driving an inline
 * engine meanwhile. Pairs with the exchange of inflight in verbs_mr_extbuf_attach(): either
 * that one sees dead and backs off, or this one sees its segment and waits for it.
 * @return false when segments are left after MR_DRAIN_S: they sit where nobody reads them
 * (a ring whose receiving device was closed), and the MR must stay allocated for their free.
 */
static bool mr_drain(struct droce_device *dev, struct verbs_mr *mr)
{
	const struct verbs_engine_ops *ops = verbs_engine_ops_get();
	uint64_t end = 0;

	__atomic_store_n(&mr->dead, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&mr->inflight, __ATOMIC_SEQ_CST) != 0) {
		if (end == 0)
			end = rte_get_timer_cycles() + MR_DRAIN_S * rte_get_timer_hz();
		else if (rte_get_timer_cycles() > end)
			break;
		if (ops != NULL && ops->mr_wait != NULL)
			ops->mr_wait(dev);
		else
			sched_yield();
	}
	if (__atomic_load_n(&mr->inflight, __ATOMIC_SEQ_CST) == 0)
		return true;
	VERBS_LOG(WARNING, "dereg_mr: %u frames still carry the MR's memory after %u s; "
		  "its bookkeeping is kept for them", mr->inflight, MR_DRAIN_S);
	return false;
}

/*
 * The copy path: the engine looks an MR up (verbs_mr_lookup(), a load-acquire of the table
 * slot) for each packet and copies right after, within one engine iteration. A lookup that
 * ran before the store of NULL in droce_dereg_mr() may still be copying: wait until the
 * engine instance serving @p dev has passed a point between iterations after that store.
 * The store is sequenced before the request to the engine (queued under a mutex and
 * published by a store-release the engine load-acquires), so every lookup the engine makes
 * after taking the request sees NULL, and every lookup before it belongs to work that ended
 * before the engine marked the request done (store-release, load-acquired by the waiter):
 * the copies happen before droce_dereg_mr() returns, and so before any free() of the memory.
 */
static void mr_quiesce(struct droce_device *dev)
{
	const struct verbs_engine_ops *ops = verbs_engine_ops_get();

	if (ops != NULL && ops->mr_quiesce != NULL)
		ops->mr_quiesce(dev);
}

/* Take @p mr out of use: out of the table, then no zero-copy frame and no engine iteration
 * still uses it (mr_drain(), mr_quiesce()). @return false when frames are left (mr_drain()). */
static bool mr_retire(struct verbs_mr *mr)
{
	struct droce_device *dev = mr->pub.context->device;
	bool drained;

	pthread_mutex_lock(&dev->lock);
	__atomic_store_n(&dev->mr_tbl[mr->index], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	if (mr->iova != (uintptr_t)mr->pub.addr)
		__atomic_fetch_sub(&verbs_n_iova_mr, 1, __ATOMIC_RELAXED);
	drained = mr_drain(dev, mr);
	mr_quiesce(dev);
	return drained;
}

int droce_dereg_mr(struct droce_mr *m)
{
	bool drained;

	if (m == NULL)
		return EINVAL;
	if (!mr_mw_lock(to_vmr(m)))
		return EBUSY;	/* ibv_alloc_mw(3): a window is bound to it */
	drained = mr_retire(to_vmr(m));
	__atomic_fetch_sub(&m->pd->usecnt, 1, __ATOMIC_RELEASE);
	if (drained)
		free(to_vmr(m));
	return 0;
}

#define REREG_FLAGS (IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD | \
		     IBV_REREG_MR_CHANGE_ACCESS)

/* droce_rereg_mr()'s checks: the MR is left as it is when one fails. */
static int rereg_check(const struct droce_mr *m, int flags, const struct droce_pd *pd,
		       const void *addr, size_t length, int access)
{
	if (m == NULL || (flags & ~REREG_FLAGS) != 0)
		return EINVAL;
	if ((flags & IBV_REREG_MR_CHANGE_PD) && (pd == NULL || pd->context != m->context))
		return EINVAL;
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr == NULL || length == 0))
		return EINVAL;
	return (flags & IBV_REREG_MR_CHANGE_ACCESS) ? check_access(access) : 0;
}

int droce_rereg_mr(struct droce_mr *m, int flags, struct droce_pd *pd, void *addr,
		   size_t length, int access)
{
	struct droce_device *dev;
	struct verbs_mr *mr;
	int rc;

	rc = rereg_check(m, flags, pd, addr, length, access);
	if (rc != 0 || flags == 0)
		return rc;
	mr = to_vmr(m);
	if (!mr_mw_lock(mr))
		return EBUSY;	/* a window is bound to it: as droce_dereg_mr() */
	dev = m->context->device;
	/* As droce_dereg_mr(); frames left after the drain keep their reference to it. */
	mr_retire(mr);
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		__atomic_fetch_add(&pd->usecnt, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&m->pd->usecnt, 1, __ATOMIC_RELEASE);
		m->pd = pd;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		m->addr = addr;
		m->length = length;
		mr->iova = (uintptr_t)addr;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		mr->access = access & MR_ACCESS_OK;
	if (mr->iova != (uintptr_t)m->addr)
		__atomic_fetch_add(&verbs_n_iova_mr, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&mr->dead, 0, __ATOMIC_SEQ_CST);
	/* Fresh keys, so a key given out for the old registration names nothing. */
	pthread_mutex_lock(&dev->lock);
	m->lkey = make_key(mr->index);
	m->rkey = make_key(mr->index);
	/* Pairs with the load-acquire in verbs_mr_lookup(). */
	__atomic_store_n(&dev->mr_tbl[mr->index], m, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dev->lock);
	__atomic_store_n(&mr->n_mw, 0, __ATOMIC_SEQ_CST);	/* windows may bind again */
	return 0;
}

struct droce_mr *verbs_mr_lookup(struct droce_device *dev, uint32_t key, bool remote)
{
	/* Pairs with the store-release in insert_mr(). */
	struct droce_mr *mr = __atomic_load_n(&dev->mr_tbl[key & KEY_INDEX_MASK],
					      __ATOMIC_ACQUIRE);

	if (mr == NULL || (remote ? mr->rkey : mr->lkey) != key)
		return NULL;
	return mr;
}

int verbs_mr_access(const struct droce_mr *mr)
{
	return container_of(mr, const struct verbs_mr, pub)->access;
}

uint64_t verbs_mr_iova(const struct droce_mr *mr)
{
	return container_of(mr, const struct verbs_mr, pub)->iova;
}

/* The live MR R_Key @p rkey names, if it belongs to @p pd and has every bit of @p access. */
static const struct verbs_mr *remote_mr(struct droce_device *dev, const struct droce_pd *pd,
					uint32_t rkey, int access)
{
	const struct droce_mr *m = verbs_mr_lookup(dev, rkey, true);
	const struct verbs_mr *mr;

	if (m == NULL)
		return NULL;
	mr = container_of(m, const struct verbs_mr, pub);
	if (m->pd != pd || (mr->access & access) != access)
		return NULL;
	return mr;
}

uint8_t *verbs_mr_remote_mem(struct droce_device *dev, const struct droce_pd *pd,
			     const struct droce_qp *qp, uint32_t rkey, uint64_t va, uint32_t len,
			     int access)
{
	const struct verbs_mr *mr;

	if (unlikely(rkey & VERBS_KEY_MW))
		return verbs_mw_remote_mem(dev, pd, qp, rkey, va, len, access);
	mr = remote_mr(dev, pd, rkey, access);
	if (mr == NULL || va < mr->iova || va - mr->iova > mr->pub.length ||
	    len > mr->pub.length - (va - mr->iova))
		return NULL;
	return (uint8_t *)mr->pub.addr + (va - mr->iova);
}

uint8_t *verbs_mr_remote_whole(struct droce_device *dev, const struct droce_pd *pd,
			       uint32_t rkey, int access, size_t *len)
{
	const struct verbs_mr *mr = remote_mr(dev, pd, rkey, access);

	if (mr == NULL)
		return NULL;
	*len = mr->pub.length;
	return mr->pub.addr;
}

/* The slow part of verbs_sge_iova(): each SGE whose lkey names an MR registered under another
 * iova is moved to the MR's memory; one outside the MR's iova range gets address 0, which
 * no MR holds, so the engine completes the WR with IBV_WC_LOC_PROT_ERR as for any SGE outside
 * its MR. An lkey that names no MR is left for the engine to refuse. */
void verbs_sge_iova_slow(struct droce_device *dev, struct ibv_sge *sge, uint32_t n)
{
	const struct droce_mr *m;
	uint64_t iova;
	uint32_t i;

	for (i = 0; i < n; i++) {
		m = verbs_mr_lookup(dev, sge[i].lkey, false);
		if (m == NULL || sge[i].length == 0)
			continue;
		iova = verbs_mr_iova(m);
		if (iova == (uintptr_t)m->addr)
			continue;
		if (sge[i].addr < iova || sge[i].addr - iova > m->length ||
		    sge[i].length > m->length - (sge[i].addr - iova))
			sge[i].addr = 0;
		else
			sge[i].addr = (uintptr_t)m->addr + (sge[i].addr - iova);
	}
}

/* The last reference to a zero-copy segment is gone (rte_pktmbuf_free() of it). */
static void extbuf_free(void *addr, void *opaque)
{
	struct verbs_mr *mr = opaque;

	RTE_SET_USED(addr);
	/* Pairs with the load in mr_drain(): the segment's readers are done before. */
	__atomic_fetch_sub(&mr->inflight, 1, __ATOMIC_SEQ_CST);
}

bool verbs_mr_extbuf_attach(struct rte_mbuf *seg, struct droce_mr *m, void *addr, uint16_t len)
{
	struct verbs_mr *mr = to_vmr(m);
	struct rte_mbuf_ext_shared_info *sh;

	/* Pairs with mr_drain(): announce the segment, then look for dead. */
	__atomic_fetch_add(&mr->inflight, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&mr->dead, __ATOMIC_SEQ_CST) != 0) {
		__atomic_fetch_sub(&mr->inflight, 1, __ATOMIC_SEQ_CST);
		return false;
	}
	/* The segment's own room is unused while it is attached, and (never cloned) it is the
	 * only reference to its shared info: freed, it calls extbuf_free() before the room is
	 * its own again. */
	sh = (struct rte_mbuf_ext_shared_info *)seg->buf_addr;
	sh->free_cb = extbuf_free;
	sh->fcb_opaque = mr;
	rte_mbuf_ext_refcnt_set(sh, 1);
	rte_pktmbuf_attach_extbuf(seg, addr, RTE_BAD_IOVA, len, sh);
	seg->data_len = len;
	seg->pkt_len = len;
	return true;
}
