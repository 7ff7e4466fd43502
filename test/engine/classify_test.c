/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Classification and drop counters: frames injected on the DUT's port - not IP, UDP to another
 * port, RoCE v2 with a bad ICRC, for an unknown QP, for an address not in the GID table, IPv4
 * and IPv6 - each land in their counter; truncations of a good frame and random bytes never
 * crash, and every frame is counted exactly once.
 */
#include <rte_ip.h>
#include <rte_random.h>
#include <rte_udp.h>

#include "et.h"

static struct et_dut d;
static uint8_t frame[2048];

static uint32_t roce_frame(const char *dst, bool v6, uint32_t dqpn)
{
	struct droce_flow f = { .hop_limit = 64, .sport = 0xc001 };
	struct droce_hdr_fields h = { .opcode = 0x04 /* RC SEND only */, .pkey = 0xffff,
				      .dqpn = dqpn, .psn = 7 };
	uint8_t payload[16] = { 1, 2, 3 };
	int len;

	f.src_mac = et_peer_mac;
	f.dst_mac = d.mac;
	f.ipv6 = v6;
	if (v6) {
		CHECK(inet_pton(AF_INET6, "fd00::2", f.sgid) == 1);
		CHECK(inet_pton(AF_INET6, dst, f.dgid) == 1);
	} else {
		f.sgid[10] = f.sgid[11] = f.dgid[10] = f.dgid[11] = 0xff;
		CHECK(inet_pton(AF_INET, "10.1.0.2", &f.sgid[12]) == 1);
		CHECK(inet_pton(AF_INET, dst, &f.dgid[12]) == 1);
	}
	len = droce_build(frame, sizeof(frame), &f, &h, payload, sizeof(payload));
	CHECK(len > 0);
	return (uint32_t)len;
}

static struct droce_counters delta(const struct droce_counters *before)
{
	struct droce_counters now = et_counters(&d), r;
	unsigned int i;

	for (i = 0; i < sizeof(r) / 8; i++)
		((uint64_t *)&r)[i] = ((const uint64_t *)&now)[i] - ((const uint64_t *)before)[i];
	return r;
}

/* Every received frame in exactly one class (no QP exists, so none reaches a transport). */
static uint64_t classified(const struct droce_counters *c)
{
	return c->rx_roce + c->rx_not_roce + c->rx_arp + c->rx_nd + c->rx_bad_frame +
	       c->rx_not_our_gid + c->rx_unknown_qp + c->rx_qp_state + c->rx_vlan_other +
	       c->rx_vlan_tagged + c->rx_vlan_untagged;
}

static void test_reasons(void)
{
	struct droce_counters before = et_counters(&d), c;
	struct rte_ipv4_hdr *ip = (void *)(frame + RTE_ETHER_HDR_LEN);
	struct rte_udp_hdr *uh = (void *)(ip + 1);
	uint32_t len;

	memset(frame, 0, 60);
	frame[12] = 0x88;
	frame[13] = 0xb5;
	et_inject(&d, frame, 60);				/* not IP */
	len = roce_frame("10.1.0.1", false, 0x500);
	uh->dst_port = RTE_BE16(53);				/* not RoCE (checksums stay valid) */
	et_inject(&d, frame, len);
	et_inject(&d, frame, roce_frame("10.1.0.1", false, 0x500));	/* unknown QP */
	et_inject(&d, frame, roce_frame("fd00::1", true, 0x501));	/* unknown QP, IPv6 */
	len = roce_frame("10.1.0.1", false, 0x500);
	frame[len - 1] ^= 0x55;					/* bad ICRC */
	et_inject(&d, frame, len);
	et_inject(&d, frame, roce_frame("10.1.0.50", false, 0x500));	/* not our GID */
	et_inject(&d, frame, roce_frame("fd00::99", true, 0x500));	/* not our GID, IPv6 */
	et_poll(&d, 3);
	c = delta(&before);
	CHECK_EQ(c.rx_packets, 7);
	CHECK_EQ(c.rx_not_roce, 2);
	CHECK_EQ(c.rx_unknown_qp, 2);
	CHECK_EQ(c.rx_bad_frame, 1);
	CHECK_EQ(c.parse_err[DROCE_PARSE_BAD_ICRC], 1);
	CHECK_EQ(c.rx_not_our_gid, 2);
	CHECK_EQ(classified(&c), 7);
}

/* Every prefix of a good frame, then random frames: counted once each, no crash. */
static void test_truncated_and_random(void)
{
	struct droce_counters before = et_counters(&d), c;
	uint32_t len = roce_frame("10.1.0.1", false, 0x500), i, j, n = 0;

	for (i = 1; i <= len; i++, n++) {
		roce_frame("10.1.0.1", false, 0x500);
		et_inject(&d, frame, i);
		if (n % 64 == 63)
			et_poll(&d, 2);
	}
	for (i = 0; i < 2000; i++, n++) {
		uint32_t l = 1 + (uint32_t)rte_rand_max(200);

		len = roce_frame(i & 1 ? "fd00::1" : "10.1.0.1", i & 1, 0x500);
		for (j = 0; j < l / 8 + 1; j++)	/* mutate a few bytes of a good frame */
			frame[rte_rand_max(RTE_MIN(l, len))] = (uint8_t)rte_rand();
		et_inject(&d, frame, RTE_MIN(l + 14, len));
		if (n % 64 == 63)
			et_poll(&d, 2);
	}
	et_poll(&d, 4);
	c = delta(&before);
	CHECK_EQ(c.rx_packets, n);
	CHECK_EQ(classified(&c), n);
	CHECK(c.rx_bad_frame > 0);
	CHECK_EQ(c.rx_unknown_qp > 0, 1);	/* the whole good frame */
}

/* A frame for an existing QP reaches its transport (none linked: rx_qp_state). */
static void test_known_qp(void)
{
	struct droce_counters before = et_counters(&d), c;
	struct droce_pd *pd = droce_alloc_pd(d.ctx);
	struct droce_cq *cq = droce_create_cq(d.ctx, 16, NULL, NULL, 0);
	struct droce_qp_init_attr a = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct droce_qp *qp;

	CHECK(pd != NULL && cq != NULL);
	a.send_cq = cq;
	a.recv_cq = cq;
	qp = droce_create_qp(pd, &a);
	CHECK(qp != NULL);
	et_inject(&d, frame, roce_frame("10.1.0.1", false, qp->qp_num));
	et_poll(&d, 3);
	c = delta(&before);
	CHECK_EQ(c.rx_unknown_qp, 0);
	CHECK_EQ(c.rx_roce, 1);	/* handed over (the transport drops it in RESET) */
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
}

int main(int argc, char **argv)
{
	et_setup(&d, argc, argv);
	test_reasons();
	test_truncated_and_random();
	test_known_qp();
	CHECK_EQ(droce_counters_reset(d.ctx), 0);
	CHECK_EQ(et_counters(&d).rx_packets, 0);
	CHECK_EQ(droce_close_device(d.ctx), 0);
	printf("classify: ok\n");
	return 0;
}
