/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* Counter names, from the one list in droce_counters.h; a QP's own counters. */

#include <stddef.h>

#include <rte_common.h>

#include "droce_counters.h"
#include "transport_private.h"

static const char *const names[] = {
#define COUNTER_NAME(name, desc) #name,
	DROCE_COUNTERS(COUNTER_NAME)
#undef COUNTER_NAME
};

const char *droce_counter_name(unsigned int i)
{
	return i < RTE_DIM(names) ? names[i] : NULL;
}

struct droce_counters *transport_qp_counters(struct transport_qp *t)
{
	return &t->cnt;
}
