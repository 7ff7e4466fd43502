/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* Inside the wire library (and its unit tests): constants and helpers not part of the API. */
#ifndef DROCE_WIRE_PRIVATE_H
#define DROCE_WIRE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*
 * ISA-L's CRC-32 state after the 8 bytes of 0xFF that open every ICRC computation (they stand
 * for the masked LRH): crc32_gzip_refl(0, ff x 8, 8). Chaining from it skips hashing them.
 * wire_fastpath_test.c checks the value.
 */
#define DROCE_ICRC_LRH_STATE 0x2144df1cu

/*
 * Ones'-complement sum of a 20-byte IPv4 header (no options), folded to 16 bits in memory
 * order, as rte_raw_cksum() gives it: five 32-bit words instead of its 16-bit loop (2^16 is
 * 1 modulo 0xffff, so the sums agree). 0xffff when the checksum field is right.
 */
static inline uint16_t droce_ipv4_words_sum(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3,
					    uint32_t w4)
{
	uint64_t s = (uint64_t)w0 + w1 + w2 + w3 + w4;

	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	return (uint16_t)((s & 0xffffu) + (s >> 16));
}

static inline uint16_t droce_ipv4_hdr_sum(const void *ip)
{
	uint32_t w[5];

	memcpy(w, ip, sizeof(w));
	return droce_ipv4_words_sum(w[0], w[1], w[2], w[3], w[4]);
}

/* The ICRC of small frames (wire_icrc.c, wire_icrc_x86.c). */
#define WIRE_ICRC_SMALL_MAX 256		/**< frames up to this long take one CRC call */
#define WIRE_ICRC_V4_HDRS (20 + 8 + DROCE_BTH_LEN)	/**< IPv4 + UDP + BTH: masked bytes */
#define WIRE_ICRC_V4_ALIGNED_MAX 240	/**< ISA-L reads 16 bytes a step below 256 */
/** 0xff at the masked bytes of an IPv4 frame without options, by offset. */
extern const uint8_t wire_icrc_v4_mask[WIRE_ICRC_SMALL_MAX];
/** x86: the CPU has PCLMULQDQ and SSE4.1. */
bool wire_icrc_x86_clmul_usable(void);
/** x86: the ICRC of an IPv4 frame without options of WIRE_ICRC_V4_HDRS bytes or more, padded
 *  to 16 at most WIRE_ICRC_V4_ALIGNED_MAX: in registers (clmul), or through ISA-L (isal). */
uint32_t wire_icrc_x86_v4_clmul(const uint8_t *l3, uint32_t len);
uint32_t wire_icrc_x86_v4_isal(const uint8_t *l3, uint32_t len);

/** For tests: hash small IPv4 frames with PCLMULQDQ (the default where the CPU has it) or
 *  with ISA-L; and which is in use. */
void wire_icrc_clmul_set(bool on);
bool wire_icrc_clmul_get(void);

/** droce_icrc() over a contiguous buffer from a caller that knows the bytes exist. */
uint32_t wire_icrc_contig(const uint8_t *l3, uint32_t len);

#endif /* DROCE_WIRE_PRIVATE_H */
