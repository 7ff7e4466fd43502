/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * UD "connections": Service ID Resolution (IBA 12.11; SIDR_REQ, SIDR_REP) as rdma_cm uses it
 * for RDMA_PS_UDP ids. The active side's connect sends a SIDR_REQ (CMA header and private data;
 * retried as Linux does: every 4.096 us * 2^response_timeout, max_retries times); the passive
 * side announces CONNECT_REQUEST, and accept answers with its QPN and Q_Key RDMA_UDP_QKEY
 * (reject, or nobody listening, with a status). The active side then gets ESTABLISHED with what
 * it needs to send (an address handle's attributes, the QPN, the Q_Key), or UNREACHABLE with
 * the status. There is nothing to tear down: no DREQ, no timewait.
 */
#include <errno.h>
#include <string.h>

#include <arpa/inet.h>

#include "cm_private.h"

static void sidr_rep_send(const struct cm_dest *to, uint64_t tid, uint32_t request_id,
			  uint64_t sid, uint8_t status, uint32_t qpn, const void *pdata,
			  uint8_t len)
{
	struct droce_cm_mad m;

	memset(&m, 0, sizeof(m));
	cm_mad_hdr(&m, DROCE_CM_ATTR_SIDR_REP, tid);
	m.u.sidr_rep.request_id = request_id;
	m.u.sidr_rep.status = status;
	m.u.sidr_rep.service_id = sid;
	if (status == DROCE_CM_SIDR_SUCCESS) {
		m.u.sidr_rep.qpn = qpn;
		m.u.sidr_rep.qkey = RDMA_UDP_QKEY;
	}
	if (len != 0)
		memcpy(m.u.sidr_rep.private_data, pdata, len);
	cm_mad_send(to, &m);
}

int cm_sidr_connect(struct cm_id *id, const struct rdma_conn_param *p)
{
	struct droce_cm_sidr_req *r = &id->mad.u.sidr_req;
	struct droce_cma_hdr h;
	int rc;

	if (id->state != CM_ROUTE_RESOLVED)
		return EINVAL;
	if (p != NULL && (p->private_data_len > DROCE_CM_SIDR_REQ_PDATA - DROCE_CMA_HDR_LEN ||
			  (p->private_data_len != 0 && p->private_data == NULL)))
		return EINVAL;
	rc = -cm_id_set_local(id);
	if (rc != 0)
		return rc;
	memset(&id->mad, 0, sizeof(id->mad));
	cm_mad_hdr(&id->mad, DROCE_CM_ATTR_SIDR_REQ, (uint64_t)1 << 32 | id->local_id);
	r->request_id = id->local_id;
	r->pkey = 0xffff;
	r->service_id = droce_cma_service_id(cm_id_ps(id), ntohs(droce_cm_get_dst_port(&id->pub)));
	memset(&h, 0, sizeof(h));
	h.ip_version = id->pub.route.addr.src_addr.sa_family == AF_INET ? 4 : 6;
	h.src_port = ntohs(droce_cm_get_src_port(&id->pub));
	memcpy(h.src, id->pub.route.addr.addr.ibaddr.sgid.raw, 16);
	memcpy(h.dst, id->pub.route.addr.addr.ibaddr.dgid.raw, 16);
	droce_cma_hdr_build(&h, r->private_data);
	if (p != NULL && p->private_data_len != 0)
		memcpy(r->private_data + DROCE_CMA_HDR_LEN, p->private_data, p->private_data_len);
	cm_dest_from_path(id);
	id->ib = IB_SIDR_REQ_SENT;
	id->state = CM_CONNECT;
	cm_mad_send_tracked(id, cm_convert_ms(cm_svc.cfg.response_timeout), cm_svc.cfg.max_retries);
	return 0;
}

/* A SIDR_REQ being answered already (same request ID from the same GID): the id, or NULL. */
static struct cm_id *pending(uint32_t request_id, const union ibv_gid *from)
{
	struct cm_id *id;

	TAILQ_FOREACH(id, &cm_svc.ids, next)
		if (id->ib == IB_SIDR_REQ_RCVD && id->sidr_request_id == request_id &&
		    memcmp(id->dest.dgid.raw, from->raw, 16) == 0)
			return id;
	return NULL;
}

void cm_rx_sidr_req(struct cm_agent *a, const struct cm_dest *from, const struct droce_cm_mad *m)
{
	const struct droce_cm_sidr_req *r = &m->u.sidr_req;
	uint16_t ps = droce_cma_service_ps(r->service_id);
	struct cm_id *l = NULL, *id;
	struct droce_cma_hdr h;
	union ibv_gid ours;

	if (pending(r->request_id, &from->dgid) != NULL) {
		a->cnt.rx_duplicates++;
		return;
	}
	memcpy(&ours, &a->gid[from->sgid_index], sizeof(ours));
	if (ps == 0 || !droce_cma_hdr_parse(r->private_data, &h) ||
	    memcmp(h.dst, ours.raw, 16) != 0) {
		if (ps == 0)
			a->cnt.rx_no_listener++;
		else
			a->cnt.rx_bad_cma_hdr++;
		sidr_rep_send(from, m->hdr.tid, r->request_id, r->service_id,
			      ps == 0 ? DROCE_CM_SIDR_UNSUPPORTED : DROCE_CM_SIDR_REJECT, 0,
			      NULL, 0);
		return;
	}
	l = cm_listener_find(ps, droce_cma_service_port(r->service_id), a, h.dst);
	if (l == NULL || l->pub.qp_type != IBV_QPT_UD) {
		a->cnt.rx_no_listener++;
		sidr_rep_send(from, m->hdr.tid, r->request_id, r->service_id,
			      l == NULL ? DROCE_CM_SIDR_UNSUPPORTED : DROCE_CM_SIDR_REJECT, 0,
			      NULL, 0);
		return;
	}
	if (l->pending_reqs >= (unsigned int)l->backlog) {
		a->cnt.rx_backlog_full++;
		return;
	}
	id = cm_child_new(l, a, ours.raw, h.src, h.src_port);
	if (id == NULL) {
		a->cnt.rx_backlog_full++;
		return;
	}
	id->sidr_request_id = r->request_id;
	id->service_id = r->service_id;
	id->tid = m->hdr.tid;
	id->dest = *from;
	id->dest.qpn = DROCE_GSI_QPN;
	id->ib = IB_SIDR_REQ_RCVD;
	id->state = CM_CONNECT;
	l->pending_reqs++;
	/* param.ud: only the private data (Linux leaves the AH, QPN and Q_Key zero). */
	if (cm_event_queue(id, RDMA_CM_EVENT_CONNECT_REQUEST, 0,
			   r->private_data + DROCE_CMA_HDR_LEN,
			   DROCE_CM_SIDR_REQ_PDATA - DROCE_CMA_HDR_LEN) == NULL) {
		l->pending_reqs--;
		cm_id_free(id);
	}
}

int cm_sidr_answer(struct cm_id *id, const struct rdma_conn_param *p, bool accept,
		   const void *pdata, uint8_t len)
{
	uint32_t qpn = 0;

	if (id->ib != IB_SIDR_REQ_RCVD)
		return EINVAL;
	if (accept) {
		if (id->pub.qp == NULL && p == NULL)
			return EINVAL;
		qpn = id->pub.qp != NULL ? id->pub.qp->qp_num : p->qp_num & 0xffffff;
		if (p != NULL) {
			pdata = p->private_data;
			len = p->private_data_len;
		}
	}
	if (len > DROCE_CM_SIDR_REP_PDATA || (len != 0 && pdata == NULL))
		return EINVAL;
	sidr_rep_send(&id->dest, id->tid, id->sidr_request_id, id->service_id,
		      accept ? DROCE_CM_SIDR_SUCCESS : DROCE_CM_SIDR_REJECT, qpn, pdata, len);
	id->ib = IB_IDLE;
	id->state = accept ? CM_CONNECTED : CM_DISCONNECT;
	return 0;
}

void cm_rx_sidr_rep(struct cm_agent *a, const struct droce_cm_mad *m)
{
	const struct droce_cm_sidr_rep *r = &m->u.sidr_rep;
	struct cm_id *id = cm_id_by_local(r->request_id);
	struct rdma_ud_param *ud;
	struct cm_event *e;

	if (id == NULL || id->ib != IB_SIDR_REQ_SENT) {
		a->cnt.rx_unmatched++;
		return;
	}
	id->ib = IB_IDLE;
	id->mad_valid = false;
	cm_timer_stop(id);
	if (r->status != DROCE_CM_SIDR_SUCCESS) {
		id->state = CM_DISCONNECT;
		cm_event_queue(id, RDMA_CM_EVENT_UNREACHABLE, r->status, NULL, 0);
		return;
	}
	if (r->qkey != RDMA_UDP_QKEY) {
		/* rdma_cm: the id's Q_Key is RDMA_UDP_QKEY; another one cannot be used. */
		id->state = CM_DISCONNECT;
		cm_event_queue(id, RDMA_CM_EVENT_ADDR_ERROR, -EINVAL, NULL, 0);
		return;
	}
	id->state = CM_CONNECTED;
	e = cm_event_queue(id, RDMA_CM_EVENT_ESTABLISHED, 0, r->private_data,
			   DROCE_CM_SIDR_REP_PDATA);
	if (e == NULL)
		return;
	ud = &e->pub.param.ud;
	cm_ah_from_path(id, &ud->ah_attr);
	ud->qp_num = r->qpn;
	ud->qkey = r->qkey;
}

void cm_sidr_timeout(struct cm_id *id)
{
	if (cm_mad_retry(id))
		return;
	id->ib = IB_IDLE;
	id->state = CM_DISCONNECT;
	cm_event_queue(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
}
