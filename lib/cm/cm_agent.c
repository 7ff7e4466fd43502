/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Agents: the GSI QP (QP1) of each device the CM uses, and the MADs it carries.
 *
 * An agent is a context of its own on the device with a PD, one CQ with a completion channel
 * (the service thread waits on its fd), the GSI QP (UD, Q_Key 0x80010000, a real QP of the
 * engine: its frames are counted like any other) and one registered buffer cut in slots:
 * CM_RECV_SLOTS always posted for receiving (GRH + MAD), CM_SEND_SLOTS for sending. The CQ
 * holds every slot's completion, so it cannot overrun. A send holds its slot and an address
 * handle until its completion.
 *
 * Received MADs (IBA 13.5.3 as Linux's ib_mad applies it): a completion in error or too short
 * is dropped; the MAD is parsed (droce_wire_mad.h). What does not parse is dropped by reason,
 * except Get and Set requests, which are answered as Linux answers a request no agent takes:
 * the MAD echoed as a GetResp with status "unsupported method/attribute". ClassPortInfo Get is
 * answered with the CM's ClassPortInfo. CM messages go to cm_conn.c (RC) and cm_sidr.c (UD).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <rte_common.h>

#include "cm_private.h"
#include "verbs_engine.h"

_Static_assert(DROCE_CM_MAD_ERR_NUM == DROCE_MAD_ERR_NUM,
	       "droce_cm_counters.rx_mad_err[] has one entry per droce_mad_err");

static inline uint8_t *slot_buf(const struct cm_agent *a, uint32_t slot)
{
	return a->buf + (size_t)slot * CM_SLOT;
}

/* wr_id: slot numbers, send slots after the receive ones. */
static bool is_send_slot(uint64_t wr_id)
{
	return wr_id >= CM_RECV_SLOTS;
}

static int post_recv(struct cm_agent *a, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot_buf(a, slot),
		.length = CM_GRH_LEN + DROCE_MAD_LEN,
		.lkey = a->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return droce_post_recv(a->qp, &wr, &bad);
}

static int qp_up(struct droce_qp *qp)
{
	struct ibv_qp_attr attr;
	int rc;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = DROCE_GSI_QKEY;
	rc = droce_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_QKEY);
	if (rc != 0)
		return rc;
	attr.qp_state = IBV_QPS_RTR;
	rc = droce_modify_qp(qp, &attr, IBV_QP_STATE);
	if (rc != 0)
		return rc;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return droce_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static void agent_free(struct cm_agent *a)
{
	uint32_t i;

	if (a->chan != NULL && cm_svc.epfd >= 0)
		epoll_ctl(cm_svc.epfd, EPOLL_CTL_DEL, a->chan->fd, NULL);
	if (a->ctx != NULL && cm_svc.epfd >= 0)
		epoll_ctl(cm_svc.epfd, EPOLL_CTL_DEL, a->ctx->async_fd, NULL);
	if (a->qp != NULL)
		droce_destroy_qp(a->qp);
	for (i = 0; i < CM_SEND_SLOTS; i++)
		if (a->send_ah[i] != NULL)
			droce_destroy_ah(a->send_ah[i]);
	if (a->mr != NULL)
		droce_dereg_mr(a->mr);
	if (a->cq != NULL)
		droce_destroy_cq(a->cq);
	if (a->chan != NULL)
		droce_destroy_comp_channel(a->chan);
	if (a->pd != NULL)
		droce_dealloc_pd(a->pd);
	if (a->user_pd != NULL && droce_dealloc_pd(a->user_pd) != 0)
		CM_LOG(DEBUG, "%s: the ids' default PD is still in use",
		       droce_get_device_name(a->dev));
	if (a->ctx != NULL && droce_close_device(a->ctx) != 0)
		CM_LOG(DEBUG, "%s: the CM's context stays open: objects were left on it",
		       droce_get_device_name(a->dev));
	free(a->buf);
	free(a);
}

static int agent_setup(struct cm_agent *a)
{
	struct droce_qp_init_attr qa;
	struct ibv_port_attr pa;
	struct epoll_event ev;
	size_t len = (size_t)(CM_RECV_SLOTS + CM_SEND_SLOTS) * CM_SLOT;
	uint32_t i;

	a->ctx = droce_open_device(a->dev);
	if (a->ctx == NULL)
		return errno;
	if (droce_query_port(a->ctx, 1, &pa) != 0)
		return EIO;
	a->mtu = pa.active_mtu;
	a->guid = droce_get_device_guid(a->dev);
	for (i = 0; i < DROCE_MAX_GID; i++)
		droce_query_gid(a->ctx, 1, (int)i, &a->gid[i]);
	a->pd = droce_alloc_pd(a->ctx);
	a->user_pd = a->pd != NULL ? droce_alloc_pd(a->ctx) : NULL;
	a->chan = a->user_pd != NULL ? droce_create_comp_channel(a->ctx) : NULL;
	if (a->chan == NULL)
		return errno;
	fcntl(a->chan->fd, F_SETFL, fcntl(a->chan->fd, F_GETFL) | O_NONBLOCK);
	a->cq = droce_create_cq(a->ctx, CM_RECV_SLOTS + CM_SEND_SLOTS, NULL, a->chan, 0);
	if (a->cq == NULL)
		return errno;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = a->cq;
	qa.recv_cq = a->cq;
	qa.qp_type = IBV_QPT_UD;
	qa.cap.max_send_wr = CM_SEND_SLOTS;
	qa.cap.max_recv_wr = CM_RECV_SLOTS;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	a->qp = verbs_create_gsi_qp(a->pd, &qa);
	if (a->qp == NULL)
		return errno;
	a->buf = aligned_alloc(64, len);
	if (a->buf == NULL)
		return ENOMEM;
	memset(a->buf, 0, len);
	a->mr = droce_reg_mr(a->pd, a->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (a->mr == NULL)
		return errno;
	if (qp_up(a->qp) != 0)
		return EIO;
	for (i = 0; i < CM_RECV_SLOTS; i++)
		if (post_recv(a, i) != 0)
			return ENOMEM;
	for (i = 0; i < CM_SEND_SLOTS; i++)
		a->send_free[i] = CM_RECV_SLOTS + i;
	a->n_send_free = CM_SEND_SLOTS;
	ev.events = EPOLLIN;
	a->cq_src = (struct cm_source){ .kind = CM_SRC_CQ, .agent = a };
	ev.data.ptr = &a->cq_src;
	if (epoll_ctl(cm_svc.epfd, EPOLL_CTL_ADD, a->chan->fd, &ev) != 0)
		return errno;
	/* The port's events: PORT_ACTIVE resends what was sent into a link that was down. */
	fcntl(a->ctx->async_fd, F_SETFL, fcntl(a->ctx->async_fd, F_GETFL) | O_NONBLOCK);
	a->async_src = (struct cm_source){ .kind = CM_SRC_ASYNC, .agent = a };
	ev.data.ptr = &a->async_src;
	if (epoll_ctl(cm_svc.epfd, EPOLL_CTL_ADD, a->ctx->async_fd, &ev) != 0)
		return errno;
	droce_req_notify_cq(a->cq, 0);
	return 0;
}

void cm_agent_async(struct cm_agent *a)
{
	struct droce_async_event ev;
	bool up = false;

	while (droce_get_async_event(a->ctx, &ev) == 0) {
		up |= ev.event_type == IBV_EVENT_PORT_ACTIVE;
		droce_ack_async_event(&ev);
	}
	if (up)
		CM_LOG(DEBUG, "%s: port active: %u MADs sent again",
		       droce_get_device_name(a->dev), cm_mad_resend_port_up(a));
}

struct cm_agent *cm_agent_get(struct droce_device *dev)
{
	unsigned int idx = verbs_device_index(dev);
	struct cm_agent *a = cm_svc.agent[idx];
	int rc;

	if (a != NULL)
		return a;
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	a->dev = dev;
	rc = agent_setup(a);
	if (rc != 0) {
		CM_LOG(ERR, "%s: no GSI agent: %s", droce_get_device_name(dev), strerror(rc));
		agent_free(a);
		errno = rc;
		return NULL;
	}
	cm_svc.agent[idx] = a;
	cm_wake();	/* the thread arms the new CQ */
	return a;
}

void cm_agents_free(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(cm_svc.agent); i++) {
		if (cm_svc.agent[i] != NULL)
			agent_free(cm_svc.agent[i]);
		cm_svc.agent[i] = NULL;
	}
}

int cm_agent_gid_index(const struct cm_agent *a, const union ibv_gid *gid)
{
	static const uint8_t zero[16];
	unsigned int i;

	if (memcmp(gid->raw, zero, 16) == 0)
		return -1;
	for (i = 0; i < DROCE_MAX_GID; i++)
		if (memcmp(a->gid[i].raw, gid->raw, 16) == 0)
			return (int)i;
	return -1;
}

struct cm_agent *cm_agent_by_gid(const union ibv_gid *gid)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(cm_svc.agent); i++)
		if (cm_svc.agent[i] != NULL && cm_agent_gid_index(cm_svc.agent[i], gid) >= 0)
			return cm_svc.agent[i];
	return NULL;
}

/* ---- Counters ---- */

static int msg_index(uint16_t attr)
{
	switch (attr) {
	case DROCE_CM_ATTR_CLASS_PORT_INFO:
		return DROCE_CM_MSG_CLASS_PORT_INFO;
	case DROCE_CM_ATTR_REQ ... DROCE_CM_ATTR_SIDR_REP:
		return DROCE_CM_MSG_REQ + (attr - DROCE_CM_ATTR_REQ);
	default:
		return -1;
	}
}

int droce_cm_query_counters(struct droce_context *ctx, struct droce_cm_counters *out)
{
	struct cm_agent *a;

	if (ctx == NULL || out == NULL)
		return -EINVAL;
	pthread_mutex_lock(&cm_svc.lock);
	a = cm_svc.agent[verbs_device_index(ctx->device)];
	if (a != NULL)
		*out = a->cnt;
	else
		memset(out, 0, sizeof(*out));
	pthread_mutex_unlock(&cm_svc.lock);
	return 0;
}

const char *droce_cm_counter_name(unsigned int i)
{
	static const char *const names[] = {
#define CM_COUNTER_NAME(name, desc) #name,
		DROCE_CM_COUNTERS(CM_COUNTER_NAME)
#undef CM_COUNTER_NAME
	};

	return i < RTE_DIM(names) ? names[i] : NULL;
}

const char *droce_cm_msg_name(enum droce_cm_msg m)
{
	static const uint16_t attr[DROCE_CM_MSG_NUM] = {
		DROCE_CM_ATTR_CLASS_PORT_INFO, DROCE_CM_ATTR_REQ, DROCE_CM_ATTR_MRA,
		DROCE_CM_ATTR_REJ, DROCE_CM_ATTR_REP, DROCE_CM_ATTR_RTU, DROCE_CM_ATTR_DREQ,
		DROCE_CM_ATTR_DREP, DROCE_CM_ATTR_SIDR_REQ, DROCE_CM_ATTR_SIDR_REP,
	};

	return (unsigned int)m < DROCE_CM_MSG_NUM ? droce_cm_attr_name(attr[m]) : NULL;
}

/* ---- Sending ---- */

void cm_mad_hdr(struct droce_cm_mad *m, uint16_t attr, uint64_t tid)
{
	memset(&m->hdr, 0, sizeof(m->hdr));
	m->hdr.base_version = DROCE_MAD_BASE_VERSION;
	m->hdr.mgmt_class = DROCE_MAD_CLASS_CM;
	m->hdr.class_version = DROCE_CM_CLASS_VERSION;
	m->hdr.method = DROCE_MAD_METHOD_SEND;
	m->hdr.tid = tid;
	m->hdr.attr_id = attr;
}

/* Post the 256 bytes at @p mad (already in wire format) to @p d. */
static int send_raw(const struct cm_dest *d, const uint8_t mad[DROCE_MAD_LEN], uint16_t attr)
{
	struct cm_agent *a = d->agent;
	struct ibv_ah_attr ah;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint32_t slot;
	int idx, rc;

	if (a->n_send_free == 0) {
		a->cnt.tx_no_buffer++;
		return -ENOBUFS;
	}
	slot = a->send_free[--a->n_send_free];
	memset(&ah, 0, sizeof(ah));
	ah.is_global = 1;
	ah.port_num = 1;
	ah.grh.dgid = d->dgid;
	ah.grh.sgid_index = d->sgid_index;
	ah.grh.hop_limit = 64;
	ah.grh.traffic_class = d->traffic_class;
	ah.grh.flow_label = d->flow_label;
	ah.sl = d->sl;
	a->send_ah[slot - CM_RECV_SLOTS] = droce_create_ah(a->pd, &ah);
	if (a->send_ah[slot - CM_RECV_SLOTS] == NULL) {
		rc = -errno;
		goto fail;
	}
	memcpy(slot_buf(a, slot), mad, DROCE_MAD_LEN);
	sge.addr = (uintptr_t)slot_buf(a, slot);
	sge.length = DROCE_MAD_LEN;
	sge.lkey = a->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = a->send_ah[slot - CM_RECV_SLOTS];
	wr.wr.ud.remote_qpn = d->qpn;
	wr.wr.ud.remote_qkey = DROCE_GSI_QKEY;
	rc = -droce_post_send(a->qp, &wr, &bad);
	if (rc != 0) {
		droce_destroy_ah(a->send_ah[slot - CM_RECV_SLOTS]);
		goto fail;
	}
	a->cnt.tx_mads++;
	idx = msg_index(attr);
	if (idx >= 0)
		a->cnt.tx_msg[idx]++;
	return 0;
fail:
	a->send_ah[slot - CM_RECV_SLOTS] = NULL;
	a->send_free[a->n_send_free++] = slot;
	CM_LOG(DEBUG, "MAD not sent: %s", strerror(-rc));
	return rc;
}

int cm_mad_send(const struct cm_dest *d, const struct droce_cm_mad *mad)
{
	uint8_t buf[DROCE_MAD_LEN];

	droce_mad_build(mad, buf);
	return send_raw(d, buf, mad->hdr.attr_id);
}

void cm_mad_send_tracked(struct cm_id *id, unsigned int ms, unsigned int retries)
{
	id->mad_valid = true;
	id->timeout_ms = ms;
	id->retries = retries;
	cm_mad_send(&id->dest, &id->mad);	/* no buffer: the retry timer sends it */
	cm_timer_arm(id, CM_T_MAD, ms);
}

bool cm_mad_retry(struct cm_id *id)
{
	if (!id->mad_valid)
		return true;
	if (id->retries > 0) {
		id->retries--;
		id->agent->cnt.tx_retries++;
		cm_mad_send(&id->dest, &id->mad);
		cm_timer_arm(id, CM_T_MAD, id->timeout_ms);
		return true;
	}
	id->agent->cnt.timeouts++;
	id->mad_valid = false;
	return false;
}

unsigned int cm_mad_resend_port_up(struct cm_agent *a)
{
	struct cm_id *id;
	unsigned int n = 0;

	TAILQ_FOREACH(id, &cm_svc.ids, next) {
		if (id->agent != a || !id->mad_valid || id->timer != CM_T_MAD)
			continue;
		a->cnt.tx_port_up_resends++;
		cm_mad_send(&id->dest, &id->mad);
		cm_timer_arm(id, CM_T_MAD, id->timeout_ms);
		n++;
	}
	return n;
}

/* ---- Receiving ---- */

/* The sender of a received MAD, from the GRH verbs wrote (RoCE v2: IPv4 header in bytes 20-39,
 * or the IPv6 header); NULL when the destination is not one of our GIDs. */
static bool from_grh(struct cm_agent *a, const uint8_t *grh, uint32_t src_qp, struct cm_dest *d)
{
	union ibv_gid dst;
	int idx;

	memset(d, 0, sizeof(*d));
	if ((grh[20] >> 4) == 4 && (grh[0] >> 4) != 6) {
		memset(d->dgid.raw + 10, 0xff, 2);
		memcpy(d->dgid.raw + 12, grh + 20 + 12, 4);
		memset(&dst, 0, sizeof(dst));
		memset(dst.raw + 10, 0xff, 2);
		memcpy(dst.raw + 12, grh + 20 + 16, 4);
	} else {
		memcpy(d->dgid.raw, grh + 8, 16);
		memcpy(dst.raw, grh + 24, 16);
	}
	idx = cm_agent_gid_index(a, &dst);
	if (idx < 0)
		return false;
	d->agent = a;
	d->sgid_index = (uint8_t)idx;
	d->qpn = src_qp;
	return true;
}

/* The CM's ClassPortInfo (IBA 13.4.8.1): no redirection, no traps; RespTimeValue is the CM
 * response timeout droce's REQs announce. */
static void answer_cpi(const struct cm_dest *from, const struct droce_cm_mad *req)
{
	struct droce_cm_mad m;

	memset(&m, 0, sizeof(m));
	m.hdr = req->hdr;
	m.hdr.method = DROCE_MAD_METHOD_GET_RESP;
	m.hdr.status = 0;
	m.u.cpi.base_version = DROCE_MAD_BASE_VERSION;
	m.u.cpi.class_version = DROCE_CM_CLASS_VERSION;
	m.u.cpi.cap_mask2_resp_time = cm_svc.cfg.response_timeout & 0x1f;
	cm_mad_send(from, &m);
}

/* A Get or Set no one takes: the MAD back as a GetResp, status "unsupported method/attribute"
 * (what Linux's ib_mad answers, IBA 13.4.7). */
static void answer_unsupported(struct cm_agent *a, const struct cm_dest *from, const uint8_t *raw)
{
	uint8_t buf[DROCE_MAD_LEN];

	memcpy(buf, raw, DROCE_MAD_LEN);
	buf[3] = DROCE_MAD_METHOD_GET_RESP;
	buf[4] = 0;
	buf[5] = DROCE_MAD_STATUS_UNSUP_METHOD_ATTR;
	a->cnt.rx_get_answered++;
	send_raw(from, buf, 0);
}

static void dispatch(struct cm_agent *a, const struct cm_dest *from, const struct droce_cm_mad *m)
{
	switch (m->hdr.attr_id) {
	case DROCE_CM_ATTR_REQ:
		cm_rx_req(a, from, m);
		break;
	case DROCE_CM_ATTR_MRA:
		cm_rx_mra(a, m);
		break;
	case DROCE_CM_ATTR_REJ:
		cm_rx_rej(a, m);
		break;
	case DROCE_CM_ATTR_REP:
		cm_rx_rep(a, from, m);
		break;
	case DROCE_CM_ATTR_RTU:
		cm_rx_rtu(a, m);
		break;
	case DROCE_CM_ATTR_DREQ:
		cm_rx_dreq(a, from, m);
		break;
	case DROCE_CM_ATTR_DREP:
		cm_rx_drep(a, m);
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		cm_rx_sidr_req(a, from, m);
		break;
	default:	/* SIDR_REP: the parser lets nothing else through */
		cm_rx_sidr_rep(a, m);
		break;
	}
}

void cm_agent_input(struct cm_agent *a, const uint8_t *grh, uint32_t len, uint32_t src_qp)
{
	const uint8_t *raw = grh + CM_GRH_LEN;
	struct droce_cm_mad m;
	enum droce_mad_err err;
	struct cm_dest from;
	int idx;

	a->cnt.rx_mads++;
	if (len < CM_GRH_LEN + DROCE_MAD_HDR_LEN || !from_grh(a, grh, src_qp, &from)) {
		a->cnt.rx_bad_completion++;
		return;
	}
	err = droce_mad_parse(raw, len - CM_GRH_LEN, &m);
	if (err != DROCE_MAD_OK) {
		a->cnt.rx_bad_mad++;
		a->cnt.rx_mad_err[err]++;
		if (err != DROCE_MAD_TRUNCATED && err != DROCE_MAD_BAD_BASE_VERSION &&
		    (m.hdr.method == DROCE_MAD_METHOD_GET || m.hdr.method == DROCE_MAD_METHOD_SET))
			answer_unsupported(a, &from, raw);
		return;
	}
	idx = msg_index(m.hdr.attr_id);
	if (idx >= 0)
		a->cnt.rx_msg[idx]++;
	if (m.hdr.attr_id != DROCE_CM_ATTR_CLASS_PORT_INFO)
		dispatch(a, &from, &m);
	else if (m.hdr.method == DROCE_MAD_METHOD_GET)
		answer_cpi(&from, &m);
	else if (m.hdr.method == DROCE_MAD_METHOD_SET)
		answer_unsupported(a, &from, raw);	/* nothing in it is settable */
	else
		a->cnt.rx_unmatched++;	/* a GetResp we never asked for */
}

static void rx_one(struct cm_agent *a, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS || !(wc->wc_flags & IBV_WC_GRH)) {
		a->cnt.rx_mads++;
		a->cnt.rx_bad_completion++;
		return;
	}
	cm_agent_input(a, slot_buf(a, (uint32_t)wc->wr_id), wc->byte_len, wc->src_qp);
}

unsigned int cm_agent_poll(struct cm_agent *a)
{
	struct ibv_wc wc[32];
	unsigned int work = 0;
	uint32_t slot;
	int i, n;

	while ((n = droce_poll_cq(a->cq, RTE_DIM(wc), wc)) > 0) {
		for (i = 0; i < n; i++) {
			slot = (uint32_t)wc[i].wr_id;
			if (is_send_slot(wc[i].wr_id)) {
				droce_destroy_ah(a->send_ah[slot - CM_RECV_SLOTS]);
				a->send_ah[slot - CM_RECV_SLOTS] = NULL;
				a->send_free[a->n_send_free++] = slot;
				continue;
			}
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				rx_one(a, &wc[i]);
			if (post_recv(a, slot) != 0)
				CM_LOG(ERR, "%s: receive buffer %u not reposted",
				       droce_get_device_name(a->dev), slot);
		}
		work += (unsigned int)n;
	}
	return work;
}
