/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* Proves 24-bit PSN arithmetic: wrap on add, ordering across the wrap, window membership. */

#include "droce_wire.h"
#include "check.h"

int main(void)
{
	EXPECT_EQ(droce_psn_add(0xfffffe, 1), 0xffffffu, "add");
	EXPECT_EQ(droce_psn_add(0xffffff, 1), 0u, "add wraps");
	EXPECT_EQ(droce_psn_add(0xfffff0, 0x20), 0x10u, "add wraps by 0x20");
	EXPECT_EQ(droce_psn_add(5, 0x1000000), 5u, "add 2^24 is identity");

	EXPECT_EQ(droce_psn_diff(10, 3), 7, "diff");
	EXPECT_EQ(droce_psn_diff(3, 10), -7, "diff negative");
	EXPECT_EQ(droce_psn_diff(2, 0xfffffe), 4, "diff across wrap");
	EXPECT_EQ(droce_psn_diff(0xfffffe, 2), -4, "diff across wrap, negative");
	EXPECT_EQ(droce_psn_diff(0x7fffff, 0), 0x7fffff, "largest positive distance");
	EXPECT_EQ(droce_psn_diff(0x800000, 0), -0x800000, "half the space is 'before'");
	EXPECT_EQ(droce_psn_diff(0x12345678, 0x345678), 0, "high bits ignored");

	EXPECT(droce_psn_lt(0xffffff, 0), "0xffffff before 0");
	EXPECT(!droce_psn_lt(0, 0xffffff), "0 not before 0xffffff");
	EXPECT(droce_psn_le(7, 7) && !droce_psn_lt(7, 7), "le/lt on equal");

	EXPECT(droce_psn_in_window(0xfffffe, 0xfffffe, 1), "window of 1");
	EXPECT(droce_psn_in_window(1, 0xfffffe, 4), "window across wrap");
	EXPECT(!droce_psn_in_window(2, 0xfffffe, 4), "just past the window");
	EXPECT(!droce_psn_in_window(0xfffffd, 0xfffffe, 4), "just before the window");
	EXPECT(!droce_psn_in_window(5, 5, 0), "empty window");

	/* Exhaustive around the wrap: a + n is after a for 0 < n < 2^23. */
	for (uint32_t a = 0xffff00; a != 0x100; a = droce_psn_add(a, 1))
		for (uint32_t n = 1; n < 0x800000; n = n * 3 + 1)
			EXPECT(droce_psn_diff(droce_psn_add(a, n), a) == (int32_t)n, "a=%x n=%x", a, n);
	return test_done("wire_psn_test");
}
