/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * write_bw / write_lat: RDMA WRITE. Latency as perftest measures it: the client writes its
 * message into the server's memory and the server, seeing the last byte change, writes one
 * back; one iteration is the round trip, reported halved.
 */
#include "perf.h"

static void wr_init(const struct perf_ctx *c, int side, unsigned int q, struct ibv_send_wr *wr,
		    struct ibv_sge *sge)
{
	perf_wr_base(c, side, q, IBV_WR_RDMA_WRITE, wr, sge);
}

/* @p side writes @p mark as the message's last byte into its peer. */
static int write_one(struct perf_ctx *c, int side, uint8_t mark)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	perf_local(c, side, 0)[c->size - 1] = mark;
	wr_init(c, side, 0, &wr, &sge);
	return perf_lat_post(c, side, &wr, false);
}

static uint8_t mark_of(uint64_t it)
{
	return (uint8_t)(it % 255 + 1);
}

/* The server's half: the client's mark arrives, the server writes it back. */
static int lat_serve(struct perf_ctx *c, uint64_t it)
{
	int rc = perf_wait_byte(c, perf_target(c, 1, 0) + c->size - 1, mark_of(it));

	return rc != 0 ? rc : write_one(c, 1, mark_of(it));
}

static int lat_once(struct perf_ctx *c, uint64_t it)
{
	if (write_one(c, 0, mark_of(it)) != 0 || (c->fd < 0 && lat_serve(c, it) != 0))
		return -1;
	return perf_wait_byte(c, perf_target(c, 0, 0) + c->size - 1, mark_of(it));
}

const struct perf_verb perf_verb_write = {
	.name = "write",
	.lat_halved = true,
	.wr_init = wr_init,
	.lat_once = lat_once,
	.lat_serve = lat_serve,
};
