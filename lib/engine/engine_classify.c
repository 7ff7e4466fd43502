/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Receive path: up to ENGINE_RX_BURSTS bursts per device and iteration. The first stage
 * classifies each frame of a burst by its headers (ARP; ICMPv6 neighbour discovery; IPv4/IPv6
 * UDP to port 4791): handed to the shard that owns it, handled here, dropped under a named
 * counter, or kept for the RoCE stages over the whole burst (engine_rx_roce.c). Nothing on
 * this path allocates or locks; it logs only the first drop of each reason (engine_droplog.c)
 * unless asked for more.
 */
#include <string.h>

#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "engine_private.h"

/* FC_VLAN_*: not of the device's VLAN (engine_shard.vlan_on): dropped by that reason. */
enum frame_class { FC_OTHER, FC_ARP, FC_ICMP6, FC_ROCE, FC_VLAN_OTHER, FC_VLAN_TAGGED,
		   FC_VLAN_UNTAGGED };

/* Bytes of @p m's first segment from @p off on, or 0. */
static uint32_t seg_room(const struct rte_mbuf *m, uint32_t off)
{
	return off < m->data_len ? m->data_len - off : 0;
}

/* Ethertype and L3 offset, skipping one 802.1Q tag; its TCI in @p tci (-1: untagged). */
static uint16_t l2_type(const struct rte_mbuf *m, uint32_t *l3_off, int32_t *tci)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint16_t type;

	*tci = -1;
	if (m->data_len < RTE_ETHER_HDR_LEN)
		return 0;
	type = rte_be_to_cpu_16(eh->ether_type);
	*l3_off = RTE_ETHER_HDR_LEN;
	if (type == RTE_ETHER_TYPE_VLAN) {
		const struct rte_vlan_hdr *vh = (const void *)(eh + 1);

		if (m->data_len < RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN)
			return 0;
		type = rte_be_to_cpu_16(vh->eth_proto);
		*tci = rte_be_to_cpu_16(vh->vlan_tci);
		*l3_off += RTE_VLAN_HLEN;
	}
	return type;
}

/*
 * Whether a frame with tag @p tci (-1: none) belongs to @p edev's VLAN: FC_OTHER if it does,
 * else the reason it does not. A priority tag (VLAN id 0, 802.1Q 9.6) is no VLAN: a device
 * without a VLAN takes it, as Linux's does, and a priority-tagged device takes untagged frames.
 */
static enum frame_class vlan_check(const struct engine_shard *edev, int32_t tci)
{
	uint16_t vid = (uint16_t)(tci & RTE_VLAN_ID_MASK);

	if (!edev->vlan_on)
		return tci < 0 || vid == 0 ? FC_OTHER : FC_VLAN_TAGGED;
	if (tci < 0)
		return edev->vlan_id == 0 ? FC_OTHER : FC_VLAN_UNTAGGED;
	return vid == edev->vlan_id ? FC_OTHER : FC_VLAN_OTHER;
}

static bool udp_is_roce(const struct rte_mbuf *m, uint32_t l4_off)
{
	const struct rte_udp_hdr *uh;

	if (seg_room(m, l4_off) < sizeof(*uh))
		return true;	/* truncated: the parser names the reason */
	uh = rte_pktmbuf_mtod_offset(m, const struct rte_udp_hdr *, l4_off);
	return uh->dst_port == RTE_BE16(DROCE_ROCEV2_PORT);
}

/* Where classify() found the headers. */
struct frame_at {
	uint32_t l3, l4;	/**< l4: the UDP header of a RoCE v2 frame */
	bool v6;
};

static enum frame_class classify_ipv4(const struct rte_mbuf *m, struct frame_at *at)
{
	const struct rte_ipv4_hdr *ip;

	if (seg_room(m, at->l3) < sizeof(*ip))
		return FC_OTHER;
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, at->l3);
	if (ip->next_proto_id != IPPROTO_UDP)
		return FC_OTHER;
	/* IHL below 5 or fragments: the parser rejects them under their own reasons. */
	at->l4 = at->l3 + RTE_MAX(rte_ipv4_hdr_len(ip), 20u);
	return udp_is_roce(m, at->l4) ? FC_ROCE : FC_OTHER;
}

static enum frame_class classify_ipv6(const struct rte_mbuf *m, struct frame_at *at)
{
	const struct rte_ipv6_hdr *ip;

	if (seg_room(m, at->l3) < sizeof(*ip))
		return FC_OTHER;
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, at->l3);
	at->v6 = true;
	if (ip->proto == IPPROTO_ICMPV6)
		return FC_ICMP6;
	if (ip->proto != IPPROTO_UDP)
		return FC_OTHER;
	at->l4 = at->l3 + sizeof(*ip);
	return udp_is_roce(m, at->l4) ? FC_ROCE : FC_OTHER;
}

static __rte_always_inline enum frame_class classify(const struct engine_shard *edev,
						     const struct rte_mbuf *m, struct frame_at *at)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	enum frame_class vc;
	int32_t tci;
	uint16_t type;

	/* Most frames first, in four loads: untagged IPv4 without options, UDP to 4791. The
	 * parser checks the rest; a device on a VLAN drops them (rx_classify()). */
	if (likely(m->data_len >= RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) +
		   sizeof(struct rte_udp_hdr))) {
		const struct rte_ether_hdr *eh = (const void *)d;
		const struct rte_ipv4_hdr *ip = (const void *)(eh + 1);
		const struct rte_udp_hdr *uh = (const void *)(ip + 1);

		if (eh->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
		    ip->version_ihl == RTE_IPV4_VHL_DEF && ip->next_proto_id == IPPROTO_UDP &&
		    uh->dst_port == RTE_BE16(DROCE_ROCEV2_PORT)) {
			at->l3 = RTE_ETHER_HDR_LEN;
			at->l4 = RTE_ETHER_HDR_LEN + sizeof(*ip);
			return FC_ROCE;
		}
	}
	type = l2_type(m, &at->l3, &tci);
	if (unlikely(tci >= 0 || edev->vlan_on) && (vc = vlan_check(edev, tci)) != FC_OTHER)
		return vc;
	switch (type) {
	case RTE_ETHER_TYPE_ARP:
		return FC_ARP;
	case RTE_ETHER_TYPE_IPV4:
		return classify_ipv4(m, at);
	case RTE_ETHER_TYPE_IPV6:
		return classify_ipv6(m, at);
	default:
		return FC_OTHER;
	}
}

/*
 * Which shard takes a frame of class @p fc that shard @p edev received (engine_shard.c): ARP
 * and neighbour discovery go to shard 0, RoCE to the owner of its QP; a frame handed over
 * already (@p routed) stays.
 */
static inline unsigned int rx_owner(const struct engine_shard *edev, const struct rte_mbuf *m,
				    enum frame_class *fc, const struct frame_at *at, bool routed)
{
	if (likely(edev->rx_direct) || routed)
		return edev->queue;
	/* An untagged RoCE frame on a device on a VLAN (the fast path of classify() takes it,
	 * the general one drops it: vlan_check()). Handed frames were checked by their shard. */
	if (edev->drop_untagged && *fc == FC_ROCE && at->l3 == RTE_ETHER_HDR_LEN)
		*fc = FC_VLAN_UNTAGGED;
	if (edev->n_shards <= 1)
		return edev->queue;
	switch (*fc) {
	case FC_ROCE:
		return engine_shard_route(edev, m, at->l3, at->l4, at->v6);
	case FC_ARP:
	case FC_ICMP6:
		return 0;
	default:
		return edev->queue;
	}
}

/*
 * The classify stage of a burst: @p m handed to the shard that owns it, handled here (ARP,
 * neighbour discovery), dropped, or, a RoCE v2 frame for this shard, added to @p v for the
 * stages of engine_rx_roce.c.
 */
static __rte_always_inline void rx_classify(struct engine_inst *lc, struct engine_shard *edev,
					    struct rte_mbuf *m, bool routed,
					    struct engine_rx_vec *v)
{
	struct frame_at at = { .l3 = 0, .l4 = 0, .v6 = false };
	enum frame_class fc = classify(edev, m, &at);
	unsigned int owner = rx_owner(edev, m, &fc, &at, routed);

	if (unlikely(owner != edev->queue)) {
		engine_handoff(edev, owner, m);
		return;
	}
	switch (fc) {
	case FC_ROCE:
		v->m[v->n++] = m;
		return;
	case FC_ARP:
		edev->cnt.rx_arp++;
		engine_neigh_rx_arp(lc, edev, m, at.l3);
		break;
	case FC_ICMP6:
		if (engine_neigh_rx_icmp6(lc, edev, m, at.l3)) {
			edev->cnt.rx_nd++;
			break;
		}
		/* not neighbour discovery: */
		edev->cnt.rx_not_roce++;
		engine_drop(edev, ECNT_rx_not_roce, m);
		break;
	case FC_VLAN_OTHER:
		edev->cnt.rx_vlan_other++;
		engine_drop(edev, ECNT_rx_vlan_other, m);
		break;
	case FC_VLAN_TAGGED:
		edev->cnt.rx_vlan_tagged++;
		engine_drop(edev, ECNT_rx_vlan_tagged, m);
		break;
	case FC_VLAN_UNTAGGED:
		edev->cnt.rx_vlan_untagged++;
		engine_drop(edev, ECNT_rx_vlan_untagged, m);
		break;
	case FC_OTHER:
	default:
		edev->cnt.rx_not_roce++;
		engine_drop(edev, ECNT_rx_not_roce, m);
		break;
	}
	rte_pktmbuf_free(m);
}

/* Two frames ahead: the mbuf's two cache lines (the second holds the chain's next). */
static inline void prefetch_mbuf(const struct rte_mbuf *m)
{
	rte_prefetch0(m);
	rte_prefetch0(RTE_PTR_ADD(m, RTE_CACHE_LINE_SIZE));
}

/* One frame ahead: its headers and, for a chain (a zero-copy frame: payload and tail
 * segments, where the parser reads the ICRC), the next segments' mbufs. */
static inline void prefetch_frame(const struct rte_mbuf *m)
{
	const struct rte_mbuf *seg = m->next;

	rte_prefetch0(rte_pktmbuf_mtod(m, void *));
	if (seg != NULL) {
		prefetch_mbuf(seg);
		if (seg->next != NULL)
			prefetch_mbuf(seg->next);
	}
}

/* Frames other shards received for this one's QPs (counted there as received): up to as many
 * bursts from each as a queue gives, so that a sender's ring drains as fast as it fills. */
static unsigned int rx_handed(struct engine_inst *lc, struct engine_shard *edev,
			      struct engine_rx_vec *v)
{
	struct rte_mbuf *pkts[ENGINE_BURST];
	unsigned int k, i, n, b, total = 0;

	for (k = 0; k < edev->n_shards; k++) {
		if (edev->hand_in[k] == NULL)
			continue;
		b = 0;
		do {
			n = engine_hand_take(edev->hand_in[k], pkts, ENGINE_BURST);
			for (i = 0; i < n; i++) {
				if (i + 1 < n)
					prefetch_frame(pkts[i + 1]);
				rx_classify(lc, edev, pkts[i], true, v);
			}
			engine_rx_roce(lc, edev, v);
			total += n;
		} while (n == ENGINE_BURST && ++b < ENGINE_RX_BURSTS);
	}
	return total;
}

/*
 * Frames @p edev may take from its queue now: as many as every other shard's handoff ring has
 * room for (all of them could be for one shard). A full ring holds the queue back instead of
 * dropping what was received: the port's queue, then the peer, feel the backpressure, as with a
 * slow lcore of its own.
 */
static uint16_t rx_room(const struct engine_shard *edev)
{
	const struct engine_shard *p = edev->primary;
	uint32_t room = ENGINE_BURST, k;

	for (k = 0; k < edev->n_shards; k++) {
		const struct engine_hand *h = k != edev->queue ? p->shard[k]->hand_in[edev->queue] :
					      NULL;

		if (h != NULL)
			room = RTE_MIN(room, verbs_ring_room(&h->r, verbs_ring_head(&h->r)));
	}
	return (uint16_t)room;
}

/* Frames the device sent to its own address (engine_port.c, loop_tx()): received as from
 * the port, counted as loopback rather than as the port's. */
static void loop_rx(struct engine_inst *lc, struct engine_shard *edev, struct engine_rx_vec *v)
{
	struct rte_mbuf *q[ENGINE_LOOP];
	unsigned int i, n = edev->n_uloop;

	memcpy(q, edev->uloop, n * sizeof(q[0]));
	edev->n_uloop = 0;
	edev->cnt.loopback += n;
	for (i = 0; i < n; i++) {
		rx_classify(lc, edev, q[i], false, v);
		if (v->n == ENGINE_BURST)
			engine_rx_roce(lc, edev, v);
	}
	engine_rx_roce(lc, edev, v);
}

unsigned int engine_rx(struct engine_inst *lc, struct engine_shard *edev)
{
	struct rte_mbuf *pkts[ENGINE_BURST];
	unsigned int total = 0, bursts = 0;
	uint16_t i, n, want = ENGINE_BURST;
	uint64_t bytes;
	struct engine_rx_vec v;

	if (unlikely(!edev->link_up))
		return engine_rx_link_down(edev);
	v.n = 0;
	if (unlikely(edev->n_loop != 0))
		engine_mcast_loop_rx(lc, edev);	/* multicast this device sent to itself */
	if (unlikely(edev->n_uloop != 0))
		loop_rx(lc, edev, &v);		/* unicast this device sent to itself */
	if (unlikely(edev->n_shards > 1))
		total += rx_handed(lc, edev, &v);
	/* Up to ENGINE_RX_BURSTS full bursts: the receive side must keep up with what one
	 * iteration's TX step can send (hundreds of frames), or the peer's ring fills and its
	 * QPs stall behind backpressure. */
	do {
		if (unlikely(edev->n_shards > 1) && (want = rx_room(edev)) == 0)
			break;
		n = rte_eth_rx_burst(edev->port, edev->queue, pkts, want);
		for (i = 0; i < n && i < 2; i++)
			prefetch_mbuf(pkts[i]);
		bytes = 0;
		for (i = 0; i < n; i++) {
			if (i + 2 < n)
				prefetch_mbuf(pkts[i + 2]);
			if (i + 1 < n)
				prefetch_frame(pkts[i + 1]);
			bytes += rte_pktmbuf_pkt_len(pkts[i]);
			rx_classify(lc, edev, pkts[i], false, &v);
		}
		edev->cnt.rx_packets += n;
		edev->cnt.rx_bytes += bytes;
		engine_rx_roce(lc, edev, &v);
		total += n;
	} while (n == ENGINE_BURST && ++bursts < ENGINE_RX_BURSTS);	/* want < burst: once */
	return total;
}
