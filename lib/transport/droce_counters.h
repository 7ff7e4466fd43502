/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * droce's counters (public): what was sent, received, retransmitted, and every frame
 * dropped, by reason. Read them per device with droce_query_counters() and per QP with
 * droce_query_qp_counters() (engine API, droce_engine.h).
 */
#ifndef DROCE_COUNTERS_H
#define DROCE_COUNTERS_H

#include <stdint.h>

#include "droce_wire_err.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Per-device counters, one uint64_t each, named by what they count so that nothing is dropped
 * silently. Each layer lists its own: engine_counters.def, then transport_counters.def, in
 * that order here and wherever the list is read by index (droce_counter_name()). The engine
 * keeps one struct per device; the transport increments its counters in the device's and the
 * QP's struct together (so a device's are the sum over its QPs) and counts each QP's own
 * frames in rx/tx_packets/bytes and rx_roce.
 */
struct droce_counters {
#define DROCE_COUNTER(name, disposition, desc) uint64_t name;
#include "engine_counters.def"
#include "transport_counters.def"
#undef DROCE_COUNTER
	uint64_t parse_err[DROCE_PARSE_ERR_NUM];        /**< rejected frames, by parser reason */
};

/** Name of counter @p i (the struct's fields in order), or NULL past the end. */
const char *droce_counter_name(unsigned int i);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_COUNTERS_H */
