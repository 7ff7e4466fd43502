/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * librdmacm.so.1: an id's QP, SRQ and the CQs librdmacm makes for them. The QP is the
 * libibverbs drop-in's (ibv_create_qp_ex(), so that ibv_post_send(), ibv_qp_to_qp_ex() and
 * everything else work on it); its droce QP is handed to droce's CM (droce_cm_set_qp()), which
 * moves it through INIT, RTR, RTS and ERR as librdmacm would. A CQ the attributes do not give
 * is made on id->verbs with a completion channel of its own and kept in id->send_cq/recv_cq
 * (and *_channel), which hold only such CQs: rdma_destroy_qp() destroys them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat_rdmacm_private.h"

static void destroy_lib_cqs(struct rcm_id *w)
{
	struct rdma_cm_id *id = &w->pub;

	if (!w->lib_cqs)
		return;
	if (id->send_cq != NULL)
		ibv_destroy_cq(id->send_cq);
	if (id->recv_cq != NULL && id->recv_cq != id->send_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq_channel != NULL)
		ibv_destroy_comp_channel(id->send_cq_channel);
	if (id->recv_cq_channel != NULL)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	id->send_cq = id->recv_cq = NULL;
	id->send_cq_channel = id->recv_cq_channel = NULL;
	w->lib_cqs = false;
}

static int lib_cq(struct rcm_id *w, uint32_t depth, struct ibv_cq **cq,
		  struct ibv_comp_channel **ch)
{
	*ch = ibv_create_comp_channel(w->pub.verbs);
	if (*ch == NULL)
		return -1;
	*cq = ibv_create_cq(w->pub.verbs, (int)(depth != 0 ? depth : 1), &w->pub, *ch, 0);
	if (*cq == NULL) {
		int e = errno;

		ibv_destroy_comp_channel(*ch);
		*ch = NULL;
		errno = e;
		return -1;
	}
	w->lib_cqs = true;
	return 0;
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct rcm_id *w;
	struct ibv_qp *qp;
	int rc = 0;

	if (compat_rcm_check(id) != 0 || attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	w = to_rid(id);
	compat_rcm_id_sync(w);
	if (id->qp != NULL || id->verbs == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = id->pd;
	}
	if (attr->pd == NULL || attr->pd->context != id->verbs) {
		errno = EINVAL;
		return -1;
	}
	if (attr->send_cq == NULL && id->send_cq == NULL)
		rc = lib_cq(w, attr->cap.max_send_wr, &id->send_cq, &id->send_cq_channel);
	if (rc == 0 && attr->recv_cq == NULL && id->recv_cq == NULL)
		rc = lib_cq(w, attr->cap.max_recv_wr, &id->recv_cq, &id->recv_cq_channel);
	if (rc != 0)
		goto fail;
	if (attr->send_cq == NULL)
		attr->send_cq = id->send_cq;
	if (attr->recv_cq == NULL)
		attr->recv_cq = id->recv_cq;
	if (attr->srq == NULL)
		attr->srq = id->srq;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (qp == NULL)
		goto fail;
	if (droce_cm_set_qp(w->d, compat_rcm_droce_qp(qp)) != 0) {
		rc = errno;
		ibv_destroy_qp(qp);
		errno = rc;
		goto fail;
	}
	id->qp = qp;
	id->pd = qp->pd;
	return 0;
fail:
	rc = errno;
	destroy_lib_cqs(w);
	errno = rc;
	return -1;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;

	if (compat_rcm_check(id) != 0 || qp_init_attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	compat_qp_attr_ex(qp_init_attr, &a);
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd != NULL ? pd : to_rid(id)->pub.pd;
	if (rdma_create_qp_ex(id, &a) != 0)
		return -1;
	/* librdmacm gives back what was granted and the CQs it used. */
	qp_init_attr->cap = a.cap;
	qp_init_attr->send_cq = a.send_cq;
	qp_init_attr->recv_cq = a.recv_cq;
	return 0;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct rcm_id *w;

	if (id == NULL)
		return;
	w = to_rid(id);
	droce_cm_set_qp(w->d, NULL);
	if (id->qp != NULL && ibv_destroy_qp(id->qp) != 0)
		RCM_MSG("QP %u not destroyed: %s", id->qp->qp_num, strerror(errno));
	id->qp = NULL;
	destroy_lib_cqs(w);
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr a;
	struct ibv_srq *srq;

	if (compat_rcm_check(id) != 0 || attr == NULL || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) {
		errno = EINVAL;
		return -1;
	}
	compat_rcm_id_sync(to_rid(id));
	if (attr->srq_type != IBV_SRQT_BASIC) {
		errno = EOPNOTSUPP;	/* XRC and tag matching: droce's verbs have neither */
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	srq = ibv_create_srq((attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) && attr->pd != NULL ?
			     attr->pd : id->pd, &a);
	if (srq == NULL)
		return -1;
	attr->attr = a.attr;
	id->srq = srq;
	if (id->pd == NULL)
		id->pd = srq->pd;
	return 0;
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a;

	if (compat_rcm_check(id) != 0 || attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	a.srq_type = id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC : IBV_SRQT_BASIC;
	a.pd = pd;
	if (rdma_create_srq_ex(id, &a) != 0)
		return -1;
	attr->attr = a.attr;
	return 0;
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id == NULL || id->srq == NULL)
		return;
	if (ibv_destroy_srq(id->srq) != 0)
		RCM_MSG("SRQ not destroyed: %s", strerror(errno));
	id->srq = NULL;
}
