/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce through DPDK telemetry: counters, the objects of each device (QPs with their state,
 * PSNs and outstanding work, CQs with depth and fill) and the engine's health, read by
 * dpdk-telemetry.py or droce-stat from a running process. Commands: doc/observability.md.
 *
 * The callbacks run on DPDK's telemetry thread. They hold the engine's lifecycle lock
 * (engine_view_run()) and read what an instance owns (counters, its QPs' transport and queue
 * state) through an engine call on that instance, like droce_query_counters(): the read runs
 * between two iterations, so it never races the data path. Health is read with atomic loads.
 * A bad parameter (unknown device, bad QPN) makes the callback fail: the client gets DPDK's
 * error reply, {"/droce/...": null}.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "engine_private.h"

#define TEL_MAX_CQS 128		/* CQs listed per device: keeps the reply under 16 KiB */
#define NO_QPN UINT32_MAX

/* One QP as telemetry shows it. */
struct tel_qp {
	uint32_t qpn;
	enum ibv_qp_type type;
	enum ibv_qp_state state;
	bool has_transport;
	struct transport_qp_info t;
	struct verbs_fill sq, rq;
	uint32_t send_cq, recv_cq;
	int64_t srq;			/* handle, -1: none */
};

struct tel_cq {
	uint32_t handle;
	struct verbs_fill f;
};

/* One shard of a device (engine_shard.c); u64 fields for put_shard_field(). */
struct tel_shard {
	uint64_t lcore;			/* RTE_MAX_LCORE: inline */
	uint64_t qps;
	uint64_t rx_packets, rx_handoff, rx_handoff_dropped;
};

/* A snapshot of one device, taken on its instance (snap_op()). */
struct tel_snap {
	/* request */
	const char *name;
	uint32_t qpn;			/* NO_QPN: no QP asked for */
	bool record;			/* write the QP's flight recording */
	/* answer (nothing is read from the engine once the lifecycle lock is released) */
	struct engine_shard *edev;
	struct engine_shard *cur;		/* the shard snap_op() reads */
	bool open;			/* served by an instance */
	int port;
	uint16_t mtu;
	uint32_t link_mbps;		/* the port's speed, 0: it gives none */
	uint8_t active_width, active_speed;	/* as ibv_query_port() reports them */
	char engine[64];		/* "lcore N", "lcores N,M", "inline", "none" */
	char steering[112];		/* engine_shard.steering; "none" while closed */
	uint32_t steer_rules;
	struct rte_ether_addr mac;
	struct droce_counters cnt;	/* the device's, or the QP's when qpn was asked */
	struct droce_counters sum;	/* the shards' so far */
	uint32_t n_shards;
	struct tel_shard shard[ENGINE_MAX_LCORES];
	bool qp_found;
	struct tel_qp qp;
	uint32_t n_qp;
	uint32_t qpns[DROCE_QP_SLOTS];
	uint32_t n_cq;			/* CQs used by the device's QPs */
	struct tel_cq cq[TEL_MAX_CQS];
	struct engine_cc_view cc;	/* [dcqcn] as the device applies it */
	int rec_rc;			/* transport_rec_write() */
	char rec_path[PATH_MAX];	/* its files without .pcap / .json */
};

/* ---- Snapshots (on the instance that owns the device) ---- */

static void cq_add(struct tel_snap *s, const struct droce_cq *cq)
{
	uint32_t i;

	for (i = 0; i < s->n_cq; i++)
		if (s->cq[i].handle == cq->handle)
			return;
	if (s->n_cq == TEL_MAX_CQS)
		return;
	s->cq[s->n_cq].handle = cq->handle;
	verbs_cq_fill(cq, &s->cq[s->n_cq].f);
	s->n_cq++;
}

static void qp_fill(struct tel_qp *o, const struct engine_qp *eq)
{
	const struct droce_qp *qp = eq->qp;

	memset(o, 0, sizeof(*o));
	o->qpn = qp->qp_num;
	o->type = qp->qp_type;
	o->state = verbs_qp_cur_state(qp);
	o->has_transport = eq->t != NULL;
	if (eq->t != NULL)
		transport_qp_info(eq->t, &o->t);
	verbs_wq_fill(qp, true, &o->sq);
	verbs_wq_fill(qp, false, &o->rq);
	o->send_cq = qp->send_cq->handle;
	o->recv_cq = qp->recv_cq->handle;
	o->srq = qp->srq != NULL ? (int64_t)qp->srq->handle : -1;
}

static void snap_op(struct engine_inst *lc, void *arg)
{
	struct tel_snap *s = arg;
	struct engine_shard *edev = s->cur;
	uint32_t i, n_qp = s->n_qp;

	for (i = 0; i < sizeof(s->sum) / sizeof(uint64_t); i++)
		((uint64_t *)&s->sum)[i] += ((const uint64_t *)&edev->cnt)[i];
	if (edev->queue == 0) {
		engine_cc_describe(edev, &s->cc);
		/* Written at port start, which a late start runs on this lcore. */
		if (s->open)
			snprintf(s->steering, sizeof(s->steering), "%s", edev->steering);
		s->steer_rules = s->open ? edev->n_steer : 0;
	}
	s->shard[edev->queue].lcore = lc != NULL && lc->dedicated ? lc->lcore_id : RTE_MAX_LCORE;
	s->shard[edev->queue].rx_packets = edev->cnt.rx_packets;
	s->shard[edev->queue].rx_handoff = edev->cnt.rx_handoff;
	s->shard[edev->queue].rx_handoff_dropped = edev->cnt.rx_handoff_dropped;
	for (i = 0; i < DROCE_QP_SLOTS; i++) {
		const struct engine_qp *eq = edev->qps[i];

		if (eq == NULL)
			continue;
		s->qpns[s->n_qp++] = eq->qp->qp_num;
		cq_add(s, eq->qp->send_cq);
		cq_add(s, eq->qp->recv_cq);
		if (eq->qp->qp_num != s->qpn)
			continue;
		s->qp_found = true;
		qp_fill(&s->qp, eq);
		if (s->record)
			s->rec_rc = eq->t != NULL ? transport_rec_write(eq->t, "asked by telemetry",
									 s->rec_path,
									 sizeof(s->rec_path))
						  : -ENODATA;
		if (eq->t != NULL)
			s->cnt = *transport_qp_counters(eq->t);
		else
			memset(&s->cnt, 0, sizeof(s->cnt));
	}
	s->shard[edev->queue].qps = s->n_qp - n_qp;
}

static const char *dev_name(const struct engine_shard *edev)
{
	return verbs_device_cfg(edev->dev)->name;
}

/* "none", "inline", "lcore N" or, for a device of several shards, "lcores N,M,...". */
static void engine_name(struct tel_snap *s)
{
	size_t n;
	unsigned int k;

	if (!s->open) {
		snprintf(s->engine, sizeof(s->engine), "none");
		return;
	}
	if (!s->edev->lc->dedicated) {
		snprintf(s->engine, sizeof(s->engine), "inline");
		return;
	}
	n = (size_t)snprintf(s->engine, sizeof(s->engine), "lcore%s ", s->n_shards > 1 ? "s" : "");
	for (k = 0; k < s->n_shards && n < sizeof(s->engine); k++)
		n += (size_t)snprintf(s->engine + n, sizeof(s->engine) - n, "%s%u", k ? "," : "",
				      s->edev->shard[k]->lc->lcore_id);
}

/* engine_view_run() callback: find the device and snapshot it where that cannot race. */
static int snap_view(const struct engine_view *v, void *arg)
{
	struct tel_snap *s = arg;
	unsigned int i, k;

	for (i = 0; i < v->n_dev; i++) {
		if (strcmp(dev_name(v->dev[i]), s->name) != 0)
			continue;
		s->edev = v->dev[i];
		/* What open and close change: read here, under the lifecycle lock. */
		s->open = s->edev->lc != NULL;
		s->mac = s->edev->mac;
		s->port = verbs_device_port(s->edev->dev);
		s->mtu = verbs_device_cfg(s->edev->dev)->mtu;
		verbs_device_rate(s->edev->dev, &s->link_mbps, &s->active_width,
				  &s->active_speed);
		s->n_shards = RTE_MAX(s->edev->n_shards, (uint16_t)1);
		engine_name(s);
		snprintf(s->steering, sizeof(s->steering), "none");	/* unless open */
		for (k = 0; k < s->n_shards; k++) {
			s->cur = s->edev->shard[k] != NULL ? s->edev->shard[k] : s->edev;
			if (s->open)
				engine_inst_call(s->cur->lc, snap_op, s);
			else
				snap_op(NULL, s);	/* closed: no instance touches it */
		}
		if (!s->qp_found)
			s->cnt = s->sum;
		return 0;
	}
	return -ENODEV;
}

/*
 * Parse "DEVICE" (@p want_qpn false) or "DEVICE,QPN" (QPN decimal or 0x hex) and take the
 * snapshot; with @p record, the QP's flight recording is written meanwhile. @return the
 * snapshot (free() it) or NULL: bad parameters, unknown device, engine not running.
 */
static struct tel_snap *snap_take(const char *params, bool want_qpn, bool record)
{
	struct tel_snap *s;
	char name[sizeof(((struct droce_device_cfg *)0)->name)], *comma, *end;
	unsigned long qpn;

	if (params == NULL || params[0] == '\0' || strlen(params) >= sizeof(name))
		return NULL;
	snprintf(name, sizeof(name), "%s", params);
	comma = strchr(name, ',');
	if ((comma != NULL) != want_qpn)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->name = name;
	s->qpn = NO_QPN;
	s->record = record;
	if (want_qpn) {
		*comma = '\0';
		errno = 0;
		qpn = strtoul(comma + 1, &end, 0);
		if (comma[1] == '\0' || *end != '\0' || errno != 0 || qpn > 0xffffff)
			goto fail;
		s->qpn = (uint32_t)qpn;
	}
	if (engine_view_run(snap_view, s) != 0 || (want_qpn && !s->qp_found))
		goto fail;
	s->name = NULL;	/* pointed into this frame */
	return s;
fail:
	free(s);
	return NULL;
}

/* ---- Replies ---- */

static void put_counters(struct rte_tel_data *d, const struct droce_counters *c)
{
	const uint64_t *v = (const uint64_t *)c;
	const char *n;
	char name[64];
	unsigned int i;

	for (i = 0; (n = droce_counter_name(i)) != NULL; i++)
		rte_tel_data_add_dict_u64(d, n, v[i]);
	for (i = 1; i < DROCE_PARSE_ERR_NUM; i++) {
		engine_drop_reason_name(ENGINE_DROP_PARSE(i), name, sizeof(name));
		rte_tel_data_add_dict_u64(d, name, c->parse_err[i]);
	}
}

static const char *qp_type_str(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC: return "RC";
	case IBV_QPT_UC: return "UC";
	case IBV_QPT_UD: return "UD";
	default: return "other";
	}
}

static void put_fill(struct rte_tel_data *d, const char *pfx, const struct verbs_fill *f)
{
	char name[32];

	snprintf(name, sizeof(name), "%s_depth", pfx);
	rte_tel_data_add_dict_u64(d, name, f->depth);
	snprintf(name, sizeof(name), "%s_posted", pfx);
	rte_tel_data_add_dict_u64(d, name, f->used);
	snprintf(name, sizeof(name), "%s_in_engine", pfx);
	rte_tel_data_add_dict_u64(d, name, f->active);
}

static void put_qp(struct rte_tel_data *d, const struct tel_qp *q)
{
	rte_tel_data_add_dict_u64(d, "qpn", q->qpn);
	rte_tel_data_add_dict_string(d, "type", qp_type_str(q->type));
	rte_tel_data_add_dict_string(d, "state", transport_qp_state_name(q->state));
	rte_tel_data_add_dict_u64(d, "dest_qpn", q->t.dqpn);
	rte_tel_data_add_dict_u64(d, "sq_psn", q->t.sq_psn);
	rte_tel_data_add_dict_u64(d, "unacked_psn", q->t.comp_psn);
	rte_tel_data_add_dict_u64(d, "expected_psn", q->t.epsn);
	rte_tel_data_add_dict_u64(d, "send_wr_outstanding", q->t.wqe_outstanding);
	rte_tel_data_add_dict_u64(d, "rd_atomic_outstanding", q->t.rd_atomic_outstanding);
	rte_tel_data_add_dict_u64(d, "responses_queued", q->t.resp_out_queued);
	rte_tel_data_add_dict_u64(d, "retry_left", q->t.retry_left);
	rte_tel_data_add_dict_u64(d, "rnr_retry_left", q->t.rnr_left);
	rte_tel_data_add_dict_int(d, "rnr_wait", q->t.rnr_wait);
	rte_tel_data_add_dict_int(d, "dcqcn", q->t.cc_on);
	rte_tel_data_add_dict_int(d, "rate_limited", q->t.cc_limited);
	rte_tel_data_add_dict_u64(d, "rate_kbps", q->t.cc_rate_kbps);
	rte_tel_data_add_dict_u64(d, "target_rate_kbps", q->t.cc_target_kbps);
	rte_tel_data_add_dict_u64(d, "alpha_1024", q->t.cc_alpha);
	rte_tel_data_add_dict_u64(d, "rate_cuts", q->t.cc_cuts);
	rte_tel_data_add_dict_u64(d, "rate_increases", q->t.cc_incs);
	put_fill(d, "sq", &q->sq);
	put_fill(d, "rq", &q->rq);
	rte_tel_data_add_dict_u64(d, "send_cq", q->send_cq);
	rte_tel_data_add_dict_u64(d, "recv_cq", q->recv_cq);
	rte_tel_data_add_dict_int(d, "srq", (int)q->srq);
}

/* ---- Commands ---- */

static int devices_view(const struct engine_view *v, void *arg)
{
	struct rte_tel_data *d = arg;
	unsigned int i;

	for (i = 0; i < v->n_dev; i++)
		rte_tel_data_add_array_string(d, dev_name(v->dev[i]));
	return 0;
}

static int tel_devices(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	engine_view_run(devices_view, d);	/* not started yet: no device */
	return 0;
}

/* One u64 per shard (queue pair) under @p key. DPDK telemetry nests containers one level
 * deep only: a list per field, not a dict per shard. */
static void put_shard_field(struct rte_tel_data *d, const char *key, const struct tel_snap *s,
			    size_t off)
{
	struct rte_tel_data *a = rte_tel_data_alloc();
	unsigned int k;

	if (a == NULL)
		return;
	rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
	for (k = 0; k < s->n_shards; k++)
		rte_tel_data_add_array_u64(a, *(const uint64_t *)((const char *)&s->shard[k] + off));
	rte_tel_data_add_dict_container(d, key, a, 0);
}

/* Per engine lcore serving the device (its shard, by queue pair): lcore, QPs, frames received,
 * handed to another shard, not handed (ring full). */
static void put_shards(struct rte_tel_data *d, const struct tel_snap *s)
{
	if (s->open && s->shard[0].lcore < RTE_MAX_LCORE)
		put_shard_field(d, "shard_lcore", s, offsetof(struct tel_shard, lcore));
	put_shard_field(d, "shard_qps", s, offsetof(struct tel_shard, qps));
	put_shard_field(d, "shard_rx_packets", s, offsetof(struct tel_shard, rx_packets));
	put_shard_field(d, "shard_rx_handoff", s, offsetof(struct tel_shard, rx_handoff));
	put_shard_field(d, "shard_rx_handoff_dropped", s,
			offsetof(struct tel_shard, rx_handoff_dropped));
}

static int tel_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_snap *s = snap_take(params, false, false);
	char mac[RTE_ETHER_ADDR_FMT_SIZE];

	RTE_SET_USED(cmd);
	if (s == NULL)
		return -EINVAL;
	rte_ether_format_addr(mac, sizeof(mac), &s->mac);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", params);
	rte_tel_data_add_dict_int(d, "port", s->port);
	rte_tel_data_add_dict_string(d, "mac", mac);
	rte_tel_data_add_dict_u64(d, "mtu", s->mtu);
	rte_tel_data_add_dict_u64(d, "link_mbps", s->link_mbps);
	rte_tel_data_add_dict_u64(d, "active_width", s->active_width);
	rte_tel_data_add_dict_u64(d, "active_speed", s->active_speed);
	rte_tel_data_add_dict_int(d, "open", s->open);
	rte_tel_data_add_dict_string(d, "engine", s->engine);
	rte_tel_data_add_dict_string(d, "steering", s->steering);
	rte_tel_data_add_dict_u64(d, "steer_rules", s->steer_rules);
	rte_tel_data_add_dict_u64(d, "qps", s->n_qp);
	rte_tel_data_add_dict_u64(d, "cqs", s->n_cq);
	put_shards(d, s);
	free(s);
	return 0;
}

static int tel_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_snap *s = snap_take(params, false, false);

	RTE_SET_USED(cmd);
	if (s == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	put_counters(d, &s->cnt);
	free(s);
	return 0;
}

static int tel_dcqcn(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_snap *s = snap_take(params, false, false);
	static const char *const ecn[] = { "off", "ect1", "ect0", "ce" };
	const struct engine_cc_view *c;

	RTE_SET_USED(cmd);
	if (s == NULL)
		return -EINVAL;
	c = &s->cc;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "enable", c->on);
	rte_tel_data_add_dict_string(d, "ecn", ecn[c->ecn & 3]);
	rte_tel_data_add_dict_int(d, "np", c->np);
	rte_tel_data_add_dict_int(d, "rp", c->rp);
	rte_tel_data_add_dict_u64(d, "cnp_interval_us", c->cnp_interval_us);
	rte_tel_data_add_dict_u64(d, "rate_reduce_period_us", c->rate_reduce_period_us);
	rte_tel_data_add_dict_u64(d, "alpha_g_shift", c->alpha_g_shift);
	rte_tel_data_add_dict_u64(d, "alpha_init", c->alpha_init);
	rte_tel_data_add_dict_u64(d, "alpha_period_us", c->alpha_period_us);
	rte_tel_data_add_dict_u64(d, "time_reset_us", c->time_reset_us);
	rte_tel_data_add_dict_u64(d, "byte_reset", c->byte_reset);
	rte_tel_data_add_dict_u64(d, "stages", c->stages);
	rte_tel_data_add_dict_u64(d, "line_rate_mbps", c->line_rate_mbps);
	rte_tel_data_add_dict_u64(d, "min_rate_mbps", c->min_rate_mbps);
	rte_tel_data_add_dict_u64(d, "ai_rate_mbps", c->ai_rate_mbps);
	rte_tel_data_add_dict_u64(d, "hai_rate_mbps", c->hai_rate_mbps);
	rte_tel_data_add_dict_u64(d, "burst", c->burst);
	free(s);
	return 0;
}

static int tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_snap *s = snap_take(params, false, false);
	uint32_t i;

	RTE_SET_USED(cmd);
	if (s == NULL)
		return -EINVAL;
	rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
	for (i = 0; i < s->n_qp; i++)
		rte_tel_data_add_array_u64(d, s->qpns[i]);
	free(s);
	return 0;
}

static int tel_qp(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_snap *s = snap_take(params, true, false);

	RTE_SET_USED(cmd);
	if (s == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	put_qp(d, &s->qp);
	free(s);
	return 0;
}

static int tel_record(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_snap *s = snap_take(params, true, true);

	RTE_SET_USED(cmd);
	if (s == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "qpn", s->qp.qpn);
	if (s->rec_rc == 0) {
		char file[PATH_MAX + 8];

		snprintf(file, sizeof(file), "%s.pcap", s->rec_path);
		rte_tel_data_add_dict_string(d, "pcap", file);
		snprintf(file, sizeof(file), "%s.json", s->rec_path);
		rte_tel_data_add_dict_string(d, "json", file);
	} else {
		rte_tel_data_add_dict_string(d, "error", s->rec_rc == -ENODATA ?
					     "the flight recorder is off ([engine] recorder = 0)" :
					     strerror(-s->rec_rc));
	}
	free(s);
	return 0;
}

static int tel_qp_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_snap *s = snap_take(params, true, false);

	RTE_SET_USED(cmd);
	if (s == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	put_counters(d, &s->cnt);
	free(s);
	return 0;
}

static int tel_cqs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_snap *s = snap_take(params, false, false);
	char key[16];
	uint32_t i;

	RTE_SET_USED(cmd);
	if (s == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (i = 0; i < s->n_cq; i++) {
		struct rte_tel_data *c = rte_tel_data_alloc();

		if (c == NULL)
			break;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "depth", s->cq[i].f.depth);
		rte_tel_data_add_dict_u64(c, "filled", s->cq[i].f.used);
		rte_tel_data_add_dict_int(c, "overrun", s->cq[i].f.error);
		snprintf(key, sizeof(key), "%u", s->cq[i].handle);
		rte_tel_data_add_dict_container(d, key, c, 0);
	}
	free(s);
	return 0;
}

static void put_lcore(struct rte_tel_data *d, const struct engine_inst *lc)
{
	struct rte_tel_data *c = rte_tel_data_alloc();
	uint64_t busy = __atomic_load_n(&lc->busy_cycles, __ATOMIC_RELAXED);
	uint64_t idle = __atomic_load_n(&lc->idle_cycles, __ATOMIC_RELAXED);
	char key[16];

	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_string(c, "mode", lc->dedicated ? "dedicated" : "inline");
	rte_tel_data_add_dict_u64(c, "busy_cycles", busy);
	rte_tel_data_add_dict_u64(c, "idle_cycles", idle);
	rte_tel_data_add_dict_u64(c, "iterations",
				  __atomic_load_n(&lc->iterations, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(c, "busy_percent", busy + idle != 0 ?
				  busy * 100 / (busy + idle) : 0);
	if (lc->dedicated)
		snprintf(key, sizeof(key), "%u", lc->lcore_id);
	else
		snprintf(key, sizeof(key), "inline");
	rte_tel_data_add_dict_container(d, key, c, 0);
}

static int lcores_view(const struct engine_view *v, void *arg)
{
	struct rte_tel_data *d = arg;
	unsigned int i;

	for (i = 0; i < v->n_lc; i++)
		put_lcore(d, v->lc[i]);
	return 0;
}

static int tel_lcores(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "tsc_hz", rte_get_tsc_hz());
	engine_view_run(lcores_view, d);	/* not started: tsc_hz only */
	return 0;
}

RTE_INIT(engine_telemetry_register)
{
	rte_telemetry_register_cmd("/droce/devices", tel_devices,
		"Returns the droce devices opened since the process started. No parameters");
	rte_telemetry_register_cmd("/droce/info", tel_info,
		"Returns a droce device's port, MAC, MTU, engine, QPs, CQs. Parameter: device");
	rte_telemetry_register_cmd("/droce/counters", tel_counters,
		"Returns a droce device's counters. Parameter: device");
	rte_telemetry_register_cmd("/droce/dcqcn", tel_dcqcn,
		"Returns a droce device's congestion control settings ([dcqcn]). Parameter: device");
	rte_telemetry_register_cmd("/droce/qps", tel_qps,
		"Returns the QP numbers of a droce device. Parameter: device");
	rte_telemetry_register_cmd("/droce/qp", tel_qp,
		"Returns a QP's type, state, PSNs, outstanding WRs, queues. Params: device,qpn");
	rte_telemetry_register_cmd("/droce/qp_counters", tel_qp_counters,
		"Returns a QP's counters. Parameters: device,qpn");
	rte_telemetry_register_cmd("/droce/record", tel_record,
		"Writes a QP's flight recording (pcap, JSON); returns the files. Params: device,qpn");
	rte_telemetry_register_cmd("/droce/cqs", tel_cqs,
		"Returns the CQs of a droce device's QPs: depth, filled. Parameter: device");
	rte_telemetry_register_cmd("/droce/lcores", tel_lcores,
		"Returns the engine instances' busy and idle TSC cycles. No parameters");
}
