/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * blockd: a RAM-disk block server embedded in libdroce, its client, or both in one process.
 *
 *   blockd -s -a ADDR [-p PORT] [-m MIB] [-w WORKERS] [-x CLIENTS] [-e]
 *   blockd -c -a ADDR [-p PORT] [-C CONNS] [-q DEPTH] [-b BYTES] [-r READ%] [-n OPS] [-V] [-e]
 *   blockd -l [-m MIB] [-w WORKERS] [-C CONNS] [-q DEPTH] [-b BYTES] [-r READ%] [-n OPS] [-V] [-e]
 *
 * -s serves until -x clients have come and gone (0: until SIGINT/SIGTERM); -c runs -n requests
 * on each of -C connections (one thread each) with -q in flight, -r percent READs, -b bytes
 * each, -V checking every byte READ returns; -l serves on the second device of the
 * configuration and runs the client from the first (the embedded default: droce0 and droce1
 * joined in-process). -e sleeps on completion channels instead of busy polling.
 * The devices come from DROCE_CONFIG (doc/storage.md). Prints the client's ops/s and MB/s;
 * exit status 0, or 1 on any error (a failed or wrong READ among them).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "blockd.h"
#include "droce_engine.h"

static int stop;		/* atomic: also written by the signal handler */
static int listening;		/* atomic */

static void usage(void)
{
	fprintf(stderr,
		"usage: blockd -s -a ADDR [-p PORT] [-m MIB] [-w WORKERS] [-x CLIENTS] [-e]\n"
		"       blockd -c -a ADDR [-p PORT] [-C CONNS] [-q DEPTH] [-b BYTES] [-r READ%%] "
		"[-n OPS] [-V] [-e]\n"
		"       blockd -l [-m MIB] [-w WORKERS] [-C CONNS] [-q DEPTH] [-b BYTES] "
		"[-r READ%%] [-n OPS] [-V] [-e]\n");
	exit(2);
}

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);	/* lock-free: async-signal-safe */
}

/* -l: the address of the configuration's second device, where the server listens. */
static const char *second_device_addr(char *buf, size_t len)
{
	struct droce_device **list = droce_get_device_list(NULL);
	struct droce_context *ctx;
	union ibv_gid gid;
	const char *a = NULL;

	if (list == NULL || list[0] == NULL || list[1] == NULL) {
		fprintf(stderr, "blockd -l: the configuration needs two devices\n");
		exit(1);
	}
	ctx = droce_open_device(list[1]);
	if (ctx != NULL && droce_query_gid(ctx, 1, 1, &gid) == 0)	/* index 1: IPv4 */
		a = inet_ntop(AF_INET, gid.raw + 12, buf, (socklen_t)len);
	if (ctx != NULL)
		droce_close_device(ctx);
	droce_free_device_list(list);
	if (a == NULL) {
		fprintf(stderr, "blockd -l: the second device has no IPv4 address\n");
		exit(1);
	}
	return a;
}

struct srv_thread {
	struct blk_server_opts o;
	int rc;
};

static void *server_thread(void *arg)
{
	struct srv_thread *t = arg;

	t->rc = blk_server_run(&t->o);
	return NULL;
}

static int report(const struct blk_client_opts *c, const struct blk_client_result *r, int rc)
{
	printf("blockd client: %u connection(s) x depth %u, %u-byte requests, %u%% READ: "
	       "%llu requests in %.3f s = %.0f ops/s, %.1f MB/s", c->conns, c->depth, c->io,
	       c->read_pct, (unsigned long long)r->ops, r->seconds,
	       r->seconds > 0 ? (double)r->ops / r->seconds : 0.0,
	       r->seconds > 0 ? (double)r->bytes / r->seconds / 1e6 : 0.0);
	if (c->verify)
		printf("; %llu bytes READ checked, %llu wrong", (unsigned long long)r->verified,
		       (unsigned long long)r->errors);
	printf("\n");
	if (rc != 0)
		fprintf(stderr, "blockd client: %s\n", strerror(rc));
	return rc != 0 || r->errors != 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct blk_server_opts so = { .port = 7190, .size = 64ull << 20, .workers = 2,
				      .stop = &stop };
	struct blk_client_opts co = { .port = 7190, .conns = 2, .depth = 16, .io = 4096,
				      .read_pct = 50, .ops = 100000 };
	struct blk_client_result res;
	struct srv_thread st;
	char abuf[INET6_ADDRSTRLEN];
	pthread_t th;
	int op, mode = 0, rc;

	while ((op = getopt(argc, argv, "scla:p:m:w:x:C:q:b:r:n:Ve")) != -1) {
		switch (op) {
		case 's':
		case 'c':
		case 'l':
			mode = op;
			break;
		case 'a':
			so.addr = co.addr = optarg;
			break;
		case 'p':
			so.port = co.port = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			so.size = strtoull(optarg, NULL, 0) << 20;
			break;
		case 'w':
			so.workers = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'x':
			so.exit_after = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'C':
			co.conns = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'q':
			co.depth = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'b':
			co.io = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			co.read_pct = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			co.ops = strtoull(optarg, NULL, 0);
			break;
		case 'V':
			co.verify = true;
			break;
		case 'e':
			so.events = co.events = true;
			break;
		default:
			usage();
		}
	}
	if (mode == 0 || optind != argc || (mode != 'l' && so.addr == NULL))
		usage();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (mode == 's') {
		rc = blk_server_run(&so);
		if (rc != 0)
			fprintf(stderr, "blockd: %s\n", strerror(rc));
		return rc != 0;
	}
	if (mode == 'c')
		return report(&co, &res, blk_client_run(&co, &res));
	so.addr = co.addr = second_device_addr(abuf, sizeof(abuf));
	so.exit_after = co.conns;
	st.o = so;
	st.rc = 0;
	st.o.ready = &listening;
	if (pthread_create(&th, NULL, server_thread, &st) != 0)
		return 1;
	while (!__atomic_load_n(&listening, __ATOMIC_ACQUIRE) && !st.rc)
		usleep(1000);	/* a connect before the listen would be refused (REJ 8) */
	rc = report(&co, &res, blk_client_run(&co, &res));
	if (rc != 0)
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);	/* no more clients will come */
	pthread_join(th, NULL);
	if (st.rc != 0)
		fprintf(stderr, "blockd server: %s\n", strerror(st.rc));
	return rc != 0 || st.rc != 0;
}
