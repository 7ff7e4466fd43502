/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The [engine] section of the configuration (verbs keeps it as key = value pairs):
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
 *   start_wait_ms = MS       a port whose start fails for want of its peer (net_memif as a
 *                            client with no server listening: EIO) is started again every
 *                            50 ms for up to MS when a device opens (0, the default: fails)
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

static int parse_uint(const char *v, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long x;

	if (v[0] == '\0')
		return 0;	/* empty: keep the default */
	x = strtoul(v, &end, 0);
	if (end == v || *end != '\0' || x > max)
		return -EINVAL;
	*out = (unsigned int)x;
	return 0;
}

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

static int parse_key(struct engine_config *c, const char *k, const char *v)
{
	if (strcmp(k, "lcores") == 0)
		return parse_lcores(c, v);
	if (strcmp(k, "lcores_per_device") == 0) {
		if (strcmp(v, "all") == 0) {
			c->per_device = 0;	/* resolved after the list: every lcore */
			return 0;
		}
		return parse_uint(v, ENGINE_MAX_LCORES, &c->per_device) < 0 ||
		       c->per_device == 0 ? -EINVAL : 0;
	}
	if (strcmp(k, "mbufs") == 0)
		return parse_uint(v, 1u << 24, &c->mbufs);
	if (strcmp(k, "mbuf_size") == 0)
		return parse_uint(v, UINT16_MAX, &c->mbuf_size);
	if (strcmp(k, "rxd") == 0)
		return parse_uint(v, 32768, &c->rxd);
	if (strcmp(k, "txd") == 0)
		return parse_uint(v, 32768, &c->txd);
	if (strcmp(k, "idle_sleep_us") == 0)
		return parse_uint(v, 1000000, &c->idle_sleep_us);
	if (strcmp(k, "idle_sleep_max_us") == 0)
		return parse_uint(v, 1000000, &c->idle_sleep_max_us);
	if (strcmp(k, "neigh_retry_ms") == 0)
		return parse_uint(v, 60000, &c->neigh_retry_ms);
	if (strcmp(k, "neigh_retries") == 0)
		return parse_uint(v, 100, &c->neigh_retries);
	if (strcmp(k, "neigh_reachable_s") == 0)
		return parse_uint(v, 86400, &c->neigh_reachable_s);
	if (strcmp(k, "link_poll_ms") == 0)
		return parse_uint(v, 60000, &c->link_poll_ms);
	if (strcmp(k, "start_wait_ms") == 0)
		return parse_uint(v, 600000, &c->start_wait_ms);
	if (strcmp(k, "pdump") == 0)
		return parse_uint(v, 1, &c->pdump);
	if (strcmp(k, "tx_zero_copy") == 0)
		return parse_uint(v, 1, &c->tx_zero_copy);
	if (strcmp(k, "fault_drop") == 0)
		return parse_uint(v, 1000, &c->fault_drop);
	if (strcmp(k, "fault_dup") == 0)
		return parse_uint(v, 1000, &c->fault_dup);
	if (strcmp(k, "fault_reorder") == 0)
		return parse_uint(v, 1000, &c->fault_reorder);
	if (strcmp(k, "fault_delay") == 0)
		return parse_uint(v, 1000, &c->fault_delay);
	if (strcmp(k, "fault_delay_us") == 0)
		return parse_uint(v, 1000000, &c->fault_delay_us);
	if (strcmp(k, "fault_corrupt") == 0)
		return parse_uint(v, 1000, &c->fault_corrupt);
	if (strcmp(k, "fault_ce") == 0)
		return parse_uint(v, 1000, &c->fault_ce);
	if (strcmp(k, "fault_ce_frames") == 0)
		return parse_uint(v, UINT32_MAX - 1, &c->fault_ce_frames);
	if (strcmp(k, "bottleneck_mbps") == 0)
		return parse_uint(v, 4000000, &c->bottleneck_mbps);
	if (strcmp(k, "bottleneck_mark_kb") == 0)
		return parse_uint(v, 1u << 20, &c->bottleneck_mark_kb);
	if (strcmp(k, "bottleneck_mark_max_kb") == 0)
		return parse_uint(v, 1u << 20, &c->bottleneck_mark_max_kb);
	if (strcmp(k, "bottleneck_mark_pmax") == 0)
		return parse_uint(v, 1000, &c->bottleneck_mark_pmax);
	if (strcmp(k, "bottleneck_limit_kb") == 0)
		return parse_uint(v, 1u << 20, &c->bottleneck_limit_kb);
	if (strcmp(k, "fault_seed") == 0)
		return parse_uint(v, UINT32_MAX, &c->fault_seed);
	if (strcmp(k, "log_counters") == 0)
		return parse_uint(v, 1, &c->log_counters);
	return -EINVAL;
}

int engine_config_load(struct engine_config *c)
{
	const struct verbs_kv *kv;
	unsigned int n = verbs_engine_config(&kv);

	return engine_config_from(c, kv, n);
}

int engine_config_from(struct engine_config *c, const struct verbs_kv *kv, unsigned int n)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->inline_mode = true;
	c->per_device = 1;
	c->mbufs = 8191;
	c->rxd = 1024;
	c->txd = 1024;
	c->neigh_retry_ms = 1000;
	c->neigh_retries = 3;
	c->neigh_reachable_s = 30;
	c->link_poll_ms = 10;
	c->pdump = 1;
	c->tx_zero_copy = 1;
	c->fault_delay_us = 100;
	c->bottleneck_mark_kb = 64;
	c->bottleneck_mark_pmax = 1000;
	c->bottleneck_limit_kb = 1024;
	for (i = 0; i < n; i++) {
		if (parse_key(c, kv[i].key, kv[i].value) < 0) {
			ENGINE_LOG(ERR, "[engine] bad key or value: %s = %s", kv[i].key,
				   kv[i].value);
			return -EINVAL;
		}
	}
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
	if (c->mbufs < 2 * ENGINE_TXBUF || c->neigh_retry_ms == 0) {
		ENGINE_LOG(ERR, "[engine] mbufs below %u or neigh_retry_ms 0", 2 * ENGINE_TXBUF);
		return -EINVAL;
	}
	return 0;
}
