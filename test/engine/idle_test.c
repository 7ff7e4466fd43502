/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A dedicated lcore's idle sleeps ([engine] idle_sleep_us, idle_sleep_max_us; engine_loop.c):
 * without idle_sleep_max_us every sleep is idle_sleep_us; with it, the sleeps double from
 * idle_sleep_us up to idle_sleep_max_us and stay there, and work starts them over. Bad input
 * beside it: a maximum below idle_sleep_us, a maximum for lcores that spin, one above a
 * second, not a number: each refused with EINVAL; 0 (or empty) and a maximum equal to
 * idle_sleep_us taken.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "engine_private.h"

static int load(struct engine_config *c, const char *idle, const char *max)
{
	struct verbs_kv kv[3];
	unsigned int n = 0;

	memset(kv, 0, sizeof(kv));
	snprintf(kv[n].key, sizeof(kv[n].key), "lcores");
	snprintf(kv[n++].value, sizeof(kv[0].value), "1");
	if (idle != NULL) {
		snprintf(kv[n].key, sizeof(kv[n].key), "idle_sleep_us");
		snprintf(kv[n++].value, sizeof(kv[0].value), "%s", idle);
	}
	if (max != NULL) {
		snprintf(kv[n].key, sizeof(kv[n].key), "idle_sleep_max_us");
		snprintf(kv[n++].value, sizeof(kv[0].value), "%s", max);
	}
	return engine_config_from(c, kv, n);
}

/* The first @p n sleeps of an lcore that stays idle, into @p out. */
static void sleeps(const struct engine_config *c, unsigned int n, unsigned int *out)
{
	unsigned int i, s = 0;

	for (i = 0; i < n; i++)
		out[i] = s = engine_idle_sleep_next(c, s);
}

int main(void)
{
	static const unsigned int grow[] = { 20, 40, 80, 160, 320, 640, 1000, 1000, 1000 };
	struct engine_config c;
	unsigned int got[9], i;

	/* No maximum: the same sleep every time (as before the key existed). */
	CHECK_EQ(load(&c, "20", NULL), 0);
	CHECK_EQ(c.idle_sleep_max_us, 0);
	sleeps(&c, 9, got);
	for (i = 0; i < 9; i++)
		CHECK_EQ(got[i], 20);
	/* A maximum: doubling up to it, then staying; work (0) starts over. */
	CHECK_EQ(load(&c, "20", "1000"), 0);
	sleeps(&c, 9, got);
	for (i = 0; i < 9; i++)
		CHECK_EQ(got[i], grow[i]);
	CHECK_EQ(engine_idle_sleep_next(&c, 0), 20);
	/* A maximum equal to the sleep: no growth. */
	CHECK_EQ(load(&c, "50", "50"), 0);
	sleeps(&c, 4, got);
	for (i = 0; i < 4; i++)
		CHECK_EQ(got[i], 50);
	/* The largest values: no overflow past a second. */
	CHECK_EQ(load(&c, "600000", "1000000"), 0);
	sleeps(&c, 3, got);
	CHECK(got[0] == 600000 && got[1] == 1000000 && got[2] == 1000000);

	/* Bad values. */
	CHECK_EQ(load(&c, "20", "10"), -EINVAL);	/* below idle_sleep_us */
	CHECK_EQ(load(&c, "0", "100"), -EINVAL);	/* lcores that spin */
	CHECK_EQ(load(&c, NULL, "100"), -EINVAL);	/* idle_sleep_us unset: 0 */
	CHECK_EQ(load(&c, "20", "1000001"), -EINVAL);	/* above a second */
	CHECK_EQ(load(&c, "20", "-5"), -EINVAL);
	CHECK_EQ(load(&c, "20", "1ms"), -EINVAL);
	/* An empty value is the default, as for every [engine] number. */
	CHECK_EQ(load(&c, "20", ""), 0);
	CHECK_EQ(c.idle_sleep_max_us, 0);
	printf("ok: idle sleeps fixed, doubling to the maximum, reset by work; bad maxima refused\n");
	return 0;
}
