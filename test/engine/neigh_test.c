/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * ARP and IPv6 neighbour discovery through the inline engine: who-has for the device's IPv4
 * is answered; a solicitation for its IPv6 address gets an advertisement with a correct
 * ICMPv6 checksum; resolve() learns from requests, sends requests and learns from replies,
 * retries and gives up (counted), and uses static entries without asking.
 */
#include <rte_arp.h>
#include <rte_ip.h>

#include "et.h"
#include "qp_attr.h"

static struct et_dut d;
static uint8_t frame[2048];

static void gid_v4(uint8_t g[16], const char *ip)
{
	memset(g, 0, 16);
	g[10] = 0xff;
	g[11] = 0xff;
	CHECK(inet_pton(AF_INET, ip, &g[12]) == 1);
}

static int resolve(const char *ip, bool v6, struct rte_ether_addr *mac)
{
	struct engine_inst *lc = et_lcore(&d);
	struct droce_flow f;
	int rc;

	memset(&f, 0, sizeof(f));
	if (v6)
		CHECK(inet_pton(AF_INET6, ip, f.dgid) == 1);
	else
		gid_v4(f.dgid, ip);
	lc->env.now = rte_rdtsc();
	rc = lc->env.resolve(&lc->env, d.ctx->device, &f);
	if (rc == 0) {
		CHECK(rte_is_same_ether_addr(&f.src_mac, &d.mac));
		*mac = f.dst_mac;
	}
	et_poll(&d, 1);	/* flush what resolve() queued */
	return rc;
}

static uint32_t arp_frame(uint16_t op, const struct rte_ether_addr *sha, const char *sip,
			  const struct rte_ether_addr *tha, const char *tip)
{
	struct rte_ether_hdr *eh = (void *)frame;
	struct rte_arp_hdr *ah = (void *)(eh + 1);

	memset(frame, 0, 60);
	memset(&eh->dst_addr, 0xff, 6);
	eh->src_addr = *sha;
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
	ah->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	ah->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	ah->arp_hlen = 6;
	ah->arp_plen = 4;
	ah->arp_opcode = rte_cpu_to_be_16(op);
	ah->arp_data.arp_sha = *sha;
	CHECK(inet_pton(AF_INET, sip, &ah->arp_data.arp_sip) == 1);
	ah->arp_data.arp_tha = *tha;
	CHECK(inet_pton(AF_INET, tip, &ah->arp_data.arp_tip) == 1);
	return 60;
}

static void test_arp_reply(void)
{
	struct rte_ether_addr zero = { { 0 } }, mac;
	const struct rte_ether_hdr *eh = (void *)frame;
	const struct rte_arp_hdr *ah = (void *)(eh + 1);
	struct droce_counters c;
	uint32_t ip;

	et_inject(&d, frame, arp_frame(RTE_ARP_OP_REQUEST, &et_peer_mac, "10.1.0.2", &zero,
					"10.1.0.1"));
	et_poll(&d, 2);
	CHECK(et_take(&d, frame, sizeof(frame)) >= 42);
	CHECK(rte_is_same_ether_addr(&eh->dst_addr, &et_peer_mac));
	CHECK(rte_is_same_ether_addr(&eh->src_addr, &d.mac));
	CHECK_EQ(rte_be_to_cpu_16(eh->ether_type), RTE_ETHER_TYPE_ARP);
	CHECK_EQ(rte_be_to_cpu_16(ah->arp_opcode), RTE_ARP_OP_REPLY);
	CHECK(rte_is_same_ether_addr(&ah->arp_data.arp_sha, &d.mac));
	CHECK(rte_is_same_ether_addr(&ah->arp_data.arp_tha, &et_peer_mac));
	inet_pton(AF_INET, "10.1.0.1", &ip);
	CHECK_EQ(ah->arp_data.arp_sip, ip);
	inet_pton(AF_INET, "10.1.0.2", &ip);
	CHECK_EQ(ah->arp_data.arp_tip, ip);
	CHECK_EQ(et_take(&d, frame, sizeof(frame)), 0);
	/* Not for us: no answer. */
	et_inject(&d, frame, arp_frame(RTE_ARP_OP_REQUEST, &et_peer_mac, "10.1.0.2", &zero,
					"10.1.0.77"));
	et_poll(&d, 2);
	CHECK_EQ(et_take(&d, frame, sizeof(frame)), 0);
	c = et_counters(&d);
	CHECK_EQ(c.rx_arp, 2);
	CHECK_EQ(c.neigh_reply_sent, 1);
	/* The requester was learned from its request. */
	CHECK_EQ(resolve("10.1.0.2", false, &mac), 0);
	CHECK(rte_is_same_ether_addr(&mac, &et_peer_mac));
}

static void test_arp_resolve(void)
{
	static const struct rte_ether_addr q = { { 2, 0, 0, 0, 0, 0x33 } };
	const struct rte_ether_hdr *eh = (void *)frame;
	const struct rte_arp_hdr *ah = (void *)(eh + 1);
	struct rte_ether_addr mac;
	uint32_t ip;

	CHECK_EQ(resolve("10.1.0.3", false, &mac), -EAGAIN);
	CHECK(et_take(&d, frame, sizeof(frame)) >= 42);
	CHECK(rte_is_broadcast_ether_addr(&eh->dst_addr));
	CHECK_EQ(rte_be_to_cpu_16(ah->arp_opcode), RTE_ARP_OP_REQUEST);
	inet_pton(AF_INET, "10.1.0.3", &ip);
	CHECK_EQ(ah->arp_data.arp_tip, ip);
	CHECK_EQ(resolve("10.1.0.3", false, &mac), -EAGAIN);	/* still pending */
	CHECK_EQ(et_take(&d, frame, sizeof(frame)), 0);		/* no second request yet */
	et_inject(&d, frame, arp_frame(RTE_ARP_OP_REPLY, &q, "10.1.0.3", &d.mac, "10.1.0.1"));
	et_poll(&d, 2);
	CHECK_EQ(resolve("10.1.0.3", false, &mac), 0);
	CHECK(rte_is_same_ether_addr(&mac, &q));
	/* RFC 826: a frame whose target is not us only updates entries we already have. */
	et_inject(&d, frame, arp_frame(RTE_ARP_OP_REPLY, &q, "10.1.0.5", &d.mac, "10.1.0.77"));
	et_poll(&d, 2);
	CHECK_EQ(resolve("10.1.0.5", false, &mac), -EAGAIN);
	CHECK(et_take(&d, frame, sizeof(frame)) > 0);
}

static void test_timeout_and_static(void)
{
	const struct rte_arp_hdr *ah = (const void *)(frame + RTE_ETHER_HDR_LEN);
	struct droce_counters before = et_counters(&d), after;
	struct rte_ether_addr mac;
	uint64_t end;
	int requests = 0;
	uint32_t ip;

	inet_pton(AF_INET, "10.1.0.4", &ip);

	CHECK_EQ(resolve("10.1.0.4", false, &mac), -EAGAIN);
	/* neigh_retry_ms = 50, neigh_retries = 3 (inline.ini): 3 requests, then failed, 150 ms
	 * on. Polled until both resolutions have failed (a loaded machine may not run this
	 * process for a while: 10 s at most), then 200 ms more, in which no request may come. */
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * 10;
	do {
		et_poll(&d, 1);
		while (et_take(&d, frame, sizeof(frame)) > 0)
			requests += ah->arp_data.arp_tip == ip;
		after = et_counters(&d);
	} while (after.neigh_failed - before.neigh_failed < 2 && rte_get_tsc_cycles() < end);
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 5;
	while (rte_get_tsc_cycles() < end) {
		et_poll(&d, 1);
		while (et_take(&d, frame, sizeof(frame)) > 0)
			requests += ah->arp_data.arp_tip == ip;
	}
	after = et_counters(&d);
	CHECK_EQ(requests, 3);
	CHECK_EQ(after.neigh_failed - before.neigh_failed, 2);	/* and 10.1.0.5 */
	CHECK_EQ(resolve("10.1.0.4", false, &mac), -EAGAIN);
	/* Static entry: answered at once, nothing sent. */
	CHECK_EQ(resolve("10.1.0.9", false, &mac), 0);
	CHECK_EQ(mac.addr_bytes[5], 9);
}

/* ---- IPv6 ---- */

struct nd {
	uint8_t type, code;
	rte_be16_t cksum;
	uint8_t flags, rsv[3];
	uint8_t target[16];
	uint8_t opt_type, opt_len;
	uint8_t opt_mac[6];
} __rte_packed;

/* The ICMPv6 checksum computed here without DPDK: RFC 4443 2.3 over the pseudo-header. */
static uint16_t icmp6_sum(const struct rte_ipv6_hdr *ip, const void *l4, uint32_t len)
{
	const uint8_t *p;
	uint32_t sum = 0, i;

	for (i = 0; i < 16; i += 2)
		sum += (ip->src_addr[i] << 8 | ip->src_addr[i + 1]) +
		       (ip->dst_addr[i] << 8 | ip->dst_addr[i + 1]);
	sum += len + IPPROTO_ICMPV6;
	p = l4;
	for (i = 0; i + 1 < len; i += 2)
		sum += p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;	/* 0xffff when the carried checksum is right */
}

static uint32_t nd_frame(uint8_t type, const char *src, const char *dst, const char *target,
			 uint8_t hop)
{
	struct rte_ether_hdr *eh = (void *)frame;
	struct rte_ipv6_hdr *ip = (void *)(eh + 1);
	struct nd *nd = (void *)(ip + 1);
	uint16_t sum;

	memset(frame, 0, 128);
	eh->dst_addr = d.mac;
	eh->src_addr = et_peer_mac;
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV6);
	ip->vtc_flow = RTE_BE32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16(sizeof(*nd));
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = hop;
	CHECK(inet_pton(AF_INET6, src, ip->src_addr) == 1);
	CHECK(inet_pton(AF_INET6, dst, ip->dst_addr) == 1);
	nd->type = type;
	if (type == 136)
		nd->flags = 0x60;
	CHECK(inet_pton(AF_INET6, target, nd->target) == 1);
	nd->opt_type = type == 135 ? 1 : 2;
	nd->opt_len = 1;
	memcpy(nd->opt_mac, et_peer_mac.addr_bytes, 6);
	sum = icmp6_sum(ip, nd, sizeof(*nd));
	nd->cksum = rte_cpu_to_be_16((uint16_t)~sum);
	return sizeof(*eh) + sizeof(*ip) + sizeof(*nd);
}

static void test_nd(void)
{
	const struct rte_ether_hdr *eh = (void *)frame;
	const struct rte_ipv6_hdr *ip = (void *)(eh + 1);
	const struct nd *nd = (const void *)(ip + 1);
	struct droce_counters before = et_counters(&d), after;
	struct rte_ether_addr mac;
	uint8_t a[16];

	while (et_take(&d, frame, sizeof(frame)) > 0)
		;	/* the new request for 10.1.0.4 (its failure hold-down ended) */
	/* Solicitation for fd00::1 -> solicited advertisement. */
	et_inject(&d, frame, nd_frame(135, "fd00::2", "ff02::1:ff00:1", "fd00::1", 255));
	et_poll(&d, 2);
	CHECK(et_take(&d, frame, sizeof(frame)) >= 14 + 40 + 32);
	CHECK(rte_is_same_ether_addr(&eh->dst_addr, &et_peer_mac));
	CHECK_EQ(rte_be_to_cpu_16(eh->ether_type), RTE_ETHER_TYPE_IPV6);
	CHECK_EQ(ip->proto, IPPROTO_ICMPV6);
	CHECK_EQ(ip->hop_limits, 255);
	CHECK_EQ(rte_be_to_cpu_16(ip->payload_len), 32);
	inet_pton(AF_INET6, "fd00::2", a);
	CHECK(memcmp(ip->dst_addr, a, 16) == 0);
	inet_pton(AF_INET6, "fd00::1", a);
	CHECK(memcmp(ip->src_addr, a, 16) == 0);
	CHECK(memcmp(nd->target, a, 16) == 0);
	CHECK_EQ(nd->type, 136);
	CHECK_EQ(nd->flags, 0x60);	/* solicited, override */
	CHECK_EQ(nd->opt_type, 2);
	CHECK(memcmp(nd->opt_mac, d.mac.addr_bytes, 6) == 0);
	CHECK_EQ(icmp6_sum(ip, nd, 32), 0xffff);
	/* The solicitor was learned. */
	CHECK_EQ(resolve("fd00::2", true, &mac), 0);
	CHECK(rte_is_same_ether_addr(&mac, &et_peer_mac));
	/* Resolving fd00::3: a solicitation to its solicited-node group. */
	CHECK_EQ(resolve("fd00::3", true, &mac), -EAGAIN);
	CHECK(et_take(&d, frame, sizeof(frame)) >= 14 + 40 + 32);
	CHECK_EQ(eh->dst_addr.addr_bytes[0], 0x33);
	CHECK_EQ(eh->dst_addr.addr_bytes[2], 0xff);
	CHECK_EQ(eh->dst_addr.addr_bytes[5], 3);
	inet_pton(AF_INET6, "ff02::1:ff00:3", a);
	CHECK(memcmp(ip->dst_addr, a, 16) == 0);
	CHECK_EQ(nd->type, 135);
	CHECK_EQ(nd->opt_type, 1);
	CHECK_EQ(icmp6_sum(ip, nd, 32), 0xffff);
	et_inject(&d, frame, nd_frame(136, "fd00::3", "fd00::1", "fd00::3", 255));
	et_poll(&d, 2);
	CHECK_EQ(resolve("fd00::3", true, &mac), 0);
	CHECK(rte_is_same_ether_addr(&mac, &et_peer_mac));
	/* Hop limit below 255 and a bad checksum: ignored, counted. */
	et_inject(&d, frame, nd_frame(135, "fd00::2", "ff02::1:ff00:1", "fd00::1", 64));
	nd_frame(135, "fd00::2", "ff02::1:ff00:1", "fd00::1", 255);
	frame[14 + 40 + 2] ^= 1;
	et_inject(&d, frame, 14 + 40 + 32);
	et_poll(&d, 2);
	CHECK_EQ(et_take(&d, frame, sizeof(frame)), 0);
	after = et_counters(&d);
	CHECK_EQ(after.neigh_bad - before.neigh_bad, 2);
	CHECK_EQ(after.rx_nd - before.rx_nd, 4);
}

/*
 * A QP whose peer's MAC is being resolved waits for it without asking at every pass
 * (transport_path_park()); the ARP reply wakes it in the same iteration (the table's change,
 * engine_neigh_gen()), and its SEND leaves then, once.
 */
static void test_qp_waits_for_path(void)
{
	static const struct rte_ether_addr peer = { { 2, 0, 0, 0, 0, 0x21 } };
	const struct rte_ether_hdr *eh = (void *)frame;
	struct droce_pd *pd = droce_alloc_pd(d.ctx);
	struct droce_cq *cq = droce_create_cq(d.ctx, 8, NULL, NULL, 0);
	struct droce_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 16 } };
	static const enum ibv_qp_attr_mask mask[] = {
		IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
		IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
		IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC };
	uint32_t msg = 0x5157, len;
	struct ibv_sge sge = { .addr = (uintptr_t)&msg, .length = sizeof(msg) };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE }, *bad;
	struct droce_counters before = et_counters(&d), after;
	struct ibv_qp_attr a;
	struct droce_qp *qp;
	struct droce_pkt pkt;
	int st;

	CHECK(pd != NULL && cq != NULL);
	ia.send_cq = ia.recv_cq = cq;
	qp = droce_create_qp(pd, &ia);
	CHECK(qp != NULL);
	test_qp_attr_fill(&a);
	a.ah_attr.grh.sgid_index = (uint8_t)et_gid_index_v4(&d);
	gid_v4(a.ah_attr.grh.dgid.raw, "10.1.0.21");
	for (st = IBV_QPS_INIT; st <= IBV_QPS_RTS; st++) {
		a.qp_state = (enum ibv_qp_state)st;
		CHECK_EQ(droce_modify_qp(qp, &a, (int)mask[st - IBV_QPS_INIT]), 0);
	}
	CHECK_EQ(droce_post_send(qp, &wr, &bad), 0);
	et_poll(&d, 3);
	/* One ARP request, nothing else: the SEND waits for the MAC. */
	CHECK(et_take(&d, frame, sizeof(frame)) >= 42);
	CHECK_EQ(rte_be_to_cpu_16(eh->ether_type), RTE_ETHER_TYPE_ARP);
	CHECK_EQ(et_take(&d, frame, sizeof(frame)), 0);
	et_inject(&d, frame, arp_frame(RTE_ARP_OP_REPLY, &peer, "10.1.0.21", &d.mac, "10.1.0.1"));
	et_poll(&d, 1);
	len = et_take(&d, frame, sizeof(frame));
	CHECK(len > 0);
	CHECK_EQ(droce_parse(frame, len, 0, &pkt), DROCE_PARSE_OK);
	CHECK_EQ(pkt.opcode, DROCE_OP_RC_SEND_ONLY);
	CHECK(rte_is_same_ether_addr(&eh->dst_addr, &peer));
	CHECK_EQ(droce_bth_qpn(droce_pkt_bth(&pkt)), a.dest_qp_num);
	CHECK_EQ(et_take(&d, frame, sizeof(frame)), 0);
	after = et_counters(&d);
	CHECK_EQ(after.neigh_resolved - before.neigh_resolved, 1);
	CHECK_EQ(after.tx_packets - before.tx_packets, 2);	/* the request and the SEND */
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
}

int main(int argc, char **argv)
{
	et_setup(&d, argc, argv);
	CHECK(droce_engine_is_inline());
	test_arp_reply();
	test_arp_resolve();
	test_timeout_and_static();
	test_nd();
	test_qp_waits_for_path();
	CHECK_EQ(droce_close_device(d.ctx), 0);
	printf("neigh: ok\n");
	return 0;
}
