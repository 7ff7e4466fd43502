/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* The opcode table, generated from DROCE_OPCODES. */

#include "droce_wire_opcode.h"

/* Offset of header h when the mask says it is present; 0 otherwise. */
#define OFF(m, h) (((m) & DROCE_M_##h) ? DROCE_OFF_##h(m) : 0)

#define OPCODE_ENTRY(nm, value, m) \
	[value] = { \
		.name = #nm, \
		.mask = (m), \
		.length = DROCE_OFF_PAYLOAD(m), \
		.offset = { \
			[DROCE_HDR_DETH] = OFF(m, DETH), \
			[DROCE_HDR_FETH] = OFF(m, FETH), \
			[DROCE_HDR_RETH] = OFF(m, RETH), \
			[DROCE_HDR_ATMETH] = OFF(m, ATMETH), \
			[DROCE_HDR_AETH] = OFF(m, AETH), \
			[DROCE_HDR_ATMACK] = OFF(m, ATMACK), \
			[DROCE_HDR_IMMDT] = OFF(m, IMMDT), \
			[DROCE_HDR_IETH] = OFF(m, IETH), \
			[DROCE_HDR_CNPETH] = OFF(m, CNPETH), \
			[DROCE_HDR_PAYLOAD] = DROCE_OFF_PAYLOAD(m), \
		}, \
	},

const struct droce_opcode_info droce_opcode_table[256] = {
	DROCE_OPCODES(OPCODE_ENTRY)
};
