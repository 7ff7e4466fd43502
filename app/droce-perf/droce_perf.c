/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-perf: perftest's tests (ib_write_bw, ib_read_lat, ...) on droce, with perftest's
 * options and output, plus what perftest cannot say: how the run compares with the raw link
 * under it and with one core's memcpy and CRC, and what the engine counted.
 *
 *   droce-perf write_bw -s 64 -n 100000       (doc/performance.md has the whole story)
 *
 * Order of a run: EAL; the devices are created (their ports exist, nobody drives them yet);
 * the reference phase on the engine's lcore (raw io-forward over the same ports, memcpy and
 * CRC per message size); the devices are opened (the engine takes the ports); QPs are
 * connected; then one run per size. Ctrl-C stops the run in progress, which is reported as
 * it stands ("interrupted"), and exits with 130.
 *
 * Two processes (--server, --client; peer.c, serve.c): each process has one side, over
 * vhost-user; the raw-link phase runs on a second vhost-user pair of their own once the QPs
 * are connected (rawfwd.c); both sides print the client's results and both sides' counters.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "perf.h"

#define PERF_EAL_ARGS_MAX 32

volatile sig_atomic_t perf_stop;

static void on_sigint(int sig)
{
	(void)sig;
	perf_stop = 1;
}

static bool hugepages_free(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
	unsigned long n = 0;

	if (f == NULL)
		return false;
	if (fscanf(f, "%lu", &n) != 1)
		n = 0;
	fclose(f);
	return n >= 256;
}

/* droce-perf starts EAL itself (so it can use hugepages when there are some), unless
 * DROCE_CONFIG names a configuration whose [eal] args should be used. */
static int eal_start(const struct perf_opts *o)
{
	const char *cfg = getenv("DROCE_CONFIG");
	char buf[512], *argv[PERF_EAL_ARGS_MAX], *tok, *save = NULL;
	int argc = 0;

	if (o->eal == NULL && cfg != NULL && cfg[0] != '\0')
		return 0;
	snprintf(buf, sizeof(buf), "%s", o->eal != NULL ? o->eal : hugepages_free() ?
		 "--in-memory --no-pci --no-telemetry --log-level=lib.eal:error" :
		 "--no-huge --no-shconf -m 512 --no-pci --no-telemetry --log-level=lib.eal:error");
	argv[argc++] = (char *)"droce-perf";
	for (tok = strtok_r(buf, " ", &save); tok != NULL && argc < PERF_EAL_ARGS_MAX - 1;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "droce-perf: cannot initialise EAL (%s): %s\n",
			o->eal != NULL ? o->eal : "default arguments", rte_strerror(rte_errno));
		return -1;
	}
	rte_openlog_stream(stderr);	/* stdout is the report (--json: nothing else there) */
	return 0;
}

/* The sizes of this invocation: -s, or every power of two from 2 to 2^23 with -a. */
static unsigned int sizes(const struct perf_opts *o, uint32_t out[24])
{
	unsigned int n = 0;
	uint32_t s;

	if (!o->all_sizes || o->verb->fixed_size != 0) {
		out[0] = o->size;
		return 1;
	}
	for (s = 2; s <= PERF_MAX_SIZE; s *= 2)
		out[n++] = s;
	return n;
}

static void raw_copy(struct perf_refs *to, const struct perf_refs *from)
{
	to->raw_mpps = from->raw_mpps;
	to->raw_hop_us = from->raw_hop_us;
	to->frame_len = from->frame_len;
}

/* One process: the raw link for every frame length, while the ports are still free. */
static void references(const struct perf_ctx *c, const uint32_t *sz, unsigned int n,
		       struct perf_refs *refs)
{
	unsigned int i;

	for (i = 0; i < n && !perf_stop; i++) {
		uint32_t fl = perf_frame_len(sz[i], c->mtu);

		if (i > 0 && fl == refs[i - 1].frame_len)
			raw_copy(&refs[i], &refs[i - 1]);
		else if (perf_raw_measure(c->o, fl, &refs[i]) != 0 && i == 0 && !c->o->json)
			fprintf(stderr, "droce-perf: raw link not measured (needs the two ports "
				"of an in-process pair)\n");
	}
}

/* Two processes: the raw link for every frame length, both sides in step (rawfwd.c). */
static int peer_references(struct perf_ctx *c, const uint32_t *sz, unsigned int n,
			   struct perf_refs *refs)
{
	unsigned int i;

	for (i = 0; i < n && !perf_stop; i++) {
		uint32_t fl = perf_frame_len(sz[i], c->mtu);

		if (i > 0 && fl == refs[i - 1].frame_len) {
			raw_copy(&refs[i], &refs[i - 1]);
		} else if (perf_raw_measure_peer(c, fl, &refs[i]) != 0) {
			fprintf(stderr, "droce-perf: raw link reference failed\n");
			return -1;
		}
	}
	return 0;
}

/* One core's bound for every size, in pieces of the run's path MTU, as droce works. */
static void bounds(const struct perf_ctx *c, const uint32_t *sz, unsigned int n,
		   struct perf_refs *refs)
{
	unsigned int i;

	for (i = 0; i < n && !perf_stop; i++)
		perf_bounds_measure(sz[i], 128u << c->mtu, &refs[i]);
}

/* One size: run it (or, as a two-process server, serve it) and exchange the results. */
static int run_one(struct perf_ctx *c, struct perf_result *r)
{
	int rc;

	if (perf_counters_take(c) != 0 || (c->fd >= 0 && perf_peer_go(c) != 0))
		return -1;
	if (c->o->role == PERF_SERVER)
		rc = perf_serve(c, r);
	else
		rc = c->o->test == PERF_BW ? perf_bw_run(c, r) : perf_lat_run(c, r);
	perf_counters_take(c);
	if (rc == 0 && c->fd >= 0)
		rc = perf_results_exchange(c, r);
	return rc;
}

static int run_sizes(struct perf_ctx *c, const uint32_t *sz, unsigned int n,
		     const struct perf_refs *refs)
{
	unsigned int i;
	int rc = 0;

	for (i = 0; i < n && rc == 0 && !perf_stop; i++) {
		struct perf_result r = { .size = sz[i] };

		if (c->o->conn == IBV_QPT_UD && sz[i] > 128u << c->mtu)
			break;		/* UD: one packet per message */
		c->size = sz[i];
		if (c->fd >= 0 && (rc = perf_peer_size(c, sz[i], false)) != 0)
			return rc > 0 ? 0 : -1;
		rc = run_one(c, &r);
		perf_report_line(c, &r, &refs[i]);
		free(r.lat);
	}
	if (c->o->role == PERF_CLIENT && rc == 0 && i < n)
		(void)perf_peer_size(c, 0, true);	/* stopped early: the server may be gone */
	return rc;
}

static void sides(struct perf_ctx *c, const struct perf_opts *o)
{
	c->o = o;
	c->fd = -1;
	c->lo = o->role == PERF_SERVER ? 1 : 0;
	c->hi = o->role == PERF_CLIENT ? 0 : 1;
}

static int list_devices(void)
{
	int n = 0;
	struct droce_device **list = droce_get_device_list(&n);

	if (list == NULL) {
		fprintf(stderr, "droce-perf: cannot list droce devices (configuration "
			"unreadable or EAL failed)\n");
		return -1;
	}
	droce_free_device_list(list);
	return 0;
}

int main(int argc, char **argv)
{
	static struct perf_refs refs[24];
	static struct perf_ctx c;
	struct perf_opts o;
	uint32_t sz[24];
	unsigned int n;
	bool ran;
	int rc;

	rc = perf_opts_parse(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? 0 : 1;
	signal(SIGINT, on_sigint);
	signal(SIGPIPE, SIG_IGN);	/* a peer gone is an error of the write, not a signal */
	sides(&c, &o);
	n = sizes(&o, sz);
	if ((o.role != PERF_BOTH && perf_peer_start(&o, &c) != 0) || eal_start(&o) != 0 ||
	    list_devices() != 0) {
		perf_peer_stop(&c);
		return 1;
	}
	rc = 0;
	if (o.role == PERF_BOTH)
		c.c2c_ns[0] = perf_c2c_measure();
	if (!o.no_raw && o.role == PERF_BOTH) {
		rc = perf_setup_path_mtu(&c);
		if (rc == 0)
			references(&c, sz, n, refs);
	}
	if (rc == 0)
		rc = perf_setup_open(&c);
	if (rc == 0 && c.c2c_ns[0] > 0 && !perf_c2c_engine_there())
		c.c2c_ns[0] = 0;	/* the engine is not on the lcore measured */
	if (rc == 0)
		rc = perf_setup_qps(&c);
	if (rc == 0 && !o.no_raw)
		bounds(&c, sz, n, refs);
	if (rc == 0 && c.fd >= 0)
		rc = perf_peer_barrier(&c) == 0 &&
		     (o.no_raw || peer_references(&c, sz, n, refs) == 0) &&
		     perf_warmup(&c) == 0 && perf_peer_barrier(&c) == 0 ? 0 : -1;
	ran = rc == 0;
	if (ran) {
		perf_report_header(&o);
		rc = run_sizes(&c, sz, n, refs);
	}
	perf_setup_close(&c);	/* frees the engine's lcore for the second c2c */
	if (ran) {
		if (o.role == PERF_BOTH && c.c2c_ns[0] > 0)
			c.c2c_ns[1] = perf_c2c_measure();
		perf_report_footer(&c);
		perf_report_counters(&c);
	}
	perf_peer_stop(&c);
	if (perf_stop) {
		fprintf(stderr, "droce-perf: interrupted\n");
		return 130;
	}
	return rc == 0 ? 0 : 1;
}
