/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * libFuzzer target: droce-replay's command line (app/droce-replay/opts.c). The input, split at
 * NUL bytes, is the argument vector. Accepted options must be consistent: one capture that is
 * one of the arguments, at most one of --pace, --step and --rate (a positive rate), never
 * --responder with --scenario, never --requester with --pace, --step, --rate or
 * --no-rd-limit; --map exactly with one of --serve and
 * --wire, neither with --requester, --serve without --compare, --output, --pace, --step or
 * --print-scenario; --loop 0 (unset) or 1..REPLAY_MAX_LOOP, more than one pass never with
 * --requester or --print-scenario.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool is_arg(char **argv, int argc, const char *s)
{
	int i;

	for (i = 1; i < argc; i++)
		if (s >= argv[i] && s <= argv[i] + strlen(argv[i]))
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool quiet;
	char *buf = malloc(size + 1), *argv[MAX_ARGS + 2];
	struct replay_opts o = { 0 };
	int argc = 0, rc;
	size_t off = 0;

	if (!quiet) {	/* --help text and getopt's complaints: not the point (stderr stays:
			 * the sanitizers report there) */
		quiet = freopen("/dev/null", "w", stdout) != NULL;
		opterr = 0;
	}
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = (char *)(uintptr_t)"droce-replay";
	while (off <= size && argc <= MAX_ARGS) {
		argv[argc++] = buf + off;
		off += strlen(buf + off) + 1;
	}
	argv[argc] = NULL;
	optind = 0;	/* glibc: a full re-initialisation of getopt */
	rc = replay_parse_args(argc, argv, &o);
	if (rc == -1 && (o.capture == NULL || !is_arg(argv, argc, o.capture) ||
			 (o.pace + o.step + (o.rate_fps > 0 || o.rate_bps > 0) > 1) ||
			 (o.rate_fps < 0 || o.rate_bps < 0) ||
			 (o.scenario != NULL && o.responder != NULL) ||
			 (o.requester && (o.pace || o.step || o.no_rd_limit ||
					  o.rate_fps > 0 || o.rate_bps > 0)) ||
			 ((o.serve != NULL || o.wire != NULL) != (o.map != NULL)) ||
			 (o.serve != NULL && o.wire != NULL) ||
			 ((o.serve != NULL || o.wire != NULL) && o.requester) ||
			 (o.serve != NULL && (o.compare || o.output || o.pace || o.step ||
					      o.rate_fps > 0 || o.rate_bps > 0 ||
					      o.print_scenario)) ||
			 o.loop > REPLAY_MAX_LOOP ||
			 (o.loop > 1 && (o.requester || o.print_scenario))))
		abort();
	if (rc != -1 && rc != REPLAY_EXIT_PASS && rc != REPLAY_EXIT_INPUT)
		abort();
	free(buf);
	return 0;
}
