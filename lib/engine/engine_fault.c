/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Fault injection for tests: a lossy link made from a good one. The frames the transport
 * transmits on a device (RoCE v2 only; ARP and ND are left alone) are dropped, corrupted,
 * duplicated, delayed or held back behind later frames, each with a probability in per mille
 * from [engine] fault_drop, fault_corrupt, fault_dup, fault_delay, fault_reorder, drawn from a
 * per-device PRNG seeded by fault_seed and the port id (so a single-threaded run replays the
 * same faults). A held frame leaves after the next frame of the device, or at the latest with
 * the flush of the following iteration; a delayed one with the first flush fault_delay_us
 * after it was sent. A corrupted frame is a copy with one bit flipped after the BTH, where
 * the parser checks nothing but the ICRC: the receiver must reject it as BAD_ICRC. Every
 * fault is counted (fault_dropped, fault_corrupted, fault_duplicated, fault_delayed,
 * fault_reordered). fault_ce marks ECN-capable frames Congestion Experienced, as a congested
 * switch would, fault_ce_frames of them at most (fault_ce_marked): the DCQCN tests' fabric.
 *
 * Off by default: the TX path then pays one predictable branch (engine_env_tx()). When on,
 * a duplicate or a corrupted frame is a copy from the instance's pool (an allocation on the
 * packet path: this is for tests, not for production). The original of a corrupted frame is
 * not touched: the transport may still hold it for a retransmission.
 */
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include "engine_private.h"

/* splitmix64: small, seedable, good enough to decide faults. */
static uint64_t next_rand(struct engine_fault *f)
{
	uint64_t z = (f->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool chance(struct engine_fault *f, uint16_t per_mille)
{
	return per_mille != 0 && next_rand(f) % 1000 < per_mille;
}

void engine_fault_start(struct engine_shard *edev)
{
	struct engine_fault *f = &edev->fault;

	f->drop = (uint16_t)engine_cfg.fault_drop;
	f->dup = (uint16_t)engine_cfg.fault_dup;
	f->reorder = (uint16_t)engine_cfg.fault_reorder;
	f->delay = (uint16_t)engine_cfg.fault_delay;
	f->corrupt = (uint16_t)engine_cfg.fault_corrupt;
	f->ce = (uint16_t)engine_cfg.fault_ce;
	f->ce_left = engine_cfg.fault_ce_frames != 0 ? engine_cfg.fault_ce_frames : UINT32_MAX;
	f->on = f->drop != 0 || f->dup != 0 || f->reorder != 0 || f->delay != 0 ||
		f->corrupt != 0 || f->ce != 0;
	f->rng = ((uint64_t)engine_cfg.fault_seed << 16) ^ edev->port;
	f->held = NULL;
	f->held_iters = 0;
	f->delay_tsc = rte_get_tsc_hz() / 1000000 * engine_cfg.fault_delay_us;
	f->d_head = 0;
	f->d_n = 0;
}

void engine_fault_stop(struct engine_shard *edev)
{
	struct engine_fault *f = &edev->fault;

	rte_pktmbuf_free(f->held);
	f->held = NULL;
	for (; f->d_n != 0; f->d_n--, f->d_head = (f->d_head + 1) % ENGINE_FAULT_DELAYED)
		rte_pktmbuf_free(f->delayed[f->d_head]);
}

/* Bytes from the end of the BTH to the end of the IP packet (ICRC included), 0 if unknown. */
static uint32_t after_bth(const struct rte_mbuf *m, uint32_t *off)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip4 = (const void *)(eth + 1);
	const struct rte_ipv6_hdr *ip6 = (const void *)(eth + 1);
	uint32_t l3 = sizeof(*eth), l4, end;

	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
		l4 = l3 + rte_ipv4_hdr_len(ip4);
		end = l3 + rte_be_to_cpu_16(ip4->total_length);
	} else if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6)) {
		l4 = l3 + sizeof(*ip6);
		end = l4 + rte_be_to_cpu_16(ip6->payload_len);
	} else {
		return 0;
	}
	*off = l4 + 8 + 12;	/* UDP, BTH */
	return end > *off && end <= m->pkt_len ? end - *off : 0;
}

/* A copy of @p m with one random bit flipped after the BTH (NULL: not possible). */
static struct rte_mbuf *corrupt_copy(struct engine_shard *edev, const struct rte_mbuf *m)
{
	struct rte_mbuf *c, *seg;
	uint32_t off, len = after_bth(m, &off), bit;

	if (len == 0)
		return NULL;
	c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
	if (c == NULL) {
		edev->cnt.alloc_failed++;
		return NULL;
	}
	bit = (uint32_t)(next_rand(&edev->fault) % (len * 8));
	off += bit / 8;
	for (seg = c; off >= seg->data_len; seg = seg->next)
		off -= seg->data_len;
	*rte_pktmbuf_mtod_offset(seg, uint8_t *, off) ^= (uint8_t)(1u << (bit % 8));
	return c;
}

/* Queue @p m to leave delay_tsc after @p now; false when the queue is full. */
static bool delay(struct engine_fault *f, struct rte_mbuf *m, uint64_t now)
{
	unsigned int tail = (f->d_head + f->d_n) % ENGINE_FAULT_DELAYED;

	if (f->d_n == ENGINE_FAULT_DELAYED)
		return false;
	f->delayed[tail] = m;
	f->due[tail] = now + f->delay_tsc;
	f->d_n++;
	return true;
}

static void release(struct engine_shard *edev)
{
	struct rte_mbuf *m = edev->fault.held;

	edev->fault.held = NULL;
	engine_shard_tx(edev, m);
}

/* @p m, or in its place a copy with one bit flipped (counted; the original is freed). */
static struct rte_mbuf *maybe_corrupt(struct engine_shard *edev, struct rte_mbuf *m, bool *bad)
{
	struct rte_mbuf *c;

	*bad = false;
	if (!chance(&edev->fault, edev->fault.corrupt) || (c = corrupt_copy(edev, m)) == NULL)
		return m;
	edev->cnt.fault_corrupted++;
	rte_pktmbuf_free(m);
	*bad = true;
	return c;
}

/* A copy of @p m to send after it, or NULL; a copy of a corrupted frame is one more. */
static struct rte_mbuf *maybe_dup(struct engine_shard *edev, struct rte_mbuf *m, bool bad)
{
	struct rte_mbuf *copy;

	if (!chance(&edev->fault, edev->fault.dup))
		return NULL;
	copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
	if (copy == NULL) {
		edev->cnt.alloc_failed++;
		return NULL;
	}
	edev->cnt.fault_duplicated++;
	edev->cnt.fault_corrupted += bad;
	return copy;
}

bool engine_mark_ce(struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	if (m->data_len < sizeof(*eth) + sizeof(struct rte_ipv6_hdr))
		return false;
	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);

		if ((ip->type_of_service & DROCE_ECN_MASK) == 0 ||
		    (ip->type_of_service & DROCE_ECN_MASK) == DROCE_ECN_CE)
			return false;
		ip->type_of_service |= DROCE_ECN_CE;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	} else if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6)) {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eth + 1);
		uint32_t vtc = rte_be_to_cpu_32(ip->vtc_flow), ecn = (vtc >> 20) & DROCE_ECN_MASK;

		if (ecn == 0 || ecn == DROCE_ECN_CE)
			return false;
		ip->vtc_flow = rte_cpu_to_be_32(vtc | (uint32_t)DROCE_ECN_CE << 20);
	} else {
		return false;
	}
	return true;
}

void engine_fault_tx(struct engine_shard *edev, struct rte_mbuf *m, uint64_t now)
{
	struct engine_fault *f = &edev->fault;
	struct rte_mbuf *copy;
	bool bad;

	if (f->ce_left != 0 && chance(f, f->ce) && engine_mark_ce(m)) {
		f->ce_left--;
		edev->cnt.fault_ce_marked++;
	}
	if (chance(f, f->drop)) {
		edev->cnt.fault_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	m = maybe_corrupt(edev, m, &bad);
	copy = maybe_dup(edev, m, bad);
	if (chance(f, f->delay) && delay(f, m, now)) {
		edev->cnt.fault_delayed++;
		m = NULL;
	} else if (f->held == NULL && chance(f, f->reorder)) {
		edev->cnt.fault_reordered++;
		f->held = m;
		f->held_iters = 0;
		m = NULL;
	}
	if (m != NULL) {
		engine_shard_tx(edev, m);
		if (f->held != NULL)
			release(edev);
	}
	if (copy != NULL)
		engine_shard_tx(edev, copy);
}

void engine_fault_release(struct engine_shard *edev, uint64_t now)
{
	struct engine_fault *f = &edev->fault;

	if (f->held != NULL && f->held_iters++ >= 1)
		release(edev);
	while (f->d_n != 0 && (int64_t)(now - f->due[f->d_head]) >= 0) {
		engine_shard_tx(edev, f->delayed[f->d_head]);
		f->d_head = (f->d_head + 1) % ENGINE_FAULT_DELAYED;
		f->d_n--;
	}
}
