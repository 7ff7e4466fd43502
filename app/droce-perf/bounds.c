/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The physical bound of one core for the bytes droce must touch: the ICRC is computed over
 * every byte on send and again on receive (ISA-L crc32_gzip_refl, the library the wire layer
 * uses) and the payload is copied once into the target MR (memcpy). Per byte that costs
 * 2/crc_rate + 1/memcpy_rate seconds, so goodput on one core is at most
 * 1 / (2/crc_rate + 1/memcpy_rate). Both are measured here on the calling core, over the
 * run's message size in the pieces droce works in: one CRC and one copy per packet, i.e. per
 * path MTU of payload (a 64 KiB message at MTU 1024 is 64 CRC calls of 1 KiB, not one of
 * 64 KiB, and the rate per call differs by a factor of ~4 on this machine).
 */
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_cycles.h>

#include "perf.h"

#define PERF_BOUND_S 0.05

static volatile uint32_t perf_bounds_sink;

/* Repeat @p fn over @p size bytes, @p chunk bytes a call, for about PERF_BOUND_S;
 * @return GB/s (1e9 bytes). */
static double rate(uint32_t size, uint32_t chunk, uint8_t *a, uint8_t *b,
		   void (*fn)(uint8_t *dst, const uint8_t *src, uint32_t n, uint32_t *acc),
		   uint32_t *acc)
{
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc(), end = t0 + (uint64_t)(PERF_BOUND_S * hz);
	uint64_t bytes = 0, now;
	uint32_t off;
	uint32_t i, batch = size < 65536 ? 65536 / size : 1;	/* the TSC read stays negligible */

	do {
		for (i = 0; i < batch; i++)
			for (off = 0; off < size; off += chunk)
				fn(b + off, a + off, RTE_MIN(chunk, size - off), acc);
		bytes += (uint64_t)size * batch;
		now = rte_rdtsc();
	} while (now < end);
	return (double)bytes / ((double)(now - t0) / (double)hz) / 1e9;
}

static void do_memcpy(uint8_t *dst, const uint8_t *src, uint32_t n, uint32_t *acc)
{
	memcpy(dst, src, n);
	*acc += dst[n - 1];	/* keeps the copy */
}

static void do_crc(uint8_t *dst, const uint8_t *src, uint32_t n, uint32_t *acc)
{
	(void)dst;
	*acc = crc32_gzip_refl(*acc, src, (uint64_t)n);
}

void perf_bounds_measure(uint32_t size, uint32_t mtu, struct perf_refs *refs)
{
	uint32_t chunk = RTE_MIN(size, mtu);

	uint32_t n = size < 64 ? 64 : size, acc = 0;
	uint8_t *a = aligned_alloc(4096, ((size_t)n + 4095) & ~(size_t)4095);
	uint8_t *b = aligned_alloc(4096, ((size_t)n + 4095) & ~(size_t)4095);

	refs->memcpy_gbs = refs->crc_gbs = refs->bound_gbs = 0;
	if (a == NULL || b == NULL)
		goto out;
	memset(a, 0x5a, n);
	memset(b, 0, n);
	refs->memcpy_gbs = rate(size, chunk, a, b, do_memcpy, &acc);
	refs->crc_gbs = rate(size, chunk, a, b, do_crc, &acc);
	refs->bound_gbs = 1.0 / (2.0 / refs->crc_gbs + 1.0 / refs->memcpy_gbs);
	perf_bounds_sink = acc;	/* the loops' results are used */
out:
	free(a);
	free(b);
}
