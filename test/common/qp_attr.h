/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * In-range attributes for every forward QP transition (RESET->INIT->RTR->RTS): the verbs
 * unit tests take them as they are, the API fuzz test spoils them.
 */
#ifndef DROCE_TEST_QP_ATTR_H
#define DROCE_TEST_QP_ATTR_H

#include <string.h>

#include <infiniband/verbs.h>

/* Port 1, Q_Key 0x11111111, remote READ/WRITE, MTU 1024, peer QPN 0x123 at 10.0.0.2 (GID
 * index 1, the IPv4 one), PSNs 0x100 (receive) and 0x200 (send), 4 READ/atomics each way,
 * timeout 14, retries 7. */
static inline void test_qp_attr_fill(struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->port_num = 1;
	a->qkey = 0x11111111;
	a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = 0x123;
	a->rq_psn = 0x100;
	a->sq_psn = 0x200;
	a->max_dest_rd_atomic = 4;
	a->max_rd_atomic = 4;
	a->min_rnr_timer = 12;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.sgid_index = 1;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.grh.dgid.raw[10] = 0xff;
	a->ah_attr.grh.dgid.raw[11] = 0xff;
	a->ah_attr.grh.dgid.raw[12] = 10;
	a->ah_attr.grh.dgid.raw[15] = 2;
}

#endif
