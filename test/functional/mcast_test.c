/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * UD multicast between droce0 and droce1 through the engine and net_ring, public API only.
 * One sender S on droce0; members R1, R2 on droce1 and R3 on droce0 (the sender's device),
 * attached to an IPv4-mapped group (::ffff:239.1.0.1) and an IPv6 group (ff0e::1); a QP N on
 * droce1 attached to nothing. Every member gets every message exactly once, with the GRH
 * (group as destination, the AH's hop limit/TTL, traffic class, flow label), src_qp and data
 * checked; N gets nothing; S, attached too, does not get its own messages back; a member with
 * another Q_Key drops (rx_bad_qkey); detaching stops delivery and a group nobody is in counts
 * rx_mcast_no_member. Then every API error and the limits (mcast_errors.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "droce_wire_mcast.h"
#include "fn_qp.h"
#include "mcast_errors.h"

#define QKEY 0x0badcafeu
#define MTU 1024u
#define BUF (40 + MTU)
enum { NR = 16, NMEM = 3 };

struct node {
	struct fn_qp q;
	struct fn_mem mem;		/* [0, BUF): send; then NR receive buffers */
};

struct grp {
	union ibv_gid gid;
	int sgid;			/* the sender's GID index */
	uint8_t hop, tc;
	uint32_t fl;
	struct droce_ah *ah;
};

static uint8_t *rbuf(struct node *n, unsigned int i)
{
	return n->mem.buf + BUF * (1 + i);
}

static void repost(struct node *n, uint64_t i)
{
	memset(rbuf(n, (unsigned int)i), 0xee, BUF);
	fn_post_recv(n->q.qp, i, rbuf(n, (unsigned int)i), BUF, n->mem.mr->lkey);
}

static void node_init(struct node *n, int side, struct droce_pd *pd)
{
	unsigned int i;

	fn_qp_create(&n->q, side, pd, IBV_QPT_UD, NULL, NR);
	fn_mem_reg(&n->mem, pd, BUF * (NR + 1), IBV_ACCESS_LOCAL_WRITE, 0);
	fn_ud_rts(n->q.qp, QKEY);
	for (i = 0; i < NR; i++)
		repost(n, i);
}

static void node_fini(struct node *n)
{
	fn_qp_destroy(&n->q);
	fn_mem_free(&n->mem);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void check_grh(const uint8_t *g, const struct grp *gr, uint32_t len, bool imm)
{
	uint32_t l4 = 8 + 12 + 8 + (imm ? 4 : 0) + len + ((4 - (len & 3)) & 3) + 4;
	union ibv_gid s;

	CHECK_EQ(droce_query_gid(pair_ctx[0], 1, gr->sgid, &s), 0);
	if (gr->sgid == GID_V4) {
		CHECK(fn_all(g, 20, 0));
		CHECK_EQ(g[20], 0x45);
		CHECK_EQ(g[21], gr->tc);
		CHECK_EQ(be16(g + 22), 20 + l4);
		CHECK_EQ(g[28], gr->hop);	/* TTL from the AH */
		CHECK_EQ(g[29], 17);
		CHECK(memcmp(g + 32, s.raw + 12, 4) == 0);
		CHECK(memcmp(g + 36, gr->gid.raw + 12, 4) == 0);
		return;
	}
	CHECK_EQ(g[0] >> 4, 6);
	CHECK_EQ((uint8_t)(g[0] << 4 | g[1] >> 4), gr->tc);
	CHECK_EQ((uint32_t)(g[1] & 0xf) << 16 | be16(g + 2), gr->fl);
	CHECK_EQ(be16(g + 4), l4);
	CHECK_EQ(g[6], 17);
	CHECK_EQ(g[7], gr->hop);		/* hop limit from the AH */
	CHECK(memcmp(g + 8, s.raw, 16) == 0);
	CHECK(memcmp(g + 24, gr->gid.raw, 16) == 0);
}

/* The one completion @p n gets for message @p seed from @p s. */
static void expect(struct node *n, const struct node *s, const struct grp *gr, uint32_t len,
		   uint32_t seed)
{
	bool imm = (seed & 1) != 0;
	struct ibv_wc wc = fn_wait(n->q.cq);
	uint8_t *exp = malloc(len + 1);
	uint8_t *b;

	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, 40 + len);
	CHECK_EQ(wc.src_qp, s->q.qp->qp_num);
	CHECK_EQ(wc.qp_num, n->q.qp->qp_num);
	CHECK_EQ(wc.wc_flags, IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0));
	if (imm)
		CHECK_EQ(ntohl(wc.imm_data), seed * 3);
	CHECK(wc.wr_id < NR);
	b = rbuf(n, (unsigned int)wc.wr_id);
	check_grh(b, gr, len, imm);
	fn_fill(exp, len, seed);
	CHECK(memcmp(b + 40, exp, len) == 0);
	CHECK(fn_all(b + 40 + len, BUF - 40 - len, 0xee));
	free(exp);
	repost(n, wc.wr_id);
}

/* S sends message @p seed to @p gr (DestQP in the WR: @p rqpn; the group's QPN goes out). */
static void send_msg(struct node *s, const struct grp *gr, uint32_t len, uint32_t seed,
		     uint32_t rqpn)
{
	bool imm = (seed & 1) != 0;
	struct ibv_wc wc;

	fn_fill(s->mem.buf, len, seed);
	fn_post_send1(s->q.qp, seed, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, s->mem.buf, len,
		      s->mem.mr->lkey, seed * 3, gr->ah, rqpn, QKEY, 0, 0, 0);
	wc = fn_wait(s->q.cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	CHECK_EQ(wc.wr_id, seed);
}

static void quiet(struct node *const *n, unsigned int k)
{
	unsigned int i;

	for (i = 0; i < k; i++)
		fn_quiet(n[i]->q.cq, 0.05);
}

static void attach_all(struct node *const *n, unsigned int k, const struct grp *gr, int rc)
{
	unsigned int i;

	for (i = 0; i < k; i++)
		CHECK_EQ(droce_attach_mcast(n[i]->q.qp, &gr->gid, 0), rc);
}

static void detach_all(struct node *const *n, unsigned int k, const struct grp *gr)
{
	unsigned int i;

	for (i = 0; i < k; i++)
		CHECK_EQ(droce_detach_mcast(n[i]->q.qp, &gr->gid, 0), 0);
}

/* Every member once per message; N and S nothing. @return the next seed. */
static uint32_t all_members(struct node *s, struct node *const *m, struct node *n,
			    struct grp *g, uint32_t seed)
{
	static const uint32_t lens[] = { 0, 1, 100, 333, MTU };
	struct droce_counters c0 = fn_counters(0);
	unsigned int gi, li, i, sent = 0;

	for (gi = 0; gi < 2; gi++) {
		for (li = 0; li < RTE_DIM(lens); li++, seed++, sent++) {
			send_msg(s, &g[gi], lens[li], seed, li & 1 ? DROCE_MCAST_QPN : 0x123);
			for (i = 0; i < NMEM; i++)
				expect(m[i], s, &g[gi], lens[li], seed);
		}
	}
	quiet(m, NMEM);
	quiet(&n, 1);
	quiet(&s, 1);
	/* R3 got its copies by loopback: one per message. */
	CHECK_EQ(fn_counters(0).mcast_loopback - c0.mcast_loopback, sent);
	printf("mcast: %u messages to 2 groups, each member once, GRH checked\n", sent);
	return seed;
}

/* R2 with another Q_Key drops what R1 and R3 take. */
static uint32_t qkey_per_qp(struct node *s, struct node *const *m, struct grp *g,
			    uint32_t seed)
{
	struct ibv_qp_attr a = { .qkey = QKEY + 1 };
	struct droce_counters c1 = fn_counters(1);

	CHECK_EQ(droce_modify_qp(m[1]->q.qp, &a, IBV_QP_QKEY), 0);
	send_msg(s, &g[1], 64, seed, DROCE_MCAST_QPN);
	expect(m[0], s, &g[1], 64, seed);
	expect(m[2], s, &g[1], 64, seed);
	fn_quiet(m[1]->q.cq, 0.1);
	CHECK_EQ(fn_counters(1).rx_bad_qkey, c1.rx_bad_qkey + 1);
	a.qkey = QKEY;
	CHECK_EQ(droce_modify_qp(m[1]->q.qp, &a, IBV_QP_QKEY), 0);
	return seed + 1;
}

/* Detaching stops delivery; a group without members on a device counts there. */
static uint32_t detach_stops(struct node *s, struct node *const *m, struct grp *g,
			     uint32_t seed)
{
	struct droce_counters c0, c1;

	CHECK_EQ(droce_detach_mcast(m[0]->q.qp, &g[0].gid, 0), 0);
	send_msg(s, &g[0], 10, seed, DROCE_MCAST_QPN);
	expect(m[1], s, &g[0], 10, seed);
	expect(m[2], s, &g[0], 10, seed++);
	fn_quiet(m[0]->q.cq, 0.1);
	CHECK_EQ(droce_detach_mcast(m[1]->q.qp, &g[0].gid, 0), 0);
	CHECK_EQ(droce_detach_mcast(m[2]->q.qp, &g[0].gid, 0), 0);
	CHECK_EQ(droce_detach_mcast(s->q.qp, &g[0].gid, 0), 0);
	c0 = fn_counters(0);
	c1 = fn_counters(1);
	send_msg(s, &g[0], 10, seed++, DROCE_MCAST_QPN);
	quiet(m, NMEM);
	CHECK_EQ(fn_counters(1).rx_mcast_no_member, c1.rx_mcast_no_member + 1);
	CHECK_EQ(fn_counters(0).mcast_loopback, c0.mcast_loopback);
	/* The IPv6 group still works; a member cannot be destroyed until it leaves. */
	send_msg(s, &g[1], 20, seed, DROCE_MCAST_QPN);
	expect(m[0], s, &g[1], 20, seed);
	expect(m[1], s, &g[1], 20, seed);
	expect(m[2], s, &g[1], 20, seed++);
	CHECK_EQ(droce_destroy_qp(m[2]->q.qp), EBUSY);
	detach_all(m, NMEM, &g[1]);
	send_msg(s, &g[1], 20, seed++, DROCE_MCAST_QPN);
	quiet(m, NMEM);
	printf("mcast: detach stops delivery, no member counted, EBUSY while attached\n");
	return seed;
}

static void mac_mapping(void)
{
	union ibv_gid g4 = mcast_v4(239, 129, 2, 3), g6 = mcast_gid(false, 0x0102);
	struct rte_ether_addr mac;
	static const uint8_t m4[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
	static const uint8_t m6[6] = { 0x33, 0x33, 0x00, 0x00, 0x01, 0x02 };

	droce_mcast_mac(g4.raw, &mac);
	CHECK(memcmp(mac.addr_bytes, m4, 6) == 0);	/* low 23 bits: 129 -> 0x01 */
	droce_mcast_mac(g6.raw, &mac);
	CHECK(memcmp(mac.addr_bytes, m6, 6) == 0);
}

static struct droce_ah *group_ah(struct droce_pd *pd, const struct grp *g)
{
	struct ibv_ah_attr a;
	struct droce_ah *ah;

	memset(&a, 0, sizeof(a));
	a.is_global = 1;
	a.port_num = 1;
	a.grh.sgid_index = (uint8_t)g->sgid;
	a.grh.dgid = g->gid;
	a.grh.hop_limit = g->hop;
	a.grh.traffic_class = g->tc;
	a.grh.flow_label = g->fl;
	ah = droce_create_ah(pd, &a);
	CHECK(ah != NULL);
	return ah;
}

int main(int argc, char **argv)
{
	struct grp g[2] = {
		{ .gid = mcast_gid(true, 1), .sgid = GID_V4, .hop = 5, .tc = 0x28 },
		{ .gid = mcast_gid(false, 1), .sgid = GID_V6, .hop = 9, .tc = 0x10,
		  .fl = 0x54321 },
	};
	struct node s, r1, r2, r3, n;
	struct node *m[NMEM] = { &r1, &r2, &r3 };
	struct droce_pd *pd0, *pd1;
	uint32_t seed = 1;
	int i;

	fn_open(argc, argv);
	mac_mapping();
	pd0 = fn_pd(0);
	pd1 = fn_pd(1);
	node_init(&s, 0, pd0);
	node_init(&r1, 1, pd1);
	node_init(&r2, 1, pd1);
	node_init(&r3, 0, pd0);
	node_init(&n, 1, pd1);
	for (i = 0; i < 2; i++) {
		g[i].ah = group_ah(pd0, &g[i]);
		attach_all(m, NMEM, &g[i], 0);
		attach_all(m, NMEM, &g[i], 0);	/* again: no second copy */
	}
	CHECK_EQ(droce_attach_mcast(s.q.qp, &g[0].gid, 0), 0);	/* the sender too */
	seed = all_members(&s, m, &n, g, seed);
	seed = qkey_per_qp(&s, m, g, seed);
	seed = detach_stops(&s, m, g, seed);
	for (i = 0; i < 2; i++)
		CHECK_EQ(droce_destroy_ah(g[i].ah), 0);
	mcast_check_args(pd0, s.q.cq);
	mcast_check_args(pd1, n.q.cq);
	mcast_check_limits(pair_ctx[1], pd1, n.q.cq);
	node_fini(&s);
	node_fini(&r1);
	node_fini(&r2);
	node_fini(&r3);
	node_fini(&n);
	CHECK_EQ(droce_dealloc_pd(pd0), 0);
	CHECK_EQ(droce_dealloc_pd(pd1), 0);
	fn_close();
	printf("ok (%u messages)\n", seed - 1);
	return 0;
}
