/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * libFuzzer target for the RoCE v2 parser: any byte string, parsed as a frame in an exact-size
 * buffer, must be rejected with a named reason or accepted with a consistent view; and an
 * accepted frame's ICRC, recomputed, must match what the parser checked. And with or without
 * the ICRC check, the result and the view equal those of the wire code before its fast paths
 * (test/unit/wire_ref.c), so the fuzzer hunts for any frame on which the two disagree.
 */

#include <stdlib.h>
#include <string.h>

#include "droce_wire.h"
#include "wire_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* droce_parse() and the frozen reference agree on @data. */
static void same_as_reference(const uint8_t *data, uint32_t size, uint32_t flags)
{
	struct droce_pkt a, b;
	enum droce_parse_err e = droce_parse(data, size, flags, &a);

	if (ref_parse(data, size, flags, &b) != e || (ref_view_complete(e) && !ref_pkt_same(&a, &b)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct droce_pkt pkt;
	enum droce_parse_err e;

	if (size > 65536)
		return 0;
	same_as_reference(data, (uint32_t)size, 0);
	same_as_reference(data, (uint32_t)size, DROCE_PARSE_NO_ICRC);
	e = droce_parse(data, (uint32_t)size, DROCE_PARSE_NO_ICRC, &pkt);
	if ((unsigned int)e >= DROCE_PARSE_ERR_NUM)
		abort();
	if (e != DROCE_PARSE_OK)
		return 0;
	if (pkt.frame_len > size ||
	    pkt.payload_off + pkt.payload_len + pkt.pad + DROCE_ICRC_LEN != pkt.frame_len ||
	    !droce_opcode_known(pkt.opcode))
		abort();
	/* Touch every byte the view points at, so ASan checks the bounds. */
	{
		volatile uint8_t sink = 0;

		for (uint32_t i = 0; i < pkt.payload_len; i++)
			sink ^= pkt.hdr[pkt.payload_off + i];
		(void)sink;
	}
	if (droce_parse(data, (uint32_t)size, 0, &pkt) == DROCE_PARSE_OK &&
	    droce_icrc(pkt.hdr + pkt.l3_off, pkt.frame_len - pkt.l3_off - DROCE_ICRC_LEN) != pkt.icrc)
		abort();
	return 0;
}
