/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The RoCE v2 frame parser. Every read is preceded by a check that the bytes exist: @seg bytes
 * are contiguous from the frame start, @total bytes exist in all (seg <= total). A header that
 * lies past @total makes the frame TRUNCATED; one that exists but past @seg is HDR_SPLIT.
 */

#include <stdbool.h>
#include <string.h>

#include <rte_ip.h>

#include "droce_config.h"
#include "droce_wire.h"
#include "wire_private.h"

static const char *const err_names[] = {
	[DROCE_PARSE_OK] = "OK",
#define ERR_NAME(name, desc) [DROCE_PARSE_##name] = #name,
	DROCE_PARSE_ERRORS(ERR_NAME)
#undef ERR_NAME
};

static const char *const err_descs[] = {
	[DROCE_PARSE_OK] = "accepted",
#define ERR_DESC(name, desc) [DROCE_PARSE_##name] = desc,
	DROCE_PARSE_ERRORS(ERR_DESC)
#undef ERR_DESC
};

const char *droce_parse_err_name(enum droce_parse_err err)
{
	return (unsigned int)err < DROCE_PARSE_ERR_NUM ? err_names[err] : "INVALID";
}

const char *droce_parse_err_str(enum droce_parse_err err)
{
	return (unsigned int)err < DROCE_PARSE_ERR_NUM ? err_descs[err] : "invalid parse result";
}

/* Do @need bytes from the frame start exist, and are they contiguous? */
static inline enum droce_parse_err have(uint32_t need, uint32_t seg, uint32_t total)
{
	if (need > total)
		return DROCE_PARSE_TRUNCATED;
	if (need > seg)
		return DROCE_PARSE_HDR_SPLIT;
	return DROCE_PARSE_OK;
}

#define CHECK(expr) do { enum droce_parse_err e_ = (expr); if (e_ != DROCE_PARSE_OK) return e_; } while (0)

static void gid_from_v4(uint8_t gid[16], rte_be32_t addr)
{
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &addr, 4);
}

/* IPv4: fills pkt's L3 fields; *l3_end = offset just past the IP datagram. */
static enum droce_parse_err parse_ipv4(const uint8_t *d, uint32_t seg, uint32_t total,
				       struct droce_pkt *pkt, uint32_t *l3_end)
{
	const struct rte_ipv4_hdr *ip;
	uint32_t ihl, tot;

	CHECK(have(pkt->l3_off + sizeof(*ip), seg, total));
	ip = (const struct rte_ipv4_hdr *)(d + pkt->l3_off);
	if ((ip->version_ihl >> 4) != 4)
		return DROCE_PARSE_BAD_IP_VERSION;
	ihl = (ip->version_ihl & 0xf) * 4u;
	if (ihl < sizeof(*ip))
		return DROCE_PARSE_BAD_IHL;
	CHECK(have(pkt->l3_off + ihl, seg, total));
	tot = rte_be_to_cpu_16(ip->total_length);
	if (tot < ihl || pkt->l3_off + tot > total)
		return DROCE_PARSE_BAD_IP_LEN;
	if (rte_raw_cksum(ip, ihl) != 0xffff)
		return DROCE_PARSE_BAD_IP_CSUM;
	if (rte_be_to_cpu_16(ip->fragment_offset) & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))
		return DROCE_PARSE_IP_FRAGMENT;
	if (ip->next_proto_id != IPPROTO_UDP)
		return DROCE_PARSE_NOT_UDP;
	pkt->ipv6 = 0;
	pkt->tclass = ip->type_of_service;
	pkt->hop_limit = ip->time_to_live;
	pkt->flow_label = 0;
	gid_from_v4(pkt->sgid, ip->src_addr);
	gid_from_v4(pkt->dgid, ip->dst_addr);
	pkt->l4_off = pkt->l3_off + ihl;
	*l3_end = pkt->l3_off + tot;
	return DROCE_PARSE_OK;
}

static enum droce_parse_err parse_ipv6(const uint8_t *d, uint32_t seg, uint32_t total,
				       struct droce_pkt *pkt, uint32_t *l3_end)
{
	const struct rte_ipv6_hdr *ip;
	uint32_t vtc, plen;

	CHECK(have(pkt->l3_off + sizeof(*ip), seg, total));
	ip = (const struct rte_ipv6_hdr *)(d + pkt->l3_off);
	vtc = rte_be_to_cpu_32(ip->vtc_flow);
	if ((vtc >> 28) != 6)
		return DROCE_PARSE_BAD_IP_VERSION;
	plen = rte_be_to_cpu_16(ip->payload_len);
	if (plen == 0 || pkt->l3_off + sizeof(*ip) + plen > total)
		return DROCE_PARSE_BAD_IP_LEN;
	if (ip->proto == IPPROTO_FRAGMENT)
		return DROCE_PARSE_IP_FRAGMENT;
	/* RoCE v2 carries no IPv6 extension headers: anything but UDP here is not ours. */
	if (ip->proto != IPPROTO_UDP)
		return DROCE_PARSE_NOT_UDP;
	pkt->ipv6 = 1;
	pkt->tclass = (vtc >> 20) & 0xff;
	pkt->flow_label = vtc & 0xfffff;
	pkt->hop_limit = ip->hop_limits;
	memcpy(pkt->sgid, ip->src_addr, 16);
	memcpy(pkt->dgid, ip->dst_addr, 16);
	pkt->l4_off = pkt->l3_off + sizeof(*ip);
	*l3_end = pkt->l3_off + sizeof(*ip) + plen;
	return DROCE_PARSE_OK;
}

static enum droce_parse_err parse_l2(const uint8_t *d, uint32_t seg, uint32_t total,
				     struct droce_pkt *pkt, uint16_t *ethertype)
{
	const struct rte_ether_hdr *eth;
	const struct rte_vlan_hdr *vlan;

	CHECK(have(sizeof(*eth), seg, total));
	eth = (const struct rte_ether_hdr *)d;
	*ethertype = rte_be_to_cpu_16(eth->ether_type);
	pkt->l3_off = sizeof(*eth);
	pkt->vlan_tci = 0;
	if (*ethertype == RTE_ETHER_TYPE_VLAN) {
		CHECK(have(sizeof(*eth) + sizeof(*vlan), seg, total));
		vlan = (const struct rte_vlan_hdr *)(eth + 1);
		pkt->vlan_tci = rte_be_to_cpu_16(vlan->vlan_tci);
		*ethertype = rte_be_to_cpu_16(vlan->eth_proto);
		pkt->l3_off += sizeof(*vlan);
	}
	return DROCE_PARSE_OK;
}

/* The headers of any frame: everything but the ICRC check. */
static enum droce_parse_err __rte_noinline parse_general(const uint8_t *d, uint32_t seg, uint32_t total,
					  struct droce_pkt *pkt)
{
	const struct droce_opcode_info *info;
	const struct rte_udp_hdr *udp;
	const struct droce_bth *bth;
	uint16_t ethertype;
	uint32_t l3_end, avail, body;

	memset(pkt, 0, sizeof(*pkt));
	pkt->hdr = d;
	CHECK(parse_l2(d, seg, total, pkt, &ethertype));
	if (ethertype == RTE_ETHER_TYPE_IPV4)
		CHECK(parse_ipv4(d, seg, total, pkt, &l3_end));
	else if (ethertype == RTE_ETHER_TYPE_IPV6)
		CHECK(parse_ipv6(d, seg, total, pkt, &l3_end));
	else
		return DROCE_PARSE_NOT_IP;

	if (pkt->l4_off + sizeof(*udp) > l3_end)
		return DROCE_PARSE_BAD_UDP_LEN;
	CHECK(have(pkt->l4_off + sizeof(*udp), seg, total));
	udp = (const struct rte_udp_hdr *)(d + pkt->l4_off);
	if (rte_be_to_cpu_16(udp->dst_port) != DROCE_ROCEV2_PORT)
		return DROCE_PARSE_NOT_ROCE_PORT;
	if (rte_be_to_cpu_16(udp->dgram_len) != l3_end - pkt->l4_off)
		return DROCE_PARSE_BAD_UDP_LEN;
	pkt->sport = rte_be_to_cpu_16(udp->src_port);

	pkt->bth_off = pkt->l4_off + sizeof(*udp);
	avail = l3_end - pkt->bth_off;          /* BTH .. ICRC */
	if (avail < DROCE_BTH_LEN + DROCE_ICRC_LEN)
		return DROCE_PARSE_BAD_HDR_LEN;
	CHECK(have(pkt->bth_off + DROCE_BTH_LEN, seg, total));
	bth = (const struct droce_bth *)(d + pkt->bth_off);
	if (droce_bth_tver(bth) != 0)
		return DROCE_PARSE_BAD_TVER;
	pkt->opcode = bth->opcode;
	info = droce_opcode_info(bth->opcode);
	if (info->mask == 0)
		return DROCE_PARSE_UNKNOWN_OPCODE;
	pkt->mask = info->mask;
	if (avail < (uint32_t)info->length + DROCE_ICRC_LEN)
		return DROCE_PARSE_BAD_HDR_LEN;
	CHECK(have(pkt->bth_off + info->length, seg, total));

	/* PadCnt (IBA 9.2) pads the payload so that the packet is a multiple of 4 bytes. */
	body = avail - info->length - DROCE_ICRC_LEN;
	pkt->pad = droce_bth_pad(bth);
	if (body != 0 && !(info->mask & DROCE_M_PAYLOAD))
		return DROCE_PARSE_UNEXPECTED_PAYLOAD;
	if ((body & 3) != 0 || pkt->pad > body)
		return DROCE_PARSE_BAD_PAD;
	pkt->payload_off = pkt->bth_off + info->length;
	pkt->payload_len = body - pkt->pad;
	pkt->frame_len = l3_end;
	return DROCE_PARSE_OK;
}

static inline void gid_v4(uint8_t gid[16], const void *addr)
{
	static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memcpy(gid, v4_mapped, sizeof(v4_mapped));
	memcpy(gid + 12, addr, 4);
}

/*
 * The usual frame in one pass: Ethernet without a tag, IPv4 without options, the headers in
 * the first segment. It makes every check parse_general() makes (in its own order) and fills
 * the same view, so it returns true only for a frame parse_general() accepts. Anything else,
 * another shape or a bad frame, returns false: parse_general() then gives the verdict and its
 * precise reason, exactly as before this path existed.
 */
static inline bool parse_fast(const uint8_t *d, uint32_t seg, uint32_t total,
			      struct droce_pkt *pkt)
{
	enum { L3 = RTE_ETHER_HDR_LEN, L4 = L3 + sizeof(struct rte_ipv4_hdr),
	       BTH = L4 + sizeof(struct rte_udp_hdr) };
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(d + L3);
	const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(d + L4);
	const struct droce_bth *bth = (const struct droce_bth *)(d + BTH);
	const struct droce_opcode_info *info;
	uint32_t tot, avail, body, pad;
	rte_be16_t type;

	if (seg < BTH + DROCE_BTH_LEN)
		return false;
	memcpy(&type, d + 2 * RTE_ETHER_ADDR_LEN, sizeof(type));
	if (type != RTE_BE16(RTE_ETHER_TYPE_IPV4) || ip->version_ihl != RTE_IPV4_VHL_DEF)
		return false;
	tot = rte_be_to_cpu_16(ip->total_length);
	/* Shorter than IP + UDP + BTH + ICRC, parse_general() rejects it too. */
	if (tot < BTH - L3 + DROCE_BTH_LEN + DROCE_ICRC_LEN || L3 + tot > total)
		return false;
	if (droce_ipv4_hdr_sum(ip) != 0xffff ||
	    (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) ||
	    ip->next_proto_id != IPPROTO_UDP)
		return false;
	if (udp->dst_port != RTE_BE16(DROCE_ROCEV2_PORT) ||
	    rte_be_to_cpu_16(udp->dgram_len) != tot - (L4 - L3))
		return false;
	info = droce_opcode_info(bth->opcode);
	avail = tot - (BTH - L3);
	if (droce_bth_tver(bth) != 0 || info->mask == 0 ||
	    avail < (uint32_t)info->length + DROCE_ICRC_LEN || (uint32_t)BTH + info->length > seg)
		return false;
	body = avail - info->length - DROCE_ICRC_LEN;
	pad = droce_bth_pad(bth);
	if ((body != 0 && !(info->mask & DROCE_M_PAYLOAD)) || (body & 3) != 0 || pad > body)
		return false;

	pkt->hdr = d;
	pkt->frame_len = L3 + tot;
	pkt->payload_off = BTH + info->length;
	pkt->payload_len = body - pad;
	pkt->mask = info->mask;
	pkt->icrc = 0;
	pkt->l3_off = L3;
	pkt->l4_off = L4;
	pkt->bth_off = BTH;
	pkt->sport = rte_be_to_cpu_16(udp->src_port);
	pkt->vlan_tci = 0;
	pkt->ipv6 = 0;
	pkt->opcode = bth->opcode;
	pkt->pad = pad;
	pkt->hop_limit = ip->time_to_live;
	pkt->tclass = ip->type_of_service;
	pkt->flow_label = 0;
	gid_v4(pkt->sgid, &ip->src_addr);
	gid_v4(pkt->dgid, &ip->dst_addr);
	return true;
}

static inline enum droce_parse_err parse_headers(const uint8_t *d, uint32_t seg, uint32_t total,
						 struct droce_pkt *pkt)
{
	if (likely(parse_fast(d, seg, total, pkt)))
		return DROCE_PARSE_OK;
	return parse_general(d, seg, total, pkt);
}

enum droce_parse_err droce_parse(const void *frame, uint32_t len, uint32_t flags,
				 struct droce_pkt *pkt)
{
	const uint8_t *d = frame;
	uint32_t l3_len;

	CHECK(parse_headers(d, len, len, pkt));
	l3_len = pkt->frame_len - pkt->l3_off - DROCE_ICRC_LEN;
	pkt->icrc = droce_get_le32(d + pkt->frame_len - DROCE_ICRC_LEN);
	if (!(flags & DROCE_PARSE_NO_ICRC) && wire_icrc_contig(d + pkt->l3_off, l3_len) != pkt->icrc)
		return DROCE_PARSE_BAD_ICRC;
	return DROCE_PARSE_OK;
}

enum droce_parse_err droce_parse_mbuf(const struct rte_mbuf *m, uint32_t flags,
				      struct droce_pkt *pkt)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint8_t icrc_buf[DROCE_ICRC_LEN];
	uint32_t l3_len, crc;

	CHECK(parse_headers(d, rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m), pkt));
	l3_len = pkt->frame_len - pkt->l3_off - DROCE_ICRC_LEN;
	if (likely(pkt->frame_len <= rte_pktmbuf_data_len(m))) {       /* all in one segment */
		pkt->icrc = droce_get_le32(d + pkt->frame_len - DROCE_ICRC_LEN);
		crc = flags & DROCE_PARSE_NO_ICRC ? 0 : wire_icrc_contig(d + pkt->l3_off, l3_len);
	} else {
		const struct rte_mbuf *last = m;

		while (last->next != NULL)
			last = last->next;
		/* A chain's ICRC usually ends its last segment (no Ethernet pad after it). */
		if (pkt->frame_len == rte_pktmbuf_pkt_len(m) &&
		    rte_pktmbuf_data_len(last) >= DROCE_ICRC_LEN)
			pkt->icrc = droce_get_le32(rte_pktmbuf_mtod_offset(last, const uint8_t *,
					rte_pktmbuf_data_len(last) - DROCE_ICRC_LEN));
		else
			pkt->icrc = droce_get_le32(rte_pktmbuf_read(m, pkt->frame_len - DROCE_ICRC_LEN,
								    DROCE_ICRC_LEN, icrc_buf));
		crc = flags & DROCE_PARSE_NO_ICRC ? 0 : droce_icrc_mbuf(m, pkt->l3_off, l3_len);
	}
	if (!(flags & DROCE_PARSE_NO_ICRC) && crc != pkt->icrc)
		return DROCE_PARSE_BAD_ICRC;
	return DROCE_PARSE_OK;
}
