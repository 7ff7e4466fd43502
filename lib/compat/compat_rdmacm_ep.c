/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * librdmacm.so.1: address information, endpoints (rdma_create_ep(3): a synchronous id, bound
 * and listening-ready or resolved with its QP), multicast, and the ECE calls droce refuses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat_rdmacm_private.h"

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	return droce_cm_getaddrinfo(node, service, hints, res);
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	droce_cm_freeaddrinfo(res);
}

/* droce_cm_create_ep() makes the id: bound (passive) or resolved (active), with no QP; the
 * QP here is the libibverbs drop-in's, made on the application's struct ibv_pd. */
int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct droce_cm_id *d;
	struct rcm_id *w;
	int err;

	if (id == NULL || res == NULL)
		return compat_fail(EINVAL);
	if (droce_cm_create_ep(&d, res, NULL, NULL) != 0)
		return -1;
	w = compat_rcm_id_new(d, NULL, NULL);
	if (w == NULL)
		return -1;
	compat_rcm_id_event_sync(w);
	if (res->ai_flags & RAI_PASSIVE) {
		if (pd != NULL)
			w->pub.pd = pd;
		if (qp_init_attr != NULL) {
			/* Each request's QP: made by rdma_get_request(). */
			w->ep_attr = *qp_init_attr;
			w->ep_attr.qp_type = w->pub.qp_type;
			w->ep_pd = pd;
			w->ep_qp = true;
		}
	} else if (qp_init_attr != NULL) {
		qp_init_attr->qp_type = w->pub.qp_type;
		if (rdma_create_qp(&w->pub, pd, qp_init_attr) != 0) {
			err = errno;	/* the id has no QP nor SRQ: only the id goes */
			rdma_destroy_id(&w->pub);
			return compat_fail(err);
		}
	}
	*id = &w->pub;
	return 0;
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	if (id->srq != NULL)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	if (compat_rcm_check(id) != 0)
		return -1;
	compat_rcm_id_sync(to_rid(id));
	return droce_cm_join_multicast(to_rid(id)->d, addr, context);
}

int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
			   void *context)
{
	if (compat_rcm_check(id) != 0 || attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (attr->comp_mask >= RDMA_CM_JOIN_MC_ATTR_RESERVED) {
		errno = ENOTSUP;
		return -1;
	}
	if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED) {
		errno = EINVAL;
		return -1;
	}
	if (attr->join_flags != RDMA_MC_JOIN_FLAG_FULLMEMBER) {
		errno = EOPNOTSUPP;	/* send-only membership: droce's joins are full members */
		return -1;
	}
	return rdma_join_multicast(id, attr->addr, context);
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	if (compat_rcm_check(id) != 0)
		return -1;
	return droce_cm_leave_multicast(to_rid(id)->d, addr);
}

/* Enhanced connection establishment: droce's CM negotiates no vendor options. */
int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || ece == NULL || id->qp != NULL) {
		errno = EINVAL;
		return -1;
	}
	errno = EOPNOTSUPP;
	return -1;
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || ece == NULL || id->qp != NULL) {
		errno = EINVAL;
		return -1;
	}
	errno = EOPNOTSUPP;
	return -1;
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	/* No ECE was offered, so none can be refused: an ordinary consumer rejection. */
	return rdma_reject(id, private_data, private_data_len);
}
