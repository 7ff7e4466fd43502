/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * send_bw / send_lat: SEND into receive WRs the server keeps posted. Latency: the client
 * sends, the server's receive completes and it sends back; the round trip is halved. Over UD
 * the WR carries the address handle, the peer's QPN and the Q_Key, and every receive buffer
 * has room for the 40-byte GRH ahead of the message (the slots are at least 2 x size + 64).
 */
#include <stdio.h>

#include "perf.h"

static void wr_init(const struct perf_ctx *c, int side, unsigned int q, struct ibv_send_wr *wr,
		    struct ibv_sge *sge)
{
	perf_wr_base(c, side, q, IBV_WR_SEND, wr, sge);
	wr->wr.rdma.remote_addr = 0;
	wr->wr.rdma.rkey = 0;
	if (c->o->conn == IBV_QPT_UD)
		perf_wr_ud(c, side, q, wr);
}

static int post_one(struct perf_ctx *c, int side)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_init(c, side, 0, &wr, &sge);
	return perf_lat_post(c, side, &wr, false);
}

/* A receive completion of @p side, replaced. */
static int recv_one(struct perf_ctx *c, int side)
{
	struct ibv_wc wc;
	int rc = perf_wait_wc(c, c->side[side].rcq, &wc);

	if (rc != 0)
		return rc;
	c->side[side].rx_posted[wc.wr_id]--;
	return perf_post_recv(c, side, (unsigned int)wc.wr_id);
}

static int lat_once(struct perf_ctx *c, uint64_t it)
{
	(void)it;
	if (c->fd >= 0)		/* two processes: the server answers (lat_serve) */
		return post_one(c, 0) == 0 && recv_one(c, 0) == 0 ? 0 : -1;
	return post_one(c, 0) == 0 && recv_one(c, 1) == 0 && post_one(c, 1) == 0 &&
	       recv_one(c, 0) == 0 ? 0 : -1;
}

static int lat_serve(struct perf_ctx *c, uint64_t it)
{
	int rc;

	(void)it;
	rc = recv_one(c, 1);
	return rc != 0 ? rc : post_one(c, 1);
}

const struct perf_verb perf_verb_send = {
	.name = "send",
	.lat_halved = true,
	.needs_recv = true,
	.wr_init = wr_init,
	.lat_once = lat_once,
	.lat_serve = lat_serve,
};
