/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * UD multicast groups (ibv_attach_mcast(3), ibv_detach_mcast(3)). Verbs keeps the groups of
 * each device and their QPs (the authority for the errors and the limits); the engine keeps
 * its own copy for the receive path, updated through the engine's mcast hook on the instance
 * that serves the device, so the packet path takes no lock.
 *
 * Errors follow Linux: ib_attach_mcast()/ib_detach_mcast() refuse non-UD QPs and GIDs that
 * are not multicast (EINVAL) and ignore the LID on RoCE; uverbs answers a second attach of the
 * same group with 0 and a detach of a group the QP is not in with EINVAL; rxe's limits give
 * ENOMEM; destroying a QP that is still attached fails with EBUSY (uverbs_free_qp()).
 */
#include <errno.h>
#include <string.h>

#include "droce_wire_mcast.h"
#include "verbs_private.h"

static int check_args(struct droce_qp *qp, const union ibv_gid *gid)
{
	if (qp == NULL || gid == NULL)
		return EINVAL;
	if (qp->qp_type != IBV_QPT_UD || !droce_gid_is_mcast(gid->raw))
		return EINVAL;
	return 0;
}

static struct verbs_mcg *find_group(struct droce_device *dev, const union ibv_gid *gid)
{
	uint32_t i;

	for (i = 0; i < dev->n_mcg; i++)
		if (memcmp(dev->mcg[i].gid.raw, gid->raw, 16) == 0)
			return &dev->mcg[i];
	return NULL;
}

/* Index of @p qp in @p g, or -1. */
static int find_member(const struct verbs_mcg *g, const struct droce_qp *qp)
{
	uint32_t i;

	for (i = 0; g != NULL && i < g->n_qp; i++)
		if (g->qp[i] == qp)
			return (int)i;
	return -1;
}

/* The engine's copy (no engine: the verbs tests, nothing to do). Returns an errno value. */
static int mcast_engine_update(struct droce_qp *qp, const union ibv_gid *gid, bool attach)
{
	const struct verbs_engine_ops *ops = verbs_engine_ops_get();

	return ops != NULL && ops->mcast != NULL ? -ops->mcast(qp, gid, attach) : 0;
}

/* Room for one more attachment of a QP to @p g (NULL: a new group)? */
static int check_limits(const struct droce_device *dev, const struct verbs_mcg *g)
{
	if (g == NULL && dev->n_mcg == DROCE_MAX_MCAST_GRP)
		return ENOMEM;
	if (g != NULL && g->n_qp == DROCE_MAX_MCAST_QP_ATTACH)
		return ENOMEM;
	if (dev->n_mcast_attach == DROCE_MAX_TOTAL_MCAST_QP_ATTACH)
		return ENOMEM;
	return 0;
}

/* Caller holds mcast_lock. */
static int attach_locked(struct droce_device *dev, struct droce_qp *qp,
			 const union ibv_gid *gid)
{
	struct verbs_mcg *g = find_group(dev, gid);
	int rc;

	if (find_member(g, qp) >= 0)
		return 0;	/* already a member: uverbs answers 0 */
	rc = check_limits(dev, g);
	if (rc == 0)
		rc = mcast_engine_update(qp, gid, true);
	if (rc != 0)
		return rc;
	if (g == NULL) {
		g = &dev->mcg[dev->n_mcg++];
		g->gid = *gid;
		g->n_qp = 0;
	}
	g->qp[g->n_qp++] = qp;
	dev->n_mcast_attach++;
	to_vqp(qp)->n_mcast++;
	return 0;
}

/* Caller holds mcast_lock. */
static int detach_locked(struct droce_device *dev, struct droce_qp *qp,
			 const union ibv_gid *gid)
{
	struct verbs_mcg *g = find_group(dev, gid);
	int i = find_member(g, qp);
	int rc;

	if (i < 0)
		return EINVAL;	/* not attached (uverbs) */
	rc = mcast_engine_update(qp, gid, false);
	if (rc != 0)
		return rc;
	g->qp[i] = g->qp[--g->n_qp];
	if (g->n_qp == 0)
		*g = dev->mcg[--dev->n_mcg];
	dev->n_mcast_attach--;
	to_vqp(qp)->n_mcast--;
	return 0;
}

int droce_attach_mcast(struct droce_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct droce_device *dev;
	int rc = check_args(qp, gid);

	RTE_SET_USED(lid);	/* RoCE: the multicast LID is ignored (IBA A16/A17) */
	if (rc != 0)
		return rc;
	dev = qp->context->device;
	pthread_mutex_lock(&dev->mcast_lock);
	rc = attach_locked(dev, qp, gid);
	pthread_mutex_unlock(&dev->mcast_lock);
	return rc;
}

int droce_detach_mcast(struct droce_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct droce_device *dev;
	int rc = check_args(qp, gid);

	RTE_SET_USED(lid);
	if (rc != 0)
		return rc;
	dev = qp->context->device;
	pthread_mutex_lock(&dev->mcast_lock);
	rc = detach_locked(dev, qp, gid);
	pthread_mutex_unlock(&dev->mcast_lock);
	return rc;
}

int verbs_qp_mcast_busy(struct verbs_qp *qp)
{
	struct droce_device *dev = qp->pub.context->device;
	uint32_t n;

	pthread_mutex_lock(&dev->mcast_lock);
	n = qp->n_mcast;
	pthread_mutex_unlock(&dev->mcast_lock);
	return n != 0 ? EBUSY : 0;
}
