/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce_modify_qp(): the IBTA QP state machine (IBA 10.3.1, table "QP state transition
 * properties") with, for each (current state, next state, QP type), the attributes that are
 * required and those that are optional, as ibv_modify_qp(3) documents them and the Linux verbs
 * core (ib_modify_qp_is_ok()) enforces them. Anything else is EINVAL and leaves the QP unchanged.
 * On RoCE, Linux also refuses IBV_QP_ALT_PATH (no APM over Ethernet); so does droce.
 */
#include <errno.h>
#include <string.h>

#include "verbs_private.h"

enum { T_RC, T_UC, T_UD, T_NUM };

#define S IBV_QP_STATE
#define CUR IBV_QP_CUR_STATE
#define PKEY IBV_QP_PKEY_INDEX
#define PORT IBV_QP_PORT
#define QKEY IBV_QP_QKEY
#define ACC IBV_QP_ACCESS_FLAGS
#define AV IBV_QP_AV
#define MTU IBV_QP_PATH_MTU
#define DQPN IBV_QP_DEST_QPN
#define RQPSN IBV_QP_RQ_PSN
#define SQPSN IBV_QP_SQ_PSN
#define DRD IBV_QP_MAX_DEST_RD_ATOMIC
#define RD IBV_QP_MAX_QP_RD_ATOMIC
#define RNRT IBV_QP_MIN_RNR_TIMER
#define TMO IBV_QP_TIMEOUT
#define RETRY IBV_QP_RETRY_CNT
#define RNR IBV_QP_RNR_RETRY
#define ALT IBV_QP_ALT_PATH
#define MIG IBV_QP_PATH_MIG_STATE
#define SQDN IBV_QP_EN_SQD_ASYNC_NOTIFY

struct transition {
	bool valid;
	int req[T_NUM];
	int opt[T_NUM];
};

/* [from][to]; req/opt per QP type [RC, UC, UD]. */
static const struct transition table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_INIT] = { .valid = true,
			.req = { PKEY | PORT | ACC, PKEY | PORT | ACC, PKEY | PORT | QKEY } },
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = { .valid = true,
			.opt = { PKEY | PORT | ACC, PKEY | PORT | ACC, PKEY | PORT | QKEY } },
		[IBV_QPS_RTR] = { .valid = true,
			.req = { AV | MTU | DQPN | RQPSN | DRD | RNRT, AV | MTU | DQPN | RQPSN, 0 },
			.opt = { ALT | ACC | PKEY, ALT | ACC | PKEY, PKEY | QKEY } },
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.req = { SQPSN | TMO | RETRY | RNR | RD, SQPSN, SQPSN },
			.opt = { CUR | ALT | ACC | RNRT | MIG, CUR | ALT | ACC | MIG, CUR | QKEY } },
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.opt = { CUR | ACC | ALT | MIG | RNRT, CUR | ACC | ALT | MIG, CUR | QKEY } },
		[IBV_QPS_SQD] = { .valid = true, .opt = { SQDN, SQDN, SQDN } },
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.opt = { CUR | ALT | ACC | RNRT | MIG, CUR | ALT | ACC | MIG, CUR | QKEY } },
		[IBV_QPS_SQD] = { .valid = true,
			.opt = { PORT | AV | TMO | RETRY | RNR | RD | DRD | ALT | ACC | PKEY | RNRT | MIG,
				 AV | ALT | ACC | PKEY | MIG, PKEY | QKEY } },
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true, .opt = { 0, CUR | ACC, CUR | QKEY } },
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
	},
};

static int type_index(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? T_RC : t == IBV_QPT_UC ? T_UC : T_UD;
}

bool verbs_qp_mask_ok(enum ibv_qp_type type, enum ibv_qp_state from, enum ibv_qp_state to,
		      int mask)
{
	const struct transition *t;
	int req, opt, ti = type_index(type);

	if ((unsigned int)from > IBV_QPS_ERR || (unsigned int)to > IBV_QPS_ERR)
		return false;
	/* IBV_QP_CUR_STATE is meaningful only from RTR, RTS, SQD and SQE. */
	if ((mask & CUR) && from != IBV_QPS_RTR && from != IBV_QPS_RTS &&
	    from != IBV_QPS_SQD && from != IBV_QPS_SQE)
		return false;
	t = &table[from][to];
	if (!t->valid)
		return false;
	req = t->req[ti];
	opt = t->opt[ti];
	return (mask & req) == req && (mask & ~(req | opt | S)) == 0;
}

static bool gid_is_zero(const union ibv_gid *g)
{
	static const union ibv_gid zero;

	return memcmp(g, &zero, sizeof(zero)) == 0;
}

static bool gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(g->raw, pfx, sizeof(pfx)) == 0;
}

int verbs_av_from_attr(struct droce_device *dev, const struct ibv_ah_attr *a,
		       struct verbs_av *av)
{
	/* RoCE carries a GRH (IBA A16/A17): no GRH, no address. */
	if (!a->is_global || a->port_num != 1 || a->grh.sgid_index >= DROCE_MAX_GID ||
	    gid_is_zero(&dev->gid[a->grh.sgid_index]))
		return EINVAL;
	memset(av, 0, sizeof(*av));
	av->attr = *a;
	av->sgid = dev->gid[a->grh.sgid_index];
	av->ipv4 = gid_is_v4(&av->sgid) && gid_is_v4(&a->grh.dgid);
	return 0;
}

/* Ranges of the attribute values (IBA 11.2.5.2 and the device limits). */
static int check_values(const struct verbs_qp *qp, const struct ibv_qp_attr *a, int mask,
			struct verbs_av *av)
{
	if (mask & ALT)
		return EINVAL;
	if (((mask & PKEY) && a->pkey_index != 0) || ((mask & PORT) && a->port_num != 1))
		return EINVAL;
	/* The FLUSH bits are accepted (newer rdma-core's tests set them on QPs) and not needed:
	 * a FLUSH is checked against its MR's access only, as rxe does. */
	if ((mask & ACC) && (a->qp_access_flags & ~(IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			DROCE_ACCESS_FLUSH_GLOBAL | DROCE_ACCESS_FLUSH_PERSISTENT)))
		return EINVAL;
	if ((mask & MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
		return EINVAL;
	if (((mask & TMO) && a->timeout > 31) || ((mask & RNRT) && a->min_rnr_timer > 31) ||
	    ((mask & RETRY) && a->retry_cnt > 7) || ((mask & RNR) && a->rnr_retry > 7))
		return EINVAL;
	if (((mask & RD) && a->max_rd_atomic > DROCE_MAX_RD_ATOM) ||
	    ((mask & DRD) && a->max_dest_rd_atomic > DROCE_MAX_RD_ATOM))
		return EINVAL;
	if (((mask & DQPN) && a->dest_qp_num > 0xffffff) ||
	    ((mask & MIG) && (unsigned int)a->path_mig_state > IBV_MIG_ARMED))
		return EINVAL;
	if (mask & AV)
		return verbs_av_from_attr(qp->pub.context->device, &a->ah_attr, av);
	return 0;
}

static void commit(struct verbs_qp *qp, const struct ibv_qp_attr *a, int mask,
		   const struct verbs_av *av)
{
	struct ibv_qp_attr *q = &qp->attr;

	if (mask & PKEY) q->pkey_index = a->pkey_index;
	if (mask & PORT) q->port_num = a->port_num;
	if (mask & QKEY) q->qkey = a->qkey;
	if (mask & ACC) q->qp_access_flags = a->qp_access_flags;
	if (mask & AV) {
		q->ah_attr = a->ah_attr;
		qp->av = *av;
	}
	if (mask & MTU) q->path_mtu = a->path_mtu;
	if (mask & DQPN) q->dest_qp_num = a->dest_qp_num;
	if (mask & RQPSN) q->rq_psn = a->rq_psn & 0xffffff;	/* 24-bit PSN, as Linux */
	if (mask & SQPSN) q->sq_psn = a->sq_psn & 0xffffff;
	if (mask & DRD) q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & RD) q->max_rd_atomic = a->max_rd_atomic;
	if (mask & RNRT) q->min_rnr_timer = a->min_rnr_timer;
	if (mask & TMO) q->timeout = a->timeout;
	if (mask & RETRY) q->retry_cnt = a->retry_cnt;
	if (mask & RNR) q->rnr_retry = a->rnr_retry;
	if (mask & MIG) q->path_mig_state = a->path_mig_state;
	if (mask & SQDN) q->en_sqd_async_notify = a->en_sqd_async_notify;
}

/* What entering @p to from @p from does to the queues. Caller holds ctl_lock. */
static void transition(struct verbs_qp *qp, uint32_t from, enum ibv_qp_state to)
{
	if (to == IBV_QPS_RESET) {
		verbs_qp_reset_queues(qp);
		__atomic_store_n(&qp->fatal, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->sqd_notify, 0, __ATOMIC_RELEASE);
		verbs_qp_set_state(qp, to);
	} else if (to == IBV_QPS_ERR && from != IBV_QPS_ERR) {
		verbs_qp_set_state(qp, to);
		verbs_qp_flush(qp, true, true);
		if (qp->pub.srq != NULL)
			verbs_qp_event(&qp->pub, IBV_EVENT_QP_LAST_WQE_REACHED);
	} else if (to == IBV_QPS_SQD && from == IBV_QPS_RTS) {
		__atomic_store_n(&qp->sqd_notify, qp->attr.en_sqd_async_notify ? 1 : 0,
				 __ATOMIC_RELEASE);
		verbs_qp_set_state(qp, to);
		/* Nothing in flight: drained at once. */
		if (qp->sq.done == qp->sq.fetch && qp->attr.en_sqd_async_notify &&
		    __atomic_exchange_n(&qp->sqd_notify, 0, __ATOMIC_ACQ_REL))
			verbs_qp_event(&qp->pub, IBV_EVENT_SQ_DRAINED);
	} else {
		verbs_qp_set_state(qp, to);
	}
}

int verbs_qp_modify_apply(struct verbs_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	uint32_t cur = verbs_qp_state(qp);
	enum ibv_qp_state next;
	struct verbs_av av;
	int rc;

	if ((mask & CUR) && (uint32_t)attr->cur_qp_state != cur)
		return EINVAL;
	next = (mask & S) ? attr->qp_state : (enum ibv_qp_state)cur;
	if (!verbs_qp_mask_ok(qp->pub.qp_type, (enum ibv_qp_state)cur, next, mask))
		return EINVAL;
	rc = check_values(qp, attr, mask, &av);
	if (rc != 0)
		return rc;
	commit(qp, attr, mask, &av);
	transition(qp, cur, next);
	return 0;
}

int droce_modify_qp(struct droce_qp *q, struct ibv_qp_attr *attr, int attr_mask)
{
	struct verbs_qp *qp;
	int rc;

	if (q == NULL || attr == NULL)
		return EINVAL;
	qp = to_vqp(q);
	pthread_mutex_lock(&qp->ctl_lock);
	if (__atomic_load_n(&qp->owner, __ATOMIC_ACQUIRE) != NULL) {
		pthread_mutex_unlock(&qp->ctl_lock);
		return verbs_owner_modify(qp, attr, attr_mask);
	}
	rc = verbs_qp_modify_apply(qp, attr, attr_mask);
	pthread_mutex_unlock(&qp->ctl_lock);
	verbs_qp_check_cqs(qp);
	return rc;
}
