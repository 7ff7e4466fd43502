/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * libFuzzer target: droce-replay's scenario parser (app/droce-replay/scenario.c) on any bytes.
 * rte_cfgfile reads a path, so each input goes into one memfd reopened through /proc. A
 * successful parse is printed back and parsed again: what --print-scenario writes must load.
 * Built by run_fuzz_scenario.sh with a small REPLAY_MAX_MR_LEN so that a fuzzed length
 * cannot ask for gigabytes.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;
static char path[64];

static void put(const void *data, size_t size)
{
	if (fd < 0) {
		fd = memfd_create("fuzz_scenario.ini", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
}

/* A scenario that loaded must survive print -> load with the same QPs and MRs. */
static void round_trip(const struct replay_scenario *sc)
{
	static struct replay_scenario back;
	char err[REPLAY_ERR_LEN];
	char *text = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&text, &len);
	unsigned int i;

	if (o == NULL)
		abort();
	replay_scenario_print(o, sc, NULL);
	fclose(o);
	put(text, len);
	free(text);
	if (replay_scenario_load(path, &back, err, sizeof(err)) != 0 || back.n_qp != sc->n_qp ||
	    back.n_mr != sc->n_mr)
		abort();
	for (i = 0; i < sc->n_mr; i++)
		if (memcmp(back.mr[i].init, sc->mr[i].init, sc->mr[i].length) != 0)
			abort();
	replay_scenario_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct replay_scenario sc;
	char err[REPLAY_ERR_LEN];

	put(data, size);
	if (replay_scenario_load(path, &sc, err, sizeof(err)) == 0) {
		round_trip(&sc);
		replay_scenario_free(&sc);
	} else if (err[0] == '\0') {
		abort();	/* every refusal says why */
	}
	return 0;
}
