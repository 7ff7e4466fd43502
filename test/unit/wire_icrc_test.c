/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Proves the ICRC:
 * - droce_icrc() equals an independent computation (zlib's crc32 over a masked copy made
 *   here, as the IBTA defines it: the variant fields masked to ones) for IPv4 and IPv6 frames
 *   of every size;
 * - a flipped bit in any ICRC-covered byte changes it (verification fails), while changes to
 *   the masked fields (IPv4 TOS/TTL/checksum, IPv6 traffic class/flow label/hop limit, UDP
 *   checksum, the BTH F/B/reserved byte) do not;
 * - over mbuf chains split at every kind of boundary, droce_icrc_mbuf(), droce_parse_mbuf()
 *   and droce_build_mbuf() agree byte for byte with the one-buffer versions;
 * - droce_build_mbuf() refuses missing headroom/tailroom and leaves the mbuf unchanged.
 * Needs EAL for the mbuf pool (run with the test EAL arguments).
 */

#include <zlib.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "check.h"
#include "wire_test_frames.h"

static uint8_t frame[FRAME_MAX];
static uint8_t payload[FRAME_MAX];

/* The ICRC computed the obvious way: copy, mask, zlib. */
static uint32_t reference_icrc(const uint8_t *l3, uint32_t len)
{
	static uint8_t buf[8 + FRAME_MAX];
	uint32_t ihl;
	uint8_t *ip = buf + 8;

	memset(buf, 0xff, 8);
	memcpy(ip, l3, len);
	if ((ip[0] >> 4) == 4) {
		ihl = (ip[0] & 15) * 4;
		ip[1] = 0xff;
		ip[8] = 0xff;
		ip[10] = ip[11] = 0xff;
	} else {
		ihl = 40;
		ip[0] |= 0x0f;
		ip[1] = ip[2] = ip[3] = 0xff;
		ip[7] = 0xff;
	}
	ip[ihl + 6] = ip[ihl + 7] = 0xff;
	ip[ihl + 12] = 0xff;
	return (uint32_t)crc32(0, buf, 8 + len);
}

static int build(uint8_t op, uint32_t len, int v6, uint32_t seed)
{
	struct droce_hdr_fields h;
	struct droce_flow f;

	test_flow(&f, v6);
	test_fields(&h, op, seed);
	test_payload(payload, len, seed);
	return droce_build(frame, sizeof(frame), &f, &h, payload, len);
}

static void test_reference(void)
{
	uint32_t seed = 0;

	for (int v6 = 0; v6 <= 1; v6++)
		for (unsigned int op = 0; op < 256; op++) {
			if (!droce_opcode_known(op))
				continue;
			for (size_t i = 0; i < RTE_DIM(payload_sizes); i++) {
				uint32_t len = payload_sizes[i];
				int n;

				if (len && !(droce_opcode_info(op)->mask & DROCE_M_PAYLOAD))
					break;
				n = build(op, len, v6, seed++);
				EXPECT_EQ(droce_get_le32(frame + n - 4),
					 reference_icrc(frame + RTE_ETHER_HDR_LEN, n - RTE_ETHER_HDR_LEN - 4),
					 "%s v6=%d len %u", droce_opcode_name(op), v6, len);
			}
		}
}

static int verifies(int n)
{
	struct droce_pkt p;

	return droce_parse(frame, n, 0, &p) == DROCE_PARSE_OK;
}

static void test_flips_and_masks(int v6)
{
	int n = build(DROCE_OP_RC_RDMA_WRITE_FIRST, 61, v6, 7);
	uint32_t l3 = RTE_ETHER_HDR_LEN, ip_len = v6 ? 40 : 20, l4 = l3 + ip_len, bth = l4 + 8;
	uint32_t good = droce_get_le32(frame + n - 4);

	EXPECT(verifies(n), "v6=%d base frame", v6);
	/* Every bit of every covered byte that is not masked. */
	for (uint32_t byte = l3; byte < (uint32_t)n - 4; byte++) {
		/* (IPv6: the low nibble of byte 0, the high traffic-class bits, is masked too.) */
		int masked = byte == l4 + 6 || byte == l4 + 7 || byte == bth + 4 ||
			     (!v6 && (byte == l3 + 1 || byte == l3 + 8 || byte == l3 + 10 || byte == l3 + 11)) ||
			     (v6 && (byte == l3 + 1 || byte == l3 + 2 || byte == l3 + 3 || byte == l3 + 7));

		for (int bit = 0; bit < 8; bit++) {
			uint32_t crc;

			frame[byte] ^= 1u << bit;
			crc = droce_icrc(frame + l3, n - l3 - 4);
			if (masked || (v6 && byte == l3 && bit < 4))
				EXPECT_EQ(crc, good, "v6=%d masked byte %u bit %d changed the ICRC", v6, byte, bit);
			else
				EXPECT(crc != good && !verifies(n), "v6=%d byte %u bit %d undetected", v6, byte, bit);
			frame[byte] ^= 1u << bit;
		}
	}
	/* Masked fields changed the way a router would: TTL/hop limit down, TOS/ECN set, the
	 * checksum redone; UDP checksum filled; FECN/BECN set. The frame still verifies. */
	if (v6) {
		frame[l3 + 7] = 17;
		frame[l3 + 1] ^= 0xf3;
		frame[l3 + 3] ^= 0x5a;
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + l3);

		ip->time_to_live = 3;
		ip->type_of_service = 0xb9;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	frame[l4 + 6] = 0x12;
	frame[l4 + 7] = 0x34;
	frame[bth + 4] |= 0xc0;
	EXPECT(verifies(n), "v6=%d masked fields changed: must still verify", v6);
}

/* Split bytes into a chain whose segments hold @cuts[] bytes, then as much as fits. */
static struct rte_mbuf *chain_of(struct rte_mempool *mp, const uint8_t *d, uint32_t len,
				 const uint32_t *cuts, int ncuts)
{
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;

	for (int i = 0; off < len; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t take;

		if (m == NULL)
			break;
		take = RTE_MIN(i < ncuts ? cuts[i] : len - off, len - off);
		take = RTE_MIN(take, rte_pktmbuf_tailroom(m));
		memcpy(rte_pktmbuf_append(m, take), d + off, take);
		off += take;
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0)
			rte_pktmbuf_free(m);
	}
	return head;
}

static void test_mbuf_chains(struct rte_mempool *mp)
{
	static const uint32_t cut_sets[][3] = {
		{ 200, 1, 1 }, { 100, 7, 300 }, { 80, 1000, 3 }, { 2048, 2048, 0 }, { 1, 1, 1 },
	};
	uint32_t seed = 100;

	for (int v6 = 0; v6 <= 1; v6++)
		for (size_t c = 0; c < RTE_DIM(cut_sets); c++) {
			int n = build(DROCE_OP_RC_SEND_MIDDLE, 3001, v6, seed++);
			struct rte_mbuf *m = chain_of(mp, frame, n, cut_sets[c], 3);
			struct droce_pkt p;
			enum droce_parse_err e;

			EXPECT(m != NULL && rte_pktmbuf_pkt_len(m) == (uint32_t)n, "chain built");
			if (m == NULL)
				continue;
			EXPECT_EQ(droce_icrc_mbuf(m, RTE_ETHER_HDR_LEN, n - RTE_ETHER_HDR_LEN - 4),
				 droce_get_le32(frame + n - 4), "v6=%d cuts %zu: chained ICRC", v6, c);
			e = droce_parse_mbuf(m, 0, &p);
			if (cut_sets[c][0] < 80)        /* headers split across segments */
				EXPECT_EQ(e, DROCE_PARSE_HDR_SPLIT, "cuts %zu: %s", c, droce_parse_err_name(e));
			else
				EXPECT(e == DROCE_PARSE_OK && p.payload_len == 3001, "v6=%d cuts %zu: %s",
				      v6, c, droce_parse_err_name(e));
			EXPECT_EQ(droce_icrc_mbuf(m, RTE_ETHER_HDR_LEN, n), 0u, "length past the chain");
			rte_pktmbuf_free(m);
		}
}

/* build_mbuf over a chained payload gives the same bytes as build() into one buffer. */
static void test_build_mbuf(struct rte_mempool *mp)
{
	static uint8_t linear[FRAME_MAX];
	const uint32_t cuts[] = { 1000, 3 };
	struct droce_hdr_fields h;
	struct droce_flow f;

	for (int v6 = 0; v6 <= 1; v6++)
		for (uint32_t len = 0; len < 2100; len += 349) {
			struct rte_mbuf *m;
			int n;

			n = build(DROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, len, v6, len);
			test_flow(&f, v6);
			test_fields(&h, DROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, len);
			m = len ? chain_of(mp, payload, len, cuts, 2) : rte_pktmbuf_alloc(mp);
			EXPECT(m != NULL, "alloc");
			if (m == NULL)
				continue;
			EXPECT_EQ(droce_build_mbuf(m, &f, &h), 0, "build_mbuf v6=%d len %u", v6, len);
			EXPECT(rte_pktmbuf_pkt_len(m) == (uint32_t)n &&
			      memcmp(rte_pktmbuf_read(m, 0, n, linear), frame, n) == 0,
			      "build_mbuf bytes v6=%d len %u", v6, len);
			rte_pktmbuf_free(m);
		}

	/* No headroom: refused, unchanged. */
	{
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

		test_flow(&f, 0);
		test_fields(&h, DROCE_OP_RC_SEND_ONLY, 1);
		rte_pktmbuf_prepend(m, rte_pktmbuf_headroom(m) - 10);
		EXPECT_EQ(droce_build_mbuf(m, &f, &h), -ENOSPC, "short headroom");
		EXPECT_EQ(rte_pktmbuf_headroom(m), 10, "unchanged after refusal");
		rte_pktmbuf_reset(m);
		rte_pktmbuf_append(m, rte_pktmbuf_tailroom(m) - 2);
		EXPECT_EQ(droce_build_mbuf(m, &f, &h), -ENOSPC, "short tailroom");
		test_fields(&h, 0x15, 1);
		rte_pktmbuf_reset(m);
		EXPECT_EQ(droce_build_mbuf(m, &f, &h), -EINVAL, "unknown opcode");
		rte_pktmbuf_free(m);
	}
}

int main(int argc, char **argv)
{
	struct rte_mempool *mp;

	test_reference();
	test_flips_and_masks(0);
	test_flips_and_masks(1);

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	mp = rte_pktmbuf_pool_create("wire_test", 512, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	EXPECT(mp != NULL, "mempool: %s", rte_strerror(rte_errno));
	if (mp != NULL) {
		test_mbuf_chains(mp);
		test_build_mbuf(mp);
		rte_mempool_free(mp);
	}
	rte_eal_cleanup();
	return test_done("wire_icrc_test");
}
