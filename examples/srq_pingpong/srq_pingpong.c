/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * srq_pingpong: rdma-core 44's ibv_srq_pingpong on droce's verbs API, so droce and the
 * unmodified tool can be each other's peer (doc/interop.md):
 *
 *   srq_pingpong [options]          server: wait for a client on TCP port -p
 *   srq_pingpong [options] HOST     client: connect to the server at HOST
 *
 * -q RC QPs (default 16, at most 255) that all receive from one SRQ of -r WRs (at least one
 * per QP). The TCP exchange carries one address per QP: always 256 messages of 52 bytes each
 * way (rdma-core's MAX_QP), the unused ones zero, then "done". The client sends first on
 * every QP; -n counts the messages of all QPs together. The buffer starts zeroed, so the -c
 * pattern is all zeros. Options: -p -d -i -s -m -q -r -n -l -e -g -c (-h; -o, ODP, is
 * refused). The differences from rdma-core are rc_pingpong's.
 */
#include "pp.h"

static const struct pp_tool srq_tool = {
	.qp_type = IBV_QPT_RC,
	.srq = true,
	.optstring = "p:d:i:s:m:q:r:n:l:eog:ch",
	.def_size = 4096,
	.local_sep = ",",
};

int main(int argc, char **argv)
{
	return pp_main(argc, argv, &srq_tool);
}
