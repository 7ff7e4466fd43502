/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * atomic_bw / atomic_lat: 8-byte FETCH_AND_ADD on the server's memory (perftest's default
 * atomic type). Latency is the full round trip, not halved.
 */
#include "perf.h"

static void wr_init(const struct perf_ctx *c, int side, unsigned int q, struct ibv_send_wr *wr,
		    struct ibv_sge *sge)
{
	uint64_t addr;
	uint32_t rkey;

	perf_wr_base(c, side, q, IBV_WR_ATOMIC_FETCH_AND_ADD, wr, sge);
	addr = wr->wr.rdma.remote_addr;
	rkey = wr->wr.rdma.rkey;
	sge->length = 8;
	wr->wr.atomic.remote_addr = addr;	/* slots are 64-byte aligned */
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.compare_add = 1;
	wr->wr.atomic.swap = 0;
}

const struct perf_verb perf_verb_atomic = {
	.name = "atomic",
	.lat_halved = false,
	.fixed_size = 8,
	.wr_init = wr_init,
	.lat_once = perf_lat_request,
};
