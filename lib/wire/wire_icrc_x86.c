/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The ICRC of the usual small frame (IPv4 without options, up to WIRE_ICRC_V4_ALIGNED_MAX bytes
 * from the IP header) on x86: in registers with carry-less multiplication, or through ISA-L over
 * a copy aligned to its loads. Built on x86 only; wire_icrc.c chooses at start-up.
 */
#include <stdbool.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_common.h>
#include <rte_cpuflags.h>
#include <smmintrin.h>
#include <tmmintrin.h>
#include <wmmintrin.h>

#include "droce_wire.h"
#include "wire_private.h"

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
static const uint64_t fold_k[WIRE_ICRC_V4_ALIGNED_MAX / 16][2] __rte_aligned(16) = {
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

bool wire_icrc_x86_clmul_usable(void)
{
	return rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0 &&
	       rte_cpu_get_flag_enabled(RTE_CPUFLAG_SSE4_1) > 0;
}

#define CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

/* The 16 bytes of the frame at @p off, masked. */
CLMUL_TARGET static __rte_always_inline __m128i v4_block(const uint8_t *l3, int32_t off)
{
	return _mm_or_si128(load16(l3 + off), load16(wire_icrc_v4_mask + off));
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

/* An IPv4 frame of @p len bytes from the IP header (V4_HDRS..WIRE_ICRC_V4_ALIGNED_MAX). */
CLMUL_TARGET uint32_t wire_icrc_x86_v4_clmul(const uint8_t *l3, uint32_t len)
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

/* Without PCLMULQDQ: the masked frame copied with 16-byte stores where ISA-L's loads will
 * read them (wire_icrc.c says why), then one ISA-L call. */
__attribute__((target("ssse3"))) uint32_t wire_icrc_x86_v4_isal(const uint8_t *l3, uint32_t len)
{
	uint32_t pad = -len & 15, n = (len + pad) / 16, i;
	__m128i buf[WIRE_ICRC_V4_ALIGNED_MAX / 16];

	buf[0] = _mm_shuffle_epi8(_mm_or_si128(load16(l3), load16(wire_icrc_v4_mask)),
				  load16(shift_up + 16 - pad));
	for (i = 1; i < n; i++)
		buf[i] = _mm_or_si128(load16(l3 + 16 * i - pad),
				      load16(wire_icrc_v4_mask + 16 * i - pad));
	return crc32_gzip_refl(icrc_zeros_state[pad], (const uint8_t *)buf, 16 * n);
}
