/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The [engine] section of the configuration (verbs keeps it as key = value pairs, checked
 * against the key table, verbs_config.h, which holds each key's default and range;
 * doc/configuration.md is its reference):
 *
 *   lcores = [auto | LIST]   engine lcores: empty = inline (droce_engine_poll()); auto = the
 *                            first EAL worker lcore, inline if there is none; LIST = worker
 *                            lcore ids, "1,3" or "1-2"
 *   lcores_per_device = N|all
 *                            engine lcores serving each device (1; all: every engine lcore),
 *                            each polling a queue pair of its own; dedicated lcores only
 *   mbufs = N                mbufs per engine instance pool (8191)
 *   mbuf_size = BYTES        mbuf data room (0: fits the largest device MTU in one segment)
 *   rxd = N, txd = N         descriptors per port queue (1024)
 *   idle_sleep_us = US       a dedicated lcore idle for 1024 iterations sleeps US (0: spin)
 *   idle_sleep_max_us = US   while it stays idle, each sleep doubles up to US (0, the
 *                            default: every sleep is idle_sleep_us); at least idle_sleep_us
 *   neigh_retry_ms = MS      ARP/NS retransmission interval (1000)
 *   neigh_retries = N        requests before a resolution is given up (3)
 *   neigh_reachable_s = S    a learned neighbour is re-resolved after S seconds (30)
 *   link_poll_ms = MS        poll the served ports' links every MS (10); 0: links are not
 *                            followed (ports ACTIVE while they exist, frames always sent)
 *   tx_zero_copy = 0|1       send payloads of 512 bytes and more straight from the registered
 *                            memory (mbufs attached to it as external buffers) on ports that
 *                            pass frames within this process (net_ring); 1, the default
 *   pdump = 0|1              let dpdk-dumpcap capture the ports (rte_pdump_init(); 1, the
 *                            default: works in a primary process with shared config)
 *   fault_drop = N, fault_dup = N, fault_reorder = N, fault_delay = N, fault_corrupt = N,
 *   fault_delay_us = US, fault_seed = S
 *                            fault injection on every device's RoCE TX path, per mille of
 *                            frames (0: off, the default), delayed frames held US
 *                            microseconds (100), PRNG seed S (engine_fault.c; for tests)
 *   fault_ce = N, fault_ce_frames = M
 *                            mark N per mille of the ECN-capable RoCE frames sent CE
 *                            (Congestion Experienced), at most M frames per device (0: no
 *                            limit): a congested switch, for tests (engine_fault.c)
 *   bottleneck_mbps = M, bottleneck_mark_kb = K, bottleneck_mark_max_kb = X,
 *   bottleneck_mark_pmax = P, bottleneck_limit_kb = L
 *                            a congested link, for tests and benchmarks: each device's RoCE
 *                            frames leave through a FIFO draining at M Mbit/s (0: off, the
 *                            default), marked CE as RED does from K KiB queued (64) with a
 *                            probability reaching P per mille (1000) at X KiB (K: a step),
 *                            always above X; dropped above L KiB (1024) (engine_bottleneck.c)
 *   log_counters = 0|1       when a device closes (its last context, or the process ends
 *                            through the drop-in), log its counters that are not 0 (0, the
 *                            default): what a short-lived program such as perftest did on the
 *                            wire, without telemetry
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>

#include "engine_private.h"
#include "verbs_config.h"

static int add_lcore(struct engine_config *c, unsigned long id)
{
	unsigned int i;

	if (id >= RTE_MAX_LCORE || !rte_lcore_is_enabled((unsigned int)id) ||
	    id == rte_get_main_lcore() || c->n_lcores == ENGINE_MAX_LCORES)
		return -EINVAL;
	for (i = 0; i < c->n_lcores; i++)
		if (c->lcores[i] == id)
			return -EINVAL;
	c->lcores[c->n_lcores++] = (unsigned int)id;
	return 0;
}

/* "1,3" or "1-2,4": worker lcores of this EAL. */
static int parse_lcore_list(struct engine_config *c, const char *v)
{
	unsigned long a, b;
	char *end;

	while (*v != '\0') {
		a = strtoul(v, &end, 10);
		if (end == v)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			v = end + 1;
			b = strtoul(v, &end, 10);
			if (end == v || b < a)
				return -EINVAL;
		}
		for (; a <= b; a++)
			if (add_lcore(c, a) < 0)
				return -EINVAL;
		v = end;
		while (*v == ',' || *v == ' ')
			v++;
	}
	return 0;
}

static int parse_lcores(struct engine_config *c, const char *v)
{
	unsigned int id;

	c->n_lcores = 0;
	if (v[0] == '\0') {
		c->inline_mode = true;
		return 0;
	}
	if (strcmp(v, "auto") == 0) {
		id = rte_get_next_lcore(-1, 1, 0);
		c->inline_mode = id >= RTE_MAX_LCORE;
		if (!c->inline_mode)
			c->lcores[c->n_lcores++] = id;
		return 0;
	}
	c->inline_mode = false;
	return parse_lcore_list(c, v);
}

/* The keys the table (verbs_config.h) types as numbers, and where they go. */
#define ENGINE_UINT_KEYS(X) \
	X(mbufs) X(mbuf_size) X(rxd) X(txd) X(idle_sleep_us) X(idle_sleep_max_us) \
	X(neigh_retry_ms) X(neigh_retries) X(neigh_reachable_s) X(link_poll_ms) X(pdump) \
	X(tx_zero_copy) X(fault_drop) X(fault_dup) X(fault_reorder) X(fault_delay) \
	X(fault_delay_us) X(fault_corrupt) X(fault_ce) X(fault_ce_frames) X(bottleneck_mbps) \
	X(bottleneck_mark_kb) X(bottleneck_mark_max_kb) X(bottleneck_mark_pmax) \
	X(bottleneck_limit_kb) X(fault_seed) X(log_counters)

static void take_uints(struct engine_config *c, const struct verbs_kv *kv, unsigned int n)
{
#define TAKE(k) c->k = verbs_cfg_uint("engine", kv, n, #k);
	ENGINE_UINT_KEYS(TAKE)
#undef TAKE
}

/* lcores and lcores_per_device: what the table cannot say (lcores of this EAL, "all"). */
static int take_lcores(struct engine_config *c, const struct verbs_kv *kv, unsigned int n)
{
	unsigned int i;

	c->inline_mode = true;
	c->per_device = verbs_cfg_uint("engine", kv, n, "lcores_per_device");
	for (i = 0; i < n; i++) {
		if (strcmp(kv[i].key, "lcores") == 0 && parse_lcores(c, kv[i].value) < 0) {
			ENGINE_LOG(ERR, "[engine] lcores = %s: not worker lcores of this EAL "
				   "(its lcores: the -l/--lcores of [eal] args; the main lcore is "
				   "not one)", kv[i].value);
			return -EINVAL;
		}
		if (strcmp(kv[i].key, "lcores_per_device") == 0 &&
		    strcmp(kv[i].value, "all") == 0)
			c->per_device = 0;	/* resolved after the list: every lcore */
	}
	return 0;
}

int engine_config_load(struct engine_config *c)
{
	const struct verbs_kv *kv;
	unsigned int n = verbs_engine_config(&kv);

	return engine_config_from(c, kv, n);
}

int engine_config_from(struct engine_config *c, const struct verbs_kv *kv, unsigned int n)
{
	memset(c, 0, sizeof(*c));
	if (verbs_cfg_check_kv("engine", kv, n) < 0 || take_lcores(c, kv, n) < 0)
		return -EINVAL;
	take_uints(c, kv, n);
	if (c->per_device == 0)	/* all */
		c->per_device = c->inline_mode ? 1 : c->n_lcores;
	if (c->per_device > (c->inline_mode ? 1 : c->n_lcores)) {
		ENGINE_LOG(ERR, "[engine] lcores_per_device %u: %s", c->per_device,
			   c->inline_mode ? "the inline engine is one instance" :
			   "more than the engine lcores");
		return -EINVAL;
	}
	if (c->idle_sleep_max_us != 0 && c->idle_sleep_max_us < c->idle_sleep_us) {
		ENGINE_LOG(ERR, "[engine] idle_sleep_max_us %u below idle_sleep_us %u",
			   c->idle_sleep_max_us, c->idle_sleep_us);
		return -EINVAL;
	}
	if (c->idle_sleep_max_us != 0 && c->idle_sleep_us == 0) {
		ENGINE_LOG(ERR, "[engine] idle_sleep_max_us without idle_sleep_us (lcores spin)");
		return -EINVAL;
	}
	RTE_VERIFY(c->mbufs >= 2 * ENGINE_TXBUF && c->neigh_retry_ms != 0);	/* the table's */
	return 0;
}
