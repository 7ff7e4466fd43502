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

#include "droce_wire.h"
#include "wire_private.h"

/* The largest IPv4 header (60) + UDP (8) + BTH (12). */
#define MASKED_MAX (60 + 8 + DROCE_BTH_LEN)
#define SMALL_MAX WIRE_ICRC_SMALL_MAX
#define V4_HDRS WIRE_ICRC_V4_HDRS

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

/* By offset from the IPv4 header: 0xff where the ICRC masks (TOS, TTL, checksum, UDP
 * checksum, BTH byte 4), 0 elsewhere; long enough for any 16-byte window of a small frame. */
const uint8_t wire_icrc_v4_mask[WIRE_ICRC_SMALL_MAX] = {
	[1] = 0xff, [8] = 0xff, [10] = 0xff, [11] = 0xff,
	[20 + 6] = 0xff, [20 + 7] = 0xff, [20 + 8 + 4] = 0xff,
};

/* The usual frame without vector instructions: a masked copy, one ISA-L call. */
static uint32_t icrc_v4_copy(const uint8_t *l3, uint32_t len)
{
	uint8_t copy[SMALL_MAX];

	memcpy(copy, l3, len);
	for (uint32_t i = 0; i < V4_HDRS; i++)
		copy[i] |= wire_icrc_v4_mask[i];
	return crc32_gzip_refl(DROCE_ICRC_LRH_STATE, copy, len);
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
 *
 * How it is hashed is chosen at start-up from what the CPU has, as DPDK's rte_net_crc chooses
 * its handlers: in registers with carry-less multiplication (wire_icrc_x86.c), else ISA-L over
 * a copy aligned to its loads (x86 without PCLMULQDQ), else ISA-L over a plain masked copy.
 * icrc_v4_regs is the register version when chosen (zero-copy header segments use it).
 */
static uint32_t (*icrc_v4_aligned)(const uint8_t *l3, uint32_t len) = icrc_v4_copy;
static uint32_t (*icrc_v4_regs)(const uint8_t *l3, uint32_t len);

void wire_icrc_clmul_set(bool on)
{
#ifdef RTE_ARCH_X86
	on = on && wire_icrc_x86_clmul_usable();
	icrc_v4_regs = on ? wire_icrc_x86_v4_clmul : NULL;
	icrc_v4_aligned = on ? wire_icrc_x86_v4_clmul : wire_icrc_x86_v4_isal;
#else
	(void)on;
#endif
}

bool wire_icrc_clmul_get(void)
{
	return icrc_v4_regs != NULL;
}

RTE_INIT(icrc_choose)
{
	wire_icrc_clmul_set(true);
}

/* An IPv4 frame without options of V4_HDRS..SMALL_MAX bytes from the IP header. */
static inline uint32_t icrc_v4_small(const uint8_t *l3, uint32_t len)
{
	if (likely(len + (-len & 15) <= WIRE_ICRC_V4_ALIGNED_MAX))
		return icrc_v4_aligned(l3, len);
	return icrc_v4_copy(l3, len);
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
		if (icrc_v4_regs != NULL && is_v4_small(hdrs, first) &&
		    first + (-first & 15) <= WIRE_ICRC_V4_ALIGNED_MAX)
			return icrc_chain(m, icrc_v4_regs(hdrs, first), l3_off + first, len - first);
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

