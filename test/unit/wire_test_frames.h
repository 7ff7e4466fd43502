/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* Frames for the wire tests: flows, header fields that differ per frame, payload sizes. */
#ifndef WIRE_TEST_FRAMES_H
#define WIRE_TEST_FRAMES_H

#include <string.h>

#include "droce_wire.h"

#define FRAME_MAX 8192

static const uint32_t payload_sizes[] = {
	0, 1, 2, 3, 4, 5, 7, 8, 255, 256, 1023, 1024, 1025, 2047, 2048, 4095, 4096,
};

static inline void test_flow(struct droce_flow *f, int ipv6)
{
	static const uint8_t v6s[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x47, 0, 0xff, 0xfe, 0, 0, 0x64 };
	static const uint8_t v6d[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x47, 0x02 };
	static const uint8_t v4s[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 47, 0, 100 };
	static const uint8_t v4d[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 47, 0, 2 };
	const struct rte_ether_addr smac = { { 0x02, 0x47, 0, 0, 0, 0x64 } };
	const struct rte_ether_addr dmac = { { 0x52, 0x54, 0, 0x47, 0, 0x02 } };

	memset(f, 0, sizeof(*f));
	f->src_mac = smac;
	f->dst_mac = dmac;
	f->ipv6 = ipv6;
	f->tclass = ipv6 ? 0x28 : 0;
	f->flow_label = ipv6 ? 0x12345 : 0;
	f->sport = droce_flow_sport(0x11, 0x2d);
	memcpy(f->sgid, ipv6 ? v6s : v4s, 16);
	memcpy(f->dgid, ipv6 ? v6d : v4d, 16);
}

/* Header fields that differ with @seed, valid for any opcode. */
static inline void test_fields(struct droce_hdr_fields *h, uint8_t opcode, uint32_t seed)
{
	memset(h, 0, sizeof(*h));
	h->opcode = opcode;
	h->se = seed & 1;
	h->ackreq = (seed >> 1) & 1;
	h->fecn = (seed >> 2) & 1;
	h->becn = (seed >> 3) & 1;
	h->pkey = 0xffff - (seed & 0xff);
	h->dqpn = 0x2d + seed * 7;
	h->psn = (0xfffff0 + seed * 3) & DROCE_PSN_MASK;
	h->reth.va = 0x7f0012345000ull + seed * 64;
	h->reth.rkey = 0x1234 + seed;
	h->reth.len = 4096 + seed;
	h->aeth.syndrome = seed & 0x7f;
	h->aeth.msn = 0xabcde + seed;
	h->atomic.va = 0x7f0000001000ull + seed * 8;
	h->atomic.rkey = 0x5678 + seed;
	h->atomic.swap_add = 0x0102030405060708ull + seed;
	h->atomic.cmp = 0x1112131415161718ull + seed;
	h->atomic_orig = 0x2122232425262728ull + seed;
	h->imm = rte_cpu_to_be_32(0xdead0000 + seed);
	h->ieth_rkey = 0x9abc + seed;
	h->deth.qkey = 0x11111111 + seed;
	h->deth.sqpn = 0x100 + seed;
	h->feth.sel = seed & 3;
	h->feth.plt = (seed >> 2) & 3;
}

static inline void test_payload(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

#endif
