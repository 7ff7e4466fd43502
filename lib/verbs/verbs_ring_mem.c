/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Memory of the CQ and work queue rings. A ring of a mebibyte or more is mapped on its own:
 * its pages stay untouched (zero) until the ring reaches them, however deep the application
 * asked for (a CQ of the maximum 2^20 entries is 48 MiB, and a program that sizes its CQs for
 * the worst case uses a corner of them), it goes back to the system when destroyed, and no
 * one clears it in advance (calloc() does for heap chunks, and for every chunk when
 * MALLOC_PERTURB_ is set). Smaller rings come from the heap.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "verbs_private.h"

#define RING_MAP_MIN ((size_t)1 << 20)

void *verbs_ring_mem_alloc(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	bytes = n * size;
	if (bytes < RING_MAP_MIN)
		return calloc(n, size);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void verbs_ring_mem_free(void *p, size_t n, size_t size)
{
	if (p == NULL)
		return;
	if (n * size < RING_MAP_MIN)
		free(p);
	else
		munmap(p, n * size);
}
