/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * An id's QP: creation (with the CQs librdmacm creates when none are given), and the
 * attributes of each transition as Linux's rdma_cm computes them (rdma_init_qp_attr(3)):
 *
 *   INIT  P_Key index 0, port 1; RC: remote access none until a REQ was exchanged, then
 *         REMOTE_WRITE, and REMOTE_READ | REMOTE_ATOMIC when the connection gives this side
 *         responder resources; UD: Q_Key RDMA_UDP_QKEY
 *   RTR   the path (peer's GID, our GID index, hop limit, traffic class, flow label), its MTU,
 *         the peer's QPN, our receive PSN, responder resources, min RNR timer 0
 *   RTS   our send PSN, the ACK timeout (the path's, or RDMA_OPTION_ID_ACK_TIMEOUT), retry and
 *         RNR retry counts, initiator depth
 *
 * A UD QP goes to RTS at once (nothing to learn from the peer: each send names its AH).
 */
#include <errno.h>
#include <string.h>

#include <arpa/inet.h>

#include "cm_private.h"
#include "verbs_engine.h"

static bool rc_ready(const struct cm_id *id, enum ibv_qp_state state)
{
	switch (id->ib) {
	case IB_REQ_RCVD:	/* accept moves it before sending the REP */
	case IB_REP_RCVD:
	case IB_REP_SENT:
	case IB_MRA_REP_RCVD:
	case IB_ESTABLISHED:
		return true;
	default:
		return state == IBV_QPS_INIT;
	}
}

void cm_dest_from_path(struct cm_id *id)
{
	id->dest.agent = id->agent;
	id->dest.dgid = id->path.dgid;
	id->dest.sgid_index = id->sgid_index;
	id->dest.traffic_class = id->path.traffic_class;
	id->dest.sl = id->path.sl;
	id->dest.flow_label = ntohl(id->path.flow_label);
	id->dest.qpn = DROCE_GSI_QPN;
}

void cm_ah_from_path(const struct cm_id *id, struct ibv_ah_attr *ah)
{
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = id->path.dgid;
	ah->grh.sgid_index = id->sgid_index;
	ah->grh.hop_limit = id->path.hop_limit;
	ah->grh.traffic_class = id->path.traffic_class;
	ah->grh.flow_label = ntohl(id->path.flow_label);
	ah->sl = id->path.sl;
}

int cm_qp_attr(struct cm_id *id, enum ibv_qp_state state, struct ibv_qp_attr *a, int *mask)
{
	bool ud = id->pub.qp_type == IBV_QPT_UD;

	memset(a, 0, sizeof(*a));
	a->qp_state = state;
	*mask = IBV_QP_STATE;
	if (state == IBV_QPS_ERR)
		return 0;
	if (!ud && !rc_ready(id, state))
		return EINVAL;
	switch (state) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		*mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (ud) {
			a->qkey = RDMA_UDP_QKEY;
			*mask |= IBV_QP_QKEY;
			return 0;
		}
		if (id->ib != IB_IDLE && id->ib != IB_REQ_SENT && id->ib != IB_MRA_REQ_RCVD)
			a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				(id->responder_resources != 0 ?
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
		*mask |= IBV_QP_ACCESS_FLAGS;
		return 0;
	case IBV_QPS_RTR:
		if (ud)
			return 0;
		cm_ah_from_path(id, &a->ah_attr);
		a->path_mtu = id->mtu;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->rq_psn;
		a->max_dest_rd_atomic = id->responder_resources;
		a->min_rnr_timer = 0;
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		*mask |= IBV_QP_SQ_PSN;
		if (ud)
			return 0;
		a->sq_psn = id->sq_psn;
		a->timeout = id->ack_timeout != 0 ? id->ack_timeout : id->local_ack_timeout;
		a->retry_cnt = id->retry_count;
		a->rnr_retry = id->rnr_retry_count;
		a->max_rd_atomic = id->initiator_depth;
		*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			 IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	default:
		return EINVAL;
	}
}

int cm_qp_to(struct cm_id *id, enum ibv_qp_state state)
{
	struct ibv_qp_attr a, init;
	int mask, imask, rc;

	rc = cm_qp_attr(id, state, &a, &mask);
	if (rc != 0 || id->pub.qp == NULL)
		return rc;
	if (state == IBV_QPS_RTR && id->pub.qp_type != IBV_QPT_UD) {
		/* The access the connection allows is known now (INIT had none, or the REQ's). */
		cm_qp_attr(id, IBV_QPS_INIT, &init, &imask);
		a.qp_access_flags = init.qp_access_flags;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return droce_modify_qp(id->pub.qp, &a, mask);
}

/* droce_destroy_qp() of a QP an id holds, in the destroying thread: as with librdmacm, an
 * application may destroy an id's QP with ibv_destroy_qp() and keep the id (perftest does,
 * then disconnects). The ids forget it under cm_svc.lock, so the service thread, which moves an
 * id's QP on a REP, REJ or timeout under the same lock, never touches a freed QP. */
static void qp_released(struct droce_qp *qp)
{
	struct cm_id *id;

	pthread_mutex_lock(&cm_svc.lock);
	TAILQ_FOREACH(id, &cm_svc.ids, next)
		if (id->pub.qp == qp)
			id->pub.qp = NULL;
	pthread_mutex_unlock(&cm_svc.lock);
}

void cm_qp_hold(struct cm_id *id, struct droce_qp *qp)
{
	id->pub.qp = qp;
	verbs_qp_set_release(qp, qp_released);
}

void cm_qp_drop(struct cm_id *id, bool destroy)
{
	struct droce_qp *qp = id->pub.qp;
	const struct cm_id *other;

	if (qp == NULL)
		return;
	id->pub.qp = NULL;
	TAILQ_FOREACH(other, &cm_svc.ids, next)
		if (other->pub.qp == qp)
			return;	/* still held (and never destroyed here: another id's) */
	/* Cleared before destroying: qp_released() would wait for cm_svc.lock, held here. */
	verbs_qp_set_release(qp, NULL);
	if (destroy && droce_destroy_qp(qp) != 0)
		CM_LOG(WARNING, "QP %u not destroyed", qp->qp_num);
}

/* INIT (RC), or all the way to RTS (UD). */
static int qp_start(struct cm_id *id)
{
	int rc = cm_qp_to(id, IBV_QPS_INIT);

	if (rc == 0 && id->pub.qp_type == IBV_QPT_UD)
		rc = cm_qp_to(id, IBV_QPS_RTR);
	if (rc == 0 && id->pub.qp_type == IBV_QPT_UD)
		rc = cm_qp_to(id, IBV_QPS_RTS);
	return rc;
}

static void destroy_cqs(struct droce_cm_id *pub)
{
	struct cm_id *id = to_cid(pub);

	if (!id->cq_owned)
		return;
	if (pub->send_cq != NULL)
		droce_destroy_cq(pub->send_cq);
	if (pub->recv_cq != NULL)
		droce_destroy_cq(pub->recv_cq);
	if (pub->send_cq_channel != NULL)
		droce_destroy_comp_channel(pub->send_cq_channel);
	if (pub->recv_cq_channel != NULL)
		droce_destroy_comp_channel(pub->recv_cq_channel);
	pub->send_cq = pub->recv_cq = NULL;
	pub->send_cq_channel = pub->recv_cq_channel = NULL;
	id->cq_owned = false;
}

/* A CQ with its own completion channel, for a queue the application gave none (librdmacm). */
static int make_cq(struct droce_cm_id *pub, uint32_t depth, struct droce_cq **cq,
		   struct droce_comp_channel **ch)
{
	*ch = droce_create_comp_channel(pub->verbs);
	if (*ch == NULL)
		return errno;
	*cq = droce_create_cq(pub->verbs, (int)(depth != 0 ? depth : 1), pub, *ch, 0);
	if (*cq == NULL) {
		int rc = errno;

		droce_destroy_comp_channel(*ch);
		*ch = NULL;
		return rc;
	}
	to_cid(pub)->cq_owned = true;
	return 0;
}

static int create_qp_locked(struct cm_id *id, struct droce_pd *pd, struct droce_qp_init_attr *a)
{
	struct droce_cm_id *pub = &id->pub;
	struct droce_qp *qp;
	int rc = 0;

	if (pub->qp != NULL || pub->verbs == NULL || a->qp_type != pub->qp_type)
		return EINVAL;
	if (pd == NULL)
		pd = pub->pd;
	if (pd == NULL)
		return EINVAL;
	if (a->send_cq == NULL && pub->send_cq == NULL)
		rc = make_cq(pub, a->cap.max_send_wr, &pub->send_cq, &pub->send_cq_channel);
	if (rc == 0 && a->recv_cq == NULL && pub->recv_cq == NULL)
		rc = make_cq(pub, a->cap.max_recv_wr, &pub->recv_cq, &pub->recv_cq_channel);
	if (rc != 0) {
		destroy_cqs(pub);
		return rc;
	}
	if (a->send_cq == NULL)
		a->send_cq = pub->send_cq;
	if (a->recv_cq == NULL)
		a->recv_cq = pub->recv_cq;
	if (a->srq == NULL)
		a->srq = pub->srq;
	qp = droce_create_qp(pd, a);	/* EINVAL: CQs and PD of different contexts */
	if (qp != NULL && qp->context->device != pub->verbs->device) {
		droce_destroy_qp(qp);
		qp = NULL;
		errno = EINVAL;	/* a PD of another device */
	}
	if (qp == NULL) {
		rc = errno;
		destroy_cqs(pub);
		return rc;
	}
	cm_qp_hold(id, qp);
	pub->pd = pd;
	rc = qp_start(id);
	if (rc != 0) {
		cm_qp_drop(id, true);
		destroy_cqs(pub);
	}
	return rc;
}

int droce_cm_create_qp(struct droce_cm_id *pub, struct droce_pd *pd,
		       struct droce_qp_init_attr *attr)
{
	int rc;

	if (pub == NULL || attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_svc.lock);
	rc = create_qp_locked(to_cid(pub), pd, attr);
	return cm_unlock_return(rc);
}

int droce_cm_set_qp(struct droce_cm_id *pub, struct droce_qp *qp)
{
	struct cm_id *id;
	int rc = 0;

	if (pub == NULL) {
		errno = EINVAL;
		return -1;
	}
	id = to_cid(pub);
	pthread_mutex_lock(&cm_svc.lock);
	if (qp == NULL) {
		cm_qp_drop(id, false);
	} else if (pub->qp != NULL || pub->verbs == NULL ||
		   qp->context->device != pub->verbs->device || qp->qp_type != pub->qp_type) {
		rc = EINVAL;
	} else {
		cm_qp_hold(id, qp);
		rc = qp_start(id);
		if (rc != 0)
			cm_qp_drop(id, false);
	}
	return cm_unlock_return(rc);
}

void droce_cm_destroy_qp(struct droce_cm_id *pub)
{
	if (pub == NULL)
		return;
	pthread_mutex_lock(&cm_svc.lock);
	cm_mcast_leave_all(to_cid(pub));	/* a QP in a group cannot be destroyed */
	cm_qp_drop(to_cid(pub), true);
	destroy_cqs(pub);
	pthread_mutex_unlock(&cm_svc.lock);
}

int droce_cm_init_qp_attr(struct droce_cm_id *pub, struct ibv_qp_attr *attr, int *mask)
{
	int rc;

	if (pub == NULL || attr == NULL || mask == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_svc.lock);
	rc = cm_qp_attr(to_cid(pub), attr->qp_state, attr, mask);
	return cm_unlock_return(rc);
}
