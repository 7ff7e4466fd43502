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

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct rcm_id *w;
	int rc;

	if (id == NULL || res == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_create_id(NULL, &cid, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	w = to_rid(cid);
	w->d->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	cid->qp_type = w->d->qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		rc = res->ai_src_addr != NULL ? rdma_bind_addr(cid, res->ai_src_addr) :
						(errno = EINVAL, -1);
		if (rc == 0 && pd != NULL)
			cid->pd = pd;
		if (rc == 0 && qp_init_attr != NULL) {
			/* Each request's QP: made by rdma_get_request(). */
			w->ep_attr = *qp_init_attr;
			w->ep_attr.qp_type = cid->qp_type;
			w->ep_pd = pd;
			w->ep_qp = true;
		}
	} else {
		rc = rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000);
		if (rc == 0)
			rc = rdma_resolve_route(cid, 2000);
		if (rc == 0 && qp_init_attr != NULL) {
			qp_init_attr->qp_type = cid->qp_type;
			rc = rdma_create_qp(cid, pd, qp_init_attr);
		}
	}
	if (rc != 0) {
		rc = errno;
		rdma_destroy_ep(cid);
		errno = rc;
		return -1;
	}
	*id = cid;
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
	if (rcm_check(id) != 0)
		return -1;
	rcm_id_sync(to_rid(id));
	return droce_cm_join_multicast(to_rid(id)->d, addr, context);
}

int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
			   void *context)
{
	if (rcm_check(id) != 0 || attr == NULL) {
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
	if (rcm_check(id) != 0)
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
