/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The verbs objects of a replay, through droce's public API only: the scenario's MRs (the
 * tool's own memory, filled with the initial contents), its QPs taken to RTS with the
 * scenario's PSNs and the requester as their path, and the receive WRs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "droce_engine.h"
#include "replay_dev.h"

#define CQ_MAX 65536

static void *alloc_mem(size_t n)
{
	void *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);

	if (p != NULL)
		memset(p, 0, (n + 4095) & ~(size_t)4095);
	return p;
}

static int mrs(struct replay_dev *d, char *err, size_t len)
{
	unsigned int i;

	for (i = 0; i < d->sc->n_mr; i++) {
		const struct replay_mr *m = &d->sc->mr[i];

		d->mem[i] = alloc_mem(m->length);
		if (d->mem[i] == NULL)
			return replay_errf(err, len, "[mr %#x]: out of memory", m->cap_rkey);
		memcpy(d->mem[i], m->init, m->length);
		d->mr[i] = droce_reg_mr(d->pd, d->mem[i], m->length, m->access);
		if (d->mr[i] == NULL)
			return replay_errf(err, len, "[mr %#x]: droce_reg_mr: %s", m->cap_rkey,
				    strerror(errno));
		d->live_rkey[i] = d->mr[i]->rkey;
		d->live_va[i] = (uint64_t)(uintptr_t)d->mem[i];
	}
	return 0;
}

static enum ibv_mtu path_mtu(const struct replay_scenario *sc)
{
	return replay_pmtu(sc) == 4096 ? IBV_MTU_4096 : IBV_MTU_1024;
}

static int to_init(struct replay_dev *d, unsigned int i)
{
	const struct replay_qp *q = &d->sc->qp[i];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (q->type == REPLAY_UD) {
		a.qkey = q->qkey;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = q->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						 IBV_ACCESS_REMOTE_ATOMIC);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return droce_modify_qp(d->qp[i], &a, mask);
}

static int to_rtr(struct replay_dev *d, unsigned int i)
{
	const struct replay_qp *q = &d->sc->qp[i];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;

	if (q->type == REPLAY_UD)
		return droce_modify_qp(d->qp[i], &a, mask);
	a.path_mtu = path_mtu(d->sc);
	a.dest_qp_num = q->peer_qpn;
	a.rq_psn = q->rq_psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = REPLAY_SGID_INDEX;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, d->sc->peer_gid, 16);
	mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (q->type == REPLAY_RC) {
		a.max_dest_rd_atomic = q->max_dest_rd_atomic;
		a.min_rnr_timer = q->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return droce_modify_qp(d->qp[i], &a, mask);
}

static int to_rts(struct replay_dev *d, unsigned int i)
{
	const struct replay_qp *q = &d->sc->qp[i];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .sq_psn = q->sq_psn, .timeout = 14,
				 .retry_cnt = 7, .rnr_retry = 7,
				 .max_rd_atomic = q->max_rd_atomic ? q->max_rd_atomic : 1 };
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (q->type == REPLAY_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return droce_modify_qp(d->qp[i], &a, mask);
}

int replay_dev_post_recv(struct replay_dev *d, unsigned int i)
{
	const struct replay_qp *q = &d->sc->qp[i];
	uint32_t k = d->posted[i];
	struct ibv_sge sge = { .addr = (uintptr_t)(d->rbuf[i] + (size_t)k * q->recv_size),
			       .length = q->recv_size };
	struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (k == q->recv_wrs)
		return 0;	/* all posted: the scenario's recv_wrs is the most there are */
	sge.lkey = d->rmr[i]->lkey;
	d->posted[i]++;
	return droce_post_recv(d->qp[i], &wr, &bad);
}

/* The receive buffers; all WRs posted now, or (recv_post = capture) by play.c as it goes. */
static int post_recvs(struct replay_dev *d, unsigned int i)
{
	const struct replay_qp *q = &d->sc->qp[i];
	uint32_t k;
	int rc;

	if (q->recv_wrs == 0)
		return 0;
	d->rbuf[i] = alloc_mem((size_t)q->recv_wrs * q->recv_size);
	if (d->rbuf[i] == NULL)
		return ENOMEM;
	d->rmr[i] = droce_reg_mr(d->pd, d->rbuf[i], (size_t)q->recv_wrs * q->recv_size,
				 IBV_ACCESS_LOCAL_WRITE);
	if (d->rmr[i] == NULL)
		return errno;
	for (k = 0; !q->recv_follow && k < q->recv_wrs; k++) {
		rc = replay_dev_post_recv(d, i);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static const enum ibv_qp_type qpt[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };

static int qps(struct replay_dev *d, char *err, size_t len)
{
	unsigned int i;
	int rc;

	for (i = 0; i < d->sc->n_qp; i++) {
		const struct replay_qp *q = &d->sc->qp[i];
		struct droce_qp_init_attr ia = {
			.send_cq = d->cq, .recv_cq = d->cq, .qp_type = qpt[q->type],
			.cap = { .max_send_wr = q->max_send_wr ? q->max_send_wr : 16,
				 .max_recv_wr = q->recv_wrs ? q->recv_wrs : 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		d->qp[i] = droce_create_qp(d->pd, &ia);
		if (d->qp[i] == NULL)
			return replay_errf(err, len, "[qp %#x]: droce_create_qp: %s", q->cap_qpn,
				    strerror(errno));
		d->live_qpn[i] = d->qp[i]->qp_num;
		rc = to_init(d, i);
		rc = rc ? rc : to_rtr(d, i);
		rc = rc ? rc : to_rts(d, i);
		rc = rc ? rc : post_recvs(d, i);
		if (rc != 0)
			return replay_errf(err, len, "[qp %#x]: set-up: %s", q->cap_qpn, strerror(rc));
	}
	return 0;
}

int replay_dev_objects(struct replay_dev *d, char *err, size_t len)
{
	uint64_t cqe = 64;
	unsigned int i;

	for (i = 0; i < d->sc->n_qp; i++)
		cqe += d->sc->qp[i].recv_wrs + d->sc->qp[i].max_send_wr;
	d->pd = droce_alloc_pd(d->ctx);
	d->cq = d->pd ? droce_create_cq(d->ctx, cqe > CQ_MAX ? CQ_MAX : (int)cqe, NULL, NULL, 0)
		: NULL;
	if (d->pd == NULL || d->cq == NULL)
		return replay_errf(err, len, "PD/CQ: %s", strerror(errno));
	if (mrs(d, err, len) != 0)
		return -1;
	return qps(d, err, len);
}

void replay_dev_close(struct replay_dev *d)
{
	unsigned int i;

	if (d == NULL)
		return;
	if (d->wire && d->pool != NULL) {
		rte_eth_dev_stop(d->port);
		rte_eth_dev_close(d->port);
	}
	for (i = 0; i < REPLAY_MAX_QP; i++) {
		if (d->qp[i] != NULL)
			droce_destroy_qp(d->qp[i]);
		if (d->rmr[i] != NULL)
			droce_dereg_mr(d->rmr[i]);
		free(d->rbuf[i]);
	}
	for (i = 0; i < REPLAY_MAX_MR; i++) {
		if (d->mr[i] != NULL)
			droce_dereg_mr(d->mr[i]);
		free(d->mem[i]);
	}
	if (d->cq != NULL)
		droce_destroy_cq(d->cq);
	if (d->pd != NULL)
		droce_dealloc_pd(d->pd);
	if (d->ctx != NULL)
		droce_close_device(d->ctx);
	free(d);
}

void replay_dev_print_counters(struct replay_dev *d, FILE *o)
{
	struct droce_counters c;
	const uint64_t *v = (const uint64_t *)&c;
	unsigned int i;
	const char *name;

	if (droce_query_counters(d->ctx, &c) != 0) {
		fprintf(o, "counters: unavailable\n");
		return;
	}
	fprintf(o, "droce counters (non-zero):\n");
	for (i = 0; (name = droce_counter_name(i)) != NULL; i++)
		if (v[i] != 0)
			fprintf(o, "  %-22s %" PRIu64 "\n", name, v[i]);
	for (i = 0; i < DROCE_PARSE_ERR_NUM; i++)
		if (c.parse_err[i] != 0)
			fprintf(o, "  parse_err.%-12s %" PRIu64 "\n", droce_parse_err_name(i),
				c.parse_err[i]);
}
