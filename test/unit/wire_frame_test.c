/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Proves the builder and the parser on plain buffers:
 * - every opcode, IPv4 and IPv6, every payload size and pad: build, then parse, gives back every
 *   field that was written;
 * - each rejection reason comes from the frame that deserves it, and only from it;
 * - every truncation of a valid frame is rejected, and random, truncated and mutated frames
 *   never make the parser read outside the frame (buffers are exact-size heap blocks, so ASan
 *   sees any overread) and never yield an inconsistent view;
 * - the UDP source ports: in 0xC000-0xFFFF, the low byte the destination's QP slot (0 for a
 *   datagram), so that sport & (N - 1) is the receiving shard of N, the rest spread over QP
 *   pairs.
 */

#include <stdlib.h>

#include <rte_ip.h>

#include "check.h"
#include "droce_config.h"
#include "wire_test_frames.h"

static uint8_t frame[FRAME_MAX];
static uint8_t payload[FRAME_MAX];

static void check_ext_fields(const struct droce_pkt *p, const struct droce_hdr_fields *h,
			     const char *what)
{
	const struct droce_reth *r = droce_pkt_ext(p, DROCE_HDR_RETH);
	const struct droce_aeth *a = droce_pkt_ext(p, DROCE_HDR_AETH);
	const struct droce_atmeth *at = droce_pkt_ext(p, DROCE_HDR_ATMETH);
	const struct droce_atmack *ack = droce_pkt_ext(p, DROCE_HDR_ATMACK);
	const struct droce_immdt *imm = droce_pkt_ext(p, DROCE_HDR_IMMDT);
	const struct droce_ieth *ie = droce_pkt_ext(p, DROCE_HDR_IETH);
	const struct droce_deth *d = droce_pkt_ext(p, DROCE_HDR_DETH);
	const struct droce_feth *fe = droce_pkt_ext(p, DROCE_HDR_FETH);

	if (r != NULL)
		EXPECT(rte_be_to_cpu_64(r->va) == h->reth.va && rte_be_to_cpu_32(r->rkey) == h->reth.rkey &&
		      rte_be_to_cpu_32(r->len) == h->reth.len, "%s RETH", what);
	if (a != NULL)
		EXPECT(droce_aeth_syndrome(a) == h->aeth.syndrome && droce_aeth_msn(a) == h->aeth.msn,
		      "%s AETH", what);
	if (at != NULL)
		EXPECT(rte_be_to_cpu_64(at->va) == h->atomic.va &&
		      rte_be_to_cpu_32(at->rkey) == h->atomic.rkey &&
		      rte_be_to_cpu_64(at->swap_add) == h->atomic.swap_add &&
		      rte_be_to_cpu_64(at->cmp) == h->atomic.cmp, "%s AtomicETH", what);
	if (ack != NULL)
		EXPECT(rte_be_to_cpu_64(ack->orig) == h->atomic_orig, "%s AtomicAckETH", what);
	if (imm != NULL)
		EXPECT(imm->imm == h->imm, "%s ImmDt", what);
	if (ie != NULL)
		EXPECT(rte_be_to_cpu_32(ie->rkey) == h->ieth_rkey, "%s IETH", what);
	if (d != NULL)
		EXPECT(rte_be_to_cpu_32(d->qkey) == h->deth.qkey && droce_deth_sqpn(d) == h->deth.sqpn,
		      "%s DETH", what);
	if (fe != NULL)
		EXPECT(droce_feth_sel(fe) == h->feth.sel && droce_feth_plt(fe) == h->feth.plt,
		      "%s FETH", what);
}

static void check_roundtrip(const struct droce_flow *f, uint8_t op, uint32_t len, uint32_t seed)
{
	struct droce_hdr_fields h;
	struct droce_pkt p;
	const struct droce_bth *b;
	char what[96];
	int n;

	snprintf(what, sizeof(what), "%s ipv%d len %u", droce_opcode_name(op), f->ipv6 ? 6 : 4, len);
	test_fields(&h, op, seed);
	test_payload(payload, len, seed);
	n = droce_build(frame, sizeof(frame), f, &h, payload, len);
	EXPECT(n > 0, "%s: build returned %d", what, n);
	if (n <= 0)
		return;
	EXPECT_EQ((uint32_t)n, droce_flow_l2l4_len(f) + droce_opcode_info(op)->length + len +
		 droce_pad_len(len) + DROCE_ICRC_LEN, "%s frame length %d", what, n);
	EXPECT_EQ(droce_parse(frame, n, 0, &p), DROCE_PARSE_OK, "%s parse", what);
	b = droce_pkt_bth(&p);
	EXPECT(p.opcode == op && droce_bth_qpn(b) == h.dqpn && droce_bth_psn(b) == h.psn &&
	      droce_bth_se(b) == h.se && droce_bth_ackreq(b) == h.ackreq &&
	      droce_bth_pkey(b) == h.pkey && droce_bth_tver(b) == 0, "%s BTH", what);
	EXPECT(droce_bth_fecn(b) == h.fecn && droce_bth_becn(b) == (h.becn || op == DROCE_OP_CNP),
	      "%s FECN/BECN", what);
	EXPECT(p.payload_len == len && p.pad == droce_pad_len(len) && p.frame_len == (uint32_t)n &&
	      memcmp(frame + p.payload_off, payload, len) == 0, "%s payload", what);
	EXPECT(p.ipv6 == f->ipv6 && p.sport == f->sport && memcmp(p.sgid, f->sgid, 16) == 0 &&
	      memcmp(p.dgid, f->dgid, 16) == 0 && p.tclass == f->tclass &&
	      p.flow_label == f->flow_label && p.hop_limit == 64, "%s addressing", what);
	check_ext_fields(&p, &h, what);
	/* Ethernet padding after the frame is ignored. */
	memset(frame + n, 0xee, 16);
	EXPECT_EQ(droce_parse(frame, n + 16, 0, &p), DROCE_PARSE_OK, "%s with trailer", what);
	EXPECT_EQ(p.frame_len, (uint32_t)n, "%s frame_len with trailer", what);
}

static void test_roundtrips(void)
{
	struct droce_flow f;
	uint32_t seed = 0;

	for (int v6 = 0; v6 <= 1; v6++) {
		test_flow(&f, v6);
		for (unsigned int op = 0; op < 256; op++) {
			if (!droce_opcode_known(op))
				continue;
			if (!(droce_opcode_info(op)->mask & DROCE_M_PAYLOAD)) {
				check_roundtrip(&f, op, 0, seed++);
				continue;
			}
			for (size_t i = 0; i < RTE_DIM(payload_sizes); i++)
				check_roundtrip(&f, op, payload_sizes[i], seed++);
		}
	}
}

static void test_build_errors(void)
{
	struct droce_hdr_fields h;
	struct droce_flow f;

	test_flow(&f, 0);
	test_fields(&h, 0x15, 1);       /* reserved opcode */
	EXPECT_EQ(droce_build(frame, sizeof(frame), &f, &h, payload, 0), -EINVAL, "unknown opcode");
	test_fields(&h, DROCE_OP_RC_ACKNOWLEDGE, 1);
	EXPECT_EQ(droce_build(frame, sizeof(frame), &f, &h, payload, 4), -EINVAL, "ACK with payload");
	EXPECT_EQ(droce_build(frame, 40, &f, &h, payload, 0), -ENOSPC, "room for headers");
	test_fields(&h, DROCE_OP_RC_SEND_ONLY, 1);
	EXPECT_EQ(droce_build(frame, 100, &f, &h, payload, 100), -ENOSPC, "room for payload");
	EXPECT_EQ(droce_build_hdrs(frame, sizeof(frame), &f, &h, 70000), -EINVAL, "over 64 KiB");
}

/* Build a SEND_ONLY (or @op) frame with @len bytes of payload; returns its length. */
static int base_frame(uint8_t op, uint32_t len, int v6)
{
	struct droce_hdr_fields h;
	struct droce_flow f;

	test_flow(&f, v6);
	test_fields(&h, op, 3);
	return droce_build(frame, sizeof(frame), &f, &h, payload, len);
}

static struct rte_ipv4_hdr *ip4(void)
{
	return (struct rte_ipv4_hdr *)(frame + RTE_ETHER_HDR_LEN);
}

static void fix_ip_csum(void)
{
	ip4()->hdr_checksum = 0;
	ip4()->hdr_checksum = rte_ipv4_cksum(ip4());
}

/* Recompute the ICRC after a deliberate change, so that only the change is judged. */
static void fix_icrc(int n)
{
	droce_put_le32(frame + n - 4, droce_icrc(frame + RTE_ETHER_HDR_LEN, n - RTE_ETHER_HDR_LEN - 4));
}

#define EXPECT_PARSE(len, reason, what) do { \
	struct droce_pkt p_; \
	enum droce_parse_err e_ = droce_parse(frame, (len), 0, &p_); \
	EXPECT_EQ(e_, reason, "%s: got %s", what, droce_parse_err_name(e_)); \
} while (0)

static void test_reasons(void)
{
	const uint32_t l4 = RTE_ETHER_HDR_LEN + 20, bth = l4 + 8;
	int n;

	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	EXPECT_PARSE(n, DROCE_PARSE_OK, "base");
	EXPECT_PARSE(10, DROCE_PARSE_TRUNCATED, "10 bytes");
	EXPECT_PARSE(RTE_ETHER_HDR_LEN + 10, DROCE_PARSE_TRUNCATED, "half an IP header");
	frame[12] = 0x08, frame[13] = 0x06;
	EXPECT_PARSE(n, DROCE_PARSE_NOT_IP, "ARP ethertype");

	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	ip4()->version_ihl = 0x55;
	EXPECT_PARSE(n, DROCE_PARSE_BAD_IP_VERSION, "version 5");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 1);
	frame[12] = 0x08, frame[13] = 0x00;     /* IPv6 header under the IPv4 ethertype */
	EXPECT_PARSE(n, DROCE_PARSE_BAD_IP_VERSION, "IPv6 header, IPv4 ethertype");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	ip4()->version_ihl = 0x44;
	EXPECT_PARSE(n, DROCE_PARSE_BAD_IHL, "IHL 4");

	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	ip4()->total_length = rte_cpu_to_be_16(n);      /* longer than the frame */
	fix_ip_csum();
	EXPECT_PARSE(n, DROCE_PARSE_BAD_IP_LEN, "IP length past the frame");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	ip4()->time_to_live = 3;                        /* checksum left stale */
	EXPECT_PARSE(n, DROCE_PARSE_BAD_IP_CSUM, "stale checksum");
	ip4()->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG);
	fix_ip_csum();
	EXPECT_PARSE(n, DROCE_PARSE_IP_FRAGMENT, "more fragments");
	ip4()->fragment_offset = rte_cpu_to_be_16(10);
	fix_ip_csum();
	EXPECT_PARSE(n, DROCE_PARSE_IP_FRAGMENT, "fragment offset");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	ip4()->next_proto_id = IPPROTO_TCP;
	fix_ip_csum();
	EXPECT_PARSE(n, DROCE_PARSE_NOT_UDP, "TCP");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 1);
	frame[RTE_ETHER_HDR_LEN + 6] = IPPROTO_FRAGMENT;
	EXPECT_PARSE(n, DROCE_PARSE_IP_FRAGMENT, "IPv6 fragment header");
	frame[RTE_ETHER_HDR_LEN + 6] = IPPROTO_HOPOPTS;
	EXPECT_PARSE(n, DROCE_PARSE_NOT_UDP, "IPv6 hop-by-hop header");

	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	frame[l4 + 3] = 0xb8;                            /* dst port 4792 */
	EXPECT_PARSE(n, DROCE_PARSE_NOT_ROCE_PORT, "port 4792");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	frame[l4 + 5] += 4;
	EXPECT_PARSE(n, DROCE_PARSE_BAD_UDP_LEN, "UDP length");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	frame[bth + 1] |= 1;
	fix_icrc(n);
	EXPECT_PARSE(n, DROCE_PARSE_BAD_TVER, "TVer 1");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	frame[bth] = 0x15;
	fix_icrc(n);
	EXPECT_PARSE(n, DROCE_PARSE_UNKNOWN_OPCODE, "opcode 0x15");
	frame[bth] = 0x40;                               /* RD */
	fix_icrc(n);
	EXPECT_PARSE(n, DROCE_PARSE_UNKNOWN_OPCODE, "RD opcode");

	n = base_frame(DROCE_OP_RC_ACKNOWLEDGE, 0, 0);
	frame[bth] = DROCE_OP_RC_RDMA_READ_REQUEST;      /* needs 28 bytes of headers, has 16 */
	fix_icrc(n);
	EXPECT_PARSE(n, DROCE_PARSE_BAD_HDR_LEN, "READ request in an ACK's size");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	frame[bth] = DROCE_OP_RC_ACKNOWLEDGE;            /* 16 bytes of headers, 4 left over */
	fix_icrc(n);
	EXPECT_PARSE(n, DROCE_PARSE_UNEXPECTED_PAYLOAD, "ACK with 4 extra bytes");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 0, 0);
	frame[bth + 1] |= 3 << DROCE_BTH_PAD_SHIFT;     /* pad 3, nothing to pad */
	fix_icrc(n);
	EXPECT_PARSE(n, DROCE_PARSE_BAD_PAD, "pad without payload");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	frame[bth + 12] ^= 1;
	EXPECT_PARSE(n, DROCE_PARSE_BAD_ICRC, "payload bit flipped");
	n = base_frame(DROCE_OP_RC_SEND_ONLY, 8, 0);
	frame[n - 1] ^= 0x80;
	EXPECT_PARSE(n, DROCE_PARSE_BAD_ICRC, "ICRC bit flipped");
	{
		struct droce_pkt p;

		EXPECT_EQ(droce_parse(frame, n, DROCE_PARSE_NO_ICRC, &p), DROCE_PARSE_OK,
			 "NO_ICRC skips the check");
	}

	/* Names and descriptions exist for every reason. */
	for (int e = 0; e <= DROCE_PARSE_ERR_NUM; e++)
		EXPECT(droce_parse_err_name(e) != NULL && droce_parse_err_str(e) != NULL, "name %d", e);
	EXPECT(strcmp(droce_parse_err_name(DROCE_PARSE_ERR_NUM), "INVALID") == 0, "out of range");
}

/* Parse @len bytes copied from @src into an exact-size heap block; check the view is sane. */
static enum droce_parse_err parse_exact(const uint8_t *src, uint32_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	struct droce_pkt p;
	enum droce_parse_err e;

	memcpy(buf, src, len);
	e = droce_parse(buf, len, 0, &p);
	if (e == DROCE_PARSE_OK)
		EXPECT(p.frame_len <= len && p.payload_off + p.payload_len + p.pad + DROCE_ICRC_LEN ==
		      p.frame_len && p.payload_off >= p.bth_off + (uint32_t)DROCE_BTH_LEN,
		      "inconsistent view of an accepted frame");
	free(buf);
	return e;
}

static void test_truncation_and_mutation(void)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	uint8_t mut[FRAME_MAX];
	unsigned int accepted = 0;

	for (int v6 = 0; v6 <= 1; v6++) {
		int n = base_frame(DROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 33, v6);

		for (int len = 0; len < n; len++)
			EXPECT(parse_exact(frame, len) != DROCE_PARSE_OK, "truncated to %d accepted", len);
	}
	for (unsigned int i = 0; i < 300000; i++) {
		static const uint8_t ops[] = { DROCE_OP_RC_SEND_FIRST, DROCE_OP_RC_COMPARE_SWAP,
			DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, DROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE,
			DROCE_OP_RC_ATOMIC_ACKNOWLEDGE, DROCE_OP_CNP };
		int n, len, flips;
		uint8_t op;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		op = ops[(rng >> 33) % RTE_DIM(ops)];
		n = base_frame(op, (droce_opcode_info(op)->mask & DROCE_M_PAYLOAD) ?
			       (rng >> 40) % 300 : 0, (rng >> 50) & 1);
		memcpy(mut, frame, n);
		flips = (rng >> 20) % 4;
		for (int k = 0; k < flips; k++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			mut[(rng >> 33) % n] = (uint8_t)(rng >> 12);
		}
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		len = (rng >> 60) < 4 ? (int)((rng >> 33) % (n + 64)) : n;   /* cut or extend */
		if (len > n)
			memset(mut + n, (uint8_t)rng, len - n);
		if (parse_exact(mut, len) == DROCE_PARSE_OK)
			accepted++;
	}
	/* Pure noise, with the ethertype sometimes right. */
	for (unsigned int i = 0; i < 50000; i++) {
		int len;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		len = (rng >> 33) % 200;
		for (int k = 0; k < len; k++)
			mut[k] = (uint8_t)((rng >> (k % 56)) ^ (k * 131));
		if (len > 13 && (rng & 1))
			mut[12] = 0x08, mut[13] = 0x00;
		parse_exact(mut, len);
	}
	EXPECT(accepted > 0, "no mutated frame was ever accepted: the mutation test is broken");
	printf("mutation: %u of 300000 mutated frames still valid (no or masked changes)\n", accepted);
}

static void test_sport(void)
{
	uint8_t seen[64] = { 0 };
	unsigned int i, n, spread = 0;

	for (i = 0; i < 100000; i++) {
		uint32_t src = (uint32_t)rand() & DROCE_QPN_MASK, dst = (uint32_t)rand() & DROCE_QPN_MASK;
		uint16_t rc, ud;

		if (i < DROCE_MAX_QP)	/* the QPNs droce hands out, then any 24-bit one */
			dst = DROCE_QPN_BASE + i;
		else if (i == DROCE_MAX_QP)
			dst = DROCE_GSI_QPN;
		rc = droce_flow_sport(src, dst);
		ud = droce_flow_sport_ud(src, dst);
		EXPECT(rc >= 0xC000 && ud >= 0xC000, "sport %#x/%#x of %#x -> %#x", rc, ud, src, dst);
		EXPECT_EQ(rc, droce_flow_sport(src, dst), "sport of %#x -> %#x stable", src, dst);
		EXPECT_EQ(rc & DROCE_SPORT_STEER_MASK, (dst - DROCE_QPN_BASE) & 0xFF,
			  "sport %#x carries the slot of %#x", rc, dst);
		for (n = 1; n <= 256; n *= 2)
			if (dst >= DROCE_QPN_BASE && dst < DROCE_QPN_BASE + DROCE_MAX_QP)
				EXPECT_EQ(rc & (n - 1), (dst - DROCE_QPN_BASE) % n,
					  "sport %#x names shard (slot %% %u) of %#x", rc, n, dst);
		EXPECT_EQ(ud & DROCE_SPORT_STEER_MASK, 0, "UD sport %#x names shard 0", ud);
		EXPECT_EQ(ud, rc & ~DROCE_SPORT_STEER_MASK, "UD and RC sports share their hash");
	}
	/* ECMP: one destination, many sources: the hash bits take all their values. */
	for (i = 0; i < 4096; i++)
		seen[(droce_flow_sport(DROCE_QPN_BASE + i, DROCE_QPN_BASE) >> 8) & 0x3F] = 1;
	for (i = 0; i < 64; i++)
		spread += seen[i];
	EXPECT_EQ(spread, 64, "sources to one QP spread over %u of 64 hash values", spread);
}

int main(void)
{
	test_sport();
	test_roundtrips();
	test_build_errors();
	test_reasons();
	test_truncation_and_mutation();
	return test_done("wire_frame_test");
}
