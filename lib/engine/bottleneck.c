/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A congested link for tests and benchmarks ([engine] bottleneck_mbps, bottleneck_mark_kb,
 * bottleneck_limit_kb): the RoCE frames a device's QPs transmit go through a FIFO that
 * drains at bottleneck_mbps (frame bytes, TSC time), as the egress queue of a switch port
 * would. A frame that finds more than bottleneck_mark_kb queued is marked CE if it is
 * ECN-capable (a step marker, as DCTCP and DCQCN deployments configure RED: bneck_marked); one
 * that would take the queue past bottleneck_limit_kb is dropped (tail drop: bneck_dropped).
 * N QPs of one device sending to another through it are N senders into one bottleneck:
 * incast, reproducible on one machine (doc/congestion.md). ARP and ND frames bypass it.
 *
 * Off by default (bottleneck_mbps = 0): the TX path pays one predictable branch.
 */
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include "engine_private.h"

void engine_bneck_start(struct engine_dev *edev)
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
	b->limit = (uint64_t)engine_cfg.bottleneck_limit_kb * 1024;
}

void engine_bneck_stop(struct engine_dev *edev)
{
	struct engine_bneck *b = &edev->bneck;

	for (; b->n != 0; b->n--, b->head = (b->head + 1) % ENGINE_BNECK_FRAMES)
		rte_pktmbuf_free(b->q[b->head]);
	b->bytes = 0;
}

void engine_bneck_tx(struct engine_dev *edev, struct rte_mbuf *m, uint64_t now)
{
	struct engine_bneck *b = &edev->bneck;
	uint32_t len = rte_pktmbuf_pkt_len(m);

	if (b->n == ENGINE_BNECK_FRAMES || b->bytes + len > b->limit) {
		edev->cnt.bneck_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (b->bytes > b->mark && engine_mark_ce(m))
		edev->cnt.bneck_marked++;
	if (b->n == 0 && (int64_t)(now - b->next) > 0)
		b->next = now;	/* an idle link sends at once */
	b->q[(b->head + b->n) % ENGINE_BNECK_FRAMES] = m;
	b->n++;
	b->bytes += len;
}

void engine_bneck_drain(struct engine_dev *edev, uint64_t now)
{
	struct engine_bneck *b = &edev->bneck;

	while (b->n != 0 && (int64_t)(now - b->next) >= 0) {
		struct rte_mbuf *m = b->q[b->head];
		uint32_t len = rte_pktmbuf_pkt_len(m);

		b->head = (b->head + 1) % ENGINE_BNECK_FRAMES;
		b->n--;
		b->bytes -= len;
		b->next += ((uint64_t)len * b->tick_q16) >> 16;
		engine_dev_tx(edev, m);
	}
}
