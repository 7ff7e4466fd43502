/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Proves that the wire fast paths changed nothing but the cost: against the wire code as it
 * was before them (wire_ref.c, frozen),
 * - the ICRC state after the 8 bytes of 0xFF is ISA-L's own;
 * - droce_icrc() and droce_icrc_mbuf() give the same CRC for IPv4 (with and without options)
 *   and IPv6, every length from 0 to past 256 bytes, contiguous and chained, and short input,
 *   with small IPv4 frames hashed both by carry-less multiplication and by ISA-L, and for
 *   zero-copy chains (headers | an MTU of payload | ICRC) of every IB MTU;
 * - droce_parse() and droce_parse_mbuf() give the same result and, when the headers were all
 *   read (OK, BAD_ICRC), the same view, for frames plain, 802.1Q-tagged, with IPv4 options,
 *   with Ethernet padding, split over segments, truncated, and mutated (the IP checksum and
 *   ICRC sometimes repaired after the mutation so that the later checks are reached);
 * - droce_build_hdrs(), droce_build() and droce_build_mbuf() write the same bytes and return
 *   the same values, errors included, for every opcode, both families, many lengths and
 *   flows; and every frame they build parses back.
 * Needs EAL for the mbuf pool (run with the test EAL arguments).
 */

#include <isa-l/crc.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "check.h"
#include "wire_private.h"
#include "wire_ref.h"
#include "wire_test_frames.h"

#define MUTATIONS 200000

static uint8_t frame[FRAME_MAX];
static uint8_t payload[FRAME_MAX];
static uint64_t rng = 0x243f6a8885a308d3ull;

static uint32_t rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33) % n;
}

static void test_lrh_state(void)
{
	static const uint8_t ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	EXPECT_EQ(crc32_gzip_refl(0, ff, 8), DROCE_ICRC_LRH_STATE, "CRC state after 8 x 0xFF");
}

static void random_flow(struct droce_flow *f, int v6)
{
	test_flow(f, v6);
	f->tclass = (uint8_t)rnd(256);
	f->hop_limit = rnd(3) == 0 ? 0 : (uint8_t)rnd(256);
	f->sport = (uint16_t)rnd(65536);
	f->flow_label = v6 ? rnd(1u << 20) : 0;
	f->sgid[15] = (uint8_t)rnd(256);
	f->dgid[13] = (uint8_t)rnd(256);
}

static uint8_t random_opcode(void)
{
	uint8_t op;

	do
		op = (uint8_t)rnd(256);
	while (!droce_opcode_known(op));
	return op;
}

static uint32_t payload_for(uint8_t op, uint32_t max)
{
	return (droce_opcode_info(op)->mask & DROCE_M_PAYLOAD) ? rnd(max + 1) : 0;
}

/* ---- ICRC ---- */

static void fix_ip_csum(uint8_t *d, uint32_t l3)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(d + l3);

	if ((d[l3] >> 4) != 4)
		return;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = ~rte_raw_cksum(ip, (ip->version_ihl & 0xf) * 4u);
}

/*
 * Make the IPv4 frame of @n bytes at @d carry @words 4-byte words of options (NOPs, then an
 * end-of-list) after its 20-byte header; lengths, checksum and ICRC redone. Returns the new
 * length.
 */
static int add_ip_options(uint8_t *d, int n, unsigned int words)
{
	const uint32_t l3 = RTE_ETHER_HDR_LEN, l4 = l3 + 20, add = words * 4;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(d + l3);

	memmove(d + l4 + add, d + l4, n - l4);
	memset(d + l4, 1, add);
	if (add != 0)
		d[l4 + add - 1] = 0;
	ip->version_ihl = 0x45 + words;
	ip->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(ip->total_length) + add);
	fix_ip_csum(d, l3);
	n += add;
	droce_put_le32(d + n - 4, ref_icrc(d + l3, n - l3 - 4));
	return n;
}

/* Insert an 802.1Q tag after the MAC addresses (nothing else changes: the ICRC skips L2). */
static int add_vlan(uint8_t *d, int n, uint16_t tci)
{
	memmove(d + 16, d + 12, n - 12);
	d[12] = 0x81, d[13] = 0x00;
	d[14] = tci >> 8, d[15] = tci & 0xff;
	return n + 4;
}

/*
 * Split @len bytes into a chain whose first segments hold @cuts[] bytes (0: as much as fits),
 * then the rest; the first segment has @headroom bytes of headroom (0: the default; keep it
 * even, as DPDK does: an Ethernet header is 2-byte aligned).
 */
static struct rte_mbuf *chain_of(struct rte_mempool *mp, const uint8_t *d, uint32_t len,
				 const uint32_t *cuts, int ncuts, uint16_t headroom)
{
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;

	for (int i = 0; off < len || head == NULL; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t take;

		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		if (head == NULL && headroom != 0)
			m->data_off = headroom;
		take = RTE_MIN(i < ncuts && cuts[i] ? cuts[i] : len - off, len - off);
		take = RTE_MIN(take, rte_pktmbuf_tailroom(m));
		memcpy(rte_pktmbuf_append(m, take), d + off, take);
		off += take;
		if (head == NULL) {
			head = m;
		} else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
	}
	return head;
}

static void test_icrc(struct rte_mempool *mp)
{
	unsigned int checked = 0;

	for (int kind = 0; kind < 3; kind++)               /* IPv4, IPv4 + options, IPv6 */
		for (uint32_t len = 0; len <= 300; len++) {
			struct droce_hdr_fields h;
			struct droce_flow f;
			uint32_t l3 = RTE_ETHER_HDR_LEN, cut;
			struct rte_mbuf *m;
			int n;

			random_flow(&f, kind == 2);
			test_fields(&h, DROCE_OP_RC_SEND_MIDDLE, len);
			test_payload(payload, len, len);
			n = ref_build(frame, sizeof(frame), &f, &h, payload, len);
			if (kind == 1)
				n = add_ip_options(frame, n, 1 + len % 10);
			/* Every prefix of the frame (short ones give 0 in both). */
			for (uint32_t k = 0; k <= (uint32_t)n - l3 - 4; k += 1 + (k > 260) * 7) {
				EXPECT_EQ(droce_icrc(frame + l3, k), ref_icrc(frame + l3, k),
					 "kind %d len %u: prefix %u", kind, len, k);
				checked++;
			}
			cut = 1 + rnd(n - 1);
			m = chain_of(mp, frame, n, (const uint32_t[]){ rnd(2) ? cut : 0, 1 + rnd(9) }, 2, 0);
			EXPECT(m != NULL, "chain");
			if (m == NULL)
				continue;
			EXPECT_EQ(droce_icrc_mbuf(m, l3, n - l3 - 4), ref_icrc_mbuf(m, l3, n - l3 - 4),
				 "kind %d len %u cut %u: chained", kind, len, cut);
			EXPECT_EQ(droce_icrc_mbuf(m, l3, n - l3 - 4), droce_get_le32(frame + n - 4),
				 "kind %d len %u: the frame's own ICRC", kind, len);
			EXPECT_EQ(droce_icrc_mbuf(m, l3 + 1, n - l3 - 4), ref_icrc_mbuf(m, l3 + 1, n - l3 - 4),
				 "kind %d len %u: one byte off", kind, len);
			EXPECT_EQ(droce_icrc_mbuf(m, l3, n - l3 + 1), 0u, "past the chain");
			EXPECT_EQ(droce_icrc_mbuf(m, l3, 0), 0u, "no bytes");
			rte_pktmbuf_free(m);
		}
	EXPECT_EQ(droce_icrc_mbuf(NULL, 14, 60), 0u, "no mbuf");
	printf("icrc: %u prefixes compared\n", checked);
}

/* Zero-copy frames as the transport makes them: headers, a whole MTU of payload in the next
 * segment, the ICRC in a third; and the same payload split or followed by more bytes in its
 * segment. */
static void test_icrc_mtu_chains(struct rte_mempool *mp)
{
	static const uint8_t ops[] = { DROCE_OP_RC_SEND_MIDDLE, DROCE_OP_RC_RDMA_WRITE_FIRST };
	unsigned int checked = 0;

	for (uint32_t mtu = 128; mtu <= 4096; mtu *= 2)
		for (unsigned int o = 0; o < RTE_DIM(ops); o++)
			for (int shape = 0; shape < 3; shape++) {
				struct droce_hdr_fields h;
				struct droce_flow f;
				uint32_t l3 = RTE_ETHER_HDR_LEN, hdr, want;
				struct rte_mbuf *m;
				int n;

				random_flow(&f, false);
				test_fields(&h, ops[o], mtu);
				test_payload(payload, mtu, mtu + o);
				n = ref_build(frame, sizeof(frame), &f, &h, payload, mtu);
				hdr = (uint32_t)n - mtu - DROCE_ICRC_LEN;
				want = ref_icrc(frame + l3, n - l3 - DROCE_ICRC_LEN);
				/* 0: hdr | payload | ICRC; 1: hdr | payload+ICRC; 2: payload split */
				m = chain_of(mp, frame, n, (const uint32_t[]){ hdr, shape == 2 ? mtu / 2 :
					     shape == 1 ? 0 : mtu }, 2, 0);
				EXPECT(m != NULL, "chain");
				if (m == NULL)
					continue;
				EXPECT_EQ(droce_icrc_mbuf(m, l3, n - l3 - DROCE_ICRC_LEN), want,
					 "mtu %u op %u shape %d", mtu, ops[o], shape);
				EXPECT_EQ(want, droce_get_le32(frame + n - DROCE_ICRC_LEN), "own ICRC");
				/* A flipped payload bit changes it. */
				rte_pktmbuf_mtod(m->next, uint8_t *)[mtu / 3 % rte_pktmbuf_data_len(m->next)] ^= 4;
				EXPECT(droce_icrc_mbuf(m, l3, n - l3 - DROCE_ICRC_LEN) != want,
				      "mtu %u op %u shape %d: bit flip seen", mtu, ops[o], shape);
				rte_pktmbuf_free(m);
				checked++;
			}
	printf("icrc: %u MTU-sized chains compared\n", checked);
}

/* ---- Parse ---- */

static void compare_parse(const uint8_t *d, uint32_t len, struct rte_mempool *mp,
			  const char *what)
{
	struct droce_pkt a, b;
	enum droce_parse_err ea, eb;
	uint8_t *exact = malloc(len ? len : 1);   /* ASan sees any read past the frame */
	struct rte_mbuf *m;
	uint32_t cut;

	memcpy(exact, d, len);
	for (uint32_t flags = 0; flags <= DROCE_PARSE_NO_ICRC; flags += DROCE_PARSE_NO_ICRC) {
		ea = droce_parse(exact, len, flags, &a);
		eb = ref_parse(exact, len, flags, &b);
		EXPECT(ea == eb && (!ref_view_complete(ea) || ref_pkt_same(&a, &b)),
		      "%s len %u flags %u: %s, reference %s", what, len, flags,
		      droce_parse_err_name(ea), droce_parse_err_name(eb));
	}
	free(exact);
	if (mp == NULL)
		return;
	cut = rnd(4) == 0 ? 1 + rnd(len ? len : 1) : 0;
	m = chain_of(mp, d, len, (const uint32_t[]){ cut, 1 + rnd(40) }, 2, 0);
	if (m == NULL) {
		EXPECT(0, "chain");
		return;
	}
	ea = droce_parse_mbuf(m, 0, &a);
	eb = ref_parse_mbuf(m, 0, &b);
	EXPECT(ea == eb && (!ref_view_complete(ea) || ref_pkt_same(&a, &b)),
	      "%s len %u cut %u (mbuf): %s, reference %s", what, len, cut,
	      droce_parse_err_name(ea), droce_parse_err_name(eb));
	rte_pktmbuf_free(m);
}

/* A valid frame of a random shape into @d; returns its length. */
static int random_frame(uint8_t *d, int *shape)
{
	struct droce_hdr_fields h;
	struct droce_flow f;
	uint8_t op = random_opcode();
	int n;

	*shape = rnd(4);        /* 0 plain, 1 VLAN, 2 IPv4 options, 3 VLAN + options */
	random_flow(&f, (*shape & 2) ? 0 : rnd(3) == 0);
	test_fields(&h, op, rnd(1000));
	n = ref_build(d, FRAME_MAX, &f, &h, payload, payload_for(op, 300));
	if (*shape & 2)
		n = add_ip_options(d, n, 1 + rnd(10));
	if (*shape & 1)
		n = add_vlan(d, n, (uint16_t)rnd(65536));
	return n;
}

static void test_parse(struct rte_mempool *mp)
{
	static uint8_t mut[FRAME_MAX + 64];
	unsigned int ok = 0, reasons[DROCE_PARSE_ERR_NUM] = { 0 };
	char what[64];

	test_payload(payload, 300, 9);
	for (unsigned int i = 0; i < MUTATIONS; i++) {
		int shape, n = random_frame(mut, &shape), len = n, flips = rnd(4);
		uint32_t l3 = (shape & 1) ? 18 : 14;
		struct droce_pkt p;
		enum droce_parse_err e;

		for (int k = 0; k < flips; k++)   /* mostly in the headers */
			mut[rnd(4) ? rnd(RTE_MIN(n, 90)) : rnd(n)] = (uint8_t)rnd(256);
		if (flips && rnd(2))
			fix_ip_csum(mut, l3);
		if (flips && rnd(2) && n > (int)l3 + 4)
			droce_put_le32(mut + n - 4, ref_icrc(mut + l3, n - l3 - 4));
		if (rnd(8) == 0)
			len = rnd(n + 64);         /* cut, or Ethernet padding */
		if (len > n)
			memset(mut + n, (uint8_t)rnd(256), len - n);
		snprintf(what, sizeof(what), "frame %u shape %d flips %d", i, shape, flips);
		compare_parse(mut, len, i % 4 == 0 ? mp : NULL, what);
		e = droce_parse(mut, len, 0, &p);
		ok += e == DROCE_PARSE_OK;
		reasons[e]++;
	}
	/* The comparison means something only if the frames reached every verdict. */
	for (int e = 1; e < DROCE_PARSE_ERR_NUM; e++)
		EXPECT(reasons[e] > 0 || e == DROCE_PARSE_HDR_SPLIT, "no frame was rejected as %s",
		      droce_parse_err_name(e));
	EXPECT(ok > MUTATIONS / 10, "only %u frames accepted", ok);
	printf("parse: %u frames compared, %u accepted\n", MUTATIONS, ok);
}

/* ---- Build ---- */

static void compare_build_mbuf(struct rte_mempool *mp, const struct droce_flow *f,
			       const struct droce_hdr_fields *h, uint32_t len, uint32_t cut,
			       uint32_t squeeze)
{
	static uint8_t a[FRAME_MAX], b[FRAME_MAX];
	struct rte_mbuf *ma = chain_of(mp, payload, len, (const uint32_t[]){ cut }, 1, squeeze);
	struct rte_mbuf *mb = chain_of(mp, payload, len, (const uint32_t[]){ cut }, 1, squeeze);
	int ra, rb;

	EXPECT(ma != NULL && mb != NULL, "chains");
	if (ma == NULL || mb == NULL)
		goto out;
	ra = droce_build_mbuf(ma, f, h);
	rb = ref_build_mbuf(mb, f, h);
	EXPECT(ra == rb && rte_pktmbuf_pkt_len(ma) == rte_pktmbuf_pkt_len(mb) &&
	      ma->data_off == mb->data_off && ma->nb_segs == mb->nb_segs,
	      "build_mbuf %s len %u cut %u squeeze %u: %d, reference %d",
	      droce_opcode_name(h->opcode), len, cut, squeeze, ra, rb);
	if (ra == 0 && rb == 0) {
		uint32_t n = rte_pktmbuf_pkt_len(ma);
		const uint8_t *da = rte_pktmbuf_read(ma, 0, n, a);
		struct droce_pkt p;

		EXPECT(memcmp(da, rte_pktmbuf_read(mb, 0, n, b), n) == 0,
		      "build_mbuf %s len %u cut %u: bytes", droce_opcode_name(h->opcode), len, cut);
		EXPECT_EQ(droce_parse(da, n, 0, &p), DROCE_PARSE_OK, "built frame parses");
	}
out:
	rte_pktmbuf_free(ma);
	rte_pktmbuf_free(mb);
}

static void test_build(struct rte_mempool *mp)
{
	static uint8_t a[FRAME_MAX], b[FRAME_MAX];

	test_payload(payload, sizeof(payload), 5);
	for (unsigned int i = 0; i < 20000; i++) {
		struct droce_hdr_fields h;
		struct droce_flow f;
		uint8_t op = rnd(16) ? random_opcode() : (uint8_t)rnd(256);
		uint32_t len = rnd(8) ? payload_for(op, 1100) : rnd(2) ? rnd(70000) : rnd(40);
		uint32_t room = rnd(4) ? FRAME_MAX : rnd(200);
		int ra, rb;
		struct droce_pkt p;

		random_flow(&f, rnd(2));
		test_fields(&h, op, i);
		memset(a, 0x5a, sizeof(a));
		memset(b, 0x5a, sizeof(b));
		ra = droce_build_hdrs(a, room, &f, &h, len);
		rb = ref_build_hdrs(b, room, &f, &h, len);
		EXPECT(ra == rb && memcmp(a, b, 200) == 0, "build_hdrs %s v6=%d len %u room %u: %d, "
		      "reference %d", droce_opcode_name(op), f.ipv6, len, room, ra, rb);
		ra = droce_build(a, room, &f, &h, payload, len);
		rb = ref_build(b, room, &f, &h, payload, len);
		EXPECT(ra == rb && (ra <= 0 || memcmp(a, b, ra) == 0), "build %s v6=%d len %u room %u: "
		      "%d, reference %d", droce_opcode_name(op), f.ipv6, len, room, ra, rb);
		if (ra > 0)
			EXPECT_EQ(droce_parse(a, ra, 0, &p), DROCE_PARSE_OK, "build %s len %u parses",
				 droce_opcode_name(op), len);
		if (mp != NULL && len <= 4000 && i % 4 == 0)
			compare_build_mbuf(mp, &f, &h, len, rnd(3) ? 0 : 1 + rnd(len + 1),
					   rnd(4) ? 0 : 2 + 2 * rnd(50));   /* around the need */
		/* A full last segment: around the tailroom the pad and ICRC need. */
		if (mp != NULL && i % 64 == 0 && (droce_opcode_info(op)->mask & DROCE_M_PAYLOAD))
			compare_build_mbuf(mp, &f, &h, 2048 - rnd(8), 0, 0);
	}
	printf("build: 20000 header sets compared\n");
}

int main(int argc, char **argv)
{
	struct rte_mempool *mp, *jumbo;

	test_lrh_state();
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	mp = rte_pktmbuf_pool_create("wire_fast", 512, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	EXPECT(mp != NULL, "mempool: %s", rte_strerror(rte_errno));
	jumbo = rte_pktmbuf_pool_create("wire_jumbo", 63, 0, 0, RTE_PKTMBUF_HEADROOM + 8192,
					SOCKET_ID_ANY);
	EXPECT(jumbo != NULL, "mempool: %s", rte_strerror(rte_errno));
	if (mp != NULL && jumbo != NULL) {
		/* Small IPv4 frames: PCLMULQDQ where the CPU has it (the default), and ISA-L. */
		printf("icrc: carry-less multiply %s\n",
		       wire_icrc_clmul_get() ? "in use" : "not available on this CPU");
		test_icrc(mp);
		test_icrc_mtu_chains(jumbo);
		wire_icrc_clmul_set(false);
		EXPECT(!wire_icrc_clmul_get(), "ISA-L path chosen");
		test_icrc(mp);
		test_icrc_mtu_chains(jumbo);
		wire_icrc_clmul_set(true);
		test_parse(mp);
		test_build(mp);
	}
	rte_mempool_free(mp);
	rte_mempool_free(jumbo);
	rte_eal_cleanup();
	return test_done("wire_fastpath_test");
}
