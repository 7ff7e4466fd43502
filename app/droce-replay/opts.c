/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-replay's command line (getopt_long). Apart from main() so that the libFuzzer target in
 * test/replay can drive it; it touches nothing but the options struct, stdout and stderr.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static void usage(FILE *o)
{
	fprintf(o, "usage: droce-replay [-s SCENARIO.ini] [-o OUT.pcap] [-c] [-p|-1|--rate RATE] [-r ADDR] "
		"[--print-scenario] [--no-rd-limit] [-R] [--serve|--wire DEVARGS --map FILE] [--loop N] "
		"[-q] CAPTURE.pcap\n");
}

static void help(void)
{
	static const char *const text[] = {
		"Play the requests of a RoCE v2 capture into a droce device that plays the",
		"capture's responder (droce's QPNs, R_Keys and VAs written into each request),",
		"record what droce sends, print droce's counters.",
		"",
		"  -s, --scenario FILE  the responder's QPs and MRs (INI, doc/droce-replay.md);",
		"                       without it they are derived from the capture",
		"  -o, --output FILE    write every frame droce sends to this pcap",
		"  -c, --compare        compare droce's responses with the capture's, frame by frame",
		"  -p, --pace           inject at the capture's own pace (default: as fast as",
		"                       the engine takes them, in bursts of 32)",
		"  -1, --step           one request at a time, each answered before the next",
		"      --rate RATE      inject at RATE: N or Nfps frames/s, Nmbps or Ngbps of frame",
		"                       bytes",
		"  -r, --responder ADDR the IPv4 or IPv6 address of the side droce plays (default:",
		"                       the destination of the capture's first request; with -R",
		"                       its source)",
		"  -R, --requester      droce plays the capture's requester: it posts the work the",
		"                       requests carry, the capture's responses are fed back, and",
		"                       -c compares droce's requests, completions and READ/atomic",
		"                       results with the capture's",
		"      --serve DEVARGS  the responder on the DPDK port DEVARGS names, its live QPNs,",
		"                       R_Keys and addresses written to --map; until SIGINT/SIGTERM",
		"      --wire DEVARGS   play onto the DPDK port DEVARGS names against a device",
		"                       under test (a --serve process, or a verbs device set up",
		"                       by the scenario), rewritten to the names --map holds",
		"      --map FILE       the live names: --serve writes it, --wire reads it",
		"      --loop N         play the capture N times in a row, each pass's PSNs, MSNs",
		"                       and FETCH_ADD results moved on (with --serve: receive",
		"                       WRs for N passes)",
		"      --print-scenario print the scenario (loaded or derived) as INI and exit",
		"      --no-rd-limit    do not hold READ/atomic requests back to the QP's",
		"                       max_dest_rd_atomic (play a requester that ignores it)",
		"  -q, --quiet          no counters",
		"  -h, --help           this text",
		"      --version        the version",
		"",
		"Exit status: 0 replayed (with --compare: every response matched; with -R: every",
		"request, completion and result); 1 something differs; 2 usage error, bad pcap,",
		"bad scenario, a request to an unknown QP, no request to droce's address, a",
		"requester's work the capture does not hold;",
		"3 EAL, the port or a droce call failed.",
	};
	unsigned int i;

	usage(stdout);
	for (i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		puts(text[i]);
}

/* --rate: N, Nfps, Nmbps, Ngbps (N > 0, at most 1e12 frames/s or bit/s). */
static int parse_rate(const char *arg, struct replay_opts *o)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || !(v > 0) || v > 1e12)
		return -1;
	if (*end == '\0' || strcmp(end, "fps") == 0)
		o->rate_fps = v;
	else if (strcmp(end, "mbps") == 0)
		o->rate_bps = v * 1e6;
	else if (strcmp(end, "gbps") == 0)
		o->rate_bps = v * 1e9;
	else
		return -1;
	return o->rate_bps > 1e12 ? -1 : 0;
}

int replay_parse_args(int argc, char **argv, struct replay_opts *o)
{
	static const struct option longopts[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "compare", no_argument, NULL, 'c' },
		{ "pace", no_argument, NULL, 'p' },
		{ "step", no_argument, NULL, '1' },
		{ "responder", required_argument, NULL, 'r' },
		{ "print-scenario", no_argument, NULL, 'P' },
		{ "no-rd-limit", no_argument, NULL, 'L' },
		{ "requester", no_argument, NULL, 'R' },
		{ "serve", required_argument, NULL, 'S' },
		{ "wire", required_argument, NULL, 'W' },
		{ "map", required_argument, NULL, 'M' },
		{ "rate", required_argument, NULL, 'T' },
		{ "loop", required_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "s:o:cp1r:qRh", longopts, NULL)) != -1) {
		switch (ch) {
		case 's': o->scenario = optarg; break;
		case 'o': o->output = optarg; break;
		case 'c': o->compare = true; break;
		case 'p': o->pace = true; break;
		case '1': o->step = true; break;
		case 'r': o->responder = optarg; break;
		case 'P': o->print_scenario = true; break;
		case 'L': o->no_rd_limit = true; break;
		case 'R': o->requester = true; break;
		case 'S': o->serve = optarg; break;
		case 'W': o->wire = optarg; break;
		case 'M': o->map = optarg; break;
		case 'T':
			if (parse_rate(optarg, o) != 0) {
				fprintf(stderr, "droce-replay: --rate %s: a number of frames/s (N or "
					"Nfps) or of bits/s (Nmbps, Ngbps), > 0\n", optarg);
				return REPLAY_EXIT_INPUT;
			}
			break;
		case 'N': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (end == optarg || *end != '\0' || optarg[0] == '-' || v == 0 ||
			    v > REPLAY_MAX_LOOP) {
				fprintf(stderr, "droce-replay: --loop %s: a number of passes, 1 to "
					"%u\n", optarg, REPLAY_MAX_LOOP);
				return REPLAY_EXIT_INPUT;
			}
			o->loop = (unsigned int)v;
			break;
		}
		case 'q': o->quiet = true; break;
		case 'h': help(); return REPLAY_EXIT_PASS;
		case 'V': printf("droce-replay %s\n", DROCE_VERSION); return REPLAY_EXIT_PASS;
		default: usage(stderr); return REPLAY_EXIT_INPUT;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "droce-replay: expected one capture file\n");
		usage(stderr);
		return REPLAY_EXIT_INPUT;
	}
	if ((o->pace ? 1 : 0) + (o->step ? 1 : 0) + (o->rate_fps > 0 || o->rate_bps > 0) > 1) {
		fprintf(stderr, "droce-replay: --pace, --step and --rate exclude each other\n");
		return REPLAY_EXIT_INPUT;
	}
	if (o->scenario != NULL && o->responder != NULL) {
		fprintf(stderr, "droce-replay: --responder is for a derived scenario; the "
			"scenario file names droce's side ([device] ipv4 or ipv6)\n");
		return REPLAY_EXIT_INPUT;
	}
	if (o->requester && (o->pace || o->step || o->no_rd_limit || o->rate_fps > 0 ||
			     o->rate_bps > 0)) {
		fprintf(stderr, "droce-replay: --pace, --step, --rate and --no-rd-limit are for droce as "
			"the responder; with --requester the responses go in as droce's requests "
			"call for them\n");
		return REPLAY_EXIT_INPUT;
	}
	if ((o->serve != NULL || o->wire != NULL) != (o->map != NULL) ||
	    (o->serve != NULL && o->wire != NULL)) {
		fprintf(stderr, "droce-replay: --serve or --wire, each with --map (and --map only "
			"with one of them)\n");
		return REPLAY_EXIT_INPUT;
	}
	if ((o->serve != NULL || o->wire != NULL) && o->requester) {
		fprintf(stderr, "droce-replay: --requester plays in-process only\n");
		return REPLAY_EXIT_INPUT;
	}
	if (o->serve != NULL && (o->compare || o->output != NULL || o->pace || o->step ||
				 o->rate_fps > 0 || o->rate_bps > 0 || o->print_scenario)) {
		fprintf(stderr, "droce-replay: --serve takes no --compare, --output, --pace, "
			"--step, --rate or --print-scenario: it answers what --wire plays\n");
		return REPLAY_EXIT_INPUT;
	}
	if (o->loop > 1 && (o->requester || o->print_scenario)) {
		fprintf(stderr, "droce-replay: --loop plays droce's responder or the device under "
			"test again: not with --requester or --print-scenario\n");
		return REPLAY_EXIT_INPUT;
	}
	o->capture = argv[optind];
	return -1;
}
