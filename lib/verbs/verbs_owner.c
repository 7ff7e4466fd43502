/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * QP ownership (see verbs_engine.h). A control caller of an owned QP sends a request through
 * the owner's mailbox (verbs_mbox.c) and waits; the owner applies it in verbs_owner_poll(), between
 * two of its data-path steps, so control never runs concurrently with the QP's data path.
 */
#include <errno.h>
#include <string.h>

#include "verbs_private.h"

enum { CTL_MODIFY, CTL_DETACH };

struct ctl_req {
	struct verbs_mbox_msg m;
	int op;
	struct verbs_owner *o;
	struct verbs_qp *qp;
	struct ibv_qp_attr *attr;
	int mask;
	int result;
};

int verbs_owner_init(struct verbs_owner *o, const char *name)
{
	RTE_SET_USED(name);
	o->detached = NULL;
	o->modified = NULL;
	o->arg = NULL;
	RTE_BUILD_BUG_ON(VERBS_DB_SUM_WORDS > 64);	/* db_top has a bit per summary word */
	o->db_top = 0;
	memset(o->db_sum, 0, sizeof(o->db_sum));
	memset(o->db_bits, 0, sizeof(o->db_bits));
	verbs_mbox_init(&o->mbox);
	return 0;
}

void verbs_owner_fini(struct verbs_owner *o)
{
	verbs_mbox_fini(&o->mbox);
}

int verbs_qp_attach(struct droce_qp *q, struct verbs_owner *o)
{
	struct verbs_qp *qp = to_vqp(q);
	int rc = 0;

	pthread_mutex_lock(&qp->ctl_lock);
	if (qp->owner != NULL)
		rc = -EBUSY;
	else
		__atomic_store_n(&qp->owner, o, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&qp->ctl_lock);
	return rc;
}

/* The owner's side of a request (its thread, or the sender's under the driver mutex). */
static void apply(struct verbs_mbox_msg *m)
{
	struct ctl_req *r = container_of(m, struct ctl_req, m);
	struct verbs_owner *o = r->o;
	struct verbs_qp *qp = r->qp;

	pthread_mutex_lock(&qp->ctl_lock);
	if (r->op == CTL_MODIFY) {
		r->result = verbs_qp_modify_apply(qp, r->attr, r->mask);
	} else {
		__atomic_store_n(&qp->owner, NULL, __ATOMIC_RELEASE);
		r->result = 0;
	}
	pthread_mutex_unlock(&qp->ctl_lock);
	if (r->op == CTL_MODIFY) {
		if (r->result == 0 && o->modified != NULL)
			o->modified(o, &qp->pub, r->mask);
		verbs_qp_check_cqs(qp);
	} else if (o->detached != NULL)
		o->detached(o, &qp->pub);
}

/* Control path: send @p r to the QP's owner and wait until it was applied. */
static int submit(struct ctl_req *r)
{
	r->o = __atomic_load_n(&r->qp->owner, __ATOMIC_ACQUIRE);
	r->m.fn = apply;
	verbs_mbox_send(&r->o->mbox, &r->m);
	return r->result;
}

int verbs_owner_modify(struct verbs_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct ctl_req r = { .op = CTL_MODIFY, .qp = qp, .attr = attr, .mask = mask };

	return submit(&r);
}

void verbs_owner_detach(struct verbs_qp *qp)
{
	struct ctl_req r = { .op = CTL_DETACH, .qp = qp };

	submit(&r);
}

unsigned int verbs_owner_poll(struct verbs_owner *o)
{
	return verbs_mbox_poll(&o->mbox);
}

/* ---- Doorbells (verbs_engine.h) ---- */

uint32_t verbs_qp_db_slot(const struct droce_qp *qp)
{
	return verbs_device_index(qp->context->device) * DROCE_QP_SLOTS +
	       verbs_qpn_slot(qp->qp_num);
}

void verbs_qp_db_ring(struct droce_qp *q)
{
	struct verbs_qp *qp = to_vqp(q);
	/* Pairs with the store-release in verbs_qp_attach(). */
	struct verbs_owner *o = __atomic_load_n(&qp->owner, __ATOMIC_ACQUIRE);
	uint32_t slot;
	uint64_t bit;

	if (o == NULL)
		return;	/* unowned: whoever drives it polls its queues */
	/* Pairs with the exchange in verbs_qp_db_disarm(): if that one comes later, the owner's
	 * re-check after it sees the head this thread published; if it came first, this reads 0
	 * and rings. Already armed: the owner watches the QP and will see the head. */
	if (__atomic_exchange_n(&qp->db_armed, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	slot = verbs_qp_db_slot(q);
	bit = UINT64_C(1) << (slot % 64);
	/* Only the poster that makes a word non-zero marks the level above, after the word: the
	 * owner clears each level before it takes the one below. All pair with the exchanges in
	 * verbs_owner_doorbells(). */
	if ((__atomic_fetch_or(&o->db_bits[slot / 64], bit, __ATOMIC_ACQ_REL) & ~bit) != 0)
		return;
	bit = UINT64_C(1) << (slot / 64 % 64);
	if ((__atomic_fetch_or(&o->db_sum[slot / 64 / 64], bit, __ATOMIC_ACQ_REL) & ~bit) != 0)
		return;
	__atomic_fetch_or(&o->db_top, UINT64_C(1) << (slot / 64 / 64), __ATOMIC_RELEASE);
}

static unsigned int take_word(struct verbs_owner *o, uint32_t w,
			      void (*fn)(void *arg, uint32_t slot), void *arg)
{
	/* Pairs with the fetch-or of the word in verbs_qp_db_ring(). */
	uint64_t bits = __atomic_exchange_n(&o->db_bits[w], 0, __ATOMIC_ACQ_REL);
	unsigned int n = 0;

	for (; bits != 0; bits &= bits - 1, n++)
		fn(arg, w * 64 + (uint32_t)__builtin_ctzll(bits));
	return n;
}

unsigned int verbs_owner_doorbells(struct verbs_owner *o, void (*fn)(void *arg, uint32_t slot),
				   void *arg)
{
	unsigned int i, n = 0;
	uint64_t top, sum;

	if (__atomic_load_n(&o->db_top, __ATOMIC_RELAXED) == 0)
		return 0;	/* the common case: one load */
	/* Pairs with the fetch-or of db_top in verbs_qp_db_ring(). */
	top = __atomic_exchange_n(&o->db_top, 0, __ATOMIC_ACQUIRE);
	for (; top != 0; top &= top - 1) {
		i = (unsigned int)__builtin_ctzll(top);
		/* Pairs with the fetch-or of the summary in verbs_qp_db_ring(). */
		sum = __atomic_exchange_n(&o->db_sum[i], 0, __ATOMIC_ACQ_REL);
		for (; sum != 0; sum &= sum - 1)
			n += take_word(o, i * 64 + (uint32_t)__builtin_ctzll(sum), fn, arg);
	}
	return n;
}

void verbs_qp_db_disarm(struct droce_qp *q)
{
	/* Pairs with the exchange in verbs_qp_db_ring(): the caller's re-check of the queues
	 * comes after this, so it sees every head published before a ring that found 1. */
	__atomic_exchange_n(&to_vqp(q)->db_armed, 0, __ATOMIC_ACQ_REL);
}
