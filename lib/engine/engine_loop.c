/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The engine loop. One iteration, the same for a dedicated lcore and for an inline caller:
 *   1. RX: a burst from every served port, classified and dispatched (engine_classify.c);
 *   2. TX: the active QPs (doorbell rung by droce_post_send(), or touched by the engine: RX,
 *      timer, modify) transmit up to ENGINE_BURST packets each, no more than their device's
 *      TX buffer has room for; a QP with no TX work left leaves the active list;
 *   3. timers: the transport deadlines that expired (timer heap), the links (every
 *      [engine] link_poll_ms) and neighbour retries;
 *   4. control: QP modify/destroy and engine calls (verbs_owner_poll(): the owner's mailbox),
 *      between data steps;
 *   5. TX flush: buffered frames to the ports.
 * The TSC is read once per iteration (transport_env.now), and once more at its end to count
 * the iteration's cycles as busy (it did work) or idle: the engine's health (engine_telemetry.c).
 */
#include <rte_cycles.h>
#include <rte_lcore.h>

#include "engine_private.h"

/* Expired transport timers handled per iteration: a transport that fails to move its
 * deadline cannot stall the loop. */
#define TIMEOUTS_PER_ITER 64
#define IDLE_BEFORE_SLEEP 1024

/* TX room kept free for what the RX path and the timers emit unasked (ACKs, NAKs). */
#define TX_RESERVE (2u * ENGINE_BURST)

/* A doorbell rang for @p slot (verbs_owner_doorbells()): visit its QP. */
static void doorbell(void *arg, uint32_t slot)
{
	struct engine_inst *lc = arg;
	struct engine_qp *eq = lc->by_slot[slot];

	if (eq != NULL)	/* NULL: destroyed since it rang */
		engine_qp_activate(lc, eq);
}

/* Room in the device buffer beyond what the RX path and the timers may need. */
static bool tx_room(const struct engine_shard *edev)
{
	return (unsigned int)(ENGINE_TXBUF - edev->n_tx) > TX_RESERVE;
}

/*
 * Backpressure: a QP transmits only what its device's TX buffer can take, so a port that
 * lags (a full ring, a slow peer) holds new packets back in the SQ instead of making the
 * engine drop them and the transport retransmit them. A QP held back stays active.
 */
static unsigned int tx_one(struct engine_inst *lc, struct engine_qp *eq)
{
	unsigned int room = ENGINE_TXBUF - eq->edev->n_tx;
	unsigned int n;

	if (!tx_room(eq->edev) || !transport_tx_pending(eq->t))
		return 0;
	n = transport_tx(&lc->env, eq->t, RTE_MIN((unsigned int)ENGINE_BURST, room - TX_RESERVE));
	engine_timers_set(&lc->timers, eq, transport_deadline(eq->t));
	return n;
}

/*
 * Does @p eq stay active? Only when it has no TX work is it disarmed, and then re-checked: a
 * post that published its SQ head before the disarm is seen by the re-check, one after it
 * rings the doorbell again (the disarm's exchange pairs with verbs_qp_db_ring()'s). So is a
 * CQ overrun, which marks the QP fatal before it rings: a mark made before a ring that found
 * the QP armed is applied here, after the disarm. A QP in ERR stays: droce_post_recv() rings
 * no doorbell, and in ERR a receive WQE must be flushed.
 */
static bool keep_active(struct engine_qp *eq)
{
	if (transport_tx_pending(eq->t))
		return true;
	verbs_qp_db_disarm(eq->qp);
	transport_apply_fatal(eq->t);
	return transport_tx_pending(eq->t) || verbs_qp_cur_state(eq->qp) == IBV_QPS_ERR;
}

/*
 * One device's TX pass, O(its QPs with work). It starts where the previous pass found the
 * device buffer full, so that when the port lags every active QP gets its turn: a QP always
 * last in line would never retransmit, and its retry timer would count tries it never made.
 */
static unsigned int tx_dev(struct engine_inst *lc, struct engine_shard *edev)
{
	unsigned int k, n = edev->n_active, i, work = 0;

	i = n != 0 ? edev->tx_next % n : 0;
	edev->tx_next = 0;
	for (k = 0; k < n && edev->n_active != 0; k++) {
		struct engine_qp *eq;

		if (i >= edev->n_active)
			i = 0;
		if (!tx_room(edev)) {
			/* The port lags: the rest keep their work and their places. */
			edev->tx_next = i;
			break;
		}
		eq = edev->active[i];
		work += tx_one(lc, eq);
		if (keep_active(eq))
			i++;
		else
			engine_qp_deactivate(lc, eq);	/* the last one moves to i: visit it next */
	}
	return work;
}

/*
 * The device's neighbour table changed (an address resolved or failed): the QPs of this shard
 * whose path waited try again now rather than at their deadline. One atomic load per device
 * and iteration otherwise.
 */
static void path_wake(struct engine_inst *lc, struct engine_shard *edev)
{
	uint32_t gen = engine_neigh_gen(edev), i;

	if (likely(gen == edev->neigh_seen))
		return;
	edev->neigh_seen = gen;
	for (i = 0; i < lc->n_qps; i++) {
		struct engine_qp *eq = lc->qps[i];

		if (eq->edev == edev && eq->t != NULL && transport_path_wake(eq->t))
			engine_qp_rearm(lc, eq);
	}
}

static unsigned int tx_qps(struct engine_inst *lc)
{
	unsigned int d, work = 0;

	verbs_owner_doorbells(&lc->owner, doorbell, lc);
	for (d = 0; d < lc->n_dev; d++) {
		path_wake(lc, lc->devs[d]);
		work += tx_dev(lc, lc->devs[d]);
	}
	return work;
}

static unsigned int fire_timers(struct engine_inst *lc)
{
	struct engine_qp *eq;
	unsigned int n = 0;

	while (n < TIMEOUTS_PER_ITER &&
	       (eq = engine_timers_expired(&lc->timers, lc->env.now)) != NULL) {
		transport_timeout(&lc->env, eq->t);
		engine_qp_rearm(lc, eq);
		n++;
	}
	return n;
}

/* Add to a health counter: the instance is its only writer, readers load it relaxed. */
static inline void health_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static void health(struct engine_inst *lc, unsigned int work)
{
	uint64_t spent = rte_rdtsc() - lc->env.now;

	health_add(work != 0 ? &lc->busy_cycles : &lc->idle_cycles, spent);
	health_add(&lc->iterations, 1);
}

unsigned int engine_iteration(struct engine_inst *lc)
{
	unsigned int i, work = 0;

	engine_env_enter(lc);
	for (i = 0; i < lc->n_dev; i++)
		if (lc->devs[i]->started)
			work += engine_rx(lc, lc->devs[i]);
	work += tx_qps(lc);
	work += fire_timers(lc);
	work += engine_link_tick(lc);
	for (i = 0; i < lc->n_dev; i++)
		if (lc->devs[i]->queue == 0 && lc->devs[i]->started)
			work += engine_neigh_timers(lc, lc->devs[i]);
	work += verbs_owner_poll(&lc->owner);	/* QP control and engine calls */
	for (i = 0; i < lc->n_dev; i++) {
		if (!lc->devs[i]->started)
			continue;
		engine_fault_tick(lc->devs[i], lc->env.now);
		if (unlikely(lc->devs[i]->bneck.n != 0))
			engine_bneck_drain(lc->devs[i], lc->env.now);
		work += engine_shard_flush(lc->devs[i]);
		if (unlikely(lc->devs[i]->kick_at != 0) && lc->env.now >= lc->devs[i]->kick_at)
			engine_shard_kick(lc->devs[i]);
	}
	health(lc, work);
	return work;
}

unsigned int engine_idle_sleep_next(const struct engine_config *c, unsigned int prev)
{
	unsigned int next = RTE_MIN(prev * 2u, c->idle_sleep_max_us);	/* prev <= 1 s */

	return prev == 0 ? c->idle_sleep_us : RTE_MAX(next, c->idle_sleep_us);
}

int engine_lcore_main(void *arg)
{
	struct engine_inst *lc = arg;
	unsigned int idle = 0, sleep_us = 0;

	ENGINE_LOG(INFO, "lcore %u: engine running", lc->lcore_id);
	while (!__atomic_load_n(&lc->stop, __ATOMIC_ACQUIRE)) {
		if (engine_iteration(lc) != 0) {
			idle = 0;
			sleep_us = 0;
		} else if (++idle >= IDLE_BEFORE_SLEEP && engine_cfg.idle_sleep_us != 0) {
			/* Idle: give the core away briefly (never while there is work), for
			 * longer while it stays idle (idle_sleep_max_us). */
			uint64_t t0 = rte_rdtsc();

			sleep_us = engine_idle_sleep_next(&engine_cfg, sleep_us);
			rte_delay_us_sleep(sleep_us);
			health_add(&lc->idle_cycles, rte_rdtsc() - t0);
			idle = IDLE_BEFORE_SLEEP;
		}
	}
	ENGINE_LOG(INFO, "lcore %u: engine stopped", lc->lcore_id);
	return 0;
}
