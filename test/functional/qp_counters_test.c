/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Per-QP counters (droce_query_qp_counters) over the ring pair: three QP pairs between the
 * same two devices, each with its own traffic (droce0 requests, droce1 responds):
 *   A: SENDs of 3 packets;
 *   B: WRITEs of 5 packets, READs of 4 response packets, and a SEND that meets RNR NAKs
 *      until its receive is posted;
 *   C: a WRITE with a bad R_Key (remote access error, both QPs in ERR).
 * Each QP's counters show its own frames (what a requester sent is what its responder
 * received, packet for packet and byte for byte) and its own reasons only; every transport
 * counter of a device equals the sum over its QPs, and so does rx_roce; the counters that do
 * not concern a QP stay 0 in it; droce_counters_reset() zeroes a device's QPs with it; the
 * documented errors.
 */
#include "fn.h"

enum { MTU = 1024, NA = 6, LEN_A = 3 * MTU - 100, NW = 4, LEN_W = 5 * MTU - 10, NR = 3,
       LEN_R = 4 * MTU, BUF = 8 * MTU };

struct pairx {
	struct fn_ep ep[2];
	struct fn_mem m[2];
};

static void px_init(struct pairx *p, const struct fn_attr *a)
{
	int i;

	fn_pair(p->ep, a);
	for (i = 0; i < 2; i++) {
		fn_mem_reg(&p->m[i], p->ep[i].pd, BUF, FN_ACCESS_ALL, 0);
		fn_fill(p->m[i].buf, BUF, 11 + i);
	}
}

static void px_fini(struct pairx *p)
{
	int i;

	for (i = 0; i < 2; i++)
		fn_mem_free(&p->m[i]);
	fn_pair_destroy(p->ep);
}

/* Post one signalled WR from droce0's QP of @p p; remote address: droce1's buffer. */
static void post(struct pairx *p, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t len,
		 uint32_t rkey)
{
	struct ibv_sge s = { (uintptr_t)p->m[0].buf, len, p->m[0].mr->lkey };
	struct ibv_send_wr w = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	w.wr.rdma.remote_addr = (uintptr_t)p->m[1].buf;
	w.wr.rdma.rkey = rkey;
	CHECK_EQ(droce_post_send(p->ep[0].qp, &w, &bad), 0);
}

static void traffic_a(struct pairx *p)
{
	int i;

	for (i = 0; i < NA; i++)
		fn_post_recv(p->ep[1].qp, i, p->m[1].buf, BUF, p->m[1].mr->lkey);
	for (i = 0; i < NA; i++)
		post(p, IBV_WR_SEND, i, LEN_A, 0);
	for (i = 0; i < NA; i++) {
		fn_wait_ok(p->ep[0].scq, i);
		fn_wait_ok(p->ep[1].rcq, i);
	}
	CHECK(memcmp(p->m[1].buf, p->m[0].buf, LEN_A) == 0);
}

static void traffic_b(struct pairx *p)
{
	int i;

	for (i = 0; i < NW; i++)
		post(p, IBV_WR_RDMA_WRITE, i, LEN_W, p->m[1].mr->rkey);
	for (i = 0; i < NW; i++)
		fn_wait_ok(p->ep[0].scq, i);
	CHECK(memcmp(p->m[1].buf, p->m[0].buf, LEN_W) == 0);
	fn_fill(p->m[1].buf, BUF, 99);
	for (i = 0; i < NR; i++)
		post(p, IBV_WR_RDMA_READ, 10 + i, LEN_R, p->m[1].mr->rkey);
	for (i = 0; i < NR; i++)
		fn_wait_ok(p->ep[0].scq, 10 + i);
	CHECK(memcmp(p->m[1].buf, p->m[0].buf, LEN_R) == 0);
	/* RNR: the SEND arrives before its receive. */
	post(p, IBV_WR_SEND, 20, 100, 0);
	fn_run(0.05);
	CHECK_EQ(fn_qp_counters(p->ep[1].qp).rnr_nak_sent > 0, 1);
	fn_post_recv(p->ep[1].qp, 21, p->m[1].buf, BUF, p->m[1].mr->lkey);
	fn_wait_ok(p->ep[0].scq, 20);
	fn_wait_ok(p->ep[1].rcq, 21);
}

static void traffic_c(struct pairx *p)
{
	struct ibv_wc wc;

	post(p, IBV_WR_RDMA_WRITE, 30, 100, p->m[1].mr->rkey ^ 0x5a5a);
	wc = fn_wait(p->ep[0].scq);
	CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
	CHECK_EQ(fn_state(p->ep[0].qp), IBV_QPS_ERR);
}

/* Counters owned by the engine (port, parser, neighbours, faults), never a QP's. */
static bool engine_only(const char *name)
{
	static const char *const names[] = { "tx_dropped", "rx_not_roce", "rx_arp", "rx_nd",
		"rx_bad_frame", "rx_not_our_gid", "rx_unknown_qp", "alloc_failed", "tx_link_down",
		"rx_link_down", "rx_handoff", "rx_handoff_dropped", "loopback",
		"loopback_dropped" };
	unsigned int i;

	if (strncmp(name, "neigh_", 6) == 0 || strncmp(name, "fault_", 6) == 0 ||
	    strncmp(name, "mcast_", 6) == 0 || strncmp(name, "rx_mcast_", 9) == 0)
		return true;
	for (i = 0; i < RTE_DIM(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* The frames a QP saw: delivered to it and transmitted by it; not summed per device. */
static bool qp_frames(const char *name)
{
	return strcmp(name, "rx_packets") == 0 || strcmp(name, "rx_bytes") == 0 ||
	       strcmp(name, "tx_packets") == 0 || strcmp(name, "tx_bytes") == 0;
}

static uint64_t field(const struct droce_counters *c, unsigned int i)
{
	return ((const uint64_t *)c)[i];
}

/* Device @p side's counters against the sum over its QPs (one per pair). */
static void check_sum(int side, struct pairx *p, unsigned int np)
{
	struct droce_counters dev = fn_counters(side), q[3];
	const char *name;
	unsigned int i, k;
	uint64_t sum;

	for (k = 0; k < np; k++)
		q[k] = fn_qp_counters(p[k].ep[side].qp);
	for (i = 0; (name = droce_counter_name(i)) != NULL; i++) {
		sum = 0;
		for (k = 0; k < np; k++) {
			if (engine_only(name))
				CHECK_EQ(field(&q[k], i), 0);
			sum += field(&q[k], i);
		}
		if (engine_only(name) || qp_frames(name))
			continue;
		if (field(&dev, i) != sum)
			fprintf(stderr, "droce%d %s: device %llu, QPs %llu\n", side, name,
				(unsigned long long)field(&dev, i), (unsigned long long)sum);
		CHECK_EQ(field(&dev, i), sum);
	}
	for (k = 0; k < np; k++)
		for (i = 0; i < DROCE_PARSE_ERR_NUM; i++)
			CHECK_EQ(q[k].parse_err[i], 0);
	/* The port also carried ARP: at least the QPs' frames. */
	sum = 0;
	for (k = 0; k < np; k++)
		sum += q[k].tx_packets;
	CHECK_EQ(dev.tx_packets, sum + dev.neigh_req_sent + dev.neigh_reply_sent);
}

/* What requester @p r sent is what responder @p s received, and back. */
static void check_frames(const struct droce_counters *r, const struct droce_counters *s)
{
	CHECK_EQ(r->tx_packets, s->rx_packets);
	CHECK_EQ(r->tx_bytes, s->rx_bytes);
	CHECK_EQ(s->tx_packets, r->rx_packets);
	CHECK_EQ(s->tx_bytes, r->rx_bytes);
	CHECK_EQ(r->rx_roce, r->rx_packets);
	CHECK_EQ(s->rx_roce, s->rx_packets);
}

static void check_a(const struct droce_counters *r, const struct droce_counters *s)
{
	check_frames(r, s);
	CHECK_EQ(r->tx_packets, NA * 3 + r->retransmits);
	CHECK_EQ(s->tx_packets, s->ack_sent);
	CHECK_EQ(r->ack_rcvd + r->rx_resp_dropped, r->rx_packets);
	CHECK(s->ack_sent >= 1);
	CHECK_EQ(r->rnr_nak_rcvd + r->nak_rcvd + s->rnr_nak_sent + s->access_err, 0);
	CHECK_EQ(r->tx_packets - r->retransmits, s->rx_packets - s->duplicate_request);
}

static void check_b(const struct droce_counters *r, const struct droce_counters *s)
{
	check_frames(r, s);
	CHECK(s->rnr_nak_sent >= 1);
	CHECK_EQ(r->rnr_nak_rcvd, s->rnr_nak_sent);
	/* Each RNR NAK sends the SEND once more. */
	CHECK_EQ(r->tx_packets, NW * 5 + NR + 1 + r->retransmits);
	CHECK(r->retransmits >= r->rnr_nak_rcvd);
	CHECK(s->tx_packets >= NR * 4 + s->rnr_nak_sent);
	CHECK_EQ(r->nak_rcvd + s->access_err + s->seq_nak_sent, 0);
}

static void check_c(const struct droce_counters *r, const struct droce_counters *s)
{
	check_frames(r, s);
	CHECK_EQ(r->tx_packets, 1);
	CHECK_EQ(s->access_err, 1);
	CHECK_EQ(r->nak_rcvd, 1);
	CHECK_EQ(s->tx_packets, 1);	/* the NAK */
	CHECK_EQ(r->ack_rcvd + r->rnr_nak_rcvd + s->ack_sent + s->rnr_nak_sent, 0);
}

static void check_errors(struct droce_qp *qp)
{
	struct droce_counters c;

	CHECK_EQ(droce_query_qp_counters(NULL, &c), -EINVAL);
	CHECK_EQ(droce_query_qp_counters(qp, NULL), -EINVAL);
}

/* After a reset of droce0: its QPs read 0, droce1's keep theirs. */
static void check_reset(struct pairx *p, unsigned int np)
{
	struct droce_counters zero, c;
	unsigned int k;

	memset(&zero, 0, sizeof(zero));
	CHECK_EQ(droce_counters_reset(pair_ctx[0]), 0);
	for (k = 0; k < np; k++) {
		c = fn_qp_counters(p[k].ep[0].qp);
		CHECK(memcmp(&c, &zero, sizeof(c)) == 0);
		CHECK(fn_qp_counters(p[k].ep[1].qp).rx_packets > 0);
	}
	check_sum(0, p, np);
}

int main(int argc, char **argv)
{
	struct fn_attr a = fn_attr_default();
	struct droce_counters r[3], s[3];
	struct pairx p[3];
	unsigned int k;

	fn_open(argc, argv);
	a.timeout = 18;		/* ~1 s: a busy machine makes no retransmission needed */
	for (k = 0; k < 3; k++)
		px_init(&p[k], &a);
	CHECK_EQ(droce_counters_reset(pair_ctx[0]), 0);
	CHECK_EQ(droce_counters_reset(pair_ctx[1]), 0);
	traffic_a(&p[0]);
	traffic_b(&p[1]);
	traffic_c(&p[2]);
	fn_run(0.1);		/* coalesced ACKs out, nothing left in flight */
	for (k = 0; k < 3; k++) {
		r[k] = fn_qp_counters(p[k].ep[0].qp);
		s[k] = fn_qp_counters(p[k].ep[1].qp);
	}
	check_a(&r[0], &s[0]);
	check_b(&r[1], &s[1]);
	check_c(&r[2], &s[2]);
	check_sum(0, p, 3);
	check_sum(1, p, 3);
	check_errors(p[0].ep[0].qp);
	check_reset(p, 3);
	for (k = 0; k < 3; k++)
		px_fini(&p[k]);
	fn_close();
	return 0;
}
