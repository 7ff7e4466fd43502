/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * The RoCE v2 opcode table: for each BTH opcode of RC, UC, UD and CNP, which extension headers
 * it carries and where, whether it carries payload, and what it means (request or response,
 * first/middle/last packet of a message, SEND/WRITE/READ/ATOMIC).
 *
 * The enum, the names and the table are generated from one list, DROCE_OPCODES.
 */
#ifndef DROCE_WIRE_OPCODE_H
#define DROCE_WIRE_OPCODE_H

#include <stdint.h>

#include "droce_wire_hdr.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Extension headers in the order they follow the BTH on the wire (IBA 9.2: DETH, then
 * FETH/RETH or AtomicETH, AETH, AtomicAckETH, ImmDt, IETH). X(name) names DROCE_<name>_LEN.
 */
#define DROCE_EXT_HEADERS(X) \
	X(DETH) X(FETH) X(RETH) X(ATMETH) X(AETH) X(ATMACK) X(IMMDT) X(IETH) X(CNPETH)

/** Index of an extension header in droce_opcode_info.offset[]. */
enum droce_hdr {
#define DROCE_HDR_ENUM(h) DROCE_HDR_##h,
	DROCE_EXT_HEADERS(DROCE_HDR_ENUM)
#undef DROCE_HDR_ENUM
	DROCE_HDR_PAYLOAD,      /**< offset[] of the payload = length of all headers */
	DROCE_HDR_NUM
};

/* Mask bits: header presence (one per enum droce_hdr) ... */
#define DROCE_M_DETH     (1u << DROCE_HDR_DETH)
#define DROCE_M_FETH     (1u << DROCE_HDR_FETH)
#define DROCE_M_RETH     (1u << DROCE_HDR_RETH)
#define DROCE_M_ATMETH   (1u << DROCE_HDR_ATMETH)
#define DROCE_M_AETH     (1u << DROCE_HDR_AETH)
#define DROCE_M_ATMACK   (1u << DROCE_HDR_ATMACK)
#define DROCE_M_IMMDT    (1u << DROCE_HDR_IMMDT)
#define DROCE_M_IETH     (1u << DROCE_HDR_IETH)
#define DROCE_M_CNPETH   (1u << DROCE_HDR_CNPETH)
#define DROCE_M_PAYLOAD  (1u << DROCE_HDR_PAYLOAD)   /**< may carry payload */
#define DROCE_M_HDRS     ((1u << DROCE_HDR_PAYLOAD) - 1)
/* ... and meaning. */
#define DROCE_M_REQ      (1u << 12)  /**< sent by a requester */
#define DROCE_M_RESP     (1u << 13)  /**< sent by a responder (ACK, READ response, atomic ACK) */
#define DROCE_M_FIRST    (1u << 14)  /**< first packet of a message (ONLY = FIRST | LAST) */
#define DROCE_M_MIDDLE   (1u << 15)
#define DROCE_M_LAST     (1u << 16)
#define DROCE_M_SEND     (1u << 17)
#define DROCE_M_WRITE    (1u << 18)
#define DROCE_M_READ     (1u << 19)  /**< READ request or READ response */
#define DROCE_M_ATOMIC   (1u << 20)  /**< CMP_SWAP, FETCH_ADD or their ACK */
#define DROCE_M_ACK      (1u << 21)  /**< plain ACK/NAK */
#define DROCE_M_IMM      (1u << 22)  /**< carries immediate data */
#define DROCE_M_INV      (1u << 23)  /**< carries an rkey to invalidate */
#define DROCE_M_RWR      (1u << 24)  /**< consumes a receive WR at the responder */
#define DROCE_M_COMP     (1u << 25)  /**< completes a receive WR (last packet of it) */
#define DROCE_M_FLUSH    (1u << 26)
#define DROCE_M_ATMWR    (1u << 27)  /**< ATOMIC_WRITE */
#define DROCE_M_CNP      (1u << 28)

/* Offset of each extension header from the start of the BTH, given a presence mask. */
#define DROCE_SZ_IF(m, h) (((m) & DROCE_M_##h) ? DROCE_##h##_LEN : 0)
#define DROCE_OFF_DETH(m)    DROCE_BTH_LEN
#define DROCE_OFF_FETH(m)    (DROCE_OFF_DETH(m) + DROCE_SZ_IF(m, DETH))
#define DROCE_OFF_RETH(m)    (DROCE_OFF_FETH(m) + DROCE_SZ_IF(m, FETH))
#define DROCE_OFF_ATMETH(m)  (DROCE_OFF_RETH(m) + DROCE_SZ_IF(m, RETH))
#define DROCE_OFF_AETH(m)    (DROCE_OFF_ATMETH(m) + DROCE_SZ_IF(m, ATMETH))
#define DROCE_OFF_ATMACK(m)  (DROCE_OFF_AETH(m) + DROCE_SZ_IF(m, AETH))
#define DROCE_OFF_IMMDT(m)   (DROCE_OFF_ATMACK(m) + DROCE_SZ_IF(m, ATMACK))
#define DROCE_OFF_IETH(m)    (DROCE_OFF_IMMDT(m) + DROCE_SZ_IF(m, IMMDT))
#define DROCE_OFF_CNPETH(m)  (DROCE_OFF_IETH(m) + DROCE_SZ_IF(m, IETH))
#define DROCE_OFF_PAYLOAD(m) (DROCE_OFF_CNPETH(m) + DROCE_SZ_IF(m, CNPETH))

#define DROCE__SEND_FIRST   (DROCE_M_REQ | DROCE_M_SEND | DROCE_M_RWR | DROCE_M_PAYLOAD)
#define DROCE__WRITE        (DROCE_M_REQ | DROCE_M_WRITE | DROCE_M_PAYLOAD)
#define DROCE__ONLY         (DROCE_M_FIRST | DROCE_M_LAST)
#define DROCE__LASTC        (DROCE_M_LAST | DROCE_M_COMP)

/** The send/write opcodes RC and UC share; X(name, offset from the transport base, mask). */
#define DROCE_OPCODES_SEND_WRITE(X, T, base) \
	X(T##_SEND_FIRST,                     base + 0x00, DROCE__SEND_FIRST | DROCE_M_FIRST) \
	X(T##_SEND_MIDDLE,                    base + 0x01, DROCE__SEND_FIRST | DROCE_M_MIDDLE) \
	X(T##_SEND_LAST,                      base + 0x02, DROCE__SEND_FIRST | DROCE__LASTC) \
	X(T##_SEND_LAST_WITH_IMMEDIATE,       base + 0x03, DROCE__SEND_FIRST | DROCE__LASTC | \
						     DROCE_M_IMMDT | DROCE_M_IMM) \
	X(T##_SEND_ONLY,                      base + 0x04, DROCE__SEND_FIRST | DROCE__ONLY | \
						     DROCE_M_COMP) \
	X(T##_SEND_ONLY_WITH_IMMEDIATE,       base + 0x05, DROCE__SEND_FIRST | DROCE__ONLY | \
						     DROCE_M_COMP | DROCE_M_IMMDT | DROCE_M_IMM) \
	X(T##_RDMA_WRITE_FIRST,               base + 0x06, DROCE__WRITE | DROCE_M_FIRST | DROCE_M_RETH) \
	X(T##_RDMA_WRITE_MIDDLE,              base + 0x07, DROCE__WRITE | DROCE_M_MIDDLE) \
	X(T##_RDMA_WRITE_LAST,                base + 0x08, DROCE__WRITE | DROCE_M_LAST) \
	X(T##_RDMA_WRITE_LAST_WITH_IMMEDIATE, base + 0x09, DROCE__WRITE | DROCE__LASTC | \
						     DROCE_M_IMMDT | DROCE_M_IMM | DROCE_M_RWR) \
	X(T##_RDMA_WRITE_ONLY,                base + 0x0a, DROCE__WRITE | DROCE__ONLY | DROCE_M_RETH) \
	X(T##_RDMA_WRITE_ONLY_WITH_IMMEDIATE, base + 0x0b, DROCE__WRITE | DROCE__ONLY | DROCE_M_COMP | \
						     DROCE_M_RETH | DROCE_M_IMMDT | DROCE_M_IMM | \
						     DROCE_M_RWR)

/** Every opcode droce knows: X(name, BTH opcode, mask). */
#define DROCE_OPCODES(X) \
	DROCE_OPCODES_SEND_WRITE(X, RC, 0x00) \
	X(RC_RDMA_READ_REQUEST,          0x0c, DROCE_M_REQ | DROCE_M_READ | DROCE__ONLY | DROCE_M_RETH) \
	X(RC_RDMA_READ_RESPONSE_FIRST,   0x0d, DROCE_M_RESP | DROCE_M_READ | DROCE_M_FIRST | \
					      DROCE_M_AETH | DROCE_M_PAYLOAD) \
	X(RC_RDMA_READ_RESPONSE_MIDDLE,  0x0e, DROCE_M_RESP | DROCE_M_READ | DROCE_M_MIDDLE | \
					      DROCE_M_PAYLOAD) \
	X(RC_RDMA_READ_RESPONSE_LAST,    0x0f, DROCE_M_RESP | DROCE_M_READ | DROCE_M_LAST | \
					      DROCE_M_AETH | DROCE_M_PAYLOAD) \
	X(RC_RDMA_READ_RESPONSE_ONLY,    0x10, DROCE_M_RESP | DROCE_M_READ | DROCE__ONLY | \
					      DROCE_M_AETH | DROCE_M_PAYLOAD) \
	X(RC_ACKNOWLEDGE,                0x11, DROCE_M_RESP | DROCE_M_ACK | DROCE__ONLY | DROCE_M_AETH) \
	X(RC_ATOMIC_ACKNOWLEDGE,         0x12, DROCE_M_RESP | DROCE_M_ATOMIC | DROCE__ONLY | \
					      DROCE_M_AETH | DROCE_M_ATMACK) \
	X(RC_COMPARE_SWAP,               0x13, DROCE_M_REQ | DROCE_M_ATOMIC | DROCE__ONLY | DROCE_M_ATMETH) \
	X(RC_FETCH_ADD,                  0x14, DROCE_M_REQ | DROCE_M_ATOMIC | DROCE__ONLY | DROCE_M_ATMETH) \
	X(RC_SEND_LAST_WITH_INVALIDATE,  0x16, DROCE__SEND_FIRST | DROCE__LASTC | DROCE_M_IETH | \
					      DROCE_M_INV) \
	X(RC_SEND_ONLY_WITH_INVALIDATE,  0x17, DROCE__SEND_FIRST | DROCE__ONLY | DROCE_M_COMP | \
					      DROCE_M_IETH | DROCE_M_INV) \
	X(RC_FLUSH,                      0x1c, DROCE_M_REQ | DROCE_M_FLUSH | DROCE__ONLY | \
					      DROCE_M_FETH | DROCE_M_RETH) \
	X(RC_ATOMIC_WRITE,               0x1d, DROCE_M_REQ | DROCE_M_ATMWR | DROCE__ONLY | \
					      DROCE_M_RETH | DROCE_M_PAYLOAD) \
	DROCE_OPCODES_SEND_WRITE(X, UC, 0x20) \
	X(UD_SEND_ONLY,                  0x64, DROCE__SEND_FIRST | DROCE__ONLY | DROCE_M_COMP | \
					      DROCE_M_DETH) \
	X(UD_SEND_ONLY_WITH_IMMEDIATE,   0x65, DROCE__SEND_FIRST | DROCE__ONLY | DROCE_M_COMP | \
					      DROCE_M_DETH | DROCE_M_IMMDT | DROCE_M_IMM) \
	X(CNP,                           0x81, DROCE_M_CNP | DROCE__ONLY | DROCE_M_CNPETH)

/** BTH opcodes by name: DROCE_OP_RC_SEND_FIRST, ... */
enum droce_opcode {
#define DROCE_OP_ENUM(name, value, mask) DROCE_OP_##name = (value),
	DROCE_OPCODES(DROCE_OP_ENUM)
#undef DROCE_OP_ENUM
};

/** Transport of an opcode: its top three bits (IBA 9.2.2.1). */
enum droce_transport {
	DROCE_TRANSPORT_RC = 0,
	DROCE_TRANSPORT_UC = 1,
	DROCE_TRANSPORT_RD = 2,
	DROCE_TRANSPORT_UD = 3,
	DROCE_TRANSPORT_CNP = 4,
};

struct droce_opcode_info {
	const char *name;               /**< "RC_SEND_FIRST"; NULL for an unknown opcode */
	uint32_t mask;                  /**< DROCE_M_* bits; 0 for an unknown opcode */
	uint8_t length;                 /**< BTH + extension headers, in bytes */
	uint8_t offset[DROCE_HDR_NUM];  /**< from the BTH start; 0 where the header is absent */
};

/** Indexed by BTH opcode; entries of unknown opcodes are all zero. */
extern const struct droce_opcode_info droce_opcode_table[256];

static inline const struct droce_opcode_info *droce_opcode_info(uint8_t opcode)
{
	return &droce_opcode_table[opcode];
}

static inline int droce_opcode_known(uint8_t opcode)
{
	return droce_opcode_table[opcode].mask != 0;
}

/** Name of @p opcode, or "UNKNOWN". */
static inline const char *droce_opcode_name(uint8_t opcode)
{
	const char *n = droce_opcode_table[opcode].name;

	return n != NULL ? n : "UNKNOWN";
}

static inline enum droce_transport droce_opcode_transport(uint8_t opcode)
{
	return (enum droce_transport)(opcode >> 5);
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_OPCODE_H */
