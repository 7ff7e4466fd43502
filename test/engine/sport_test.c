/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The UDP source ports droce puts on the wire (droce_flow_sport(), doc/engine.md "Source
 * ports"):
 * RC and UC QPs connected to peers of several QP numbers (droce's own range, a foreign 24-bit
 * one) send, and the frames the DUT's port transmits carry 0xC000-0xFFFF with the low byte the
 * destination's slot ((DestQP - 0x11) & 0xFF: sport & (N - 1) names the receiver's shard of N),
 * the same port on every frame of the path, requests and the responder's ACKs alike, a new one
 * when the path moves to another peer; a UD QP's datagrams carry a low byte of 0 (shard 0).
 */
#include "et.h"

static struct et_dut d;
static struct droce_pd *pd;
static struct droce_cq *cq;
static struct droce_mr *mr;
static uint8_t buf[4096];
static int gid_v4 = -1;

static void find_gid(void)
{
	union ibv_gid g;
	int i;

	for (i = 0; i < 16 && droce_query_gid(d.ctx, 1, i, &g) == 0; i++)
		if (g.raw[10] == 0xff && g.raw[11] == 0xff && g.raw[12] == 10 && g.raw[15] == 1)
			gid_v4 = i;
	CHECK(gid_v4 >= 0);
}

/* ::ffff:10.1.0.9, the DUT's static neighbour (et.h) */
static void peer_gid(uint8_t gid[16])
{
	static const uint8_t g[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 1, [15] = 9 };

	memcpy(gid, g, 16);
}

static struct droce_qp *qp_new(enum ibv_qp_type type)
{
	struct droce_qp_init_attr ia = { .qp_type = type, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1111,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	struct droce_qp *qp = droce_create_qp(pd, &ia);

	CHECK(qp != NULL);
	mask |= type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	CHECK_EQ(droce_modify_qp(qp, &a, mask), 0);
	return qp;
}

/* INIT -> RTR -> RTS towards QP @p dqpn of 10.1.0.9 (UD: no peer; the path's attributes
 * unused). */
static void qp_connect(struct droce_qp *qp, enum ibv_qp_type type, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = 500, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = (uint8_t)gid_v4, .hop_limit = 64 } } };
	int mask = IBV_QP_STATE;

	if (type != IBV_QPT_UD) {
		peer_gid(a.ah_attr.grh.dgid.raw);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (type == IBV_QPT_RC)
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	CHECK_EQ(droce_modify_qp(qp, &a, mask), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 100;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type == IBV_QPT_RC) {
		a.timeout = 20;	/* 4 s: nothing is retransmitted meanwhile */
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 1;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	CHECK_EQ(droce_modify_qp(qp, &a, mask), 0);
}

/* Every RoCE frame the DUT sent since the last call, with BTH DestQP @p dqpn: each one's
 * source port must be @p sport; @return how many there were. */
static unsigned int frames_to(uint32_t dqpn, uint16_t sport, const char *what)
{
	static uint8_t f[2048];
	struct droce_pkt p;
	unsigned int n = 0;
	uint32_t len;

	et_poll(&d, 64);
	while ((len = et_take(&d, f, sizeof(f))) != 0) {
		if (droce_parse(f, len, 0, &p) != DROCE_PARSE_OK ||
		    droce_bth_qpn(droce_pkt_bth(&p)) != dqpn)
			continue;
		if (p.sport != sport)
			fprintf(stderr, "%s: sport %#x, want %#x\n", what, p.sport, sport);
		CHECK_EQ(p.sport, sport);
		n++;
	}
	return n;
}

static void post_send(struct droce_qp *qp, struct droce_ah *ah, uint32_t dqpn)
{
	struct ibv_sge sg = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_SEND }, *bad;

	if (ah != NULL) {
		w.wr.ud.ah = (struct ibv_ah *)ah;
		w.wr.ud.remote_qpn = dqpn;
		w.wr.ud.remote_qkey = 0x1111;
	}
	CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
}

/* The path's port: the steering byte is the destination's slot; stable over the path. */
static void check_connected(enum ibv_qp_type type, uint32_t dqpn)
{
	struct droce_qp *qp = qp_new(type);
	uint16_t sport = droce_flow_sport(qp->qp_num, dqpn);
	unsigned int n, k;

	CHECK(sport >= 0xC000);
	CHECK_EQ(sport & DROCE_SPORT_STEER_MASK, (dqpn - DROCE_QPN_BASE) & 0xFF);
	for (n = 2; n <= 8; n *= 2)	/* a droce receiver with n shards: its owner */
		if (dqpn >= DROCE_QPN_BASE && dqpn < DROCE_QPN_BASE + DROCE_MAX_QP)
			CHECK_EQ(sport & (n - 1), (dqpn - DROCE_QPN_BASE) % n);
	qp_connect(qp, type, dqpn);
	for (k = 0; k < 3; k++)
		post_send(qp, NULL, dqpn);
	CHECK_EQ(frames_to(dqpn, sport, type == IBV_QPT_RC ? "RC" : "UC"), 3);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	et_poll(&d, 16);
	while (et_take(&d, buf, sizeof(buf)) != 0)
		;
}

/* The responder's ACKs leave with the path's port too. */
static void check_ack(void)
{
	struct droce_qp *qp = qp_new(IBV_QPT_RC);
	const uint32_t dqpn = 0x2345;
	uint16_t sport = droce_flow_sport(qp->qp_num, dqpn);
	struct droce_flow f = { .hop_limit = 64, .sport = 0xc321 };
	struct droce_hdr_fields h = { .opcode = 0x04 /* RC SEND only */, .pkey = 0xffff,
				      .ackreq = 1, .dqpn = qp->qp_num, .psn = 500 };
	struct ibv_sge sg = { (uintptr_t)buf, sizeof(buf), mr->lkey };
	struct ibv_recv_wr r = { .wr_id = 2, .sg_list = &sg, .num_sge = 1 }, *bad;
	uint8_t payload[32] = { 7 };
	static uint8_t frame[256];
	struct ibv_wc wc;
	int len;

	while (droce_poll_cq(cq, 1, &wc) > 0)
		;	/* the flushed sends of the QPs before */
	qp_connect(qp, IBV_QPT_RC, dqpn);
	CHECK_EQ(droce_post_recv(qp, &r, &bad), 0);
	f.src_mac = et_peer_mac;
	f.dst_mac = d.mac;
	peer_gid(f.sgid);
	memcpy(f.dgid, f.sgid, 16);
	f.dgid[15] = 1;
	len = droce_build(frame, sizeof(frame), &f, &h, payload, sizeof(payload));
	CHECK(len > 0);
	et_inject(&d, frame, (uint32_t)len);
	CHECK_EQ(frames_to(dqpn, sport, "ACK"), 1);
	CHECK_EQ(droce_poll_cq(cq, 1, &wc), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(droce_destroy_qp(qp), 0);
}

/* A path moved to another peer (RTS -> RESET -> RTR) takes that peer's port. */
static void check_repath(void)
{
	struct droce_qp *qp = qp_new(IBV_QPT_UC);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	const uint32_t one = DROCE_QPN_BASE + 6, two = DROCE_QPN_BASE + 9;

	qp_connect(qp, IBV_QPT_UC, one);
	post_send(qp, NULL, one);
	CHECK_EQ(frames_to(one, droce_flow_sport(qp->qp_num, one), "UC first"), 1);
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS), 0);
	qp_connect(qp, IBV_QPT_UC, two);
	post_send(qp, NULL, two);
	CHECK_EQ(frames_to(two, droce_flow_sport(qp->qp_num, two), "UC second"), 1);
	CHECK_EQ(droce_flow_sport(qp->qp_num, two) & 0xFF, 9);
	CHECK_EQ(droce_destroy_qp(qp), 0);
}

static void check_ud(void)
{
	struct droce_qp *qp = qp_new(IBV_QPT_UD);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	const uint32_t dqpn[] = { DROCE_QPN_BASE + 3, 0x123457, DROCE_GSI_QPN };
	struct droce_ah *ah;
	unsigned int i;

	aa.grh.sgid_index = (uint8_t)gid_v4;
	aa.grh.hop_limit = 64;
	peer_gid(aa.grh.dgid.raw);
	ah = droce_create_ah(pd, &aa);
	CHECK(ah != NULL);
	qp_connect(qp, IBV_QPT_UD, 0);
	for (i = 0; i < RTE_DIM(dqpn); i++) {
		uint16_t sport = droce_flow_sport_ud(qp->qp_num, dqpn[i]);

		CHECK(sport >= 0xC000);
		CHECK_EQ(sport & DROCE_SPORT_STEER_MASK, 0);
		post_send(qp, ah, dqpn[i]);
		CHECK_EQ(frames_to(dqpn[i], sport, "UD"), 1);
	}
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_ah(ah), 0);
}

int main(int argc, char **argv)
{
	et_setup(&d, argc, argv);
	find_gid();
	pd = droce_alloc_pd(d.ctx);
	cq = droce_create_cq(d.ctx, 256, NULL, NULL, 0);
	CHECK(pd != NULL && cq != NULL);
	mr = droce_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	/* droce's QPNs (slots 0, 5, 254, 255, 256, the last), then foreign 24-bit ones */
	check_connected(IBV_QPT_RC, DROCE_QPN_BASE);
	check_connected(IBV_QPT_RC, DROCE_QPN_BASE + 5);
	check_connected(IBV_QPT_RC, DROCE_QPN_BASE + 254);
	check_connected(IBV_QPT_RC, DROCE_QPN_BASE + 255);
	check_connected(IBV_QPT_UC, DROCE_QPN_BASE + 256);
	check_connected(IBV_QPT_UC, DROCE_QPN_BASE + DROCE_MAX_QP - 1);
	check_connected(IBV_QPT_RC, 0xabcdef);
	check_connected(IBV_QPT_UC, 0x000003);
	check_ack();
	check_repath();
	check_ud();
	printf("sport: RC, UC, UD and ACK frames carry the convention's source ports\n");
	return 0;
}
