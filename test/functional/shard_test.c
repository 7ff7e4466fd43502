/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A device served by several engine lcores (shards, doc/engine.md "Several lcores per
 * device"), over the ring pair droce0 <-> droce1 (pair_lcores2.ini, pair_lcores4.ini), public
 * API only. droce0 creates OFFSET QPs more than droce1 before the QPs under test, so that each
 * QP's peer has another slot modulo the shard count: its frames arrive on a queue whose lcore
 * does not own the QP and are handed over (rx_handoff).
 *
 *   shard_test lcore handoff   64 RC pairs on ONE send and ONE receive CQ per side: SEND with
 *                              immediate, WRITE and READ round-robin; every message exactly
 *                              once, in order per QP (sequence numbers in the immediate and
 *                              the payload; the WRITE before a SEND has landed when the SEND
 *                              completes); handed-off frames, none dropped
 *   shard_test lcore destroy   a QP destroyed while its peer streams to it from another shard:
 *                              the other QPs unaffected, the frames counted rx_unknown_qp, the
 *                              peer ends in RETRY_EXC, then FLUSH; three rounds, then the 64
 *                              pairs of handoff (nothing kept)
 *   shard_test lcore stream    the streams of destroy (8 QPs, 48 WRITEs of 16 KiB each) with
 *                              no destroy: peers on the same shard, then on other shards; the
 *                              handoff drops nothing (the ring pair does not either)
 *   shard_test lcore arp       ARP storm: QPs of every shard on both devices resolving
 *                              addresses nobody has, while the 64 pairs run (as handoff)
 *   shard_test lcore badcfg    [engine] lcores_per_device above the engine lcores or with
 *                              the inline engine: droce_open_device() fails (EIO) on both
 *                              devices, which are still listed; a [device]
 *                              lcores_per_device above the engine lcores or 2 inline: open
 *                              fails EINVAL; [engine] or [device] lcores_per_device 0 or not
 *                              a number, the two devices of the ring pair disagreeing: no
 *                              device list (EINVAL) (a child process per configuration, made
 *                              from the test's own INI)
 *
 * ARP frames are only those droce itself sends (requests for unresolvable addresses): a
 * functional test has no raw port to inject gratuitous ARP from.
 */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "fn.h"

enum { NPAIRS = 64, MSGS = 12, MLEN = 2500, OFFSET = 3, STORM_QPS = 96 };

/* ---- QPs on shared CQs ---- */

static struct droce_qp *rc_qp(struct droce_pd *pd, struct droce_cq *scq, struct droce_cq *rcq,
			      uint32_t depth)
{
	struct droce_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .send_cq = scq, .recv_cq = rcq,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct droce_qp *qp = droce_create_qp(pd, &ia);

	CHECK(qp != NULL);
	return qp;
}

/* @p qp to RTS towards QP @p dqpn at GID @p dgid (PSNs from the QPNs, as fn_connect()). */
static void rc_connect(struct droce_qp *qp, uint32_t dqpn, const union ibv_gid *dgid,
		       const struct fn_attr *a)
{
	struct fn_ep e = { .qp = qp };

	CHECK_EQ(fn_try_rtr_to(qp, dqpn, dgid, a), 0);
	fn_rts(&e, a);
}

static union ibv_gid gid_of(int side)
{
	union ibv_gid g;

	CHECK_EQ(droce_query_gid(pair_ctx[side], 1, GID_V4, &g), 0);
	return g;
}

/* OFFSET QPs on droce0 only, created before the QPs under test and destroyed after them. */
struct offset {
	struct droce_cq *cq;
	struct droce_qp *qp[OFFSET];
};

static void offset_create(struct offset *o, struct droce_pd *pd)
{
	int i;

	o->cq = droce_create_cq(pair_ctx[0], 16, NULL, NULL, 0);
	CHECK(o->cq != NULL);
	for (i = 0; i < OFFSET; i++)
		o->qp[i] = rc_qp(pd, o->cq, o->cq, 4);
}

static void offset_destroy(struct offset *o)
{
	int i;

	for (i = 0; i < OFFSET; i++)
		CHECK_EQ(droce_destroy_qp(o->qp[i]), 0);
	CHECK_EQ(droce_destroy_cq(o->cq), 0);
}

/* ---- 64 pairs, one send and one receive CQ per side ---- */

enum kind { K_SEND_IMM, K_WRITE, K_READ };

static enum kind kind_of(int m)
{
	return (enum kind)(m % 3);
}

static uint32_t seed_of(int p, int m)
{
	return (uint32_t)(p * MSGS + m);
}

struct pairs {
	struct droce_pd *pd[2];
	struct droce_cq *scq[2], *rcq[2];
	struct droce_qp *qp[NPAIRS][2];
	struct fn_mem mem[2];	/* a slot of MLEN per message, used by that message only */
	int next_s[NPAIRS], next_r[NPAIRS];
};

static uint8_t *slot(struct pairs *t, int side, int p, int m)
{
	return t->mem[side].buf + (size_t)seed_of(p, m) * MLEN;
}

/* A message's payload: its pair and sequence number, then a pattern of its own. */
static void payload(uint8_t *b, int p, int m, uint32_t salt)
{
	uint32_t h[2] = { (uint32_t)p, (uint32_t)m };

	fn_fill(b, MLEN, seed_of(p, m) ^ salt);
	memcpy(b, h, sizeof(h));
}

static bool payload_ok(const uint8_t *b, int p, int m, uint32_t salt)
{
	static uint8_t want[MLEN];

	payload(want, p, m, salt);
	return memcmp(b, want, MLEN) == 0;
}

static int pair_of(struct pairs *t, int side, uint32_t qpn)
{
	int p;

	for (p = 0; p < NPAIRS; p++)
		if (t->qp[p][side]->qp_num == qpn)
			return p;
	CHECK(!"completion of a QP not under test");
	return -1;
}

static void pairs_create(struct pairs *t, struct droce_pd *pd0, struct droce_pd *pd1)
{
	struct fn_attr a = fn_attr_default();
	union ibv_gid g[2] = { gid_of(0), gid_of(1) };
	int s, p;

	a.timeout = 16;		/* 268 ms: no retransmission on a slow (sanitizer) run */
	memset(t, 0, sizeof(*t));
	t->pd[0] = pd0;
	t->pd[1] = pd1;
	for (s = 0; s < 2; s++) {
		t->scq[s] = droce_create_cq(pair_ctx[s], NPAIRS * MSGS, NULL, NULL, 0);
		t->rcq[s] = droce_create_cq(pair_ctx[s], NPAIRS * MSGS, NULL, NULL, 0);
		CHECK(t->scq[s] != NULL && t->rcq[s] != NULL);
		fn_mem_reg(&t->mem[s], t->pd[s], (size_t)NPAIRS * MSGS * MLEN, FN_ACCESS_ALL, 0);
	}
	for (p = 0; p < NPAIRS; p++)
		for (s = 0; s < 2; s++)
			t->qp[p][s] = rc_qp(t->pd[s], t->scq[s], t->rcq[s], MSGS);
	for (p = 0; p < NPAIRS; p++)
		for (s = 0; s < 2; s++)
			rc_connect(t->qp[p][s], t->qp[p][1 - s]->qp_num, &g[1 - s], &a);
}

static void pairs_destroy(struct pairs *t)
{
	int s, p;

	for (p = 0; p < NPAIRS; p++)
		for (s = 0; s < 2; s++)
			CHECK_EQ(droce_destroy_qp(t->qp[p][s]), 0);
	for (s = 0; s < 2; s++) {
		CHECK_EQ(droce_destroy_cq(t->scq[s]), 0);
		CHECK_EQ(droce_destroy_cq(t->rcq[s]), 0);
		fn_mem_free(&t->mem[s]);
	}
}

/* Post every message of every pair, round-robin over the pairs (salt: this round's). */
static void pairs_post(struct pairs *t, uint32_t salt)
{
	int p, m;

	memset(t->mem[0].buf, 0, t->mem[0].len);
	memset(t->mem[1].buf, 0, t->mem[1].len);
	for (p = 0; p < NPAIRS; p++) {
		t->next_s[p] = 0;
		t->next_r[p] = 0;
		for (m = 0; m < MSGS; m++)
			if (kind_of(m) == K_READ)
				payload(slot(t, 1, p, m), p, m, salt);
	}
	for (m = 0; m < MSGS; m++) {
		for (p = 0; p < NPAIRS; p++) {
			enum kind k = kind_of(m);
			struct ibv_sge sg = { (uintptr_t)slot(t, 0, p, m), MLEN, t->mem[0].mr->lkey };
			struct ibv_send_wr w = { .wr_id = seed_of(p, m), .sg_list = &sg, .num_sge = 1,
				.send_flags = IBV_SEND_SIGNALED }, *bad;

			w.wr.rdma.remote_addr = (uintptr_t)slot(t, 1, p, m);
			w.wr.rdma.rkey = t->mem[1].mr->rkey;
			if (k == K_SEND_IMM) {
				fn_post_recv(t->qp[p][1], seed_of(p, m), slot(t, 1, p, m), MLEN,
					     t->mem[1].mr->lkey);
				w.opcode = IBV_WR_SEND_WITH_IMM;
				w.imm_data = htonl((uint32_t)p << 16 | (uint32_t)m);
			} else {
				w.opcode = k == K_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
			}
			if (k != K_READ)
				payload(slot(t, 0, p, m), p, m, salt);
			CHECK_EQ(droce_post_send(t->qp[p][0], &w, &bad), 0);
		}
	}
}

/* A send completion: the next message of its QP, done, its READ data in place. */
static void check_send_wc(struct pairs *t, const struct ibv_wc *wc, uint32_t salt)
{
	static const enum ibv_wc_opcode op[] = { IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ };
	int p = pair_of(t, 0, wc->qp_num), m = t->next_s[p]++;

	if (wc->status != IBV_WC_SUCCESS)
		fprintf(stderr, "pair %d message %d: %s\n", p, m, droce_wc_status_str(wc->status));
	CHECK_EQ(wc->status, IBV_WC_SUCCESS);
	CHECK(m < MSGS);
	CHECK_EQ(wc->wr_id, seed_of(p, m));
	CHECK_EQ(wc->opcode, op[kind_of(m)]);
	if (kind_of(m) == K_READ) {
		CHECK_EQ(wc->byte_len, MLEN);
		CHECK(payload_ok(slot(t, 0, p, m), p, m, salt));
	}
}

/* A receive completion: the next SEND of its QP, its sequence number in the immediate and the
 * payload, and the WRITE posted before it already landed (RC order across opcodes). */
static void check_recv_wc(struct pairs *t, const struct ibv_wc *wc, uint32_t salt)
{
	int p = pair_of(t, 1, wc->qp_num), m = t->next_r[p];

	t->next_r[p] += 3;
	CHECK_EQ(wc->status, IBV_WC_SUCCESS);
	CHECK(m < MSGS);
	CHECK_EQ(wc->wr_id, seed_of(p, m));
	CHECK_EQ(wc->opcode, IBV_WC_RECV);
	CHECK(wc->wc_flags & IBV_WC_WITH_IMM);
	CHECK_EQ(ntohl(wc->imm_data), (uint32_t)p << 16 | (uint32_t)m);
	CHECK_EQ(wc->byte_len, MLEN);
	CHECK_EQ(wc->src_qp, t->qp[p][0]->qp_num);
	CHECK(payload_ok(slot(t, 1, p, m), p, m, salt));
	if (m >= 3)
		CHECK(payload_ok(slot(t, 1, p, m - 2), p, m - 2, salt));
}

static int sends_per_qp(void)
{
	return (MSGS + 2) / 3;
}

/* Every completion, exactly once: then nothing more on any of the four CQs. */
static void pairs_check(struct pairs *t, uint32_t salt)
{
	uint64_t end = pair_deadline(FN_TIMEOUT_S);
	int want_s = NPAIRS * MSGS, want_r = NPAIRS * sends_per_qp(), got_s = 0, got_r = 0;
	struct ibv_wc wc[16];
	int n, i, p, s;

	while (got_s < want_s || got_r < want_r) {
		CHECK(rte_get_tsc_cycles() < end);
		n = droce_poll_cq(t->scq[0], 16, wc);
		CHECK(n >= 0);
		for (i = 0; i < n; i++)
			check_send_wc(t, &wc[i], salt);
		got_s += n;
		n = droce_poll_cq(t->rcq[1], 16, wc);
		CHECK(n >= 0);
		for (i = 0; i < n; i++)
			check_recv_wc(t, &wc[i], salt);
		got_r += n;
		if (got_s + got_r == 0 || n == 0)
			pair_step();
	}
	CHECK_EQ(got_s, want_s);
	CHECK_EQ(got_r, want_r);
	for (p = 0; p < NPAIRS; p++) {
		CHECK_EQ(t->next_s[p], MSGS);
		for (i = 1; i < MSGS; i += 3)	/* every WRITE, also one no SEND followed */
			CHECK(payload_ok(slot(t, 1, p, i), p, i, salt));
	}
	for (s = 0; s < 2; s++) {
		fn_quiet(t->scq[s], 0.05);
		fn_quiet(t->rcq[s], 0.05);
	}
}

/* What nothing here may have dropped or resent out of order, on both devices. */
static void check_no_drops(void)
{
	int s;

	for (s = 0; s < 2; s++) {
		struct droce_counters c = fn_counters(s);

		if (getenv("FN_DEBUG"))
			fprintf(stderr, "droce%d: rx_handoff %llu rx_arp %llu retransmits %llu\n", s,
				(unsigned long long)c.rx_handoff, (unsigned long long)c.rx_arp,
				(unsigned long long)c.retransmits);
		CHECK_EQ(c.rx_handoff_dropped, 0);
		CHECK_EQ(c.rx_unknown_qp, 0);
		CHECK_EQ(c.rx_bad_frame, 0);
		CHECK_EQ(c.rx_not_our_gid, 0);
		CHECK_EQ(c.tx_dropped, 0);
		CHECK_EQ(c.out_of_sequence, 0);
		CHECK_EQ(c.seq_nak_sent + c.nak_rcvd, 0);
	}
}

/* Both devices handed frames from one shard's queue to another (peers on other shards). */
static void check_handed_off(void)
{
	CHECK(fn_counters(0).rx_handoff > 0);
	CHECK(fn_counters(1).rx_handoff > 0);
}

static void handoff(void)
{
	static struct pairs t;
	struct droce_pd *pd[2] = { fn_pd(0), fn_pd(1) };
	struct offset o;
	uint32_t round;

	offset_create(&o, pd[0]);
	pairs_create(&t, pd[0], pd[1]);
	for (round = 0; round < 3; round++) {
		pairs_post(&t, round * 0x9e3779b9u);
		pairs_check(&t, round * 0x9e3779b9u);
	}
	pairs_destroy(&t);
	offset_destroy(&o);
	CHECK_EQ(droce_dealloc_pd(pd[0]), 0);
	CHECK_EQ(droce_dealloc_pd(pd[1]), 0);
	check_handed_off();
	check_no_drops();
}

/* ---- A QP destroyed under an inbound stream ---- */

enum { DPAIRS = 8, VICTIM = 5, DWRITES = 48, DLEN = 16384 };

static void stream_round(int round, int victim, bool offset);

/* DPAIRS pairs stream to droce1; the receiver of pair @p victim (-1: none) destroys its QP once
 * the stream started. @p offset: droce0's QPs on other slots than their peers'. */
static void stream_round(int round, int victim, bool offset)
{
	struct fn_attr a = fn_attr_default(), av;
	struct droce_pd *pd[2] = { fn_pd(0), fn_pd(1) };
	struct fn_ep ep[DPAIRS][2];
	struct fn_mem m[2];
	struct offset o;
	uint64_t unknown = fn_counters(1).rx_unknown_qp;
	struct ibv_send_wr w, *bad;
	struct ibv_sge sg;
	struct ibv_wc wc;
	int p, j, i, ok;

	a.depth = DWRITES + 2;
	a.timeout = 16;		/* 268 ms */
	av = a;
	av.timeout = 14;	/* the victim's peer: 67 ms, RETRY_EXC after 4 unanswered tries */
	av.retry_cnt = 3;
	if (offset)
		offset_create(&o, pd[0]);
	fn_mem_reg(&m[0], pd[0], (size_t)DPAIRS * DLEN, FN_ACCESS_ALL, 0);
	fn_mem_reg(&m[1], pd[1], (size_t)DPAIRS * DLEN, FN_ACCESS_ALL, 0);
	for (p = 0; p < DPAIRS; p++) {
		fn_ep_create(&ep[p][0], 0, pd[0], &a);
		fn_ep_create(&ep[p][1], 1, pd[1], &a);
	}
	for (p = 0; p < DPAIRS; p++) {
		fn_connect(&ep[p][0], &ep[p][1], p == victim ? &av : &a);
		fn_connect(&ep[p][1], &ep[p][0], &a);
	}
	/* Every pair: a SEND, then DWRITES WRITEs of DLEN (16 frames each), then a SEND. The
	 * victim's receiver has no receive for its last SEND: that one cannot complete while
	 * the QP exists (rnr_retry 7: RNR NAKs forever), so the peer is still sending when the
	 * QP goes, whatever the timing. */
	for (j = 0; j < DPAIRS; j++) {
		uint8_t *src;

		p = (j + (victim >= 0 ? victim : 0)) % DPAIRS;	/* the victim's first */
		src = m[0].buf + (size_t)p * DLEN;

		fn_fill(src, DLEN, (uint32_t)(round * DPAIRS + p));
		fn_post_recv(ep[p][1].qp, 0, m[1].buf + (size_t)p * DLEN, 64, m[1].mr->lkey);
		if (p != victim)	/* its last SEND is RNR-retried until the QP is gone */
			fn_post_recv(ep[p][1].qp, 1, m[1].buf + (size_t)p * DLEN, 64,
				     m[1].mr->lkey);
		for (i = 0; i < DWRITES + 2; i++) {
			bool send = i == 0 || i == DWRITES + 1;

			sg = (struct ibv_sge){ (uintptr_t)src, send ? 64 : DLEN, m[0].mr->lkey };
			w = (struct ibv_send_wr){ .wr_id = (uint64_t)i, .sg_list = &sg,
				.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
				.opcode = send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE };
			w.wr.rdma.remote_addr = (uintptr_t)m[1].buf + (size_t)p * DLEN;
			w.wr.rdma.rkey = m[1].mr->rkey;
			CHECK_EQ(droce_post_send(ep[p][0].qp, &w, &bad), 0);
		}
	}
	/* The victim's receiver goes as soon as the stream started: its first SEND arrived. */
	if (victim >= 0) {
		wc = fn_wait(ep[victim][1].rcq);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, 0);
		CHECK_EQ(droce_destroy_qp(ep[victim][1].qp), 0);
		ep[victim][1].qp = NULL;
	}
	/* The others: everything, in order, the data intact. */
	for (p = 0; p < DPAIRS; p++) {
		if (p == victim)
			continue;
		for (i = 0; i < DWRITES + 2; i++)
			fn_wait_ok(ep[p][0].scq, (uint64_t)i);
		fn_wait_ok(ep[p][1].rcq, 0);
		fn_wait_ok(ep[p][1].rcq, 1);
		CHECK(memcmp(m[1].buf + (size_t)p * DLEN, m[0].buf + (size_t)p * DLEN, DLEN) == 0);
		CHECK_EQ(fn_state(ep[p][0].qp), IBV_QPS_RTS);
	}
	if (victim < 0)
		goto out;
	/* The victim's peer: what was acknowledged, then RETRY_EXC, then the rest flushed. */
	ok = 0;
	for (i = 0; i < DWRITES + 2; i++) {
		wc = fn_wait(ep[victim][0].scq);
		CHECK_EQ(wc.wr_id, (uint64_t)i);
		if (wc.status == IBV_WC_SUCCESS && i == ok) {
			ok++;
			continue;
		}
		if (i == ok) {
			if (wc.status != IBV_WC_RETRY_EXC_ERR)
				fprintf(stderr, "round %d wr %d: %s\n", round, i,
					droce_wc_status_str(wc.status));
			CHECK_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
		} else {
			CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
		}
	}
	CHECK(ok <= DWRITES + 1);
	CHECK_EQ(fn_state(ep[victim][0].qp), IBV_QPS_ERR);
	/* Frames for the destroyed QP (in flight, handed over, retransmitted) were counted. */
	CHECK(fn_counters(1).rx_unknown_qp > unknown);
out:
	for (p = 0; p < DPAIRS; p++) {
		fn_ep_destroy(&ep[p][0]);
		fn_ep_destroy(&ep[p][1]);
	}
	if (offset)
		offset_destroy(&o);
	fn_mem_free(&m[0]);
	fn_mem_free(&m[1]);
	CHECK_EQ(droce_dealloc_pd(pd[0]), 0);
	CHECK_EQ(droce_dealloc_pd(pd[1]), 0);
}

static void destroy(void)
{
	static struct pairs t;
	struct droce_pd *pd[2];
	int round;

	for (round = 0; round < 3; round++)
		stream_round(round, VICTIM, true);
	/* Afterwards the 64 pairs run as in a fresh process: nothing was kept. */
	pd[0] = fn_pd(0);
	pd[1] = fn_pd(1);
	pairs_create(&t, pd[0], pd[1]);
	pairs_post(&t, 7);
	pairs_check(&t, 7);
	pairs_destroy(&t);
	CHECK_EQ(droce_dealloc_pd(pd[0]), 0);
	CHECK_EQ(droce_dealloc_pd(pd[1]), 0);
}

/* ---- A lossless link stays lossless: streams to peers on other shards ---- */

static void print_drops(const char *when)
{
	int s;

	for (s = 0; s < 2; s++) {
		struct droce_counters c = fn_counters(s);

		printf("%s: droce%d rx_handoff %llu rx_handoff_dropped %llu retransmits %llu\n",
		       when, s, (unsigned long long)c.rx_handoff,
		       (unsigned long long)c.rx_handoff_dropped, (unsigned long long)c.retransmits);
	}
}

/* The 8 streams of the destroy test without the destroy: first with every peer on its own
 * QP's shard index (frames stay on their queue's lcore), then with droce0 OFFSET QPs ahead
 * (every data frame and every ACK handed over). The ring pair never drops (a full queue holds
 * the sender back), nor may the handoff. */
static void stream(void)
{
	int s;

	stream_round(0, -1, false);
	print_drops("peers on the same shard");
	for (s = 0; s < 2; s++)
		CHECK_EQ(fn_counters(s).rx_handoff_dropped, 0);
	stream_round(1, -1, true);
	print_drops("peers on other shards");
	for (s = 0; s < 2; s++) {
		CHECK(fn_counters(s).rx_handoff > 0);
		CHECK_EQ(fn_counters(s).rx_handoff_dropped, 0);
	}
}

/* ---- ARP storm ---- */

/* STORM_QPS RC QPs on @p side towards addresses 10.99.<side + 1>.x nobody answers, a SEND
 * posted on each: every shard's QPs send ARP requests, repeated every neigh_retry_ms, then
 * again on each retransmission. */
struct storm {
	struct droce_cq *cq;
	struct droce_qp *qp[STORM_QPS];
	struct droce_mr *mr;
	uint8_t buf[64];
};

static void storm_start(struct storm *st, int side, struct droce_pd *pd)
{
	struct fn_attr a = fn_attr_default();
	union ibv_gid g = gid_of(side);
	int i;

	a.timeout = 18;		/* 1 s: the storm outlasts the traffic */
	st->cq = droce_create_cq(pair_ctx[side], 4 * STORM_QPS, NULL, NULL, 0);
	CHECK(st->cq != NULL);
	st->mr = droce_reg_mr(pd, st->buf, sizeof(st->buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(st->mr != NULL);
	for (i = 0; i < STORM_QPS; i++) {
		struct ibv_sge sg = { (uintptr_t)st->buf, sizeof(st->buf), st->mr->lkey };
		struct ibv_send_wr w = { .wr_id = (uint64_t)i, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_SEND }, *bad;

		st->qp[i] = rc_qp(pd, st->cq, st->cq, 2);
		g.raw[14] = (uint8_t)(side + 1);	/* ::ffff:10.99.<side + 1>.<i + 10> */
		g.raw[15] = (uint8_t)(i + 10);
		rc_connect(st->qp[i], 0x1000 + (uint32_t)i, &g, &a);
		CHECK_EQ(droce_post_send(st->qp[i], &w, &bad), 0);
	}
}

static void storm_stop(struct storm *st)
{
	int i;

	for (i = 0; i < STORM_QPS; i++)
		CHECK_EQ(droce_destroy_qp(st->qp[i]), 0);
	CHECK_EQ(droce_destroy_cq(st->cq), 0);
	CHECK_EQ(droce_dereg_mr(st->mr), 0);
}

static uint64_t arp_rx(int side)
{
	return fn_counters(side).rx_arp;
}

static void arp(void)
{
	static struct pairs t;
	static struct storm st[2];
	struct droce_pd *pd[2] = { fn_pd(0), fn_pd(1) };
	uint64_t end, arp0, arp1;
	struct offset o;
	uint32_t round = 0;
	int s;

	offset_create(&o, pd[0]);
	for (s = 0; s < 2; s++)
		storm_start(&st[s], s, pd[s]);
	/* The storm is on: each device received the other's requests for every address. */
	end = pair_deadline(FN_TIMEOUT_S);
	while (arp_rx(1) < STORM_QPS || arp_rx(0) < STORM_QPS) {
		CHECK(rte_get_tsc_cycles() < end);
		fn_run(0.01);
	}
	/* The pairs connect (their own ARP among the storm's) and run, until twice the storm's
	 * addresses were requested again on each side meanwhile and resolutions failed (the
	 * storm went on past them: requests start over at the next retransmission). */
	arp0 = arp_rx(0);
	arp1 = arp_rx(1);
	pairs_create(&t, pd[0], pd[1]);
	do {
		pairs_post(&t, round);
		pairs_check(&t, round);
		round++;
		CHECK(rte_get_tsc_cycles() < end);
	} while (arp_rx(0) < arp0 + 2 * STORM_QPS || arp_rx(1) < arp1 + 2 * STORM_QPS ||
		 fn_counters(0).neigh_failed == 0 || fn_counters(1).neigh_failed == 0);
	pairs_destroy(&t);
	for (s = 0; s < 2; s++)
		storm_stop(&st[s]);
	offset_destroy(&o);
	CHECK_EQ(droce_dealloc_pd(pd[0]), 0);
	CHECK_EQ(droce_dealloc_pd(pd[1]), 0);
	for (s = 0; s < 2; s++) {
		struct droce_counters c = fn_counters(s);

		CHECK(c.neigh_failed > 0);	/* the storm's addresses were never resolved */
		CHECK_EQ(c.neigh_bad, 0);
		CHECK_EQ(c.rx_handoff_dropped, 0);
		CHECK_EQ(c.rx_unknown_qp, 0);
		CHECK_EQ(c.out_of_sequence, 0);
	}
	check_handed_off();
	printf("%u rounds of the 64 pairs during the storm\n", round);
}

/* ---- Bad lcores_per_device ---- */

/* Copy the test's INI to @p out, its [engine] lcores_per_device = @p per (and with
 * lcores = @p lcores if not NULL, and [device droceK] lcores_per_device = @p dev[K] where not
 * NULL). */
static void ini_variant(const char *out, const char *per, const char *lcores,
			const char *const dev[2])
{
	const char *in_path = getenv("DROCE_CONFIG");
	char line[1024];
	FILE *in, *o;

	CHECK(in_path != NULL);
	in = fopen(in_path, "r");
	o = fopen(out, "w");
	CHECK(in != NULL && o != NULL);
	while (fgets(line, sizeof(line), in) != NULL) {
		if (strncmp(line, "lcores_per_device", 17) == 0)
			continue;
		if (lcores != NULL && strncmp(line, "lcores ", 7) == 0) {
			fprintf(o, "lcores = %s\n", lcores);
			continue;
		}
		fputs(line, o);
		if (strncmp(line, "[engine]", 8) == 0)
			fprintf(o, "lcores_per_device = %s\n", per);
		for (int k = 0; k < 2; k++) {
			char sec[32];

			snprintf(sec, sizeof(sec), "[device droce%d]", k);
			if (dev[k] != NULL && strncmp(line, sec, strlen(sec)) == 0)
				fprintf(o, "lcores_per_device = %s\n", dev[k]);
		}
	}
	fclose(in);
	CHECK_EQ(fclose(o), 0);
}

/* The child: both devices are listed and neither opens (errno @p err: EIO for an [engine]
 * lcores_per_device the lcores cannot give, EINVAL for a device's), nothing is left running;
 * or (@p err 0) the configuration is refused whole (a value out of the key's range, or a ring
 * pair whose devices disagree: no list, EINVAL). */
static int badcfg_child(int err)
{
	struct droce_device **list;
	int n, i;

	errno = 0;
	list = droce_get_device_list(&n);
	if (err == 0) {
		CHECK(list == NULL);
		CHECK_EQ(errno, EINVAL);
		return 0;
	}
	CHECK(list != NULL && n == 2);
	for (i = 0; i < 2; i++) {
		errno = 0;
		CHECK(droce_open_device(list[i]) == NULL);
		CHECK_EQ(errno, err);
	}
	droce_free_device_list(list);
	return 0;
}

static void badcfg_run(const char *per, const char *lcores, const char *const dev[2],
		       const char *expect)
{
	char ini[64];
	pid_t pid;
	int st;

	snprintf(ini, sizeof(ini), "/tmp/droce-shard-%d.ini", (int)getpid());
	ini_variant(ini, per, lcores, dev);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		setenv("DROCE_CONFIG", ini, 1);
		execl("/proc/self/exe", "shard_test", "lcore", expect, (char *)NULL);
		_exit(127);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	unlink(ini);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "lcores_per_device = %s%s%s, devices %s/%s, %s: child status 0x%x\n",
			per, lcores != NULL ? ", lcores = " : "", lcores != NULL ? lcores : "",
			dev[0] != NULL ? dev[0] : "-", dev[1] != NULL ? dev[1] : "-", expect, st);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Each in a child with its own EAL; this process opened the test's INI (with the key) fine. */
static void badcfg(void)
{
	unsigned int n = rte_lcore_count() - 1;	/* the engine lcores of the test's INI */
	char more[16];

	const char *const none[2] = { NULL, NULL }, *const more2[2] = { more, more };
	const char *const inl[2] = { "2", "2" }, *const differ[2] = { "1", "2" };
	const char *const zero[2] = { "0", "0" }, *const word[2] = { "two", "two" };

	snprintf(more, sizeof(more), "%u", n + 1);
	badcfg_run(more, NULL, none, "badcfg-child-eio");
	badcfg_run("0", NULL, none, "badcfg-child-nolist");	/* out of the key's range */
	badcfg_run("two", NULL, none, "badcfg-child-nolist");
	badcfg_run("2", "", none, "badcfg-child-eio");		/* inline: one instance */
	/* [device] lcores_per_device: more than the engine's lcores, or above 1 inline. */
	badcfg_run("1", NULL, more2, "badcfg-child-einval");
	badcfg_run("1", "", inl, "badcfg-child-einval");
	/* A ring pair's devices must agree; 0 and words are not counts. */
	badcfg_run("1", NULL, differ, "badcfg-child-nolist");
	badcfg_run("1", NULL, zero, "badcfg-child-nolist");
	badcfg_run("1", NULL, word, "badcfg-child-nolist");
}

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	if (strcmp(argv[2], "badcfg-child-eio") == 0)
		return badcfg_child(EIO);
	if (strcmp(argv[2], "badcfg-child-einval") == 0)
		return badcfg_child(EINVAL);
	if (strcmp(argv[2], "badcfg-child-nolist") == 0)
		return badcfg_child(0);
	fn_open(argc, argv);
	if (strcmp(argv[2], "handoff") == 0)
		handoff();
	else if (strcmp(argv[2], "destroy") == 0)
		destroy();
	else if (strcmp(argv[2], "stream") == 0)
		stream();
	else if (strcmp(argv[2], "arp") == 0)
		arp();
	else if (strcmp(argv[2], "badcfg") == 0)
		badcfg();
	else
		CHECK(!"unknown test");
	fn_close();
	printf("shard %s (%s, %u lcores): ok\n", argv[2], argv[1], rte_lcore_count());
	return 0;
}
