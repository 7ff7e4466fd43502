/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * UD multicast in the engine. Each device has a table of its groups and the QPs attached to
 * them; verbs (lib/verbs/verbs_mcast.c) checks the calls and the limits and updates the table through
 * the mcast hook, which runs on the instance that serves the device (engine_inst_call()), so
 * the receive path reads it without a lock.
 *
 * Receive: a RoCE v2 frame to a multicast GID must carry DestQP 0xFFFFFF (else
 * rx_mcast_bad_qpn) and name a group with members (else rx_mcast_no_member); every member gets
 * the frame (one reference of the mbuf each) and checks it as its own: state, P_Key, Q_Key,
 * receive WR.
 *
 * Send: the transport addresses a multicast GID to its MAC (resolve: no ARP/ND). A port does
 * not hear what it sends, so a copy of each multicast frame goes to the device's own members
 * other than the sending QP (found by the DETH source QPN): queued here, delivered at the
 * next receive step. As with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB on hardware, the sender never
 * gets its own messages back.
 */
#include <errno.h>
#include <string.h>

#include "engine_private.h"
#include "env.h"

static struct engine_mcg *group_find(struct engine_shard *edev, const uint8_t gid[16])
{
	uint32_t i;

	for (i = 0; i < edev->n_mcg; i++)
		if (memcmp(edev->mcg[i].gid, gid, 16) == 0)
			return &edev->mcg[i];
	return NULL;
}

/* A port that cannot receive every multicast frame gets the groups' MACs as its filter. */
static void port_filter(struct engine_shard *edev)
{
	struct rte_ether_addr macs[DROCE_MAX_MCAST_GRP];
	uint32_t i;

	if (!edev->started)
		return;
	for (i = 0; i < edev->n_mcg; i++)
		droce_mcast_mac(edev->mcg[i].gid, &macs[i]);
	if (env_port_mcast_filter(edev->port, macs, edev->n_mcg) != 0)
		ENGINE_LOG(WARNING, "port %u: cannot set the multicast filter", edev->port);
}

static int group_add(struct engine_shard *edev, const uint8_t gid[16], struct engine_qp *eq)
{
	struct engine_mcg *g = group_find(edev, gid);
	uint32_t i;

	if (g == NULL) {
		if (edev->n_mcg == DROCE_MAX_MCAST_GRP)
			return -ENOMEM;
		g = &edev->mcg[edev->n_mcg++];
		memcpy(g->gid, gid, 16);
		g->n = 0;
	}
	for (i = 0; i < g->n; i++)
		if (g->eq[i] == eq)
			return 0;
	if (g->n == DROCE_MAX_MCAST_QP_ATTACH)
		return -ENOMEM;
	g->eq[g->n++] = eq;
	return 0;
}

static void group_del(struct engine_shard *edev, struct engine_mcg *g, struct engine_qp *eq)
{
	uint32_t i;

	for (i = 0; i < g->n; i++) {
		if (g->eq[i] == eq) {
			g->eq[i] = g->eq[--g->n];
			break;
		}
	}
	if (g->n == 0)
		*g = edev->mcg[--edev->n_mcg];
}

struct mcast_arg {
	struct engine_shard *edev;
	uint32_t qpn;
	const uint8_t *gid;
	bool attach;
	int rc;
};

static void mcast_op(struct engine_inst *lc, void *arg)
{
	struct mcast_arg *a = arg;
	uint32_t idx = verbs_qpn_slot(a->qpn);
	struct engine_qp *eq = idx < DROCE_QP_SLOTS ? a->edev->qps[idx] : NULL;
	struct engine_mcg *g;

	RTE_SET_USED(lc);
	a->rc = 0;
	if (eq == NULL) {
		a->rc = -EINVAL;	/* not a QP of this engine */
		return;
	}
	if (a->attach) {
		a->rc = group_add(a->edev, a->gid, eq);
	} else {
		g = group_find(a->edev, a->gid);
		if (g != NULL)
			group_del(a->edev, g, eq);
	}
	port_filter(a->edev);
}

int engine_mcast_update(struct droce_qp *qp, const union ibv_gid *gid, bool attach)
{
	struct mcast_arg a = { .qpn = qp->qp_num, .gid = gid->raw, .attach = attach };
	struct engine_inst *lc;

	a.edev = verbs_device_engine(qp->context->device);
	/* The QP keeps its context, hence its device, open: the device stays on lc. */
	lc = a.edev != NULL ? __atomic_load_n(&a.edev->lc, __ATOMIC_ACQUIRE) : NULL;
	if (lc == NULL)
		return -ENODEV;
	engine_inst_call(lc, mcast_op, &a);
	return a.rc;
}

void engine_mcast_forget(struct engine_shard *edev, struct engine_qp *eq)
{
	uint32_t i = 0;

	while (i < edev->n_mcg) {
		struct engine_mcg *g = &edev->mcg[i];
		uint32_t before = edev->n_mcg;

		group_del(edev, g, eq);
		if (edev->n_mcg == before)
			i++;	/* else the last group moved into slot i */
	}
}

/* ---- Receive ---- */

/* Each member's transport takes @p m (one reference each); each drop is logged. */
static void deliver(struct engine_inst *lc, struct engine_shard *edev, struct rte_mbuf *m,
		    const struct droce_pkt *pkt, struct engine_qp **to, uint32_t n)
{
	uint32_t psn = droce_bth_psn(droce_pkt_bth(pkt));	/* for the drop log: m goes */
	enum transport_verdict v;
	struct rte_mbuf *s;
	uint32_t i;

	for (s = m; s != NULL && n > 1; s = s->next)	/* one reference per member */
		rte_mbuf_refcnt_update(s, (int16_t)(n - 1));
	for (i = 0; i < n; i++) {
		v = transport_rx(&lc->env, to[i]->t, m, pkt);
		engine_tdrop(edev, v, pkt, DROCE_MCAST_QPN, psn);
		engine_qp_rearm(lc, to[i]);
	}
}

/* The DETH source QPN of a UD frame, or UINT32_MAX. */
static uint32_t src_qpn(const struct droce_pkt *pkt)
{
	const struct droce_deth *deth = droce_pkt_ext(pkt, DROCE_HDR_DETH);

	return deth != NULL ? droce_deth_sqpn(deth) : UINT32_MAX;
}

void engine_mcast_rx(struct engine_inst *lc, struct engine_shard *edev, struct rte_mbuf *m,
		     const struct droce_pkt *pkt, bool loop)
{
	struct engine_qp *to[DROCE_MAX_MCAST_QP_ATTACH];
	const struct engine_mcg *g;
	uint32_t i, n = 0, skip = loop ? src_qpn(pkt) : UINT32_MAX;

	if (droce_bth_qpn(droce_pkt_bth(pkt)) != DROCE_MCAST_QPN) {
		edev->cnt.rx_mcast_bad_qpn++;
		engine_drop(edev, ECNT_rx_mcast_bad_qpn, m);
		rte_pktmbuf_free(m);
		return;
	}
	g = group_find(edev, pkt->dgid);
	for (i = 0; g != NULL && i < g->n; i++)
		if (g->eq[i]->qp->qp_num != skip)
			to[n++] = g->eq[i];
	if (n == 0) {
		edev->cnt.rx_mcast_no_member++;
		engine_drop(edev, ECNT_rx_mcast_no_member, m);
		rte_pktmbuf_free(m);
		return;
	}
	if (loop)
		edev->cnt.mcast_loopback++;
	else
		edev->cnt.rx_roce++;
	deliver(lc, edev, m, pkt, to, n);
}

/* ---- Loopback of what the device sends ---- */

/* Group and DETH source QPN of a UD frame built by the transport (an 802.1Q tag or none,
 * headers in the first segment). @return false when it is not one. */
static bool sent_group(const struct rte_mbuf *m, uint8_t gid[16], uint32_t *sqpn)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t l3 = RTE_ETHER_HDR_LEN, l4, need;
	uint16_t type;

	if (m->data_len < RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + 20)
		return false;
	type = (uint16_t)(f[12] << 8 | f[13]);
	if (type == RTE_ETHER_TYPE_VLAN) {
		type = (uint16_t)(f[16] << 8 | f[17]);
		l3 += RTE_VLAN_HLEN;
	}
	if (type == RTE_ETHER_TYPE_IPV4) {
		l4 = l3 + (f[l3] & 0xfu) * 4u;
		memset(gid, 0, 10);
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, f + l3 + 16, 4);
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		l4 = l3 + 40;
		if (m->data_len < l4)
			return false;
		memcpy(gid, f + l3 + 24, 16);
	} else {
		return false;
	}
	need = l4 + 8 + 12 + 8;	/* UDP, BTH, DETH */
	if (m->data_len < need || (f[l4 + 8] & 0xe0) != 0x60)	/* UD opcodes: 011xxxxx */
		return false;
	*sqpn = (uint32_t)f[need - 3] << 16 | (uint32_t)f[need - 2] << 8 | f[need - 1];
	return true;
}

static bool has_other_member(const struct engine_mcg *g, uint32_t sqpn)
{
	uint32_t i;

	for (i = 0; g != NULL && i < g->n; i++)
		if (g->eq[i]->qp->qp_num != sqpn)
			return true;
	return false;
}

void engine_mcast_tx(struct engine_shard *edev, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	struct rte_mbuf *copy;
	uint8_t gid[16];
	uint32_t sqpn;

	if (!rte_is_multicast_ether_addr(&eh->dst_addr) || !sent_group(m, gid, &sqpn) ||
	    !has_other_member(group_find(edev, gid), sqpn))
		return;
	copy = edev->n_loop < ENGINE_MCAST_LOOP && edev->lc != NULL ?
		rte_pktmbuf_copy(m, edev->lc->pool, 0, UINT32_MAX) : NULL;
	if (copy == NULL) {
		edev->cnt.mcast_loop_dropped++;
		return;
	}
	edev->loop[edev->n_loop++] = copy;
}

unsigned int engine_mcast_loop_rx(struct engine_inst *lc, struct engine_shard *edev)
{
	struct rte_mbuf *q[ENGINE_MCAST_LOOP];
	struct droce_pkt pkt;
	enum droce_parse_err err;
	unsigned int i, n = edev->n_loop;

	memcpy(q, edev->loop, n * sizeof(q[0]));
	edev->n_loop = 0;
	for (i = 0; i < n; i++) {
		err = droce_parse_mbuf(q[i], 0, &pkt);
		if (err != DROCE_PARSE_OK) {
			edev->cnt.parse_err[err]++;
			edev->cnt.rx_bad_frame++;
			engine_drop(edev, ENGINE_DROP_PARSE(err), q[i]);
			rte_pktmbuf_free(q[i]);
			continue;
		}
		engine_mcast_rx(lc, edev, q[i], &pkt, true);
	}
	return n;
}

void engine_mcast_stop(struct engine_shard *edev)
{
	rte_pktmbuf_free_bulk(edev->loop, edev->n_loop);
	edev->n_loop = 0;
}
