/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The reference for wire_fastpath_test.c: droce's wire code exactly as it was before the fast
 * paths (commit abae04d: lib/wire/wire_icrc.c, wire_parse.c, wire_build.c, unchanged but for
 * the function names, which the macros below prefix with ref_). Every check and drop reason of
 * the fast paths is judged against this, so do not "fix" or optimise it.
 */

#define droce_icrc ref_icrc
#define droce_icrc_mbuf ref_icrc_mbuf
#define droce_parse ref_parse
#define droce_parse_mbuf ref_parse_mbuf
#define droce_parse_err_name ref_parse_err_name
#define droce_parse_err_str ref_parse_err_str
#define droce_flow_sport ref_flow_sport
#define droce_build_hdrs ref_build_hdrs
#define droce_build ref_build
#define droce_build_mbuf ref_build_mbuf

/* ---- lib/wire/wire_icrc.c at abae04d ---- */
/*
 * The RoCE v2 invariant CRC (IBTA Annex A17.3.3, as Linux rxe computes it): CRC-32 over 8 bytes
 * of 0xFF standing for the masked LRH, then the IP header with its variant fields (IPv4 TOS,
 * TTL, header checksum; IPv6 traffic class, flow label, hop limit) set to all ones, the UDP
 * header with its checksum set to ones, the BTH with its byte 4 (FECN/BECN/reserved) set to
 * 0xFF, and the rest of the packet up to the ICRC. The CRC is ISA-L's (chainable, SIMD).
 */

#include <string.h>

#include <isa-l/crc.h>

#include "droce_wire.h"

/* 8 bytes of 0xFF + the largest IPv4 header (60) + UDP (8) + BTH (12). */
#define MASKED_MAX (8 + 60 + 8 + DROCE_BTH_LEN)
/* Frames up to this many bytes from the IP header take one CRC call (icrc_small()). */
#define SMALL_MAX 256

/*
 * Copy the variant part of the packet (IP + UDP + BTH) after 8 bytes of 0xFF into @p out,
 * masked. Return how many bytes of @p out to hash, or 0 when @p len cannot hold the headers;
 * *@p covered is how many packet bytes that consumed.
 */
static uint32_t masked_headers(const uint8_t *l3, uint32_t len, uint8_t *out, uint32_t *covered)
{
	uint32_t ip_len;
	uint8_t *ip = out + 8;

	if (len < 1)
		return 0;
	ip_len = (l3[0] >> 4) == 6 ? sizeof(struct rte_ipv6_hdr) : (uint32_t)(l3[0] & 0xf) * 4;
	if (ip_len < sizeof(struct rte_ipv4_hdr) || len < ip_len + 8 + DROCE_BTH_LEN)
		return 0;
	memset(out, 0xff, 8);
	memcpy(ip, l3, ip_len + 8 + DROCE_BTH_LEN);
	if ((l3[0] >> 4) == 6) {
		ip[0] |= 0x0f;                          /* traffic class, low nibble */
		ip[1] = ip[2] = ip[3] = 0xff;           /* traffic class, flow label */
		ip[7] = 0xff;                           /* hop limit */
	} else {
		ip[1] = 0xff;                           /* TOS */
		ip[8] = 0xff;                           /* TTL */
		ip[10] = ip[11] = 0xff;                 /* header checksum */
	}
	ip[ip_len + 6] = ip[ip_len + 7] = 0xff;        /* UDP checksum */
	ip[ip_len + 8 + 4] = 0xff;                     /* BTH F/B/reserved byte */
	*covered = ip_len + 8 + DROCE_BTH_LEN;
	return 8 + *covered;
}

/*
 * A small frame in one piece (ACKs, short messages): masked headers and the rest in one
 * buffer and one CRC call, which for tens of bytes costs about half of two calls.
 */
static uint32_t icrc_small(const uint8_t *l3, uint32_t len)
{
	uint8_t buf[8 + SMALL_MAX];
	uint32_t covered, n = masked_headers(l3, len, buf, &covered);

	if (n == 0)
		return 0;
	memcpy(buf + n, l3 + covered, len - covered);
	return crc32_gzip_refl(0, buf, n + len - covered);
}

uint32_t droce_icrc(const void *l3, uint32_t len)
{
	uint8_t masked[MASKED_MAX];
	uint32_t covered;
	uint32_t n = masked_headers(l3, len, masked, &covered);
	uint32_t crc;

	if (n == 0)
		return 0;
	crc = crc32_gzip_refl(0, masked, n);
	return crc32_gzip_refl(crc, (const uint8_t *)l3 + covered, len - covered);
}

uint32_t droce_icrc_mbuf(const struct rte_mbuf *m, uint32_t l3_off, uint32_t len)
{
	uint8_t masked[MASKED_MAX], copy[MASKED_MAX - 8];
	uint32_t covered, n, crc, off, left;
	const uint8_t *hdrs;

	if (m == NULL || len == 0 || (uint64_t)l3_off + len > rte_pktmbuf_pkt_len(m))
		return 0;
	if (len <= SMALL_MAX && l3_off + len <= rte_pktmbuf_data_len(m))
		return icrc_small(rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off), len);
	/* The headers are usually contiguous; when a chain splits them, gather a copy. */
	hdrs = rte_pktmbuf_read(m, l3_off, RTE_MIN(len, (uint32_t)sizeof(copy)), copy);
	n = masked_headers(hdrs, RTE_MIN(len, (uint32_t)sizeof(copy)), masked, &covered);
	if (n == 0)
		return 0;
	crc = crc32_gzip_refl(0, masked, n);

	/* The rest may span segments: walk them. */
	off = l3_off + covered;
	left = len - covered;
	for (; m != NULL && left > 0; m = m->next) {
		uint32_t seg = rte_pktmbuf_data_len(m), take;

		if (off >= seg) {
			off -= seg;
			continue;
		}
		take = RTE_MIN(seg - off, left);
		crc = crc32_gzip_refl(crc, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), take);
		left -= take;
		off = 0;
	}
	return left == 0 ? crc : 0;
}

/* ---- lib/wire/wire_parse.c at abae04d ---- */
/*
 * The RoCE v2 frame parser. Every read is preceded by a check that the bytes exist: @seg bytes
 * are contiguous from the frame start, @total bytes exist in all (seg <= total). A header that
 * lies past @total makes the frame TRUNCATED; one that exists but past @seg is HDR_SPLIT.
 */

#include <string.h>

#include <rte_ip.h>

#include "droce_config.h"
#include "droce_wire.h"

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

/* The headers of a frame: everything but the ICRC check. */
static enum droce_parse_err parse_headers(const uint8_t *d, uint32_t seg, uint32_t total,
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

enum droce_parse_err droce_parse(const void *frame, uint32_t len, uint32_t flags,
				 struct droce_pkt *pkt)
{
	const uint8_t *d = frame;
	uint32_t l3_len;

	CHECK(parse_headers(d, len, len, pkt));
	l3_len = pkt->frame_len - pkt->l3_off - DROCE_ICRC_LEN;
	pkt->icrc = droce_get_le32(d + pkt->frame_len - DROCE_ICRC_LEN);
	if (!(flags & DROCE_PARSE_NO_ICRC) && droce_icrc(d + pkt->l3_off, l3_len) != pkt->icrc)
		return DROCE_PARSE_BAD_ICRC;
	return DROCE_PARSE_OK;
}

enum droce_parse_err droce_parse_mbuf(const struct rte_mbuf *m, uint32_t flags,
				      struct droce_pkt *pkt)
{
	uint8_t icrc_buf[DROCE_ICRC_LEN];
	const void *icrc;
	uint32_t l3_len;

	CHECK(parse_headers(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m),
			    rte_pktmbuf_pkt_len(m), pkt));
	l3_len = pkt->frame_len - pkt->l3_off - DROCE_ICRC_LEN;
	icrc = rte_pktmbuf_read(m, pkt->frame_len - DROCE_ICRC_LEN, DROCE_ICRC_LEN, icrc_buf);
	pkt->icrc = droce_get_le32(icrc);
	if (!(flags & DROCE_PARSE_NO_ICRC) && droce_icrc_mbuf(m, pkt->l3_off, l3_len) != pkt->icrc)
		return DROCE_PARSE_BAD_ICRC;
	return DROCE_PARSE_OK;
}

/* ---- lib/wire/wire_build.c at abae04d ---- */
/* The RoCE v2 frame builder: headers for any opcode, pad, ICRC. */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_jhash.h>

#include "droce_config.h"
#include "droce_wire.h"

uint16_t droce_flow_sport(uint32_t src_qpn, uint32_t dst_qpn)
{
	return DROCE_SPORT_BASE | (rte_jhash_2words(src_qpn, dst_qpn, 0x526f4345) & DROCE_SPORT_MASK);
}

static uint8_t *put_l3(uint8_t *p, const struct droce_flow *f, uint32_t l4_len)
{
	uint8_t ttl = f->hop_limit ? f->hop_limit : 64;

	if (f->ipv6) {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)p;

		ip->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)f->tclass << 20 |
						(f->flow_label & 0xfffff));
		ip->payload_len = rte_cpu_to_be_16(l4_len);
		ip->proto = IPPROTO_UDP;
		ip->hop_limits = ttl;
		memcpy(ip->src_addr, f->sgid, 16);
		memcpy(ip->dst_addr, f->dgid, 16);
		return p + sizeof(*ip);
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;

		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->type_of_service = f->tclass;
		ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + l4_len);
		ip->packet_id = 0;
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = ttl;
		ip->next_proto_id = IPPROTO_UDP;
		ip->hdr_checksum = 0;
		memcpy(&ip->src_addr, f->sgid + 12, 4);
		memcpy(&ip->dst_addr, f->dgid + 12, 4);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		return p + sizeof(*ip);
	}
}

/* Extension headers of @info, from h's fields, at @bth. */
static void put_ext(uint8_t *bth, const struct droce_opcode_info *info,
		    const struct droce_hdr_fields *h)
{
	const uint8_t *off = info->offset;
	uint32_t m = info->mask;

	if (m & DROCE_M_DETH) {
		struct droce_deth *d = (struct droce_deth *)(bth + off[DROCE_HDR_DETH]);

		d->qkey = rte_cpu_to_be_32(h->deth.qkey);
		d->sqpn = rte_cpu_to_be_32(h->deth.sqpn & DROCE_QPN_MASK);
	}
	if (m & DROCE_M_FETH) {
		struct droce_feth *fe = (struct droce_feth *)(bth + off[DROCE_HDR_FETH]);

		fe->bits = rte_cpu_to_be_32((h->feth.sel << DROCE_FETH_SEL_SHIFT & DROCE_FETH_SEL_MASK) |
					    (h->feth.plt & DROCE_FETH_PLT_MASK));
	}
	if (m & DROCE_M_RETH) {
		struct droce_reth *r = (struct droce_reth *)(bth + off[DROCE_HDR_RETH]);

		r->va = rte_cpu_to_be_64(h->reth.va);
		r->rkey = rte_cpu_to_be_32(h->reth.rkey);
		r->len = rte_cpu_to_be_32(h->reth.len);
	}
	if (m & DROCE_M_ATMETH) {
		struct droce_atmeth *a = (struct droce_atmeth *)(bth + off[DROCE_HDR_ATMETH]);

		a->va = rte_cpu_to_be_64(h->atomic.va);
		a->rkey = rte_cpu_to_be_32(h->atomic.rkey);
		a->swap_add = rte_cpu_to_be_64(h->atomic.swap_add);
		a->cmp = rte_cpu_to_be_64(h->atomic.cmp);
	}
	if (m & DROCE_M_AETH)
		droce_aeth_set((struct droce_aeth *)(bth + off[DROCE_HDR_AETH]), h->aeth.syndrome,
			       h->aeth.msn);
	if (m & DROCE_M_ATMACK)
		((struct droce_atmack *)(bth + off[DROCE_HDR_ATMACK]))->orig =
			rte_cpu_to_be_64(h->atomic_orig);
	if (m & DROCE_M_IMMDT)
		((struct droce_immdt *)(bth + off[DROCE_HDR_IMMDT]))->imm = h->imm;
	if (m & DROCE_M_IETH)
		((struct droce_ieth *)(bth + off[DROCE_HDR_IETH]))->rkey =
			rte_cpu_to_be_32(h->ieth_rkey);
	if (m & DROCE_M_CNPETH)
		memset(bth + off[DROCE_HDR_CNPETH], 0, DROCE_CNPETH_LEN);
}

int droce_build_hdrs(void *buf, uint32_t room, const struct droce_flow *f,
		     const struct droce_hdr_fields *h, uint32_t payload_len)
{
	const struct droce_opcode_info *info = droce_opcode_info(h->opcode);
	uint32_t pad = droce_pad_len(payload_len);
	uint32_t hlen = droce_flow_l2l4_len(f) + info->length;
	uint64_t l4_len = sizeof(struct rte_udp_hdr) + info->length + (uint64_t)payload_len + pad +
			  DROCE_ICRC_LEN;
	struct rte_ether_hdr *eth = buf;
	struct rte_udp_hdr *udp;
	uint8_t *p;

	if (info->mask == 0 || (payload_len != 0 && !(info->mask & DROCE_M_PAYLOAD)) ||
	    l4_len + (f->ipv6 ? 0 : sizeof(struct rte_ipv4_hdr)) > UINT16_MAX)
		return -EINVAL;
	if (room < hlen)
		return -ENOSPC;

	rte_ether_addr_copy(&f->dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(&f->src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(f->ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	p = put_l3((uint8_t *)(eth + 1), f, l4_len);

	udp = (struct rte_udp_hdr *)p;
	udp->src_port = rte_cpu_to_be_16(f->sport);
	udp->dst_port = rte_cpu_to_be_16(DROCE_ROCEV2_PORT);
	udp->dgram_len = rte_cpu_to_be_16(l4_len);
	udp->dgram_cksum = 0;           /* allowed for RoCE v2 (Annex A17.3.5): the ICRC covers it */
	p += sizeof(*udp);

	droce_bth_set((struct droce_bth *)p, h->opcode, h->se, h->mig, pad, h->pkey, h->dqpn,
		      h->ackreq, h->psn);
	if (h->fecn || h->becn || h->opcode == DROCE_OP_CNP)
		((struct droce_bth *)p)->qpn |= rte_cpu_to_be_32((h->fecn ? DROCE_BTH_FECN : 0) |
			((h->becn || h->opcode == DROCE_OP_CNP) ? DROCE_BTH_BECN : 0));
	put_ext(p, info, h);
	return hlen;
}

int droce_build(void *buf, uint32_t size, const struct droce_flow *f,
		const struct droce_hdr_fields *h, const void *payload, uint32_t payload_len)
{
	uint32_t pad = droce_pad_len(payload_len), l3 = RTE_ETHER_HDR_LEN, total;
	uint8_t *d = buf;
	int hlen;

	hlen = droce_build_hdrs(buf, size, f, h, payload_len);
	if (hlen < 0)
		return hlen;
	total = hlen + payload_len + pad + DROCE_ICRC_LEN;
	if (size < total)
		return -ENOSPC;
	if (payload_len != 0)
		memcpy(d + hlen, payload, payload_len);
	memset(d + hlen + payload_len, 0, pad);
	droce_put_le32(d + total - DROCE_ICRC_LEN, droce_icrc(d + l3, total - l3 - DROCE_ICRC_LEN));
	return total;
}

int droce_build_mbuf(struct rte_mbuf *m, const struct droce_flow *f,
		     const struct droce_hdr_fields *h)
{
	uint32_t payload_len = rte_pktmbuf_pkt_len(m);
	uint32_t pad = droce_pad_len(payload_len);
	uint32_t hroom = droce_flow_l2l4_len(f) + droce_opcode_info(h->opcode)->length;
	struct rte_mbuf *last = rte_pktmbuf_lastseg(m);
	uint8_t *hdr, *tail;
	int hlen;

	if (rte_pktmbuf_headroom(m) < hroom || rte_pktmbuf_tailroom(last) < pad + DROCE_ICRC_LEN)
		return droce_opcode_known(h->opcode) ? -ENOSPC : -EINVAL;
	hlen = droce_build_hdrs(rte_pktmbuf_mtod(m, uint8_t *) - hroom, hroom, f, h, payload_len);
	if (hlen < 0)
		return hlen;
	hdr = (uint8_t *)rte_pktmbuf_prepend(m, hlen);
	tail = (uint8_t *)rte_pktmbuf_append(m, pad + DROCE_ICRC_LEN);
	RTE_SET_USED(hdr);
	memset(tail, 0, pad);
	droce_put_le32(tail + pad, droce_icrc_mbuf(m, RTE_ETHER_HDR_LEN,
		       rte_pktmbuf_pkt_len(m) - RTE_ETHER_HDR_LEN - DROCE_ICRC_LEN));
	return 0;
}

