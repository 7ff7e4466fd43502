/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * rc_pingpong: rdma-core's ibv_rc_pingpong, written against droce's verbs API. Same options
 * (those that make sense on droce), same TCP exchange, same output, so droce and an unmodified
 * ibv_rc_pingpong (Linux Soft-RoCE, a real NIC) can be each other's peer:
 *
 *   rc_pingpong [options]          server: wait for a client on TCP port -p
 *   rc_pingpong [options] HOST     client: connect to the server at HOST
 *
 * The two sides exchange LID:QPN:PSN:GID over TCP, connect their RC QPs, then the client sends
 * -s bytes, the server answers with a send of the same size, -n times. The device comes from
 * DROCE_CONFIG (see doc/api.md; doc/interop.md for the rxe rig).
 *
 * Differences from rdma-core 44 (all deliberate):
 * - -o/-O/-P (ODP), -t (timestamps), -j (device memory), -N (new post-send API) are refused
 *   with a message: droce has none of these;
 * - bad numbers are refused (rdma-core takes what strtoul() makes of them);
 * - -c checks every byte it receives against rdma-core's pattern (rdma-core checks the first
 *   byte of each page, on the server only) and exits 1 when one differs;
 * - -n 0 stops after the exchange and the connection (no message, no report).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sys/time.h>

#include "pp.h"

struct pp_run {
	unsigned int rcnt;
	unsigned int scnt;
	int routs;
	unsigned int num_cq_events;
};

static void usage(const char *argv0)
{
	printf("Usage:\n");
	printf("  %s            start a server and wait for connection\n", argv0);
	printf("  %s <host>     connect to server at <host>\n", argv0);
	printf("\n");
	printf("Options:\n");
	printf("  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n");
	printf("  -d, --ib-dev=<dev>     use droce device <dev> (default first device found)\n");
	printf("  -i, --ib-port=<port>   use port <port> of the device (default 1)\n");
	printf("  -s, --size=<size>      size of message to exchange (default 4096)\n");
	printf("  -m, --mtu=<size>       path MTU (default 1024)\n");
	printf("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n");
	printf("  -n, --iters=<iters>    number of exchanges (default 1000; 0: connect only)\n");
	printf("  -l, --sl=<sl>          service level value\n");
	printf("  -e, --events           sleep on CQ events (default poll)\n");
	printf("  -g, --gid-idx=<gid index> local port gid index\n");
	printf("  -c, --chk              validate received buffer\n");
	printf("  -h, --help             this text\n");
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

static const char *const unsupported[] = {
	['o'] = "on demand paging", ['O'] = "implicit on demand paging",
	['P'] = "ODP prefetch", ['t'] = "completion timestamps", ['j'] = "device memory",
	['N'] = "the new post send API",
};

/* One numeric option into @p o. @return 0, or -1 with a message. */
static int set_num_opt(struct pp_opts *o, int opt, const char *arg)
{
	unsigned long v = 0;
	int rc = -1;

	switch (opt) {
	case 'p': rc = parse_num(arg, 0, 65535, &v); o->port = (unsigned int)v; break;
	case 'i': rc = parse_num(arg, 1, 255, &v); o->ib_port = (int)v; break;
	case 's': rc = parse_num(arg, 1, INT_MAX, &v); o->size = (unsigned int)v; break;
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
	switch (opt) {
	case 'd': o->ib_devname = arg; return 0;
	case 'e': o->use_event = 1; return 0;
	case 'c': o->validate = 1; return 0;
	case 'h': return 1;
	case 'o': case 'O': case 'P': case 't': case 'j': case 'N':
		fprintf(stderr, "-%c (%s) is not supported by droce\n", opt, unsupported[opt]);
		return -1;
	case 'p': case 'i': case 's': case 'm': case 'r': case 'n': case 'l': case 'g':
		return set_num_opt(o, opt, arg);
	default:
		return -1;
	}
}

/* @return 0 to run, 1 to exit 0 (-h), -1 to exit 1 (the usage was printed). */
static int parse_opts(int argc, char **argv, struct pp_opts *o)
{
	int opt, rc;

	*o = (struct pp_opts){ .port = 18515, .ib_port = 1, .size = 4096, .mtu = IBV_MTU_1024,
			       .rx_depth = 500, .iters = 1000, .gidx = -1 };
	while ((opt = getopt_long(argc, argv, "p:d:i:s:m:r:n:l:eg:oOPtcjNh", long_opts,
				  NULL)) != -1) {
		rc = set_opt(o, opt, optarg);
		if (rc != 0) {
			usage(argv[0]);
			return rc;
		}
	}
	if (optind == argc - 1) {
		o->servername = argv[optind];
	} else if (optind < argc) {
		fprintf(stderr, "too many arguments\n");
		usage(argv[0]);
		return -1;
	}
	return 0;
}

/* Our side of the exchange: LID and GID of the port, the QPN, a random PSN. */
static int local_dest(struct pp_ctx *c, const struct pp_opts *o, struct pp_dest *me)
{
	if (droce_query_port(c->context, (uint8_t)o->ib_port, &c->portinfo) != 0) {
		fprintf(stderr, "Couldn't get port info\n");
		return -1;
	}
	me->lid = c->portinfo.lid;
	if (c->portinfo.link_layer != IBV_LINK_LAYER_ETHERNET && me->lid == 0) {
		fprintf(stderr, "Couldn't get local LID\n");
		return -1;
	}
	memset(&me->gid, 0, sizeof(me->gid));
	if (o->gidx >= 0 && droce_query_gid(c->context, (uint8_t)o->ib_port, o->gidx,
					    &me->gid) != 0) {
		fprintf(stderr, "can't read sgid of index %d\n", o->gidx);
		return -1;
	}
	me->qpn = (int)c->qp->qp_num;
	me->psn = (int)(lrand48() & 0xffffff);
	return 0;
}

static void print_dest(const char *what, const struct pp_dest *d)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, &d->gid, gid, sizeof(gid));
	printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", what, d->lid, d->qpn,
	       d->psn, gid);
}

/* rdma-core's -c pattern, set by the client before its first send: the buffer is filled with
 * PP_FILL_BYTE, and the first byte of every page is (page number % sizeof(char)), i.e. 0. */
static uint8_t pattern_at(unsigned int i, long page)
{
	return (i % page == 0) ? (uint8_t)((i / page) % sizeof(char)) : PP_FILL_BYTE;
}

static void fill_pattern(struct pp_ctx *c)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned int i;

	for (i = 0; i < c->size; i++)
		c->buf[i] = pattern_at(i, page);
}

/* After the run, the buffer holds the last message received. @return bad pages. */
static int check_pattern(const struct pp_ctx *c)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned int i;
	int bad = 0;
	long last_bad = -1;

	for (i = 0; i < c->size; i++) {
		if (c->buf[i] == pattern_at(i, page) || (long)(i / page) == last_bad)
			continue;
		last_bad = (long)(i / page);
		printf("invalid data in page %ld (byte %u: 0x%02x)\n", last_bad, i, c->buf[i]);
		bad++;
	}
	return bad;
}

/* One completion, as ibv_rc_pingpong handles it: count it, refill the receive queue when it
 * runs low, and post the next send once both the send and the receive of a round are done. */
static int handle_wc(struct pp_ctx *c, const struct pp_opts *o, struct pp_run *r,
		     const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "Failed status %s (%d) for wr_id %d\n",
			droce_wc_status_str(wc->status), wc->status, (int)wc->wr_id);
		return -1;
	}
	if (wc->wr_id == PP_SEND_WRID) {
		r->scnt++;
	} else if (wc->wr_id == PP_RECV_WRID) {
		if (--r->routs <= 1) {
			r->routs += pp_post_recv(c, (int)c->rx_depth - r->routs);
			if (r->routs < (int)c->rx_depth) {
				fprintf(stderr, "Couldn't post receive (%d)\n", r->routs);
				return -1;
			}
		}
		r->rcnt++;
	} else {
		fprintf(stderr, "Completion for unknown wr_id %d\n", (int)wc->wr_id);
		return -1;
	}
	c->pending &= ~(int)wc->wr_id;
	if (r->scnt < o->iters && c->pending == 0) {
		if (pp_post_send(c) != 0) {
			fprintf(stderr, "Couldn't post send\n");
			return -1;
		}
		c->pending = PP_RECV_WRID | PP_SEND_WRID;
	}
	return 0;
}

/* -e: sleep until the CQ's channel fires, then re-arm it before polling (no lost event). */
static int wait_cq_event(struct pp_ctx *c, struct pp_run *r)
{
	struct droce_cq *ev_cq;
	void *ev_ctx;

	if (droce_get_cq_event(c->channel, &ev_cq, &ev_ctx) != 0) {
		fprintf(stderr, "Failed to get cq_event\n");
		return -1;
	}
	r->num_cq_events++;
	if (ev_cq != c->cq) {
		fprintf(stderr, "CQ event for unknown CQ %p\n", (void *)ev_cq);
		return -1;
	}
	if (droce_req_notify_cq(c->cq, 0) != 0) {
		fprintf(stderr, "Couldn't request CQ notification\n");
		return -1;
	}
	return 0;
}

static int poll_step(struct pp_ctx *c, const struct pp_opts *o, struct pp_run *r)
{
	struct ibv_wc wc[2];
	int ne, i;

	if (o->use_event && wait_cq_event(c, r) != 0)
		return -1;
	do {
		ne = droce_poll_cq(c->cq, 2, wc);
		if (ne < 0) {
			fprintf(stderr, "poll CQ failed %d\n", ne);
			return -1;
		}
	} while (!o->use_event && ne < 1);
	for (i = 0; i < ne; i++) {
		if (handle_wc(c, o, r, &wc[i]) != 0) {
			fprintf(stderr, "parse WC failed %d\n", ne);
			return -1;
		}
	}
	return 0;
}

static void report(const struct pp_opts *o, const struct timeval *start,
		   const struct timeval *end)
{
	double usec = (double)(end->tv_sec - start->tv_sec) * 1000000. +
		      (double)(end->tv_usec - start->tv_usec);
	long long bytes = (long long)o->size * o->iters * 2;

	printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1000000.,
	       bytes * 8. / usec);
	printf("%u iters in %.2f seconds = %.2f usec/iter\n", o->iters, usec / 1000000.,
	       usec / o->iters);
}

/* The ping-pong: the client sends first; each side sends once per message received. */
static int data_phase(struct pp_ctx *c, const struct pp_opts *o, struct pp_run *r)
{
	struct timeval start, end;

	c->pending = PP_RECV_WRID;
	if (o->servername != NULL) {
		if (o->validate)
			fill_pattern(c);
		if (pp_post_send(c) != 0) {
			fprintf(stderr, "Couldn't post send\n");
			return -1;
		}
		c->pending |= PP_SEND_WRID;
	}
	gettimeofday(&start, NULL);
	while (r->rcnt < o->iters || r->scnt < o->iters)
		if (poll_step(c, o, r) != 0)
			return -1;
	gettimeofday(&end, NULL);
	report(o, &start, &end);
	return (o->validate && check_pattern(c) != 0) ? -1 : 0;
}

static int exchange(struct pp_ctx *c, const struct pp_opts *o, struct pp_run *r)
{
	struct pp_dest me, rem;

	r->routs = pp_post_recv(c, (int)c->rx_depth);
	if (r->routs < (int)c->rx_depth) {
		fprintf(stderr, "Couldn't post receive (%d)\n", r->routs);
		return -1;
	}
	if (o->use_event && droce_req_notify_cq(c->cq, 0) != 0) {
		fprintf(stderr, "Couldn't request CQ notification\n");
		return -1;
	}
	if (local_dest(c, o, &me) != 0)
		return -1;
	print_dest("local address: ", &me);
	if (o->servername != NULL ? pp_client_exch(o, &me, &rem) : pp_server_exch(c, o, &me, &rem))
		return -1;
	print_dest("remote address:", &rem);
	if (o->servername != NULL && pp_connect(c, o, me.psn, &rem) != 0)
		return -1;
	return 0;
}

static int run(struct pp_ctx *c, const struct pp_opts *o)
{
	struct pp_run r = { 0 };
	int rc;

	rc = exchange(c, o, &r);
	if (rc == 0 && o->iters > 0)
		rc = data_phase(c, o, &r);
	if (r.num_cq_events > 0)
		droce_ack_cq_events(c->cq, r.num_cq_events);
	return rc;
}

int main(int argc, char **argv)
{
	struct pp_opts o;
	struct pp_ctx *c;
	int rc;

	rc = parse_opts(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? 0 : 1;
	/* The lines are what a test or a person waits for: do not hold them in a buffer. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand48((long)getpid() * time(NULL));
	c = pp_ctx_open(&o);
	if (c == NULL)
		return 1;
	rc = pp_engine_start(c);
	if (rc == 0) {
		rc = run(c, &o);
		pp_engine_stop(c);
	}
	if (pp_ctx_close(c) != 0)
		return 1;
	return rc == 0 ? 0 : 1;
}
