/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * RoCE v2 transport headers: layouts and accessors.
 *
 * Headers are packed structures of big-endian words; there are no bitfields. Sub-word fields
 * (PadCnt, DestQP, PSN, the AETH syndrome, ...) are read and written through the inline
 * accessors below, which take and return host-order values. Ethernet, IPv4, IPv6 and UDP use
 * DPDK's own types (rte_ether_hdr, rte_ipv4_hdr, rte_ipv6_hdr, rte_udp_hdr).
 *
 * Everything here works on plain memory: no EAL state.
 */
#ifndef DROCE_WIRE_HDR_H
#define DROCE_WIRE_HDR_H

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Base Transport Header (IBA 9.2). */
struct droce_bth {
	uint8_t opcode;
	uint8_t flags;      /**< SE:1 M:1 PadCnt:2 TVer:4 */
	rte_be16_t pkey;
	rte_be32_t qpn;     /**< F:1 B:1 resv6 (byte 4, masked in the ICRC), DestQP:24 */
	rte_be32_t apsn;    /**< AckReq:1 resv7, PSN:24 */
} __rte_packed;

/** RDMA Extended Transport Header. */
struct droce_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t len;
} __rte_packed;

/** ACK Extended Transport Header. */
struct droce_aeth {
	rte_be32_t smsn;    /**< Syndrome:8 MSN:24 */
} __rte_packed;

/** Atomic Extended Transport Header. */
struct droce_atmeth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t cmp;
} __rte_packed;

/** Atomic ACK Extended Transport Header. */
struct droce_atmack {
	rte_be64_t orig;
} __rte_packed;

/** Immediate data. */
struct droce_immdt {
	rte_be32_t imm;
} __rte_packed;

/** Invalidate Extended Transport Header. */
struct droce_ieth {
	rte_be32_t rkey;
} __rte_packed;

/** Datagram Extended Transport Header. */
struct droce_deth {
	rte_be32_t qkey;
	rte_be32_t sqpn;    /**< resv8, SrcQP:24 */
} __rte_packed;

/** FLUSH Extended Transport Header (IBA 1.5 / rxe). */
struct droce_feth {
	rte_be32_t bits;    /**< resv26, SelectivityLevel:2, PlacementType:4 */
} __rte_packed;

/** The 16 reserved bytes that follow the BTH of a RoCE v2 CNP (Annex A17.9.2). */
struct droce_cnpeth {
	uint8_t rsvd[16];
} __rte_packed;

#define DROCE_BTH_LEN    12
#define DROCE_RETH_LEN   16
#define DROCE_AETH_LEN    4
#define DROCE_ATMETH_LEN 28
#define DROCE_ATMACK_LEN  8
#define DROCE_IMMDT_LEN   4
#define DROCE_IETH_LEN    4
#define DROCE_DETH_LEN    8
#define DROCE_FETH_LEN    4
#define DROCE_CNPETH_LEN 16
#define DROCE_ICRC_LEN    4

/** GRH space at the head of a UD receive buffer (verbs). */
#define DROCE_GRH_LEN    40

static_assert(sizeof(struct droce_bth) == DROCE_BTH_LEN, "BTH size");
static_assert(sizeof(struct droce_reth) == DROCE_RETH_LEN, "RETH size");
static_assert(sizeof(struct droce_aeth) == DROCE_AETH_LEN, "AETH size");
static_assert(sizeof(struct droce_atmeth) == DROCE_ATMETH_LEN, "AtomicETH size");
static_assert(sizeof(struct droce_atmack) == DROCE_ATMACK_LEN, "AtomicAckETH size");
static_assert(sizeof(struct droce_immdt) == DROCE_IMMDT_LEN, "ImmDt size");
static_assert(sizeof(struct droce_ieth) == DROCE_IETH_LEN, "IETH size");
static_assert(sizeof(struct droce_deth) == DROCE_DETH_LEN, "DETH size");
static_assert(sizeof(struct droce_feth) == DROCE_FETH_LEN, "FETH size");
static_assert(sizeof(struct droce_cnpeth) == DROCE_CNPETH_LEN, "CNP reserved size");

/* BTH flags byte */
#define DROCE_BTH_SE        0x80u
#define DROCE_BTH_MIG       0x40u
#define DROCE_BTH_PAD_MASK  0x30u
#define DROCE_BTH_PAD_SHIFT 4
#define DROCE_BTH_TVER_MASK 0x0fu
/* BTH word 1 */
#define DROCE_BTH_FECN      0x80000000u
#define DROCE_BTH_BECN      0x40000000u
#define DROCE_QPN_MASK      0x00ffffffu
/* BTH word 2 */
#define DROCE_BTH_ACKREQ    0x80000000u
#define DROCE_PSN_MASK      0x00ffffffu

/** Default (full-member) partition key. */
#define DROCE_DEFAULT_PKEY  0xffffu

static inline uint8_t droce_bth_pad(const struct droce_bth *b)
{
	return (b->flags & DROCE_BTH_PAD_MASK) >> DROCE_BTH_PAD_SHIFT;
}

static inline uint8_t droce_bth_tver(const struct droce_bth *b)
{
	return b->flags & DROCE_BTH_TVER_MASK;
}

static inline int droce_bth_se(const struct droce_bth *b)
{
	return !!(b->flags & DROCE_BTH_SE);
}

static inline int droce_bth_mig(const struct droce_bth *b)
{
	return !!(b->flags & DROCE_BTH_MIG);
}

static inline uint16_t droce_bth_pkey(const struct droce_bth *b)
{
	return rte_be_to_cpu_16(b->pkey);
}

static inline uint32_t droce_bth_qpn(const struct droce_bth *b)
{
	return rte_be_to_cpu_32(b->qpn) & DROCE_QPN_MASK;
}

static inline int droce_bth_fecn(const struct droce_bth *b)
{
	return !!(rte_be_to_cpu_32(b->qpn) & DROCE_BTH_FECN);
}

static inline int droce_bth_becn(const struct droce_bth *b)
{
	return !!(rte_be_to_cpu_32(b->qpn) & DROCE_BTH_BECN);
}

static inline uint32_t droce_bth_psn(const struct droce_bth *b)
{
	return rte_be_to_cpu_32(b->apsn) & DROCE_PSN_MASK;
}

static inline int droce_bth_ackreq(const struct droce_bth *b)
{
	return !!(rte_be_to_cpu_32(b->apsn) & DROCE_BTH_ACKREQ);
}

/** Write a whole BTH from host-order fields; TVer is 0, reserved bits are 0. */
static inline void droce_bth_set(struct droce_bth *b, uint8_t opcode, int se, int mig,
				 uint8_t pad, uint16_t pkey, uint32_t qpn, int ackreq, uint32_t psn)
{
	b->opcode = opcode;
	b->flags = (se ? DROCE_BTH_SE : 0) | (mig ? DROCE_BTH_MIG : 0) |
		   ((pad << DROCE_BTH_PAD_SHIFT) & DROCE_BTH_PAD_MASK);
	b->pkey = rte_cpu_to_be_16(pkey);
	b->qpn = rte_cpu_to_be_32(qpn & DROCE_QPN_MASK);
	b->apsn = rte_cpu_to_be_32((ackreq ? DROCE_BTH_ACKREQ : 0) | (psn & DROCE_PSN_MASK));
}

/* AETH syndrome (IBA 9.7.5.1): bits 7..5 say what, bits 4..0 carry a value. */
#define DROCE_AETH_TYPE_MASK   0x60u
#define DROCE_AETH_ACK         0x00u   /**< ACK; low 5 bits are the credit count */
#define DROCE_AETH_RNR_NAK     0x20u   /**< RNR NAK; low 5 bits are the RNR timer code */
#define DROCE_AETH_NAK         0x60u   /**< NAK; low 5 bits are the NAK code below */
#define DROCE_AETH_VALUE_MASK  0x1fu
#define DROCE_AETH_CREDIT_INVALID 0x1fu
#define DROCE_NAK_PSN_SEQ_ERR  0
#define DROCE_NAK_INV_REQ      1
#define DROCE_NAK_REM_ACCESS   2
#define DROCE_NAK_REM_OP       3
#define DROCE_NAK_INV_RD_REQ   4
#define DROCE_MSN_MASK         0x00ffffffu

static inline uint8_t droce_aeth_syndrome(const struct droce_aeth *a)
{
	return rte_be_to_cpu_32(a->smsn) >> 24;
}

static inline uint32_t droce_aeth_msn(const struct droce_aeth *a)
{
	return rte_be_to_cpu_32(a->smsn) & DROCE_MSN_MASK;
}

static inline void droce_aeth_set(struct droce_aeth *a, uint8_t syndrome, uint32_t msn)
{
	a->smsn = rte_cpu_to_be_32(((uint32_t)syndrome << 24) | (msn & DROCE_MSN_MASK));
}

static inline uint32_t droce_deth_sqpn(const struct droce_deth *d)
{
	return rte_be_to_cpu_32(d->sqpn) & DROCE_QPN_MASK;
}

#define DROCE_FETH_PLT_MASK  0x0fu
#define DROCE_FETH_SEL_MASK  0x30u
#define DROCE_FETH_SEL_SHIFT 4

static inline uint8_t droce_feth_plt(const struct droce_feth *f)
{
	return rte_be_to_cpu_32(f->bits) & DROCE_FETH_PLT_MASK;
}

static inline uint8_t droce_feth_sel(const struct droce_feth *f)
{
	return (rte_be_to_cpu_32(f->bits) & DROCE_FETH_SEL_MASK) >> DROCE_FETH_SEL_SHIFT;
}

/** Read a possibly unaligned 32-bit little-endian value (the ICRC's byte order). */
static inline uint32_t droce_get_le32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_le_to_cpu_32(v);
}

static inline void droce_put_le32(void *p, uint32_t v)
{
	v = rte_cpu_to_le_32(v);
	memcpy(p, &v, sizeof(v));
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_HDR_H */
