/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* Counter names, from the one list in droce_counters.h. */

#include <stddef.h>

#include <rte_common.h>

#include "droce_counters.h"

static const char *const names[] = {
#define COUNTER_NAME(name, desc) #name,
	DROCE_COUNTERS(COUNTER_NAME)
#undef COUNTER_NAME
};

const char *droce_counter_name(unsigned int i)
{
	return i < RTE_DIM(names) ? names[i] : NULL;
}
