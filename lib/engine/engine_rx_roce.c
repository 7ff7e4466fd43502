/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The RoCE v2 frames of one receive burst, stage by stage (engine_classify.c gathers them):
 *
 *   parse    headers and ICRC of every frame (the parser reads what classify prefetched);
 *   lookup   destination GID and QP of every frame, prefetching each QP's transport state;
 *   deliver  each frame to its QP's transport in arrival order, the QP's timer and TX step
 *            rearmed once per run of frames for it rather than once per frame.
 *
 * A frame a stage drops leaves the burst there (counted and logged by reason); the others
 * keep their order. Nothing here locks or allocates.
 */
#include <string.h>

#include "engine_private.h"

/* Parse and check every frame; the bad ones are dropped, the rest close up. */
static void stage_parse(struct engine_shard *edev, struct engine_rx_vec *v)
{
	struct droce_counters *c = &edev->cnt;
	enum droce_parse_err err;
	uint16_t i, k = 0;

	for (i = 0; i < v->n; i++) {
		err = droce_parse_mbuf(v->m[i], 0, &v->pkt[k]);
		if (unlikely(err != DROCE_PARSE_OK)) {
			c->parse_err[err]++;
			c->rx_bad_frame++;
			engine_drop(edev, ENGINE_DROP_PARSE(err), v->m[i]);
			rte_pktmbuf_free(v->m[i]);
			continue;
		}
		v->m[k++] = v->m[i];
	}
	v->n = k;
}

/* Whether @p dgid is one of the device's GIDs; @p last is the previous frame's, accepted
 * already (a burst is mostly one flow's), or NULL. */
static __rte_always_inline bool our_gid(const struct engine_shard *edev, const uint8_t *dgid,
					const uint8_t *last)
{
	uint64_t a[2], b[2];

	if (last != NULL) {
		memcpy(a, dgid, 16);
		memcpy(b, last, 16);
		if (((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0)
			return true;
	}
	return engine_is_our_gid(edev, dgid);
}

/* Find every frame's QP (NULL for a multicast frame, delivered by engine_mcast.c); frames for
 * another GID or no QP are dropped. */
static void stage_lookup(struct engine_shard *edev, struct engine_rx_vec *v)
{
	struct droce_counters *c = &edev->cnt;
	const uint8_t *last = NULL;
	struct engine_qp *eq;
	uint16_t i, k = 0;
	uint32_t idx;

	for (i = 0; i < v->n; i++) {
		const struct droce_pkt *pkt = &v->pkt[i];

		if (unlikely(droce_gid_is_mcast(pkt->dgid))) {
			eq = NULL;
			goto keep;
		}
		if (!our_gid(edev, pkt->dgid, last)) {
			c->rx_not_our_gid++;
			engine_drop(edev, ECNT_rx_not_our_gid, v->m[i]);
			goto drop;
		}
		last = pkt->dgid;
		idx = verbs_qpn_slot(droce_bth_qpn(droce_pkt_bth(pkt)));
		eq = idx < DROCE_QP_SLOTS ? edev->qps[idx] : NULL;
		if (eq == NULL) {
			c->rx_unknown_qp++;
			engine_drop(edev, ECNT_rx_unknown_qp, v->m[i]);
			goto drop;
		}
		rte_prefetch0(eq->t);
		c->rx_roce++;
keep:
		v->eq[k] = eq;
		v->m[k] = v->m[i];
		if (k != i)
			v->pkt[k] = *pkt;
		k++;
		continue;
drop:
		rte_pktmbuf_free(v->m[i]);
	}
	v->n = k;
}

/* Hand every frame to its transport (or the multicast fan-out), in order. */
static void stage_deliver(struct engine_inst *lc, struct engine_shard *edev,
			  struct engine_rx_vec *v)
{
	enum transport_verdict verdict;
	struct engine_qp *eq;
	uint32_t qpn, psn;
	uint16_t i;

	for (i = 0; i < v->n; i++) {
		const struct droce_pkt *pkt = &v->pkt[i];

		eq = v->eq[i];
		if (unlikely(eq == NULL)) {
			engine_mcast_rx(lc, edev, v->m[i], pkt, false);	/* engine_mcast.c */
			continue;
		}
		qpn = droce_bth_qpn(droce_pkt_bth(pkt));
		psn = droce_bth_psn(droce_pkt_bth(pkt));	/* for the drop log: m goes */
		verdict = transport_rx(&lc->env, eq->t, v->m[i], pkt);
		engine_tdrop(edev, verdict, pkt, qpn, psn);
		if (i + 1 == v->n || v->eq[i + 1] != eq)
			engine_qp_rearm(lc, eq);
	}
}

void engine_rx_roce_burst(struct engine_inst *lc, struct engine_shard *edev,
			  struct engine_rx_vec *v)
{
	stage_parse(edev, v);
	stage_lookup(edev, v);
	stage_deliver(lc, edev, v);
	v->n = 0;
}
