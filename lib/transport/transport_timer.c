/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* The two IBA timers of an RC requester, converted to TSC ticks. */

#include <stdint.h>

#include <rte_common.h>

#include "transport_private.h"

/*
 * IBA 9.7.5.2.8, table 45 (RNR NAK timer field): code -> microseconds. Code 0 is the longest,
 * 655.36 ms.
 */
static const uint32_t rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

static uint64_t ns_to_ticks(uint64_t ns, uint64_t hz)
{
	/* ns * hz overflows 64 bits for the longest timeouts; split the multiplication. */
	return ns / 1000000000ull * hz + ns % 1000000000ull * hz / 1000000000ull;
}

/*
 * IBA 9.7.6.1.3 / C9-140: the local ACK timeout is 4.096 us * 2^timeout; 0 disables the timer
 * (the requester waits forever). Returns 0 for "never".
 */
uint64_t transport_rto_ticks(uint8_t timeout, uint64_t hz)
{
	uint64_t t;

	if (timeout == 0)
		return 0;
	t = ns_to_ticks(4096ull << RTE_MIN(timeout, 31), hz);
	return t == 0 ? 1 : t;
}

uint64_t transport_rnr_ticks(uint8_t code, uint64_t hz)
{
	uint64_t t = ns_to_ticks((uint64_t)rnr_us[code & 31] * 1000, hz);

	return t == 0 ? 1 : t;
}
