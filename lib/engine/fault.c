/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Fault injection for tests: a lossy link made from a good one. The frames the transport
 * transmits on a device (RoCE v2 only; ARP and ND are left alone) are dropped, duplicated or
 * held back behind later frames, each with a probability in per mille from [engine]
 * fault_drop, fault_dup, fault_reorder, drawn from a per-device PRNG seeded by fault_seed
 * and the port id. A held frame leaves after the next frame of the device, or at the latest
 * with the flush of the following iteration. Every fault is counted (fault_dropped,
 * fault_duplicated, fault_reordered).
 *
 * Off by default: the TX path then pays one predictable branch (engine_env_tx()). When on,
 * a duplicate is a copy from the instance's pool (an allocation on the packet path: this is
 * for tests, not for production).
 */
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

void engine_fault_start(struct engine_dev *edev)
{
	struct engine_fault *f = &edev->fault;

	f->drop = (uint16_t)engine_cfg.fault_drop;
	f->dup = (uint16_t)engine_cfg.fault_dup;
	f->reorder = (uint16_t)engine_cfg.fault_reorder;
	f->on = f->drop != 0 || f->dup != 0 || f->reorder != 0;
	f->rng = ((uint64_t)engine_cfg.fault_seed << 16) ^ edev->port;
	f->held = NULL;
	f->held_iters = 0;
}

void engine_fault_stop(struct engine_dev *edev)
{
	rte_pktmbuf_free(edev->fault.held);
	edev->fault.held = NULL;
}

static void release(struct engine_dev *edev)
{
	struct rte_mbuf *m = edev->fault.held;

	edev->fault.held = NULL;
	engine_dev_tx(edev, m);
}

void engine_fault_tx(struct engine_dev *edev, struct rte_mbuf *m)
{
	struct engine_fault *f = &edev->fault;
	struct rte_mbuf *copy = NULL;

	if (chance(f, f->drop)) {
		edev->cnt.fault_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (chance(f, f->dup)) {
		copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		if (copy != NULL)
			edev->cnt.fault_duplicated++;
		else
			edev->cnt.alloc_failed++;
	}
	if (f->held == NULL && chance(f, f->reorder)) {
		edev->cnt.fault_reordered++;
		f->held = m;
		f->held_iters = 0;
		m = NULL;
	}
	if (m != NULL) {
		engine_dev_tx(edev, m);
		if (f->held != NULL)
			release(edev);
	}
	if (copy != NULL)
		engine_dev_tx(edev, copy);
}

void engine_fault_release(struct engine_dev *edev)
{
	if (edev->fault.held_iters++ >= 1)
		release(edev);
}
