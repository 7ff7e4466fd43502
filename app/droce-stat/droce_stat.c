/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-stat: the counters of a running droce process, as `ethtool -S` prints a NIC's or
 * rdma's hw_counters a device's - once, or every SECONDS with deltas and rates - read over
 * DPDK telemetry (/droce/... commands, doc/observability.md). Also a QP's state and counters,
 * the engine lcores' load, and a list of devices and QPs; or it waits until the process's CM
 * listens (a server ready for its client). It needs no EAL and no hugepages: it only talks to
 * the process's telemetry socket.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stat.h"

struct opts {
	const char *prefix;
	const char *socket;
	const char *dev;
	double interval;	/* 0: once */
	double wait;		/* -w: seconds to wait for a listening CM id; < 0: not asked */
	long count;		/* intervals; 0: until interrupted */
	long qpn;		/* -1: the device */
	bool lcores, list, nonzero;
	const char *recording;	/* -r: a flight recording to print */
};

static struct tel_reply cur, prev;
static int fd = -1;
static volatile sig_atomic_t stop;

static void usage(FILE *f)
{
	fprintf(f,
"usage: droce-stat [options] DEVICE      counters of DEVICE\n"
"       droce-stat [options] -q QPN DEVICE  state and counters of one QP\n"
"       droce-stat [options] -l             engine lcores: busy and idle cycles\n"
"       droce-stat [options] -L             devices and their QPs\n"
"       droce-stat [options] -w SECONDS     wait until the process's CM listens\n"
"       droce-stat -r FILE.json             a QP's flight recording, as a table\n"
"Read a running droce process's counters over DPDK telemetry (no EAL needed).\n"
"\n"
"  -p, --file-prefix P  the process's EAL --file-prefix (default: rte)\n"
"  -s, --socket PATH    its telemetry socket, instead of -p\n"
"  -i, --interval S     print every S seconds (fractions allowed): deltas and rates\n"
"  -c, --count N        with -i: stop after N intervals (default: until interrupted)\n"
"  -q, --qp QPN         one QP (decimal or 0x hex) instead of the device\n"
"  -l, --lcores         the engine instances' load instead of counters\n"
"  -L, --list           the devices, their port and engine, and their QPs\n"
"  -w, --wait-listen S  exit 0 once the process (started or not yet) has a listening\n"
"                       CM id, 2 after S seconds (fractions allowed) without one\n"
"  -z, --nonzero        only counters that are not zero (once) or that moved (-i)\n"
"  -r, --recording F    print the flight recording F (droce-rec-*.json) and exit\n"
"  -h, --help           this text\n"
"      --version        the version\n"
"Exit status: 0 ok, 1 bad options, 2 no droce process (no telemetry socket, or\n"
"the process has no /droce/ commands) or the connection was lost or, with -w,\n"
"nothing listened in time, 3 unknown\n"
"device or QP (-r: no such file), 4 a reply droce-stat cannot read (-r: not a\n"
"flight recording).\n");
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "droce-stat: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* A query that must work: exits with the right code otherwise. */
static void query(const char *cmd, struct tel_reply *r, int unknown_code, const char *what)
{
	int rc = tel_query(fd, cmd, r);

	if (rc == -ENOENT)
		die(unknown_code, "%s", what);
	if (rc == -EPROTO || rc == -E2BIG)
		die(EXIT_PROTOCOL, "cannot read the reply to %s", cmd);
	if (rc < 0)
		die(EXIT_NO_PROCESS, "lost the connection to the droce process (%s)", cmd);
}

/* ---- Counters ---- */

static void print_counters(const struct opts *o, double dt, bool first)
{
	unsigned int i;

	for (i = 0; i < cur.n; i++) {
		const struct tel_entry *e = &cur.e[i], *p = first ? NULL : tel_find(&prev, e->key);
		int64_t d;

		if (!e->is_num)
			continue;
		if (p == NULL) {
			if (!o->nonzero || e->num != 0)
				printf("     %s: %" PRId64 "\n", e->key, e->num);
			continue;
		}
		d = e->num - p->num;
		if (o->nonzero && d == 0)
			continue;
		printf("     %s: %" PRId64 " (%+" PRId64 ", %.0f/s)\n", e->key, e->num, d,
		       dt > 0 ? (double)d / dt : 0.0);
	}
}

static void qp_header(const struct opts *o, int gone_code)
{
	static struct tel_reply info;
	struct tel_reply *r = &info;
	char cmd[160];
	unsigned int i;

	char what[128];

	snprintf(cmd, sizeof(cmd), "/droce/qp,%s,%ld", o->dev, o->qpn);
	snprintf(what, sizeof(what), "no QP %ld on %s", o->qpn, o->dev);
	query(cmd, r, gone_code, what);
	printf("%s QP %ld (%s, %s):\n", o->dev, o->qpn, tel_find(r, "type")->str,
	       tel_find(r, "state")->str);
	for (i = 0; i < r->n; i++)
		if (strcmp(r->e[i].key, "type") != 0 && strcmp(r->e[i].key, "state") != 0 &&
		    strcmp(r->e[i].key, "qpn") != 0)
			printf("     %s: %s\n", r->e[i].key, r->e[i].str);
}

/*
 * After a round printed at time @p t: false when the run is over (no -i, -c rounds done,
 * Ctrl-C); else keep this reply as the previous one and sleep until the next round is due.
 */
static bool next_round(const struct opts *o, long *round, double *t0, double t, double *next)
{
	if (o->interval <= 0 || (o->count > 0 && *round == o->count))
		return false;
	prev = cur;
	*t0 = t;
	(*round)++;
	*next += o->interval;
	while (!stop && now_s() < *next)
		usleep((useconds_t)RTE_MIN_SZ((*next - now_s()) * 1e6 + 1, 100000));
	return !stop;
}

static int counters(const struct opts *o)
{
	char cmd[160];
	double t0 = now_s(), t, next;
	long round = 0;

	if (o->qpn >= 0)
		snprintf(cmd, sizeof(cmd), "/droce/qp_counters,%s,%ld", o->dev, o->qpn);
	else
		snprintf(cmd, sizeof(cmd), "/droce/counters,%s", o->dev);
	next = t0;
	for (;;) {
		if (o->qpn >= 0)
			qp_header(o, round == 0 ? EXIT_UNKNOWN : EXIT_NO_PROCESS);
		/* Gone after a first answer: closed, or the process is exiting. */
		query(cmd, &cur, round == 0 ? EXIT_UNKNOWN : EXIT_NO_PROCESS, round == 0 ?
		      "no such device or QP" : "lost the device (closed, or the process exits)");
		t = now_s();
		printf("%s", o->dev);
		if (o->qpn >= 0)
			printf(" QP %ld", o->qpn);
		if (round > 0)
			printf(" statistics, last %.2f s:\n", t - t0);
		else
			printf(" statistics:\n");
		print_counters(o, t - t0, round == 0);
		fflush(stdout);
		if (!next_round(o, &round, &t0, t, &next))
			return EXIT_OK;
	}
}

/* ---- Engine lcores ---- */

static int64_t lc_num(const struct tel_reply *r, const char *id, const char *field)
{
	char key[2 * TEL_KEY_MAX];
	const struct tel_entry *e;

	snprintf(key, sizeof(key), "%s.%s", id, field);
	e = tel_find(r, key);
	return e != NULL && e->is_num ? e->num : 0;
}

static void print_lcore(const char *id, double dt, bool first)
{
	int64_t busy = lc_num(&cur, id, "busy_cycles"), idle = lc_num(&cur, id, "idle_cycles");
	int64_t it = lc_num(&cur, id, "iterations");
	const char *name = strcmp(id, "inline") == 0 ? "inline" : "lcore";

	if (!first) {
		busy -= lc_num(&prev, id, "busy_cycles");
		idle -= lc_num(&prev, id, "idle_cycles");
		it -= lc_num(&prev, id, "iterations");
	}
	printf("     %s%s%s: busy %.1f%% %s (%" PRId64 " busy, %" PRId64 " idle cycles), "
	       "%" PRId64 " iterations%s\n", name, *name == 'i' ? "" : " ",
	       *name == 'i' ? "" : id, busy + idle > 0 ? 100.0 * (double)busy /
	       (double)(busy + idle) : 0.0, first ? "since start" : "in the interval", busy, idle,
	       first ? it : (int64_t)((double)it / dt), first ? "" : "/s");
}

static int lcores(const struct opts *o)
{
	double t0 = now_s(), t, next = t0;
	long round = 0;
	unsigned int i;

	for (;;) {
		query("/droce/lcores", &cur, EXIT_NO_PROCESS, "the process has no droce engine");
		t = now_s();
		printf("engine lcores (TSC %s Hz):\n", tel_find(&cur, "tsc_hz") != NULL ?
		       tel_find(&cur, "tsc_hz")->str : "?");
		for (i = 0; i < cur.n; i++) {
			char id[TEL_KEY_MAX], *dot;

			snprintf(id, sizeof(id), "%s", cur.e[i].key);
			dot = strchr(id, '.');
			if (dot == NULL || strcmp(dot + 1, "mode") != 0)
				continue;
			*dot = '\0';
			print_lcore(id, t - t0, round == 0);
		}
		fflush(stdout);
		if (!next_round(o, &round, &t0, t, &next))
			return EXIT_OK;
	}
}

/* ---- Devices ---- */

static bool device_known(const struct tel_reply *devs, const char *name)
{
	unsigned int i;

	for (i = 0; i < devs->n; i++)
		if (strcmp(devs->e[i].str, name) == 0)
			return true;
	return false;
}

static void list_qps(const char *dev)
{
	static struct tel_reply qps, qp;
	char cmd[160];
	unsigned int i;

	snprintf(cmd, sizeof(cmd), "/droce/qps,%s", dev);
	query(cmd, &qps, EXIT_UNKNOWN, "device went away");
	for (i = 0; i < qps.n; i++) {
		snprintf(cmd, sizeof(cmd), "/droce/qp,%s,%s", dev, qps.e[i].str);
		if (tel_query(fd, cmd, &qp) != 0)
			continue;	/* destroyed meanwhile */
		printf("     QP %s: %s %s, dest QP %s, sq_psn %s, expected_psn %s, "
		       "%s send WRs outstanding\n", qps.e[i].str, tel_find(&qp, "type")->str,
		       tel_find(&qp, "state")->str, tel_find(&qp, "dest_qpn")->str,
		       tel_find(&qp, "sq_psn")->str, tel_find(&qp, "expected_psn")->str,
		       tel_find(&qp, "send_wr_outstanding")->str);
	}
}

static int list(const struct tel_reply *devs)
{
	static struct tel_reply info;
	char cmd[160];
	unsigned int i;

	for (i = 0; i < devs->n; i++) {
		snprintf(cmd, sizeof(cmd), "/droce/info,%s", devs->e[i].str);
		query(cmd, &info, EXIT_UNKNOWN, "device went away");
		printf("%s: port %s, mac %s, mtu %s, %s, engine %s, %s QPs, %s CQs\n",
		       devs->e[i].str, tel_find(&info, "port")->str, tel_find(&info, "mac")->str,
		       tel_find(&info, "mtu")->str,
		       tel_find(&info, "open")->num ? "open" : "closed",
		       tel_find(&info, "engine")->str, tel_find(&info, "qps")->str,
		       tel_find(&info, "cqs")->str);
		list_qps(devs->e[i].str);
	}
	return EXIT_OK;
}

/* ---- Waiting for a server ---- */

/* The reply to /droce/cm_ids ({"<n>": {"state": "listen", ...}, ...}) holds a listening id. */
static bool has_listener(const struct tel_reply *ids)
{
	static const char suffix[] = ".state";
	unsigned int i;
	size_t n;

	for (i = 0; i < ids->n; i++) {
		n = strlen(ids->e[i].key);
		if (n >= sizeof(suffix) - 1 &&
		    strcmp(ids->e[i].key + n - (sizeof(suffix) - 1), suffix) == 0 &&
		    strcmp(ids->e[i].str, "listen") == 0)
			return true;
	}
	return false;
}

/*
 * Poll the socket at @path every 20 ms until its process has a listening CM id: the process
 * may not have started yet, or not yet created its socket, its CM or its listener.
 */
static int wait_listen(const struct opts *o, const char *path)
{
	static struct tel_reply ids;
	double end = now_s() + o->wait;
	int s, rc;

	for (;;) {
		s = tel_connect(path);
		if (s >= 0) {
			rc = tel_query(s, "/droce/cm_ids", &ids);
			close(s);
			if (rc == 0 && has_listener(&ids))
				return EXIT_OK;
		}
		if (stop || now_s() >= end)
			break;
		usleep(20000);
	}
	die(EXIT_NO_PROCESS, "no droce CM listens on %s after %g s", path, o->wait);
}

/* ---- Options ---- */

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "file-prefix", required_argument, NULL, 'p' },
		{ "socket", required_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "qp", required_argument, NULL, 'q' },
		{ "lcores", no_argument, NULL, 'l' },
		{ "list", no_argument, NULL, 'L' },
		{ "nonzero", no_argument, NULL, 'z' },
		{ "wait-listen", required_argument, NULL, 'w' },
		{ "recording", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->prefix = "rte";
	o->qpn = -1;
	o->wait = -1;
	while ((c = getopt_long(argc, argv, "p:s:i:c:q:lLzw:r:h", lo, NULL)) != -1) {
		errno = 0;
		switch (c) {
		case 'p': o->prefix = optarg; break;
		case 's': o->socket = optarg; break;
		case 'i':
			o->interval = strtod(optarg, &end);
			if (*end != '\0' || !(o->interval >= 0.01 && o->interval <= 3600))
				die(EXIT_USAGE, "bad interval '%s' (0.01 to 3600 seconds)", optarg);
			break;
		case 'c':
			o->count = strtol(optarg, &end, 10);
			if (*end != '\0' || o->count < 1 || errno != 0)
				die(EXIT_USAGE, "bad count '%s'", optarg);
			break;
		case 'q':
			o->qpn = strtol(optarg, &end, 0);
			if (*end != '\0' || *optarg == '\0' || o->qpn < 0 || o->qpn > 0xffffff)
				die(EXIT_USAGE, "bad QPN '%s'", optarg);
			break;
		case 'l': o->lcores = true; break;
		case 'L': o->list = true; break;
		case 'z': o->nonzero = true; break;
		case 'w':
			o->wait = strtod(optarg, &end);
			if (*end != '\0' || *optarg == '\0' || !(o->wait >= 0 && o->wait <= 3600))
				die(EXIT_USAGE, "bad wait '%s' (0 to 3600 seconds)", optarg);
			break;
		case 'r': o->recording = optarg; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		case 'V': printf("droce-stat %s\n", DROCE_VERSION); exit(EXIT_OK);
		default: usage(stderr); exit(EXIT_USAGE);
		}
	}
	if (o->recording != NULL) {
		/* A file, no process: nothing else applies. */
		if (optind != argc || strcmp(o->prefix, "rte") != 0 || o->socket != NULL ||
		    o->interval > 0 || o->count > 0 || o->qpn >= 0 || o->lcores || o->list ||
		    o->nonzero || o->wait >= 0)
			die(EXIT_USAGE, "-r FILE takes no other option or argument");
		return;
	}
	if (optind < argc)
		o->dev = argv[optind++];
	if (o->wait >= 0) {
		if (o->dev != NULL || optind < argc || o->lcores || o->list || o->interval > 0 ||
		    o->count > 0 || o->qpn >= 0 || o->nonzero) {
			usage(stderr);
			exit(EXIT_USAGE);
		}
		return;
	}
	if (optind < argc || (o->dev == NULL && !o->lcores && !o->list) ||
	    (o->dev != NULL && (o->lcores || o->list)) || (o->count > 0 && o->interval <= 0) ||
	    (o->list && o->interval > 0)) {
		usage(stderr);
		exit(EXIT_USAGE);
	}
}

int main(int argc, char **argv)
{
	static struct tel_reply devs;
	char path[512];
	struct opts o;

	parse(argc, argv, &o);
	if (o.recording != NULL)
		return stat_recording(o.recording);
	if (o.socket != NULL)
		snprintf(path, sizeof(path), "%s", o.socket);
	else
		tel_socket_path(path, sizeof(path), o.prefix);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (o.wait >= 0)
		return wait_listen(&o, path);
	fd = tel_connect(path);
	if (fd < 0)
		die(EXIT_NO_PROCESS, "no DPDK process answers on %s (%s): is droce running with "
		    "that --file-prefix (-p)?", path, strerror(-fd));
	if (tel_query(fd, "/droce/devices", &devs) != 0)
		die(EXIT_NO_PROCESS, "the process on %s does not run droce (no /droce/ telemetry "
		    "commands)", path);
	if (o.list)
		return list(&devs);
	if (o.lcores)
		return lcores(&o);
	if (!device_known(&devs, o.dev))
		die(EXIT_UNKNOWN, "no device '%s' in the droce process on %s", o.dev, path);
	return counters(&o);
}
