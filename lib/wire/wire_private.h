/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* Inside the wire library (and its unit tests): constants and helpers not part of the API. */
#ifndef DROCE_WIRE_PRIVATE_H
#define DROCE_WIRE_PRIVATE_H

#include <stdint.h>
#include <string.h>

/*
 * ISA-L's CRC-32 state after the 8 bytes of 0xFF that open every ICRC computation (they stand
 * for the masked LRH): crc32_gzip_refl(0, ff x 8, 8). Chaining from it skips hashing them.
 * test_wire_fastpath checks the value.
 */
#define DROCE_ICRC_LRH_STATE 0x2144df1cu

#endif /* DROCE_WIRE_PRIVATE_H */
