/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * What droce-replay's libFuzzer targets share: a memfd that stands for the file the tool would
 * read, and the scenario round trip (print -> load gives the same addresses, QPs, MRs and
 * contents: what --print-scenario promises).
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_fd = -1;
static char fuzz_path[64];	/* /proc/self/fd/N: the memfd as a path */

/* Make the memfd hold exactly @p data. */
static void fuzz_put(const void *data, size_t size)
{
	if (fuzz_fd < 0) {
		fuzz_fd = memfd_create("droce_replay_fuzz", 0);
		if (fuzz_fd < 0)
			abort();
		snprintf(fuzz_path, sizeof(fuzz_path), "/proc/self/fd/%d", fuzz_fd);
	}
	if (ftruncate(fuzz_fd, 0) != 0 || pwrite(fuzz_fd, data, size, 0) != (ssize_t)size)
		abort();
}

/* @p sc printed and loaded back must have the same QPs, MRs and MR contents. */
static void fuzz_round_trip(const struct replay_scenario *sc)
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
	fuzz_put(text, len);
	free(text);
	if (replay_scenario_load(fuzz_path, &back, err, sizeof(err)) != 0) {
		fprintf(stderr, "printed scenario does not load: %s\n", err);
		abort();
	}
	if (back.n_qp != sc->n_qp || back.n_mr != sc->n_mr || back.ipv6 != sc->ipv6 ||
	    memcmp(back.gid, sc->gid, 16) != 0 || memcmp(back.peer_gid, sc->peer_gid, 16) != 0)
		abort();
	for (i = 0; i < sc->n_qp; i++)
		if (back.qp[i].recv_follow != sc->qp[i].recv_follow ||
		    back.qp[i].min_rnr_timer != sc->qp[i].min_rnr_timer ||
		    back.qp[i].access != sc->qp[i].access)
			abort();
	for (i = 0; i < sc->n_mr; i++)
		if (memcmp(back.mr[i].init, sc->mr[i].init, sc->mr[i].length) != 0)
			abort();
	replay_scenario_free(&back);
}

#endif
