/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * UD between droce0 and droce1 through the engine and net_ring, public API only:
 * many-to-one and one-to-many with several address handles (IPv4, IPv6, link-local GIDs),
 * the GRH in the first 40 bytes checked field by field, every completion field (sl: the L3
 * header type, as RoCE NICs report it), immediate data, Q_Key mismatch dropped and counted,
 * the WR Q_Key high-bit rule, a post longer than the port MTU refused (EINVAL), a message
 * longer than the receive WR dropped and counted with the WR kept for the next message.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fn_qp.h"

#define QKEY 0x11223344u
#define NCLI 3
#define MTU 1024u
#define BUF (40 + MTU)

static const int cli_gid[NCLI] = { GID_V4, GID_V6, GID_LL };
static const uint8_t cli_tc[NCLI] = { 0x20, 0x48, 0 };
static const uint8_t cli_hop[NCLI] = { 64, 17, 255 };
static const uint32_t cli_fl[NCLI] = { 0, 0x12345, 0xabcde };

struct node {
	struct fn_qp q;
	struct fn_mem mem;		/* [0, BUF): send; then NR receive buffers */
};
enum { NR = 16 };

static uint8_t *rbuf(struct node *n, unsigned int i)
{
	return n->mem.buf + BUF * (1 + i);
}

static void post_recvs(struct node *n)
{
	unsigned int i;

	for (i = 0; i < NR; i++) {
		memset(rbuf(n, i), 0xee, BUF);
		fn_post_recv(n->q.qp, i, rbuf(n, i), BUF, n->mem.mr->lkey);
	}
}

static void node_init(struct node *n, int side, struct droce_pd *pd, uint32_t qkey)
{
	fn_qp_create(&n->q, side, pd, IBV_QPT_UD, NULL, NR);
	fn_mem_reg(&n->mem, pd, BUF * (NR + 1), IBV_ACCESS_LOCAL_WRITE, 0);
	fn_ud_rts(n->q.qp, qkey);
}

static struct droce_ah *make_ah(struct droce_pd *pd, int peer_side, int gid, uint8_t tc,
				uint8_t hop, uint32_t fl)
{
	struct ibv_ah_attr a;
	struct droce_ah *ah;

	fn_ah_attr(&a, peer_side, gid, gid);
	a.grh.traffic_class = tc;
	a.grh.hop_limit = hop;
	a.grh.flow_label = fl;
	ah = droce_create_ah(pd, &a);
	CHECK(ah != NULL);
	return ah;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The GRH of a message from @p src_side/@p gid to @p dst_side, @p len payload bytes. */
static void check_grh(const uint8_t *g, int src_side, int dst_side, int gid, uint8_t tc,
		      uint8_t hop, uint32_t fl, uint32_t len, bool imm)
{
	union ibv_gid s, d;
	uint32_t l4 = 8 + 12 + 8 + (imm ? 4 : 0) + len + ((4 - (len & 3)) & 3) + 4;

	CHECK_EQ(droce_query_gid(pair_ctx[src_side], 1, gid, &s), 0);
	CHECK_EQ(droce_query_gid(pair_ctx[dst_side], 1, gid, &d), 0);
	if (gid == GID_V4) {
		CHECK(fn_all(g, 20, 0));
		CHECK_EQ(g[20], 0x45);
		CHECK_EQ(g[21], tc);
		CHECK_EQ(be16(g + 22), 20 + l4);
		CHECK_EQ(g[28], hop);
		CHECK_EQ(g[29], 17);
		CHECK(memcmp(g + 32, s.raw + 12, 4) == 0);
		CHECK(memcmp(g + 36, d.raw + 12, 4) == 0);
		return;
	}
	CHECK_EQ(g[0] >> 4, 6);
	CHECK_EQ((uint8_t)(g[0] << 4 | g[1] >> 4), tc);
	CHECK_EQ((uint32_t)(g[1] & 0xf) << 16 | be16(g + 2), fl);
	CHECK_EQ(be16(g + 4), l4);
	CHECK_EQ(g[6], 17);
	CHECK_EQ(g[7], hop);
	CHECK(memcmp(g + 8, s.raw, 16) == 0);
	CHECK(memcmp(g + 24, d.raw, 16) == 0);
}

static void check_recv(struct node *n, struct ibv_wc wc, uint32_t src_qp, uint32_t len,
		       bool imm, uint32_t immv, uint32_t seed, int gid)
{
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, 40 + len);
	CHECK_EQ(wc.src_qp, src_qp);
	CHECK_EQ(wc.qp_num, n->q.qp->qp_num);
	CHECK_EQ(wc.pkey_index, 0);
	/* The L3 header type, where RoCE NICs (mlx5) report it: 2 IPv4, 1 IPv6. */
	CHECK_EQ(wc.sl, gid == GID_V4 ? 2 : 1);
	CHECK_EQ(wc.slid, 0);
	CHECK_EQ(wc.dlid_path_bits, 0);
	CHECK_EQ(wc.wc_flags, IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0));
	if (imm)
		CHECK_EQ(ntohl(wc.imm_data), immv);
	CHECK(wc.wr_id < NR);
	{
		uint8_t *exp = malloc(len + 1);

		fn_fill(exp, len, seed);
		CHECK(memcmp(rbuf(n, (unsigned int)wc.wr_id) + 40, exp, len) == 0);
		CHECK(fn_all(rbuf(n, (unsigned int)wc.wr_id) + 40 + len, BUF - 40 - len, 0xee));
		free(exp);
	}
}

static struct ibv_wc wait_send(struct node *n, uint64_t wr_id)
{
	struct ibv_wc wc = fn_wait(n->q.cq);

	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	CHECK_EQ(wc.wr_id, wr_id);
	return wc;
}

/* Many-to-one: every client sends to the server through its own AH; one-to-many: back. */
static void many_one_many(struct node *srv, struct node cli[NCLI], struct droce_pd *pd0,
			  struct droce_pd *pd1)
{
	struct droce_ah *to_srv[NCLI], *to_cli[NCLI];
	uint32_t len, seed = 1;
	int i;

	for (i = 0; i < NCLI; i++) {
		to_srv[i] = make_ah(pd1, 0, cli_gid[i], cli_tc[i], cli_hop[i], cli_fl[i]);
		to_cli[i] = make_ah(pd0, 1, cli_gid[i], cli_tc[i], cli_hop[i], cli_fl[i]);
	}
	for (len = 0; len <= MTU; len = len ? len * 4 : 1) {
		for (i = 0; i < NCLI; i++, seed++) {
			bool imm = (seed & 1) != 0;
			struct ibv_wc wc;

			fn_fill(cli[i].mem.buf, len, seed);
			fn_post_send1(cli[i].q.qp, 500 + seed, imm ? IBV_WR_SEND_WITH_IMM :
				      IBV_WR_SEND, cli[i].mem.buf, len, cli[i].mem.mr->lkey,
				      seed * 77, to_srv[i], srv->q.qp->qp_num, QKEY, 0, 0, 0);
			wait_send(&cli[i], 500 + seed);
			wc = fn_wait(srv->q.cq);
			check_recv(srv, wc, cli[i].q.qp->qp_num, len, imm, seed * 77, seed,
				   cli_gid[i]);
			check_grh(rbuf(srv, (unsigned int)wc.wr_id), 1, 0, cli_gid[i], cli_tc[i],
				  cli_hop[i], cli_fl[i], len, imm);
			memset(rbuf(srv, (unsigned int)wc.wr_id), 0xee, BUF);
			fn_post_recv(srv->q.qp, wc.wr_id, rbuf(srv, (unsigned int)wc.wr_id), BUF,
				     srv->mem.mr->lkey);
		}
		for (i = 0; i < NCLI; i++, seed++) {
			struct ibv_wc wc;

			fn_fill(srv->mem.buf, len, seed);
			fn_post_send1(srv->q.qp, 900 + seed, IBV_WR_SEND_WITH_IMM, srv->mem.buf, len,
				      srv->mem.mr->lkey, seed, to_cli[i], cli[i].q.qp->qp_num, QKEY,
				      0, 0, 0);
			wait_send(srv, 900 + seed);
			wc = fn_wait(cli[i].q.cq);
			check_recv(&cli[i], wc, srv->q.qp->qp_num, len, true, seed, seed,
				   cli_gid[i]);
			check_grh(rbuf(&cli[i], (unsigned int)wc.wr_id), 0, 1, cli_gid[i],
				  cli_tc[i], cli_hop[i], cli_fl[i], len, true);
			memset(rbuf(&cli[i], (unsigned int)wc.wr_id), 0xee, BUF);
			fn_post_recv(cli[i].q.qp, wc.wr_id, rbuf(&cli[i], (unsigned int)wc.wr_id),
				     BUF, cli[i].mem.mr->lkey);
		}
	}
	for (i = 0; i < NCLI; i++) {
		CHECK_EQ(droce_destroy_ah(to_srv[i]), 0);
		CHECK_EQ(droce_destroy_ah(to_cli[i]), 0);
	}
	printf("ud many-to-one / one-to-many: %u messages, GRH checked\n", seed - 1);
}

/* Q_Key mismatch, the high-bit rule, the size rules. */
static void qkeys_and_sizes(struct node *srv, struct node *cli, struct droce_pd *pd1)
{
	struct droce_ah *ah = make_ah(pd1, 0, GID_V4, 0, 64, 0);
	struct droce_counters c0 = fn_counters(0), c1;
	struct ibv_wc wc;

	/* A wrong Q_Key: sent (the requester cannot know), dropped and counted. */
	fn_post_send1(cli->q.qp, 1, IBV_WR_SEND, cli->mem.buf, 8, cli->mem.mr->lkey, 0, ah,
		      srv->q.qp->qp_num, QKEY + 1, 0, 0, 0);
	wait_send(cli, 1);
	fn_quiet(srv->q.cq, 0.2);
	c1 = fn_counters(0);
	CHECK_EQ(c1.rx_bad_qkey, c0.rx_bad_qkey + 1);
	/* High bit: the sending QP's own Q_Key (cli's is QKEY + 7: dropped, then QKEY). */
	fn_post_send1(cli->q.qp, 2, IBV_WR_SEND, cli->mem.buf, 8, cli->mem.mr->lkey, 0, ah,
		      srv->q.qp->qp_num, 0x80000000u | QKEY, 0, 0, 0);
	wait_send(cli, 2);
	fn_quiet(srv->q.cq, 0.2);
	CHECK_EQ(fn_counters(0).rx_bad_qkey, c0.rx_bad_qkey + 2);
	{
		struct ibv_qp_attr a = { .qkey = QKEY };

		CHECK_EQ(droce_modify_qp(cli->q.qp, &a, IBV_QP_QKEY), 0);
	}
	fn_fill(cli->mem.buf, 8, 42);
	fn_post_send1(cli->q.qp, 3, IBV_WR_SEND, cli->mem.buf, 8, cli->mem.mr->lkey, 0, ah,
		      srv->q.qp->qp_num, 0xffffffffu, 0, 0, 0);
	wait_send(cli, 3);
	wc = fn_wait(srv->q.cq);
	check_recv(srv, wc, cli->q.qp->qp_num, 8, false, 0, 42, GID_V4);
	memset(rbuf(srv, (unsigned int)wc.wr_id), 0xee, BUF);
	fn_post_recv(srv->q.qp, wc.wr_id, rbuf(srv, (unsigned int)wc.wr_id), BUF,
		     srv->mem.mr->lkey);
	/* Longer than the port MTU: refused at post time; exactly the MTU goes. */
	fn_post_send1(cli->q.qp, 4, IBV_WR_SEND, cli->mem.buf, MTU + 1, cli->mem.mr->lkey, 0, ah,
		      srv->q.qp->qp_num, QKEY, 0, 0, EINVAL);
	CHECK_EQ(fn_state(cli->q.qp), IBV_QPS_RTS);
	printf("ud: q_key mismatch counted, high-bit rule, MTU+1 post refused\n");
	CHECK_EQ(droce_destroy_ah(ah), 0);
}

/* A message longer than the receive WR (GRH included): dropped, counted, WR kept. */
static void too_long(struct node *srv, struct node *cli, struct droce_pd *pd1)
{
	struct droce_ah *ah = make_ah(pd1, 0, GID_V4, 0, 64, 0);
	struct droce_counters c0 = fn_counters(0);
	struct fn_qp small;
	struct fn_mem m;
	struct ibv_wc wc;

	/* A QP of its own with one 40 + 100 byte receive WR. */
	fn_qp_create(&small, 0, srv->q.qp->pd, IBV_QPT_UD, NULL, 4);
	fn_ud_rts(small.qp, QKEY);
	fn_mem_reg(&m, srv->q.qp->pd, 140, IBV_ACCESS_LOCAL_WRITE, 0xee);
	fn_post_recv(small.qp, 77, m.buf, 140, m.mr->lkey);
	fn_post_send1(cli->q.qp, 5, IBV_WR_SEND, cli->mem.buf, 101, cli->mem.mr->lkey, 0, ah,
		      small.qp->qp_num, QKEY, 0, 0, 0);
	wait_send(cli, 5);
	fn_quiet(small.cq, 0.2);
	CHECK_EQ(fn_counters(0).rx_ud_too_long, c0.rx_ud_too_long + 1);
	CHECK(fn_all(m.buf, 140, 0xee));	/* nothing written */
	fn_fill(cli->mem.buf, 100, 9);
	fn_post_send1(cli->q.qp, 6, IBV_WR_SEND, cli->mem.buf, 100, cli->mem.mr->lkey, 0, ah,
		      small.qp->qp_num, QKEY, 0, 0, 0);
	wait_send(cli, 6);
	wc = fn_wait(small.cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 77);		/* the same WR */
	CHECK_EQ(wc.byte_len, 140);
	CHECK_EQ(fn_state(small.qp), IBV_QPS_RTS);
	fn_qp_destroy(&small);
	fn_mem_free(&m);
	CHECK_EQ(droce_destroy_ah(ah), 0);
	printf("ud: too long for the WR: dropped, counted, WR reused\n");
}

int main(int argc, char **argv)
{
	struct droce_pd *pd0, *pd1;
	struct node srv, cli[NCLI];
	int i;

	fn_open(argc, argv);
	pd0 = fn_pd(0);
	pd1 = fn_pd(1);
	node_init(&srv, 0, pd0, QKEY);
	post_recvs(&srv);
	for (i = 0; i < NCLI; i++) {
		node_init(&cli[i], 1, pd1, i == 0 ? QKEY + 7 : QKEY);
		post_recvs(&cli[i]);
	}
	{
		struct ibv_qp_attr a = { .qkey = QKEY };

		CHECK_EQ(droce_modify_qp(cli[0].q.qp, &a, IBV_QP_QKEY), 0);
		many_one_many(&srv, cli, pd0, pd1);
		a.qkey = QKEY + 7;
		CHECK_EQ(droce_modify_qp(cli[0].q.qp, &a, IBV_QP_QKEY), 0);
	}
	qkeys_and_sizes(&srv, &cli[0], pd1);
	too_long(&srv, &cli[0], pd1);
	for (i = 0; i < NCLI; i++) {
		fn_qp_destroy(&cli[i].q);
		fn_mem_free(&cli[i].mem);
	}
	fn_qp_destroy(&srv.q);
	fn_mem_free(&srv.mem);
	CHECK_EQ(droce_dealloc_pd(pd0), 0);
	CHECK_EQ(droce_dealloc_pd(pd1), 0);
	fn_close();
	printf("ok\n");
	return 0;
}
