/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * 24-bit packet sequence number arithmetic (IBA 9.7.1). PSNs live in [0, 2^24) and wrap; two
 * PSNs are ordered by their signed 24-bit difference, which is meaningful while they are less
 * than 2^23 apart (the IBA window).
 */
#ifndef DROCE_WIRE_PSN_H
#define DROCE_WIRE_PSN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DROCE_PSN_BITS   24
#define DROCE_PSN_MOD    (1u << DROCE_PSN_BITS)
#define DROCE_PSN_MAX    (DROCE_PSN_MOD - 1)
/** Largest distance at which PSN ordering is defined (IBA 9.7.1.1: half the space). */
#define DROCE_PSN_WINDOW (DROCE_PSN_MOD / 2)

/** @p psn + @p n, wrapped to 24 bits. */
static inline uint32_t droce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & DROCE_PSN_MAX;
}

/** Signed distance from @p b to @p a in [-2^23, 2^23): > 0 when @p a is after @p b. */
static inline int32_t droce_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & DROCE_PSN_MAX;

	return d >= DROCE_PSN_WINDOW ? (int32_t)d - (int32_t)DROCE_PSN_MOD : (int32_t)d;
}

static inline int droce_psn_lt(uint32_t a, uint32_t b)
{
	return droce_psn_diff(a, b) < 0;
}

static inline int droce_psn_le(uint32_t a, uint32_t b)
{
	return droce_psn_diff(a, b) <= 0;
}

/** True when @p psn is in [@p base, @p base + @p size), with wrap. */
static inline int droce_psn_in_window(uint32_t psn, uint32_t base, uint32_t size)
{
	return ((psn - base) & DROCE_PSN_MAX) < size;
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_PSN_H */
