/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * librdmacm.so.1: event channels, ids and events on droce's CM (droce_cm.h). Each call is the
 * droce_cm_ one, then what droce's id says is copied into the application's struct
 * rdma_cm_id (addresses, route, device, port: programs read them directly). Events are
 * wrapped as they are returned; a request's new droce id gets its wrapper then, with the
 * listener's context, as librdmacm gives it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat_rdmacm_private.h"

/* droce's event parameters are rdma_cm_event's union, member for member. */
_Static_assert(sizeof(((struct rdma_cm_event *)0)->param) ==
	       sizeof(((struct droce_cm_event *)0)->param), "event parameters differ");

/* librdmacm crashes on a NULL id; droce's drop-in refuses it. */
int compat_rcm_check(const struct rdma_cm_id *id)
{
	if (id != NULL)
		return 0;
	errno = EINVAL;
	return -1;
}

/* ---- Channels ---- */

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rcm_chan *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->d = droce_cm_create_event_channel();
	if (c->d == NULL) {
		free(c);
		return NULL;
	}
	c->pub.fd = c->d->fd;
	return &c->pub;
}

/* Destroyed channels' wrappers, kept as droce keeps the channels (cm_private.h, struct
 * cm_chan): a thread entering rdma_get_cm_event() just after another destroyed the channel
 * (rping's event thread, never joined) reaches droce's channel and waits there. */
#define RCM_GRAVE 8
static struct rcm_chan *grave[RCM_GRAVE];
static unsigned int grave_next;
static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct rcm_chan *c, *old;

	if (channel == NULL)
		return;
	c = to_rchan(channel);
	if (droce_cm_destroy_event_channel(c->d) != 0) {
		RCM_MSG("event channel not destroyed: %s (destroy its ids first)", strerror(errno));
		return;
	}
	c->pub.fd = -1;
	pthread_mutex_lock(&grave_lock);
	old = grave[grave_next];
	grave[grave_next] = c;
	grave_next = (grave_next + 1) % RCM_GRAVE;
	pthread_mutex_unlock(&grave_lock);
	free(old);
}

/* ---- Ids ---- */

static struct rcm_id *wrap(struct droce_cm_id *d, void *context, struct rcm_chan *own)
{
	struct rcm_id *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	w->d = d;
	w->own_chan = own;
	w->pub.context = context;
	d->context = w;
	compat_rcm_id_sync(w);
	return w;
}

void compat_rcm_id_sync(struct rcm_id *w)
{
	struct droce_cm_id *d = w->d;
	struct rcm_dev *rd;

	w->pub.route.addr = d->route.addr;
	w->pub.route.path_rec = d->route.path_rec;
	w->pub.route.num_paths = d->route.num_paths;
	w->pub.ps = d->ps;
	w->pub.qp_type = d->qp_type;
	w->pub.port_num = d->port_num;
	if (w->pub.verbs == NULL && d->verbs != NULL) {
		rd = compat_rcm_dev_get(d->verbs->device);
		if (rd != NULL) {
			w->pub.verbs = rd->ctx;
			if (w->pub.pd == NULL)
				w->pub.pd = rd->pd;
		}
	}
}

struct rcm_id *compat_rcm_id_of(struct droce_cm_id *d)
{
	struct rcm_id *owner = d->context, *w;
	struct rcm_chan *own = NULL;

	if (owner != NULL && owner->d == d)
		return owner;
	/* A request's new id: its droce context is its listener's wrapper. */
	if (owner != NULL && owner->own_chan != NULL) {
		/* A synchronous listener's request is synchronous too, on a channel of its own
		 * (droce made it so); this wrapper gives the application that channel. */
		own = calloc(1, sizeof(*own));
		if (own == NULL)
			return NULL;
		own->d = d->channel;
		own->pub.fd = d->channel->fd;
	}
	w = wrap(d, owner != NULL ? owner->pub.context : NULL, own);
	if (w == NULL) {
		free(own);
		return NULL;
	}
	w->pub.channel = own != NULL ? &own->pub : owner != NULL ? owner->pub.channel : NULL;
	return w;
}

struct rcm_id *compat_rcm_id_new(struct droce_cm_id *d, struct rdma_event_channel *channel,
			  void *context)
{
	struct rcm_chan *own = NULL;
	struct rcm_id *w;

	if (channel == NULL) {
		own = calloc(1, sizeof(*own));
		if (own == NULL)
			goto nomem;
		own->d = d->channel;
		own->pub.fd = d->channel->fd;
	}
	w = wrap(d, context, own);
	if (w == NULL)
		goto nomem;
	w->pub.channel = own != NULL ? &own->pub : channel;
	return w;
nomem:
	free(own);
	droce_cm_destroy_id(d);
	errno = ENOMEM;
	return NULL;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps)
{
	struct droce_cm_id *d;
	struct rcm_id *w;

	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (droce_cm_create_id(channel != NULL ? to_rchan(channel)->d : NULL, &d, NULL, ps) != 0)
		return -1;
	w = compat_rcm_id_new(d, channel, context);
	if (w == NULL)
		return -1;
	*id = &w->pub;
	return 0;
}

void compat_rcm_id_event_sync(struct rcm_id *w)
{
	struct droce_cm_event *ev = w->d->event;
	struct rcm_event *e;

	if (w->sync_ev != NULL && w->sync_ev->d == ev)
		return;
	free(w->sync_ev);	/* droce acked it (a synchronous id's last event) */
	w->sync_ev = NULL;
	w->pub.event = NULL;
	if (ev == NULL)
		return;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return;
	e->d = ev;
	e->pub.id = &w->pub;
	e->pub.event = ev->event;
	e->pub.status = ev->status;
	memcpy(&e->pub.param, &ev->param, sizeof(e->pub.param));
	w->sync_ev = e;
	w->pub.event = &e->pub;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rcm_id *w;

	if (compat_rcm_check(id) != 0)
		return -1;
	w = to_rid(id);
	if (droce_cm_destroy_id(w->d) != 0)
		return -1;
	free(w->sync_ev);
	free(w->own_chan);
	free(w);
	return 0;
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct rcm_chan *own = NULL;
	struct rcm_id *w;

	if (compat_rcm_check(id) != 0)
		return -1;
	w = to_rid(id);
	if (droce_cm_migrate_id(w->d, channel != NULL ? to_rchan(channel)->d : NULL) != 0)
		return -1;
	compat_rcm_id_event_sync(w);
	if (channel == NULL) {
		own = calloc(1, sizeof(*own));
		if (own == NULL) {
			/* droce's id is synchronous; the application sees no channel */
			errno = ENOMEM;
			return -1;
		}
		own->d = w->d->channel;
		own->pub.fd = w->d->channel->fd;
	}
	free(w->own_chan);
	w->own_chan = own;
	id->channel = own != NULL ? &own->pub : channel;
	return 0;
}

/* A droce call on @p id, then the application's view brought up to date; a failure's errno
 * is the call's (bringing the view up to date may open the device, which sets errno). */
#define RCM_CALL(id, call) do { \
	int rc_, err_; \
	if (compat_rcm_check(id) != 0) \
		return -1; \
	rc_ = (call); \
	err_ = errno; \
	compat_rcm_id_sync(to_rid(id)); \
	compat_rcm_id_event_sync(to_rid(id)); \
	if (rc_ != 0) \
		errno = err_; \
	return rc_; \
} while (0)

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	RCM_CALL(id, droce_cm_bind_addr(to_rid(id)->d, addr));
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		      int timeout_ms)
{
	RCM_CALL(id, droce_cm_resolve_addr(to_rid(id)->d, src_addr, dst_addr, timeout_ms));
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	RCM_CALL(id, droce_cm_resolve_route(to_rid(id)->d, timeout_ms));
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	RCM_CALL(id, droce_cm_listen(to_rid(id)->d, backlog));
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	RCM_CALL(id, droce_cm_connect(to_rid(id)->d, conn_param));
}

int rdma_establish(struct rdma_cm_id *id)
{
	RCM_CALL(id, droce_cm_establish(to_rid(id)->d));
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	RCM_CALL(id, droce_cm_accept(to_rid(id)->d, conn_param));
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	RCM_CALL(id, droce_cm_reject(to_rid(id)->d, private_data, private_data_len));
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	RCM_CALL(id, droce_cm_disconnect(to_rid(id)->d));
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	RCM_CALL(id, droce_cm_notify(to_rid(id)->d, event));
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	RCM_CALL(id, droce_cm_set_option(to_rid(id)->d, level, optname, optval, optlen));
}

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	RCM_CALL(id, droce_cm_init_qp_attr(to_rid(id)->d, qp_attr, qp_attr_mask));
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct droce_cm_id *d;
	struct rcm_id *l, *w;

	if (compat_rcm_check(listen) != 0 || id == NULL) {
		errno = EINVAL;
		return -1;
	}
	l = to_rid(listen);
	if (droce_cm_get_request(l->d, &d) != 0) {
		int err = errno;

		compat_rcm_id_event_sync(l);
		errno = err;
		return -1;
	}
	compat_rcm_id_event_sync(l);
	w = compat_rcm_id_of(d);
	if (w == NULL) {
		droce_cm_reject(d, NULL, 0);
		droce_cm_destroy_id(d);
		errno = ENOMEM;
		return -1;
	}
	compat_rcm_id_event_sync(w);	/* the request, in the new id's event */
	if (l->ep_qp) {
		struct ibv_qp_init_attr a = l->ep_attr;

		if (rdma_create_qp(&w->pub, l->ep_pd, &a) != 0)
			return -1;
	}
	*id = &w->pub;
	return 0;
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return id != NULL ? droce_cm_get_src_port(to_rid(id)->d) : 0;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id != NULL ? droce_cm_get_dst_port(to_rid(id)->d) : 0;
}

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	return droce_cm_event_str(event);
}

/* ---- Events ---- */

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct droce_cm_event *ev;
	struct rcm_event *e;
	struct rcm_id *w;

	if (channel == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (droce_cm_get_cm_event(to_rchan(channel)->d, &ev) != 0)
		return -1;
	e = calloc(1, sizeof(*e));
	w = compat_rcm_id_of(ev->id);
	if (e == NULL || w == NULL) {
		free(e);
		droce_cm_ack_cm_event(ev);
		errno = ENOMEM;
		return -1;
	}
	compat_rcm_id_sync(w);
	e->d = ev;
	e->pub.id = &w->pub;
	e->pub.listen_id = ev->listen_id != NULL ? &compat_rcm_id_of(ev->listen_id)->pub : NULL;
	e->pub.event = ev->event;
	e->pub.status = ev->status;
	memcpy(&e->pub.param, &ev->param, sizeof(e->pub.param));
	*event = &e->pub;
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct rcm_event *e;

	if (event == NULL) {
		errno = EINVAL;
		return -1;
	}
	e = compat_container_of(event, struct rcm_event, pub);
	if (droce_cm_ack_cm_event(e->d) != 0)
		return -1;
	free(e);
	return 0;
}
