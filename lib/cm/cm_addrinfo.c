/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * rdma_getaddrinfo(3) and rdma_create_ep(3): names and services through getaddrinfo(3) (the
 * first result, as librdmacm), turned into the port space, QP type and source or destination
 * address an id needs; and the synchronous endpoint built from them. No ibacm: ai_route and
 * ai_connect stay empty, as on a Linux host without it.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "cm_private.h"

static int gai_hints(const struct rdma_addrinfo *h, struct addrinfo *out)
{
	memset(out, 0, sizeof(*out));
	if (h->ai_flags & RAI_PASSIVE)
		out->ai_flags |= AI_PASSIVE;
	if (h->ai_flags & RAI_NUMERICHOST)
		out->ai_flags |= AI_NUMERICHOST;
	if (h->ai_family != AF_UNSPEC && h->ai_family != AF_INET && h->ai_family != AF_INET6)
		return EINVAL;	/* AF_IB: droce's ids are IP ids */
	out->ai_family = h->ai_family;
	if (h->ai_qp_type == IBV_QPT_RC || h->ai_qp_type == IBV_QPT_UC)
		out->ai_socktype = SOCK_STREAM;
	else if (h->ai_qp_type == IBV_QPT_UD)
		out->ai_socktype = SOCK_DGRAM;
	if (h->ai_port_space == RDMA_PS_TCP)
		out->ai_protocol = IPPROTO_TCP;
	else if (h->ai_port_space == RDMA_PS_UDP || h->ai_port_space == RDMA_PS_IPOIB)
		out->ai_protocol = IPPROTO_UDP;
	return 0;
}

static struct sockaddr *sa_dup(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *d = malloc(len);

	if (d != NULL)
		memcpy(d, sa, len);
	return d;
}

static int fill(struct rdma_addrinfo *r, const struct rdma_addrinfo *hints,
		const struct addrinfo *ai)
{
	bool passive = hints != NULL && (hints->ai_flags & RAI_PASSIVE);

	r->ai_family = ai->ai_family;
	r->ai_qp_type = hints != NULL && hints->ai_qp_type != 0 ? hints->ai_qp_type :
			ai->ai_socktype == SOCK_DGRAM ? IBV_QPT_UD : IBV_QPT_RC;
	r->ai_port_space = hints != NULL && hints->ai_port_space != 0 ? hints->ai_port_space :
			   ai->ai_protocol == IPPROTO_UDP ? RDMA_PS_UDP : RDMA_PS_TCP;
	if (passive) {
		r->ai_flags = RAI_PASSIVE;
		r->ai_src_addr = sa_dup(ai->ai_addr, ai->ai_addrlen);
		r->ai_src_len = ai->ai_addrlen;
		return r->ai_src_addr != NULL ? 0 : ENOMEM;
	}
	r->ai_dst_addr = sa_dup(ai->ai_addr, ai->ai_addrlen);
	r->ai_dst_len = ai->ai_addrlen;
	return r->ai_dst_addr != NULL ? 0 : ENOMEM;
}

/* A result without a source address takes the hints' (librdmacm does so whether passive or
 * not: libfabric's verbs provider asks for a passive result with only hints, its domain's
 * address as the source, and binds to that). */
static int src_from_hints(struct rdma_addrinfo *r, const struct rdma_addrinfo *h)
{
	if (r->ai_src_len != 0 || h == NULL || h->ai_src_len == 0 || h->ai_src_addr == NULL)
		return 0;
	r->ai_src_addr = sa_dup(h->ai_src_addr, h->ai_src_len);
	r->ai_src_len = h->ai_src_len;
	return r->ai_src_addr != NULL ? 0 : ENOMEM;
}

/* Only hints: what they say, their destination included (librdmacm's ucma_copy_ai()). */
static int from_hints(struct rdma_addrinfo *r, const struct rdma_addrinfo *h)
{
	r->ai_flags = h->ai_flags;
	r->ai_family = h->ai_family;
	r->ai_qp_type = h->ai_qp_type;
	r->ai_port_space = h->ai_port_space;
	if (h->ai_dst_len != 0 && h->ai_dst_addr != NULL) {
		r->ai_dst_addr = sa_dup(h->ai_dst_addr, h->ai_dst_len);
		r->ai_dst_len = h->ai_dst_len;
		if (r->ai_dst_addr == NULL)
			return ENOMEM;
	}
	return 0;
}

int droce_cm_getaddrinfo(const char *node, const char *service,
			 const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct addrinfo gh, *ai = NULL;
	struct rdma_addrinfo *r;
	int rc;

	if (res == NULL || (node == NULL && service == NULL && hints == NULL)) {
		errno = EINVAL;
		return -1;
	}
	rc = cm_start();
	if (rc != 0) {
		errno = -rc;
		return -1;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (node == NULL && service == NULL) {
		rc = from_hints(r, hints);
	} else {
		rc = hints != NULL ? gai_hints(hints, &gh) : 0;
		if (rc == 0) {
			rc = getaddrinfo(node, service, hints != NULL ? &gh : NULL, &ai);
			if (rc != 0) {
				free(r);
				return rc;	/* EAI_*, as librdmacm returns it */
			}
			rc = fill(r, hints, ai);
			freeaddrinfo(ai);
		}
	}
	if (rc == 0)
		rc = src_from_hints(r, hints);
	if (rc != 0) {
		droce_cm_freeaddrinfo(r);
		errno = rc;
		return -1;
	}
	*res = r;
	return 0;
}

void droce_cm_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res != NULL; res = next) {
		next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}

int droce_cm_create_ep(struct droce_cm_id **out, struct rdma_addrinfo *res, struct droce_pd *pd,
		       struct droce_qp_init_attr *qp_init_attr)
{
	struct droce_cm_id *pub;
	struct cm_id *id;
	int rc;

	if (out == NULL || res == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (droce_cm_create_id(NULL, &pub, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	id = to_cid(pub);
	pub->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		rc = res->ai_src_addr != NULL ? droce_cm_bind_addr(pub, res->ai_src_addr) :
						(errno = EINVAL, -1);
		if (rc == 0 && pd != NULL)
			pub->pd = pd;
		if (rc == 0 && qp_init_attr != NULL) {
			/* The QP of each request is made by droce_cm_get_request(). */
			id->ep_attr = *qp_init_attr;
			id->ep_attr.qp_type = pub->qp_type;
			id->ep_pd = pd;
			id->ep_qp = true;
		}
	} else {
		rc = droce_cm_resolve_addr(pub, res->ai_src_addr, res->ai_dst_addr, 2000);
		if (rc == 0)
			rc = droce_cm_resolve_route(pub, 2000);
		if (rc == 0 && qp_init_attr != NULL) {
			qp_init_attr->qp_type = pub->qp_type;
			rc = droce_cm_create_qp(pub, pd, qp_init_attr);
		}
	}
	if (rc != 0) {
		rc = errno;
		droce_cm_destroy_ep(pub);
		errno = rc;
		return -1;
	}
	*out = pub;
	return 0;
}

void droce_cm_destroy_ep(struct droce_cm_id *id)
{
	if (id == NULL)
		return;
	if (id->qp != NULL)
		droce_cm_destroy_qp(id);
	droce_cm_destroy_id(id);
}

int cm_ep_request_qp(struct cm_id *l, struct cm_id *id)
{
	struct droce_qp_init_attr a;

	if (!l->ep_qp)
		return 0;
	a = l->ep_attr;
	return droce_cm_create_qp(&id->pub, l->ep_pd, &a);
}
