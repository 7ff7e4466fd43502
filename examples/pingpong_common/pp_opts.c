/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The command line of the pingpong examples: the options of the rdma-core 44 tool each variant
 * stands for (its getopt string is in struct pp_tool), long forms too. Bad numbers are refused
 * with the usage text (rdma-core takes what strtoul() makes of them); options for features
 * droce lacks (ODP, timestamps, device memory, the new post-send API) are refused with a message.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp.h"

/* The usage line of each option; a variant prints those of its optstring. */
static const char *const help[128] = {
	['p'] = "  -p, --port=<port>      listen on/connect to port <port> (default 18515)",
	['d'] = "  -d, --ib-dev=<dev>     use droce device <dev> (default first device found)",
	['i'] = "  -i, --ib-port=<port>   use port <port> of the device (default 1)",
	['s'] = "  -s, --size=<size>      size of message to exchange (default",
	['m'] = "  -m, --mtu=<size>       path MTU (default 1024)",
	['q'] = "  -q, --num-qp=<num>     number of QPs to use (default 16)",
	['r'] = "  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)",
	['n'] = "  -n, --iters=<iters>    number of exchanges (default 1000; 0: connect only)",
	['l'] = "  -l, --sl=<sl>          service level value",
	['e'] = "  -e, --events           sleep on CQ events (default poll)",
	['g'] = "  -g, --gid-idx=<gid index> local port gid index",
	['c'] = "  -c, --chk              validate received buffer",
	['h'] = "  -h, --help             this text",
};

static const char *const unsupported[128] = {
	['o'] = "on demand paging", ['O'] = "implicit on demand paging",
	['P'] = "ODP prefetch", ['t'] = "completion timestamps", ['j'] = "device memory",
	['N'] = "the new post send API",
};

static void usage(const char *argv0, const struct pp_tool *tool)
{
	const char *s;

	printf("Usage:\n");
	printf("  %s            start a server and wait for connection\n", argv0);
	printf("  %s <host>     connect to server at <host>\n", argv0);
	printf("\nOptions:\n");
	for (s = tool->optstring; *s != '\0'; s++) {
		if (*s == ':' || help[(int)*s] == NULL)
			continue;
		if (*s == 's')
			printf("%s %u)\n", help['s'], tool->def_size);
		else
			printf("%s\n", help[(int)*s]);
	}
	printf("\nThe device comes from the INI file named by DROCE_CONFIG.\n");
}

/* Parse an unsigned number (any base strtoul() takes) within [min, max]. */
static int parse_num(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;

	if (s[0] == '-')
		return -1;
	*out = strtoul(s, &end, 0);
	return (end == s || *end != '\0' || *out < min || *out > max) ? -1 : 0;
}

static enum ibv_mtu mtu_to_enum(unsigned long mtu)
{
	switch (mtu) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return 0;
	}
}

/* One numeric option into @p o. @return 0, or -1 with a message. */
static int set_num_opt(struct pp_opts *o, int opt, const char *arg)
{
	unsigned long v = 0;
	int rc = -1;

	switch (opt) {
	case 'p': rc = parse_num(arg, 0, 65535, &v); o->port = (unsigned int)v; break;
	case 'i': rc = parse_num(arg, 1, 255, &v); o->ib_port = (int)v; break;
	case 's': rc = parse_num(arg, 1, INT_MAX, &v); o->size = (unsigned int)v; break;
	case 'q': rc = parse_num(arg, 1, PP_MAX_QP - 1, &v); o->num_qp = (unsigned int)v; break;
	case 'r': rc = parse_num(arg, 1, INT_MAX, &v); o->rx_depth = (unsigned int)v; break;
	case 'n': rc = parse_num(arg, 0, INT_MAX, &v); o->iters = (unsigned int)v; break;
	case 'l': rc = parse_num(arg, 0, 15, &v); o->sl = (int)v; break;
	case 'g': rc = parse_num(arg, 0, 255, &v); o->gidx = (int)v; break;
	case 'm':
		rc = parse_num(arg, 256, 4096, &v);
		o->mtu = mtu_to_enum(v);
		rc = (rc == 0 && o->mtu != 0) ? 0 : -1;
		break;
	}
	if (rc != 0)
		fprintf(stderr, "invalid value for -%c: '%s'\n", opt, arg);
	return rc;
}

static const struct option long_opts[] = {
	{ .name = "port", .has_arg = 1, .val = 'p' },
	{ .name = "ib-dev", .has_arg = 1, .val = 'd' },
	{ .name = "ib-port", .has_arg = 1, .val = 'i' },
	{ .name = "size", .has_arg = 1, .val = 's' },
	{ .name = "mtu", .has_arg = 1, .val = 'm' },
	{ .name = "num-qp", .has_arg = 1, .val = 'q' },
	{ .name = "rx-depth", .has_arg = 1, .val = 'r' },
	{ .name = "iters", .has_arg = 1, .val = 'n' },
	{ .name = "sl", .has_arg = 1, .val = 'l' },
	{ .name = "events", .has_arg = 0, .val = 'e' },
	{ .name = "gid-idx", .has_arg = 1, .val = 'g' },
	{ .name = "odp", .has_arg = 0, .val = 'o' },
	{ .name = "iodp", .has_arg = 0, .val = 'O' },
	{ .name = "prefetch", .has_arg = 0, .val = 'P' },
	{ .name = "ts", .has_arg = 0, .val = 't' },
	{ .name = "chk", .has_arg = 0, .val = 'c' },
	{ .name = "dm", .has_arg = 0, .val = 'j' },
	{ .name = "new_send", .has_arg = 0, .val = 'N' },
	{ .name = "help", .has_arg = 0, .val = 'h' },
	{ 0 }
};

/* One option. @return 0 to go on, 1 to stop with status 0 (-h), -1 to stop with usage. */
static int set_opt(struct pp_opts *o, int opt, const char *arg)
{
	if (opt <= 0 || opt >= 128 || strchr(o->tool->optstring, opt) == NULL)
		return -1;	/* also a long option of another variant (--mtu for UD) */
	switch (opt) {
	case 'd': o->ib_devname = arg; return 0;
	case 'e': o->use_event = 1; return 0;
	case 'c': o->validate = 1; return 0;
	case 'h': return 1;
	case 'o': case 'O': case 'P': case 't': case 'j': case 'N':
		fprintf(stderr, "-%c (%s) is not supported by droce\n", opt, unsupported[opt]);
		return -1;
	default:
		return set_num_opt(o, opt, arg);
	}
}

/* What the options leave to check together: ibv_srq_pingpong's rule, one receive per QP. */
static int check_opts(const struct pp_opts *o)
{
	if (o->num_qp > o->rx_depth) {
		fprintf(stderr, "rx_depth %u is too small for %u QPs -- must have at least one "
			"receive per QP.\n", o->rx_depth, o->num_qp);
		return -1;
	}
	return 0;
}

int pp_parse_opts(int argc, char **argv, const struct pp_tool *tool, struct pp_opts *o)
{
	int opt, rc;

	*o = (struct pp_opts){ .tool = tool, .port = 18515, .ib_port = 1, .size = tool->def_size,
			       .mtu = IBV_MTU_1024, .num_qp = tool->srq ? 16 : 1,
			       .rx_depth = 500, .iters = 1000, .gidx = -1 };
	while ((opt = getopt_long(argc, argv, tool->optstring, long_opts, NULL)) != -1) {
		rc = set_opt(o, opt, optarg);
		if (rc != 0) {
			usage(argv[0], tool);
			return rc;
		}
	}
	if (optind == argc - 1) {
		o->servername = argv[optind];
	} else if (optind < argc) {
		fprintf(stderr, "too many arguments\n");
		usage(argv[0], tool);
		return -1;
	}
	return check_opts(o);
}
