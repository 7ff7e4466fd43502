/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * droce wire library: RoCE v2 frames (Ethernet / IPv4 or IPv6 / UDP 4791 / BTH / extension
 * headers / payload / pad / ICRC).
 *
 * - droce_icrc(), droce_icrc_mbuf(): the invariant CRC as IBTA Annex A17 and Linux Soft-RoCE
 *   compute it, over one buffer or an mbuf chain.
 * - droce_parse(), droce_parse_mbuf(): bounds-checked parse into a struct droce_pkt view, or
 *   the precise reason a frame is rejected (enum droce_parse_err).
 * - droce_build(), droce_build_mbuf(): write every header of any opcode, the pad and the ICRC.
 *
 * No function here uses EAL state; all are thread-safe on distinct frames.
 */
#ifndef DROCE_WIRE_H
#define DROCE_WIRE_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "droce_wire_err.h"
#include "droce_wire_hdr.h"
#include "droce_wire_mcast.h"
#include "droce_wire_opcode.h"
#include "droce_wire_psn.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ICRC of a RoCE v2 packet in one buffer.
 *
 * @param l3   Start of the IPv4 or IPv6 header (the version nibble selects the family).
 * @param len  Bytes from @p l3 up to, not including, the ICRC field. Must cover the IP, UDP and
 *             BTH headers (as after a successful droce_parse()); shorter input gives 0.
 * @return The CRC; on the wire it is stored least-significant byte first (droce_put_le32()).
 */
uint32_t droce_icrc(const void *l3, uint32_t len);

/**
 * ICRC of a RoCE v2 packet held in an mbuf chain.
 *
 * @param m       First segment; headers may be split across segments (they are gathered).
 * @param l3_off  Offset of the IP header in the packet.
 * @param len     Bytes from @p l3_off up to, not including, the ICRC field.
 * @return As droce_icrc(); 0 when the chain is shorter than @p l3_off + @p len.
 */
uint32_t droce_icrc_mbuf(const struct rte_mbuf *m, uint32_t l3_off, uint32_t len);

/** droce_parse() flag: do not verify the ICRC (trusted links only). */
#define DROCE_PARSE_NO_ICRC 0x1u

/** A parsed RoCE v2 frame: a view into the caller's buffer, valid while the buffer is. */
struct droce_pkt {
	const uint8_t *hdr;      /**< frame start; all headers are contiguous from here */
	uint32_t frame_len;      /**< bytes up to the end of the ICRC (Ethernet padding excluded) */
	uint32_t payload_off;    /**< payload offset in the frame (may lie past the first segment) */
	uint32_t payload_len;    /**< payload bytes, pad excluded */
	uint32_t mask;           /**< the opcode's DROCE_M_* bits */
	uint32_t icrc;           /**< ICRC as carried (host order of the LE value) */
	uint16_t l3_off;         /**< IP header */
	uint16_t l4_off;         /**< UDP header */
	uint16_t bth_off;        /**< BTH; extension header k is at bth_off + offset[k] */
	uint16_t sport;          /**< UDP source port, host order */
	uint16_t vlan_tci;       /**< 0 without an 802.1Q tag */
	uint8_t ipv6;            /**< 1 for IPv6, 0 for IPv4 */
	uint8_t opcode;
	uint8_t pad;             /**< BTH PadCnt */
	uint8_t hop_limit;       /**< IPv4 TTL or IPv6 hop limit */
	uint8_t tclass;          /**< IPv4 TOS or IPv6 traffic class */
	uint32_t flow_label;     /**< IPv6 only */
	uint8_t sgid[16];        /**< source address as a GID (IPv4-mapped for IPv4) */
	uint8_t dgid[16];        /**< destination address as a GID */
};

/**
 * Parse and check a frame in one buffer.
 *
 * Never reads outside [@p frame, @p frame + @p len).
 *
 * @param frame  Ethernet frame (an 802.1Q tag is allowed).
 * @param len    Its length; bytes past the IP length are Ethernet padding and are ignored.
 * @param flags  0, or DROCE_PARSE_NO_ICRC.
 * @param pkt    Filled on success; partially filled on failure.
 * @return DROCE_PARSE_OK, or the reason the frame is rejected.
 */
enum droce_parse_err droce_parse(const void *frame, uint32_t len, uint32_t flags,
				 struct droce_pkt *pkt);

/**
 * Parse and check a frame held in an mbuf chain. Headers must lie in the first segment (else
 * DROCE_PARSE_HDR_SPLIT); payload may span segments. The ICRC is computed over the chain.
 */
enum droce_parse_err droce_parse_mbuf(const struct rte_mbuf *m, uint32_t flags,
				      struct droce_pkt *pkt);

/** Pointer to extension header @p h of a parsed frame, or NULL if its opcode lacks it. */
static inline const void *droce_pkt_ext(const struct droce_pkt *pkt, enum droce_hdr h)
{
	uint8_t off = droce_opcode_table[pkt->opcode].offset[h];

	return (pkt->mask & (1u << h)) ? pkt->hdr + pkt->bth_off + off : NULL;
}

static inline const struct droce_bth *droce_pkt_bth(const struct droce_pkt *pkt)
{
	return (const struct droce_bth *)(pkt->hdr + pkt->bth_off);
}

/** Addressing of one flow (a QP's path): what the builder puts below the BTH. */
struct droce_flow {
	struct rte_ether_addr src_mac;
	struct rte_ether_addr dst_mac;
	uint8_t ipv6;            /**< 0: IPv4 (GIDs are IPv4-mapped), 1: IPv6 */
	uint8_t tclass;          /**< IPv4 TOS / IPv6 traffic class */
	uint8_t hop_limit;       /**< TTL; 0 means 64 */
	uint8_t vlan;            /**< 1: an 802.1Q tag (vlan_tci) after the MACs; 0: none */
	uint16_t sport;          /**< UDP source port, host order; see droce_flow_sport() */
	uint16_t vlan_tci;       /**< the tag's PCP (3 bits), DEI and VLAN id, host order */
	uint32_t flow_label;     /**< IPv6 only */
	uint8_t sgid[16];
	uint8_t dgid[16];
};

/** Header fields of one packet, host order. Only those of the opcode's headers are used. */
struct droce_hdr_fields {
	uint8_t opcode;
	uint8_t se;
	uint8_t mig;
	uint8_t ackreq;
	uint8_t fecn;            /**< BTH FECN */
	uint8_t becn;            /**< BTH BECN; always set on a CNP (Annex A17.9.2) */
	uint16_t pkey;
	uint32_t dqpn;
	uint32_t psn;
	struct { uint64_t va; uint32_t rkey; uint32_t len; } reth;
	struct { uint8_t syndrome; uint32_t msn; } aeth;
	struct { uint64_t va; uint32_t rkey; uint64_t swap_add; uint64_t cmp; } atomic;
	uint64_t atomic_orig;    /**< AtomicAckETH */
	rte_be32_t imm;          /**< as in ibv_send_wr.imm_data: already big-endian */
	uint32_t ieth_rkey;
	struct { uint32_t qkey; uint32_t sqpn; } deth;
	struct { uint8_t sel; uint8_t plt; } feth;
};

/**
 * UDP source port for a connected flow (RC, UC, XRC) between two QPs, stable for the life of
 * the pair, in 0xC000-0xFFFF (IBTA A17.3.6.1). The low byte (DROCE_SPORT_STEER_MASK) is the
 * destination QP's slot, (@p dst_qpn - DROCE_QPN_BASE) & 0xFF, so that a receiver serving
 * its QPs from N queues by slot % N (N a power of two) can steer on sport & (N - 1); bits
 * 8-13 hash both QPNs, so that ECMP still tells pairs apart. Receivers do not check it.
 */
uint16_t droce_flow_sport(uint32_t src_qpn, uint32_t dst_qpn);

/**
 * UDP source port for a datagram (UD) flow: as droce_flow_sport(), with a low byte of 0
 * (a receiver's UD QPs are served by its first queue).
 */
uint16_t droce_flow_sport_ud(uint32_t src_qpn, uint32_t dst_qpn);

/** Bytes of Ethernet header (with its 802.1Q tag, if any) for a flow: the IP header's offset. */
static inline uint32_t droce_flow_l2_len(const struct droce_flow *f)
{
	return RTE_ETHER_HDR_LEN + (f->vlan ? RTE_VLAN_HLEN : 0);
}

/** Bytes of Ethernet + IP + UDP for a flow. */
static inline uint32_t droce_flow_l2l4_len(const struct droce_flow *f)
{
	return droce_flow_l2_len(f) + (f->ipv6 ? sizeof(struct rte_ipv6_hdr) :
		sizeof(struct rte_ipv4_hdr)) + sizeof(struct rte_udp_hdr);
}

/** Pad bytes after @p payload_len bytes of payload. */
static inline uint32_t droce_pad_len(uint32_t payload_len)
{
	return (4 - (payload_len & 3)) & 3;
}

/**
 * Write every header of a packet (Ethernet to the last extension header) into @p buf.
 * Lengths count @p payload_len, the pad and the ICRC; PadCnt is set; the IPv4 header checksum
 * is computed; the UDP checksum is 0. The payload, pad and ICRC are the caller's to add.
 *
 * @return Header length, or -EINVAL (unknown opcode; payload on an opcode without one; frame
 *         longer than 65535), or -ENOSPC (@p room too small).
 */
int droce_build_hdrs(void *buf, uint32_t room, const struct droce_flow *f,
		     const struct droce_hdr_fields *h, uint32_t payload_len);

/**
 * Build a whole frame in one buffer: headers, a copy of the payload, pad and ICRC.
 * @return Frame length, or -EINVAL / -ENOSPC as droce_build_hdrs().
 */
int droce_build(void *buf, uint32_t size, const struct droce_flow *f,
		const struct droce_hdr_fields *h, const void *payload, uint32_t payload_len);

/**
 * Turn an mbuf chain that holds the payload (all of its pkt_len) into a frame: prepend the
 * headers into the first segment's headroom, append pad and ICRC to the last segment.
 *
 * @return 0; -EINVAL as droce_build_hdrs(); -ENOSPC when headroom or tailroom is short
 *         (the mbuf is then unchanged).
 */
int droce_build_mbuf(struct rte_mbuf *m, const struct droce_flow *f,
		     const struct droce_hdr_fields *h);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_H */
