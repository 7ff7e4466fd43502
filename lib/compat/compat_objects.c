/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * PDs, MRs, completion channels, CQs, SRQs, AHs, multicast and async events: each ibv_ call
 * wraps the droce_ one of the same name and keeps the ibv_ struct's fields true.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat_private.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* ---- PD ---- */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct compat_pd *p;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	p->d = droce_alloc_pd(to_cctx(context)->d);
	if (p->d == NULL) {
		free(p);
		return NULL;
	}
	p->ibv.context = context;
	compat_obj_add(context, &p->obj, COMPAT_PD, &p->ibv);
	return &p->ibv;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	int rc = pd != NULL ? droce_dealloc_pd(to_cpd(pd)->d) : EINVAL;

	if (rc == 0) {
		compat_obj_del(pd->context, &to_cpd(pd)->obj);
		free(to_cpd(pd));
	}
	return compat_err(rc);
}

/* ---- MR ---- */

/* The ibv_mr of droce's MR @p d (NULL: the registration failed, errno set). */
static struct ibv_mr *mr_wrap(struct ibv_pd *pd, struct droce_mr *d)
{
	struct compat_mr *m;

	if (d == NULL)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		droce_dereg_mr(d);
		errno = ENOMEM;
		return NULL;
	}
	m->d = d;
	m->ibv.context = pd->context;
	m->ibv.pd = pd;
	m->ibv.addr = m->d->addr;
	m->ibv.length = m->d->length;
	m->ibv.handle = m->d->handle;
	m->ibv.lkey = m->d->lkey;
	m->ibv.rkey = m->d->rkey;
	compat_obj_add(pd->context, &m->obj, COMPAT_MR, &m->ibv);
	return &m->ibv;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return mr_wrap(pd, droce_reg_mr_iova2(to_cpd(pd)->d, addr, length, iova, access));
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return mr_wrap(pd, droce_reg_mr(to_cpd(pd)->d, addr, length, access));
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

/* ibv_rereg_mr(3) on droce_rereg_mr(): on success the ibv_mr shows the new PD, translation
 * and keys; on failure (errno set) the MR is as it was: IBV_REREG_MR_ERR_INPUT. */
int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	struct compat_mr *m;
	int rc;

	if (mr == NULL) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	m = compat_container_of(mr, struct compat_mr, ibv);
	rc = droce_rereg_mr(m->d, flags, pd != NULL ? to_cpd(pd)->d : NULL, addr, length, access);
	if (rc != 0) {
		errno = rc;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	mr->addr = m->d->addr;
	mr->length = m->d->length;
	mr->lkey = m->d->lkey;
	mr->rkey = m->d->rkey;
	return 0;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct compat_mr *m = compat_container_of(mr, struct compat_mr, ibv);
	int rc = mr != NULL ? droce_dereg_mr(m->d) : EINVAL;

	if (rc == 0) {
		compat_obj_del(mr->context, &m->obj);
		free(m);
	}
	return compat_err(rc);
}

/* ---- Memory windows (ibv_alloc_mw(), ibv_dealloc_mw(), ibv_bind_mw() are inlines of
 * <infiniband/verbs.h> that call these through the context's ops) ---- */

struct ibv_mw *compat_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct droce_mw *d = pd != NULL ? droce_alloc_mw(to_cpd(pd)->d, type) : NULL;
	struct compat_mw *m;

	if (pd == NULL)
		errno = EINVAL;
	if (d == NULL)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		droce_dealloc_mw(d);
		errno = ENOMEM;
		return NULL;
	}
	m->d = d;
	m->ibv.context = pd->context;
	m->ibv.pd = pd;
	m->ibv.rkey = d->rkey;
	m->ibv.handle = d->handle;
	m->ibv.type = d->type;
	compat_obj_add(pd->context, &m->obj, COMPAT_MW, &m->ibv);
	return &m->ibv;
}

int compat_dealloc_mw(struct ibv_mw *mw)
{
	struct compat_mw *m = compat_container_of(mw, struct compat_mw, ibv);
	int rc = mw != NULL ? droce_dealloc_mw(m->d) : EINVAL;

	if (rc == 0) {
		compat_obj_del(mw->context, &m->obj);
		free(m);
	}
	return compat_err(rc);
}

int compat_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct compat_mw *m = compat_container_of(mw, struct compat_mw, ibv);
	int rc = qp != NULL && mw != NULL ? droce_bind_mw(to_cqp(qp)->d, m->d, mw_bind) : EINVAL;

	if (rc == 0)
		mw->rkey = m->d->rkey;	/* ibv_bind_mw(3): the key after the bind */
	return compat_err(rc);
}

/* ---- Completion channels and CQs ---- */

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct compat_channel *ch;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->d = droce_create_comp_channel(to_cctx(context)->d);
	if (ch->d == NULL) {
		free(ch);
		return NULL;
	}
	ch->ibv.context = context;
	ch->ibv.fd = ch->d->fd;
	ch->fd_flags = -1;	/* not read yet */
	compat_obj_add(context, &ch->obj, COMPAT_CHANNEL, &ch->ibv);
	return &ch->ibv;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct compat_channel *ch = compat_container_of(channel, struct compat_channel, ibv);
	int rc = channel != NULL ? droce_destroy_comp_channel(ch->d) : EINVAL;

	if (rc == 0) {
		compat_obj_del(channel->context, &ch->obj);
		free(ch);
	}
	return compat_err(rc);
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct droce_comp_channel *dch = NULL;
	struct compat_cq *c;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (channel != NULL)
		dch = compat_container_of(channel, struct compat_channel, ibv)->d;
	/* droce's cq_context is the wrapper: droce_get_cq_event() hands it back. */
	c->d = droce_create_cq(to_cctx(context)->d, cqe, c, dch, comp_vector);
	if (c->d == NULL) {
		free(c);
		return NULL;
	}
	c->ibv.context = context;
	c->ibv.channel = channel;
	c->ibv.cq_context = cq_context;
	c->ibv.handle = c->d->handle;
	c->ibv.cqe = c->d->cqe;
	pthread_mutex_init(&c->ibv.mutex, NULL);
	pthread_cond_init(&c->ibv.cond, NULL);
	if (channel != NULL)
		channel->refcnt++;
	compat_obj_add(context, &c->obj, COMPAT_CQ, &c->ibv);
	return &c->ibv;
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	int rc = cq != NULL ? droce_resize_cq(to_ccq(cq)->d, cqe) : EINVAL;

	if (rc == 0)
		cq->cqe = to_ccq(cq)->d->cqe;
	return compat_err(rc);
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct compat_cq *c = to_ccq(cq);
	int rc = cq != NULL ? droce_destroy_cq(c->d) : EINVAL;

	if (rc != 0)
		return compat_err(rc);
	if (cq->channel != NULL)
		cq->channel->refcnt--;
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	compat_obj_del(cq->context, &c->obj);
	free(c);
	return 0;
}

int compat_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	int n;

	if (cq == NULL)
		return -compat_err(EINVAL);
	n = droce_poll_cq(to_ccq(cq)->d, num_entries, wc);
	if (n == 0) {	/* nothing yet: move frames (inline engine only), then look again */
		compat_engine_kick(cq->context);
		n = droce_poll_cq(to_ccq(cq)->d, num_entries, wc);
	}
	if (n < 0)
		errno = -n;
	return n;
}

int compat_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return compat_err(cq != NULL ? droce_req_notify_cq(to_ccq(cq)->d, solicited_only) :
			  EINVAL);
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct compat_channel *ch;
	struct droce_cq *dcq;
	struct compat_cq *c;
	void *ctx;

	if (channel == NULL || cq == NULL || cq_context == NULL)
		return compat_fail(EINVAL);
	ch = compat_container_of(channel, struct compat_channel, ibv);
	if (compat_wait_cq_event(ch, &dcq, &ctx) != 0)
		return -1;
	c = ctx;
	pthread_mutex_lock(&c->ibv.mutex);
	c->comp_got++;
	pthread_mutex_unlock(&c->ibv.mutex);
	*cq = &c->ibv;
	*cq_context = c->ibv.cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (cq == NULL)
		return;
	droce_ack_cq_events(to_ccq(cq)->d, nevents);
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_mutex_unlock(&cq->mutex);
}

/* ---- SRQ ---- */

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init_attr)
{
	struct compat_srq *s;
	struct ibv_srq_init_attr a;

	if (pd == NULL || init_attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	a = *init_attr;
	a.srq_context = s;	/* droce's srq_context maps async events back to the wrapper */
	s->d = droce_create_srq(to_cpd(pd)->d, &a);
	if (s->d == NULL) {
		free(s);
		return NULL;
	}
	init_attr->attr = a.attr;	/* the granted sizes */
	s->ibv.context = pd->context;
	s->ibv.srq_context = init_attr->srq_context;
	s->ibv.pd = pd;
	s->ibv.handle = s->d->handle;
	pthread_mutex_init(&s->ibv.mutex, NULL);
	pthread_cond_init(&s->ibv.cond, NULL);
	compat_obj_add(pd->context, &s->obj, COMPAT_SRQ, &s->ibv);
	return &s->ibv;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask)
{
	return compat_err(srq != NULL ? droce_modify_srq(to_csrq(srq)->d, attr, attr_mask) :
			  EINVAL);
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	return compat_err(srq != NULL ? droce_query_srq(to_csrq(srq)->d, attr) : EINVAL);
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	int rc = srq != NULL ? droce_destroy_srq(to_csrq(srq)->d) : EINVAL;

	if (rc != 0)
		return compat_err(rc);
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	compat_obj_del(srq->context, &to_csrq(srq)->obj);
	free(to_csrq(srq));
	return 0;
}

int compat_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return compat_err(srq != NULL ? droce_post_srq_recv(to_csrq(srq)->d, wr, bad) : EINVAL);
}

/* ---- AH: droce's AH is a struct ibv_ah whose fields droce leaves to us. ---- */

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct compat_obj *o;
	struct ibv_ah *ah;

	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (o == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ah = droce_create_ah(to_cpd(pd)->d, attr);
	if (ah == NULL) {
		free(o);
		return NULL;
	}
	ah->context = pd->context;
	ah->pd = pd;
	compat_obj_add(pd->context, o, COMPAT_AH, ah);
	return ah;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct ibv_context *ctx;
	int rc;

	if (ah == NULL)
		return compat_err(EINVAL);
	ctx = ah->context;
	rc = droce_destroy_ah(ah);
	if (rc == 0)
		free(compat_obj_take(ctx, ah));
	return compat_err(rc);
}

/* @return the index of @p gid in port @p port_num's table, or -1. */
static int find_gid(struct ibv_context *context, uint8_t port_num, const union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	union ibv_gid g;
	int i;

	if (droce_query_port(to_cctx(context)->d, port_num, &pa) != 0)
		return -1;
	for (i = 0; i < pa.gid_tbl_len; i++)
		if (droce_query_gid(to_cctx(context)->d, port_num, i, &g) == 0 &&
		    memcmp(&g, gid, sizeof(g)) == 0)
			return i;
	return -1;
}

/* The GRH of a RoCE v2 UD receive: 20 zero bytes then the IPv4 header, or the IPv6 header. */
static int ah_from_grh(const struct ibv_grh *grh, struct ibv_global_route *gr,
		       union ibv_gid *local)
{
	const uint8_t *b = (const void *)grh;
	uint32_t vtf;

	if ((b[20] >> 4) == 4) {		/* IPv4: addresses at offsets 12 and 16 */
		memset(&gr->dgid, 0, sizeof(gr->dgid));
		memset(local, 0, sizeof(*local));
		gr->dgid.raw[10] = gr->dgid.raw[11] = 0xff;
		local->raw[10] = local->raw[11] = 0xff;
		memcpy(&gr->dgid.raw[12], b + 20 + 12, 4);
		memcpy(&local->raw[12], b + 20 + 16, 4);
		gr->traffic_class = b[20 + 1];
		gr->flow_label = 0;
	} else if ((b[0] >> 4) == 6) {
		vtf = be32toh(grh->version_tclass_flow);
		gr->dgid = grh->sgid;
		*local = grh->dgid;
		gr->traffic_class = (uint8_t)(vtf >> 20);
		gr->flow_label = vtf & 0xfffff;
	} else {
		return EINVAL;
	}
	gr->hop_limit = 0xff;
	return 0;
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	union ibv_gid local;
	int idx;

	if (context == NULL || wc == NULL || ah_attr == NULL)
		return compat_fail(EINVAL);
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH) || grh == NULL)
		return compat_fail(EINVAL);	/* RoCE needs the GRH */
	if (ah_from_grh(grh, &ah_attr->grh, &local) != 0)
		return compat_fail(EINVAL);
	idx = find_gid(context, port_num, &local);
	if (idx < 0)
		return compat_fail(EINVAL);	/* sent to no GID of this port */
	ah_attr->grh.sgid_index = (uint8_t)idx;
	ah_attr->is_global = 1;
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	struct ibv_ah_attr a;

	if (pd == NULL || ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a) != 0) {
		errno = EINVAL;
		return NULL;
	}
	return ibv_create_ah(pd, &a);
}

/* ---- Multicast ---- */

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return compat_err(qp != NULL ? droce_attach_mcast(to_cqp(qp)->d, gid, lid) : EINVAL);
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return compat_err(qp != NULL ? droce_detach_mcast(to_cqp(qp)->d, gid, lid) : EINVAL);
}

/* ---- Async events: droce's objects carry the wrappers as their contexts. ---- */

enum ev_kind { EV_CQ, EV_QP, EV_SRQ, EV_PORT, EV_DEVICE };

static enum ev_kind ev_kind(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		return EV_CQ;
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR: case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST: case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
		return EV_QP;
	case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED:
		return EV_SRQ;
	case IBV_EVENT_DEVICE_FATAL:
		return EV_DEVICE;
	default:
		return EV_PORT;
	}
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct droce_async_event e;
	struct compat_cq *c;
	struct compat_qp *q;
	struct compat_srq *s;

	if (context == NULL || event == NULL)
		return compat_fail(EINVAL);
	if (droce_get_async_event(to_cctx(context)->d, &e) != 0)
		return -1;
	memset(event, 0, sizeof(*event));
	event->event_type = e.event_type;
	switch (ev_kind(e.event_type)) {
	case EV_CQ:
		c = e.element.cq->cq_context;
		__atomic_fetch_add(&c->async_got, 1, __ATOMIC_RELAXED);
		event->element.cq = &c->ibv;
		break;
	case EV_QP:
		q = e.element.qp->qp_context;
		__atomic_fetch_add(&q->async_got, 1, __ATOMIC_RELAXED);
		event->element.qp = &q->ibvx.qp_base;
		break;
	case EV_SRQ:
		s = e.element.srq->srq_context;
		__atomic_fetch_add(&s->async_got, 1, __ATOMIC_RELAXED);
		event->element.srq = &s->ibv;
		break;
	case EV_PORT:
		event->element.port_num = e.element.port_num;
		break;
	case EV_DEVICE:
		break;
	}
	return 0;
}

/* Each ack also counts in the ibv_ struct's events field, as libibverbs does. */
void ibv_ack_async_event(struct ibv_async_event *event)
{
	struct droce_async_event e;

	if (event == NULL)
		return;
	memset(&e, 0, sizeof(e));
	e.event_type = event->event_type;
	switch (ev_kind(event->event_type)) {
	case EV_CQ:
		e.element.cq = to_ccq(event->element.cq)->d;
		__atomic_fetch_add(&event->element.cq->async_events_completed, 1,
				   __ATOMIC_RELAXED);
		break;
	case EV_QP:
		e.element.qp = to_cqp(event->element.qp)->d;
		__atomic_fetch_add(&event->element.qp->events_completed, 1, __ATOMIC_RELAXED);
		break;
	case EV_SRQ:
		e.element.srq = to_csrq(event->element.srq)->d;
		__atomic_fetch_add(&event->element.srq->events_completed, 1, __ATOMIC_RELAXED);
		break;
	case EV_PORT:
		e.element.port_num = event->element.port_num;
		break;
	case EV_DEVICE:
		break;
	}
	droce_ack_async_event(&e);
}

/* ---- Events the application got but never acked (forced destroy: close, exit) ---- */

static void drop_async(enum ibv_event_type type, void *elem, unsigned int n)
{
	struct droce_async_event e = { .event_type = type };

	if (type == IBV_EVENT_CQ_ERR)
		e.element.cq = elem;
	else if (type == IBV_EVENT_SRQ_ERR)
		e.element.srq = elem;
	else
		e.element.qp = elem;
	while (n-- > 0)
		droce_ack_async_event(&e);
}

void compat_cq_drop_events(struct compat_cq *c)
{
	unsigned int n;

	pthread_mutex_lock(&c->ibv.mutex);
	n = c->comp_got - c->ibv.comp_events_completed;
	pthread_mutex_unlock(&c->ibv.mutex);
	if (n > 0)
		ibv_ack_cq_events(&c->ibv, n);
	n = __atomic_load_n(&c->async_got, __ATOMIC_RELAXED) - c->ibv.async_events_completed;
	drop_async(IBV_EVENT_CQ_ERR, c->d, n);
	c->ibv.async_events_completed += n;
}

void compat_qp_drop_events(struct compat_qp *q)
{
	struct ibv_qp *qp = &q->ibvx.qp_base;
	unsigned int n = __atomic_load_n(&q->async_got, __ATOMIC_RELAXED) - qp->events_completed;

	drop_async(IBV_EVENT_QP_FATAL, q->d, n);
	qp->events_completed += n;
}

void compat_srq_drop_events(struct compat_srq *s)
{
	unsigned int n = __atomic_load_n(&s->async_got, __ATOMIC_RELAXED) -
			 s->ibv.events_completed;

	drop_async(IBV_EVENT_SRQ_ERR, s->d, n);
	s->ibv.events_completed += n;
}
