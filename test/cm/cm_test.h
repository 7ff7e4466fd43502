/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Helpers for the CM tests over the ring pair droce0 (10.99.0.1) <-> droce1 (10.99.0.2):
 * events with a deadline (driving an inline engine meanwhile), addresses, a connected RC pair.
 * Public API only.
 */
#ifndef CM_TEST_H
#define CM_TEST_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>

#include "check.h"
#include "droce.h"
#include "droce_cm.h"
#include "droce_engine.h"
#include "droce_wire_mad.h"	/* REJ reasons */

/* @p call fails with -1 and errno @p err. */
#define FAILS(call, err) do { \
	errno = 0; \
	CHECK_EQ((call), -1); \
	CHECK_EQ(errno, (err)); \
} while (0)

static bool cmt_inline;
static struct droce_context *cmt_drive_ctx;

static inline void cmt_init(void)
{
	struct droce_device **list = droce_get_device_list(NULL);

	CHECK(list != NULL);
	droce_free_device_list(list);
	cmt_inline = droce_engine_is_inline();
}

static inline struct sockaddr_in cmt_addr(const char *ip, uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	CHECK(inet_pton(AF_INET, ip, &a.sin_addr) == 1);
	return a;
}

/* The engine moves on: inline, this thread runs iterations (the CM thread does too). */
static inline void cmt_step(void)
{
	if (cmt_inline && cmt_drive_ctx != NULL)
		CHECK(droce_engine_poll(cmt_drive_ctx) >= 0);
	else
		poll(NULL, 0, 1);
}

/* The next event of @p ch within @p ms; NULL on timeout. The channel fd is made
 * non-blocking. */
static inline struct droce_cm_event *cmt_event(struct droce_cm_event_channel *ch, unsigned int ms)
{
	uint64_t end = rte_get_tsc_cycles() + (uint64_t)ms * rte_get_tsc_hz() / 1000;
	struct droce_cm_event *ev;

	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	while (rte_get_tsc_cycles() < end) {
		if (droce_cm_get_cm_event(ch, &ev) == 0)
			return ev;
		CHECK(errno == EAGAIN);
		cmt_step();
	}
	return NULL;
}

/* The next event must be @p type (with @p status); it is returned unacked. */
static inline struct droce_cm_event *cmt_expect(struct droce_cm_event_channel *ch,
						enum rdma_cm_event_type type, int status,
						unsigned int ms, int line)
{
	struct droce_cm_event *ev = cmt_event(ch, ms);

	if (ev == NULL) {
		fprintf(stderr, "line %d: no event within %u ms, expected %s\n", line, ms,
			droce_cm_event_str(type));
		exit(1);
	}
	if (ev->event != type || ev->status != status) {
		fprintf(stderr, "line %d: got %s status %d, expected %s status %d\n", line,
			droce_cm_event_str(ev->event), ev->status, droce_cm_event_str(type), status);
		exit(1);
	}
	return ev;
}
#define CMT_EXPECT(ch, type, status) cmt_expect(ch, type, status, 5000, __LINE__)

/* Expect and ack. */
#define CMT_GOT(ch, type, status) \
	CHECK_EQ(droce_cm_ack_cm_event(CMT_EXPECT(ch, type, status)), 0)

/* No event within @p ms. */
static inline void cmt_none(struct droce_cm_event_channel *ch, unsigned int ms, int line)
{
	struct droce_cm_event *ev = cmt_event(ch, ms);

	if (ev != NULL) {
		fprintf(stderr, "line %d: unexpected %s status %d\n", line,
			droce_cm_event_str(ev->event), ev->status);
		exit(1);
	}
}

static inline struct droce_cq *cmt_cq(struct droce_cm_id *id)
{
	struct droce_cq *cq = droce_create_cq(id->verbs, 64, NULL, NULL, 0);

	CHECK(cq != NULL);
	return cq;
}

static inline void cmt_qp(struct droce_cm_id *id, struct droce_cq *cq, enum ibv_qp_type type)
{
	struct droce_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = type;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	CHECK_EQ(droce_cm_create_qp(id, NULL, &a), 0);
	CHECK(id->qp != NULL);
}

/* One completion of @p cq within 5 s. */
static inline struct ibv_wc cmt_wc(struct droce_cq *cq)
{
	uint64_t end = rte_get_tsc_cycles() + 5 * rte_get_tsc_hz();
	struct ibv_wc wc;
	int n;

	while (rte_get_tsc_cycles() < end) {
		n = droce_poll_cq(cq, 1, &wc);
		CHECK(n >= 0);
		if (n == 1)
			return wc;
		cmt_step();
	}
	fprintf(stderr, "no completion within 5 s\n");
	exit(1);
}

#endif
