/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The run of a pingpong example, as rdma-core's tools run it: post rx_depth receives, print
 * the local address(es), exchange them over TCP, connect, then ping-pong: the client sends
 * first (on every QP), each side sends once per message received on a QP, until both sent and
 * received -n messages (srq: -n in all, over its QPs); then the report.
 *
 * -c: the client sends rdma-core's pattern (the buffer's fill byte, 0x7b, or 0 for srq, with
 * the first byte of every page 0); droce checks every byte it received against it, on both
 * sides, and exits 1 on a mismatch (rdma-core checks the first byte of each page, on the
 * server only, and just prints "invalid data in page N").
 */
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
	struct ibv_wc *wc;
	int num_wc;
};

/* Our side of the exchange: LID and GID of the port, the QPN, a random PSN. */
static int local_dest(struct pp_ctx *c, const struct pp_opts *o, unsigned int i,
		      struct pp_dest *me)
{
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
	me->qpn = (int)c->qp[i]->qp_num;
	me->psn = (int)(lrand48() & 0xffffff);
	return 0;
}

static void print_dest(const char *what, const char *sep, const struct pp_dest *d)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, &d->gid, gid, sizeof(gid));
	printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n", what, d->lid, d->qpn,
	       d->psn, sep, gid);
}

/* rdma-core's -c pattern, set by the client before its first send: the buffer's fill byte,
 * and the first byte of every page (page number % sizeof(char)), i.e. 0. */
static uint8_t pattern_at(const struct pp_ctx *c, unsigned int i, long page)
{
	if (i % page == 0)
		return (uint8_t)((i / page) % sizeof(char));
	return c->tool->srq ? 0 : PP_FILL_BYTE;
}

static void fill_pattern(struct pp_ctx *c)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned int i;

	for (i = 0; i < c->size; i++)
		c->buf[c->grh + i] = pattern_at(c, i, page);
}

/* After the run, the buffer holds the last message received. @return bad pages. */
static int check_pattern(const struct pp_ctx *c)
{
	long page = sysconf(_SC_PAGESIZE);
	const uint8_t *msg = c->buf + c->grh;
	unsigned int i;
	int bad = 0;
	long last_bad = -1;

	for (i = 0; i < c->size; i++) {
		if (msg[i] == pattern_at(c, i, page) || (long)(i / page) == last_bad)
			continue;
		last_bad = (long)(i / page);
		printf("invalid data in page %ld (byte %u: 0x%02x)\n", last_bad, i, msg[i]);
		bad++;
	}
	return bad;
}

static int find_qp(const struct pp_ctx *c, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < c->num_qp; i++)
		if (c->qp[i]->qp_num == qpn)
			return (int)i;
	fprintf(stderr, "Couldn't find QPN %06x\n", qpn);
	return -1;
}

/* A receive completed: refill the receive queue when it runs low (one per QP left). */
static int recv_done(struct pp_ctx *c, struct pp_run *r)
{
	if (--r->routs <= (int)c->num_qp) {
		r->routs += pp_post_recv(c, (int)c->rx_depth - r->routs);
		if (r->routs < (int)c->rx_depth) {
			fprintf(stderr, "Couldn't post receive (%d)\n", r->routs);
			return -1;
		}
	}
	r->rcnt++;
	return 0;
}

/* One completion, as rdma-core's tools handle it: count it, and post the next send on its QP
 * once both the send and the receive of that QP's round are done. */
static int handle_wc(struct pp_ctx *c, const struct pp_opts *o, struct pp_run *r,
		     const struct ibv_wc *wc)
{
	int q;

	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "Failed status %s (%d) for wr_id %d\n",
			droce_wc_status_str(wc->status), wc->status, (int)wc->wr_id);
		return -1;
	}
	q = find_qp(c, wc->qp_num);
	if (q < 0)
		return -1;
	if (wc->wr_id == PP_SEND_WRID) {
		r->scnt++;
	} else if (wc->wr_id == PP_RECV_WRID) {
		if (recv_done(c, r) != 0)
			return -1;
	} else {
		fprintf(stderr, "Completion for unknown wr_id %d\n", (int)wc->wr_id);
		return -1;
	}
	c->pending[q] &= ~(int)wc->wr_id;
	if (r->scnt < o->iters && c->pending[q] == 0) {
		if (pp_post_send(c, (unsigned int)q) != 0) {
			fprintf(stderr, "Couldn't post send\n");
			return -1;
		}
		c->pending[q] = PP_RECV_WRID | PP_SEND_WRID;
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
	int ne, i;

	if (o->use_event && wait_cq_event(c, r) != 0)
		return -1;
	do {
		ne = droce_poll_cq(c->cq, r->num_wc, r->wc);
		if (ne < 0) {
			fprintf(stderr, "poll CQ failed %d\n", ne);
			return -1;
		}
	} while (!o->use_event && ne < 1);
	for (i = 0; i < ne; i++) {
		if (handle_wc(c, o, r, &r->wc[i]) != 0) {
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

/* The client's first sends, one per QP; the server waits for a receive on each. */
static int first_sends(struct pp_ctx *c, const struct pp_opts *o)
{
	unsigned int i;

	for (i = 0; i < c->num_qp; i++) {
		c->pending[i] = PP_RECV_WRID;
		if (o->servername == NULL)
			continue;
		if (pp_post_send(c, i) != 0) {
			fprintf(stderr, "Couldn't post send\n");
			return -1;
		}
		c->pending[i] |= PP_SEND_WRID;
	}
	return 0;
}

/* The ping-pong: the client sends first; each side sends once per message received. */
static int data_phase(struct pp_ctx *c, const struct pp_opts *o, struct pp_run *r)
{
	struct timeval start, end;

	if (o->servername != NULL && o->validate)
		fill_pattern(c);
	if (first_sends(c, o) != 0)
		return -1;
	gettimeofday(&start, NULL);
	while (r->rcnt < o->iters || r->scnt < o->iters)
		if (poll_step(c, o, r) != 0)
			return -1;
	gettimeofday(&end, NULL);
	report(o, &start, &end);
	return (o->validate && check_pattern(c) != 0) ? -1 : 0;
}

static int local_dests(struct pp_ctx *c, const struct pp_opts *o, struct pp_dest *me)
{
	unsigned int i;

	if (droce_query_port(c->context, (uint8_t)o->ib_port, &c->portinfo) != 0) {
		fprintf(stderr, "Couldn't get port info\n");
		return -1;
	}
	for (i = 0; i < c->num_qp; i++) {
		if (local_dest(c, o, i, &me[i]) != 0)
			return -1;
		print_dest("local address: ", o->tool->local_sep, &me[i]);
	}
	return 0;
}

/* Post the receives, exchange the addresses, connect (the server did during the exchange). */
static int exchange(struct pp_ctx *c, const struct pp_opts *o, struct pp_run *r)
{
	static struct pp_dest me[PP_MAX_QP], rem[PP_MAX_QP];	/* unused ones stay zero */
	unsigned int i, n = o->tool->srq ? PP_MAX_QP : 1;

	r->routs = pp_post_recv(c, (int)c->rx_depth);
	if (r->routs < (int)c->rx_depth) {
		fprintf(stderr, "Couldn't post receive (%d)\n", r->routs);
		return -1;
	}
	if (o->use_event && droce_req_notify_cq(c->cq, 0) != 0) {
		fprintf(stderr, "Couldn't request CQ notification\n");
		return -1;
	}
	if (local_dests(c, o, me) != 0)
		return -1;
	if (o->servername != NULL ? pp_client_exch(o, me, rem, n) :
				    pp_server_exch(c, o, me, rem, n))
		return -1;
	for (i = 0; i < c->num_qp; i++)
		print_dest("remote address:", ",", &rem[i]);
	if (o->servername != NULL && pp_connect(c, o, me, rem) != 0)
		return -1;
	return 0;
}

static int run(struct pp_ctx *c, const struct pp_opts *o)
{
	struct pp_run r = { .num_wc = o->tool->srq ? (int)(o->num_qp + o->rx_depth) : 2 };
	int rc;

	r.wc = calloc((size_t)r.num_wc, sizeof(*r.wc));
	if (r.wc == NULL)
		return -1;
	rc = exchange(c, o, &r);
	if (rc == 0 && o->iters > 0)
		rc = data_phase(c, o, &r);
	if (r.num_cq_events > 0)
		droce_ack_cq_events(c->cq, r.num_cq_events);
	free(r.wc);
	return rc;
}

int pp_main(int argc, char **argv, const struct pp_tool *tool)
{
	struct pp_opts o;
	struct pp_ctx *c;
	int rc;

	rc = pp_parse_opts(argc, argv, tool, &o);
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
