/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A congested link for tests and benchmarks ([engine] bottleneck_*): the RoCE frames a
 * device's QPs transmit go through a FIFO that drains at bottleneck_mbps (frame bytes, TSC
 * time), as the egress queue of a switch port would. An ECN-capable frame that finds more than
 * bottleneck_mark_kb queued is marked CE as RED with ECN marks (the DCQCN paper's switch
 * configuration): with a probability growing linearly from 0 there to bottleneck_mark_pmax
 * per mille at bottleneck_mark_max_kb, always above (equal thresholds: a step marker, as
 * DCTCP's); bneck_marked. A frame that would take the queue past bottleneck_limit_kb is
 * dropped (tail drop: bneck_dropped).
 * N QPs of one device sending to another through it are N senders into one bottleneck:
 * incast, reproducible on one machine (doc/congestion.md). ARP and ND frames bypass it.
 *
 * Off by default (bottleneck_mbps = 0): the TX path pays one predictable branch.
 */
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include "engine_private.h"

void engine_bneck_start(struct engine_shard *edev)
{
	struct engine_bneck *b = &edev->bneck;
	uint64_t hz = rte_get_tsc_hz();

	b->on = engine_cfg.bottleneck_mbps != 0;
	b->head = b->n = 0;
	b->bytes = 0;
	b->next = 0;
	if (!b->on)
		return;
	/* ticks per byte << 16 at bottleneck_mbps */
	b->tick_q16 = ((hz * 8) << 16) / ((uint64_t)engine_cfg.bottleneck_mbps * 1000000);
	b->mark = (uint64_t)engine_cfg.bottleneck_mark_kb * 1024;
	b->mark_max = RTE_MAX((uint64_t)engine_cfg.bottleneck_mark_max_kb * 1024, b->mark);
	b->pmax = engine_cfg.bottleneck_mark_pmax;
	b->limit = (uint64_t)engine_cfg.bottleneck_limit_kb * 1024;
	b->rng = ((uint64_t)engine_cfg.fault_seed << 16) ^ edev->port ^ 0x5eed;
}

/* RED's marking decision for a frame arriving at @p b's queue (xorshift64* draws). */
static bool red_mark(struct engine_bneck *b)
{
	uint64_t r, p;

	if (b->bytes <= b->mark)
		return false;
	if (b->bytes >= b->mark_max)
		return true;
	b->rng ^= b->rng >> 12;
	b->rng ^= b->rng << 25;
	b->rng ^= b->rng >> 27;
	r = (b->rng * 0x2545f4914f6cdd1dull) % (1000ull * 1024);
	/* pmax (per mille) * (bytes - mark) / (mark_max - mark), in 1/1024000 */
	p = b->pmax * 1024 * (b->bytes - b->mark) / (b->mark_max - b->mark);
	return r < p;
}

void engine_bneck_stop(struct engine_shard *edev)
{
	struct engine_bneck *b = &edev->bneck;

	for (; b->n != 0; b->n--, b->head = (b->head + 1) % ENGINE_BNECK_FRAMES)
		rte_pktmbuf_free(b->q[b->head]);
	b->bytes = 0;
}

void engine_bneck_tx(struct engine_shard *edev, struct rte_mbuf *m, uint64_t now)
{
	struct engine_bneck *b = &edev->bneck;
	uint32_t len = rte_pktmbuf_pkt_len(m);

	if (b->n == ENGINE_BNECK_FRAMES || b->bytes + len > b->limit) {
		edev->cnt.bneck_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (red_mark(b) && engine_mark_ce(m))
		edev->cnt.bneck_marked++;
	if (b->n == 0 && (int64_t)(now - b->next) > 0)
		b->next = now;	/* an idle link sends at once */
	b->q[(b->head + b->n) % ENGINE_BNECK_FRAMES] = m;
	b->n++;
	b->bytes += len;
}

void engine_bneck_drain(struct engine_shard *edev, uint64_t now)
{
	struct engine_bneck *b = &edev->bneck;

	while (b->n != 0 && (int64_t)(now - b->next) >= 0) {
		struct rte_mbuf *m = b->q[b->head];
		uint32_t len = rte_pktmbuf_pkt_len(m);

		b->head = (b->head + 1) % ENGINE_BNECK_FRAMES;
		b->n--;
		b->bytes -= len;
		b->next += ((uint64_t)len * b->tick_q16) >> 16;
		engine_shard_tx(edev, m);
	}
}
