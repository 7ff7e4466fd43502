/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Event channels and events (rdma_get_cm_event(3), rdma_ack_cm_event(3)).
 *
 * A channel is a queue of events under cm_svc.lock and a semaphore eventfd with one token per
 * event queued: the application polls the fd, droce_cm_get_cm_event() takes a token (blocking
 * or not, as the fd is) and then the oldest event. Events dropped before they are returned
 * (their id destroyed) leave their token behind: a get that finds no event for its token takes
 * the next one, so a reader may wake without an event, never miss one.
 *
 * Each event counts against an id (the one it is about; a CONNECT_REQUEST against its
 * listener, as librdmacm counts it): returned when got, acked when acked. Destroying an id
 * waits until the two are equal, so an event the application holds never outlives its id.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>

#include "cm_private.h"

struct cm_chan *cm_chan_new(bool priv)
{
	struct cm_chan *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->efd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	c->pub.fd = c->efd < 0 ? -1 : fcntl(c->efd, F_DUPFD_CLOEXEC, 0);
	if (c->pub.fd < 0) {
		if (c->efd >= 0)
			close(c->efd);
		free(c);
		return NULL;
	}
	TAILQ_INIT(&c->events);
	c->priv = priv;
	return c;
}

static void chan_drop_events(struct cm_chan *c)
{
	struct cm_event *e;

	while ((e = TAILQ_FIRST(&c->events)) != NULL) {
		TAILQ_REMOVE(&c->events, e, next);
		free(e);
	}
}

void cm_chan_free(struct cm_chan *c)
{
	chan_drop_events(c);
	if (c->pub.fd >= 0)
		close(c->pub.fd);
	close(c->efd);
	free(c);
}

/* The application destroyed @p c: its fd goes, the channel stays a while (struct cm_chan). */
static void chan_bury(struct cm_chan *c)
{
	struct cm_chan *old = cm_svc.grave[cm_svc.grave_next];

	chan_drop_events(c);
	close(c->pub.fd);
	c->pub.fd = -1;
	c->buried = true;
	cm_svc.grave[cm_svc.grave_next] = c;
	cm_svc.grave_next = (cm_svc.grave_next + 1) % CM_GRAVE;
	/* A thread still blocked in the oldest keeps it (it will never be woken). */
	if (old != NULL && old->readers == 0)
		cm_chan_free(old);
}

struct droce_cm_event_channel *droce_cm_create_event_channel(void)
{
	struct cm_chan *c;
	int rc = cm_start();

	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	pthread_mutex_lock(&cm_svc.lock);
	c = cm_chan_new(false);
	pthread_mutex_unlock(&cm_svc.lock);
	return c != NULL ? &c->pub : NULL;
}

int droce_cm_destroy_event_channel(struct droce_cm_event_channel *channel)
{
	struct cm_chan *c;

	if (channel == NULL) {
		errno = EINVAL;
		return -1;
	}
	c = container_of_cm(channel, struct cm_chan, pub);
	pthread_mutex_lock(&cm_svc.lock);
	if (c->n_ids > 0 || c->priv) {
		pthread_mutex_unlock(&cm_svc.lock);
		errno = EBUSY;
		return -1;
	}
	chan_bury(c);
	pthread_mutex_unlock(&cm_svc.lock);
	return 0;
}

/* Whose delivered/acked counts an event moves (rdma_cm counts a request on the listener). */
static struct cm_id *owner_of(struct cm_id *id, enum rdma_cm_event_type type)
{
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST && id->listener != NULL)
		return id->listener;
	return id;
}

struct cm_event *cm_event_queue(struct cm_id *id, enum rdma_cm_event_type type, int status,
				const void *pdata, uint8_t len)
{
	struct cm_id *owner = owner_of(id, type);
	struct cm_event *e;
	uint64_t one = 1;

	if (owner->destroying || owner->chan == NULL)
		return NULL;	/* nobody will read it */
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		CM_LOG(ERR, "no memory for a %s event", droce_cm_event_str(type));
		return NULL;
	}
	e->id = owner;
	e->pub.id = &id->pub;
	e->pub.listen_id = id->listener != NULL && type == RDMA_CM_EVENT_CONNECT_REQUEST ?
			   &id->listener->pub : NULL;
	e->pub.event = type;
	e->pub.status = status;
	if (pdata != NULL && len != 0) {
		memcpy(e->pdata, pdata, len);
		e->pub.param.conn.private_data = e->pdata;
		e->pub.param.conn.private_data_len = len;
	}
	TAILQ_INSERT_TAIL(&owner->chan->events, e, next);
	if (write(owner->chan->efd, &one, sizeof(one)) != sizeof(one))
		CM_LOG(ERR, "event channel eventfd: %s", strerror(errno));
	return e;
}

void cm_event_forget(struct cm_id *id)
{
	struct cm_event *e, *nx;

	if (id->chan == NULL)
		return;
	for (e = TAILQ_FIRST(&id->chan->events); e != NULL; e = nx) {
		nx = TAILQ_NEXT(e, next);
		if (e->id == id || e->pub.id == &id->pub) {
			TAILQ_REMOVE(&id->chan->events, e, next);
			free(e);
		}
	}
}

int droce_cm_get_cm_event(struct droce_cm_event_channel *channel, struct droce_cm_event **event)
{
	struct cm_chan *c;
	struct cm_event *e;
	ssize_t n;
	uint64_t v;

	if (channel == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	c = container_of_cm(channel, struct cm_chan, pub);
	pthread_mutex_lock(&cm_svc.lock);
	c->readers++;
	for (;;) {
		pthread_mutex_unlock(&cm_svc.lock);
		n = read(c->efd, &v, sizeof(v));
		pthread_mutex_lock(&cm_svc.lock);
		if (n != sizeof(v)) {
			c->readers--;
			pthread_mutex_unlock(&cm_svc.lock);
			return -1;	/* EAGAIN (non-blocking), EINTR */
		}
		e = TAILQ_FIRST(&c->events);
		if (e != NULL)
			break;
		/* The token of a dropped event (or of one queued before the channel was
		 * destroyed): wait for the next. */
	}
	c->readers--;
	TAILQ_REMOVE(&c->events, e, next);
	e->id->ev_delivered++;
	if (e->pub.event == RDMA_CM_EVENT_CONNECT_REQUEST && e->id->pending_reqs > 0)
		e->id->pending_reqs--;	/* the backlog counts requests not yet retrieved */
	pthread_mutex_unlock(&cm_svc.lock);
	*event = &e->pub;
	return 0;
}

int droce_cm_ack_cm_event(struct droce_cm_event *event)
{
	struct cm_event *e;

	if (event == NULL) {
		errno = EINVAL;
		return -1;
	}
	e = container_of_cm(event, struct cm_event, pub);
	pthread_mutex_lock(&cm_svc.lock);
	e->id->ev_acked++;
	pthread_cond_broadcast(&e->id->cond);
	pthread_mutex_unlock(&cm_svc.lock);
	free(e);
	return 0;
}

int cm_sync_wait(struct cm_id *id)
{
	struct droce_cm_event *ev;

	if (id->pub.event != NULL) {
		droce_cm_ack_cm_event(id->pub.event);
		id->pub.event = NULL;
	}
	if (droce_cm_get_cm_event(&id->chan->pub, &ev) != 0)
		return -1;
	id->pub.event = ev;
	if (ev->status == 0)
		return 0;
	/* librdmacm's ucma_complete(): a rejection is ECONNREFUSED, a status its errno. */
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		errno = ECONNREFUSED;
	else
		errno = ev->status < 0 ? -ev->status : ev->status;
	return -1;
}

const char *droce_cm_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	return (unsigned int)event < RTE_DIM(names) ? names[event] : "UNKNOWN EVENT";
}
