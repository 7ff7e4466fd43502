/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * rc_pingpong: rdma-core's ibv_rc_pingpong, written against droce's verbs API. Same options
 * (those that make sense on droce), same TCP exchange, same output, so droce and an unmodified
 * ibv_rc_pingpong (Linux Soft-RoCE, a real NIC) can be each other's peer:
 *
 *   rc_pingpong [options]          server: wait for a client on TCP port -p
 *   rc_pingpong [options] HOST     client: connect to the server at HOST
 *
 * The two sides exchange LID:QPN:PSN:GID over TCP, connect their RC QPs, then the client sends
 * -s bytes, the server answers with a send of the same size, -n times. The device comes from
 * DROCE_CONFIG (see doc/api.md; doc/interop.md for the rxe rig).
 *
 * The program is shared by the four pingpong examples (../pingpong_common). Differences from
 * rdma-core 44 (all deliberate):
 * - -o/-O/-P (ODP), -t (timestamps), -j (device memory), -N (new post-send API) are refused
 *   with a message: droce has none of these;
 * - bad numbers are refused (rdma-core takes what strtoul() makes of them);
 * - -c checks every byte it receives against rdma-core's pattern (rdma-core checks the first
 *   byte of each page, on the server only) and exits 1 when one differs;
 * - -n 0 stops after the exchange and the connection (no message, no report).
 */
#include "pp.h"

static const struct pp_tool rc_tool = {
	.qp_type = IBV_QPT_RC,
	.optstring = "p:d:i:s:m:r:n:l:eg:oOPtcjNh",
	.def_size = 4096,
	.local_sep = ",",
};

int main(int argc, char **argv)
{
	return pp_main(argc, argv, &rc_tool);
}
