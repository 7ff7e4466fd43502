/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * Why the parser rejects a frame (enum droce_parse_err), apart from the parser itself so that
 * the counters (droce_counters.h) can size their arrays without pulling in DPDK's headers.
 */
#ifndef DROCE_WIRE_ERR_H
#define DROCE_WIRE_ERR_H

#ifdef __cplusplus
extern "C" {
#endif

/** Why a frame was rejected: X(NAME, description). */
#define DROCE_PARSE_ERRORS(X) \
	X(TRUNCATED,          "frame shorter than its headers") \
	X(HDR_SPLIT,          "headers not contiguous in the first segment") \
	X(NOT_IP,             "ethertype is neither IPv4 nor IPv6") \
	X(BAD_IP_VERSION,     "IP version does not match the ethertype") \
	X(BAD_IHL,            "IPv4 header length below 20 bytes") \
	X(BAD_IP_LEN,         "IP length inconsistent with the frame") \
	X(BAD_IP_CSUM,        "IPv4 header checksum wrong") \
	X(IP_FRAGMENT,        "IP fragment") \
	X(NOT_UDP,            "IP payload is not UDP") \
	X(NOT_ROCE_PORT,      "UDP destination port is not 4791") \
	X(BAD_UDP_LEN,        "UDP length inconsistent with the IP length") \
	X(BAD_TVER,           "BTH transport version is not 0") \
	X(UNKNOWN_OPCODE,     "BTH opcode unknown or unsupported") \
	X(BAD_HDR_LEN,        "too short for the opcode's headers and ICRC") \
	X(UNEXPECTED_PAYLOAD, "payload on an opcode that carries none") \
	X(BAD_PAD,            "payload and pad not a multiple of 4, or pad exceeds them") \
	X(BAD_ICRC,           "ICRC mismatch")

enum droce_parse_err {
	DROCE_PARSE_OK = 0,
#define DROCE_PARSE_ERR_ENUM(name, desc) DROCE_PARSE_##name,
	DROCE_PARSE_ERRORS(DROCE_PARSE_ERR_ENUM)
#undef DROCE_PARSE_ERR_ENUM
	DROCE_PARSE_ERR_NUM
};

/** Short name ("BAD_ICRC") of a parse result; "OK" for 0, "INVALID" out of range. */
const char *droce_parse_err_name(enum droce_parse_err err);
/** One-line description of a parse result. */
const char *droce_parse_err_str(enum droce_parse_err err);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_ERR_H */
