/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * QPs: create (plain and _ex), modify, query, destroy and the two post ops of ibv_context_ops.
 * WRs are rdma-core's own structs, so posts go to droce unchanged; a UD WR's AH already is a
 * droce AH (ibv_create_ah() returns droce's).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat_private.h"

static void fill_qp(struct compat_qp *q, struct ibv_context *ctx, struct ibv_pd *pd,
		    const struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp *qp = &q->ibvx.qp_base;

	qp->context = ctx;
	qp->qp_context = a->qp_context;
	qp->pd = pd;
	qp->send_cq = a->send_cq;
	qp->recv_cq = a->recv_cq;
	qp->srq = a->srq;
	qp->handle = q->d->handle;
	qp->qp_num = q->d->qp_num;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = a->qp_type;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
}

static struct compat_qp *create(struct ibv_context *ctx, struct ibv_pd *pd,
				struct ibv_qp_init_attr_ex *a)
{
	struct droce_qp_init_attr da = {
		.send_cq = a->send_cq != NULL ? to_ccq(a->send_cq)->d : NULL,
		.recv_cq = a->recv_cq != NULL ? to_ccq(a->recv_cq)->d : NULL,
		.srq = a->srq != NULL ? to_csrq(a->srq)->d : NULL,
		.cap = a->cap,
		.qp_type = a->qp_type,
		.sq_sig_all = a->sq_sig_all,
	};
	struct compat_qp *q = calloc(1, sizeof(*q));

	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	da.qp_context = q;	/* maps droce's async events back to the wrapper */
	q->d = droce_create_qp(to_cpd(pd)->d, &da);
	if (q->d == NULL) {
		free(q);
		return NULL;
	}
	a->cap = da.cap;	/* the granted sizes, as libibverbs reports them */
	fill_qp(q, ctx, pd, a);
	compat_obj_add(ctx, &q->obj, COMPAT_QP, &q->ibvx.qp_base);
	return q;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex a;
	struct compat_qp *q;

	if (pd == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	compat_qp_attr_ex(attr, &a);
	q = create(pd->context, pd, &a);
	if (q == NULL)
		return NULL;
	attr->cap = a.cap;
	return &q->ibvx.qp_base;
}

#define QP_INIT_ATTR_OK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

/* verbs_context.create_qp_ex: ibv_create_qp_ex(). XRC, RSS, TSO, create flags: EOPNOTSUPP. */
struct ibv_qp *compat_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	struct compat_qp *q;
	int rc;

	if (attr == NULL || !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & ~(uint32_t)QP_INIT_ATTR_OK) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	q = create(ctx, attr->pd, attr);
	if (q == NULL)
		return NULL;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return &q->ibvx.qp_base;
	rc = compat_qp_ex_init(q, attr->send_ops_flags);
	if (rc == 0)
		return &q->ibvx.qp_base;
	droce_destroy_qp(q->d);
	compat_obj_del(ctx, &q->obj);
	free(q);
	errno = rc;
	return NULL;
}

/* As libibverbs: only a QP created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS has the wr_* ops. */
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct compat_qp *q = to_cqp(qp);

	if (qp == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (q->batch.wr == NULL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return &q->ibvx;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	int rc = qp != NULL ? droce_modify_qp(to_cqp(qp)->d, attr, attr_mask) : EINVAL;

	if (rc == 0 && (attr_mask & IBV_QP_STATE))
		qp->state = attr->qp_state;
	return compat_err(rc);
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct droce_qp_init_attr da;
	int rc = qp != NULL && init_attr != NULL ?
		 droce_query_qp(to_cqp(qp)->d, attr, attr_mask, &da) : EINVAL;

	if (rc != 0)
		return compat_err(rc);
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->cap = da.cap;
	init_attr->qp_type = da.qp_type;
	init_attr->sq_sig_all = da.sq_sig_all;
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct compat_qp *q = to_cqp(qp);
	int rc = qp != NULL ? droce_destroy_qp(q->d) : EINVAL;

	if (rc != 0)
		return compat_err(rc);
	compat_qp_ex_fini(q);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	compat_obj_del(qp->context, &q->obj);
	free(q);
	return 0;
}

int compat_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	return compat_err(qp != NULL ? droce_post_send(to_cqp(qp)->d, wr, bad) : EINVAL);
}

int compat_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return compat_err(qp != NULL ? droce_post_recv(to_cqp(qp)->d, wr, bad) : EINVAL);
}
