/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Helpers for the functional tests: droce0 <-> droce1 over the ring pair (pair.h), public API
 * only. An endpoint is one RC QP with its own send and receive CQs; fn_connect() walks a pair
 * to RTS with the attributes of a struct fn_attr; fn_wait() polls one completion while the
 * engine runs (inline: driven from here; dedicated: on its lcore).
 */
#ifndef FN_H
#define FN_H

#include <arpa/inet.h>
#include <string.h>

#include "pair.h"

enum { FN_TIMEOUT_S = 20 };

/* GID table of the test devices: fe80:: link-local, IPv4-mapped, then the INI's IPv6. */
enum { GID_LL = 0, GID_V4 = 1, GID_V6 = 2 };

struct fn_attr {
	uint32_t depth;			/**< send and receive queue depth */
	uint32_t max_inline;
	int access;			/**< qp_access_flags */
	enum ibv_mtu mtu;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t rd_atomic;		/**< max_rd_atomic and max_dest_rd_atomic */
	uint8_t gid;			/**< GID index of both ends' paths (GID_*) */
};

struct fn_ep {
	int side;			/**< 0: droce0, 1: droce1 */
	struct droce_pd *pd;
	struct droce_cq *scq, *rcq;
	struct droce_qp *qp;
};

struct fn_mem {
	uint8_t *buf;
	size_t len;
	struct droce_mr *mr;
};

#define FN_ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static inline struct fn_attr fn_attr_default(void)
{
	struct fn_attr a = { .depth = 64, .max_inline = 0, .access = FN_ACCESS_ALL,
			     .mtu = IBV_MTU_1024, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
			     .min_rnr_timer = 1, .rd_atomic = 4, .gid = GID_V4 };

	return a;
}

static inline struct droce_pd *fn_pd(int side)
{
	struct droce_pd *pd = droce_alloc_pd(pair_ctx[side]);

	CHECK(pd != NULL);
	return pd;
}

static inline void fn_ep_create(struct fn_ep *e, int side, struct droce_pd *pd,
				const struct fn_attr *a)
{
	struct droce_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = a->depth, .max_recv_wr = a->depth, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = a->max_inline } };

	e->side = side;
	e->pd = pd;
	e->scq = droce_create_cq(pair_ctx[side], (int)a->depth * 2, NULL, NULL, 0);
	e->rcq = droce_create_cq(pair_ctx[side], (int)a->depth * 2, NULL, NULL, 0);
	CHECK(e->scq != NULL && e->rcq != NULL);
	ia.send_cq = e->scq;
	ia.recv_cq = e->rcq;
	e->qp = droce_create_qp(pd, &ia);
	CHECK(e->qp != NULL);
}

static inline void fn_ep_destroy(struct fn_ep *e)
{
	if (e->qp != NULL)
		CHECK_EQ(droce_destroy_qp(e->qp), 0);
	CHECK_EQ(droce_destroy_cq(e->scq), 0);
	CHECK_EQ(droce_destroy_cq(e->rcq), 0);
	e->qp = NULL;
}

/* Walk @p e to RTR, its responder connected to @p peer. @return 0, or the error of the
 * modify that failed. */
/* Move @p qp from RESET to RTR towards QP @p dqpn at GID @p dgid (its receive PSN from @p dqpn,
 * as the peer's send PSN is). @return 0 or the error. */
static inline int fn_try_rtr_to(struct droce_qp *qp, uint32_t dqpn, const union ibv_gid *dgid,
				const struct fn_attr *a)
{
	struct ibv_qp_attr q = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = (unsigned int)a->access };
	int rc;

	rc = droce_modify_qp(qp, &q, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS);
	if (rc != 0)
		return rc;
	memset(&q, 0, sizeof(q));
	q.qp_state = IBV_QPS_RTR;
	q.path_mtu = a->mtu;
	q.dest_qp_num = dqpn;
	q.rq_psn = dqpn * 7919u & 0xffffff;
	q.max_dest_rd_atomic = a->rd_atomic;
	q.min_rnr_timer = a->min_rnr_timer;
	q.ah_attr.is_global = 1;
	q.ah_attr.port_num = 1;
	q.ah_attr.grh.sgid_index = a->gid;
	q.ah_attr.grh.hop_limit = 64;
	q.ah_attr.grh.dgid = *dgid;
	return droce_modify_qp(qp, &q, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER);
}

static inline int fn_try_rtr(struct fn_ep *e, const struct fn_ep *peer, const struct fn_attr *a)
{
	union ibv_gid dgid;

	CHECK_EQ(droce_query_gid(pair_ctx[peer->side], 1, a->gid, &dgid), 0);
	return fn_try_rtr_to(e->qp, peer->qp->qp_num, &dgid, a);
}

static inline void fn_connect_rtr(struct fn_ep *e, const struct fn_ep *peer,
				  const struct fn_attr *a)
{
	CHECK_EQ(fn_try_rtr(e, peer, a), 0);
}

/* Move @p e from RTR to RTS (its requester's attributes from @p a). @return 0 or the error. */
static inline int fn_try_rts(struct fn_ep *e, const struct fn_attr *a)
{
	struct ibv_qp_attr q;

	memset(&q, 0, sizeof(q));
	q.qp_state = IBV_QPS_RTS;
	q.sq_psn = e->qp->qp_num * 7919u & 0xffffff;	/* the peer's rq_psn */
	q.timeout = a->timeout;
	q.retry_cnt = a->retry_cnt;
	q.rnr_retry = a->rnr_retry;
	q.max_rd_atomic = a->rd_atomic;
	return droce_modify_qp(e->qp, &q, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static inline void fn_rts(struct fn_ep *e, const struct fn_attr *a)
{
	CHECK_EQ(fn_try_rts(e, a), 0);
}

/* Walk @p e to RTS, connected to @p peer. */
static inline void fn_connect(struct fn_ep *e, const struct fn_ep *peer, const struct fn_attr *a)
{
	fn_connect_rtr(e, peer, a);
	fn_rts(e, a);
}

/* Two endpoints (droce0, droce1) with their own PDs, connected to each other. */
static inline void fn_pair(struct fn_ep e[2], const struct fn_attr *a)
{
	fn_ep_create(&e[0], 0, fn_pd(0), a);
	fn_ep_create(&e[1], 1, fn_pd(1), a);
	fn_connect(&e[0], &e[1], a);
	fn_connect(&e[1], &e[0], a);
}

static inline void fn_pair_destroy(struct fn_ep e[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		fn_ep_destroy(&e[i]);
		CHECK_EQ(droce_dealloc_pd(e[i].pd), 0);
	}
}

/* @p len bytes (page aligned, filled with @p fill) registered in @p pd with @p access. */
static inline void fn_mem_reg(struct fn_mem *m, struct droce_pd *pd, size_t len, int access,
			      uint8_t fill)
{
	m->len = len;
	m->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	CHECK(m->buf != NULL);
	memset(m->buf, fill, len);
	m->mr = droce_reg_mr(pd, m->buf, len, access);
	CHECK(m->mr != NULL);
}

static inline void fn_mem_free(struct fn_mem *m)
{
	CHECK_EQ(droce_dereg_mr(m->mr), 0);
	free(m->buf);
}

/* A pattern that differs per byte and per @p seed. */
static inline void fn_fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131 + seed * 7 + (i >> 8)) ^ (seed >> 3));
}

static inline bool fn_all(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* A signaled WRITE @p id of @p len bytes from @p m's start to @p raddr under @p rkey. */
static inline void fn_post_write(struct fn_ep *e, const struct fn_mem *m, uint32_t len,
				 uint64_t id, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)m->buf, len, m->mr->lkey };
	struct ibv_send_wr w = { .wr_id = id, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	w.wr.rdma.remote_addr = raddr;
	w.wr.rdma.rkey = rkey;
	CHECK_EQ(droce_post_send(e->qp, &w, &bad), 0);
}

/* One completion from @p cq, driving the engine meanwhile; fails after FN_TIMEOUT_S. */
static inline struct ibv_wc fn_wait(struct droce_cq *cq)
{
	uint64_t end = pair_deadline(FN_TIMEOUT_S);
	struct ibv_wc wc;
	int n;

	while ((n = droce_poll_cq(cq, 1, &wc)) == 0) {
		CHECK(rte_get_tsc_cycles() < end);
		pair_step();
	}
	CHECK_EQ(n, 1);
	return wc;
}

/* The next completion of @p cq is @p wr_id's, successful. */
static inline void fn_wait_ok(struct droce_cq *cq, uint64_t wr_id)
{
	struct ibv_wc wc = fn_wait(cq);

	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, wr_id);
}

/* Nothing arrives on @p cq for @p s seconds of engine work. */
static inline void fn_quiet(struct droce_cq *cq, double s)
{
	uint64_t end = pair_deadline(s);
	struct ibv_wc wc;

	while (rte_get_tsc_cycles() < end) {
		CHECK_EQ(droce_poll_cq(cq, 1, &wc), 0);
		pair_step();
	}
}

/* Let the engine run for @p s seconds. */
static inline void fn_run(double s)
{
	uint64_t end = pair_deadline(s);

	while (rte_get_tsc_cycles() < end)
		pair_step();
}

/* Every field of a completion. */
struct fn_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t imm;			/**< imm_data (network order) or invalidated_rkey */
	unsigned int wc_flags;
	uint32_t qp_num;
	uint32_t src_qp;
};

#define FN_CHECK_WC(wc, e) do { \
	if ((wc).status != (e).status) \
		fprintf(stderr, "wr %llu: %s, expected %s\n", (unsigned long long)(wc).wr_id, \
			droce_wc_status_str((wc).status), droce_wc_status_str((e).status)); \
	CHECK_EQ((wc).wr_id, (e).wr_id); \
	CHECK_EQ((wc).status, (e).status); \
	if ((e).status == IBV_WC_SUCCESS) { \
		CHECK_EQ((wc).opcode, (e).opcode); \
		CHECK_EQ((wc).byte_len, (e).byte_len); \
		CHECK_EQ((wc).imm_data, (e).imm); \
		CHECK_EQ((wc).wc_flags, (e).wc_flags); \
		CHECK_EQ((wc).src_qp, (e).src_qp); \
	} \
	CHECK_EQ((wc).qp_num, (e).qp_num); \
} while (0)

static inline struct droce_counters fn_counters(int side)
{
	struct droce_counters c;

	CHECK_EQ(droce_query_counters(pair_ctx[side], &c), 0);
	return c;
}

/* A GID index from a test argument: "v4" (IPv4-mapped), "v6" (the INI's IPv6), "ll" (fe80::). */
static inline int fn_gid_arg(const char *s)
{
	if (strcmp(s, "v6") == 0)
		return GID_V6;
	if (strcmp(s, "ll") == 0)
		return GID_LL;
	CHECK(strcmp(s, "v4") == 0);
	return GID_V4;
}

/* The paths on GID index @p gid went the way that index says: to an IPv6 GID (global or
 * link-local) each side resolved its peer by neighbour discovery, which droce does for IPv6
 * destinations only; to an IPv4-mapped GID no ND frame was needed. */
static inline void fn_check_gid_family(int gid)
{
	uint64_t nd0 = fn_counters(0).rx_nd, nd1 = fn_counters(1).rx_nd;

	if (gid == GID_V4) {
		CHECK_EQ(nd0 + nd1, 0);
	} else {
		CHECK(nd0 > 0);
		CHECK(nd1 > 0);
	}
}

static inline struct droce_counters fn_qp_counters(struct droce_qp *qp)
{
	struct droce_counters c;

	CHECK_EQ(droce_query_qp_counters(qp, &c), 0);
	return c;
}

static inline enum ibv_qp_state fn_state(struct droce_qp *qp)
{
	struct ibv_qp_attr a;
	struct droce_qp_init_attr ia;

	CHECK_EQ(droce_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

static inline void fn_post_recv(struct droce_qp *qp, uint64_t wr_id, void *addr, uint32_t len,
				uint32_t lkey)
{
	struct ibv_sge s = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr r = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1 }, *bad;

	CHECK_EQ(droce_post_recv(qp, &r, &bad), 0);
}

/* Open both devices; argv[1] names the mode the INI file selects ("inline" or "lcore"). */
static inline void fn_open(int argc, char **argv)
{
	CHECK(argc >= 2);
	pair_open();
	CHECK_EQ(pair_inline, strcmp(argv[1], "inline") == 0);
}

static inline void fn_close(void)
{
	int i;

	for (i = 0; i < 2; i++)
		CHECK_EQ(droce_close_device(pair_ctx[i]), 0);
}

#endif
