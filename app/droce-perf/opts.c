/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-perf's command line: a test name (perftest's program names without "ib_": write_bw,
 * read_lat, ...) and perftest's options where they make sense on droce. Every bad option gets
 * a message naming it and exit status 1 (from main).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

enum {
	OPT_GBITS = 256, OPT_JSON, OPT_NO_RAW, OPT_RAW_TIME, OPT_EAL, OPT_SERVER, OPT_CLIENT,
	OPT_VERSION,
};

static const struct option long_opts[] = {
	{ "size", required_argument, NULL, 's' },
	{ "all", no_argument, NULL, 'a' },
	{ "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'D' },
	{ "qp", required_argument, NULL, 'q' },
	{ "tx-depth", required_argument, NULL, 't' },
	{ "mtu", required_argument, NULL, 'm' },
	{ "connection", required_argument, NULL, 'c' },
	{ "inline_size", required_argument, NULL, 'I' },
	{ "cq-mod", required_argument, NULL, 'Q' },
	{ "outs", required_argument, NULL, 'o' },
	{ "CPU-freq", no_argument, NULL, 'F' },
	{ "port", required_argument, NULL, 'p' },
	{ "server", no_argument, NULL, OPT_SERVER },
	{ "client", no_argument, NULL, OPT_CLIENT },
	{ "report_gbits", no_argument, NULL, OPT_GBITS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "no-raw", no_argument, NULL, OPT_NO_RAW },
	{ "raw-time", required_argument, NULL, OPT_RAW_TIME },
	{ "eal", required_argument, NULL, OPT_EAL },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: droce-perf TEST [options]\n"
		"  TEST: write_bw write_lat read_bw read_lat send_bw send_lat atomic_bw atomic_lat\n"
		"  In-process by default: droce0 -> droce1 of the embedded default (net_ring pair),\n"
		"  engine on its own lcore; DROCE_CONFIG names another configuration (doc/api.md).\n"
		"Options (perftest's):\n"
		"  -s, --size=BYTES        message size (default 65536 bw, 2 lat; atomic: 8)\n"
		"  -a, --all               every size 2 .. 2^23 (powers of two)\n"
		"  -n, --iters=N           iterations per size (default 5000 bw, 1000 lat)\n"
		"  -D, --duration=SECONDS  run for a time instead of -n\n"
		"  -q, --qp=N              QPs (bw tests; default 1, at most %d)\n"
		"  -t, --tx-depth=N        outstanding WRs per QP (bw; default 128)\n"
		"  -m, --mtu=BYTES         path MTU 256..4096 (default: the port's active MTU)\n"
		"  -c, --connection=TYPE   RC (default), UC (write, send) or UD (send, size <= MTU)\n"
		"  -I, --inline_size=BYTES inline data up to this size (default 0 bw, 236 lat)\n"
		"  -Q, --cq-mod=N          one signalled WR every N (bw; default 100)\n"
		"  -o, --outs=N            READ/atomic requests outstanding per QP (default: the\n"
		"                          device's max_qp_rd_atom)\n"
		"  -F, --CPU-freq          accepted (droce-perf times with the TSC)\n"
		"  -p, --port=PORT         two processes: TCP port of the set-up channel (18515)\n"
		"      --report_gbits      bandwidth in Gb/s instead of MB/s (2^20 bytes)\n"
		"droce-perf's own:\n"
		"      --server, --client  two processes over vhost-user on this machine: start\n"
		"                          the server first, then the client with the same options\n"
		"                          (the set-up channel is TCP on 127.0.0.1; hugepages)\n"
		"      --json              one JSON object per size on stdout, nothing else there\n"
		"      --no-raw            skip the raw-link and memcpy/CRC reference phases\n"
		"      --raw-time=SECONDS  length of the raw forwarding phase (default 0.3)\n"
		"      --eal=\"ARGS\"        EAL arguments (default: hugepages if reserved, else\n"
		"                          --no-huge -m 512; with DROCE_CONFIG, its [eal] args)\n"
		"  -h, --help\n"
		"      --version\n", PERF_MAX_QP);
}

/* An unsigned number within [min, max]; suffixes K and M (2^10, 2^20) for sizes. */
static int num(const char *name, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s[0] == '-' || s[0] == '\0')
		goto bad;
	v = strtoull(s, &end, 0);
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end != '\0' || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "droce-perf: bad %s '%s' (expected %llu..%llu)\n", name, s,
		(unsigned long long)min, (unsigned long long)max);
	return -1;
}

static int seconds(const char *name, const char *s, double max, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v > 0) || v > max) {
		fprintf(stderr, "droce-perf: bad %s '%s' (seconds, > 0, <= %g)\n", name, s, max);
		return -1;
	}
	*out = v;
	return 0;
}

static int mtu(const char *s, enum ibv_mtu *out)
{
	static const unsigned int sizes[] = { 256, 512, 1024, 2048, 4096 };
	uint64_t v;
	unsigned int i;

	if (num("MTU", s, 256, 4096, &v) != 0)
		return -1;
	for (i = 0; i < 5; i++)
		if (v == sizes[i]) {
			*out = (enum ibv_mtu)(IBV_MTU_256 + i);
			return 0;
		}
	fprintf(stderr, "droce-perf: bad MTU '%s' (256, 512, 1024, 2048 or 4096)\n", s);
	return -1;
}

static int connection(const char *s, enum ibv_qp_type *out)
{
	*out = perf_conn_parse(s);
	if (*out != IBV_QPT_DRIVER)
		return 0;
	if (strcmp(s, "XRC") == 0 || strcmp(s, "DC") == 0 || strcmp(s, "SRD") == 0) {
		fprintf(stderr, "droce-perf: connection %s is not supported: droce has RC, UC "
			"and UD\n", s);
		return -1;
	}
	fprintf(stderr, "droce-perf: bad connection '%s' (RC, UC or UD)\n", s);
	return -1;
}

static int test_name(const char *s, struct perf_opts *o)
{
	static const struct perf_verb *const verbs[] = {
		&perf_verb_write, &perf_verb_read, &perf_verb_send, &perf_verb_atomic,
	};
	const char *us = strrchr(s, '_');
	unsigned int i;
	size_t n;

	if (us == NULL)
		goto bad;
	n = (size_t)(us - s);
	if (strcmp(us, "_bw") == 0)
		o->test = PERF_BW;
	else if (strcmp(us, "_lat") == 0)
		o->test = PERF_LAT;
	else
		goto bad;
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strlen(verbs[i]->name) == n && strncmp(s, verbs[i]->name, n) == 0) {
			o->verb = verbs[i];
			return 0;
		}
bad:
	fprintf(stderr, "droce-perf: unknown test '%s' (write_bw, write_lat, read_bw, read_lat, "
		"send_bw, send_lat, atomic_bw, atomic_lat)\n", s);
	return -1;
}

static void defaults(struct perf_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->qps = 1;
	o->tx_depth = 128;
	o->cq_mod = 100;
	o->raw_seconds = 0.3;
	o->conn = IBV_QPT_RC;
	o->port = PERF_DEFAULT_PORT;
}

/* Defaults that depend on the test, for what the command line left unset. */
static void finish(struct perf_opts *o, bool size_set, bool iters_set, bool inline_set)
{
	bool lat = o->test == PERF_LAT;

	if (!size_set)
		o->size = lat ? 2 : 65536;
	if (o->verb->fixed_size != 0)
		o->size = o->verb->fixed_size;
	if (!iters_set)
		o->iters = lat ? 1000 : 5000;
	if (!inline_set)
		o->inline_size = lat && (o->verb == &perf_verb_write ||
					  o->verb == &perf_verb_send) ? 236 : 0;
	if (lat) {
		o->tx_depth = 1;
		o->qps = 1;
	}
	if (o->cq_mod > o->tx_depth)
		o->cq_mod = o->tx_depth;
}

static int one(int opt, const char *arg, struct perf_opts *o, bool set[3])
{
	uint64_t v = 0;
	int rc = 0;

	switch (opt) {
	case 's': rc = num("size", arg, 1, PERF_MAX_SIZE, &v); o->size = (uint32_t)v;
		set[0] = true; break;
	case 'a': o->all_sizes = true; break;
	case 'n': rc = num("iterations", arg, 1, UINT64_MAX >> 8, &o->iters); set[1] = true;
		break;
	case 'D': rc = seconds("duration", arg, 86400, &o->duration); break;
	case 'q': rc = num("QP count", arg, 1, PERF_MAX_QP, &v); o->qps = (unsigned int)v; break;
	case 't': rc = num("TX depth", arg, 1, 8192, &v); o->tx_depth = (unsigned int)v; break;
	case 'm': rc = mtu(arg, &o->mtu); break;
	case 'c': rc = connection(arg, &o->conn); break;
	case 'p': rc = num("port", arg, 1, 65535, &v); o->port = (uint16_t)v; break;
	case OPT_SERVER: o->role = PERF_SERVER; break;
	case OPT_CLIENT: o->role = PERF_CLIENT; break;
	case 'I': rc = num("inline size", arg, 0, 512, &v); o->inline_size = (unsigned int)v;
		set[2] = true; break;
	case 'Q': rc = num("CQ moderation", arg, 1, 8192, &v); o->cq_mod = (unsigned int)v; break;
	case 'o': rc = num("outstanding reads", arg, 1, 255, &v); o->outs = (unsigned int)v; break;
	case 'F': o->ignore_freq = true; break;
	case OPT_GBITS: o->report_gbits = true; break;
	case OPT_JSON: o->json = true; break;
	case OPT_NO_RAW: o->no_raw = true; break;
	case OPT_RAW_TIME: rc = seconds("raw time", arg, 60, &o->raw_seconds); break;
	case OPT_EAL: o->eal = arg; break;
	default: rc = -1;
	}
	return rc;
}

/* @return 0, 1 (help printed: exit 0) or -1 (error printed). */
int perf_opts_parse(int argc, char **argv, struct perf_opts *o)
{
	bool set[3] = { false, false, false };
	int opt;

	defaults(o);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "s:an:D:q:t:m:c:I:Q:o:Fp:h", long_opts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 1;
		}
		if (opt == OPT_VERSION) {
			printf("droce-perf %s\n", DROCE_VERSION);
			return 1;
		}
		if (opt == '?' || opt == ':') {
			if (optopt != 0)
				fprintf(stderr, "droce-perf: bad or incomplete option -%c\n", optopt);
			else
				fprintf(stderr, "droce-perf: unknown option '%s'\n", argv[optind - 1]);
			goto fail;
		}
		if (one(opt, optarg, o, set) != 0)
			goto fail;
	}
	if (optind != argc - 1) {
		if (optind >= argc)
			fprintf(stderr, "droce-perf: no test given\n");
		else
			fprintf(stderr, "droce-perf: one test only (extra argument '%s')\n",
				argv[optind + 1]);
		goto fail;
	}
	if (test_name(argv[optind], o) != 0 || perf_conn_check(o) != 0)
		goto fail;
	finish(o, set[0], set[1], set[2]);
	return 0;
fail:
	fprintf(stderr, "Try 'droce-perf --help'.\n");
	return -1;
}
