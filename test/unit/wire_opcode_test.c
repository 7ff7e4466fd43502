/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Proves the opcode table: each entry's extension headers are contiguous in wire order and add
 * up to its header length; lengths match the IBA header sizes for every opcode; names and enum
 * come from the same list; unknown opcodes are empty; the semantic bits are consistent.
 */

#include <string.h>

#include "droce_wire.h"
#include "check.h"

static const uint8_t ext_len[DROCE_HDR_NUM] = {
#define LEN(h) [DROCE_HDR_##h] = DROCE_##h##_LEN,
	DROCE_EXT_HEADERS(LEN)
#undef LEN
};

/* Walk the headers an entry says it has, in wire order: offsets must be where the sum says. */
static void check_offsets(unsigned int op, const struct droce_opcode_info *e)
{
	unsigned int at = DROCE_BTH_LEN;

	for (unsigned int h = 0; h < DROCE_HDR_PAYLOAD; h++) {
		if (e->mask & (1u << h)) {
			EXPECT_EQ(e->offset[h], at, "opcode 0x%02x header %u at %u, expected %u",
				 op, h, e->offset[h], at);
			at += ext_len[h];
		} else {
			EXPECT_EQ(e->offset[h], 0, "opcode 0x%02x absent header %u has offset", op, h);
		}
	}
	EXPECT_EQ(e->length, at, "opcode 0x%02x length %u, headers sum to %u", op, e->length, at);
	EXPECT_EQ(e->offset[DROCE_HDR_PAYLOAD], at, "opcode 0x%02x payload offset", op);
}

/* Header lengths written out from IBA 9.2 by hand, independent of the table's macros. */
static const struct { uint8_t op; uint8_t len; } iba_lengths[] = {
	{ DROCE_OP_RC_SEND_FIRST, 12 }, { DROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE, 16 },
	{ DROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE, 16 }, { DROCE_OP_RC_RDMA_WRITE_FIRST, 28 },
	{ DROCE_OP_RC_RDMA_WRITE_MIDDLE, 12 }, { DROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 32 },
	{ DROCE_OP_RC_RDMA_READ_REQUEST, 28 }, { DROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, 16 },
	{ DROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 12 }, { DROCE_OP_RC_ACKNOWLEDGE, 16 },
	{ DROCE_OP_RC_ATOMIC_ACKNOWLEDGE, 24 }, { DROCE_OP_RC_COMPARE_SWAP, 40 },
	{ DROCE_OP_RC_FETCH_ADD, 40 }, { DROCE_OP_RC_FLUSH, 32 }, { DROCE_OP_RC_ATOMIC_WRITE, 28 },
	{ DROCE_OP_UC_SEND_ONLY, 12 }, { DROCE_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 32 },
	{ DROCE_OP_UD_SEND_ONLY, 20 }, { DROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE, 24 },
	{ DROCE_OP_CNP, 28 },
};

static void check_semantics(unsigned int op, const struct droce_opcode_info *e)
{
	uint32_t m = e->mask;
	int pos = !!(m & DROCE_M_FIRST) + !!(m & DROCE_M_MIDDLE) * 2 + !!(m & DROCE_M_LAST);

	EXPECT(pos != 0, "opcode 0x%02x has no first/middle/last position", op);
	EXPECT(!(m & DROCE_M_MIDDLE) || !(m & (DROCE_M_FIRST | DROCE_M_LAST)),
	      "opcode 0x%02x middle and first/last", op);
	EXPECT(!((m & DROCE_M_REQ) && (m & DROCE_M_RESP)), "opcode 0x%02x both req and resp", op);
	EXPECT(!!(m & DROCE_M_IMM) == !!(m & DROCE_M_IMMDT), "opcode 0x%02x IMM vs ImmDt", op);
	EXPECT(!!(m & DROCE_M_INV) == !!(m & DROCE_M_IETH), "opcode 0x%02x INV vs IETH", op);
	EXPECT(!(m & DROCE_M_COMP) || (m & DROCE_M_RWR), "opcode 0x%02x COMP without RWR", op);
	EXPECT(!(m & DROCE_M_COMP) || (m & DROCE_M_LAST), "opcode 0x%02x COMP not last", op);
	/* A WRITE carries its RETH in its first packet only (IBA 9.4.3). */
	if (m & DROCE_M_WRITE)
		EXPECT(!!(m & DROCE_M_RETH) == !!(m & DROCE_M_FIRST), "opcode 0x%02x RETH", op);
	if (droce_opcode_transport(op) == DROCE_TRANSPORT_UD)
		EXPECT(m & DROCE_M_DETH, "UD opcode 0x%02x without DETH", op);
	if (droce_opcode_transport(op) == DROCE_TRANSPORT_UC)
		EXPECT(!(m & (DROCE_M_RESP | DROCE_M_READ | DROCE_M_ATOMIC)),
		      "UC opcode 0x%02x with RC-only semantics", op);
}

int main(void)
{
	unsigned int known = 0;

	for (unsigned int op = 0; op < 256; op++) {
		const struct droce_opcode_info *e = droce_opcode_info(op);

		if (e->mask == 0) {
			static const struct droce_opcode_info zero;

			EXPECT(memcmp(e, &zero, sizeof(zero)) == 0, "unknown 0x%02x not empty", op);
			EXPECT(strcmp(droce_opcode_name(op), "UNKNOWN") == 0, "name of 0x%02x", op);
			continue;
		}
		known++;
		EXPECT(e->name != NULL, "opcode 0x%02x has no name", op);
		check_offsets(op, e);
		check_semantics(op, e);
	}
	/* RC 0x00-0x14, 0x16, 0x17, 0x1c, 0x1d; UC 0x20-0x2b; UD 0x64, 0x65; CNP 0x81 */
	EXPECT_EQ(known, 21 + 2 + 2 + 12 + 2 + 1, "known opcodes: %u", known);

	for (size_t i = 0; i < RTE_DIM(iba_lengths); i++)
		EXPECT_EQ(droce_opcode_info(iba_lengths[i].op)->length, iba_lengths[i].len,
			 "%s length", droce_opcode_name(iba_lengths[i].op));

	/* The enum, the names and the table come from one list. */
#define NAME_CHECK(nm, value, m) \
	EXPECT(strcmp(droce_opcode_name(DROCE_OP_##nm), #nm) == 0, "name of " #nm); \
	EXPECT_EQ(droce_opcode_info(value)->mask, (uint32_t)(m), "mask of " #nm);
	DROCE_OPCODES(NAME_CHECK)
#undef NAME_CHECK

	EXPECT_EQ(droce_opcode_transport(DROCE_OP_UC_SEND_FIRST), DROCE_TRANSPORT_UC, "UC");
	EXPECT_EQ(droce_opcode_transport(DROCE_OP_UD_SEND_ONLY), DROCE_TRANSPORT_UD, "UD");
	EXPECT_EQ(droce_opcode_transport(DROCE_OP_CNP), DROCE_TRANSPORT_CNP, "CNP");
	return test_done("wire_opcode_test");
}
