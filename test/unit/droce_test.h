/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* A minimal harness for droce's C tests: count checks, print failures, exit 0/1/77. */
#ifndef DROCE_TEST_H
#define DROCE_TEST_H

#include <stdio.h>
#include <stdlib.h>

#define TEST_SKIP 77

static unsigned int test_checks, test_failures;

/* Record a check; print it when it fails (at most 50 lines, then only count). */
#define CHECK(cond, ...) do { \
	test_checks++; \
	if (!(cond)) { \
		if (++test_failures <= 50) { \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} \
} while (0)

#define CHECK_EQ(a, b, ...) CHECK((a) == (b), __VA_ARGS__)

/* Print the tally and return the exit status. */
static inline int test_done(const char *name)
{
	printf("%s: %u checks, %u failed\n", name, test_checks, test_failures);
	return test_failures == 0 ? 0 : 1;
}

#endif
