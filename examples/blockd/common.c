/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* What the server and the client both need: time, addresses, waiting for events and
 * completions while an inline engine is driven (blockd.h). */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "blockd.h"
#include "droce_engine.h"

uint64_t blk_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void blk_step(struct droce_context *ctx)
{
	if (ctx != NULL && droce_engine_is_inline())
		droce_engine_poll(ctx);
	else
		sched_yield();
}

struct droce_cm_event *blk_event(struct droce_cm_event_channel *ch, struct droce_context *ctx,
				 int timeout_ms)
{
	uint64_t end = blk_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct droce_cm_event *ev;
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	do {
		if (droce_cm_get_cm_event(ch, &ev) == 0)
			return ev;
		if (ctx != NULL && droce_engine_is_inline())
			droce_engine_poll(ctx);
		else
			poll(&p, 1, 1);
	} while (blk_now_ns() < end);
	return NULL;
}

int blk_cq_wait(struct droce_cq *cq, struct droce_comp_channel *ch, struct droce_context *ctx,
		struct ibv_wc *wc, int n)
{
	struct pollfd p = { .fd = ch != NULL ? ch->fd : -1, .events = POLLIN };
	struct droce_cq *ecq;
	void *ectx;
	int got = droce_poll_cq(cq, n, wc);

	if (got != 0)
		return got;
	if (ch == NULL) {
		blk_step(ctx);
		return 0;
	}
	droce_req_notify_cq(cq, 0);
	got = droce_poll_cq(cq, n, wc);
	if (got != 0)
		return got;
	if (poll(&p, 1, droce_engine_is_inline() ? 0 : 100) > 0 &&
	    droce_get_cq_event(ch, &ecq, &ectx) == 0)
		droce_ack_cq_events(ecq, 1);
	else
		blk_step(ctx);
	return 0;
}

bool blk_parse_addr(const char *s, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (s != NULL && inet_pton(AF_INET, s, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		return true;
	}
	if (s != NULL && inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return true;
	}
	return false;
}
