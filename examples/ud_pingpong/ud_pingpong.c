/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * ud_pingpong: rdma-core 44's ibv_ud_pingpong on droce's verbs API, so droce and the unmodified
 * tool can be each other's peer (doc/interop.md):
 *
 *   ud_pingpong [options]          server: wait for a client on TCP port -p
 *   ud_pingpong [options] HOST     client: connect to the server at HOST
 *
 * The same TCP exchange as rc_pingpong (the PSN is the UD QP's SQ PSN). UD differs in the set-up:
 * the QP gets Q_Key 0x11111111 in INIT, RTR and RTS take no path (RTS: the SQ PSN only), and
 * after RTS an address handle to the peer's GID is created; every SEND names the peer's QPN and
 * Q_Key. A message is one packet: -s may not exceed the port's MTU (1024 on the rig's MTU 1500,
 * 4096 on MTU 9000), and each receive buffer has 40 more bytes in front, for the GRH. No -m.
 * The local address line prints "PSN 0x...: GID" as rdma-core's does. Default -s: 1024
 * (ibv_ud_pingpong's usage text says 2048; its code uses 1024).
 */
#include "pp.h"

static const struct pp_tool ud_tool = {
	.qp_type = IBV_QPT_UD,
	.optstring = "p:d:i:s:r:n:l:eg:ch",
	.def_size = 1024,
	.local_sep = ":",
};

int main(int argc, char **argv)
{
	return pp_main(argc, argv, &ud_tool);
}
