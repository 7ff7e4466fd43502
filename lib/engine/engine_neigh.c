/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Neighbours: ARP (RFC 826) for IPv4 peers, neighbour discovery (RFC 4861) for IPv6 peers.
 *
 * - Answers: an ARP who-has for the device's IPv4 address gets a reply; a neighbour
 *   solicitation for one of its IPv6 GIDs gets a solicited advertisement.
 * - Resolution for the transport (resolve()): a per-device rte_hash keyed by the peer address
 *   as a GID (IPv4-mapped for IPv4). A miss creates an INCOMPLETE entry and sends a request;
 *   requests are repeated every neigh_retry_ms up to neigh_retries times, then the entry is
 *   FAILED (counted) for one more interval, after which a new resolve() starts over. Meanwhile
 *   resolve() returns -EAGAIN. Static entries ([device] neigh =) never change.
 * - Learning: replies and advertisements for an entry we have; requests and solicitations
 *   addressed to us create or refresh the sender's entry (RFC 826 merge, RFC 4861 7.2.3).
 *   A REACHABLE entry older than neigh_reachable_s is re-requested while it is still used.
 *
 * The table is the device's: shard 0 (engine_shard.c) answers and learns, runs the retries,
 * and every shard resolves its QPs' peers in it, sending its requests itself. A lock keeps
 * them apart; it is taken per ARP/ND frame, per resolution (a flow's MACs are resolved once,
 * not per packet; a resolution that finds it taken answers -EAGAIN instead of waiting) and per
 * retry check, never on the data path. Static entries are loaded
 * before an instance sees the device.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_hash.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_jhash.h>
#include <rte_malloc.h>

#include "engine_private.h"

#define NEIGH_ENTRIES 1024

enum neigh_state { NS_INCOMPLETE = 1, NS_REACHABLE, NS_STATIC, NS_FAILED };

enum {
	ND_NS = 135,		/* neighbour solicitation */
	ND_NA = 136,		/* neighbour advertisement */
	ND_OPT_SLLA = 1,
	ND_OPT_TLLA = 2,
	ND_NA_SOLICITED = 0x40,
	ND_NA_OVERRIDE = 0x20,
	ND_HOP_LIMIT = 255,	/* RFC 4861 7.1: anything else did not come from the link */
};

struct neigh_entry {
	uint8_t addr[16];
	struct rte_ether_addr mac;
	uint8_t state;
	uint8_t tries;
	uint64_t when;		/**< INCOMPLETE: next request; REACHABLE: refresh; FAILED: retry */
};

struct neigh_table {
	verbs_lock_t lock;	/**< the table and its entries (verbs_ring.h: TSan sees it) */
	struct rte_hash *h;
	struct neigh_entry e[NEIGH_ENTRIES];
	uint32_t n_pending;	/**< INCOMPLETE entries (atomics: engine_neigh_timers() peeks) */
	uint32_t gen;		/**< entries resolved or failed so far (atomic: every shard
				 *   reads it, engine_neigh_gen()) */
	uint64_t next_check;	/**< earliest 'when' of them */
};

/* ICMPv6 neighbour discovery message with one link-layer address option (RFC 4861 4.3/4.4). */
struct nd_msg {
	uint8_t type;
	uint8_t code;
	rte_be16_t cksum;
	uint8_t flags;		/**< NA: R S O; NS: reserved */
	uint8_t reserved[3];
	uint8_t target[16];
	uint8_t opt_type;
	uint8_t opt_len;	/**< in units of 8 bytes */
	struct rte_ether_addr opt_mac;
} __rte_packed __rte_aligned(2);

static bool is_v4(const uint8_t a[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(a, prefix, 12) == 0;
}

bool engine_is_our_gid(const struct engine_shard *edev, const uint8_t addr[16])
{
	uint64_t a[2], g[2];
	unsigned int i;

	memcpy(a, addr, 16);
	for (i = 0; i < edev->n_gid; i++) {	/* per received frame: two words, no memcmp() */
		memcpy(g, edev->gid[i], 16);
		if (((a[0] ^ g[0]) | (a[1] ^ g[1])) == 0)
			return true;
	}
	return false;
}

static uint64_t ms_to_tsc(uint64_t ms)
{
	return ms * rte_get_tsc_hz() / 1000;
}

struct neigh_table *engine_neigh_create(struct engine_shard *edev)
{
	const struct droce_device_cfg *cfg = verbs_device_cfg(edev->dev);
	struct rte_hash_parameters p = {
		.entries = NEIGH_ENTRIES, .key_len = 16, .hash_func = rte_jhash,
		.socket_id = (int)rte_socket_id(),
	};
	struct neigh_table *nt;
	char name[RTE_HASH_NAMESIZE];
	unsigned int i;

	nt = rte_zmalloc("droce_neigh", sizeof(*nt), RTE_CACHE_LINE_SIZE);
	if (nt == NULL)
		return NULL;
	verbs_lock_init(&nt->lock);
	snprintf(name, sizeof(name), "drc_nb%u", verbs_device_index(edev->dev));
	p.name = name;
	nt->h = rte_hash_create(&p);
	if (nt->h == NULL) {
		rte_free(nt);
		return NULL;
	}
	for (i = 0; i < cfg->n_neigh; i++) {
		int32_t pos = rte_hash_add_key(nt->h, cfg->neigh[i].addr);

		if (pos < 0)
			continue;
		memcpy(nt->e[pos].addr, cfg->neigh[i].addr, 16);
		memcpy(nt->e[pos].mac.addr_bytes, cfg->neigh[i].mac, RTE_ETHER_ADDR_LEN);
		nt->e[pos].state = NS_STATIC;
	}
	return nt;
}

void engine_neigh_free(struct neigh_table *nt)
{
	if (nt == NULL)
		return;
	rte_hash_free(nt->h);
	rte_free(nt);
}

/* ---- Building frames ---- */

/* An mbuf holding a zeroed frame with @p l3_len bytes after the Ethernet header (padded to
 * the Ethernet minimum), tagged on a device with a VLAN (at PCP 0 unless [device] pcp says
 * one); the L3 header's offset in @p l3. */
static struct rte_mbuf *frame_alloc(struct engine_inst *lc, struct engine_shard *edev,
				    uint32_t l3_len, const struct rte_ether_addr *dst,
				    uint16_t type, uint32_t *l3)
{
	const struct droce_device_cfg *cfg = verbs_device_cfg(edev->dev);
	struct rte_mbuf *m = rte_pktmbuf_alloc(lc->pool);
	struct rte_ether_hdr *eh;
	struct rte_vlan_hdr *vh;
	uint32_t len, flen;

	*l3 = RTE_ETHER_HDR_LEN + (edev->vlan_on ? RTE_VLAN_HLEN : 0);
	len = *l3 + l3_len;
	flen = RTE_MAX(len, (uint32_t)RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
	if (m == NULL || rte_pktmbuf_append(m, (uint16_t)flen) == NULL) {
		rte_pktmbuf_free(m);
		edev->cnt.alloc_failed++;
		return NULL;
	}
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	memset(eh, 0, flen);
	rte_ether_addr_copy(dst, &eh->dst_addr);
	rte_ether_addr_copy(&edev->mac, &eh->src_addr);
	if (edev->vlan_on) {
		eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
		vh = (struct rte_vlan_hdr *)(eh + 1);
		vh->vlan_tci = rte_cpu_to_be_16((uint16_t)((cfg->pcp_fixed ? cfg->pcp : 0) << 13 |
							   edev->vlan_id));
		vh->eth_proto = rte_cpu_to_be_16(type);
	} else {
		eh->ether_type = rte_cpu_to_be_16(type);
	}
	return m;
}

static void send_arp(struct engine_inst *lc, struct engine_shard *edev, uint16_t op,
		     const struct rte_ether_addr *dst, const struct rte_ether_addr *tha,
		     const uint8_t tip[4])
{
	const struct droce_device_cfg *cfg = verbs_device_cfg(edev->dev);
	struct rte_arp_hdr *ah;
	struct rte_mbuf *m;
	uint32_t l3;

	m = frame_alloc(lc, edev, sizeof(*ah), dst, RTE_ETHER_TYPE_ARP, &l3);
	if (m == NULL)
		return;
	ah = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, l3);
	ah->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	ah->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	ah->arp_hlen = RTE_ETHER_ADDR_LEN;
	ah->arp_plen = 4;
	ah->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&edev->mac, &ah->arp_data.arp_sha);
	memcpy(&ah->arp_data.arp_sip, cfg->ipv4, 4);
	rte_ether_addr_copy(tha, &ah->arp_data.arp_tha);
	memcpy(&ah->arp_data.arp_tip, tip, 4);
	engine_shard_tx(edev, m);
}

/* One ND message from @p src to @p dst (IPv6) with a link-layer option for our MAC. */
static void send_nd(struct engine_inst *lc, struct engine_shard *edev,
		    const struct rte_ether_addr *eth_dst, const uint8_t src[16],
		    const uint8_t dst[16], uint8_t type, uint8_t flags, const uint8_t target[16])
{
	struct rte_ipv6_hdr *ip;
	struct nd_msg *nd;
	struct rte_mbuf *m;
	uint32_t l3;

	m = frame_alloc(lc, edev, sizeof(*ip) + sizeof(*nd), eth_dst, RTE_ETHER_TYPE_IPV6, &l3);
	if (m == NULL)
		return;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, l3);
	ip->vtc_flow = RTE_BE32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16(sizeof(*nd));
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = ND_HOP_LIMIT;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, dst, 16);
	nd = (struct nd_msg *)(ip + 1);
	nd->type = type;
	nd->flags = flags;
	memcpy(nd->target, target, 16);
	nd->opt_type = type == ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA;
	nd->opt_len = 1;
	rte_ether_addr_copy(&edev->mac, &nd->opt_mac);
	nd->cksum = rte_ipv6_udptcp_cksum(ip, nd);
	engine_shard_tx(edev, m);
}

/* ARP request or neighbour solicitation for @p e. */
static void send_request(struct engine_inst *lc, struct engine_shard *edev,
			 const struct neigh_entry *e)
{
	static const struct rte_ether_addr bcast = { .addr_bytes = { 0xff, 0xff, 0xff, 0xff,
								     0xff, 0xff } };
	static const struct rte_ether_addr zero;

	if (is_v4(e->addr)) {
		if (!verbs_device_cfg(edev->dev)->has_ipv4)
			return;
		send_arp(lc, edev, RTE_ARP_OP_REQUEST, &bcast, &zero, &e->addr[12]);
	} else {
		/* To the target's solicited-node multicast group (RFC 4291 2.7.1), from our
		 * link-local address (GID 0). */
		uint8_t dst[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };
		struct rte_ether_addr mc = { .addr_bytes = { 0x33, 0x33, 0xff } };

		memcpy(&dst[13], &e->addr[13], 3);
		memcpy(&mc.addr_bytes[3], &e->addr[13], 3);
		send_nd(lc, edev, &mc, edev->gid[0], dst, ND_NS, 0, e->addr);
	}
	edev->cnt.neigh_req_sent++;
}

/* ---- Table ---- */

static void pending_add(struct neigh_table *nt, uint64_t when)
{
	if (__atomic_fetch_add(&nt->n_pending, 1, __ATOMIC_RELAXED) == 0 ||
	    when < nt->next_check)
		nt->next_check = when;
}

static void start_resolution(struct engine_inst *lc, struct engine_shard *edev,
			     struct neigh_entry *e)
{
	e->state = NS_INCOMPLETE;
	e->tries = 1;
	e->when = lc->env.now + ms_to_tsc(engine_cfg.neigh_retry_ms);
	pending_add(edev->neigh, e->when);
	send_request(lc, edev, e);
}

/* Record @p mac for @p addr. @p create: add an entry when there is none. */
static void learn(struct engine_inst *lc, struct engine_shard *edev, const uint8_t addr[16],
		  const struct rte_ether_addr *mac, bool create)
{
	struct neigh_table *nt = edev->neigh;
	struct neigh_entry *e;
	uint32_t key[4];	/* rte_jhash reads 32-bit words: addresses in frames are not
				 * aligned for that */
	int32_t pos;

	memcpy(key, addr, sizeof(key));
	pos = rte_hash_lookup(nt->h, key);
	if (pos < 0) {
		if (!create || (pos = rte_hash_add_key(nt->h, key)) < 0)
			return;
		memset(&nt->e[pos], 0, sizeof(nt->e[pos]));
		memcpy(nt->e[pos].addr, addr, 16);
	}
	e = &nt->e[pos];
	if (e->state == NS_STATIC)
		return;
	if (e->state == NS_INCOMPLETE)
		__atomic_fetch_sub(&nt->n_pending, 1, __ATOMIC_RELAXED);
	if (e->state != NS_REACHABLE || !rte_is_same_ether_addr(&e->mac, mac)) {
		edev->cnt.neigh_resolved++;
		__atomic_fetch_add(&nt->gen, 1, __ATOMIC_RELEASE);	/* wake the waiting QPs */
	}
	rte_ether_addr_copy(mac, &e->mac);
	e->state = NS_REACHABLE;
	e->tries = 0;
	e->when = lc->env.now + engine_cfg.neigh_reachable_s * rte_get_tsc_hz();
}

static int resolve_locked(struct transport_env *env, struct droce_device *dev,
			  struct droce_flow *flow)
{
	struct engine_inst *lc = env->engine;
	struct engine_shard *edev = engine_shard_here(env, dev);
	struct neigh_table *nt = edev->neigh;
	struct neigh_entry *e;
	int32_t pos = rte_hash_lookup(nt->h, flow->dgid);

	rte_ether_addr_copy(&edev->mac, &flow->src_mac);
	if (droce_gid_is_mcast(flow->dgid)) {
		droce_mcast_mac(flow->dgid, &flow->dst_mac);	/* a group: no ARP/ND */
		return 0;
	}
	if (unlikely(engine_is_our_gid(edev, flow->dgid))) {
		rte_ether_addr_copy(&edev->mac, &flow->dst_mac);	/* looped back at TX */
		return 0;
	}
	if (pos < 0) {
		pos = rte_hash_add_key(nt->h, flow->dgid);
		if (pos < 0)
			return -EAGAIN;	/* table full: entries free up as they fail */
		e = &nt->e[pos];
		memset(e, 0, sizeof(*e));
		memcpy(e->addr, flow->dgid, 16);
		start_resolution(lc, edev, e);
		return -EAGAIN;
	}
	e = &nt->e[pos];
	switch (e->state) {
	case NS_REACHABLE:
		if (env->now >= e->when) {	/* refresh, keep using the MAC meanwhile */
			e->when = env->now + engine_cfg.neigh_reachable_s * rte_get_tsc_hz();
			send_request(lc, edev, e);
		}
		/* fall through */
	case NS_STATIC:
		rte_ether_addr_copy(&e->mac, &flow->dst_mac);
		return 0;
	case NS_FAILED:
		if (env->now < e->when)
			return -EHOSTUNREACH;	/* no answer to the last requests */
		start_resolution(lc, edev, e);
		return -EAGAIN;
	default:
		return -EAGAIN;
	}
}

static void neigh_lock(struct neigh_table *nt);

int engine_neigh_lookup(struct engine_inst *lc, struct engine_shard *edev, const uint8_t addr[16],
			uint8_t mac[6])
{
	struct transport_env *env = &lc->env;
	struct droce_flow flow;
	int rc;

	engine_env_enter(lc);
	memset(&flow, 0, sizeof(flow));
	memcpy(flow.dgid, addr, 16);
	neigh_lock(edev->neigh);
	rc = resolve_locked(env, edev->dev, &flow);
	verbs_unlock(&edev->neigh->lock);
	if (rc == 0)
		memcpy(mac, flow.dst_mac.addr_bytes, 6);
	return rc;
}

/* One INCOMPLETE entry whose time came: another request, or give up. */
static unsigned int retry(struct engine_inst *lc, struct engine_shard *edev,
			  struct neigh_entry *e)
{
	uint64_t interval = ms_to_tsc(engine_cfg.neigh_retry_ms);

	if (e->tries >= engine_cfg.neigh_retries) {
		e->state = NS_FAILED;
		e->when = lc->env.now + interval;
		__atomic_fetch_sub(&edev->neigh->n_pending, 1, __ATOMIC_RELAXED);
		edev->cnt.neigh_failed++;
		__atomic_fetch_add(&edev->neigh->gen, 1, __ATOMIC_RELEASE);	/* their answer */
		return 0;
	}
	e->tries++;
	e->when = lc->env.now + interval;
	send_request(lc, edev, e);
	return 1;
}

static unsigned int timers_locked(struct engine_inst *lc, struct engine_shard *edev)
{
	struct neigh_table *nt = edev->neigh;
	const void *key;
	void *data;
	uint32_t iter = 0;
	uint64_t next = UINT64_MAX;
	unsigned int sent = 0;
	int32_t pos;

	if (nt->n_pending == 0 || lc->env.now < nt->next_check)
		return 0;
	while ((pos = rte_hash_iterate(nt->h, &key, &data, &iter)) >= 0) {
		struct neigh_entry *e = &nt->e[pos];

		if (e->state != NS_INCOMPLETE)
			continue;
		if (lc->env.now >= e->when)
			sent += retry(lc, edev, e);
		if (e->state == NS_INCOMPLETE && e->when < next)
			next = e->when;
	}
	nt->next_check = next;
	return sent;
}

/* ---- Receiving ---- */

static void rx_arp_locked(struct engine_inst *lc, struct engine_shard *edev,
			  struct rte_mbuf *m, uint32_t l3_off)
{
	const struct droce_device_cfg *cfg = verbs_device_cfg(edev->dev);
	const struct rte_arp_hdr *ah;
	uint8_t sender[16] = { [10] = 0xff, [11] = 0xff };
	bool for_us;

	if (m->data_len < l3_off + sizeof(*ah)) {
		edev->cnt.neigh_bad++;
		engine_drop(edev, ECNT_neigh_bad, m);
		return;
	}
	ah = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *, l3_off);
	if (ah->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
	    ah->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    ah->arp_hlen != RTE_ETHER_ADDR_LEN || ah->arp_plen != 4) {
		edev->cnt.neigh_bad++;
		engine_drop(edev, ECNT_neigh_bad, m);
		return;
	}
	for_us = cfg->has_ipv4 && memcmp(&ah->arp_data.arp_tip, cfg->ipv4, 4) == 0;
	memcpy(&sender[12], &ah->arp_data.arp_sip, 4);
	/* RFC 826: merge the sender into an entry we have; add it if the frame is for us. */
	if (ah->arp_data.arp_sip != 0)
		learn(lc, edev, sender, &ah->arp_data.arp_sha, for_us);
	if (for_us && ah->arp_opcode == RTE_BE16(RTE_ARP_OP_REQUEST)) {
		send_arp(lc, edev, RTE_ARP_OP_REPLY, &ah->arp_data.arp_sha,
			 &ah->arp_data.arp_sha, (const uint8_t *)&ah->arp_data.arp_sip);
		edev->cnt.neigh_reply_sent++;
	}
}

static const struct nd_msg *nd_check(struct engine_shard *edev, const struct rte_mbuf *m,
				     const struct rte_ipv6_hdr *ip, uint32_t l4_off)
{
	const struct nd_msg *nd = rte_pktmbuf_mtod_offset(m, const struct nd_msg *, l4_off);
	uint32_t len = rte_be_to_cpu_16(ip->payload_len);

	/* RFC 4861 7.1.1 / 7.1.2: hop limit 255, code 0, at least 24 bytes, valid checksum. */
	if (len < 24 || m->data_len < l4_off + len || ip->hop_limits != ND_HOP_LIMIT ||
	    nd->code != 0 || rte_ipv6_udptcp_cksum_verify(ip, nd) != 0) {
		edev->cnt.neigh_bad++;
		engine_drop(edev, ECNT_neigh_bad, m);
		return NULL;
	}
	return nd;
}

/* The link-layer address option of @p nd, or NULL (only the first option is looked at). */
static const struct rte_ether_addr *nd_lla(const struct nd_msg *nd, uint32_t len, uint8_t type)
{
	if (len < sizeof(*nd) || nd->opt_type != type || nd->opt_len != 1)
		return NULL;
	return &nd->opt_mac;
}

static void rx_ns(struct engine_inst *lc, struct engine_shard *edev,
		  const struct rte_ether_hdr *eh, const struct rte_ipv6_hdr *ip,
		  const struct nd_msg *nd, uint32_t len)
{
	static const uint8_t unspecified[16];
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };
	const struct rte_ether_addr *lla = nd_lla(nd, len, ND_OPT_SLLA);
	bool dad = memcmp(ip->src_addr, unspecified, 16) == 0;

	if (!engine_is_our_gid(edev, nd->target) || is_v4(nd->target))
		return;
	if (!dad)
		learn(lc, edev, ip->src_addr, lla != NULL ? lla : &eh->src_addr, true);
	/* RFC 4861 7.2.4: to the soliciting address; duplicate address detection (source ::)
	 * is answered to all-nodes without the solicited flag. */
	send_nd(lc, edev, dad ? &(struct rte_ether_addr){ .addr_bytes = { 0x33, 0x33, 0, 0,
		0, 1 } } : (lla != NULL ? lla : &eh->src_addr), nd->target,
		dad ? all_nodes : ip->src_addr, ND_NA,
		(dad ? 0 : ND_NA_SOLICITED) | ND_NA_OVERRIDE, nd->target);
	edev->cnt.neigh_reply_sent++;
}

static bool rx_icmp6_locked(struct engine_inst *lc, struct engine_shard *edev,
			    struct rte_mbuf *m, uint32_t l3_off)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv6_hdr *ip;
	const struct nd_msg *nd;
	uint32_t l4_off = l3_off + sizeof(*ip), len;
	uint8_t type;

	if (m->data_len < l4_off + 1)
		return false;
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, l3_off);
	type = *rte_pktmbuf_mtod_offset(m, const uint8_t *, l4_off);
	if (type != ND_NS && type != ND_NA)
		return false;
	nd = nd_check(edev, m, ip, l4_off);
	if (nd == NULL)
		return true;
	len = rte_be_to_cpu_16(ip->payload_len);
	if (type == ND_NS) {
		rx_ns(lc, edev, eh, ip, nd, len);
	} else {
		const struct rte_ether_addr *lla = nd_lla(nd, len, ND_OPT_TLLA);

		learn(lc, edev, nd->target, lla != NULL ? lla : &eh->src_addr, false);
	}
	return true;
}

/* ---- Entry points: under the table's lock ---- */

/*
 * Take @p nt's lock, yielding the CPU now and then: engine lcores may share CPUs (more lcores
 * than cores, idle_sleep_us), and spinning on a holder that is not running would burn the
 * rest of a time slice.
 */
static void neigh_lock(struct neigh_table *nt)
{
	unsigned int spins = 0;

	while (__atomic_exchange_n(&nt->lock.locked, 1, __ATOMIC_ACQUIRE) != 0) {
		while (__atomic_load_n(&nt->lock.locked, __ATOMIC_RELAXED) != 0) {
			if ((++spins & 63) == 0)
				sched_yield();
			else
				rte_pause();
		}
	}
}

uint32_t engine_neigh_gen(const struct engine_shard *edev)
{
	return __atomic_load_n(&edev->neigh->gen, __ATOMIC_ACQUIRE);
}

/* The transport's resolution, on its data path: never waits for the lock. Another shard
 * holding it is answered -EAGAIN, as a resolution under way is (the QP's TX waits for a
 * change of the table or TRANSPORT_PATH_RETRY_US: transport_path_park()). */
int engine_env_resolve(struct transport_env *env, struct droce_device *dev,
		       struct droce_flow *flow)
{
	struct neigh_table *nt = engine_shard_here(env, dev)->neigh;
	int rc;

	if (__atomic_exchange_n(&nt->lock.locked, 1, __ATOMIC_ACQUIRE) != 0)
		return -EAGAIN;
	rc = resolve_locked(env, dev, flow);
	verbs_unlock(&nt->lock);
	return rc;
}

unsigned int engine_neigh_timers(struct engine_inst *lc, struct engine_shard *edev)
{
	unsigned int n;

	if (__atomic_load_n(&edev->neigh->n_pending, __ATOMIC_RELAXED) == 0)
		return 0;	/* the common case, without the lock */
	neigh_lock(edev->neigh);
	n = timers_locked(lc, edev);
	verbs_unlock(&edev->neigh->lock);
	return n;
}

void engine_neigh_rx_arp(struct engine_inst *lc, struct engine_shard *edev, struct rte_mbuf *m,
			 uint32_t l3_off)
{
	neigh_lock(edev->neigh);
	rx_arp_locked(lc, edev, m, l3_off);
	verbs_unlock(&edev->neigh->lock);
}

bool engine_neigh_rx_icmp6(struct engine_inst *lc, struct engine_shard *edev,
			   struct rte_mbuf *m, uint32_t l3_off)
{
	bool nd;

	neigh_lock(edev->neigh);
	nd = rx_icmp6_locked(lc, edev, m, l3_off);
	verbs_unlock(&edev->neigh->lock);
	return nd;
}
