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
/** The source port's steering bits (droce_flow_sport()): the destination QP's slot in the
 *  receiver's QP table (QPN - DROCE_QPN_BASE) modulo 256, 0 for a datagram. A receiver that
 *  spreads its QPs over N queues by slot % N (N a power of two up to 256) finds the queue in
 *  sport & (N - 1). The other bits of the range are a hash of both QPNs (ECMP entropy). */
#define DROCE_SPORT_STEER_MASK 0x00FFu

/* ---- Verbs limits (reported by droce_query_device()) ---- */
/** Devices (DPDK ports) in one process. */
#define DROCE_MAX_DEVICES 8
/** QPs per device; QP numbers are DROCE_QPN_BASE + index (0 and 1 are reserved by IBA). */
#define DROCE_MAX_QP 16384
#define DROCE_QPN_BASE 0x11
/** The General Services Interface QP (IBA 3.5.4, QP1: the CM's MADs) and its Q_Key (IBA
 *  13.4.6.4: every GSI message carries 0x80010000). One per device, created by lib/cm; it
 *  lives in the last slot of the per-device QP tables, after the DROCE_MAX_QP others. */
#define DROCE_GSI_QPN 1
#define DROCE_GSI_QKEY 0x80010000u
#define DROCE_QP_SLOTS (DROCE_MAX_QP + 1)
/** Work requests per send or receive queue; queue depths are powers of two up to this. */
#define DROCE_MAX_QP_WR 16384
/** Scatter/gather entries per work request. */
#define DROCE_MAX_SGE 32
/** Inline data bytes per send work request. */
#define DROCE_MAX_INLINE 512
/** Completion queues per device and completions per CQ (a power of two). */
#define DROCE_MAX_CQ 16384
#define DROCE_MAX_CQE (1 << 20)
/** Memory regions per device: the low DROCE_MR_INDEX_BITS of an lkey/rkey are the index,
 *  the other bits are random. */
#define DROCE_MR_INDEX_BITS 12
#define DROCE_MAX_MR (1 << DROCE_MR_INDEX_BITS)
#define DROCE_MAX_PD 1024
/** Memory windows per device: bits 8.. of an MW's R_Key index them (its low 8 bits are the key
 *  the consumer picks, ibv_inc_rkey()); bit 31 is set in every MW R_Key and in no MR key. */
#define DROCE_MW_INDEX_BITS 10
#define DROCE_MAX_MW (1 << DROCE_MW_INDEX_BITS)
#define DROCE_MAX_SRQ 256
#define DROCE_MAX_SRQ_WR 16384
#define DROCE_MAX_AH 4096
/** Outstanding RDMA READ / ATOMIC per QP, as requester and as responder (rxe's value too:
 *  with 16, a 4 KiB READ stream between two processes is bound by round trips). */
#define DROCE_MAX_RD_ATOM 128
/** UD multicast (droce_attach_mcast()): groups per device, QPs per group, and attachments
 *  (QP, group) per device. Beyond them attaching fails with ENOMEM, as rxe. */
#define DROCE_MAX_MCAST_GRP 32
#define DROCE_MAX_MCAST_QP_ATTACH 8
#define DROCE_MAX_TOTAL_MCAST_QP_ATTACH 64
/** GID table entries per port. */
#define DROCE_MAX_GID 16
/** Completion vectors per context. */
#define DROCE_COMP_VECTORS 1
/** Bytes a RoCE v2 frame adds to the IB payload MTU in the worst case (IPv6 40, UDP 8, BTH 12,
 *  RETH 16, ICRC 4): the active IB MTU is the largest with IB MTU + this <= Ethernet MTU. */
#define DROCE_ROCE_OVERHEAD 80

#endif
