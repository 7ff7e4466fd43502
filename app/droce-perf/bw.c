/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The bandwidth driver: the client keeps up to -t WRs outstanding on each of its -q QPs,
 * posted as chains with one WR in -Q signalled (CQ moderation), and polls
 * its send CQ; for send tests the server's receive completions are replaced as they come.
 * -n counts messages per QP (as perftest); -D runs for a time. Peak is the best of
 * PERF_SLICES equal slices of the run (by messages, or by time with -D). When -D (or Ctrl-C)
 * stops the posting, a QP whose last WRs are unsignalled posts one more, signalled: the run
 * ends when every WR posted has completed, so no ACK or READ response is still on its way
 * (it would reach the next size's run, or a destroyed QP and be dropped as rx_unknown_qp).
 * A step visits only the QPs that can post (a completion came back since they last could
 * not), and keeps totals instead of scanning: with 10 000 QPs the client's core must not
 * spend more per message than the engine does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "perf.h"

#define PERF_SLICES 32
#define PERF_STALL_S 5
#define PERF_POLL 32

struct bw_qp {
	struct ibv_send_wr *wr;	/* tx_depth WRs, chained as needed */
	struct ibv_sge *sge;
	uint64_t posted, outstanding;
	uint64_t target;	/* WRs to post: -n, UINT64_MAX with -D until posting stops */
	unsigned int since_sig;	/* WRs posted since the last signalled one */
	bool queued;		/* in bw_run.ready */
};

struct bw_run {
	struct bw_qp *qp;
	uint64_t completed, next_mark, start, last, end_tsc;
	double peak;
	uint64_t mark_tsc, mark_done;
	unsigned int flags;	/* IBV_SEND_INLINE or 0 */
	bool stopped;		/* -D ran out or Ctrl-C: only the last signalled WRs are posted */
	uint32_t *ready;	/* QPs to visit for posting, n_ready of them */
	unsigned int n_ready;
	uint64_t outstanding;	/* over all QPs */
	unsigned int unposted;	/* QPs that have not posted target WRs yet */
};

static void make_ready(struct bw_run *b, unsigned int q)
{
	if (!b->qp[q].queued) {
		b->qp[q].queued = true;
		b->ready[b->n_ready++] = q;
	}
}

static int bw_alloc(struct perf_ctx *c, struct bw_run *b)
{
	unsigned int q, i, m = c->o->tx_depth;

	b->qp = calloc(c->o->qps, sizeof(*b->qp));
	b->ready = calloc(c->o->qps, sizeof(*b->ready));
	if (b->qp == NULL || b->ready == NULL)
		return -1;
	b->unposted = c->o->qps;
	for (q = 0; q < c->o->qps; q++) {
		make_ready(b, q);
		struct bw_qp *p = &b->qp[q];

		p->target = c->o->duration > 0 ? UINT64_MAX : c->o->iters;
		p->wr = calloc(m, sizeof(*p->wr));
		p->sge = calloc(m, sizeof(*p->sge));
		if (p->wr == NULL || p->sge == NULL)
			return -1;
		for (i = 0; i < m; i++)
			c->o->verb->wr_init(c, 0, q, &p->wr[i], &p->sge[i]);
	}
	return 0;
}

static void bw_free(const struct perf_ctx *c, struct bw_run *b)
{
	unsigned int q;

	free(b->ready);
	if (b->qp == NULL)
		return;
	for (q = 0; q < c->o->qps; q++) {
		free(b->qp[q].wr);
		free(b->qp[q].sge);
	}
	free(b->qp);
}

/* Post what fits on QP @p q as one chain; one WR in cq_mod is signalled, and the last of the
 * run. @return 0 or -1. */
static int post_chain(struct perf_ctx *c, struct bw_run *b, unsigned int q)
{
	struct bw_qp *p = &b->qp[q];
	uint64_t room = c->o->tx_depth - p->outstanding, left = p->target - p->posted;
	unsigned int n = (unsigned int)RTE_MIN(room, left), i;
	struct ibv_send_wr *bad;
	int rc;

	/* Batch the posts, unless no signalled WR is in flight to make room. */
	if (n == 0 || (n < left && n < (c->o->tx_depth + 7) / 8 &&
		       p->outstanding > p->since_sig))
		return 0;
	for (i = 0; i < n; i++) {
		struct ibv_send_wr *w = &p->wr[i];

		w->send_flags = b->flags;
		w->next = i + 1 < n ? w + 1 : NULL;
		if (++p->since_sig == c->o->cq_mod || p->posted + i + 1 == p->target) {
			w->send_flags |= IBV_SEND_SIGNALED;
			w->wr_id = (uint64_t)q << 32 | p->since_sig;
			p->since_sig = 0;
		}
	}
	rc = droce_post_send(c->side[0].qp[q], p->wr, &bad);
	if (rc != 0) {
		fprintf(stderr, "droce-perf: post_send on QP %u: %s\n", q, strerror(rc));
		return -1;
	}
	p->posted += n;
	p->outstanding += n;
	b->outstanding += n;
	if (p->posted == p->target)
		b->unposted--;
	return 0;
}

/* Posting stops (-D, Ctrl-C): WRs after a QP's last signalled one would complete unseen, so
 * that QP posts one more, signalled, whose completion accounts for them. */
static void stop_posting(const struct perf_ctx *c, struct bw_run *b)
{
	unsigned int q;

	b->stopped = true;
	b->unposted = 0;
	for (q = 0; q < c->o->qps; q++) {
		struct bw_qp *p = &b->qp[q];

		p->target = p->posted + (p->since_sig != 0);
		if (p->posted != p->target) {
			b->unposted++;
			make_ready(b, q);
		}
	}
}

static void mark(const struct perf_ctx *c, struct bw_run *b, uint64_t now)
{
	double dt = (double)(now - b->mark_tsc) / (double)rte_get_tsc_hz();

	if (dt > 0 && b->completed > b->mark_done) {
		double rate = (double)(b->completed - b->mark_done) / dt;

		if (rate > b->peak)
			b->peak = rate;
	}
	b->mark_tsc = now;
	b->mark_done = b->completed;
	if (c->o->duration > 0)
		b->next_mark = now + (uint64_t)(c->o->duration / PERF_SLICES *
						 (double)rte_get_tsc_hz());
	else
		b->next_mark = b->completed + RTE_MAX(c->o->iters * c->o->qps / PERF_SLICES, 1ull);
}

static int poll_send(struct perf_ctx *c, struct bw_run *b)
{
	struct ibv_wc wc[PERF_POLL];
	int n, i;

	n = droce_poll_cq(c->side[0].scq, PERF_POLL, wc);
	if (n < 0) {
		fprintf(stderr, "droce-perf: poll_cq: %s\n", strerror(-n));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "droce-perf: completion error: %s\n",
				droce_wc_status_str(wc[i].status));
			return -1;
		}
		b->qp[wc[i].wr_id >> 32].outstanding -= (uint32_t)wc[i].wr_id;
		b->outstanding -= (uint32_t)wc[i].wr_id;
		b->completed += (uint32_t)wc[i].wr_id;
		make_ready(b, (unsigned int)(wc[i].wr_id >> 32));
	}
	return n;
}

/* Send tests: replace the receives the server consumed. */
static int poll_recv(struct perf_ctx *c)
{
	struct perf_side *s = &c->side[1];
	struct ibv_wc wc[PERF_POLL];
	int n, i;

	n = droce_poll_cq(s->rcq, PERF_POLL, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "droce-perf: receive completion error: %s\n",
				droce_wc_status_str(wc[i].status));
			return -1;
		}
		s->rx_posted[wc[i].wr_id]--;
		if (perf_post_recv(c, 1, (unsigned int)wc[i].wr_id) != 0)
			return -1;
	}
	return n < 0 ? -1 : 0;
}

static bool qp_busy(const struct bw_run *b)
{
	return b->outstanding != 0 || b->unposted != 0;
}

/* Post on the QPs that are ready; one that cannot post now becomes ready again with its
 * next completion (a signalled WR is in flight whenever it waits). */
static int post_ready(struct perf_ctx *c, struct bw_run *b)
{
	unsigned int n = b->n_ready, i;

	b->n_ready = 0;
	for (i = 0; i < n; i++) {
		unsigned int q = b->ready[i];

		b->qp[q].queued = false;
		if (post_chain(c, b, q) != 0)
			return -1;
	}
	return 0;
}

/*
 * With -q > 1 and -D: how evenly the QPs shared the link, from the messages each completed —
 * Jain's fairness index (sum x)^2 / (n sum x^2): 1 when equal, 1/n when one QP had it all —
 * and the smallest and largest share (the incast benchmark, doc/congestion.md).
 */
static void report_shares(const struct perf_ctx *c, const struct bw_run *b)
{
	double sum = 0, sq = 0, n = c->o->qps;
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned int q;

	for (q = 0; q < c->o->qps; q++) {
		double x = (double)b->qp[q].posted;

		sum += x;
		sq += x * x;
		lo = RTE_MIN(lo, b->qp[q].posted);
		hi = RTE_MAX(hi, b->qp[q].posted);
	}
	perf_progress_clear();
	printf(" QP shares: %u QPs, messages per QP min %llu max %llu, Jain's fairness index "
	       "%.3f\n", c->o->qps, (unsigned long long)lo, (unsigned long long)hi,
	       sq > 0 ? sum * sum / (n * sq) : 0.0);
}

/* One pass: post, poll, account. @return 1 to go on, 0 when done, -1 on error. */
static int bw_step(struct perf_ctx *c, struct bw_run *b, uint64_t *stall)
{
	uint64_t now = rte_rdtsc();
	int n;

	if (!b->stopped && (perf_stop || (c->o->duration > 0 && now >= b->end_tsc)))
		stop_posting(c, b);
	if (b->unposted != 0 && post_ready(c, b) != 0)
		return -1;
	n = poll_send(c, b);
	if (n < 0 || (c->o->verb->needs_recv && c->fd < 0 && poll_recv(c) != 0))
		return -1;
	if (n > 0) {
		b->last = now;
		*stall = now + PERF_STALL_S * rte_get_tsc_hz();
	} else if (now > *stall) {
		fprintf(stderr, "droce-perf: no completion for %d s: peer unreachable or engine "
			"stopped\n", PERF_STALL_S);
		return -1;
	}
	if (c->o->duration > 0 ? now >= b->next_mark : b->completed >= b->next_mark)
		mark(c, b, now);
	if (n == 0)
		perf_step(c);
	return qp_busy(b) ? 1 : 0;
}

int perf_bw_run(struct perf_ctx *c, struct perf_result *r)
{
	struct bw_run b = { .stopped = false };
	uint64_t hz = rte_get_tsc_hz(), stall, next_progress;
	int rc;

	if (bw_alloc(c, &b) != 0 || (c->o->verb->needs_recv && perf_fill_recv(c) != 0)) {
		bw_free(c, &b);
		return -1;
	}
	if ((c->o->verb == &perf_verb_write || c->o->verb == &perf_verb_send) &&
	    c->size <= c->o->inline_size)
		b.flags = IBV_SEND_INLINE;
	b.start = b.last = b.mark_tsc = rte_rdtsc();
	b.end_tsc = b.start + (uint64_t)(c->o->duration * (double)hz);
	stall = b.start + PERF_STALL_S * hz;
	next_progress = b.start + hz;
	mark(c, &b, b.start);
	while ((rc = bw_step(c, &b, &stall)) == 1) {
		if (b.last > next_progress) {
			perf_progress(c, b.completed, c->o->duration > 0 ? 0 :
				      c->o->iters * c->o->qps,
				      (double)(b.last - b.start) / (double)hz);
			next_progress = b.last + hz;
		}
	}
	r->iters = b.completed;
	r->seconds = (double)(b.last - b.start) / (double)hz;
	r->peak_mps = b.peak;
	r->interrupted = perf_stop != 0;
	if (rc == 0 && c->o->qps > 1 && c->o->duration > 0 && !c->o->json)
		report_shares(c, &b);
	bw_free(c, &b);
	return rc;
}
