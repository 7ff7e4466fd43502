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
#include <tmmintrin.h>

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

/* crc32_gzip_refl(icrc_zeros_state[p], p zero bytes) == DROCE_ICRC_LRH_STATE (a unit test
 * checks it): the 32 CRC steps of each zero byte undone from that state, bit by bit. */
static const uint32_t icrc_zeros_state[16] = {
	0x2144df1cu, 0xff41d912u, 0x41d912ffu, 0xd202ef8du,
	0x00000000u, 0x0f6a7026u, 0x65e3626fu, 0x5cd1d97eu,
	0x6dd90a9du, 0x0b840633u, 0x50b362e9u, 0xb979a556u,
	0x101b2f50u, 0xce3f7abcu, 0x51f45351u, 0x25391b17u,
};

/* By offset from the IPv4 header: 0xff where V4 masks (TOS, TTL, checksum, UDP checksum,
 * BTH byte 4), 0 elsewhere; long enough for any 16-byte window of a small frame. */
static const uint8_t v4_mask[SMALL_MAX] = {
	[1] = 0xff, [8] = 0xff, [10] = 0xff, [11] = 0xff,
	[20 + 6] = 0xff, [20 + 7] = 0xff, [20 + 8 + 4] = 0xff,
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

static inline uint32_t icrc_v4_small(const uint8_t *l3, uint32_t len)
{
	uint32_t pad = -len & 15, n = (len + pad) / 16, i;
	__m128i buf[V4_ALIGNED_MAX / 16];
	uint8_t copy[SMALL_MAX];

	if (likely(len + pad <= V4_ALIGNED_MAX)) {
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

uint32_t droce_icrc_contig(const uint8_t *l3, uint32_t len)
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
	return droce_icrc_contig(l3, len);
}

uint32_t droce_icrc_mbuf(const struct rte_mbuf *m, uint32_t l3_off, uint32_t len)
{
	uint8_t masked[MASKED_MAX], copy[MASKED_MAX];
	uint32_t n, crc, off, left;
	const uint8_t *hdrs;

	if (m == NULL || len == 0 || (uint64_t)l3_off + len > rte_pktmbuf_pkt_len(m))
		return 0;
	if (l3_off + len <= rte_pktmbuf_data_len(m))
		return droce_icrc_contig(rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off), len);
	/* The headers are usually in the first segment (a zero-copy frame's payload follows in
	 * other segments); when a chain splits them, gather a copy. */
	n = 0;
	if (l3_off < rte_pktmbuf_data_len(m))
		n = masked_headers(rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off),
				   rte_pktmbuf_data_len(m) - l3_off, masked);
	if (n == 0) {
		hdrs = rte_pktmbuf_read(m, l3_off, RTE_MIN(len, (uint32_t)sizeof(copy)), copy);
		n = masked_headers(hdrs, RTE_MIN(len, (uint32_t)sizeof(copy)), masked);
	}
	if (n == 0)
		return 0;
	crc = crc32_gzip_refl(DROCE_ICRC_LRH_STATE, masked, n);

	/* The rest may span segments: walk them. */
	off = l3_off + n;
	left = len - n;
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
