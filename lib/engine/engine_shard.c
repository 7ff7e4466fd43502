/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Shards: a device served by N engine lcores ([engine] lcores_per_device). The port gets one
 * RX and one TX queue per shard; shard k polls queue pair k on its own lcore and owns its share
 * of the device's QPs, whose whole protocol state only it touches, as with one lcore:
 *   - UD QPs (the GSI QP, CM, multicast members) belong to shard 0, which also answers ARP/ND
 *     and keeps the multicast groups;
 *   - RC, UC and XRC QPs are spread by their QP table slot, slot % N, so that two processes (or
 *     the two ends of a ring pair) creating their QPs in the same order put peers on the same
 *     shard index: over a ring pair, or a vhost-user link, queue k of one side is queue k of
 *     the other, and the frames of such peers never change lcore.
 * A frame that arrives on another shard's queue (a peer that spread its QPs otherwise, a NIC's
 * RSS, a port with fewer queues on the other side) is handed to the owner over a
 * single-producer single-consumer ring (verbs_ring's indices) per pair of shards (rx_handoff),
 * and the owner takes it as if its own queue had received it. A shard takes no more from its
 * queue than the rings have room for (engine_rx()): a slow owner holds the queue back. The
 * owner of each QP slot is in a table of the primary that control writes before the QP exists
 * for the engine and every shard's RX path reads (one byte, atomics).
 */
#include <errno.h>

#include <rte_ip.h>
#include <rte_malloc.h>

#include "engine_private.h"

/* Shard @p k (> 0) of @p p: a copy of what the primary knows of the device. */
static struct engine_shard *shard_alloc(struct engine_shard *p, unsigned int k)
{
	struct engine_shard *s = rte_zmalloc("droce_engine_dev", sizeof(*s), RTE_CACHE_LINE_SIZE);

	if (s == NULL)
		return NULL;
	s->dev = p->dev;
	s->primary = p;
	s->queue = (uint16_t)k;
	s->neigh = p->neigh;	/* one table (engine_neigh.c locks it) */
	s->kick_fd = -1;	/* until the port starts (shard_start()) */
	return s;
}

static int rings_make(struct engine_shard *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (i == s->queue || s->hand_in[i] != NULL)
			continue;
		s->hand_in[i] = rte_zmalloc("droce_handoff", sizeof(struct engine_hand),
					    RTE_CACHE_LINE_SIZE);
		if (s->hand_in[i] == NULL)
			return -ENOMEM;
		verbs_ring_init(&s->hand_in[i]->r, ENGINE_HANDOFF_RING);
	}
	return 0;
}

int engine_shards_make(struct engine_shard *p, unsigned int n)
{
	unsigned int k;

	p->primary = p;
	p->shard[0] = p;
	if (n > 1 && p->qp_shard == NULL) {
		p->qp_shard = rte_malloc("droce_qp_shard", DROCE_QP_SLOTS, 0);
		if (p->qp_shard == NULL)
			return -ENOMEM;
		memset(p->qp_shard, ENGINE_NO_SHARD, DROCE_QP_SLOTS);
	}
	for (k = 1; k < n; k++) {
		if (p->shard[k] == NULL && (p->shard[k] = shard_alloc(p, k)) == NULL)
			return -ENOMEM;
	}
	for (k = 0; k < n && n > 1; k++)
		if (rings_make(p->shard[k], n) != 0)
			return -ENOMEM;
	for (k = 0; k < n; k++) {
		struct engine_shard *s = p->shard[k];

		s->n_shards = (uint16_t)n;
		s->port = p->port;
		s->mac = p->mac;
		s->vlan_on = p->vlan_on;
		s->vlan_id = p->vlan_id;
		s->drop_untagged = p->drop_untagged;
		s->rx_direct = n <= 1 && !p->drop_untagged;
		s->n_gid = p->n_gid;
		memcpy(s->gid, p->gid, sizeof(s->gid));
	}
	return 0;
}

unsigned int engine_shard_pick(const struct engine_shard *p, const struct droce_qp *qp)
{
	uint32_t slot = verbs_qpn_slot(qp->qp_num);

	if (p->n_shards <= 1 || qp->qp_type == IBV_QPT_UD || slot >= DROCE_QP_SLOTS)
		return 0;
	return slot % p->n_shards;
}

void engine_shard_own(struct engine_shard *p, uint32_t qpn, unsigned int k)
{
	uint32_t slot = verbs_qpn_slot(qpn);

	if (p->qp_shard != NULL && slot < DROCE_QP_SLOTS)
		__atomic_store_n(&p->qp_shard[slot], (uint8_t)k, __ATOMIC_RELEASE);
}

unsigned int engine_shard_route(const struct engine_shard *s, const struct rte_mbuf *m,
				uint32_t l3_off, uint32_t l4_off, bool v6)
{
	const struct droce_bth *bth;
	uint32_t slot;
	uint8_t k;

	if (v6) {
		const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, const void *, l3_off);

		if (ip->dst_addr[0] == 0xff)
			return 0;	/* multicast: the groups are shard 0's */
	} else {
		const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, const void *, l3_off);

		if ((rte_be_to_cpu_32(ip->dst_addr) >> 28) == 0xe)
			return 0;	/* 224.0.0.0/4 (RTE_IS_IPV4_MCAST() shifts a signed int) */
	}
	if (l4_off + sizeof(struct rte_udp_hdr) + sizeof(*bth) > m->data_len)
		return s->queue;	/* truncated: the parser here names the reason */
	bth = rte_pktmbuf_mtod_offset(m, const struct droce_bth *,
				      l4_off + sizeof(struct rte_udp_hdr));
	slot = verbs_qpn_slot(droce_bth_qpn(bth));
	if (slot >= DROCE_QP_SLOTS)
		return s->queue;
	k = __atomic_load_n(&s->primary->qp_shard[slot], __ATOMIC_ACQUIRE);
	return k < s->n_shards ? k : s->queue;	/* no QP: dropped here, counted */
}

void engine_handoff(struct engine_shard *s, unsigned int k, struct rte_mbuf *m)
{
	struct engine_hand *h = s->primary->shard[k]->hand_in[s->queue];
	uint32_t head = verbs_ring_head(&h->r);

	if (likely(verbs_ring_room(&h->r, head) != 0)) {
		h->slot[head & h->r.mask] = m;
		verbs_ring_publish(&h->r, head + 1);
		s->cnt.rx_handoff++;
		return;
	}
	s->cnt.rx_handoff_dropped++;
	engine_drop(s, ECNT_rx_handoff_dropped, m);
	rte_pktmbuf_free(m);
}

unsigned int engine_handoff_discard(struct engine_shard *s)
{
	struct rte_mbuf *pkts[ENGINE_BURST];
	unsigned int i, n, total = 0;

	for (i = 0; i < ENGINE_MAX_LCORES; i++) {
		if (s->hand_in[i] == NULL)
			continue;
		while ((n = engine_hand_take(s->hand_in[i], pkts, ENGINE_BURST)) != 0) {
			rte_pktmbuf_free_bulk(pkts, n);
			total += n;
		}
	}
	return total;
}
