/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Fail-fast checks for the verbs, transport, engine and functional tests: a failed check says
 * where, what and errno, and exits 1. (The unit tests count failures instead: droce_test.h.)
 */
#ifndef DROCE_TEST_CHECK_H
#define DROCE_TEST_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { \
	if (!(c)) { \
		fprintf(stderr, "%s:%d: CHECK(%s) failed (errno %d)\n", __FILE__, __LINE__, #c, \
			errno); \
		exit(1); \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { \
		fprintf(stderr, "%s:%d: %s == %lld (0x%llx), expected %s == %lld (0x%llx)\n", \
			__FILE__, __LINE__, #a, a_, a_, #b, b_, b_); \
		exit(1); \
	} \
} while (0)

#endif
