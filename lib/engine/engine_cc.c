/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Congestion control settings: the [dcqcn] section (verbs keeps it as key = value pairs) made
 * into each device's struct dcqcn_params, which the transport's QPs point to
 * (transport_env.dcqcn). doc/congestion.md describes every key:
 *
 *   enable = 0|1               ECN marking, notification and reaction point on every device (1)
 *   off_devices = NAME[,NAME]  devices where it is off
 *   ecn = ect0|ect1|off        ECN field of the frames sent (ect0)
 *   np = 0|1, rp = 0|1         notification point (CNPs), reaction point (rate limiter) (1, 1)
 *   cnp_interval_us = US       at most one CNP per QP per US (50)
 *   rate_reduce_period_us = US at most one rate cut per QP per US (4)
 *   alpha_g_shift = N          g = 1/2^N (8: 1/256)
 *   alpha_init = N             alpha at a QP's first CNP, in 1/1024 (1024: 1.0)
 *   alpha_period_us = US       K: alpha decays after US without a CNP (55)
 *   time_reset_us = US         T: rate increase timer (55)
 *   byte_reset = BYTES         B: rate increase byte counter (10485760); 0: timer only
 *   stages = F                 fast recovery events before additive increase (5)
 *   line_rate_mbps = M         rate of an unlimited QP (0: the port's link speed, 100000 when
 *                              the port does not say)
 *   min_rate_mbps, ai_rate_mbps, hai_rate_mbps  (10, 40, 400)
 *   burst = BYTES              what a rate-limited QP may send at once after idling (16384)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "engine_private.h"
#include "env.h"

/* As configured (units of the keys); the per-device params are made from it. */
static struct {
	unsigned int enable, np, rp, ecn;
	char off_devices[256];
	unsigned int cnp_interval_us, rate_reduce_period_us, alpha_g_shift, alpha_init;
	unsigned int alpha_period_us, time_reset_us, byte_reset, stages;
	unsigned int line_rate_mbps, min_rate_mbps, ai_rate_mbps, hai_rate_mbps, burst;
} cc;

static int parse_uint(const char *v, unsigned int min, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long x;

	if (v[0] == '\0')
		return 0;	/* empty: keep the default */
	x = strtoul(v, &end, 0);
	if (end == v || *end != '\0' || x < min || x > max)
		return -EINVAL;
	*out = (unsigned int)x;
	return 0;
}

static int parse_ecn(const char *v)
{
	if (strcmp(v, "ect0") == 0)
		cc.ecn = DROCE_ECN_ECT0;
	else if (strcmp(v, "ect1") == 0)
		cc.ecn = DROCE_ECN_ECT1;
	else if (strcmp(v, "off") == 0)
		cc.ecn = 0;
	else
		return -EINVAL;
	return 0;
}

static int parse_key(const char *k, const char *v)
{
	static const struct {
		const char *key;
		unsigned int *val, min, max;
	} keys[] = {
		{ "enable", &cc.enable, 0, 1 },
		{ "np", &cc.np, 0, 1 },
		{ "rp", &cc.rp, 0, 1 },
		{ "cnp_interval_us", &cc.cnp_interval_us, 0, 1000000 },
		{ "rate_reduce_period_us", &cc.rate_reduce_period_us, 0, 1000000 },
		{ "alpha_g_shift", &cc.alpha_g_shift, 1, 16 },
		{ "alpha_init", &cc.alpha_init, 0, 1024 },
		{ "alpha_period_us", &cc.alpha_period_us, 1, 1000000 },
		{ "time_reset_us", &cc.time_reset_us, 1, 1000000 },
		{ "byte_reset", &cc.byte_reset, 0, 1u << 30 },
		{ "stages", &cc.stages, 0, 100 },
		{ "line_rate_mbps", &cc.line_rate_mbps, 0, 4000000 },
		{ "min_rate_mbps", &cc.min_rate_mbps, 1, 4000000 },
		{ "ai_rate_mbps", &cc.ai_rate_mbps, 0, 4000000 },
		{ "hai_rate_mbps", &cc.hai_rate_mbps, 0, 4000000 },
		{ "burst", &cc.burst, 64, 1u << 24 },
	};
	unsigned int i;

	if (strcmp(k, "ecn") == 0)
		return parse_ecn(v);
	if (strcmp(k, "off_devices") == 0) {
		if (strlen(v) >= sizeof(cc.off_devices))
			return -EINVAL;
		strcpy(cc.off_devices, v);
		return 0;
	}
	for (i = 0; i < RTE_DIM(keys); i++)
		if (strcmp(k, keys[i].key) == 0)
			return parse_uint(v, keys[i].min, keys[i].max, keys[i].val);
	return -EINVAL;
}

int engine_cc_config_load(void)
{
	const struct verbs_kv *kv;
	unsigned int i, n = verbs_dcqcn_config(&kv);

	memset(&cc, 0, sizeof(cc));
	cc.enable = 1;
	cc.np = 1;
	cc.rp = 1;
	cc.ecn = DROCE_ECN_ECT0;
	cc.cnp_interval_us = 50;
	cc.rate_reduce_period_us = 4;
	cc.alpha_g_shift = 8;
	cc.alpha_init = 1024;
	cc.alpha_period_us = 55;
	cc.time_reset_us = 55;
	cc.byte_reset = 10485760;
	cc.stages = 5;
	cc.min_rate_mbps = 10;
	cc.ai_rate_mbps = 40;
	cc.hai_rate_mbps = 400;
	cc.burst = 16384;
	for (i = 0; i < n; i++) {
		if (parse_key(kv[i].key, kv[i].value) < 0) {
			ENGINE_LOG(ERR, "[dcqcn] bad key or value: %s = %s", kv[i].key,
				   kv[i].value);
			return -EINVAL;
		}
	}
	if (cc.line_rate_mbps != 0 && cc.min_rate_mbps > cc.line_rate_mbps) {
		ENGINE_LOG(ERR, "[dcqcn] min_rate_mbps above line_rate_mbps");
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
