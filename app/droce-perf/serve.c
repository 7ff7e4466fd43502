/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Two processes: one size of a run on each side. The client announces the size ('S'), runs
 * it as in one process (its half of each latency iteration), then sends its result, its
 * samples and its counters ('R'); the server answers with its own counters. The server, until
 * the result arrives, plays its part: the other half of each latency iteration (lat_serve),
 * replacing receives (send_bw), or only driving its engine (write_bw, read, atomic: the
 * client's WRs need no CPU on the server but the engine's). Both print the same lines,
 * perftest style; 'E' ends the sizes (the client is done or was interrupted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

struct perf_msg_result {
	uint32_t size, interrupted;
	uint64_t iters, n_lat;
	double seconds, peak_mps;
	struct droce_counters cnt;
};

/* Client: announce @p size. Server: wait for it. @return 0, 1 (no more sizes) or -1. */
int perf_peer_size(struct perf_ctx *c, uint32_t size, bool last)
{
	char t = 'S', m[5] = { last ? 'E' : 'S' };
	uint32_t s = size;

	if (c->o->role == PERF_CLIENT) {
		memcpy(m + 1, &s, 4);
		return perf_peer_send(c, m, sizeof(m));
	}
	if (perf_peer_recv(c, &t, 1) != 0 || perf_peer_recv(c, &s, 4) != 0)
		return -1;
	if (t == 'E')
		return 1;
	if (s != size) {
		fprintf(stderr, "droce-perf: the client runs size %u, expected %u\n", s, size);
		return -1;
	}
	return 0;
}

/* send_bw: replace what the client's SENDs consumed. */
static int repost(struct perf_ctx *c)
{
	struct perf_side *s = &c->side[1];
	struct ibv_wc wc[32];
	int n, i;

	n = droce_poll_cq(s->rcq, 32, wc);
	for (i = 0; i < n; i++) {
		s->rx_posted[wc[i].wr_id]--;
		if (wc[i].status != IBV_WC_SUCCESS || perf_post_recv(c, 1, wc[i].wr_id) != 0)
			return -1;
	}
	return n < 0 ? -1 : 0;
}

static int serve_passive(struct perf_ctx *c)
{
	unsigned int spin = 0;

	while (!((++spin & 255) == 0 && perf_peer_ready(c))) {
		if (perf_stop)
			return -2;
		if (c->o->verb->needs_recv && repost(c) != 0)
			return -1;
		perf_step(c);
	}
	return 0;
}

/* Server: this size, until the client's result arrives. */
int perf_serve(struct perf_ctx *c, struct perf_result *r)
{
	const struct perf_verb *v = c->o->verb;
	uint64_t it;
	int rc = v->needs_recv ? perf_fill_recv(c) : 0;

	if (rc != 0)
		return -1;
	if (c->o->test == PERF_BW || v->lat_serve == NULL)
		rc = serve_passive(c);
	else
		for (it = 0; rc == 0; it++)
			rc = v->lat_serve(c, it);
	r->interrupted = rc == -2;
	return rc == -1 ? -1 : 0;
}

static int client_exchange(struct perf_ctx *c, struct perf_result *r)
{
	struct perf_msg_result m = { .size = r->size, .interrupted = r->interrupted,
		.iters = r->iters, .n_lat = r->n_lat, .seconds = r->seconds,
		.peak_mps = r->peak_mps, .cnt = c->cnt[0] };
	struct droce_counters srv;
	char t = 'R';

	if (perf_peer_send(c, &t, 1) != 0 || perf_peer_send(c, &m, sizeof(m)) != 0 ||
	    (r->n_lat > 0 && perf_peer_send(c, r->lat, r->n_lat * sizeof(double)) != 0) ||
	    perf_peer_recv(c, &srv, sizeof(srv)) != 0)
		return -1;
	perf_counters_add(c, 1, &srv);
	return 0;
}

static int server_exchange(struct perf_ctx *c, struct perf_result *r)
{
	struct perf_msg_result m;
	char t;

	if (perf_peer_recv(c, &t, 1) != 0 || t != 'R' || perf_peer_recv(c, &m, sizeof(m)) != 0)
		return -1;
	r->iters = m.iters;
	r->seconds = m.seconds;
	r->peak_mps = m.peak_mps;
	r->interrupted = r->interrupted || m.interrupted;
	r->n_lat = m.n_lat;
	if (m.n_lat > 0) {
		r->lat = malloc(m.n_lat * sizeof(double));
		if (r->lat == NULL || perf_peer_recv(c, r->lat, m.n_lat * sizeof(double)) != 0)
			return -1;
	}
	perf_counters_add(c, 0, &m.cnt);
	return perf_peer_send(c, &c->cnt[1], sizeof(c->cnt[1]));
}

/* After a size: the client's result to the server, each side's counters to the other. */
int perf_results_exchange(struct perf_ctx *c, struct perf_result *r)
{
	return c->o->role == PERF_CLIENT ? client_exchange(c, r) : server_exchange(c, r);
}

/*
 * Before a size runs: the server has taken (and so reset) its counters and tells the client to
 * go. Without it the client's first WRITEs could reach the server while it drove its inline
 * engine waiting for the size, and be counted in the size before (128 frames lost from
 * rx_roce in a loaded run of perf_droce_perf_two_processes_write_bw_read_lat).
 */
int perf_peer_go(struct perf_ctx *c)
{
	char t = 'G';

	if (c->o->role == PERF_SERVER)
		return perf_peer_send(c, &t, 1);
	if (perf_peer_recv(c, &t, 1) != 0)
		return -1;
	if (t != 'G') {
		fprintf(stderr, "droce-perf: unexpected message '%c' from the server\n", t);
		return -1;
	}
	return 0;
}

/* Both sides connected their QPs: neither sends before the other is ready to receive. */
int perf_peer_barrier(struct perf_ctx *c)
{
	char t = 'C';

	if (perf_peer_send(c, &t, 1) != 0 || perf_peer_recv(c, &t, 1) != 0)
		return -1;
	return t == 'C' ? 0 : -1;
}

/* Client, before the barrier (RC, UC): one 1-byte RDMA WRITE per QP into the server's slot, so
 * that the neighbour (ARP) is resolved and the link warm before anything is timed. */
int perf_warmup(struct perf_ctx *c)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	unsigned int q;
	int rc = 0;

	if (c->o->role != PERF_CLIENT || c->o->conn == IBV_QPT_UD)
		return 0;
	for (q = 0; q < c->o->qps && rc == 0; q++) {
		perf_wr_base(c, 0, q, IBV_WR_RDMA_WRITE, &wr, &sge);
		sge.length = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		rc = droce_post_send(c->side[0].qp[q], &wr, &bad);
		if (rc == 0)
			rc = perf_wait_wc(c, c->side[0].scq, &wc);
	}
	return rc == 0 ? 0 : -1;
}
