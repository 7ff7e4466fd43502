/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * 802.1Q on a device ([device] vlan, pcp; [dcqcn] cnp_dscp, cnp_pcp; doc/engine.md "VLAN and
 * priority"), on the wire of the DUT's port (et.h):
 * - vlan mode (VLAN 100, pcp = sl): an RC QP's requests and the responder's ACK leave tagged
 *   with VLAN 100, the QP's SL as PCP and its traffic class's DSCP in the IP header, and they
 *   parse with a good ICRC (which does not cover the tag); a CNP leaves at cnp_pcp / cnp_dscp
 *   (vlan.ini); a tagged ARP request is answered tagged; untagged frames and frames of
 *   another VLAN are dropped, each under its counter, while a tagged frame of VLAN 100 goes on
 *   to the next check (unknown QP).
 * - pcp3 mode (VLAN 100, pcp = 3): every frame at PCP 3 whatever the SL.
 * - untagged mode (no vlan): frames go out untagged; a frame tagged with a VLAN is dropped
 *   (rx_vlan_tagged), a priority-tagged one (VLAN id 0) is taken.
 * Usage: engine_vlan_test vlan|pcp3|untagged EAL-ARGS...; exit 0 when every check holds.
 */
#include <rte_arp.h>

#include "et.h"

enum { VID = 100, SL = 5, DSCP = 26, CNP_DSCP = 48, CNP_PCP = 6 };

static struct et_dut d;
static struct droce_pd *pd;
static struct droce_cq *cq;
static struct droce_mr *mr;
static uint8_t buf[4096];
static uint8_t frame[2048];
static int gid_v4 = -1;
static enum { M_VLAN, M_PCP3, M_UNTAGGED } mode;

static const uint8_t peer_gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 1, [15] = 9 };
static const uint8_t our_gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 1, [15] = 1 };

static struct droce_counters delta(const struct droce_counters *before)
{
	struct droce_counters now = et_counters(&d), r;
	unsigned int i;

	for (i = 0; i < sizeof(r) / 8; i++)
		((uint64_t *)&r)[i] = ((const uint64_t *)&now)[i] - ((const uint64_t *)before)[i];
	return r;
}

/* A RoCE v2 frame from the peer 10.1.0.9 to the DUT: tagged with @p tci when @p tag. */
static uint32_t peer_frame(bool tag, uint16_t tci, uint8_t tclass, uint32_t dqpn,
			   uint8_t opcode, uint32_t psn)
{
	struct droce_flow f = { .hop_limit = 64, .sport = 0xc001, .vlan = tag, .vlan_tci = tci,
				.tclass = tclass };
	struct droce_hdr_fields h = { .opcode = opcode, .pkey = 0xffff, .ackreq = 1,
				      .dqpn = dqpn, .psn = psn };
	uint8_t payload[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	int len;

	f.src_mac = et_peer_mac;
	f.dst_mac = d.mac;
	memcpy(f.sgid, peer_gid, 16);
	memcpy(f.dgid, our_gid, 16);
	len = droce_build(frame, sizeof(frame), &f, &h, payload, sizeof(payload));
	CHECK(len > 0);
	return (uint32_t)len;
}

/* The tag the DUT's frames at SL @p sl must carry (pcp3 mode: PCP 3 whatever the SL; a CNP:
 * @p cnp, cnp_pcp over any); -1: untagged. */
static int32_t want_tci(uint8_t sl, bool cnp)
{
	switch (mode) {
	case M_VLAN:
		return (cnp ? CNP_PCP : sl) << 13 | VID;
	case M_PCP3:
		return (cnp ? CNP_PCP : 3) << 13 | VID;
	default:
		return -1;
	}
}

/* A frame the DUT sent: its tag is @p tci (-1: none) and it is IP or ARP behind it. */
static void check_l2(const uint8_t *f, uint32_t len, int32_t tci, const char *what)
{
	uint16_t type = (uint16_t)(f[12] << 8 | f[13]);

	CHECK(len >= 18);
	if (tci < 0) {
		EXPECT(type != RTE_ETHER_TYPE_VLAN, "%s: tagged (tci %#x), want untagged", what,
		       (unsigned int)(f[14] << 8 | f[15]));
		return;
	}
	EXPECT_EQ(type, RTE_ETHER_TYPE_VLAN, "%s: ethertype %#x, want 802.1Q", what, type);
	EXPECT_EQ((f[14] << 8 | f[15]), tci, "%s: tci %#x, want %#x (vlan %d pcp %d)", what,
		  (unsigned int)(f[14] << 8 | f[15]), (unsigned int)tci, tci & 0xfff, tci >> 13);
}

static struct droce_qp *rc_qp(void)
{
	struct droce_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE };
	struct droce_qp *qp = droce_create_qp(pd, &ia);

	CHECK(qp != NULL);
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x2345;
	a.rq_psn = 500;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.sl = SL;
	a.ah_attr.grh.sgid_index = (uint8_t)gid_v4;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.traffic_class = DSCP << 2;
	memcpy(a.ah_attr.grh.dgid.raw, peer_gid, 16);
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 100;
	a.timeout = 20;	/* 4 s: nothing is retransmitted meanwhile */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC), 0);
	return qp;
}

/*
 * The QP's SEND and WRITE leave tagged at the SL's PCP with the DSCP; a CE-marked SEND from
 * the peer is ACKed at the same and answered by a CNP at cnp_pcp / cnp_dscp (vlan.ini).
 */
static void check_rc(void)
{
	struct droce_qp *qp = rc_qp();
	struct ibv_sge sg = { (uintptr_t)buf, 8, mr->lkey };
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_SEND }, *bad;
	struct ibv_sge rsg = { (uintptr_t)buf + 1024, 1024, mr->lkey };
	struct ibv_recv_wr r = { .wr_id = 2, .sg_list = &rsg, .num_sge = 1 }, *rbad;
	unsigned int sends = 0, acks = 0, cnps = 0;
	static uint8_t f[2048];
	struct droce_pkt p;
	uint32_t len;

	CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	w.opcode = IBV_WR_RDMA_WRITE;
	w.wr.rdma.remote_addr = 0x10000;
	w.wr.rdma.rkey = 0x77;
	CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	CHECK_EQ(droce_post_recv(qp, &r, &rbad), 0);
	et_poll(&d, 64);
	/* a SEND from the peer marked CE (ECN 11) */
	et_inject(&d, frame, peer_frame(mode != M_UNTAGGED, VID, DSCP << 2 | 3, qp->qp_num,
					0x04 /* RC SEND only */, 500));
	et_poll(&d, 64);
	while ((len = et_take(&d, f, sizeof(f))) != 0) {
		uint8_t opcode;

		if (f[12] == 0x08 && f[13] == 0x06)
			continue;	/* ARP: none expected (static neighbour) */
		CHECK_EQ(droce_parse(f, len, 0, &p), DROCE_PARSE_OK);	/* ICRC verified */
		CHECK_EQ(p.l3_off, mode == M_UNTAGGED ? 14 : 18);
		opcode = p.opcode;
		if (opcode == DROCE_OP_CNP) {
			check_l2(f, len, want_tci(SL, true), "CNP");
			EXPECT_EQ(p.tclass, CNP_DSCP << 2, "CNP: tclass %#x, want DSCP %d, not ECT",
				  p.tclass, CNP_DSCP);
			cnps++;
			continue;
		}
		check_l2(f, len, want_tci(SL, false), droce_opcode_name(opcode));
		EXPECT_EQ(p.tclass >> 2, DSCP, "%s: DSCP %d, want %d", droce_opcode_name(opcode),
			  p.tclass >> 2, DSCP);
		if (opcode == 0x04 || opcode == 0x0a)
			sends++;
		else if (opcode == 0x11)
			acks++;
	}
	printf("rc: %u requests, %u ACKs, %u CNPs seen, each with its tag and DSCP\n", sends,
	       acks, cnps);
	CHECK_EQ(sends, 2);
	CHECK_EQ(acks, 1);
	CHECK_EQ(cnps, 1);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	et_poll(&d, 16);
	while (et_take(&d, f, sizeof(f)) != 0)
		;
}

/* A tagged (or, untagged mode, plain) ARP request for 10.1.0.1 is answered the same way. */
static void check_arp(void)
{
	struct droce_counters before = et_counters(&d), c;
	static uint8_t f[128];
	struct rte_arp_hdr *ah;
	uint32_t l3 = mode == M_UNTAGGED ? 14 : 18, len;
	unsigned int replies = 0;

	memset(frame, 0, 64);
	memset(frame, 0xff, 6);
	memcpy(frame + 6, et_peer_mac.addr_bytes, 6);
	if (mode != M_UNTAGGED) {
		frame[12] = 0x81;
		frame[14] = VID >> 8;
		frame[15] = VID & 0xff;
	}
	frame[l3 - 2] = 0x08;
	frame[l3 - 1] = 0x06;
	ah = (struct rte_arp_hdr *)(frame + l3);
	ah->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	ah->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	ah->arp_hlen = 6;
	ah->arp_plen = 4;
	ah->arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(&et_peer_mac, &ah->arp_data.arp_sha);
	memcpy(&ah->arp_data.arp_sip, &peer_gid[12], 4);
	memcpy(&ah->arp_data.arp_tip, &our_gid[12], 4);
	et_inject(&d, frame, 64);
	et_poll(&d, 16);
	while ((len = et_take(&d, f, sizeof(f))) != 0) {
		check_l2(f, len, want_tci(0, false), "ARP reply");	/* ARP: PCP 0 or pcp */
		CHECK_EQ(f[l3 - 2], 0x08);
		CHECK_EQ(f[l3 - 1], 0x06);
		CHECK_EQ(f[l3 + 7], RTE_ARP_OP_REPLY);
		replies++;
	}
	c = delta(&before);
	CHECK_EQ(c.rx_arp, 1);
	CHECK_EQ(replies, 1);
	printf("arp: request answered %s\n", mode == M_UNTAGGED ? "untagged" : "on VLAN 100");
}

/* Frames of another VLAN, untagged on a VLAN, tagged on none: dropped, counted by reason. */
static void check_drops(void)
{
	struct droce_counters before = et_counters(&d), c;

	if (mode == M_UNTAGGED) {
		et_inject(&d, frame, peer_frame(true, 3 << 13 | VID, 0, 0x500, 0x04, 1));
		et_inject(&d, frame, peer_frame(true, 3 << 13 | 0, 0, 0x500, 0x04, 1)); /* prio tag */
		et_inject(&d, frame, peer_frame(false, 0, 0, 0x500, 0x04, 1));
		et_poll(&d, 16);
		c = delta(&before);
		printf("drops: rx_vlan_tagged %" PRIu64 " rx_unknown_qp %" PRIu64 "\n",
		       c.rx_vlan_tagged, c.rx_unknown_qp);
		CHECK_EQ(c.rx_vlan_tagged, 1);
		CHECK_EQ(c.rx_unknown_qp, 2);	/* the priority-tagged and the untagged frame */
		CHECK_EQ(c.rx_vlan_other + c.rx_vlan_untagged, 0);
		return;
	}
	et_inject(&d, frame, peer_frame(false, 0, 0, 0x500, 0x04, 1));		/* untagged */
	et_inject(&d, frame, peer_frame(true, VID + 1, 0, 0x500, 0x04, 1));	/* VLAN 101 */
	et_inject(&d, frame, peer_frame(true, 0, 0, 0x500, 0x04, 1));		/* priority tag */
	et_inject(&d, frame, peer_frame(true, 7 << 13 | VID, 0, 0x500, 0x04, 1));	/* ours */
	memset(frame, 0, 64);
	frame[12] = 0x08;
	frame[13] = 0x06;
	et_inject(&d, frame, 64);					/* untagged ARP */
	et_poll(&d, 16);
	c = delta(&before);
	printf("drops: rx_vlan_untagged %" PRIu64 " rx_vlan_other %" PRIu64 " rx_unknown_qp %"
	       PRIu64 "\n", c.rx_vlan_untagged, c.rx_vlan_other, c.rx_unknown_qp);
	CHECK_EQ(c.rx_vlan_untagged, 2);
	CHECK_EQ(c.rx_vlan_other, 2);	/* VLAN 101 and VLAN 0 (priority tag, no VLAN) */
	CHECK_EQ(c.rx_unknown_qp, 1);	/* VLAN 100 passed on to the next check */
	CHECK_EQ(c.rx_vlan_tagged + c.rx_arp, 0);
	CHECK_EQ(c.rx_packets, 5);
}

int main(int argc, char **argv)
{
	union ibv_gid g;
	int i;

	CHECK(argc > 1);
	if (strcmp(argv[1], "vlan") == 0)
		mode = M_VLAN;
	else if (strcmp(argv[1], "pcp3") == 0)
		mode = M_PCP3;
	else if (strcmp(argv[1], "untagged") == 0)
		mode = M_UNTAGGED;
	else
		CHECK(!"mode: vlan, pcp3 or untagged");
	et_vlan.on = mode != M_UNTAGGED;
	et_vlan.id = VID;
	et_vlan.pcp_fixed = mode == M_PCP3;
	et_vlan.pcp = 3;
	argv[1] = argv[0];
	et_setup(&d, argc - 1, argv + 1);
	for (i = 0; i < 16 && droce_query_gid(d.ctx, 1, i, &g) == 0; i++)
		if (memcmp(g.raw, our_gid, 16) == 0)
			gid_v4 = i;
	CHECK(gid_v4 >= 0);
	pd = droce_alloc_pd(d.ctx);
	cq = droce_create_cq(d.ctx, 256, NULL, NULL, 0);
	CHECK(pd != NULL && cq != NULL);
	mr = droce_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	check_rc();
	check_arp();
	check_drops();
	return test_done(mode == M_VLAN ? "vlan" : mode == M_PCP3 ? "vlan pcp3" : "untagged");
}
