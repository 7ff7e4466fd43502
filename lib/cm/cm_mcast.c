/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Multicast on UD ids (rdma_join_multicast(3), rdma_leave_multicast(3)) as rdma_cm does it on
 * RoCE v2: no subnet administrator to join, so the group's GID is the group address (an IPv4
 * group as ::ffff:a.b.c.d, an IPv6 group as it is) and MULTICAST_JOIN is queued at once, with
 * what a sender needs (an AH's attributes for the group, QPN 0xFFFFFF, Q_Key RDMA_UDP_QKEY)
 * and the caller's context as private data. The id's QP, if it has one, is attached to the
 * group (droce_attach_mcast()); leaving detaches it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm_private.h"

static bool is_group(const struct sockaddr *sa, union ibv_gid *mgid)
{
	if (!cm_sockaddr_gid(sa, mgid))
		return false;
	if (sa->sa_family == AF_INET)
		return (mgid->raw[12] & 0xf0) == 0xe0;	/* 224.0.0.0/4 */
	return mgid->raw[0] == 0xff;
}

static struct cm_mc *find(struct cm_id *id, const union ibv_gid *mgid)
{
	struct cm_mc *mc;

	for (mc = id->mc; mc != NULL; mc = mc->next)
		if (memcmp(mc->mgid.raw, mgid->raw, 16) == 0)
			return mc;
	return NULL;
}

static int join_locked(struct cm_id *id, const struct sockaddr *addr, void *context)
{
	struct rdma_ud_param *ud;
	struct cm_event *e;
	union ibv_gid mgid;
	struct cm_mc *mc;
	int rc;

	if (id->pub.qp_type != IBV_QPT_UD || id->agent == NULL ||
	    (id->state != CM_ADDR_BOUND && id->state != CM_ADDR_RESOLVED &&
	     id->state != CM_ROUTE_RESOLVED))
		return EINVAL;
	if (addr->sa_family != id->pub.route.addr.src_addr.sa_family || !is_group(addr, &mgid))
		return EINVAL;
	if (find(id, &mgid) != NULL)
		return EADDRINUSE;
	mc = calloc(1, sizeof(*mc));
	if (mc == NULL)
		return ENOMEM;
	mc->mgid = mgid;
	mc->context = context;
	if (id->pub.qp != NULL) {
		rc = droce_attach_mcast(id->pub.qp, &mgid, 0);
		if (rc != 0) {
			free(mc);
			return rc;
		}
		mc->qp = id->pub.qp;
	}
	mc->next = id->mc;
	id->mc = mc;
	e = cm_event_queue(id, RDMA_CM_EVENT_MULTICAST_JOIN, 0, NULL, 0);
	if (e == NULL)
		return 0;
	ud = &e->pub.param.ud;
	ud->private_data = context;	/* librdmacm hands the join's context back here */
	ud->ah_attr.is_global = 1;
	ud->ah_attr.port_num = 1;
	ud->ah_attr.grh.dgid = mgid;
	ud->ah_attr.grh.sgid_index = id->sgid_index;
	ud->ah_attr.grh.hop_limit = 64;
	ud->ah_attr.grh.traffic_class = id->tos;
	ud->qp_num = 0xffffff;
	ud->qkey = RDMA_UDP_QKEY;
	return 0;
}

int droce_cm_join_multicast(struct droce_cm_id *pub, struct sockaddr *addr, void *context)
{
	int rc;

	if (pub == NULL || addr == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_svc.lock);
	rc = join_locked(to_cid(pub), addr, context);
	return cm_unlock_return(rc);
}

static void leave(struct cm_id *id, struct cm_mc **link)
{
	struct cm_mc *mc = *link;

	if (mc->qp != NULL && mc->qp == id->pub.qp)
		droce_detach_mcast(mc->qp, &mc->mgid, 0);
	*link = mc->next;
	free(mc);
}

int droce_cm_leave_multicast(struct droce_cm_id *pub, struct sockaddr *addr)
{
	struct cm_mc **link;
	union ibv_gid mgid;
	struct cm_id *id;
	int rc = EADDRNOTAVAIL;

	if (pub == NULL || addr == NULL || !cm_sockaddr_gid(addr, &mgid)) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	for (link = &id->mc; *link != NULL; link = &(*link)->next) {
		if (memcmp((*link)->mgid.raw, mgid.raw, 16) == 0) {
			leave(id, link);
			rc = 0;
			break;
		}
	}
	return cm_unlock_return(rc);
}

void cm_mcast_leave_all(struct cm_id *id)
{
	while (id->mc != NULL)
		leave(id, &id->mc);
}
