/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The connection types (-c RC|UC|UD), as perftest has them: RC for every test, UC for write and
 * send, UD for send only, one packet per message (at most the path MTU). A QP is walked to RTS
 * with the attributes its type takes; UD sends through an address handle towards the peer's
 * GID and receives every message behind a 40-byte GRH.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "perf.h"

#define PERF_QKEY 0x11111111u	/* perftest's DEF_QKEY */

/* @return the QP type, or IBV_QPT_DRIVER for a name that is not RC, UC or UD. */
enum ibv_qp_type perf_conn_parse(const char *s)
{
	if (strcmp(s, "RC") == 0)
		return IBV_QPT_RC;
	if (strcmp(s, "UC") == 0)
		return IBV_QPT_UC;
	if (strcmp(s, "UD") == 0)
		return IBV_QPT_UD;
	return IBV_QPT_DRIVER;
}

/* Which test exists for which connection type (perftest's rules and messages). */
int perf_conn_check(const struct perf_opts *o)
{
	bool rd = o->verb == &perf_verb_read || o->verb == &perf_verb_atomic;

	if (o->conn == IBV_QPT_UC && rd) {
		fprintf(stderr, "droce-perf: UC connection not possible in READ/ATOMIC verbs\n");
		return -1;
	}
	if (o->conn == IBV_QPT_UD && o->verb != &perf_verb_send) {
		fprintf(stderr, "droce-perf: UD connection only possible in SEND verb\n");
		return -1;
	}
	return 0;
}

static int to_init(const struct perf_ctx *c, struct droce_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = PERF_QKEY };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (c->o->conn == IBV_QPT_UD)
		return droce_modify_qp(qp, &a, mask | IBV_QP_QKEY);
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (c->o->conn == IBV_QPT_RC)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	return droce_modify_qp(qp, &a, mask | IBV_QP_ACCESS_FLAGS);
}

static void ah_attr(const struct perf_view *peer, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.sgid_index = 1;
	ah->grh.hop_limit = 64;
	ah->grh.dgid = peer->gid;
}

static uint32_t psn(uint32_t qpn)
{
	return qpn * 7919u & 0xffffff;
}

/* READ/atomic requests outstanding per QP, both directions: -o, else the device's maximum
 * (as perftest). 0 after printing why when -o exceeds what the device allows. */
static uint8_t outs(const struct perf_ctx *c, struct droce_qp *qp)
{
	struct ibv_device_attr attr;

	if (droce_query_device(qp->context, &attr) != 0) {
		fprintf(stderr, "droce-perf: cannot query the device\n");
		return 0;
	}
	if (c->o->outs == 0)
		return (uint8_t)RTE_MIN(attr.max_qp_rd_atom, 255);
	if (c->o->outs > (unsigned int)attr.max_qp_rd_atom) {
		fprintf(stderr, "droce-perf: bad outstanding reads %u (the device allows %d)\n",
			c->o->outs, attr.max_qp_rd_atom);
		return 0;
	}
	return (uint8_t)c->o->outs;
}

static int to_rtr(const struct perf_ctx *c, struct droce_qp *qp, const struct perf_view *peer,
		  unsigned int q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = c->mtu,
		.dest_qp_num = peer->qpn[q], .rq_psn = psn(peer->qpn[q]),
		.min_rnr_timer = 1 };
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	if (c->o->conn == IBV_QPT_UD)
		return droce_modify_qp(qp, &a, IBV_QP_STATE);
	ah_attr(peer, &a.ah_attr);
	if (c->o->conn == IBV_QPT_RC) {
		a.max_dest_rd_atomic = outs(c, qp);
		if (a.max_dest_rd_atomic == 0)
			return EINVAL;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return droce_modify_qp(qp, &a, mask);
}

static int to_rts(const struct perf_ctx *c, struct droce_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .sq_psn = psn(qp->qp_num),
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7 };

	if (c->o->conn != IBV_QPT_RC)
		return droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	a.max_rd_atomic = outs(c, qp);
	if (a.max_rd_atomic == 0)
		return EINVAL;
	return droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* @p side's QP @p q to RTS, towards QP @p q of the peer as c->view describes it. */
int perf_connect_qp(struct perf_ctx *c, int side, unsigned int q)
{
	struct droce_qp *qp = c->side[side].qp[q];
	int rc = to_init(c, qp);

	if (rc == 0)
		rc = to_rtr(c, qp, &c->view[1 - side], q);
	if (rc == 0)
		rc = to_rts(c, qp);
	if (rc != 0)
		fprintf(stderr, "droce-perf: cannot connect QP %u: %s\n", q, strerror(rc));
	return rc == 0 ? 0 : -1;
}

/* UD: @p side's address handle towards its peer's GID. */
int perf_ah_create(struct perf_ctx *c, int side)
{
	struct ibv_ah_attr a;

	if (c->o->conn != IBV_QPT_UD)
		return 0;
	ah_attr(&c->view[1 - side], &a);
	c->side[side].ah = droce_create_ah(c->side[side].pd, &a);
	if (c->side[side].ah == NULL) {
		fprintf(stderr, "droce-perf: cannot create an address handle: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* UD: the destination of a SEND from @p side's QP @p q. */
void perf_wr_ud(const struct perf_ctx *c, int side, unsigned int q, struct ibv_send_wr *wr)
{
	wr->wr.ud.ah = c->side[side].ah;
	wr->wr.ud.remote_qpn = c->view[1 - side].qpn[q];
	wr->wr.ud.remote_qkey = PERF_QKEY;
}
