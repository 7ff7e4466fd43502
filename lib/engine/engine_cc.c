/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Congestion control settings: the [dcqcn] section (verbs keeps it as key = value pairs,
 * checked against the key table, verbs_config.h, which holds each key's default and range:
 * doc/configuration.md) made into each device's struct dcqcn_params, which the transport's
 * QPs point to (transport_env.dcqcn). doc/congestion.md says what the keys do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "engine_private.h"
#include "env.h"
#include "verbs_config.h"

/* As configured (units of the keys); the per-device params are made from it. */
static struct {
	unsigned int enable, np, rp, ecn;
	int cnp_dscp, cnp_pcp;		/* -1: not configured (the QP's) */
	char off_devices[256];
	unsigned int cnp_interval_us, rate_reduce_period_us, alpha_g_shift, alpha_init;
	unsigned int alpha_period_us, time_reset_us, byte_reset, stages;
	unsigned int line_rate_mbps, min_rate_mbps, ai_rate_mbps, hai_rate_mbps, burst;
} cc;

static void parse_ecn(const char *v)
{
	if (strcmp(v, "ect0") == 0)
		cc.ecn = DROCE_ECN_ECT0;
	else if (strcmp(v, "ect1") == 0)
		cc.ecn = DROCE_ECN_ECT1;
	else
		cc.ecn = 0;	/* off: the table allows nothing else */
}

int engine_cc_config_load(void)
{
	const struct verbs_kv *kv;
	unsigned int i, n = verbs_dcqcn_config(&kv);

	if (verbs_cfg_check_kv("dcqcn", kv, n) < 0)
		return -EINVAL;
	memset(&cc, 0, sizeof(cc));
#define TAKE(k) cc.k = verbs_cfg_uint("dcqcn", kv, n, #k);
	TAKE(enable) TAKE(np) TAKE(rp) TAKE(cnp_interval_us) TAKE(rate_reduce_period_us)
	TAKE(alpha_g_shift) TAKE(alpha_init) TAKE(alpha_period_us) TAKE(time_reset_us)
	TAKE(byte_reset) TAKE(stages) TAKE(line_rate_mbps) TAKE(min_rate_mbps)
	TAKE(ai_rate_mbps) TAKE(hai_rate_mbps) TAKE(burst)
#undef TAKE
	parse_ecn(verbs_cfg_key_find("dcqcn", "ecn")->def);
	cc.cnp_dscp = cc.cnp_pcp = -1;
	for (i = 0; i < n; i++) {
		if (strcmp(kv[i].key, "cnp_dscp") == 0)
			cc.cnp_dscp = kv[i].value[0] != '\0' ? (int)strtoul(kv[i].value, NULL, 0) : -1;
		else if (strcmp(kv[i].key, "cnp_pcp") == 0)
			cc.cnp_pcp = kv[i].value[0] != '\0' ? (int)strtoul(kv[i].value, NULL, 0) : -1;
		else if (strcmp(kv[i].key, "ecn") == 0)
			parse_ecn(kv[i].value);
		else if (strcmp(kv[i].key, "off_devices") == 0)
			snprintf(cc.off_devices, sizeof(cc.off_devices), "%s", kv[i].value);
	}
	if (cc.line_rate_mbps != 0 && cc.min_rate_mbps > cc.line_rate_mbps) {
		char where[300];

		verbs_config_where("dcqcn", "min_rate_mbps", where, sizeof(where));
		ENGINE_LOG(ERR, "%s: [dcqcn] min_rate_mbps %u above line_rate_mbps %u: lower "
			   "min_rate_mbps or raise line_rate_mbps", where, cc.min_rate_mbps,
			   cc.line_rate_mbps);
		return -EINVAL;
	}
	return 0;
}

/* Is @p name in the comma-separated off_devices? */
static bool device_off(const char *name)
{
	size_t len = strlen(name);
	const char *p = cc.off_devices;

	while (*p != '\0') {
		size_t n = strcspn(p, ", \t");

		if (n == len && strncmp(p, name, n) == 0)
			return true;
		p += n;
		p += strspn(p, ", \t");
	}
	return false;
}

/* The port's link speed in Mbit/s, 0 when it does not say. */
static uint32_t link_mbps(const struct engine_shard *edev)
{
	int port = verbs_device_port(edev->dev);

	return port < 0 ? 0 : env_port_link_mbps((uint16_t)port);
}

void engine_cc_setup(struct engine_shard *edev)
{
	struct dcqcn_params *p = &edev->cc;
	uint64_t hz = rte_get_tsc_hz(), us = hz / 1000000;
	uint32_t line = cc.line_rate_mbps != 0 ? cc.line_rate_mbps : link_mbps(edev);

	if (line == 0)
		line = 100000;
	if (line < cc.min_rate_mbps)
		line = cc.min_rate_mbps;
	memset(p, 0, sizeof(*p));
	p->np = cc.np;
	p->rp = cc.rp;
	p->ecn = (uint8_t)cc.ecn;
	p->cnp_dscp = (int8_t)cc.cnp_dscp;
	p->cnp_pcp = (int8_t)cc.cnp_pcp;
	p->alpha_g_shift = cc.alpha_g_shift;
	p->alpha_init = cc.alpha_init << (DCQCN_ALPHA_SHIFT - 10);
	p->stages = cc.stages;
	p->line_rate = line * 1000;
	p->min_rate = cc.min_rate_mbps * 1000;
	p->ai_rate = cc.ai_rate_mbps * 1000;
	p->hai_rate = cc.hai_rate_mbps * 1000;
	p->byte_reset = cc.byte_reset;
	p->burst = cc.burst;
	p->hz = hz;
	p->cnp_interval = us * cc.cnp_interval_us;
	p->rate_reduce_period = us * cc.rate_reduce_period_us;
	p->alpha_period = us * cc.alpha_period_us;
	p->time_reset = us * cc.time_reset_us;
	edev->cc_on = cc.enable && !device_off(verbs_device_cfg(edev->dev)->name);
	edev->cc_ready = true;
}

const struct dcqcn_params *engine_env_dcqcn(struct transport_env *env, struct droce_device *dev)
{
	struct engine_shard *edev = verbs_device_engine(dev);

	RTE_SET_USED(env);
	if (!edev->cc_ready)
		engine_cc_setup(edev);
	return edev->cc_on ? &edev->cc : NULL;
}

void engine_cc_describe(const struct engine_shard *edev, struct engine_cc_view *v)
{
	const struct dcqcn_params *p = &edev->cc;

	memset(v, 0, sizeof(*v));
	v->on = edev->cc_ready ? edev->cc_on :
		cc.enable && !device_off(verbs_device_cfg(edev->dev)->name);
	v->np = cc.np;
	v->rp = cc.rp;
	v->ecn = cc.ecn;
	v->cnp_interval_us = cc.cnp_interval_us;
	v->rate_reduce_period_us = cc.rate_reduce_period_us;
	v->alpha_g_shift = cc.alpha_g_shift;
	v->alpha_init = cc.alpha_init;
	v->alpha_period_us = cc.alpha_period_us;
	v->time_reset_us = cc.time_reset_us;
	v->byte_reset = cc.byte_reset;
	v->stages = cc.stages;
	v->line_rate_mbps = edev->cc_ready ? p->line_rate / 1000 : cc.line_rate_mbps;
	v->min_rate_mbps = cc.min_rate_mbps;
	v->ai_rate_mbps = cc.ai_rate_mbps;
	v->hai_rate_mbps = cc.hai_rate_mbps;
	v->burst = cc.burst;
}
