/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Ids: create, destroy, migrate; addresses (bind, ports, listen); address and route
 * resolution; options and queries.
 *
 * Addresses are the devices' own ([device] ipv4/ipv6 and the link-local GID): a bind to one of
 * them ties the id to that device, a wildcard bind to none (a wildcard listener listens on
 * every device). As in Linux's rdma_cm (cma_any_addr()), the loopback addresses (127/8, ::1)
 * count as wildcards. There is no routing table: resolve_addr takes the device the id is bound
 * to, or else the first device that has an address of the destination's family and is not the
 * destination itself, or else the destination's own device; the peer's MAC is then resolved by
 * the engine (ARP, neighbour discovery), which is what ADDR_RESOLVED waits for. A destination
 * on this host (a loopback or wildcard address) is resolved as Linux's cma_resolve_loopback():
 * the id's device (unbound: the first device whose port is active) and its own GID as the
 * destination, which the engine loops back (doc/cm.md, "Loopback"). RoCE has no subnet
 * administrator: the route is made from the addresses (cm_path_fill()).
 *
 * Ports are per port space, as in Linux: two ids may not bind the same port on overlapping
 * addresses unless both set RDMA_OPTION_ID_REUSEADDR and neither listens. Ids made by a
 * listener for a request are not in the port table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>

#include "cm_private.h"
#include "droce_engine.h"
#include "verbs_engine.h"

#define CM_DEFAULT_BACKLOG 1024
#define CM_EPHEMERAL_LOW 32768u
#define CM_EPHEMERAL_HIGH 60999u

/* ---- Socket addresses and GIDs ---- */

bool cm_sockaddr_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (sa->sa_family == AF_INET) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(gid->raw + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return true;
	}
	return false;
}

static bool gid_is_v4(const uint8_t g[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(g, pfx, 12) == 0;
}

/* A socket address for @p gid and @p port (host order). */
static void gid_sockaddr(const uint8_t g[16], uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (gid_is_v4(g)) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, g + 12, 4);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		memcpy(&s->sin6_addr, g, 16);
	}
}

static uint16_t sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

static void sa_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

static bool gid_is_zero(const uint8_t g[16])
{
	static const uint8_t zero[16];

	return memcmp(g, zero, 16) == 0;
}

/* A loopback address: 127.0.0.0/8 (mapped) or ::1. */
static bool gid_is_loopback(const uint8_t g[16])
{
	static const uint8_t lo6[16] = { [15] = 1 };

	return (gid_is_v4(g) && g[12] == 127) || memcmp(g, lo6, 16) == 0;
}

/* The wildcard as Linux's rdma_cm counts it (cma_any_addr()): 0.0.0.0 (mapped), ::, and the
 * loopback addresses, which name no device either. */
static bool gid_is_any(const uint8_t g[16])
{
	return gid_is_zero(g) || (gid_is_v4(g) && memcmp(g + 12, "\0\0\0\0", 4) == 0) ||
	       gid_is_loopback(g);
}

static size_t sa_len(int family)
{
	return family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

/* The device that has @p gid among its GIDs, or NULL. */
static struct droce_device *device_by_gid(const union ibv_gid *gid)
{
	struct droce_device **list = droce_get_device_list(NULL);
	struct droce_device *found = NULL;
	const union ibv_gid *t;
	unsigned int i, k;

	if (list == NULL)
		return NULL;
	for (i = 0; list[i] != NULL && found == NULL; i++) {
		t = verbs_device_gids_get(list[i]);
		for (k = 0; k < DROCE_MAX_GID; k++)
			if (!gid_is_zero(t[k].raw) && memcmp(t[k].raw, gid->raw, 16) == 0)
				found = list[i];
	}
	droce_free_device_list(list);
	return found;
}

/* True when @p sa is an address of one of the host's interfaces (so that binding it fails as
 * Linux fails an address whose netdev has no RDMA device: ENODEV, not EADDRNOTAVAIL). */
static bool host_has_addr(const struct sockaddr *sa)
{
	struct ifaddrs *ifa, *p;
	bool found = false;

	if (getifaddrs(&ifa) != 0)
		return false;
	for (p = ifa; p != NULL && !found; p = p->ifa_next) {
		if (p->ifa_addr == NULL || p->ifa_addr->sa_family != sa->sa_family)
			continue;
		if (sa->sa_family == AF_INET)
			found = memcmp(&((struct sockaddr_in *)p->ifa_addr)->sin_addr,
				       &((const struct sockaddr_in *)sa)->sin_addr, 4) == 0;
		else
			found = memcmp(&((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr,
				       &((const struct sockaddr_in6 *)sa)->sin6_addr, 16) == 0;
	}
	freeifaddrs(ifa);
	return found;
}

/* ---- Id table ---- */

struct cm_id *cm_id_new(struct cm_chan *chan, void *context, enum rdma_port_space ps)
{
	struct cm_id *id = calloc(1, sizeof(*id));

	if (id == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	id->chan = chan;
	chan->n_ids++;
	id->pub.channel = &chan->pub;
	id->pub.context = context;
	id->pub.ps = ps;
	id->pub.qp_type = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;
	id->state = CM_IDLE;
	id->ib = IB_IDLE;
	/* The PSN this id's QP receives from, fixed for its life as Linux's rdma_cm does
	 * (id_priv->seq_num): rdma_init_qp_attr() for RTR gives it before rdma_accept() as
	 * after, and the REQ or REP carries the same. */
	id->rq_psn = cm_random() & 0xffffff;
	pthread_cond_init(&id->cond, NULL);
	TAILQ_INSERT_TAIL(&cm_svc.ids, id, next);
	return id;
}

void cm_id_free(struct cm_id *id)
{
	if (id->local_id != 0 && cm_svc.by_local[id->local_id % CM_MAX_IDS] == id)
		cm_svc.by_local[id->local_id % CM_MAX_IDS] = NULL;
	cm_qp_drop(id, false);	/* the application's now */
	TAILQ_REMOVE(&cm_svc.ids, id, next);
	cm_event_forget(id);
	if (id->chan != NULL) {
		id->chan->n_ids--;
		if (id->chan->priv)
			cm_chan_free(id->chan);
	}
	pthread_cond_destroy(&id->cond);
	free(id);
}

int cm_id_set_local(struct cm_id *id)
{
	uint32_t i, slot;

	if (id->local_id != 0)
		return 0;
	for (i = 0; i < CM_MAX_IDS; i++) {
		slot = (cm_svc.next_slot + i) % CM_MAX_IDS;
		if (cm_svc.by_local[slot] == NULL)
			break;
	}
	if (i == CM_MAX_IDS)
		return -ENOMEM;
	cm_svc.next_slot = slot + 1;	/* do not reuse a slot at once: stale MADs */
	/* A generation above the slot bits, so that a reused slot gets another ID; never 0
	 * (Linux's REJ for an unknown REQ carries 0 as our side's ID). */
	do
		id->local_id = (++cm_svc.gen << CM_ID_BITS) | slot;
	while (id->local_id == 0);
	cm_svc.by_local[slot] = id;
	return 0;
}

struct cm_id *cm_id_by_local(uint32_t local_id)
{
	struct cm_id *id = cm_svc.by_local[local_id % CM_MAX_IDS];

	return id != NULL && id->local_id == local_id ? id : NULL;
}

uint16_t cm_id_ps(const struct cm_id *id)
{
	return (uint16_t)id->pub.ps;
}

/* ---- Create, destroy, migrate ---- */

int droce_cm_create_id(struct droce_cm_event_channel *channel, struct droce_cm_id **out,
		       void *context, enum rdma_port_space ps)
{
	struct cm_chan *c;
	struct cm_id *id;
	int rc;

	if (out == NULL || (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB &&
			    ps != RDMA_PS_IPOIB)) {
		errno = EINVAL;
		return -1;
	}
	rc = cm_start();
	if (rc != 0) {
		errno = -rc;
		return -1;
	}
	pthread_mutex_lock(&cm_svc.lock);
	c = channel != NULL ? container_of_cm(channel, struct cm_chan, pub) : cm_chan_new(true);
	id = c != NULL ? cm_id_new(c, context, ps) : NULL;
	if (id == NULL && c != NULL && channel == NULL)
		cm_chan_free(c);
	pthread_mutex_unlock(&cm_svc.lock);
	if (id == NULL)
		return -1;
	*out = &id->pub;
	return 0;
}

/* Wait until every event returned for @p id is acked (cm_svc.lock held; released while waiting). */
static void wait_acks(struct cm_id *id)
{
	while (id->ev_acked < id->ev_delivered)
		pthread_cond_wait(&id->cond, &cm_svc.lock);
}

/* A destroyed listener: the requests it announced are orphans, those not yet returned go. */
static void listener_gone(struct cm_id *l)
{
	struct cm_event *e, *nx;
	struct cm_id *id;

	for (e = TAILQ_FIRST(&l->chan->events); e != NULL; e = nx) {
		nx = TAILQ_NEXT(e, next);
		if (e->id != l || e->pub.event != RDMA_CM_EVENT_CONNECT_REQUEST)
			continue;
		id = to_cid(e->pub.id);
		TAILQ_REMOVE(&l->chan->events, e, next);
		free(e);
		cm_conn_abandon(id);	/* REJ or SIDR_REP reject, as Linux does for them */
		cm_id_free(id);
	}
}

static void orphan_children(struct cm_id *l)
{
	struct cm_id *id;

	TAILQ_FOREACH(id, &cm_svc.ids, next)
		if (id->listener == l)
			id->listener = NULL;
}

int droce_cm_destroy_id(struct droce_cm_id *pub)
{
	struct cm_id *id;

	if (pub == NULL) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	if (pub->event != NULL && id->chan->priv) {
		droce_cm_ack_cm_event(pub->event);	/* a synchronous id's last event */
		pub->event = NULL;
	}
	pthread_mutex_lock(&cm_svc.lock);
	if (id->state == CM_LISTEN)
		listener_gone(id);
	cm_mcast_leave_all(id);
	cm_conn_abandon(id);
	cm_event_forget(id);
	id->destroying = true;
	wait_acks(id);
	orphan_children(id);
	id->bound = false;
	id->state = CM_IDLE;
	if (id->ib == IB_TIMEWAIT || id->ib == IB_DREQ_SENT) {
		/* Kept until its timewait ends, to answer the peer's repeated DREQ; it has no
		 * channel, no application handle any more. */
		cm_event_forget(id);
		id->chan->n_ids--;
		if (id->chan->priv)
			cm_chan_free(id->chan);
		id->chan = NULL;
		cm_qp_drop(id, false);
	} else {
		cm_id_free(id);
	}
	pthread_mutex_unlock(&cm_svc.lock);
	return 0;
}

int droce_cm_migrate_id(struct droce_cm_id *pub, struct droce_cm_event_channel *channel)
{
	struct cm_chan *to, *from;
	struct cm_event *e, *nx;
	struct cm_id *id;
	uint64_t one = 1;

	if (pub == NULL) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	if (channel == NULL && id->chan->priv) {
		errno = EINVAL;	/* already synchronous */
		return -1;
	}
	if (pub->event != NULL && id->chan->priv) {
		droce_cm_ack_cm_event(pub->event);
		pub->event = NULL;
	}
	pthread_mutex_lock(&cm_svc.lock);
	to = channel != NULL ? container_of_cm(channel, struct cm_chan, pub) : cm_chan_new(true);
	if (to == NULL) {
		pthread_mutex_unlock(&cm_svc.lock);
		errno = ENOMEM;
		return -1;
	}
	from = id->chan;
	for (e = TAILQ_FIRST(&from->events); e != NULL; e = nx) {
		nx = TAILQ_NEXT(e, next);
		if (e->id != id)
			continue;
		TAILQ_REMOVE(&from->events, e, next);
		TAILQ_INSERT_TAIL(&to->events, e, next);
		if (write(to->efd, &one, sizeof(one)) != sizeof(one))
			CM_LOG(ERR, "event channel eventfd: %s", strerror(errno));
	}
	wait_acks(id);	/* the events already returned on the old channel */
	id->chan = to;
	to->n_ids++;
	from->n_ids--;
	if (from->priv)
		cm_chan_free(from);
	pub->channel = &to->pub;
	pthread_mutex_unlock(&cm_svc.lock);
	return 0;
}

/* ---- Binding ---- */

static bool addrs_overlap(const struct cm_id *a, const struct cm_id *b)
{
	const struct sockaddr *sa = &a->pub.route.addr.src_addr, *sb = &b->pub.route.addr.src_addr;
	union ibv_gid ga, gb;
	bool va, vb;

	cm_sockaddr_gid(sa, &ga);
	cm_sockaddr_gid(sb, &gb);
	va = sa->sa_family == AF_INET;
	vb = sb->sa_family == AF_INET;
	if (va != vb) {
		/* An IPv6 wildcard without AFONLY takes IPv4 too. */
		const struct cm_id *six = va ? b : a;

		return gid_is_any(six == a ? ga.raw : gb.raw) && !six->afonly;
	}
	return gid_is_any(ga.raw) || gid_is_any(gb.raw) || memcmp(ga.raw, gb.raw, 16) == 0;
}

/* Is @p port taken for @p id (which is about to listen when @p listening)? */
static bool port_taken(const struct cm_id *id, uint16_t port, bool listening)
{
	const struct cm_id *o;

	TAILQ_FOREACH(o, &cm_svc.ids, next) {
		if (o == id || !o->bound || o->pub.ps != id->pub.ps ||
		    sa_port(&o->pub.route.addr.src_addr) != port)
			continue;
		if (!addrs_overlap(id, o))
			continue;
		if (id->reuseaddr && o->reuseaddr && o->state != CM_LISTEN && !listening)
			continue;
		return true;
	}
	return false;
}

static int pick_port(struct cm_id *id, uint16_t *port)
{
	unsigned int span = CM_EPHEMERAL_HIGH - CM_EPHEMERAL_LOW + 1, i;
	unsigned int start = cm_random() % span;

	for (i = 0; i < span; i++) {
		*port = (uint16_t)(CM_EPHEMERAL_LOW + (start + i) % span);
		if (!port_taken(id, *port, false))
			return 0;
	}
	return EADDRNOTAVAIL;
}

/* Tie @p id to device @p dev (its agent, context, port, source GID). */
static int attach_device(struct cm_id *id, struct droce_device *dev, const union ibv_gid *sgid)
{
	struct cm_agent *a = cm_agent_get(dev);
	int idx;

	if (a == NULL)
		return errno != 0 ? errno : ENODEV;
	idx = cm_agent_gid_index(a, sgid);
	if (idx < 0)
		return EADDRNOTAVAIL;
	id->agent = a;
	id->sgid_index = (uint8_t)idx;
	id->pub.verbs = a->ctx;
	id->pub.pd = a->user_pd;
	id->pub.port_num = 1;
	id->pub.route.addr.addr.ibaddr.sgid = *sgid;
	id->pub.route.addr.addr.ibaddr.pkey = htons(0xffff);
	return 0;
}

/* Bind (cm_svc.lock held). @return 0 or an errno value. */
static int bind_locked(struct cm_id *id, const struct sockaddr *addr)
{
	struct sockaddr *src = &id->pub.route.addr.src_addr;
	struct droce_device *dev = NULL;
	union ibv_gid gid;
	uint16_t port = sa_port(addr);
	int rc;

	if (id->state != CM_IDLE)
		return EINVAL;
	if (!cm_sockaddr_gid(addr, &gid))
		return EAFNOSUPPORT;
	if (!gid_is_any(gid.raw)) {
		dev = device_by_gid(&gid);
		if (dev == NULL)
			return host_has_addr(addr) ? ENODEV : EADDRNOTAVAIL;
	}
	memcpy(src, addr, sa_len(addr->sa_family));
	if (addr->sa_family == AF_INET && !id->afonly_set)
		id->afonly = true;	/* as Linux: an AF_INET bind is IPv4 only */
	if (port == 0) {
		rc = pick_port(id, &port);
		if (rc != 0)
			return rc;
	} else if (port_taken(id, port, false)) {
		return EADDRINUSE;
	}
	sa_set_port(src, port);
	if (dev != NULL) {
		rc = attach_device(id, dev, &gid);
		if (rc != 0)
			return rc;
	}
	id->bound = true;
	id->state = CM_ADDR_BOUND;
	return 0;
}

int droce_cm_bind_addr(struct droce_cm_id *pub, struct sockaddr *addr)
{
	int rc;

	if (pub == NULL || addr == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_svc.lock);
	rc = bind_locked(to_cid(pub), addr);
	return cm_unlock_return(rc);
}

/* ---- Address and route resolution ---- */

/*
 * The device of an id bound to none whose destination is this host (Linux's
 * cma_bind_loopback()): the first device whose port is active, or the first device when none
 * is; @p src its GID for the id's family: the IPv4 one (::ffff:a.b.c.d) for AF_INET, the
 * link-local one (index 0, Linux's choice for both) for AF_INET6. A device without an IPv4
 * address is passed over for AF_INET. NULL: no such device.
 */
static struct droce_device *device_loopback(int family, union ibv_gid *src)
{
	struct droce_device **list = droce_get_device_list(NULL);
	struct droce_device *found = NULL, *first = NULL;
	union ibv_gid first_gid = { .raw = { 0 } };
	struct ibv_port_attr pa;
	const union ibv_gid *t;
	struct cm_agent *a;
	unsigned int i, k;

	for (i = 0; list != NULL && list[i] != NULL && found == NULL; i++) {
		t = verbs_device_gids_get(list[i]);
		for (k = family == AF_INET ? 1 : 0; k < DROCE_MAX_GID; k++)
			if (!gid_is_zero(t[k].raw) && (family != AF_INET || gid_is_v4(t[k].raw)))
				break;
		if (k == DROCE_MAX_GID)
			continue;
		if (first == NULL) {
			first = list[i];
			first_gid = t[k];
		}
		a = cm_agent_get(list[i]);	/* its engine runs: the port state is known */
		if (a != NULL && droce_query_port(a->ctx, 1, &pa) == 0 &&
		    pa.state == IBV_PORT_ACTIVE) {
			found = list[i];
			*src = t[k];
		}
	}
	droce_free_device_list(list);
	if (found == NULL && first != NULL) {
		found = first;
		*src = first_gid;
	}
	return found;
}

/* The device a destination is reached from when the id is bound to none (file comment). */
static struct droce_device *device_for(const union ibv_gid *dst, union ibv_gid *src)
{
	struct droce_device **list = droce_get_device_list(NULL);
	struct droce_device *found = NULL;
	const union ibv_gid *t;
	bool v4 = gid_is_v4(dst->raw), ll = dst->raw[0] == 0xfe && (dst->raw[1] & 0xc0) == 0x80;
	unsigned int i, k;

	if (list == NULL)
		return NULL;
	for (i = 0; list[i] != NULL && found == NULL; i++) {
		t = verbs_device_gids_get(list[i]);
		for (k = 0; k < DROCE_MAX_GID && found == NULL; k++) {
			if (gid_is_zero(t[k].raw) || memcmp(t[k].raw, dst->raw, 16) == 0)
				continue;
			if (ll ? k != 0 : (k == 0 || gid_is_v4(t[k].raw) != v4))
				continue;	/* GID 0 is the link-local one */
			found = list[i];
			*src = t[k];
		}
		if (found != NULL && device_by_gid(dst) == found)
			found = NULL;	/* the destination is this device's own address */
	}
	droce_free_device_list(list);
	if (found == NULL) {
		/* Only the destination's own device: it loops the frames back (as Linux routes
		 * an address of the host through lo to the device of its interface). */
		found = device_by_gid(dst);
		if (found != NULL)
			*src = *dst;
	}
	return found;
}

static void resolve_fail(struct cm_id *id, int status)
{
	id->state = CM_ADDR_BOUND;
	cm_event_queue(id, RDMA_CM_EVENT_ADDR_ERROR, status, NULL, 0);
}

void cm_resolve_poll(struct cm_id *id)
{
	uint8_t mac[6];
	int rc;

	if (id->state != CM_ADDR_QUERY)
		return;
	rc = droce_engine_neigh_resolve(id->pub.verbs, &id->pub.route.addr.addr.ibaddr.dgid, mac);
	if (rc == 0) {
		id->state = CM_ADDR_RESOLVED;
		cm_event_queue(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, 0);
	} else if (rc != -EAGAIN && rc != -EHOSTUNREACH) {
		resolve_fail(id, rc);
	} else if (cm_now_ms() >= id->resolve_deadline) {
		/* ARP/ND unanswered within the caller's time: -ETIMEDOUT, as Linux (the engine
		 * keeps asking meanwhile, also after a resolution it gave up on). */
		resolve_fail(id, -ETIMEDOUT);
	} else {
		cm_timer_arm(id, CM_T_RESOLVE, cm_svc.cfg.resolve_poll_ms);
	}
}

static int resolve_addr_locked(struct cm_id *id, const struct sockaddr *src,
			       const struct sockaddr *dst, int timeout_ms)
{
	struct sockaddr_storage any;
	union ibv_gid dgid, sgid, bound;
	struct droce_device *dev;
	int rc;

	if (id->state == CM_IDLE) {
		if (src == NULL) {
			memset(&any, 0, sizeof(any));
			any.ss_family = dst->sa_family;
			src = (const struct sockaddr *)&any;
		}
		rc = bind_locked(id, src);
		if (rc != 0)
			return rc;
	} else if (id->state != CM_ADDR_BOUND) {
		return EINVAL;
	}
	if (id->pub.route.addr.src_addr.sa_family != dst->sa_family)
		return EINVAL;
	cm_sockaddr_gid(dst, &dgid);
	memcpy(&id->pub.route.addr.dst_addr, dst, sa_len(dst->sa_family));
	if (gid_is_any(dgid.raw)) {
		/* This host (loopback, wildcard): the id's own device and GID (file comment).
		 * The source address stays as bound, as Linux leaves it. */
		if (id->agent == NULL) {
			dev = device_loopback(dst->sa_family, &sgid);
			if (dev == NULL)
				return ENODEV;
			rc = attach_device(id, dev, &sgid);
			if (rc != 0)
				return rc;
		}
		dgid = id->pub.route.addr.addr.ibaddr.sgid;
	}
	id->pub.route.addr.addr.ibaddr.dgid = dgid;
	if (id->agent == NULL) {
		dev = device_for(&dgid, &sgid);
		if (dev == NULL)
			return ENODEV;
		rc = attach_device(id, dev, &sgid);
		if (rc != 0)
			return rc;
		/* The wildcard source becomes the device's address, the port stays. */
		gid_sockaddr(sgid.raw, sa_port(&id->pub.route.addr.src_addr),
			     &id->pub.route.addr.src_storage);
	}
	cm_sockaddr_gid(&id->pub.route.addr.src_addr, &bound);
	if (!gid_is_any(bound.raw) && gid_is_v4(bound.raw) != gid_is_v4(dgid.raw))
		return EINVAL;
	id->state = CM_ADDR_QUERY;
	id->resolve_deadline = cm_now_ms() + (unsigned int)(timeout_ms > 0 ? timeout_ms : 2000);
	cm_timer_arm(id, CM_T_RESOLVE, 0);
	return 0;
}

int droce_cm_resolve_addr(struct droce_cm_id *pub, struct sockaddr *src_addr,
			  struct sockaddr *dst_addr, int timeout_ms)
{
	struct cm_id *id;
	int rc;

	if (pub == NULL || dst_addr == NULL ||
	    (dst_addr->sa_family != AF_INET && dst_addr->sa_family != AF_INET6) ||
	    (src_addr != NULL && src_addr->sa_family != dst_addr->sa_family)) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	rc = resolve_addr_locked(id, src_addr, dst_addr, timeout_ms);
	pthread_mutex_unlock(&cm_svc.lock);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return id->chan->priv ? cm_sync_wait(id) : 0;
}

/*
 * The service level for type of service @p tos, as Linux's RDMA CM gives a RoCE path
 * (iboe_tos_to_sl()): the socket priority the kernel gives that TOS (rt_tos2priority(), from
 * the RFC 1349 TOS bits: 0 best effort, 2 bulk, 4 interactive bulk, 6 interactive) through the
 * netdev's priority-to-PCP map, here the identity (a VLAN's egress-qos-map "N:N"). With
 * [device] pcp = sl it is the 802.1Q priority of the connection's frames.
 */
uint8_t cm_tos_to_sl(uint8_t tos)
{
	static const uint8_t prio[16] = { 0, 1, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4 };

	return prio[(tos & 0x1e) >> 1];
}

void cm_path_fill(struct cm_id *id)
{
	struct ibv_sa_path_rec *p = &id->path;
	uint16_t sp = sa_port(&id->pub.route.addr.src_addr);
	uint16_t dp = sa_port(&id->pub.route.addr.dst_addr);

	memset(p, 0, sizeof(*p));
	p->dgid = id->pub.route.addr.addr.ibaddr.dgid;
	p->sgid = id->pub.route.addr.addr.ibaddr.sgid;
	/* RoCE v2: the flow label rdma_cm derives from the ports (spreads flows by UDP port). */
	p->flow_label = htonl(((uint32_t)sp * 31 + dp) & 0xfffff);
	p->hop_limit = 64;
	p->traffic_class = id->tos;
	p->sl = cm_tos_to_sl(id->tos);
	p->reversible = 1;
	p->numb_path = 1;
	p->pkey = htons(0xffff);
	p->mtu_selector = 2;
	p->mtu = id->agent->mtu;
	p->rate_selector = 2;
	p->packet_life_time_selector = 2;
	p->packet_life_time = id->ack_timeout != 0 ? (uint8_t)(id->ack_timeout - 1) :
						    cm_svc.cfg.packet_life_time;
	id->pub.route.path_rec = p;
	id->pub.route.num_paths = 1;
}

int droce_cm_resolve_route(struct droce_cm_id *pub, int timeout_ms)
{
	struct cm_id *id;

	if (pub == NULL) {
		errno = EINVAL;
		return -1;
	}
	RTE_SET_USED(timeout_ms);	/* nothing to wait for: no subnet administrator */
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	if (id->state != CM_ADDR_RESOLVED) {
		pthread_mutex_unlock(&cm_svc.lock);
		errno = EINVAL;
		return -1;
	}
	cm_path_fill(id);
	id->state = CM_ROUTE_RESOLVED;
	cm_event_queue(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0);
	pthread_mutex_unlock(&cm_svc.lock);
	return id->chan->priv ? cm_sync_wait(id) : 0;
}

/* ---- Listening ---- */

int droce_cm_listen(struct droce_cm_id *pub, int backlog)
{
	struct droce_device **list;
	struct sockaddr_in any;
	struct cm_id *id;
	unsigned int i;
	int rc = 0;

	if (pub == NULL) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	if (id->state == CM_IDLE) {
		memset(&any, 0, sizeof(any));
		any.sin_family = AF_INET;
		rc = bind_locked(id, (struct sockaddr *)&any);
	} else if (id->state != CM_ADDR_BOUND) {
		rc = EINVAL;
	}
	if (rc == 0 && port_taken(id, sa_port(&pub->route.addr.src_addr), true))
		rc = EADDRINUSE;	/* a REUSEADDR sharer may not listen */
	if (rc == 0 && id->agent == NULL) {
		/* A wildcard listener: every device's agent must run to hear requests. */
		list = droce_get_device_list(NULL);
		for (i = 0; list != NULL && list[i] != NULL; i++)
			if (cm_agent_get(list[i]) == NULL)
				CM_LOG(WARNING, "%s: no agent, no requests from it",
				       droce_get_device_name(list[i]));
		droce_free_device_list(list);
	}
	if (rc == 0) {
		id->backlog = backlog > 0 && backlog <= CM_DEFAULT_BACKLOG ? backlog :
									    CM_DEFAULT_BACKLOG;
		id->state = CM_LISTEN;
	}
	return cm_unlock_return(rc);
}

struct cm_id *cm_listener_find(uint16_t ps, uint16_t port, const struct cm_agent *a,
			       const uint8_t dst[16])
{
	struct cm_id *id, *wild = NULL;
	union ibv_gid g;

	TAILQ_FOREACH(id, &cm_svc.ids, next) {
		if (id->state != CM_LISTEN || cm_id_ps(id) != ps ||
		    sa_port(&id->pub.route.addr.src_addr) != port)
			continue;
		cm_sockaddr_gid(&id->pub.route.addr.src_addr, &g);
		if (!gid_is_any(g.raw)) {
			if (id->agent == a && memcmp(g.raw, dst, 16) == 0)
				return id;	/* bound to exactly that address */
			continue;
		}
		if (id->pub.route.addr.src_addr.sa_family == AF_INET && !gid_is_v4(dst))
			continue;
		if (id->afonly && id->pub.route.addr.src_addr.sa_family == AF_INET6 &&
		    gid_is_v4(dst))
			continue;
		if (wild == NULL)
			wild = id;
	}
	return wild;
}

void cm_id_set_addrs(struct cm_id *id, const uint8_t src[16], uint16_t sport,
		     const uint8_t dst[16], uint16_t dport)
{
	gid_sockaddr(src, sport, &id->pub.route.addr.src_storage);
	gid_sockaddr(dst, dport, &id->pub.route.addr.dst_storage);
	memcpy(id->pub.route.addr.addr.ibaddr.sgid.raw, src, 16);
	memcpy(id->pub.route.addr.addr.ibaddr.dgid.raw, dst, 16);
	id->pub.route.addr.addr.ibaddr.pkey = htons(0xffff);
}

int droce_cm_get_request(struct droce_cm_id *listen, struct droce_cm_id **out)
{
	struct cm_id *l;
	struct droce_cm_event *ev;

	if (listen == NULL || out == NULL) {
		errno = EINVAL;
		return -1;
	}
	l = to_cid(listen);
	if (!l->chan->priv || l->state != CM_LISTEN) {
		errno = EINVAL;
		return -1;
	}
	if (cm_sync_wait(l) != 0)
		return -1;
	ev = listen->event;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		errno = EINVAL;
		return -1;
	}
	listen->event = NULL;	/* the new id holds it until its next call */
	ev->id->event = ev;
	*out = ev->id;
	return cm_ep_request_qp(l, to_cid(ev->id));
}

/* ---- Options and queries ---- */

int droce_cm_set_option(struct droce_cm_id *pub, int level, int optname, void *optval,
			size_t optlen)
{
	struct cm_id *id;
	int rc = 0;

	if (pub == NULL || optval == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (level != RDMA_OPTION_ID) {
		errno = ENOSYS;	/* RDMA_OPTION_IB_PATH: RoCE has no SA path records */
		return -1;
	}
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			rc = EINVAL;
		else
			id->tos = *(uint8_t *)optval, id->tos_set = true;
		break;
	case RDMA_OPTION_ID_REUSEADDR:
		if (optlen != sizeof(int) || id->state == CM_LISTEN)
			rc = EINVAL;
		else
			id->reuseaddr = *(int *)optval != 0;
		break;
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int) || id->state != CM_IDLE)
			rc = EINVAL;
		else
			id->afonly = *(int *)optval != 0, id->afonly_set = true;
		break;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t) || pub->qp_type != IBV_QPT_RC ||
		    *(uint8_t *)optval > 31)
			rc = EINVAL;
		else
			id->ack_timeout = *(uint8_t *)optval;
		break;
	default:
		rc = ENOSYS;
		break;
	}
	return cm_unlock_return(rc);
}

__be16 droce_cm_get_src_port(struct droce_cm_id *id)
{
	return id != NULL ? htons(sa_port(&id->route.addr.src_addr)) : 0;
}

__be16 droce_cm_get_dst_port(struct droce_cm_id *id)
{
	return id != NULL ? htons(sa_port(&id->route.addr.dst_addr)) : 0;
}

struct droce_context **droce_cm_get_devices(int *num_devices)
{
	struct droce_context **out;
	struct droce_device **list;
	struct cm_agent *a;
	int i, n = 0, k = 0;

	if (num_devices != NULL)
		*num_devices = 0;
	if (cm_start() != 0) {
		errno = EIO;
		return NULL;
	}
	list = droce_get_device_list(&n);
	if (list == NULL)
		return NULL;
	out = calloc((size_t)n + 1, sizeof(*out));
	if (out != NULL) {
		pthread_mutex_lock(&cm_svc.lock);
		for (i = 0; i < n; i++) {
			a = cm_agent_get(list[i]);
			if (a != NULL)
				out[k++] = a->ctx;
		}
		pthread_mutex_unlock(&cm_svc.lock);
		if (num_devices != NULL)
			*num_devices = k;
	} else {
		errno = ENOMEM;
	}
	droce_free_device_list(list);
	return out;
}

void droce_cm_free_devices(struct droce_context **list)
{
	free(list);	/* the contexts stay open, as librdmacm's do */
}
