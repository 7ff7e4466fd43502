/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The RoCE v2 invariant CRC (IBTA Annex A17.3.3, as Linux rxe computes it): CRC-32 over 8 bytes
 * of 0xFF standing for the masked LRH, then the IP header with its variant fields (IPv4 TOS,
 * TTL, header checksum; IPv6 traffic class, flow label, hop limit) set to all ones, the UDP
 * header with its checksum set to ones, the BTH with its byte 4 (FECN/BECN/reserved) set to
 * 0xFF, and the rest of the packet up to the ICRC. The CRC is ISA-L's (chainable, SIMD).
 */

#include <stdbool.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cpuflags.h>
#ifdef RTE_ARCH_X86
#include <smmintrin.h>
#include <tmmintrin.h>
#include <wmmintrin.h>
#endif

#include "droce_wire.h"
#include "wire_private.h"

/* The largest IPv4 header (60) + UDP (8) + BTH (12). */
#define MASKED_MAX (60 + 8 + DROCE_BTH_LEN)
/* Frames up to this many bytes from the IP header take one CRC call (icrc_small()). */
#define SMALL_MAX 256
/* IPv4 with no options: IP (20) + UDP (8) + BTH (12), the bytes with masked fields. */
#define V4_HDRS (20 + 8 + DROCE_BTH_LEN)

/*
 * Copy the variant part of the packet (IP + UDP + BTH) into @p out, masked. Return how many
 * bytes that is (the packet bytes it covers), or 0 when @p len cannot hold the headers.
 * The 8 bytes of 0xFF that precede it are in the CRC state DROCE_ICRC_LRH_STATE instead.
 */
static uint32_t masked_headers(const uint8_t *l3, uint32_t len, uint8_t *ip)
{
	uint32_t ip_len;

	if (len < 1)
		return 0;
	ip_len = (l3[0] >> 4) == 6 ? sizeof(struct rte_ipv6_hdr) : (uint32_t)(l3[0] & 0xf) * 4;
	if (ip_len < sizeof(struct rte_ipv4_hdr) || len < ip_len + 8 + DROCE_BTH_LEN)
		return 0;
	memcpy(ip, l3, ip_len + 8 + DROCE_BTH_LEN);
	if ((l3[0] >> 4) == 6) {
		ip[0] |= 0x0f;                          /* traffic class, low nibble */
		ip[1] = ip[2] = ip[3] = 0xff;           /* traffic class, flow label */
		ip[7] = 0xff;                           /* hop limit */
	} else {
		ip[1] = 0xff;                           /* TOS */
		ip[8] = 0xff;                           /* TTL */
		ip[10] = ip[11] = 0xff;                 /* header checksum */
	}
	ip[ip_len + 6] = ip[ip_len + 7] = 0xff;        /* UDP checksum */
	ip[ip_len + 8 + 4] = 0xff;                     /* BTH F/B/reserved byte */
	return ip_len + 8 + DROCE_BTH_LEN;
}

/*
 * The usual frame: IPv4 without options, at most SMALL_MAX bytes, in one piece (@p len is
 * at least V4_HDRS). The masked fields sit at fixed offsets, so mask a copy of the whole
 * frame there and hash it in one call: for tens of bytes one call costs about half of two.
 *
 * The copy is made of 16-byte vector stores only, at the offsets where the CRC's 16-byte
 * loads will read them: a copy by memcpy() plus byte stores for the masks made those loads
 * wait for store-to-load forwarding that cannot happen (a load spanning several smaller
 * stores), the largest cost of the CRC in a profile. For the loads to line up, the copy is
 * prefixed with p zero bytes that round it to 16; the CRC starts from a state that p zero
 * bytes take to DROCE_ICRC_LRH_STATE, so the result is the same.
 */
#define V4_ALIGNED_MAX 240      /* ISA-L reads 16 bytes a step below 256 */

/* By offset from the IPv4 header: 0xff where V4 masks (TOS, TTL, checksum, UDP checksum,
 * BTH byte 4), 0 elsewhere; long enough for any 16-byte window of a small frame. */
static const uint8_t v4_mask[SMALL_MAX] = {
	[1] = 0xff, [8] = 0xff, [10] = 0xff, [11] = 0xff,
	[20 + 6] = 0xff, [20 + 7] = 0xff, [20 + 8 + 4] = 0xff,
};

#ifdef RTE_ARCH_X86

/* crc32_gzip_refl(icrc_zeros_state[p], p zero bytes) == DROCE_ICRC_LRH_STATE (a unit test
 * checks it): the 32 CRC steps of each zero byte undone from that state, bit by bit. */
static const uint32_t icrc_zeros_state[16] = {
	0x2144df1cu, 0xff41d912u, 0x41d912ffu, 0xd202ef8du,
	0x00000000u, 0x0f6a7026u, 0x65e3626fu, 0x5cd1d97eu,
	0x6dd90a9du, 0x0b840633u, 0x50b362e9u, 0xb979a556u,
	0x101b2f50u, 0xce3f7abcu, 0x51f45351u, 0x25391b17u,
};

/* From offset 16 - p, a pshufb control that moves 16 bytes up by p, zeros coming in. */
static const uint8_t shift_up[32] = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
};

static inline __m128i load16(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/*
 * The same masked blocks, hashed in registers with carry-less multiplication (CPUs with
 * PCLMULQDQ): each block is multiplied by x^(128 d) mod P, d its distance in blocks from the
 * end, all at once, and the sum is reduced to 32 bits (two folds and a Barrett reduction).
 * ISA-L folds one block after the other, a chain of dependent multiplications that a
 * profile showed as the engine's largest single cost for small frames.
 *
 * Bit-reflected constants (generated and checked against zlib with a polynomial model; the
 * unit test compares every length with the reference ICRC): fold_k[d] = { x^(128d+63),
 * x^(128d-1) } mod P, red_k = { x^95, x^63 } mod P, barrett = { floor(x^64 / P), P },
 * P = 0x104C11DB7.
 */
static const uint64_t fold_k[V4_ALIGNED_MAX / 16][2] __rte_aligned(16) = {
	{ 0, 0 },
	{ 0x65673b4600000000ull, 0x9ba54c6f00000000ull },
	{ 0x9570d49500000000ull, 0x01b5fd1d00000000ull },
	{ 0x69ccfc0d00000000ull, 0x2a28386200000000ull },
	{ 0x653d982200000000ull, 0xcad38e8f00000000ull },
	{ 0x5a03a0cf00000000ull, 0x8e42b13e00000000ull },
	{ 0x759fc69d00000000ull, 0x101a233100000000ull },
	{ 0x019866e800000000ull, 0xc64ac0b800000000ull },
	{ 0x7d657a1000000000ull, 0x7406fa9500000000ull },
	{ 0x72d2649a00000000ull, 0x6dd804d900000000ull },
	{ 0x199560db00000000ull, 0x1d5dce4400000000ull },
	{ 0xdeb15a1f00000000ull, 0xf09a54ac00000000ull },
	{ 0x67f7947600000000ull, 0xc56d949600000000ull },
	{ 0x733ffa0b00000000ull, 0x523d48c400000000ull },
	{ 0x8f739cb400000000ull, 0xd63a56a600000000ull },
};
static const uint64_t red_k[2] __rte_aligned(16) = { 0xccaa009e00000000ull, 0xb8bc676500000000ull };
static const uint64_t barrett[2] __rte_aligned(16) = { 0x1f7011641ull, 0x1db710641ull };

static bool icrc_use_clmul;

RTE_INIT(icrc_clmul_detect)
{
	icrc_use_clmul = rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0 &&
			 rte_cpu_get_flag_enabled(RTE_CPUFLAG_SSE4_1) > 0;
}

void wire_icrc_clmul_set(bool on)
{
	icrc_use_clmul = on && rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0 &&
			 rte_cpu_get_flag_enabled(RTE_CPUFLAG_SSE4_1) > 0;
}

bool wire_icrc_clmul_get(void)
{
	return icrc_use_clmul;
}

#define CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

/* The 16 bytes of the frame at @p off, masked. */
CLMUL_TARGET static __rte_always_inline __m128i v4_block(const uint8_t *l3, int32_t off)
{
	return _mm_or_si128(load16(l3 + off), load16(v4_mask + off));
}

/* @p v multiplied by x^(128 d) mod P, as two 64-bit halves. */
CLMUL_TARGET static __rte_always_inline __m128i clmul_fold(__m128i v, uint32_t d)
{
	__m128i k = _mm_load_si128((const __m128i *)(const void *)fold_k[d]);

	return _mm_xor_si128(_mm_clmulepi64_si128(v, k, 0x00), _mm_clmulepi64_si128(v, k, 0x11));
}

/* The 128-bit sum to 32 bits: 128 -> 96 -> 64 bits, then Barrett: v * x^32 mod P. */
CLMUL_TARGET static __rte_always_inline uint32_t clmul_reduce(__m128i v)
{
	__m128i k = _mm_load_si128((const __m128i *)(const void *)red_k), u, w;

	u = _mm_xor_si128(_mm_clmulepi64_si128(v, k, 0x00),
			  _mm_and_si128(_mm_srli_si128(v, 4), _mm_set_epi32(-1, -1, -1, 0)));
	w = _mm_xor_si128(_mm_clmulepi64_si128(u, k, 0x10), u);
	w = _mm_srli_si128(w, 8);
	k = _mm_load_si128((const __m128i *)(const void *)barrett);
	u = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(w, _mm_set_epi32(0, 0, 0, -1)), k,
					       0x00), _mm_set_epi32(0, 0, 0, -1));
	w = _mm_xor_si128(w, _mm_clmulepi64_si128(u, k, 0x10));
	return ~(uint32_t)_mm_extract_epi32(w, 1);
}

/*
 * @p n blocks of 16 bytes, the frame's @p len bytes preceded by pad = 16n - len zero bytes:
 * block 0 is the frame's first 16 - pad bytes moved up by pad (zeros coming in) with the CRC
 * state entering it, block i the 16 bytes at 16 i - pad. Each block but the last is
 * multiplied by its distance to the end at once. Inlined with a constant @p n for the usual
 * frames: unrolled, 80 instead of 93 instructions a call for 3 or 4 blocks (callgrind).
 */
CLMUL_TARGET static __rte_always_inline uint32_t icrc_v4_blocks(const uint8_t *l3, uint32_t pad,
								uint32_t n)
{
	__m128i v, t;
	uint32_t i;

	v = _mm_shuffle_epi8(v4_block(l3, 0), load16(shift_up + 16 - pad));
	v = _mm_xor_si128(v, _mm_cvtsi32_si128((int)~icrc_zeros_state[pad]));
	if (n == 1)
		return clmul_reduce(v);
	t = clmul_fold(v, n - 1);
	for (i = 1; i < n - 1; i++)
		t = _mm_xor_si128(t, clmul_fold(v4_block(l3, (int32_t)(16 * i - pad)), n - 1 - i));
	return clmul_reduce(_mm_xor_si128(t, v4_block(l3, (int32_t)(16 * (n - 1) - pad))));
}

/* An IPv4 frame of @p len bytes from the IP header (V4_HDRS..V4_ALIGNED_MAX). */
CLMUL_TARGET static uint32_t icrc_v4_clmul(const uint8_t *l3, uint32_t len)
{
	uint32_t pad = -len & 15, n = (len + pad) / 16;

	switch (n) {	/* V4_HDRS = 40 bytes: at least 3 blocks */
	case 3:		/* ACK (44), SEND of up to 8 bytes, zero-copy middle headers (40) */
		return icrc_v4_blocks(l3, pad, 3);
	case 4:		/* 8-byte WRITE (64), READ request (56), zero-copy first headers */
		return icrc_v4_blocks(l3, pad, 4);
	case 5:
		return icrc_v4_blocks(l3, pad, 5);
	case 6:
		return icrc_v4_blocks(l3, pad, 6);
	default:
		return icrc_v4_blocks(l3, pad, n);
	}
}

static inline uint32_t icrc_v4_small(const uint8_t *l3, uint32_t len)
{
	uint32_t pad = -len & 15, n = (len + pad) / 16, i;
	__m128i buf[V4_ALIGNED_MAX / 16];
	uint8_t copy[SMALL_MAX];

	if (likely(len + pad <= V4_ALIGNED_MAX)) {
		if (likely(icrc_use_clmul))
			return icrc_v4_clmul(l3, len);
		buf[0] = _mm_shuffle_epi8(_mm_or_si128(load16(l3), load16(v4_mask)),
					  load16(shift_up + 16 - pad));
		for (i = 1; i < n; i++)
			buf[i] = _mm_or_si128(load16(l3 + 16 * i - pad),
					      load16(v4_mask + 16 * i - pad));
		return crc32_gzip_refl(icrc_zeros_state[pad], (const uint8_t *)buf, 16 * n);
	}
	memcpy(copy, l3, len);
	for (i = 0; i < V4_HDRS; i++)
		copy[i] |= v4_mask[i];
	return crc32_gzip_refl(DROCE_ICRC_LRH_STATE, copy, len);
}

#else /* !RTE_ARCH_X86: ISA-L over a masked copy */

static const bool icrc_use_clmul;

void wire_icrc_clmul_set(bool on)
{
	(void)on;
}

bool wire_icrc_clmul_get(void)
{
	return false;
}

static inline uint32_t icrc_v4_clmul(const uint8_t *l3, uint32_t len)
{
	(void)l3;
	(void)len;
	return 0;	/* never called: icrc_use_clmul is false */
}

static inline uint32_t icrc_v4_small(const uint8_t *l3, uint32_t len)
{
	uint8_t copy[SMALL_MAX];

	memcpy(copy, l3, len);
	for (uint32_t i = 0; i < V4_HDRS; i++)
		copy[i] |= v4_mask[i];
	return crc32_gzip_refl(DROCE_ICRC_LRH_STATE, copy, len);
}

#endif /* RTE_ARCH_X86 */

static inline bool is_v4_small(const uint8_t *l3, uint32_t len)
{
	return l3[0] == 0x45 && len >= V4_HDRS && len <= SMALL_MAX;
}

/* Any other small frame in one piece (IPv6, IPv4 options): the same, masked generally. */
static uint32_t icrc_small(const uint8_t *l3, uint32_t len)
{
	uint8_t buf[SMALL_MAX];
	uint32_t n = masked_headers(l3, len, buf);

	if (n == 0)
		return 0;
	memcpy(buf + n, l3 + n, len - n);
	return crc32_gzip_refl(DROCE_ICRC_LRH_STATE, buf, len);
}

uint32_t wire_icrc_contig(const uint8_t *l3, uint32_t len)
{
	uint8_t masked[MASKED_MAX];
	uint32_t n;

	if (len <= SMALL_MAX)
		return len > 0 && is_v4_small(l3, len) ? icrc_v4_small(l3, len) : icrc_small(l3, len);
	n = masked_headers(l3, len, masked);
	if (n == 0)
		return 0;
	return crc32_gzip_refl(crc32_gzip_refl(DROCE_ICRC_LRH_STATE, masked, n), l3 + n, len - n);
}

uint32_t droce_icrc(const void *l3, uint32_t len)
{
	return wire_icrc_contig(l3, len);
}

/* Continue @p crc over @p left bytes of the chain @p m from frame offset @p off; 0 when the
 * chain is shorter. */
static uint32_t icrc_chain(const struct rte_mbuf *m, uint32_t crc, uint32_t off, uint32_t left)
{
	for (; m != NULL && left > 0; m = m->next) {
		uint32_t seg = rte_pktmbuf_data_len(m), take;

		if (off >= seg) {
			off -= seg;
			continue;
		}
		take = RTE_MIN(seg - off, left);
		crc = crc32_gzip_refl(crc, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), take);
		left -= take;
		off = 0;
	}
	return left == 0 ? crc : 0;
}

uint32_t droce_icrc_mbuf(const struct rte_mbuf *m, uint32_t l3_off, uint32_t len)
{
	uint8_t masked[MASKED_MAX], copy[MASKED_MAX];
	uint32_t n, crc, first;
	const uint8_t *hdrs;

	if (m == NULL || len == 0 || (uint64_t)l3_off + len > rte_pktmbuf_pkt_len(m))
		return 0;
	if (l3_off + len <= rte_pktmbuf_data_len(m))
		return wire_icrc_contig(rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off), len);
	/* The headers are usually in the first segment (a zero-copy frame's payload follows in
	 * other segments); when a chain splits them, gather a copy. */
	n = 0;
	if (l3_off < rte_pktmbuf_data_len(m)) {
		hdrs = rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off);
		first = rte_pktmbuf_data_len(m) - l3_off;
		/* A zero-copy frame: the first segment is all headers, hashed in registers. */
		if (icrc_use_clmul && is_v4_small(hdrs, first) &&
		    first + (-first & 15) <= V4_ALIGNED_MAX)
			return icrc_chain(m, icrc_v4_clmul(hdrs, first), l3_off + first, len - first);
		n = masked_headers(hdrs, first, masked);
	}
	if (n == 0) {
		hdrs = rte_pktmbuf_read(m, l3_off, RTE_MIN(len, (uint32_t)sizeof(copy)), copy);
		n = masked_headers(hdrs, RTE_MIN(len, (uint32_t)sizeof(copy)), masked);
	}
	if (n == 0)
		return 0;
	crc = crc32_gzip_refl(DROCE_ICRC_LRH_STATE, masked, n);
	return icrc_chain(m, crc, l3_off + n, len - n);
}

