/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Helpers for the UC, UD and SRQ functional tests (on fn.h): QPs of any type, optionally on
 * an SRQ, with one CQ for both queues; UD to RTS with a Q_Key, UC connected; address
 * handles by GID index; async events without blocking.
 */
#ifndef FN_QP_H
#define FN_QP_H

#include <errno.h>
#include <fcntl.h>

#include "fn.h"

struct fn_qp {
	int side;
	struct droce_cq *cq;		/**< send and receive */
	struct droce_qp *qp;
};

static inline void fn_qp_create(struct fn_qp *q, int side, struct droce_pd *pd,
				enum ibv_qp_type type, struct droce_srq *srq, uint32_t depth)
{
	struct droce_qp_init_attr ia = { .qp_type = type, .srq = srq,
		.cap = { .max_send_wr = depth, .max_recv_wr = srq ? 0 : depth, .max_send_sge = 2,
			 .max_recv_sge = srq ? 0 : 2 } };

	q->side = side;
	q->cq = droce_create_cq(pair_ctx[side], (int)depth * 4, NULL, NULL, 0);
	CHECK(q->cq != NULL);
	ia.send_cq = q->cq;
	ia.recv_cq = q->cq;
	q->qp = droce_create_qp(pd, &ia);
	CHECK(q->qp != NULL);
}

static inline void fn_qp_destroy(struct fn_qp *q)
{
	CHECK_EQ(droce_destroy_qp(q->qp), 0);
	CHECK_EQ(droce_destroy_cq(q->cq), 0);
}

static inline void fn_ud_rts(struct droce_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey };

	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = qp->qp_num * 31u;
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

static inline void fn_ah_attr(struct ibv_ah_attr *ah, int peer_side, int sgid, int dgid_idx)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.sgid_index = (uint8_t)sgid;
	ah->grh.hop_limit = 64;
	CHECK_EQ(droce_query_gid(pair_ctx[peer_side], 1, dgid_idx, &ah->grh.dgid), 0);
}

/* UC @p q to RTS towards @p peer, both ends' paths on GID index @p gid (PSNs from the QPNs,
 * as fn_connect()). */
static inline void fn_uc_connect(struct fn_qp *q, const struct fn_qp *peer, enum ibv_mtu mtu,
				 int gid)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE };

	CHECK_EQ(droce_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = peer->qp->qp_num * 7919u & 0xffffff;
	fn_ah_attr(&a.ah_attr, peer->side, gid, gid);
	CHECK_EQ(droce_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->qp->qp_num * 7919u & 0xffffff;
	CHECK_EQ(droce_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

/* A connected UC pair (a PD each, MTU 1024, IPv4-mapped GIDs), for posts an RC-only opcode
 * must fail on; fn_uc_pair_destroy() frees it. */
static inline void fn_uc_pair(struct fn_qp uc[2], struct droce_pd *pd[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		pd[i] = droce_alloc_pd(pair_ctx[i]);
		CHECK(pd[i] != NULL);
		fn_qp_create(&uc[i], i, pd[i], IBV_QPT_UC, NULL, 8);
	}
	fn_uc_connect(&uc[0], &uc[1], IBV_MTU_1024, GID_V4);
	fn_uc_connect(&uc[1], &uc[0], IBV_MTU_1024, GID_V4);
}

static inline void fn_uc_pair_destroy(struct fn_qp uc[2], struct droce_pd *pd[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		fn_qp_destroy(&uc[i]);
		CHECK_EQ(droce_dealloc_pd(pd[i]), 0);
	}
}

static inline void fn_post_send1(struct droce_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
				 void *addr, uint32_t len, uint32_t lkey, uint32_t imm,
				 struct droce_ah *ah, uint32_t rqpn, uint32_t qkey,
				 uint64_t raddr, uint32_t rkey, int expect)
{
	struct ibv_sge s = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr w = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(imm) }, *bad;

	if (ah != NULL) {
		w.wr.ud.ah = ah;
		w.wr.ud.remote_qpn = rqpn;
		w.wr.ud.remote_qkey = qkey;
	} else {
		w.wr.rdma.remote_addr = raddr;
		w.wr.rdma.rkey = rkey;
	}
	CHECK_EQ(droce_post_send(qp, &w, &bad), expect);
}

static inline void fn_post_srq1(struct droce_srq *srq, uint64_t wr_id, void *addr, uint32_t len,
				uint32_t lkey)
{
	struct ibv_sge s = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr r = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1 }, *bad;

	CHECK_EQ(droce_post_srq_recv(srq, &r, &bad), 0);
}

static inline void fn_async_nonblock(int side)
{
	int fd = pair_ctx[side]->async_fd;

	CHECK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
}

/* The next async event of @p side, or false when there is none now. */
static inline bool fn_async(int side, struct droce_async_event *ev)
{
	if (droce_get_async_event(pair_ctx[side], ev) != 0) {
		CHECK_EQ(errno, EAGAIN);
		return false;
	}
	droce_ack_async_event(ev);
	return true;
}

/* Wait up to @p s seconds for an event of @p type (others are skipped). */
static inline bool fn_async_wait(int side, enum ibv_event_type type, double s,
				 struct droce_async_event *out)
{
	uint64_t end = pair_deadline(s);

	while (rte_get_tsc_cycles() < end) {
		if (fn_async(side, out) && out->event_type == type)
			return true;
		pair_step();
	}
	return false;
}

#endif
