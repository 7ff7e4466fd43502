/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * QPs in the engine. A new QP (verbs calls qp_created() from droce_create_qp()) gets its
 * transport state, is given to one shard of its device (engine_shard.c: with one engine lcore
 * per device, the device), is attached to the verbs_owner of the instance that serves that
 * shard, and is added to the instance's QP list and the shard's QP table by an
 * engine_inst_call(). From then on only that instance touches it: modify and destroy arrive through the owner
 * (engine_qp_modified(), engine_qp_detached()) between two iterations, or - inline - under the
 * driver lock.
 */
#include <errno.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "droce_engine.h"
#include "engine_private.h"

/* The device's primary shard. */
static struct engine_shard *edev_of(const struct droce_qp *qp)
{
	return verbs_device_engine(qp->context->device);
}

/* @p qp as instance @p lc, which owns it, sees it. */
static struct engine_qp *find(const struct engine_inst *lc, const struct droce_qp *qp)
{
	struct engine_shard *edev = edev_of(qp);
	uint32_t idx = verbs_qpn_slot(qp->qp_num);

	if (edev == NULL || idx >= DROCE_QP_SLOTS)
		return NULL;
	edev = edev->by_lc[lc->idx];
	return edev != NULL ? edev->qps[idx] : NULL;
}

static void add_on_lcore(struct engine_inst *lc, void *arg)
{
	struct engine_qp *eq = arg;

	eq->list_idx = lc->n_qps;
	lc->qps[lc->n_qps++] = eq;
	eq->edev->qps[verbs_qpn_slot(eq->qp->qp_num)] = eq;
	lc->by_slot[verbs_qp_db_slot(eq->qp)] = eq;
}

static int qp_created(struct droce_qp *qp)
{
	struct engine_shard *p = edev_of(qp), *edev;
	struct engine_inst *lc;
	struct engine_qp *eq;
	unsigned int k;
	int rc;

	if (p == NULL || p->lc == NULL)
		return -ENODEV;
	k = engine_shard_pick(p, qp);
	edev = p->shard[k];
	lc = edev->lc;
	eq = calloc(1, sizeof(*eq));
	if (eq == NULL)
		return -ENOMEM;
	eq->qp = qp;
	eq->edev = edev;
	eq->deadline = UINT64_MAX;
	eq->heap_idx = UINT32_MAX;
	eq->active_idx = UINT32_MAX;
	eq->t = transport_qp_create(qp, &edev->cnt);	/* edev lives as long as the process */
	if (eq->t == NULL) {
		rc = rte_errno > 0 ? -rte_errno : -ENOMEM;
		free(eq);
		return rc;
	}
	rc = transport_rec_enable(eq->t, engine_cfg.recorder, engine_cfg.recorder_dir);
	if (rc == 0)
		rc = verbs_qp_attach(qp, &lc->owner);
	if (rc != 0) {
		transport_qp_destroy(eq->t);
		free(eq);
		return rc;
	}
	engine_shard_own(p, qp->qp_num, k);	/* before any shard can find it */
	engine_inst_call(lc, add_on_lcore, eq);
	return 0;
}

void engine_qp_detached(struct verbs_owner *o, struct droce_qp *qp)
{
	struct engine_inst *lc = o->arg;
	struct engine_qp *eq = find(lc, qp);
	struct engine_qp *last;

	if (eq == NULL)
		return;
	engine_shard_own(eq->edev->primary, qp->qp_num, ENGINE_NO_SHARD);
	engine_timers_set(&lc->timers, eq, UINT64_MAX);
	last = lc->qps[--lc->n_qps];
	lc->qps[eq->list_idx] = last;
	last->list_idx = eq->list_idx;
	eq->edev->qps[verbs_qpn_slot(qp->qp_num)] = NULL;
	lc->by_slot[verbs_qp_db_slot(qp)] = NULL;	/* a doorbell still set is now stale */
	engine_qp_deactivate(lc, eq);
	/* The application may destroy the QP right after polling its last receive completion:
	 * the ACK for that request may still be queued (behind READ responses, or coalescing).
	 * Send it, and hand it to the port now: inline, no iteration may follow. */
	if (eq->edev->started) {
		engine_env_enter(lc);
		transport_flush(&lc->env, eq->t);
		engine_shard_flush(eq->edev);
	}
	engine_mcast_forget(eq->edev, eq);	/* verbs refuses to destroy an attached QP */
	transport_qp_destroy(eq->t);
	free(eq);
}

void engine_qp_modified(struct verbs_owner *o, struct droce_qp *qp, int attr_mask)
{
	struct engine_inst *lc = o->arg;
	struct engine_qp *eq = find(lc, qp);

	if (eq == NULL)
		return;
	/* Inline, this runs in a control caller's thread under the driver lock: refresh the
	 * clock, the last iteration may be long past. */
	engine_env_enter(lc);
	transport_qp_modified(&lc->env, eq->t, attr_mask);
	engine_qp_rearm(lc, eq);
}

void engine_qp_rearm(struct engine_inst *lc, struct engine_qp *eq)
{
	engine_timers_set(&lc->timers, eq, transport_deadline(eq->t));
	engine_qp_activate(lc, eq);
}

void engine_qp_activate(struct engine_inst *lc, struct engine_qp *eq)
{
	struct engine_shard *edev = eq->edev;

	RTE_SET_USED(lc);
	if (eq->active_idx != UINT32_MAX)
		return;
	eq->active_idx = edev->n_active;
	edev->active[edev->n_active++] = eq;
}

void engine_qp_deactivate(struct engine_inst *lc, struct engine_qp *eq)
{
	struct engine_shard *edev = eq->edev;
	struct engine_qp *last;

	RTE_SET_USED(lc);
	if (eq->active_idx == UINT32_MAX)
		return;
	last = edev->active[--edev->n_active];
	edev->active[eq->active_idx] = last;
	last->active_idx = eq->active_idx;
	eq->active_idx = UINT32_MAX;
}

/* ---- Per-QP counters (public: droce_engine.h) ---- */

struct qp_counters_arg {
	const struct droce_qp *qp;
	struct droce_counters *out;
	int rc;
};

static void qp_counters_op(struct engine_inst *lc, void *arg)
{
	struct qp_counters_arg *a = arg;
	struct engine_qp *eq = find(lc, a->qp);

	if (eq == NULL || eq->qp != a->qp) {
		a->rc = -EINVAL;	/* not (or no longer) a QP of this engine */
		return;
	}
	*a->out = *transport_qp_counters(eq->t);
	a->rc = 0;
}

int droce_query_qp_counters(struct droce_qp *qp, struct droce_counters *out)
{
	struct qp_counters_arg a = { .qp = qp, .out = out, .rc = -EINVAL };
	struct engine_shard *edev;
	struct engine_inst *lc;

	if (qp == NULL || out == NULL)
		return -EINVAL;
	edev = edev_of(qp);
	/* The QP keeps its context, hence its device, open: its shard stays on lc. The QP's
	 * shard is the one engine_shard_pick() chose (a QP the engine does not drive: -EINVAL
	 * from the call). */
	if (edev != NULL && __atomic_load_n(&edev->lc, __ATOMIC_ACQUIRE) != NULL)
		edev = edev->shard[engine_shard_pick(edev, qp)];
	lc = edev != NULL ? __atomic_load_n(&edev->lc, __ATOMIC_ACQUIRE) : NULL;
	if (lc == NULL)
		return -ENODEV;
	engine_inst_call(lc, qp_counters_op, &a);
	return a.rc;
}

int engine_device_open(struct droce_device *dev);
void engine_device_close(struct droce_device *dev);

const struct verbs_engine_ops engine_verbs_ops = {
	.device_open = engine_device_open,
	.device_close = engine_device_close,
	.qp_created = qp_created,
	.mcast = engine_mcast_update,
	.mr_wait = engine_mr_wait,
	.mr_quiesce = engine_mr_quiesce,
};
