/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The [engine] section of the configuration into struct engine_config. verbs keeps it as
 * key = value pairs checked against the key table (verbs_config.h), which holds each key's
 * type, default, range and meaning (doc/configuration.md); here the values are taken from it,
 * and what the table cannot check is: lcores against this EAL's worker lcores,
 * lcores_per_device against the engine lcores, idle_sleep_max_us against idle_sleep_us.
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
	X(neigh_retry_ms) X(neigh_retries) X(neigh_reachable_s) X(link_poll_ms) \
	X(start_wait_ms) X(link_wait_ms) X(pdump) X(tx_zero_copy) \
	X(tx_checksum_offload) X(fault_drop) X(fault_dup) \
	X(fault_reorder) X(fault_delay) \
	X(fault_delay_us) X(fault_corrupt) X(fault_ce) X(fault_ce_frames) X(bottleneck_mbps) \
	X(bottleneck_mark_kb) X(bottleneck_mark_max_kb) X(bottleneck_mark_pmax) \
	X(bottleneck_limit_kb) X(fault_seed) X(log_counters) X(recorder)

static void take_uints(struct engine_config *c, const struct verbs_kv *kv, unsigned int n)
{
#define TAKE(k) c->k = verbs_cfg_uint("engine", kv, n, #k);
	ENGINE_UINT_KEYS(TAKE)
#undef TAKE
}

/* lcores and lcores_per_device: what the table cannot say (lcores of this EAL, "all"). */
static int take_lcores(struct engine_config *c, const struct verbs_kv *kv, unsigned int n)
{
	char where[300];
	unsigned int i;

	c->inline_mode = true;
	c->per_device = verbs_cfg_uint("engine", kv, n, "lcores_per_device");
	for (i = 0; i < n; i++) {
		if (strcmp(kv[i].key, "lcores") == 0 && parse_lcores(c, kv[i].value) < 0) {
			verbs_config_where("engine", "lcores", where, sizeof(where));
			ENGINE_LOG(ERR, "%s: [engine] lcores = %s: not worker lcores of this EAL "
				   "(its lcores: the -l/--lcores of [eal] args; the main lcore is "
				   "not one)", where, kv[i].value);
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
	char where[300];

	memset(c, 0, sizeof(*c));
	if (verbs_cfg_check_kv("engine", kv, n) < 0 || take_lcores(c, kv, n) < 0)
		return -EINVAL;
	take_uints(c, kv, n);
	snprintf(c->recorder_dir, sizeof(c->recorder_dir), "%s",
		 verbs_cfg_key_find("engine", "recorder_dir")->def);
	for (unsigned int i = 0; i < n; i++)
		if (strcmp(kv[i].key, "recorder_dir") == 0 && kv[i].value[0] != '\0')
			snprintf(c->recorder_dir, sizeof(c->recorder_dir), "%s", kv[i].value);
	if (c->per_device == 0)	/* all */
		c->per_device = c->inline_mode ? 1 : c->n_lcores;
	if (c->per_device > (c->inline_mode ? 1 : c->n_lcores)) {
		verbs_config_where("engine", "lcores_per_device", where, sizeof(where));
		ENGINE_LOG(ERR, "%s: [engine] lcores_per_device %u: %s", where, c->per_device,
			   c->inline_mode ? "the inline engine is one instance" :
			   "more than the engine lcores");
		return -EINVAL;
	}
	if (c->idle_sleep_max_us != 0 && c->idle_sleep_max_us < c->idle_sleep_us) {
		verbs_config_where("engine", "idle_sleep_max_us", where, sizeof(where));
		ENGINE_LOG(ERR, "%s: [engine] idle_sleep_max_us %u below idle_sleep_us %u", where,
			   c->idle_sleep_max_us, c->idle_sleep_us);
		return -EINVAL;
	}
	if (c->idle_sleep_max_us != 0 && c->idle_sleep_us == 0) {
		verbs_config_where("engine", "idle_sleep_max_us", where, sizeof(where));
		ENGINE_LOG(ERR, "%s: [engine] idle_sleep_max_us without idle_sleep_us (lcores "
			   "spin)", where);
		return -EINVAL;
	}
	RTE_VERIFY(c->mbufs >= 2 * ENGINE_TXBUF && c->neigh_retry_ms != 0);	/* the table's */
	return 0;
}
