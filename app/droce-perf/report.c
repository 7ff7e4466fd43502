/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Output. perftest's table first, line for line in its format (bandwidth in MB/sec = 2^20
 * bytes per second, or Gb/sec = 10^9 bits with --report_gbits; latency in microseconds,
 * typical = median), then droce's own table: the same run against the raw link and one core's
 * memcpy/CRC bound, then the engine counters. --json: one object per size, nothing else on
 * stdout. The progress line goes to stderr, on a terminal only.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "perf.h"

#define DASHES "---------------------------------------------------------------------------" \
	"------------"
#define PERF_ROWS 32

struct row {
	struct perf_result r;	/* lat points to nothing: the stats are copied */
	struct perf_refs refs;
	double mps, t_typical, t_avg;
};

static struct row rows[PERF_ROWS];
static unsigned int n_rows;
static bool progress_shown;

double perf_now(void)
{
	return (double)rte_rdtsc() / (double)rte_get_tsc_hz();
}

static const char *title(const struct perf_opts *o)
{
	static const char *const names[][2] = {
		{ "RDMA_Write BW Test", "RDMA_Write Latency Test" },
		{ "RDMA_Read BW Test", "RDMA_Read Latency Test" },
		{ "Send BW Test", "Send Latency Test" },
		{ "Atomic FETCH_AND_ADD BW Test", "Atomic FETCH_AND_ADD Latency Test" },
	};
	int v = o->verb == &perf_verb_write ? 0 : o->verb == &perf_verb_read ? 1 :
		o->verb == &perf_verb_send ? 2 : 3;

	return names[v][o->test == PERF_LAT];
}

static const char *link_name(const struct perf_opts *o)
{
	return o->role == PERF_BOTH ? "in-process (droce0 -> droce1)" :
	       o->role == PERF_SERVER ? "two processes, vhost-user (this: server, net_vhost)" :
	       "two processes, vhost-user (this: client, net_virtio_user)";
}

void perf_report_header(const struct perf_opts *o)
{
	static const char *const conn[] = { [IBV_QPT_RC] = "RC", [IBV_QPT_UC] = "UC",
					    [IBV_QPT_UD] = "UD" };

	if (o->json)
		return;
	printf("%s\n%*s%s\n", DASHES, 20, "", title(o));
	printf(" Link           : %s\n", link_name(o));
	printf(" Connection type: %s\t\tUsing %u QPs\n", conn[o->conn], o->qps);
	printf(" TX depth       : %u\t\tCQ Moderation: %u\n", o->tx_depth, o->cq_mod);
	printf(" Inline data    : %u[B]\n", o->inline_size);
	if (o->verb == &perf_verb_read || o->verb == &perf_verb_atomic) {
		if (o->outs != 0)
			printf(" Outstand reads : %u\n", o->outs);
		else
			printf(" Outstand reads : device maximum\n");
	}
	printf("%s\n", DASHES);
	if (o->test == PERF_BW)
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
		       o->report_gbits ? "Gb/sec" : "MB/sec", o->report_gbits ? "Gb/sec" : "MB/sec");
	else
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
		       "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   "
		       "99.9%% percentile[usec]\n");
	fflush(stdout);
}

static double bw_unit(const struct perf_opts *o, double bytes_per_s)
{
	return o->report_gbits ? bytes_per_s * 8 / 1e9 : bytes_per_s / 1048576.0;
}

static double pct(const struct perf_result *r, double p)
{
	uint64_t i = (uint64_t)ceil(p * (double)r->n_lat);

	return r->lat[i == 0 ? 0 : i - 1];
}

static void lat_stats(const struct perf_result *r, double *avg, double *sd)
{
	double s = 0, s2 = 0;
	uint64_t i;

	for (i = 0; i < r->n_lat; i++)
		s += r->lat[i];
	*avg = s / (double)r->n_lat;
	for (i = 0; i < r->n_lat; i++)
		s2 += (r->lat[i] - *avg) * (r->lat[i] - *avg);
	*sd = sqrt(s2 / (double)r->n_lat);
}

static void json_counters(const struct droce_counters *c)
{
	const uint64_t *v = (const uint64_t *)c;
	const char *name;
	unsigned int i;
	bool first = true;

	printf("{");
	for (i = 0; (name = droce_counter_name(i)) != NULL; i++)
		if (v[i] != 0) {
			printf("%s\"%s\":%llu", first ? "" : ",", name, (unsigned long long)v[i]);
			first = false;
		}
	printf("}");
}

static void json_line(const struct perf_ctx *c, const struct row *w)
{
	const struct perf_result *r = &w->r;
	const struct perf_opts *o = c->o;
	double gbs = (double)r->size * w->mps / 1e9;

	printf("{\"test\":\"%s_%s\",\"bytes\":%u,\"iterations\":%llu,\"seconds\":%.6f,"
	       "\"qps\":%u,\"mtu\":%u,", o->verb->name, o->test == PERF_BW ? "bw" : "lat",
	       r->size, (unsigned long long)r->iters, r->seconds, o->qps, 128u << c->mtu);
	if (o->test == PERF_BW)
		printf("\"bw_peak_MBps\":%.2f,\"bw_avg_MBps\":%.2f,\"msg_rate_Mpps\":%.6f,",
		       (double)r->size * r->peak_mps / 1048576.0,
		       (double)r->size * w->mps / 1048576.0, w->mps / 1e6);
	else
		printf("\"t_min_us\":%.3f,\"t_max_us\":%.3f,\"t_typical_us\":%.3f,"
		       "\"t_avg_us\":%.3f,\"t_p99_us\":%.3f,\"t_p999_us\":%.3f,",
		       r->lat[0], r->lat[r->n_lat - 1], w->t_typical, w->t_avg, pct(r, 0.99),
		       pct(r, 0.999));
	printf("\"raw_fwd_Mpps\":%.3f,\"raw_hop_us\":%.3f,\"frame_len\":%u,"
	       "\"memcpy_GBps\":%.2f,\"crc_GBps\":%.2f,\"bound_GBps\":%.2f,"
	       "\"msg_vs_raw\":%.4f,\"goodput_GBps\":%.3f,\"goodput_vs_bound\":%.4f,"
	       "\"c2c_rtt_ns\":%.1f,"
	       "\"mem_per_qp\":%llu,\"interrupted\":%s,\"counters\":{\"client\":",
	       w->refs.raw_mpps, w->refs.raw_hop_us, w->refs.frame_len, w->refs.memcpy_gbs,
	       w->refs.crc_gbs, w->refs.bound_gbs,
	       w->refs.raw_mpps > 0 ? w->mps / 1e6 / w->refs.raw_mpps : 0, gbs,
	       w->refs.bound_gbs > 0 ? gbs / w->refs.bound_gbs : 0, c->c2c_ns[0],
	       (unsigned long long)c->mem_per_qp, r->interrupted ? "true" : "false");
	json_counters(&c->cnt[0]);
	printf(",\"server\":");
	json_counters(&c->cnt[1]);
	printf("}}\n");
}

static void text_line(const struct perf_opts *o, const struct row *w)
{
	const struct perf_result *r = &w->r;
	double sd, avg;

	if (o->test == PERF_BW) {
		printf(" %-10u %-10llu     %-14.2f     %-14.2f       %.6f\n", r->size,
		       (unsigned long long)r->iters, bw_unit(o, (double)r->size * r->peak_mps),
		       bw_unit(o, (double)r->size * w->mps), w->mps / 1e6);
		return;
	}
	lat_stats(r, &avg, &sd);
	printf(" %-7u %-10llu %-7.2f        %-7.2f      %-7.2f          %-7.2f        %-7.2f"
	       "         %-7.2f                %-7.2f\n", r->size,
	       (unsigned long long)r->iters, r->lat[0], r->lat[r->n_lat - 1], w->t_typical,
	       avg, sd, pct(r, 0.99), pct(r, 0.999));
}

void perf_report_line(const struct perf_ctx *c, const struct perf_result *r,
		      const struct perf_refs *refs)
{
	struct row w = { .r = *r, .refs = *refs };
	double sd;

	perf_progress_clear();
	if (r->iters == 0 || r->seconds <= 0) {
		if (!c->o->json)
			printf(" %-10u (no completed iteration)\n", r->size);
		return;
	}
	w.mps = (double)r->iters / r->seconds;
	if (c->o->test == PERF_LAT) {
		w.t_typical = r->lat[r->n_lat / 2];
		lat_stats(r, &w.t_avg, &sd);
		w.mps = 1e6 / w.t_avg;
	}
	if (c->o->json)
		json_line(c, &w);
	else
		text_line(c->o, &w);
	fflush(stdout);
	w.r.lat = NULL;
	if (n_rows < PERF_ROWS)
		rows[n_rows++] = w;
}

static void ratio_bw(const struct row *w)
{
	double gbs = (double)w->r.size * w->mps / 1e9;

	printf(" %-10u %-9.3f   %-6.2f  %-7.3f  %-9.2f %-8.2f %-9.2f %-9.2f %.2f\n",
	       w->r.size, w->refs.raw_mpps, w->refs.raw_mpps > 0 ?
	       w->mps / 1e6 / w->refs.raw_mpps : 0, gbs * 8, w->refs.memcpy_gbs,
	       w->refs.crc_gbs, w->refs.bound_gbs * 8,
	       w->refs.bound_gbs > 0 ? gbs / w->refs.bound_gbs : 0,
	       w->refs.memcpy_gbs > 0 ? gbs / w->refs.memcpy_gbs : 0);
}

static void ratio_lat(const struct row *w)
{
	double copy_us = w->refs.memcpy_gbs > 0 ? w->r.size / (w->refs.memcpy_gbs * 1e3) : 0;

	printf(" %-10u %-9.3f   %-9.1f  %-9.3f   %-9.2f %-8.2f %-11.4f\n", w->r.size,
	       w->refs.raw_hop_us, w->refs.raw_hop_us > 0 ? w->t_typical / w->refs.raw_hop_us : 0,
	       w->refs.raw_mpps, w->refs.memcpy_gbs, w->refs.crc_gbs, copy_us);
}

/* In-process: how far apart the benchmark's and the engine's cores were (c2c.c). */
static void c2c_line(const struct perf_ctx *c)
{
	if (c->c2c_ns[0] <= 0)
		return;
	printf(" cores: a cache line's round trip between the benchmark's lcore and the engine's: "
	       "%.0f ns before the run, ", c->c2c_ns[0]);
	if (c->c2c_ns[1] > 0)
		printf("%.0f ns after\n", c->c2c_ns[1]);
	else
		printf("not measured after\n");
}

void perf_report_footer(const struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	unsigned int i;

	if (o->json)
		return;
	printf("%s\n", DASHES);
	c2c_line(c);
	if (n_rows == 0 || rows[0].refs.memcpy_gbs == 0)
		return;
	if (o->role == PERF_BOTH)
		printf(" droce vs the raw link (testpmd io-forward over the same ports, engine "
		       "lcore) and one core\n");
	else
		printf(" droce vs the raw link (a second vhost-user pair, both processes reflecting; "
		       "Mpps one way, hop = RTT/2) and one core\n");
	if (o->test == PERF_BW)
		printf(" #bytes     raw[Mpps]   msg/raw goodput  memcpy    crc      bound     "
		       "goodput/  goodput/\n %-10s %-9s   %-6s  %-7s  %-9s %-8s %-9s %-9s %s\n",
		       "", "", "", "[Gb/s]", "[GB/s]", "[GB/s]", "[Gb/s]", "bound", "memcpy");
	else
		printf(" #bytes     raw hop     t_typical/ raw       memcpy    crc      one copy\n"
		       " %-10s [usec]      raw hop    [Mpps]      [GB/s]    [GB/s]   [usec]\n", "");
	for (i = 0; i < n_rows; i++)
		(o->test == PERF_BW ? ratio_bw : ratio_lat)(&rows[i]);
	printf(" bound = 1 / (2/crc + 1/memcpy): ICRC on send and on receive, one copy into the "
	       "MR\n%s\n", DASHES);
}

/* @p v is side @p side's counters of this run: added to its totals. */
void perf_counters_add(struct perf_ctx *c, int side, const struct droce_counters *v)
{
	unsigned int j, n = sizeof(struct droce_counters) / sizeof(uint64_t);
	uint64_t *t = (uint64_t *)&c->tot[side];

	c->cnt[side] = *v;
	for (j = 0; j < n; j++)
		t[j] += ((const uint64_t *)v)[j];
}

/* Read and reset the local sides' counters: this run's, added to the totals (a remote
 * side's come with the results, serve.c). */
int perf_counters_take(struct perf_ctx *c)
{
	struct droce_counters v;
	int i;

	for (i = c->lo; i <= c->hi; i++) {
		if (droce_query_counters(c->side[i].ctx, &v) != 0 ||
		    droce_counters_reset(c->side[i].ctx) != 0)
			return -1;
		perf_counters_add(c, i, &v);
	}
	return 0;
}

static void counters_side(const char *who, const struct droce_counters *c)
{
	const uint64_t *v = (const uint64_t *)c;
	const char *name;
	unsigned int i, col = 0;

	printf(" %s:", who);
	for (i = 0; (name = droce_counter_name(i)) != NULL; i++)
		if (v[i] != 0) {
			col += (unsigned int)printf("%s %s %llu", col > 70 ? "\n  " : " ", name,
						    (unsigned long long)v[i]);
			if (col > 73)
				col = 0;
		}
	for (i = 0; i < DROCE_PARSE_ERR_NUM; i++)
		if (c->parse_err[i] != 0)
			printf(" parse_err[%u] %llu", i, (unsigned long long)c->parse_err[i]);
	printf("\n");
}

void perf_report_counters(const struct perf_ctx *c)
{
	uint64_t rtx = c->tot[0].retransmits + c->tot[1].retransmits;
	uint64_t drops = c->tot[0].tx_dropped + c->tot[1].tx_dropped + c->tot[0].rx_bad_frame +
			 c->tot[1].rx_bad_frame + c->tot[0].rx_unknown_qp + c->tot[1].rx_unknown_qp;
	/* A link made lossy on purpose ([engine] bottleneck_*, fault_*): its drops are no bug. */
	uint64_t link = c->tot[0].bneck_dropped + c->tot[1].bneck_dropped +
			c->tot[0].fault_dropped + c->tot[1].fault_dropped +
			c->tot[0].fault_corrupted + c->tot[1].fault_corrupted;

	if (c->o->json) {
		if (rtx != 0)
			fprintf(stderr, "droce-perf: %llu unexpected retransmissions\n",
				(unsigned long long)rtx);
		return;
	}
	printf(" Engine counters (droce_query_counters, all sizes):\n");
	counters_side(c->fd < 0 ? "client droce0" : "client virtio0", &c->tot[0]);
	counters_side(c->fd < 0 ? "server droce1" : "server vhost0", &c->tot[1]);
	if (c->mem_per_qp != 0)
		printf(" Memory per idle QP (RSS growth while creating and connecting): %llu "
		       "bytes\n", (unsigned long long)c->mem_per_qp);
	if (link != 0)
		printf(" The link dropped or corrupted %llu frames on purpose (test bottleneck, fault "
		       "injection): %llu retransmissions\n", (unsigned long long)link,
		       (unsigned long long)rtx);
	else if (rtx != 0 || drops != 0)
		printf(" WARNING: %llu unexpected retransmissions, %llu frames dropped: the link "
		       "is lossless here, so these are droce's own losses\n",
		       (unsigned long long)rtx, (unsigned long long)drops);
	printf("%s\n", DASHES);
}

void perf_progress(const struct perf_ctx *c, uint64_t done, uint64_t total, double seconds)
{
	double mps = seconds > 0 ? (double)done / seconds : 0;

	if (!isatty(STDERR_FILENO))
		return;
	if (total != 0)
		fprintf(stderr, "\r %u B: %llu/%llu, %.3f Mpps, %.2f Gb/s, %.0f%%  ", c->size,
			(unsigned long long)done, (unsigned long long)total, mps / 1e6,
			mps * c->size * 8 / 1e9, 100.0 * (double)done / (double)total);
	else
		fprintf(stderr, "\r %u B: %llu in %.1f s, %.3f Mpps, %.2f Gb/s  ", c->size,
			(unsigned long long)done, seconds, mps / 1e6, mps * c->size * 8 / 1e9);
	progress_shown = true;
}

void perf_progress_clear(void)
{
	if (progress_shown)
		fprintf(stderr, "\r\033[K");
	progress_shown = false;
}
