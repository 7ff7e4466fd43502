/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * ENGINE HOOK: the only place in rc_pingpong that depends on how droce's engine runs
 * (doc/engine.md). The rest is a plain verbs program: it posts, polls the CQ or sleeps in
 * droce_get_cq_event() (-e), and never drives the engine itself. So:
 * - engine on dedicated lcores ([engine] lcores = auto or a list): droce started it when the
 *   device was opened; nothing to do here;
 * - inline engine ([engine] lcores empty): a thread calls droce_engine_poll() until
 *   pp_engine_stop(). It has to be a thread: the main thread blocks in the TCP exchange and,
 *   with -e, in droce_get_cq_event(). After a while without work it sleeps a little per idle
 *   poll, so a waiting ping-pong does not take a core from the peer (the rig's guests need it).
 *
 * pp_engine_start() runs once the device is open, before any WR is posted; pp_engine_stop()
 * after the run, before the objects are destroyed.
 */
#include <stdio.h>
#include <string.h>

#include "pp.h"

#if __has_include(<droce_engine.h>)

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <droce_engine.h>

#define PP_IDLE_SPINS 1024	/* idle polls before sleeping */
#define PP_IDLE_SLEEP_US 20

static pthread_t poller;
static atomic_bool poller_run;
static bool poller_started;

/* After the last completion the engine may still owe the peer a frame (the ACK of our last
 * receive): keep polling until it has been idle for a while, at most PP_DRAIN_US. */
#define PP_DRAIN_IDLE 64
#define PP_DRAIN_US 100000

static void drain(struct droce_context *ctx)
{
	unsigned int idle = 0, waited = 0;

	while (idle < PP_DRAIN_IDLE && waited < PP_DRAIN_US) {
		idle = droce_engine_poll(ctx) > 0 ? 0 : idle + 1;
		usleep(PP_IDLE_SLEEP_US);
		waited += PP_IDLE_SLEEP_US;
	}
}

static void *poll_loop(void *arg)
{
	struct droce_context *ctx = arg;
	unsigned int idle = 0;
	int n;

	while (atomic_load_explicit(&poller_run, memory_order_acquire)) {
		n = droce_engine_poll(ctx);
		if (n < 0) {
			fprintf(stderr, "droce_engine_poll: %s\n", strerror(-n));
			return NULL;
		}
		idle = n > 0 ? 0 : idle + 1;
		if (idle > PP_IDLE_SPINS)
			usleep(PP_IDLE_SLEEP_US);
	}
	drain(ctx);
	return NULL;
}

int pp_engine_start(struct pp_ctx *c)
{
	int rc;

	if (!droce_engine_is_inline())
		return 0;
	atomic_store_explicit(&poller_run, true, memory_order_release);
	rc = pthread_create(&poller, NULL, poll_loop, c->context);
	if (rc != 0) {
		fprintf(stderr, "Couldn't start the engine thread: %s\n", strerror(rc));
		return -1;
	}
	poller_started = true;
	return 0;
}

void pp_engine_stop(struct pp_ctx *c)
{
	(void)c;
	if (!poller_started)
		return;
	atomic_store_explicit(&poller_run, false, memory_order_release);
	pthread_join(poller, NULL);
	poller_started = false;
}

#else /* no lib/engine in this build: nothing moves data (the exchange still works) */

int pp_engine_start(struct pp_ctx *c)
{
	(void)c;
	return 0;
}

void pp_engine_stop(struct pp_ctx *c)
{
	(void)c;
}

#endif
