/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The latency driver: one verb's lat_once() per iteration on QP 0, timed with the TSC; the
 * samples are kept and sorted for perftest's figures (min, max, typical = median, average,
 * standard deviation, 99% and 99.9% percentiles). In one process the main thread plays both
 * sides in turn while the engine runs on its lcore, so an iteration is exactly the round trip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "perf.h"

#define PERF_STALL_S 5		/* no progress for this long: the peer is unreachable */
#define PERF_SIGNAL_EVERY 8	/* unsignalled latency WRs: one in 8 is signalled */
#define PERF_LAT_WARMUP 16

static uint64_t deadline(void)
{
	return rte_rdtsc() + PERF_STALL_S * rte_get_tsc_hz();
}

static int stalled(const char *what)
{
	fprintf(stderr, "droce-perf: no %s for %d s: peer unreachable or engine stopped\n", what,
		PERF_STALL_S);
	return -1;
}

/* Two processes, server: the client's result is arriving (checked now and then). */
static bool client_done(const struct perf_ctx *c, unsigned int *spin)
{
	return c->o->role == PERF_SERVER && (++*spin & 1023) == 0 &&
	       perf_peer_ready((struct perf_ctx *)c);
}

/* One completion from @p cq; -1 on an error completion or a stall, -2 on Ctrl-C, 1 on a
 * server when the client is done. */
int perf_wait_wc(struct perf_ctx *c, struct droce_cq *cq, struct ibv_wc *wc)
{
	uint64_t end = deadline();
	unsigned int spin = 0;
	int n;

	while ((n = droce_poll_cq(cq, 1, wc)) == 0) {
		if (perf_stop)
			return -2;
		if (client_done(c, &spin))
			return 1;
		if (c->o->role != PERF_SERVER && rte_rdtsc() > end)
			return stalled("completion");
		perf_step(c);
	}
	if (n < 0 || wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "droce-perf: completion error: %s\n", n < 0 ? strerror(-n) :
			droce_wc_status_str(wc->status));
		return -1;
	}
	return 0;
}

/* Wait until the peer's RDMA WRITE has set *p to @p v (return values: perf_wait_wc). */
int perf_wait_byte(struct perf_ctx *c, const volatile uint8_t *p, uint8_t v)
{
	uint64_t end = deadline();
	unsigned int spin = 0;

	while (*p != v) {
		if (perf_stop)
			return -2;
		if (client_done(c, &spin))
			return 1;
		if (c->o->role != PERF_SERVER && rte_rdtsc() > end)
			return stalled("RDMA WRITE");
		perf_step(c);
	}
	return 0;
}

/* Take the completions of signalled latency WRs without waiting. */
static int reap(struct droce_cq *cq)
{
	struct ibv_wc wc[4];
	int n, i;

	n = droce_poll_cq(cq, 4, wc);
	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "droce-perf: completion error: %s\n",
				droce_wc_status_str(wc[i].status));
			return -1;
		}
	return n < 0 ? -1 : 0;
}

static unsigned int lat_flags(const struct perf_ctx *c, const struct ibv_send_wr *wr)
{
	bool data = wr->opcode == IBV_WR_RDMA_WRITE || wr->opcode == IBV_WR_SEND;

	return data && c->size <= c->o->inline_size ? IBV_SEND_INLINE : 0;
}

/*
 * lat_once of the verbs whose completion is the round trip (READ, ATOMIC): one request from
 * QP 0 of side 0, awaited.
 */
int perf_lat_request(struct perf_ctx *c, uint64_t it)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	RTE_SET_USED(it);
	c->o->verb->wr_init(c, 0, 0, &wr, &sge);
	return perf_lat_post(c, 0, &wr, true);
}

/* Post one latency WR from @p side; with @p wait, signalled and its completion awaited. */
int perf_lat_post(struct perf_ctx *c, int side, struct ibv_send_wr *wr, bool wait)
{
	static unsigned int posted[2];
	struct perf_side *s = &c->side[side];
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	uint64_t end = deadline();
	int rc;

	wr->send_flags = lat_flags(c, wr);
	if (wait || ++posted[side] % PERF_SIGNAL_EVERY == 0)
		wr->send_flags |= IBV_SEND_SIGNALED;
	while ((rc = droce_post_send(s->qp[0], wr, &bad)) == ENOMEM) {
		if (reap(s->scq) != 0)
			return -1;
		if (rte_rdtsc() > end)
			return stalled("send queue space");
		perf_step(c);
	}
	if (rc != 0) {
		fprintf(stderr, "droce-perf: post_send: %s\n", strerror(rc));
		return -1;
	}
	if (wait)
		return perf_wait_wc(c, s->scq, &wc);
	return reap(s->scq);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int grow(struct perf_result *r, uint64_t *cap)
{
	double *p;

	if (r->n_lat < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 4096;
	p = realloc(r->lat, *cap * sizeof(*p));
	if (p == NULL)
		return -1;
	r->lat = p;
	return 0;
}

int perf_lat_run(struct perf_ctx *c, struct perf_result *r)
{
	const struct perf_opts *o = c->o;
	double us_per_tsc = 1e6 / (double)rte_get_tsc_hz() / (o->verb->lat_halved ? 2 : 1);
	uint64_t it, cap = 0, start, t0, next_progress;
	int rc = o->verb->needs_recv ? perf_fill_recv(c) : 0;

	for (it = 0; it < PERF_LAT_WARMUP && rc == 0; it++)
		rc = o->verb->lat_once(c, it);
	start = rte_rdtsc();
	next_progress = start + rte_get_tsc_hz();
	for (; rc == 0 && !perf_stop; it++) {
		uint64_t done = it - PERF_LAT_WARMUP;
		double el = (double)(rte_rdtsc() - start) / (double)rte_get_tsc_hz();

		if (o->duration > 0 ? el >= o->duration : done >= o->iters)
			break;
		if (grow(r, &cap) != 0)
			return -1;
		t0 = rte_rdtsc();
		rc = o->verb->lat_once(c, it);
		if (rc == 0)
			r->lat[r->n_lat++] = (double)(rte_rdtsc() - t0) * us_per_tsc;
		if (t0 > next_progress) {
			perf_progress(c, done, o->duration > 0 ? 0 : o->iters, el);
			next_progress = t0 + rte_get_tsc_hz();
		}
	}
	r->seconds = (double)(rte_rdtsc() - start) / (double)rte_get_tsc_hz();
	r->iters = r->n_lat;
	r->interrupted = perf_stop || rc == -2;
	qsort(r->lat, r->n_lat, sizeof(double), cmp_double);
	return rc == -1 ? -1 : 0;
}
