/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The receive stages over one burst (engine_rx_roce.c): frames injected together so that one
 * engine iteration takes them as one burst.
 * - RC: two QPs' SENDs interleaved (runs of one and of two frames, the burst ending in a run)
 *   with a bad ICRC, an unknown QP and another GID among them: each QP's messages complete in
 *   order, exactly once, the drops land in their counters, and each QP's ACK for its last PSN
 *   leaves in the same poll (the QP rearmed once per run, never missed).
 * - UD with multicast: a QP's unicast and group frames alternate in one burst and complete in
 *   arrival order (the group fan-out runs in the deliver stage, not ahead of it).
 */
#include "et.h"
#include "qp_attr.h"

#define PEER_IP "10.1.0.9"	/* et_setup()'s static neighbour */
#define RQ_PSN 100u
#define QKEY 0x11111111u	/* test_qp_attr_fill()'s */

static struct et_dut d;
static uint8_t frame[2048];
static struct droce_pd *pd;
static struct droce_cq *cq;
static struct droce_mr *mr;
static uint8_t buf[64][64];

static void v4_gid(uint8_t gid[16], const char *ip)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	CHECK(inet_pton(AF_INET, ip, &gid[12]) == 1);
}

/* Frame @p opcode from the peer to @p dst for QP @p dqpn at @p psn carrying @p tag; @p bad: a
 * wrong ICRC. @return its length. */
static uint32_t make(uint8_t opcode, const char *dst, uint32_t dqpn, uint32_t psn, uint32_t tag,
		     bool bad)
{
	struct droce_flow f = { .hop_limit = 64, .sport = 0xc001 };
	struct droce_hdr_fields h = { .opcode = opcode, .pkey = 0xffff, .dqpn = dqpn, .psn = psn,
				      .ackreq = 1, .deth = { .qkey = QKEY, .sqpn = 0x77 } };
	int len;

	f.src_mac = et_peer_mac;
	f.dst_mac = d.mac;
	v4_gid(f.sgid, PEER_IP);
	v4_gid(f.dgid, dst);
	len = droce_build(frame, sizeof(frame), &f, &h, &tag, sizeof(tag));
	CHECK(len > 0);
	if (bad)
		frame[len - 1] ^= 0x5a;
	return (uint32_t)len;
}

static void inject(uint8_t opcode, const char *dst, uint32_t dqpn, uint32_t psn, uint32_t tag,
		   bool bad)
{
	et_inject(&d, frame, make(opcode, dst, dqpn, psn, tag, bad));
}

/* Post @p n receives on @p qp, buffers from @p first on, wr_id = buffer index. */
static void post_recvs(struct droce_qp *qp, unsigned int first, unsigned int n)
{
	for (unsigned int i = first; i < first + n; i++) {
		struct ibv_sge s = { .addr = (uintptr_t)buf[i], .length = sizeof(buf[i]),
				     .lkey = mr->lkey };
		struct ibv_recv_wr w = { .wr_id = i, .sg_list = &s, .num_sge = 1 }, *badw;

		CHECK_EQ(droce_post_recv(qp, &w, &badw), 0);
	}
}

static struct droce_qp *make_qp(enum ibv_qp_type type)
{
	struct droce_qp_init_attr a = { .qp_type = type, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct droce_qp *qp = droce_create_qp(pd, &a);

	CHECK(qp != NULL);
	return qp;
}

/* RC @p qp to RTR towards the peer's QP @p dqpn, receiving from RQ_PSN on. */
static void rc_rtr(struct droce_qp *qp, uint32_t dqpn, int sgid)
{
	struct ibv_qp_attr q;

	test_qp_attr_fill(&q);
	q.dest_qp_num = dqpn;
	q.rq_psn = RQ_PSN;
	q.ah_attr.grh.sgid_index = (uint8_t)sgid;
	v4_gid(q.ah_attr.grh.dgid.raw, PEER_IP);
	q.qp_state = IBV_QPS_INIT;
	CHECK_EQ(droce_modify_qp(qp, &q, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS), 0);
	q.qp_state = IBV_QPS_RTR;
	CHECK_EQ(droce_modify_qp(qp, &q, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER), 0);
}

/* UD @p qp to RTS with test_qp_attr_fill()'s Q_Key (QKEY). */
static void ud_rts(struct droce_qp *qp)
{
	static const enum ibv_qp_attr_mask mask[] = {
		IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
		IBV_QP_STATE, IBV_QP_STATE | IBV_QP_SQ_PSN };
	struct ibv_qp_attr q;

	test_qp_attr_fill(&q);
	for (int st = IBV_QPS_INIT; st <= IBV_QPS_RTS; st++) {
		q.qp_state = (enum ibv_qp_state)st;
		CHECK_EQ(droce_modify_qp(qp, &q, (int)mask[st - IBV_QPS_INIT]), 0);
	}
}

/* Exactly @p n completions, in CQ order. */
static void poll_n(struct ibv_wc *wc, int n)
{
	int got = droce_poll_cq(cq, n + 1, wc);

	CHECK_EQ(got, n);
	for (int i = 0; i < n; i++)
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
}

static uint32_t tag_of(const struct ibv_wc *wc, uint32_t off)
{
	uint32_t tag;

	memcpy(&tag, buf[wc->wr_id] + off, sizeof(tag));
	return tag;
}

static void test_rc_runs(void)
{
	struct droce_counters before = et_counters(&d), now;
	struct droce_qp *a = make_qp(IBV_QPT_RC), *b = make_qp(IBV_QPT_RC);
	uint32_t last_psn[2] = { 0, 0 }, msn[2] = { 0, 0 }, next[2] = { 0, 0 };
	uint32_t qa = a->qp_num, qb = b->qp_num;
	struct ibv_wc wc[32];
	struct droce_pkt pkt;
	unsigned int acks = 0;
	uint8_t out[2048];
	uint32_t len;
	int sgid = et_gid_index_v4(&d);

	rc_rtr(a, 0x900, sgid);
	rc_rtr(b, 0x901, sgid);
	post_recvs(a, 0, 8);
	post_recvs(b, 8, 8);
	/* Idle first: the QPs leave the TX step (nothing to send), so that only the burst's
	 * rearm can bring them back for their ACKs. */
	et_poll(&d, 2);
	CHECK_EQ(et_take(&d, out, sizeof(out)), 0);
	before = et_counters(&d);
	/* One burst: A B A A B A B B, with three bad frames among them. */
	inject(0x04, "10.1.0.1", qa, RQ_PSN, 1000, false);
	inject(0x04, "10.1.0.1", qa, RQ_PSN + 1, 9999, true);		/* bad ICRC */
	inject(0x04, "10.1.0.1", qb, RQ_PSN, 2000, false);
	inject(0x04, "10.1.0.1", qa, RQ_PSN + 1, 1001, false);
	inject(0x04, "10.1.0.1", 0x5555, RQ_PSN, 9999, false);		/* unknown QP */
	inject(0x04, "10.1.0.1", qa, RQ_PSN + 2, 1002, false);
	inject(0x04, "10.1.0.1", qb, RQ_PSN + 1, 2001, false);
	inject(0x04, "10.1.0.77", qb, RQ_PSN + 2, 9999, false);	/* another GID */
	inject(0x04, "10.1.0.1", qa, RQ_PSN + 3, 1003, false);
	inject(0x04, "10.1.0.1", qb, RQ_PSN + 2, 2002, false);
	inject(0x04, "10.1.0.1", qb, RQ_PSN + 3, 2003, false);
	et_poll(&d, 1);

	now = et_counters(&d);
	CHECK_EQ(now.rx_packets - before.rx_packets, 11);
	CHECK_EQ(now.rx_roce - before.rx_roce, 8);
	CHECK_EQ(now.rx_bad_frame - before.rx_bad_frame, 1);
	CHECK_EQ(now.parse_err[DROCE_PARSE_BAD_ICRC] - before.parse_err[DROCE_PARSE_BAD_ICRC], 1);
	CHECK_EQ(now.rx_unknown_qp - before.rx_unknown_qp, 1);
	CHECK_EQ(now.rx_not_our_gid - before.rx_not_our_gid, 1);

	/* Each QP's messages in order, exactly once. */
	poll_n(wc, 8);
	for (int i = 0; i < 8; i++) {
		int k = wc[i].qp_num == qa ? 0 : 1;

		CHECK(wc[i].qp_num == qa || wc[i].qp_num == qb);
		CHECK_EQ(wc[i].opcode, IBV_WC_RECV);
		CHECK_EQ(wc[i].byte_len, 4);
		CHECK_EQ(wc[i].wr_id, (uint64_t)(k * 8) + next[k]);
		CHECK_EQ(tag_of(&wc[i], 0), (uint32_t)(k + 1) * 1000 + next[k]);
		next[k]++;
	}
	CHECK_EQ(next[0], 4);
	CHECK_EQ(next[1], 4);

	/* Both QPs' ACKs left in that same poll, the last one for each QP's last PSN. */
	while ((len = et_take(&d, out, sizeof(out))) != 0) {
		const struct droce_aeth *ae;
		uint32_t dq;
		int k;

		CHECK_EQ(droce_parse(out, len, 0, &pkt), DROCE_PARSE_OK);
		CHECK_EQ(pkt.opcode, DROCE_OP_RC_ACKNOWLEDGE);
		ae = droce_pkt_ext(&pkt, DROCE_HDR_AETH);
		dq = droce_bth_qpn(droce_pkt_bth(&pkt));
		k = dq == 0x900 ? 0 : 1;

		CHECK(dq == 0x900 || dq == 0x901);
		CHECK_EQ(droce_aeth_syndrome(ae) & DROCE_AETH_NAK, 0);
		last_psn[k] = droce_bth_psn(droce_pkt_bth(&pkt));
		msn[k] = droce_aeth_msn(ae);
		acks++;
	}
	CHECK(acks >= 2);
	CHECK_EQ(last_psn[0], RQ_PSN + 3);
	CHECK_EQ(last_psn[1], RQ_PSN + 3);
	CHECK_EQ(msn[0], 4);
	CHECK_EQ(msn[1], 4);
	CHECK_EQ(droce_destroy_qp(a), 0);
	CHECK_EQ(droce_destroy_qp(b), 0);
}

static void test_ud_mcast_order(void)
{
	struct droce_qp *c = make_qp(IBV_QPT_UD);
	union ibv_gid group;
	struct ibv_wc wc[32];

	ud_rts(c);
	v4_gid(group.raw, "239.1.1.1");
	CHECK_EQ(droce_attach_mcast(c, &group, 0), 0);
	post_recvs(c, 16, 8);
	/* Unicast and group frames alternating in one burst. */
	for (uint32_t i = 0; i < 6; i++) {
		if (i % 2 == 0)
			inject(0x64, "10.1.0.1", c->qp_num, i, 3000 + i, false);
		else
			inject(0x64, "239.1.1.1", 0xffffff, i, 3000 + i, false);
	}
	et_poll(&d, 1);
	poll_n(wc, 6);
	for (int i = 0; i < 6; i++) {
		CHECK_EQ(wc[i].qp_num, c->qp_num);
		CHECK_EQ(wc[i].wr_id, 16u + (uint64_t)i);
		CHECK_EQ(wc[i].byte_len, 40 + 4);	/* the GRH, then the tag */
		CHECK_EQ(tag_of(&wc[i], 40), 3000u + (uint32_t)i);
	}
	CHECK_EQ(droce_detach_mcast(c, &group, 0), 0);
	CHECK_EQ(droce_destroy_qp(c), 0);
}

int main(int argc, char **argv)
{
	et_setup(&d, argc, argv);
	pd = droce_alloc_pd(d.ctx);
	cq = droce_create_cq(d.ctx, 64, NULL, NULL, 0);
	CHECK(pd != NULL && cq != NULL);
	mr = droce_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	test_rc_runs();
	test_ud_mcast_order();
	CHECK_EQ(droce_dereg_mr(mr), 0);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(d.ctx), 0);
	printf("burst: ok\n");
	return 0;
}
