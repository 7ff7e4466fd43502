/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * uc_pingpong: rdma-core 44's ibv_uc_pingpong on droce's verbs API, so droce and the unmodified
 * tool can be each other's peer (doc/interop.md):
 *
 *   uc_pingpong [options]          server: wait for a client on TCP port -p
 *   uc_pingpong [options] HOST     client: connect to the server at HOST
 *
 * As rc_pingpong (same exchange of LID:QPN:PSN:GID over TCP, same loop and output), with a UC
 * QP: RTR sets path MTU, dest QPN and RQ PSN; RTS only the SQ PSN. Options: -p -d -i -s -m -r
 * -n -l -e -g -c (-h). A lost UC packet loses its message, and then the ping-pong waits
 * forever, as rdma-core's does. The differences from rdma-core are rc_pingpong's.
 */
#include "pp.h"

static const struct pp_tool uc_tool = {
	.qp_type = IBV_QPT_UC,
	.optstring = "p:d:i:s:m:r:n:l:eg:ch",
	.def_size = 4096,
	.local_sep = ",",
};

int main(int argc, char **argv)
{
	return pp_main(argc, argv, &uc_tool);
}
