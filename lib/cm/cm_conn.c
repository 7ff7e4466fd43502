/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * RC connections: the IB CM exchange (IBA 12.9; REQ, MRA, REJ, REP, RTU, DREQ, DREP; no LAP)
 * as Linux's ib_cm runs it, under rdma_cm's conventions and events.
 *
 *   active                          passive
 *   connect: REQ ------------------> listener found: new id, CONNECT_REQUEST
 *            (retried)               accept: QP to RTR/RTS, REP (retried)
 *   REP: QP to RTR/RTS, RTU -------> ESTABLISHED
 *   ESTABLISHED
 *   disconnect: QP to ERR, DREQ ---> DISCONNECTED (the DREP waits for the application's
 *   DREP: DISCONNECTED <------------ disconnect or destroy, as in Linux)
 *   timewait, then TIMEWAIT_EXIT     timewait, then TIMEWAIT_EXIT
 *
 * Matching (IBA 12.9.8, Linux's cm_acquire_id()): a message names our communication ID in its
 * Remote Comm ID, and must name the peer's in its Local Comm ID once we know it; TIDs are not
 * used to match. Duplicates: a REQ repeated while the application has not answered gets an MRA
 * (service timeout 24, Linux's deferred MRA), a REP repeated after our RTU gets the RTU again, a
 * DREQ repeated in timewait the DREP again; other repeats are dropped (the sender's retry timer
 * recovers). PSNs follow Linux: the REQ's starting PSN is the passive side's send PSN, the
 * REP's the active side's.
 *
 * Timers (Linux's values): a REQ waits 2 * 4.096 us * 2^packet_life_time + 4.096 us * 2^
 * response_timeout and is sent max_retries more times; a REP waits the REQ's local CM response
 * timeout, as often as the REQ's max CM retries say; a DREQ as the connection's REQ or REP did.
 * Out of retries: UNREACHABLE (-ETIMEDOUT), or DISCONNECTED (-ETIMEDOUT) for a DREQ; no REJ is
 * sent. Timewait lasts 4.096 us * 2^(the QP's ACK timeout).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "cm_private.h"

#define CM_MRA_SERVICE_TIMEOUT 24	/* Linux's CMA_CM_MRA_SETTING: about 68.7 s */
#define CM_TARGET_ACK_DELAY 15		/* droce_query_device()'s local_ca_ack_delay */

/* ---- Sending ---- */

static uint64_t tid_of(const struct cm_id *id)
{
	return (uint64_t)1 << 32 | id->local_id;
}

/* Send @p m once, and keep it to answer duplicates with (RTU, MRA, DREP). */
static void send_reply(struct cm_id *id, const struct droce_cm_mad *m)
{
	id->last_reply = *m;
	id->last_reply_valid = true;
	cm_mad_send(&id->dest, m);
}

static void rej_fill(struct droce_cm_mad *m, uint64_t tid, uint32_t local, uint32_t remote,
		     uint8_t msg, uint16_t reason, const void *pdata, uint8_t len)
{
	memset(m, 0, sizeof(*m));
	cm_mad_hdr(m, DROCE_CM_ATTR_REJ, tid);
	m->u.rej.local_comm_id = local;
	m->u.rej.remote_comm_id = remote;
	m->u.rej.message_rejected = msg;
	m->u.rej.reason = reason;
	if (len != 0)
		memcpy(m->u.rej.private_data, pdata, len);
}

/* A REJ for a REQ that got no id (Linux's cm_issue_rej(): our side's ID 0). */
static void issue_rej(const struct cm_dest *to, const struct droce_cm_mad *req, uint16_t reason)
{
	struct droce_cm_mad m;

	rej_fill(&m, req->hdr.tid, 0, req->u.req.local_comm_id, DROCE_CM_REF_REQ, reason,
		 NULL, 0);
	cm_mad_send(to, &m);
}

/* Which message a REJ from @p id rejects (Linux's cm_format_rej()). */
static uint8_t rej_msg(const struct cm_id *id)
{
	switch (id->ib) {
	case IB_REQ_RCVD:
		return DROCE_CM_REF_REQ;
	case IB_REP_RCVD:
		return DROCE_CM_REF_REP;
	default:
		return DROCE_CM_REF_OTHER;
	}
}

static void send_rej(struct cm_id *id, uint16_t reason, const void *pdata, uint8_t len)
{
	struct droce_cm_mad m;

	rej_fill(&m, id->tid, id->ib == IB_REQ_RCVD ? 0 : id->local_id, id->remote_id,
		 rej_msg(id), reason, pdata, len);
	if (reason == DROCE_CM_REJ_TIMEOUT) {
		/* IBA 12.6.7.2: a timeout REJ carries the sender's CA GUID. */
		memcpy(m.u.rej.ari, &id->agent->guid, 8);
		m.u.rej.ari_length = 8;
	}
	cm_mad_send(&id->dest, &m);
}

static void send_mra(struct cm_id *id, uint8_t which)
{
	struct droce_cm_mad m;

	memset(&m, 0, sizeof(m));
	cm_mad_hdr(&m, DROCE_CM_ATTR_MRA, id->tid);
	m.u.mra.local_comm_id = id->local_id;
	m.u.mra.remote_comm_id = id->remote_id;
	m.u.mra.message_mraed = which;
	m.u.mra.service_timeout = CM_MRA_SERVICE_TIMEOUT;
	cm_mad_send(&id->dest, &m);
}

static void send_dreq(struct cm_id *id, bool retry)
{
	memset(&id->mad, 0, sizeof(id->mad));
	cm_mad_hdr(&id->mad, DROCE_CM_ATTR_DREQ, tid_of(id));
	id->mad.u.dreq.local_comm_id = id->local_id;
	id->mad.u.dreq.remote_comm_id = id->remote_id;
	id->mad.u.dreq.remote_qpn = id->remote_qpn;
	if (retry) {
		cm_mad_send_tracked(id, id->conn_timeout_ms, id->max_cm_retries);
	} else {
		cm_timer_stop(id);
		cm_mad_send(&id->dest, &id->mad);
	}
}

static void send_drep(struct cm_id *id)
{
	struct droce_cm_mad m;

	memset(&m, 0, sizeof(m));
	cm_mad_hdr(&m, DROCE_CM_ATTR_DREP, id->tid);
	m.u.drep.local_comm_id = id->local_id;
	m.u.drep.remote_comm_id = id->remote_id;
	send_reply(id, &m);
}

/* ---- State changes ---- */

static void enter_timewait(struct cm_id *id)
{
	id->ib = IB_TIMEWAIT;
	id->mad_valid = false;
	cm_timer_arm(id, CM_T_TIMEWAIT, cm_convert_ms(id->local_ack_timeout));
}

void cm_conn_timewait_end(struct cm_id *id)
{
	id->ib = IB_IDLE;
	if (id->chan == NULL) {
		cm_id_free(id);	/* destroyed meanwhile */
		return;
	}
	if (id->state == CM_DISCONNECT)
		cm_event_queue(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL, 0);
}

/* The connection ended: DISCONNECTED once, from the connected state. */
static void disconnected(struct cm_id *id, int status)
{
	if (id->state != CM_CONNECTED)
		return;
	id->state = CM_DISCONNECT;
	cm_event_queue(id, RDMA_CM_EVENT_DISCONNECTED, status, NULL, 0);
}

/* A connection attempt failed: the QP stops, the application learns why. */
static void failed(struct cm_id *id, enum rdma_cm_event_type ev, int status, const void *pdata,
		   uint8_t len)
{
	id->state = CM_DISCONNECT;
	id->mad_valid = false;
	cm_timer_stop(id);
	if (id->pub.qp != NULL)
		cm_qp_to(id, IBV_QPS_ERR);
	cm_event_queue(id, ev, status, pdata, len);
}

static void established(struct cm_id *id)
{
	id->ib = IB_ESTABLISHED;
	id->state = CM_CONNECTED;
	id->mad_valid = false;
	cm_timer_stop(id);
}

/* ---- Connect (active) ---- */

/* Clamp a resources/depth parameter: 0xFF means the device's maximum (librdmacm). */
static int depth(const struct rdma_conn_param *p, bool initiator, uint8_t dflt, uint8_t *out)
{
	uint8_t v = p == NULL ? RDMA_MAX_INIT_DEPTH :
		    initiator ? p->initiator_depth : p->responder_resources;

	if (v == RDMA_MAX_INIT_DEPTH)
		v = dflt;
	if (v > DROCE_MAX_RD_ATOM)
		return EINVAL;
	*out = v;
	return 0;
}

static void cma_hdr_put(const struct cm_id *id, uint8_t *pdata)
{
	struct droce_cma_hdr h;

	memset(&h, 0, sizeof(h));
	h.version = DROCE_CMA_VERSION;
	h.ip_version = id->pub.route.addr.src_addr.sa_family == AF_INET ? 4 : 6;
	h.src_port = ntohs(droce_cm_get_src_port((struct droce_cm_id *)&id->pub));
	memcpy(h.src, id->pub.route.addr.addr.ibaddr.sgid.raw, 16);
	memcpy(h.dst, id->pub.route.addr.addr.ibaddr.dgid.raw, 16);
	droce_cma_hdr_build(&h, pdata);
}

static void req_fill(struct cm_id *id, uint32_t qpn, const struct rdma_conn_param *p)
{
	struct droce_cm_req *r = &id->mad.u.req;
	const struct ibv_sa_path_rec *path = &id->path;

	memset(&id->mad, 0, sizeof(id->mad));
	cm_mad_hdr(&id->mad, DROCE_CM_ATTR_REQ, tid_of(id));
	r->local_comm_id = id->local_id;
	r->service_id = droce_cma_service_id(cm_id_ps(id),
					     ntohs(droce_cm_get_dst_port(&id->pub)));
	memcpy(&r->local_ca_guid, &id->agent->guid, 8);
	r->local_ca_guid = be64toh(r->local_ca_guid);
	r->local_qpn = qpn;
	r->responder_resources = id->responder_resources;
	r->initiator_depth = id->initiator_depth;
	r->remote_cm_response_timeout = cm_svc.cfg.response_timeout;
	r->transport_type = DROCE_CM_TRANSPORT_RC;
	r->flow_control = id->flow_control;
	r->starting_psn = id->rq_psn;
	r->local_cm_response_timeout = cm_svc.cfg.response_timeout;
	r->retry_count = id->retry_count;
	r->pkey = 0xffff;
	r->path_mtu = path->mtu;
	r->rnr_retry_count = id->rnr_retry_count;
	r->max_cm_retries = cm_svc.cfg.max_retries;
	r->srq = id->srq;
	/* RoCE: permissive LIDs and not subnet-local on a routed (hop limit > 1) path, as
	 * Linux's cm_format_req() writes them; no alternate path (its LIDs stay 0). */
	r->primary.local_lid = 0xffff;
	r->primary.remote_lid = 0xffff;
	memcpy(r->primary.local_gid, path->sgid.raw, 16);
	memcpy(r->primary.remote_gid, path->dgid.raw, 16);
	r->primary.flow_label = ntohl(path->flow_label);
	r->primary.traffic_class = path->traffic_class;
	r->primary.hop_limit = path->hop_limit;
	r->primary.sl = path->sl & 0xf;
	r->primary.local_ack_timeout = cm_ack_timeout(CM_TARGET_ACK_DELAY, path->packet_life_time);
	cma_hdr_put(id, r->private_data);
	if (p != NULL && p->private_data_len != 0)
		memcpy(r->private_data + DROCE_CMA_HDR_LEN, p->private_data, p->private_data_len);
}

static int connect_locked(struct cm_id *id, const struct rdma_conn_param *p)
{
	uint32_t qpn;
	int rc;

	if (id->state != CM_ROUTE_RESOLVED || (id->pub.qp == NULL && p == NULL))
		return EINVAL;
	if (p != NULL && p->private_data_len > DROCE_CM_REQ_PDATA - DROCE_CMA_HDR_LEN)
		return EINVAL;
	if (p != NULL && p->private_data_len != 0 && p->private_data == NULL)
		return EINVAL;
	rc = depth(p, true, DROCE_MAX_RD_ATOM, &id->initiator_depth);
	if (rc == 0)
		rc = depth(p, false, DROCE_MAX_RD_ATOM, &id->responder_resources);
	if (rc == 0)
		rc = -cm_id_set_local(id);
	if (rc != 0)
		return rc;
	qpn = id->pub.qp != NULL ? id->pub.qp->qp_num : p->qp_num & 0xffffff;
	id->local_qpn = qpn;
	id->srq = id->pub.qp != NULL ? id->pub.qp->srq != NULL : p->srq != 0;
	id->retry_count = p != NULL ? RTE_MIN(p->retry_count, 7) : 7;
	id->rnr_retry_count = p != NULL ? RTE_MIN(p->rnr_retry_count, 7) : 7;
	id->flow_control = p != NULL ? p->flow_control != 0 : 0;
	id->mtu = id->path.mtu;
	id->remote_id = 0;
	cm_dest_from_path(id);
	req_fill(id, qpn, p);
	id->tid = id->mad.hdr.tid;
	id->max_cm_retries = cm_svc.cfg.max_retries;
	id->ib = IB_REQ_SENT;
	id->state = CM_CONNECT;
	id->conn_timeout_ms = 2 * cm_convert_ms(id->path.packet_life_time) +
			      cm_convert_ms(cm_svc.cfg.response_timeout);
	cm_mad_send_tracked(id, id->conn_timeout_ms, cm_svc.cfg.max_retries);
	return 0;
}

int droce_cm_connect(struct droce_cm_id *pub, struct rdma_conn_param *p)
{
	struct cm_id *id;
	int rc;

	if (pub == NULL) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	rc = pub->qp_type == IBV_QPT_UD ? cm_sidr_connect(id, p) : connect_locked(id, p);
	pthread_mutex_unlock(&cm_svc.lock);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return id->chan->priv ? cm_sync_wait(id) : 0;
}

/* ---- REQ (passive) ---- */

static bool ib_live(enum cm_ib_state s)
{
	return s != IB_IDLE && s != IB_TIMEWAIT;
}

/* A REQ already taken (its sender's comm ID and CA GUID): the id that took it, or NULL. */
static struct cm_id *find_remote(uint32_t remote_id, uint64_t guid)
{
	struct cm_id *id;
	uint64_t g;

	TAILQ_FOREACH(id, &cm_svc.ids, next) {
		memcpy(&g, &id->remote_guid, 8);
		if (id->remote_id == remote_id && be64toh(g) == guid && ib_live(id->ib))
			return id;
	}
	return NULL;
}

/* A live connection to QP @p qpn of CA @p guid (a new REQ or REP naming it is stale). */
static struct cm_id *find_remote_qpn(uint32_t qpn, uint64_t guid, const struct cm_id *except)
{
	struct cm_id *id;
	uint64_t g;

	TAILQ_FOREACH(id, &cm_svc.ids, next) {
		memcpy(&g, &id->remote_guid, 8);
		if (id != except && id->remote_qpn == qpn && be64toh(g) == guid &&
		    id->remote_id != 0 && ib_live(id->ib) && id->ib != IB_SIDR_REQ_RCVD)
			return id;
	}
	return NULL;
}

/* An old connection named by a new REQ/REP: ended (DREQ), as Linux does. */
static void end_stale(struct cm_id *old)
{
	if (old->ib != IB_ESTABLISHED)
		return;
	if (old->pub.qp != NULL)
		cm_qp_to(old, IBV_QPS_ERR);
	send_dreq(old, true);
	old->ib = IB_DREQ_SENT;
}

/* The REQ's checks that decide a REJ (cm_rx_req()); @return the reason or 0. */
static uint16_t req_check(struct cm_agent *a, const struct droce_cm_req *r,
			  struct droce_cma_hdr *h, struct cm_id **listener)
{
	uint16_t ps = droce_cma_service_ps(r->service_id);
	union ibv_gid ours, theirs;

	memcpy(ours.raw, r->primary.remote_gid, 16);
	memcpy(theirs.raw, r->primary.local_gid, 16);
	if (ps == 0) {
		a->cnt.rx_no_listener++;	/* not an rdma_cm service: no one listens */
		return DROCE_CM_REJ_INVALID_SERVICE_ID;
	}
	if (cm_agent_gid_index(a, &ours) < 0 ||
	    (memcmp(ours.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0) !=
	    (memcmp(theirs.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0)) {
		a->cnt.rx_bad_path++;
		return DROCE_CM_REJ_INVALID_GID;
	}
	if (!droce_cma_hdr_parse(r->private_data, h) || memcmp(h->dst, ours.raw, 16) != 0) {
		a->cnt.rx_bad_cma_hdr++;
		return DROCE_CM_REJ_CONSUMER_DEFINED;
	}
	*listener = cm_listener_find(ps, droce_cma_service_port(r->service_id), a, h->dst);
	if (*listener == NULL) {
		a->cnt.rx_no_listener++;
		return DROCE_CM_REJ_INVALID_SERVICE_ID;
	}
	if ((*listener)->pub.qp_type != IBV_QPT_RC || r->transport_type != DROCE_CM_TRANSPORT_RC) {
		a->cnt.rx_bad_path++;	/* rdma_cm: the QP types differ */
		return DROCE_CM_REJ_CONSUMER_DEFINED;
	}
	if (r->path_mtu < IBV_MTU_256 || r->path_mtu > a->mtu) {
		a->cnt.rx_bad_path++;	/* frames larger than this device takes */
		return DROCE_CM_REJ_INVALID_MTU;
	}
	return 0;
}

/* A new id for a request that passed the checks (the passive side of a connection). */
struct cm_id *cm_child_new(struct cm_id *l, struct cm_agent *a, const uint8_t ours[16],
			   const uint8_t theirs[16], uint16_t their_port)
{
	struct cm_chan *c = l->chan->priv ? cm_chan_new(true) : l->chan;
	struct cm_id *id = c != NULL ? cm_id_new(c, l->pub.context, l->pub.ps) : NULL;
	union ibv_gid g;

	if (id == NULL) {
		if (c != NULL && c != l->chan)
			cm_chan_free(c);
		return NULL;
	}
	if (cm_id_set_local(id) != 0) {
		cm_id_free(id);
		return NULL;
	}
	id->listener = l;
	id->agent = a;
	memcpy(g.raw, ours, 16);
	id->sgid_index = (uint8_t)cm_agent_gid_index(a, &g);
	id->pub.verbs = a->ctx;
	id->pub.pd = a->user_pd;
	id->pub.port_num = 1;
	id->pub.qp_type = l->pub.qp_type;
	cm_id_set_addrs(id, ours, ntohs(droce_cm_get_src_port(&l->pub)), theirs, their_port);
	return id;
}

void cm_rx_req(struct cm_agent *a, const struct cm_dest *from, const struct droce_cm_mad *m)
{
	const struct droce_cm_req *r = &m->u.req;
	struct cm_id *l = NULL, *id;
	struct droce_cma_hdr h;
	struct cm_event *e;
	uint16_t reason;

	id = find_remote(r->local_comm_id, r->local_ca_guid);
	if (id != NULL) {
		a->cnt.rx_duplicates++;
		if (id->ib == IB_REQ_RCVD)
			send_mra(id, DROCE_CM_REF_REQ);	/* the application is slow: wait */
		return;
	}
	id = find_remote_qpn(r->local_qpn, r->local_ca_guid, NULL);
	if (id != NULL) {
		a->cnt.rx_stale++;
		issue_rej(from, m, DROCE_CM_REJ_STALE_CONN);
		end_stale(id);
		return;
	}
	reason = req_check(a, r, &h, &l);
	if (reason != 0) {
		issue_rej(from, m, reason);
		return;
	}
	if (l->pending_reqs >= (unsigned int)l->backlog) {
		a->cnt.rx_backlog_full++;	/* as Linux: no REJ, the sender retries */
		return;
	}
	id = cm_child_new(l, a, r->primary.remote_gid, r->primary.local_gid, h.src_port);
	if (id == NULL) {
		a->cnt.rx_backlog_full++;
		return;
	}
	id->remote_id = r->local_comm_id;
	id->remote_guid = htobe64(r->local_ca_guid);
	id->tid = m->hdr.tid;
	id->remote_qpn = r->local_qpn;
	id->sq_psn = r->starting_psn;
	id->responder_resources = r->initiator_depth;
	id->initiator_depth = r->responder_resources;
	id->retry_count = r->retry_count;
	id->rnr_retry_count = r->rnr_retry_count;
	id->flow_control = r->flow_control;
	id->srq = r->srq;
	id->mtu = (enum ibv_mtu)r->path_mtu;
	id->local_ack_timeout = RTE_MAX(r->primary.local_ack_timeout, 1);
	id->remote_cm_timeout = r->local_cm_response_timeout;
	id->max_cm_retries = r->max_cm_retries;
	id->dest = *from;
	memcpy(id->dest.dgid.raw, r->primary.local_gid, 16);	/* Linux answers the REQ's GID */
	id->dest.traffic_class = r->primary.traffic_class;
	id->dest.sl = r->primary.sl;
	id->dest.flow_label = r->primary.flow_label;
	id->dest.qpn = DROCE_GSI_QPN;
	id->path.dgid = id->dest.dgid;
	memcpy(id->path.sgid.raw, r->primary.remote_gid, 16);
	id->path.flow_label = htonl(r->primary.flow_label);
	id->path.hop_limit = 64;
	id->path.traffic_class = r->primary.traffic_class;
	id->path.sl = r->primary.sl;	/* the active side's, as Linux's passive side takes it */
	id->path.reversible = 1;
	id->path.numb_path = 1;
	id->path.pkey = htons(0xffff);
	id->path.mtu = id->mtu;
	id->path.packet_life_time = id->local_ack_timeout - 1;
	id->pub.route.path_rec = &id->path;
	id->pub.route.num_paths = 1;
	id->ib = IB_REQ_RCVD;
	id->state = CM_CONNECT;
	l->pending_reqs++;
	e = cm_event_queue(id, RDMA_CM_EVENT_CONNECT_REQUEST, 0,
			   r->private_data + DROCE_CMA_HDR_LEN,
			   DROCE_CM_REQ_PDATA - DROCE_CMA_HDR_LEN);
	if (e == NULL) {
		l->pending_reqs--;
		cm_id_free(id);
		return;
	}
	e->pub.param.conn.responder_resources = r->initiator_depth;
	e->pub.param.conn.initiator_depth = r->responder_resources;
	e->pub.param.conn.flow_control = r->flow_control;
	e->pub.param.conn.retry_count = r->retry_count;
	e->pub.param.conn.rnr_retry_count = r->rnr_retry_count;
	e->pub.param.conn.srq = r->srq;
	e->pub.param.conn.qp_num = r->local_qpn;
}

/* ---- Accept, reject (passive) ---- */

static int accept_locked(struct cm_id *id, const struct rdma_conn_param *p)
{
	struct droce_cm_rep *r = &id->mad.u.rep;
	uint8_t rep_rnr_retry;
	uint32_t qpn;
	int rc;

	if (id->ib != IB_REQ_RCVD || id->state != CM_CONNECT)
		return EINVAL;
	if (id->pub.qp == NULL && p == NULL)
		return EINVAL;
	if (p != NULL && (p->private_data_len > DROCE_CM_REP_PDATA ||
			  (p->private_data_len != 0 && p->private_data == NULL)))
		return EINVAL;
	rc = depth(p, true, RTE_MIN(id->initiator_depth, DROCE_MAX_RD_ATOM), &id->initiator_depth);
	if (rc == 0)
		rc = depth(p, false, RTE_MIN(id->responder_resources, DROCE_MAX_RD_ATOM),
			   &id->responder_resources);
	if (rc != 0)
		return rc;
	/* The acceptor's RNR retry count is for the peer's QP and goes in the REP; its own QP
	 * keeps the REQ's: in both messages the field tells the other side how often to retry
	 * an RNR NAK of the sender's receive queue (IBA chapter 12, REQ and REP; Linux's ib_cm
	 * gives the passive QP the REQ's). */
	rep_rnr_retry = p != NULL ? RTE_MIN(p->rnr_retry_count, 7) : 7;
	id->flow_control = p != NULL ? p->flow_control != 0 : id->flow_control;
	qpn = id->pub.qp != NULL ? id->pub.qp->qp_num : p->qp_num & 0xffffff;
	id->local_qpn = qpn;
	if (id->pub.qp != NULL) {
		rc = cm_qp_to(id, IBV_QPS_RTR);
		if (rc == 0)
			rc = cm_qp_to(id, IBV_QPS_RTS);
		if (rc != 0) {
			cm_qp_to(id, IBV_QPS_ERR);
			send_rej(id, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0);
			id->ib = IB_IDLE;
			id->state = CM_DISCONNECT;
			return rc;
		}
	}
	memset(&id->mad, 0, sizeof(id->mad));
	cm_mad_hdr(&id->mad, DROCE_CM_ATTR_REP, id->tid);
	r->local_comm_id = id->local_id;
	r->remote_comm_id = id->remote_id;
	r->local_qpn = qpn;
	r->starting_psn = id->rq_psn;
	r->responder_resources = id->responder_resources;
	r->initiator_depth = id->initiator_depth;
	r->target_ack_delay = CM_TARGET_ACK_DELAY;
	r->flow_control = id->flow_control;
	r->rnr_retry_count = rep_rnr_retry;
	r->srq = id->pub.qp != NULL ? id->pub.qp->srq != NULL : (p->srq != 0);
	memcpy(&r->local_ca_guid, &id->agent->guid, 8);
	r->local_ca_guid = be64toh(r->local_ca_guid);
	if (p != NULL && p->private_data_len != 0)
		memcpy(r->private_data, p->private_data, p->private_data_len);
	id->ib = IB_REP_SENT;
	id->conn_timeout_ms = cm_convert_ms(id->remote_cm_timeout);
	cm_mad_send_tracked(id, id->conn_timeout_ms, id->max_cm_retries);
	return 0;
}

int droce_cm_accept(struct droce_cm_id *pub, struct rdma_conn_param *p)
{
	struct cm_id *id;
	bool ud;
	int rc;

	if (pub == NULL) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	ud = pub->qp_type == IBV_QPT_UD;
	pthread_mutex_lock(&cm_svc.lock);
	rc = ud ? cm_sidr_answer(id, p, true, NULL, 0) : accept_locked(id, p);
	pthread_mutex_unlock(&cm_svc.lock);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return id->chan->priv && !ud ? cm_sync_wait(id) : 0;
}

int droce_cm_reject(struct droce_cm_id *pub, const void *pdata, uint8_t len)
{
	struct cm_id *id;
	int rc = 0;

	if (pub == NULL || (len != 0 && pdata == NULL)) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	if (pub->qp_type == IBV_QPT_UD) {
		rc = cm_sidr_answer(id, NULL, false, pdata, len);
	} else if (id->ib != IB_REQ_RCVD || len > DROCE_CM_REJ_PDATA) {
		rc = EINVAL;
	} else {
		send_rej(id, DROCE_CM_REJ_CONSUMER_DEFINED, pdata, len);
		id->ib = IB_IDLE;
		id->state = CM_DISCONNECT;
	}
	return cm_unlock_return(rc);
}

/* ---- REP, RTU, MRA ---- */

static void rep_event(struct cm_id *id, enum rdma_cm_event_type type, const struct droce_cm_rep *r)
{
	struct cm_event *e = cm_event_queue(id, type, 0, r->private_data, DROCE_CM_REP_PDATA);

	if (e == NULL)
		return;
	e->pub.param.conn.responder_resources = r->initiator_depth;
	e->pub.param.conn.initiator_depth = r->responder_resources;
	e->pub.param.conn.flow_control = r->flow_control;
	e->pub.param.conn.rnr_retry_count = r->rnr_retry_count;
	e->pub.param.conn.srq = r->srq;
	e->pub.param.conn.qp_num = r->local_qpn;
}

static void send_rtu(struct cm_id *id)
{
	struct droce_cm_mad m;

	memset(&m, 0, sizeof(m));
	cm_mad_hdr(&m, DROCE_CM_ATTR_RTU, id->tid);
	m.u.rtu.local_comm_id = id->local_id;
	m.u.rtu.remote_comm_id = id->remote_id;
	send_reply(id, &m);
}

void cm_rx_rep(struct cm_agent *a, const struct cm_dest *from, const struct droce_cm_mad *m)
{
	const struct droce_cm_rep *r = &m->u.rep;
	struct cm_id *id = cm_id_by_local(r->remote_comm_id), *old;

	if (id == NULL || id->agent != a) {
		a->cnt.rx_unmatched++;
		return;
	}
	if (id->remote_id == r->local_comm_id && id->remote_id != 0) {
		a->cnt.rx_duplicates++;
		if (id->ib == IB_ESTABLISHED && id->last_reply_valid)
			cm_mad_send(&id->dest, &id->last_reply);	/* our RTU was lost */
		else if (id->ib == IB_REP_RCVD)
			send_mra(id, DROCE_CM_REF_REP);	/* the application is slow */
		return;
	}
	if (id->remote_id != 0 || (id->ib != IB_REQ_SENT && id->ib != IB_MRA_REQ_RCVD)) {
		a->cnt.rx_unmatched++;
		return;
	}
	old = find_remote_qpn(r->local_qpn, r->local_ca_guid, id);
	if (old != NULL) {
		struct droce_cm_mad rej;

		a->cnt.rx_stale++;
		rej_fill(&rej, m->hdr.tid, id->local_id, r->local_comm_id, DROCE_CM_REF_REP,
			 DROCE_CM_REJ_STALE_CONN, NULL, 0);
		cm_mad_send(from, &rej);
		end_stale(old);
		return;
	}
	id->remote_id = r->local_comm_id;
	id->remote_guid = htobe64(r->local_ca_guid);
	id->remote_qpn = r->local_qpn;
	id->sq_psn = r->starting_psn;
	id->initiator_depth = RTE_MIN(id->initiator_depth, r->responder_resources);
	id->responder_resources = r->initiator_depth;
	id->rnr_retry_count = r->rnr_retry_count;
	id->local_ack_timeout = cm_ack_timeout(r->target_ack_delay, id->path.packet_life_time);
	id->mad_valid = false;
	cm_timer_stop(id);
	id->ib = IB_REP_RCVD;
	if (id->pub.qp == NULL) {
		rep_event(id, RDMA_CM_EVENT_CONNECT_RESPONSE, r);	/* droce_cm_establish() */
		return;
	}
	if (cm_qp_to(id, IBV_QPS_RTR) != 0 || cm_qp_to(id, IBV_QPS_RTS) != 0) {
		send_rej(id, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		id->ib = IB_IDLE;
		failed(id, RDMA_CM_EVENT_CONNECT_ERROR, -EINVAL, NULL, 0);
		return;
	}
	send_rtu(id);
	established(id);
	rep_event(id, RDMA_CM_EVENT_ESTABLISHED, r);
}

int droce_cm_establish(struct droce_cm_id *pub)
{
	struct cm_id *id;
	int rc = 0;

	if (pub == NULL) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	if (id->ib != IB_REP_RCVD || pub->qp != NULL) {
		rc = EINVAL;
	} else {
		send_rtu(id);
		established(id);
	}
	return cm_unlock_return(rc);
}

/* The passive side is connected: the RTU came, or the first packet did (COMM_EST). */
static void passive_established(struct cm_id *id)
{
	established(id);
	cm_event_queue(id, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0);
}

void cm_rx_rtu(struct cm_agent *a, const struct droce_cm_mad *m)
{
	struct cm_id *id = cm_id_by_local(m->u.rtu.remote_comm_id);

	if (id == NULL || id->remote_id != m->u.rtu.local_comm_id) {
		a->cnt.rx_unmatched++;
		return;
	}
	if (id->ib != IB_REP_SENT && id->ib != IB_MRA_REP_RCVD) {
		a->cnt.rx_duplicates++;
		return;
	}
	passive_established(id);
}

int droce_cm_notify(struct droce_cm_id *pub, enum ibv_event_type event)
{
	struct cm_id *id;
	int rc = 0;

	if (pub == NULL || event != IBV_EVENT_COMM_EST) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	if (id->ib == IB_REP_SENT || id->ib == IB_MRA_REP_RCVD)
		passive_established(id);
	else
		rc = id->ib == IB_ESTABLISHED ? EISCONN : EINVAL;
	return cm_unlock_return(rc);
}

void cm_rx_mra(struct cm_agent *a, const struct droce_cm_mad *m)
{
	const struct droce_cm_mra *r = &m->u.mra;
	struct cm_id *id = cm_id_by_local(r->remote_comm_id);
	uint8_t av;

	if (id == NULL) {
		a->cnt.rx_unmatched++;
		return;
	}
	if (r->message_mraed == DROCE_CM_REF_REQ && id->ib == IB_REQ_SENT && id->remote_id == 0) {
		id->ib = IB_MRA_REQ_RCVD;
		av = (uint8_t)(id->path.packet_life_time + 1);
	} else if (r->message_mraed == DROCE_CM_REF_REP && id->ib == IB_REP_SENT &&
		   id->remote_id == r->local_comm_id) {
		id->ib = IB_MRA_REP_RCVD;
		av = id->local_ack_timeout;
	} else {
		a->cnt.rx_duplicates++;	/* a second MRA, or for something not pending */
		return;
	}
	/* IBA 12.6.6: the sender of the MRA needs up to its service timeout; every retry left
	 * waits that long (plus the path's), as Linux's ib_modify_mad(). */
	id->timeout_ms = cm_convert_ms(r->service_timeout) + cm_convert_ms(av);
	cm_timer_arm(id, CM_T_MAD, id->timeout_ms);
}

/* ---- REJ ---- */

static struct cm_id *rej_target(const struct droce_cm_rej *r)
{
	struct cm_id *id;
	uint64_t guid;

	if (r->reason == DROCE_CM_REJ_TIMEOUT && r->remote_comm_id == 0) {
		/* A peer that gave up on its REQ names itself by its CA GUID (ARI). */
		memcpy(&guid, r->ari, 8);
		TAILQ_FOREACH(id, &cm_svc.ids, next)
			if (id->remote_id == r->local_comm_id && id->remote_guid == guid &&
			    ib_live(id->ib))
				return id;
		return NULL;
	}
	id = cm_id_by_local(r->remote_comm_id);
	if (id == NULL)
		return NULL;
	if (r->message_rejected == DROCE_CM_REF_REQ)
		return id->remote_id == 0 ? id : NULL;
	return id->remote_id == r->local_comm_id ? id : NULL;
}

void cm_rx_rej(struct cm_agent *a, const struct droce_cm_mad *m)
{
	const struct droce_cm_rej *r = &m->u.rej;
	struct cm_id *id = rej_target(r);

	if (id == NULL) {
		a->cnt.rx_unmatched++;
		return;
	}
	switch (id->ib) {
	case IB_REQ_RCVD:
		/* Not answered yet: rdma_cm tells the application nothing; accept fails. */
		id->ib = IB_IDLE;
		id->state = CM_DISCONNECT;
		return;
	case IB_REQ_SENT:
	case IB_MRA_REQ_RCVD:
	case IB_REP_SENT:
	case IB_MRA_REP_RCVD:
		id->ib = IB_IDLE;
		if (r->reason == DROCE_CM_REJ_STALE_CONN)
			enter_timewait(id);
		break;
	case IB_REP_RCVD:
	case IB_ESTABLISHED:
	case IB_DREQ_SENT:
		enter_timewait(id);
		if (id->state != CM_CONNECT && id->state != CM_CONNECTED)
			return;	/* disconnecting already: nothing to tell */
		break;
	default:
		a->cnt.rx_unmatched++;
		return;
	}
	failed(id, RDMA_CM_EVENT_REJECTED, r->reason, r->private_data, DROCE_CM_REJ_PDATA);
	if (id->ib == IB_TIMEWAIT)
		cm_timer_arm(id, CM_T_TIMEWAIT, cm_convert_ms(id->local_ack_timeout));
}

/* ---- Disconnect ---- */

void cm_rx_dreq(struct cm_agent *a, const struct cm_dest *from, const struct droce_cm_mad *m)
{
	const struct droce_cm_dreq *r = &m->u.dreq;
	struct cm_id *id = cm_id_by_local(r->remote_comm_id);
	struct droce_cm_mad drep;

	if (id == NULL || id->remote_id != r->local_comm_id) {
		/* A connection we do not know (any more): a DREP stops the peer's retries
		 * (Linux's cm_issue_drep()). */
		a->cnt.rx_unmatched++;
		memset(&drep, 0, sizeof(drep));
		cm_mad_hdr(&drep, DROCE_CM_ATTR_DREP, m->hdr.tid);
		drep.u.drep.local_comm_id = r->remote_comm_id;
		drep.u.drep.remote_comm_id = r->local_comm_id;
		cm_mad_send(from, &drep);
		return;
	}
	if (id->ib != IB_TIMEWAIT && r->remote_qpn != id->local_qpn) {
		a->cnt.rx_bad_qpn++;	/* not for this connection's QP: dropped, as Linux */
		return;
	}
	switch (id->ib) {
	case IB_REP_SENT:
	case IB_MRA_REP_RCVD:
	case IB_REP_RCVD:
	case IB_ESTABLISHED:
		id->mad_valid = false;
		cm_timer_stop(id);
		id->ib = IB_DREQ_RCVD;
		id->tid = m->hdr.tid;
		if (id->state == CM_CONNECT)
			id->state = CM_CONNECTED;	/* the RTU was lost: it was connected */
		disconnected(id, 0);
		return;
	case IB_DREQ_SENT:
		/* Both sides disconnect at once: answer, and count it as the DREP. */
		id->tid = m->hdr.tid;
		send_drep(id);
		enter_timewait(id);
		disconnected(id, 0);
		return;
	case IB_TIMEWAIT:
		a->cnt.rx_duplicates++;
		if (id->last_reply_valid && id->last_reply.hdr.attr_id == DROCE_CM_ATTR_DREP)
			cm_mad_send(&id->dest, &id->last_reply);
		else
			send_drep(id);
		return;
	case IB_DREQ_RCVD:
		a->cnt.rx_duplicates++;	/* the application has not disconnected yet */
		return;
	default:
		a->cnt.rx_unmatched++;
		return;
	}
}

void cm_rx_drep(struct cm_agent *a, const struct droce_cm_mad *m)
{
	struct cm_id *id = cm_id_by_local(m->u.drep.remote_comm_id);

	if (id == NULL || id->remote_id != m->u.drep.local_comm_id ||
	    (id->ib != IB_DREQ_SENT && id->ib != IB_DREQ_RCVD)) {
		a->cnt.rx_unmatched++;
		return;
	}
	enter_timewait(id);
	disconnected(id, 0);
}

int droce_cm_disconnect(struct droce_cm_id *pub)
{
	struct cm_id *id;
	bool wait = false;
	int rc = 0;

	if (pub == NULL) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	if (id->state != CM_CONNECT && id->state != CM_CONNECTED && id->state != CM_DISCONNECT) {
		rc = EINVAL;	/* never had a connection */
	} else {
		if (pub->qp != NULL)
			cm_qp_to(id, IBV_QPS_ERR);
		if (id->ib == IB_ESTABLISHED) {
			send_dreq(id, true);
			id->ib = IB_DREQ_SENT;
			wait = true;
		} else if (id->ib == IB_DREQ_RCVD) {
			send_drep(id);
			enter_timewait(id);
			wait = true;	/* its DISCONNECTED is queued already */
		}
		/* Anything else (not yet connected, disconnected already): nothing to send,
		 * as Linux, whose DREQ/DREP failures rdma_disconnect() ignores. */
	}
	pthread_mutex_unlock(&cm_svc.lock);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return id->chan->priv && wait ? cm_sync_wait(id) : 0;
}

/* ---- Timeouts and abandon ---- */

void cm_conn_timeout(struct cm_id *id)
{
	if (cm_mad_retry(id))
		return;
	switch (id->ib) {
	case IB_REQ_SENT:
	case IB_MRA_REQ_RCVD:
	case IB_REP_SENT:
	case IB_MRA_REP_RCVD:
		id->ib = IB_IDLE;
		if (id->chan == NULL)
			cm_id_free(id);
		else
			failed(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
		break;
	case IB_DREQ_SENT:
		enter_timewait(id);
		disconnected(id, -ETIMEDOUT);
		break;
	default:
		break;
	}
}

void cm_conn_abandon(struct cm_id *id)
{
	if (id->timer == CM_T_RESOLVE)
		cm_timer_stop(id);
	switch (id->ib) {
	case IB_REQ_SENT:
	case IB_MRA_REQ_RCVD:
		send_rej(id, DROCE_CM_REJ_TIMEOUT, NULL, 0);
		id->ib = IB_IDLE;
		break;
	case IB_REQ_RCVD:
	case IB_REP_RCVD:
		send_rej(id, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		id->ib = IB_IDLE;
		break;
	case IB_REP_SENT:
	case IB_MRA_REP_RCVD:
		send_rej(id, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		enter_timewait(id);
		break;
	case IB_ESTABLISHED:
		send_dreq(id, false);	/* once: the id goes, nobody waits for the DREP */
		enter_timewait(id);
		break;
	case IB_DREQ_RCVD:
		send_drep(id);
		enter_timewait(id);
		break;
	case IB_SIDR_REQ_RCVD:
		cm_sidr_answer(id, NULL, false, NULL, 0);
		break;
	case IB_SIDR_REQ_SENT:
		id->ib = IB_IDLE;
		break;
	default:
		break;
	}
	if (id->ib == IB_IDLE) {
		id->mad_valid = false;
		cm_timer_stop(id);
	}
}
