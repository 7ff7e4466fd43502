/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* Compile-time limits. Runtime settings (ports, addresses, pools) come from INI files. */
#ifndef DROCE_CONFIG_H
#define DROCE_CONFIG_H

/** UDP destination port of RoCE v2 (IANA). */
#define DROCE_ROCEV2_PORT 4791
/** RoCE v2 UDP source ports are taken from this range (IBTA A17.3.6.1: 0xC000-0xFFFF). */
#define DROCE_SPORT_BASE 0xC000u
#define DROCE_SPORT_MASK 0x3FFFu

#endif
