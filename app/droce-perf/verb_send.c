/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * send_bw / send_lat: SEND into receive WRs the server keeps posted. Latency: the client
 * sends, the server's receive completes and it sends back; the round trip is halved.
 */
#include <stdio.h>

#include "perf.h"

static void wr_init(const struct perf_ctx *c, int side, unsigned int q, struct ibv_send_wr *wr,
		    struct ibv_sge *sge)
{
	perf_wr_base(c, side, q, IBV_WR_SEND, wr, sge);
	wr->wr.rdma.remote_addr = 0;
	wr->wr.rdma.rkey = 0;
}

/* @p side sends to its peer, whose receive completion is awaited and replaced. */
static int send_one(struct perf_ctx *c, int side)
{
	struct perf_side *p = &c->side[1 - side];
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;

	wr_init(c, side, 0, &wr, &sge);
	if (perf_lat_post(c, side, &wr, false) != 0 || perf_wait_wc(c, p->rcq, &wc) != 0)
		return -1;
	p->rx_posted[wc.wr_id]--;
	return perf_post_recv(c, 1 - side, (unsigned int)wc.wr_id);
}

static int lat_once(struct perf_ctx *c, uint64_t it)
{
	(void)it;
	return send_one(c, 0) == 0 && send_one(c, 1) == 0 ? 0 : -1;
}

const struct perf_verb perf_verb_send = {
	.name = "send",
	.lat_halved = true,
	.needs_recv = true,
	.wr_init = wr_init,
	.lat_once = lat_once,
};
