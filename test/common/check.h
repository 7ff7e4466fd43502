/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The C tests' checks, two kinds:
 * - CHECK(c), CHECK_EQ(a, b): fail fast — a failed check says where, what and errno, and the
 *   test exits 1 (the verbs, transport, engine, functional, cm and compat tests);
 * - EXPECT(c, fmt, ...), EXPECT_EQ(a, b, fmt, ...): count — a failed expectation is printed
 *   (the first 50) and the test goes on; test_done() prints the tally and gives the exit
 *   status (the wire unit tests, which check thousands of cases).
 */
#ifndef DROCE_TEST_CHECK_H
#define DROCE_TEST_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define TEST_SKIP 77

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

static unsigned int test_checks __attribute__((unused)), test_failures __attribute__((unused));

#define EXPECT(cond, ...) do { \
	test_checks++; \
	if (!(cond)) { \
		if (++test_failures <= 50) { \
			fprintf(stderr, "%s:%d: expectation failed: %s: ", __FILE__, __LINE__, \
				#cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} \
} while (0)

#define EXPECT_EQ(a, b, ...) EXPECT((a) == (b), __VA_ARGS__)

/* Print the tally of EXPECT()s and return the exit status. */
static inline __attribute__((unused)) int test_done(const char *name)
{
	printf("%s: %u checks, %u failed\n", name, test_checks, test_failures);
	return test_failures == 0 ? 0 : 1;
}

#endif
