/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * IBV_EVENT_COMM_EST (verbs semantics, IBA 11.6.3): a QP left in RTR that receives its first
 * request raises COMM_EST for that QP, once; the event is readable on the context's async_fd
 * (poll() says POLLIN). The RTR responder still executes and ACKs the SENDs. A QP in RTS that
 * receives raises nothing, and moving the RTR QP to RTS afterwards raises nothing more.
 */
#include <fcntl.h>
#include <poll.h>

#include "fn.h"

enum { LEN = 64, NMSG = 3 };

static void nonblock(struct droce_context *ctx)
{
	CHECK(fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK) == 0);
}

static bool readable(struct droce_context *ctx)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	CHECK(poll(&p, 1, 0) >= 0);
	return (p.revents & POLLIN) != 0;
}

/* No event is waiting on @p ctx. */
static void no_event(struct droce_context *ctx)
{
	struct droce_async_event ev;

	CHECK(!readable(ctx));
	errno = 0;
	CHECK(droce_get_async_event(ctx, &ev) == -1 && errno == EAGAIN);
}

/* @p n SENDs from @p from to @p to (receives posted first), every completion checked. */
static void sends(struct fn_ep *from, struct fn_ep *to, struct fn_mem *src, struct fn_mem *dst)
{
	struct ibv_sge s = { (uintptr_t)src->buf, LEN, src->mr->lkey };
	struct ibv_send_wr w = { .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < NMSG; i++)
		fn_post_recv(to->qp, 100 + i, dst->buf + i * LEN, LEN, dst->mr->lkey);
	for (i = 0; i < NMSG; i++) {
		w.wr_id = i;
		CHECK_EQ(droce_post_send(from->qp, &w, &bad), 0);
	}
	for (i = 0; i < NMSG; i++) {
		wc = fn_wait(to->rcq);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, 100 + i);
		CHECK_EQ(wc.byte_len, LEN);
		wc = fn_wait(from->scq);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, i);
	}
	CHECK(memcmp(dst->buf, src->buf, LEN) == 0);
}

int main(int argc, char **argv)
{
	struct fn_attr a = fn_attr_default();
	struct droce_async_event ev;
	struct fn_mem m[2];
	struct fn_ep e[2];
	int i;

	fn_open(argc, argv);
	for (i = 0; i < 2; i++)
		nonblock(pair_ctx[i]);
	fn_ep_create(&e[0], 0, fn_pd(0), &a);
	fn_ep_create(&e[1], 1, fn_pd(1), &a);
	fn_connect(&e[0], &e[1], &a);
	fn_connect_rtr(&e[1], &e[0], &a);	/* droce1's QP stays in RTR */
	for (i = 0; i < 2; i++) {
		fn_mem_reg(&m[i], e[i].pd, LEN * NMSG, FN_ACCESS_ALL, 0);
		fn_fill(m[i].buf, LEN, 7 + i);
	}
	no_event(pair_ctx[1]);

	sends(&e[0], &e[1], &m[0], &m[1]);	/* into the RTR QP */
	CHECK_EQ(fn_state(e[1].qp), IBV_QPS_RTR);
	CHECK(readable(pair_ctx[1]));
	CHECK_EQ(droce_get_async_event(pair_ctx[1], &ev), 0);
	CHECK_EQ(ev.event_type, IBV_EVENT_COMM_EST);
	CHECK(ev.element.qp == e[1].qp);
	droce_ack_async_event(&ev);
	no_event(pair_ctx[1]);			/* once, not per message */
	no_event(pair_ctx[0]);			/* the RTS requester got ACKs only */

	fn_rts(&e[1], &a);
	sends(&e[1], &e[0], &m[1], &m[0]);	/* into an RTS QP: no event */
	sends(&e[0], &e[1], &m[0], &m[1]);
	fn_run(0.05);
	no_event(pair_ctx[0]);
	no_event(pair_ctx[1]);

	for (i = 0; i < 2; i++)
		fn_mem_free(&m[i]);
	fn_pair_destroy(e);
	fn_close();
	return 0;
}
