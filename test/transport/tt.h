/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Transport test harness: two real droce devices (the embedded default: droce0, droce1), QPs
 * created and connected through the public verbs API, and a test "engine" that joins their
 * transport states. Every frame a transport sends is parsed with droce_parse_mbuf() (ICRC
 * checked), optionally shown to a tap, optionally dropped/duplicated/reordered by a seeded
 * RNG, and handed to the peer's transport_rx(), whose verdict is checked against the counters
 * (tt_rx()). Time is a simulated TSC: when nothing moves, the clock jumps to the next transport
 * deadline, so timeout tests are exact and fast.
 */
#ifndef TT_H
#define TT_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce.h"
#include "transport.h"
#include "verbs_engine.h"

#define TT_SKIP 77

#include "check.h"

#define TT_MAX_QP 128
#define TT_QLEN 65536
#define TT_HZ 2000000000ull	/* simulated TSC: 2 GHz */

struct tt;

struct tt_qp {
	struct droce_qp *qp;
	struct transport_qp *t;
	struct droce_cq *scq;
	struct droce_cq *rcq;
	int side;
	struct tt_qp *peer;
};

struct tt_frame {
	struct rte_mbuf *m;
	struct droce_pkt pkt;
	int to;
};

/** Options of a connected QP pair; tt_opts_default() gives a sane set. */
struct tt_opts {
	enum ibv_mtu mtu;
	int access[2];
	uint32_t psn[2];		/* sq_psn of side i = rq_psn of the other */
	uint8_t max_rd_atomic[2];
	uint8_t max_dest_rd_atomic[2];
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint32_t depth;
	uint32_t max_sge;
	uint32_t max_inline;
	int sq_sig_all;
};

struct tt {
	struct transport_env env;
	struct rte_mempool *pool;
	struct droce_context *ctx[2];
	struct droce_device *dev[2];
	struct droce_pd *pd[2];
	union ibv_gid gid[2];		/* index 1: the IPv4 address */
	struct rte_ether_addr mac[2];
	struct droce_counters cnt[2];
	struct tt_qp qps[TT_MAX_QP];
	int nqp;
	struct tt_frame *q;
	uint32_t qhead, qtail;
	/* link impairments (per mille) and the RNG */
	unsigned int drop, dup, reorder;
	unsigned int ce;		/* per mille of ECN-capable frames marked CE */
	bool blackhole[2];		/* frames to side i vanish */
	uint64_t rng;
	unsigned int resolve_fail;	/* resolve() says -EAGAIN this many more times */
	bool refused;			/* resolve() said -EAGAIN in this step */
	int64_t drop_psn[2];		/* drop the next frame from side i with this PSN (-1) */
	void (*tap)(struct tt *tt, int from, const struct droce_pkt *pkt, struct rte_mbuf *m);
	void *tap_arg;
	uint64_t frames;
	enum transport_verdict verdict;	/* of the last frame given to a transport */
	uint64_t verdicts[TRANSPORT_VERDICT_NUM];	/* frames by verdict */
};

static inline uint64_t tt_rand(struct tt *tt)
{
	/* xorshift64*: deterministic per seed */
	tt->rng ^= tt->rng >> 12;
	tt->rng ^= tt->rng << 25;
	tt->rng ^= tt->rng >> 27;
	return tt->rng * 0x2545F4914F6CDD1Dull;
}

static inline int tt_side(struct tt *tt, const struct droce_device *dev)
{
	return dev == tt->dev[0] ? 0 : 1;
}

static inline void tt_enqueue(struct tt *tt, struct rte_mbuf *m, const struct droce_pkt *pkt,
			      int to)
{
	struct tt_frame *f;

	CHECK(tt->qtail - tt->qhead < TT_QLEN);
	f = &tt->q[tt->qtail++ % TT_QLEN];
	f->m = m;
	f->pkt = *pkt;
	f->to = to;
	if (tt->reorder && tt->qtail - tt->qhead >= 2 &&
	    tt_rand(tt) % 1000 < tt->reorder) {
		struct tt_frame *g = &tt->q[(tt->qtail - 2) % TT_QLEN], x = *f;

		*f = *g;
		*g = x;
	}
}

/* A frame built by hand from the other side to side @p to: the header fields @p h (P_Key
 * 0xffff, PSN cut to 24 bits) with @p len zero bytes of payload. */
static inline void tt_inject_h(struct tt *tt, int to, struct droce_hdr_fields *h, uint32_t len)
{
	struct droce_flow f;
	struct droce_pkt pkt;
	struct rte_mbuf *m = rte_pktmbuf_alloc(tt->pool);

	CHECK(m != NULL);
	memset(&f, 0, sizeof(f));
	memcpy(f.sgid, tt->gid[!to].raw, 16);
	memcpy(f.dgid, tt->gid[to].raw, 16);
	h->pkey = 0xffff;
	h->psn &= 0xffffff;
	memset(rte_pktmbuf_append(m, (uint16_t)len), 0, len);
	CHECK_EQ(droce_build_mbuf(m, &f, h), 0);
	CHECK_EQ(droce_parse_mbuf(m, 0, &pkt), DROCE_PARSE_OK);
	tt_enqueue(tt, m, &pkt, to);
}

/* A frame built by hand from the other side to side @p to: @p opcode for QP @p dqpn at @p psn
 * with @p len zero bytes of payload; an AETH, where the opcode has one, is an ACK with
 * unlimited credits and MSN 1. */
static inline void tt_inject(struct tt *tt, int to, uint32_t dqpn, uint8_t opcode, uint32_t psn,
			     uint32_t len)
{
	struct droce_hdr_fields h;

	memset(&h, 0, sizeof(h));
	h.opcode = opcode;
	h.dqpn = dqpn;
	h.psn = psn;
	h.aeth.syndrome = 0x1f;
	h.aeth.msn = 1;
	tt_inject_h(tt, to, &h, len);
}

/* A congested switch: an ECN-capable IPv4 frame (ECT(0) or ECT(1)) marked CE, its header
 * checksum updated; the ICRC does not cover the field. */
static inline void tt_mark_ce(struct rte_mbuf *m, struct droce_pkt *pkt)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, pkt->l3_off);

	if (pkt->ipv6 || (pkt->tclass & 3) == 0 || (pkt->tclass & 3) == 3)
		return;
	ip->type_of_service |= 3;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	CHECK_EQ(droce_parse_mbuf(m, 0, pkt), DROCE_PARSE_OK);
}

static void tt_tx(struct transport_env *env, struct droce_device *dev, struct rte_mbuf *m)
{
	struct tt *tt = env->engine;
	int from = tt_side(tt, dev), to = !from;
	struct droce_pkt pkt;

	CHECK_EQ(droce_parse_mbuf(m, 0, &pkt), DROCE_PARSE_OK);
	if (tt->ce && tt_rand(tt) % 1000 < tt->ce)
		tt_mark_ce(m, &pkt);
	tt->frames++;
	tt->cnt[from].tx_packets++;
	if (tt->tap != NULL)
		tt->tap(tt, from, &pkt, m);
	if (tt->drop_psn[from] == droce_bth_psn(droce_pkt_bth(&pkt))) {
		tt->drop_psn[from] = -1;
		rte_pktmbuf_free(m);
		return;
	}
	if (tt->blackhole[to] || (tt->drop && tt_rand(tt) % 1000 < tt->drop)) {
		rte_pktmbuf_free(m);
		return;
	}
	if (tt->dup && tt_rand(tt) % 1000 < tt->dup) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, tt->pool, 0, UINT32_MAX);
		struct droce_pkt cp;

		CHECK(c != NULL);
		CHECK_EQ(droce_parse_mbuf(c, 0, &cp), DROCE_PARSE_OK);
		tt_enqueue(tt, c, &cp, to);
	}
	tt_enqueue(tt, m, &pkt, to);
}

static int tt_resolve(struct transport_env *env, struct droce_device *dev, struct droce_flow *f)
{
	struct tt *tt = env->engine;
	int from = tt_side(tt, dev);

	if (tt->resolve_fail > 0) {
		tt->resolve_fail--;
		tt->refused = true;
		return -EAGAIN;
	}
	CHECK(memcmp(f->dgid, tt->gid[!from].raw, 16) == 0);
	CHECK(memcmp(f->sgid, tt->gid[from].raw, 16) == 0);
	f->src_mac = tt->mac[from];
	f->dst_mac = tt->mac[!from];
	return 0;
}

/* The MAC behind GID 0 (fe80:: + modified EUI-64 of the MAC). */
static inline void tt_mac_from_gid(const union ibv_gid *g, struct rte_ether_addr *mac)
{
	mac->addr_bytes[0] = g->raw[8] ^ 2;
	mac->addr_bytes[1] = g->raw[9];
	mac->addr_bytes[2] = g->raw[10];
	mac->addr_bytes[3] = g->raw[13];
	mac->addr_bytes[4] = g->raw[14];
	mac->addr_bytes[5] = g->raw[15];
}

/* EAL with the test's arguments, both devices opened, one PD each. */
static inline void tt_init(struct tt *tt, int argc, char **argv, uint64_t seed)
{
	struct droce_device **list;
	union ibv_gid g0;
	int n = 0, i;

	memset(tt, 0, sizeof(*tt));
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(TT_SKIP);
	}
	tt->pool = rte_pktmbuf_pool_create("tt_pool", 32767, 256, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	CHECK(tt->pool != NULL);
	list = droce_get_device_list(&n);
	CHECK(list != NULL && n >= 2);
	for (i = 0; i < 2; i++) {
		tt->ctx[i] = droce_open_device(list[i]);
		CHECK(tt->ctx[i] != NULL);
		tt->dev[i] = tt->ctx[i]->device;
		tt->pd[i] = droce_alloc_pd(tt->ctx[i]);
		CHECK(tt->pd[i] != NULL);
		CHECK_EQ(droce_query_gid(tt->ctx[i], 1, 1, &tt->gid[i]), 0);
		CHECK_EQ(droce_query_gid(tt->ctx[i], 1, 0, &g0), 0);
		tt_mac_from_gid(&g0, &tt->mac[i]);
		CHECK_EQ(fcntl(tt->ctx[i]->async_fd, F_SETFL, O_NONBLOCK), 0);
	}
	droce_free_device_list(list);
	tt->q = calloc(TT_QLEN, sizeof(*tt->q));
	CHECK(tt->q != NULL);
	tt->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	tt->drop_psn[0] = tt->drop_psn[1] = -1;
	tt->env.pool = tt->pool;
	tt->env.now = TT_HZ;	/* t = 1 s */
	tt->env.hz = TT_HZ;
	tt->env.tx = tt_tx;
	tt->env.resolve = tt_resolve;
	tt->env.engine = tt;
}

static inline void tt_opts_default(struct tt_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mtu = IBV_MTU_1024;
	o->access[0] = o->access[1] = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_REMOTE_ATOMIC;
	o->psn[0] = 0xfffff0;	/* wraps early */
	o->psn[1] = 0x123456;
	o->max_rd_atomic[0] = o->max_rd_atomic[1] = 16;
	o->max_dest_rd_atomic[0] = o->max_dest_rd_atomic[1] = 16;
	o->timeout = 14;
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->min_rnr_timer = 1;
	o->depth = 256;
	o->max_sge = 4;
	o->max_inline = 256;
}

static inline void tt_modify(struct tt *tt, struct tt_qp *q, struct ibv_qp_attr *a, int mask)
{
	CHECK_EQ(droce_modify_qp(q->qp, a, mask), 0);
	transport_qp_modified(&tt->env, q->t, mask);
}

static inline struct tt_qp *tt_qp_new(struct tt *tt, int side, const struct tt_opts *o)
{
	struct tt_qp *q = &tt->qps[tt->nqp++];
	struct droce_qp_init_attr ia;

	CHECK(tt->nqp <= TT_MAX_QP);
	memset(q, 0, sizeof(*q));
	q->side = side;
	q->scq = droce_create_cq(tt->ctx[side], 4096, NULL, NULL, 0);
	q->rcq = droce_create_cq(tt->ctx[side], 4096, NULL, NULL, 0);
	CHECK(q->scq != NULL && q->rcq != NULL);
	memset(&ia, 0, sizeof(ia));
	ia.qp_context = q;
	ia.send_cq = q->scq;
	ia.recv_cq = q->rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = o->sq_sig_all;
	ia.cap.max_send_wr = o->depth;
	ia.cap.max_recv_wr = o->depth;
	ia.cap.max_send_sge = o->max_sge;
	ia.cap.max_recv_sge = o->max_sge;
	ia.cap.max_inline_data = o->max_inline;
	q->qp = droce_create_qp(tt->pd[side], &ia);
	CHECK(q->qp != NULL);
	q->t = transport_qp_create(q->qp, &tt->cnt[side]);
	CHECK(q->t != NULL);
	return q;
}

/* An address vector to side @p to's IPv4 GID (index 1) from ours. */
static inline void tt_av(struct tt *tt, struct ibv_ah_attr *ah, int to)
{
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = tt->gid[to];
	ah->grh.sgid_index = 1;
	ah->grh.hop_limit = 64;
}

/* RESET -> INIT -> RTR towards @p peer (IBA 10.3.1), telling the transport each time. */
static inline void tt_connect_rtr(struct tt *tt, struct tt_qp *q, struct tt_qp *peer,
				  const struct tt_opts *o)
{
	int s = q->side;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = o->access[s];
	tt_modify(tt, q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		  IBV_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = o->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = o->psn[!s];
	a.max_dest_rd_atomic = o->max_dest_rd_atomic[s];
	a.min_rnr_timer = o->min_rnr_timer;
	tt_av(tt, &a.ah_attr, !s);
	tt_modify(tt, q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

/* RESET -> INIT -> RTR -> RTS towards @p peer (IBA 10.3.1), telling the transport each time. */
static inline void tt_connect_one(struct tt *tt, struct tt_qp *q, struct tt_qp *peer,
				  const struct tt_opts *o)
{
	int s = q->side;
	struct ibv_qp_attr a;

	tt_connect_rtr(tt, q, peer, o);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = o->psn[s];
	a.timeout = o->timeout;
	a.retry_cnt = o->retry_cnt;
	a.rnr_retry = o->rnr_retry;
	a.max_rd_atomic = o->max_rd_atomic[s];
	tt_modify(tt, q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* A connected pair: [0] on droce0, [1] on droce1. */
static inline struct tt_qp *tt_pair(struct tt *tt, const struct tt_opts *o)
{
	struct tt_qp *a = tt_qp_new(tt, 0, o), *b = tt_qp_new(tt, 1, o);

	a->peer = b;
	b->peer = a;
	tt_connect_one(tt, a, b, o);
	tt_connect_one(tt, b, a, o);
	return a;
}

/* A QP of @p type on side @p side, not connected, its transport driven by tt_run(). */
static inline struct tt_qp *tt_qp_raw(struct tt *tt, int side, enum ibv_qp_type type)
{
	struct droce_qp_init_attr ia = { .qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct tt_qp *v = &tt->qps[tt->nqp++];

	CHECK(tt->nqp <= TT_MAX_QP);
	memset(v, 0, sizeof(*v));
	v->side = side;
	v->scq = v->rcq = droce_create_cq(tt->ctx[side], 16, NULL, NULL, 0);
	CHECK(v->scq != NULL);
	ia.send_cq = ia.recv_cq = v->scq;
	ia.qp_context = v;
	v->qp = droce_create_qp(tt->pd[side], &ia);
	CHECK(v->qp != NULL);
	v->t = transport_qp_create(v->qp, &tt->cnt[side]);
	CHECK(v->t != NULL);
	return v;
}

/* A raw UC QP @p v to INIT (@p access) and RTR towards the other side's QP 0x11, PSN 0x321. */
static inline void tt_uc_rtr(struct tt *tt, struct tt_qp *v, int access)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = (unsigned int)access;
	tt_modify(tt, v, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		  IBV_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x11;
	a.rq_psn = 0x321;
	tt_av(tt, &a.ah_attr, !v->side);
	tt_modify(tt, v, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		  IBV_QP_RQ_PSN);
}

/* Counter at byte offset @p off of @p c. */
static inline uint64_t tt_cnt_at(const struct droce_counters *c, size_t off)
{
	return *(const uint64_t *)(const void *)((const char *)c + off);
}

/*
 * transport_rx() of @p m to @p q, its verdict checked against the counters of @p q's side: a
 * drop counted the counter it names, once; an accepted frame counted no drop but what it
 * displaced (the queued replay whose resource a new READ/ATOMIC takes: rx_dup_dropped; the
 * open UC message a FIRST packet ends: rx_uc_msg_dropped). @return the verdict.
 */
static inline enum transport_verdict tt_rx(struct tt *tt, struct tt_qp *q, struct rte_mbuf *m,
					   const struct droce_pkt *pkt)
{
#define TT_DROP_OFF(name, disposition, desc) TRANSPORT_IF_DROP(disposition, \
	[TRANSPORT_DROP_##name] = offsetof(struct droce_counters, name),)
	static const size_t off[TRANSPORT_VERDICT_NUM] = {
		DROCE_TRANSPORT_COUNTERS(TT_DROP_OFF)
	};
#undef TT_DROP_OFF
	struct droce_counters *c = &tt->cnt[q->side], before = *c;
	enum transport_verdict v = transport_rx(&tt->env, q->t, m, pkt);
	unsigned int i;

	CHECK(v < TRANSPORT_VERDICT_NUM);
	tt->verdict = v;
	tt->verdicts[v]++;
	if (v != TRANSPORT_RX_ACCEPTED) {
		CHECK_EQ(tt_cnt_at(c, off[v]) - tt_cnt_at(&before, off[v]), 1);
		return v;
	}
	for (i = 1; i < TRANSPORT_VERDICT_NUM; i++)
		if (off[i] != offsetof(struct droce_counters, rx_dup_dropped) &&
		    off[i] != offsetof(struct droce_counters, rx_uc_msg_dropped))
			CHECK_EQ(tt_cnt_at(c, off[i]), tt_cnt_at(&before, off[i]));
	return v;
}

static inline void tt_deliver(struct tt *tt, struct tt_frame *f)
{
	const struct droce_bth *bth = droce_pkt_bth(&f->pkt);
	struct droce_qp *qp = verbs_qp_lookup(tt->dev[f->to], droce_bth_qpn(bth));

	if (qp == NULL) {
		tt->cnt[f->to].rx_unknown_qp++;
		rte_pktmbuf_free(f->m);
		return;
	}
	tt->cnt[f->to].rx_packets++;
	tt_rx(tt, qp->qp_context, f->m, &f->pkt);
}

/*
 * A frame from the other side (or from @p src_gid) to @p v, given to its transport at once:
 * the header fields @p h with DestQP and, unless @p keep_psn, the PSN @p v expects set here,
 * P_Key the default unless set, and @p len bytes of @p payload. @return the verdict.
 */
static inline enum transport_verdict tt_hostile(struct tt *tt, struct tt_qp *v,
						struct droce_hdr_fields *h, const void *payload,
						uint32_t len, const union ibv_gid *src_gid,
						bool keep_psn)
{
	struct droce_flow f = { .hop_limit = 64, .sport = 0xc123 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(tt->pool);
	struct droce_pkt pkt;
	int n;

	CHECK(m != NULL);
	f.src_mac = tt->mac[!v->side];
	f.dst_mac = tt->mac[v->side];
	memcpy(f.sgid, (src_gid != NULL ? src_gid : &tt->gid[!v->side])->raw, 16);
	memcpy(f.dgid, tt->gid[v->side].raw, 16);
	h->dqpn = v->qp->qp_num;
	if (h->pkey == 0)
		h->pkey = DROCE_DEFAULT_PKEY;
	if (!keep_psn) {
		struct transport_qp_info qi;

		transport_qp_info(v->t, &qi);
		h->psn = qi.epsn;
	}
	n = droce_build(rte_pktmbuf_mtod(m, void *), rte_pktmbuf_tailroom(m), &f, h, payload,
			len);
	CHECK(n > 0);
	CHECK(rte_pktmbuf_append(m, (uint16_t)n) != NULL);
	CHECK_EQ(droce_parse_mbuf(m, 0, &pkt), DROCE_PARSE_OK);
	tt->cnt[v->side].rx_packets++;
	return tt_rx(tt, v, m, &pkt);
}

/* One engine iteration: deliver what is on the wire, then let every QP transmit. */
static inline unsigned int tt_step(struct tt *tt)
{
	uint32_t end = tt->qtail;
	unsigned int act = 0;
	int i;

	tt->refused = false;
	while (tt->qhead != end) {
		struct tt_frame f = tt->q[tt->qhead++ % TT_QLEN];

		tt_deliver(tt, &f);
		act++;
	}
	for (i = 0; i < tt->nqp; i++)
		act += transport_tx(&tt->env, tt->qps[i].t, 64);
	return act;
}

/* Fire the timers that are due. */
static inline void tt_timers(struct tt *tt)
{
	int i;

	for (i = 0; i < tt->nqp; i++)
		if (transport_deadline(tt->qps[i].t) <= tt->env.now)
			transport_timeout(&tt->env, tt->qps[i].t);
}

typedef bool (*tt_pred)(struct tt *tt, void *arg);

/*
 * Run until @p pred holds (true) or nothing can happen any more / @p max_ns of simulated time
 * passed (false). When idle, no transport may claim to have work (transport_tx_pending()),
 * else the engine would spin: that is checked too.
 */
static inline bool tt_run(struct tt *tt, tt_pred pred, void *arg, uint64_t max_ns)
{
	uint64_t start = tt->env.now, limit = start + max_ns / 1000000000ull * TT_HZ +
					     max_ns % 1000000000ull * (TT_HZ / 1000000000ull);
	int i;

	for (;;) {
		unsigned int act = tt_step(tt);
		uint64_t next = UINT64_MAX;

		if (pred != NULL && pred(tt, arg))
			return true;
		tt_timers(tt);
		if (act != 0)
			continue;
		for (i = 0; i < tt->nqp; i++) {
			if (!tt->refused && transport_tx_pending(tt->qps[i].t)) {
				fprintf(stderr, "qp %d: tx_pending while idle\n", i);
				exit(1);
			}
			next = RTE_MIN(next, transport_deadline(tt->qps[i].t));
		}
		if (tt->refused) {
			tt->env.now += TT_HZ / 1000000;	/* 1 us: the engine's next pass */
			continue;
		}
		if (next == UINT64_MAX || next > limit)
			return pred != NULL && pred(tt, arg);
		if (next > tt->env.now)
			tt->env.now = next;
		tt_timers(tt);
	}
}

/* ---- Posting and polling ---- */

struct tt_cqes {
	struct droce_cq *cq;
	int want;
	int got;
	struct ibv_wc wc[64];
};

static bool tt_pred_cqes(struct tt *tt, void *arg)
{
	struct tt_cqes *c = arg;
	int n;

	RTE_SET_USED(tt);
	while (c->got < c->want && (n = droce_poll_cq(c->cq, c->want - c->got,
						      c->wc + c->got)) > 0)
		c->got += n;
	return c->got >= c->want;
}

/* Run until @p cq yields @p n completions (at most 64) or nothing moves; @return them. */
static inline int tt_wait_cqes(struct tt *tt, struct droce_cq *cq, int n, struct ibv_wc *wc,
			       uint64_t max_ns)
{
	struct tt_cqes c = { .cq = cq, .want = n };

	CHECK(n <= 64);
	tt_run(tt, tt_pred_cqes, &c, max_ns);
	memcpy(wc, c.wc, sizeof(*wc) * c.got);
	return c.got;
}

static inline struct droce_mr *tt_mr(struct tt *tt, int side, void *buf, size_t len, int access)
{
	struct droce_mr *mr = droce_reg_mr(tt->pd[side], buf, len, access);

	CHECK(mr != NULL);
	return mr;
}

static inline void tt_post_recv(struct tt_qp *q, uint64_t wr_id, struct ibv_sge *sge, int nsge)
{
	struct ibv_recv_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	CHECK_EQ(droce_post_recv(q->qp, &wr, &bad), 0);
}

static inline void tt_post_send(struct tt_qp *q, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	CHECK_EQ(droce_post_send(q->qp, wr, &bad), 0);
}

static inline enum ibv_qp_state tt_state(struct tt_qp *q)
{
	struct ibv_qp_attr a;
	struct droce_qp_init_attr ia;

	CHECK_EQ(droce_query_qp(q->qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

/* Next async event of @p side (non-blocking), or -1. */
static inline int tt_async(struct tt *tt, int side)
{
	struct droce_async_event ev;
	int type;

	if (droce_get_async_event(tt->ctx[side], &ev) != 0)
		return -1;
	type = ev.event_type;
	droce_ack_async_event(&ev);
	return type;
}

/* Is an async event @p type among those @p side has raised (each read and acked)? */
static inline bool tt_has_event(struct tt *tt, int side, int type)
{
	int e;

	while ((e = tt_async(tt, side)) >= 0)
		if (e == type)
			return true;
	return false;
}

static inline void tt_fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

static inline uint64_t tt_ns_to_ticks(uint64_t ns)
{
	return ns * (TT_HZ / 1000000000ull);
}

#endif
