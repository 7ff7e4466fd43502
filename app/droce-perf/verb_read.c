/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * read_bw / read_lat: RDMA READ of the server's memory into the client's. Latency is the
 * full round trip of one READ (perftest does not halve it).
 */
#include "perf.h"

static void wr_init(const struct perf_ctx *c, int side, unsigned int q, struct ibv_send_wr *wr,
		    struct ibv_sge *sge)
{
	perf_wr_base(c, side, q, IBV_WR_RDMA_READ, wr, sge);
}

const struct perf_verb perf_verb_read = {
	.name = "read",
	.lat_halved = false,
	.wr_init = wr_init,
	.lat_once = perf_lat_request,
};
