/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The RoCE v2 frame builder: headers for any opcode, pad, ICRC. A flow with an 802.1Q tag
 * (droce_flow.vlan) is built untagged, then the tag goes in after the MACs: the ICRC starts
 * at the IP header, so it does not change, and the untagged path pays one branch.
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_jhash.h>

#include "droce_config.h"
#include "droce_wire.h"
#include "wire_private.h"

uint16_t droce_flow_sport_ud(uint32_t src_qpn, uint32_t dst_qpn)
{
	return DROCE_SPORT_BASE | (rte_jhash_2words(src_qpn, dst_qpn, 0x526f4345) &
				   DROCE_SPORT_MASK & ~DROCE_SPORT_STEER_MASK);
}

uint16_t droce_flow_sport(uint32_t src_qpn, uint32_t dst_qpn)
{
	return droce_flow_sport_ud(src_qpn, dst_qpn) |
	       ((dst_qpn - DROCE_QPN_BASE) & DROCE_SPORT_STEER_MASK);
}

static uint8_t *put_ipv6(uint8_t *p, const struct droce_flow *f, uint32_t l4_len, uint8_t ttl)
{
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)p;

	ip->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)f->tclass << 20 |
					(f->flow_label & 0xfffff));
	ip->payload_len = rte_cpu_to_be_16(l4_len);
	ip->proto = IPPROTO_UDP;
	ip->hop_limits = ttl;
	memcpy(ip->src_addr, f->sgid, 16);
	memcpy(ip->dst_addr, f->dgid, 16);
	return p + sizeof(*ip);
}

/*
 * The header's five 32-bit words (memory order) are made in registers, summed, and stored
 * once: composing it in memory and reading it back to sum it stalled on store-to-load
 * forwarding (byte stores read back as words), the builder's largest cost in a profile.
 */
static inline uint8_t *put_ipv4(uint8_t *p, const struct droce_flow *f, uint32_t l4_len,
				uint8_t ttl)
{
	uint32_t w0, w1, w2, w3, w4, ttl_proto = (uint32_t)ttl << 24 | (uint32_t)IPPROTO_UDP << 16;
	uint16_t sum;

	w0 = rte_cpu_to_be_32((uint32_t)RTE_IPV4_VHL_DEF << 24 | (uint32_t)f->tclass << 16 |
			      (uint32_t)(sizeof(struct rte_ipv4_hdr) + l4_len));
	w1 = rte_cpu_to_be_32(RTE_IPV4_HDR_DF_FLAG);		/* packet id 0, DF */
	w2 = rte_cpu_to_be_32(ttl_proto);			/* checksum 0 while summing */
	memcpy(&w3, f->sgid + 12, 4);
	memcpy(&w4, f->dgid + 12, 4);
	sum = (uint16_t)~droce_ipv4_words_sum(w0, w1, w2, w3, w4);	/* memory order */
	w2 = rte_cpu_to_be_32(ttl_proto | rte_be_to_cpu_16(sum));
	memcpy(p, &w0, 4);
	memcpy(p + 4, &w1, 4);
	memcpy(p + 8, &w2, 4);
	memcpy(p + 12, &w3, 4);
	memcpy(p + 16, &w4, 4);
	return p + sizeof(struct rte_ipv4_hdr);
}

/* Extension headers of @info, from h's fields, at @bth: one step per header present. */
static void put_ext(uint8_t *bth, const struct droce_opcode_info *info,
		    const struct droce_hdr_fields *h)
{
	const uint8_t *off = info->offset;

	for (uint32_t m = info->mask & DROCE_M_HDRS; m != 0; m &= m - 1) {
		unsigned int hdr = rte_bsf32(m);
		uint8_t *x = bth + off[hdr];

		switch (hdr) {
		case DROCE_HDR_DETH:
			((struct droce_deth *)x)->qkey = rte_cpu_to_be_32(h->deth.qkey);
			((struct droce_deth *)x)->sqpn = rte_cpu_to_be_32(h->deth.sqpn & DROCE_QPN_MASK);
			break;
		case DROCE_HDR_FETH:
			((struct droce_feth *)x)->bits =
				rte_cpu_to_be_32((h->feth.sel << DROCE_FETH_SEL_SHIFT & DROCE_FETH_SEL_MASK) |
						 (h->feth.plt & DROCE_FETH_PLT_MASK));
			break;
		case DROCE_HDR_RETH:
			((struct droce_reth *)x)->va = rte_cpu_to_be_64(h->reth.va);
			((struct droce_reth *)x)->rkey = rte_cpu_to_be_32(h->reth.rkey);
			((struct droce_reth *)x)->len = rte_cpu_to_be_32(h->reth.len);
			break;
		case DROCE_HDR_ATMETH:
			((struct droce_atmeth *)x)->va = rte_cpu_to_be_64(h->atomic.va);
			((struct droce_atmeth *)x)->rkey = rte_cpu_to_be_32(h->atomic.rkey);
			((struct droce_atmeth *)x)->swap_add = rte_cpu_to_be_64(h->atomic.swap_add);
			((struct droce_atmeth *)x)->cmp = rte_cpu_to_be_64(h->atomic.cmp);
			break;
		case DROCE_HDR_AETH:
			droce_aeth_set((struct droce_aeth *)x, h->aeth.syndrome, h->aeth.msn);
			break;
		case DROCE_HDR_ATMACK:
			((struct droce_atmack *)x)->orig = rte_cpu_to_be_64(h->atomic_orig);
			break;
		case DROCE_HDR_IMMDT:
			((struct droce_immdt *)x)->imm = h->imm;
			break;
		case DROCE_HDR_IETH:
			((struct droce_ieth *)x)->rkey = rte_cpu_to_be_32(h->ieth_rkey);
			break;
		case DROCE_HDR_CNPETH:
			memset(x, 0, DROCE_CNPETH_LEN);
			break;
		}
	}
}

/* Bytes of untagged Ethernet + IP + UDP for a flow. */
static inline uint32_t l2l4_untagged(const struct droce_flow *f)
{
	return RTE_ETHER_HDR_LEN + (f->ipv6 ? sizeof(struct rte_ipv6_hdr) :
		sizeof(struct rte_ipv4_hdr)) + sizeof(struct rte_udp_hdr);
}

/* The 802.1Q tag into the untagged frame at @p frame, which has RTE_VLAN_HLEN bytes before
 * it: the MACs move up, the tag goes after them. */
static void tag_insert(uint8_t *frame, uint16_t tci)
{
	uint8_t *d = frame - RTE_VLAN_HLEN;
	uint32_t tag = rte_cpu_to_be_32((uint32_t)RTE_ETHER_TYPE_VLAN << 16 | tci);

	memmove(d, frame, 2 * RTE_ETHER_ADDR_LEN);
	memcpy(d + 2 * RTE_ETHER_ADDR_LEN, &tag, sizeof(tag));
}

/* droce_build_hdrs() without the tag, inline for droce_build_mbuf(). */
static inline int build_hdrs(uint8_t *buf, uint32_t room, const struct droce_flow *f,
			     const struct droce_hdr_fields *h, uint32_t payload_len)
{
	const struct droce_opcode_info *info = droce_opcode_info(h->opcode);
	uint32_t pad = droce_pad_len(payload_len);
	uint32_t hlen = l2l4_untagged(f) + info->length;
	uint64_t l4_len = sizeof(struct rte_udp_hdr) + info->length + (uint64_t)payload_len + pad +
			  DROCE_ICRC_LEN;
	uint8_t ttl = f->hop_limit ? f->hop_limit : 64;
	struct rte_udp_hdr *udp;
	struct droce_bth *bth;
	rte_be16_t type;
	uint32_t fb;
	uint8_t *p;

	if (info->mask == 0 || (payload_len != 0 && !(info->mask & DROCE_M_PAYLOAD)) ||
	    l4_len + (f->ipv6 ? 0 : sizeof(struct rte_ipv4_hdr)) > UINT16_MAX)
		return -EINVAL;
	if (room < hlen)
		return -ENOSPC;

	memcpy(buf, &f->dst_mac, RTE_ETHER_ADDR_LEN);
	memcpy(buf + RTE_ETHER_ADDR_LEN, &f->src_mac, RTE_ETHER_ADDR_LEN);
	if (likely(!f->ipv6)) {
		type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
		p = put_ipv4(buf + RTE_ETHER_HDR_LEN, f, l4_len, ttl);
	} else {
		type = RTE_BE16(RTE_ETHER_TYPE_IPV6);
		p = put_ipv6(buf + RTE_ETHER_HDR_LEN, f, l4_len, ttl);
	}
	memcpy(buf + 2 * RTE_ETHER_ADDR_LEN, &type, sizeof(type));

	udp = (struct rte_udp_hdr *)p;
	udp->src_port = rte_cpu_to_be_16(f->sport);
	udp->dst_port = RTE_BE16(DROCE_ROCEV2_PORT);
	udp->dgram_len = rte_cpu_to_be_16(l4_len);
	udp->dgram_cksum = 0;           /* allowed for RoCE v2 (Annex A17.3.5): the ICRC covers it */

	bth = (struct droce_bth *)(p + sizeof(*udp));
	droce_bth_set(bth, h->opcode, h->se, h->mig, pad, h->pkey, h->dqpn, h->ackreq, h->psn);
	fb = (h->fecn ? DROCE_BTH_FECN : 0) |
	     ((h->becn || h->opcode == DROCE_OP_CNP) ? DROCE_BTH_BECN : 0);
	if (fb != 0)
		bth->qpn |= rte_cpu_to_be_32(fb);
	put_ext((uint8_t *)bth, info, h);
	return hlen;
}

int droce_build_hdrs(void *buf, uint32_t room, const struct droce_flow *f,
		     const struct droce_hdr_fields *h, uint32_t payload_len)
{
	int hlen;

	if (likely(!f->vlan))
		return build_hdrs(buf, room, f, h, payload_len);
	if (room < RTE_VLAN_HLEN)
		return droce_opcode_known(h->opcode) ? -ENOSPC : -EINVAL;
	hlen = build_hdrs((uint8_t *)buf + RTE_VLAN_HLEN, room - RTE_VLAN_HLEN, f, h, payload_len);
	if (hlen < 0)
		return hlen;
	tag_insert((uint8_t *)buf + RTE_VLAN_HLEN, f->vlan_tci);
	return hlen + RTE_VLAN_HLEN;
}

int droce_build(void *buf, uint32_t size, const struct droce_flow *f,
		const struct droce_hdr_fields *h, const void *payload, uint32_t payload_len)
{
	uint32_t pad = droce_pad_len(payload_len), l3 = droce_flow_l2_len(f), total;
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
	droce_put_le32(d + total - DROCE_ICRC_LEN, wire_icrc_contig(d + l3, total - l3 - DROCE_ICRC_LEN));
	return total;
}

/* droce_build_mbuf() of an untagged frame, whose headers need @p hroom bytes. */
static __rte_always_inline int build_mbuf(struct rte_mbuf *m, const struct droce_flow *f,
					  const struct droce_hdr_fields *h, uint32_t hroom)
{
	uint32_t payload_len = rte_pktmbuf_pkt_len(m);
	uint32_t pad = droce_pad_len(payload_len);
	struct rte_mbuf *last = m->nb_segs == 1 ? m : rte_pktmbuf_lastseg(m);
	uint8_t *tail;
	int hlen;

	if (rte_pktmbuf_headroom(m) < hroom || rte_pktmbuf_tailroom(last) < pad + DROCE_ICRC_LEN)
		return droce_opcode_known(h->opcode) ? -ENOSPC : -EINVAL;
	hlen = build_hdrs(rte_pktmbuf_mtod(m, uint8_t *) - hroom, hroom, f, h, payload_len);
	if (hlen < 0)
		return hlen;
	/* rte_pktmbuf_prepend() and rte_pktmbuf_append(), whose room is checked above. */
	m->data_off -= hlen;
	m->data_len += hlen;
	tail = rte_pktmbuf_mtod_offset(last, uint8_t *, last->data_len);
	last->data_len += pad + DROCE_ICRC_LEN;
	m->pkt_len += hlen + pad + DROCE_ICRC_LEN;
	for (uint32_t i = 0; i < pad; i++)
		tail[i] = 0;
	droce_put_le32(tail + pad, m->nb_segs == 1 ?
		       wire_icrc_contig(rte_pktmbuf_mtod_offset(m, uint8_t *, RTE_ETHER_HDR_LEN),
					 m->data_len - RTE_ETHER_HDR_LEN - DROCE_ICRC_LEN) :
		       droce_icrc_mbuf(m, RTE_ETHER_HDR_LEN,
				       m->pkt_len - RTE_ETHER_HDR_LEN - DROCE_ICRC_LEN));
	return 0;
}

/* A tagged flow's frame: built untagged where the headroom leaves the tag its room. */
static int __rte_noinline build_mbuf_tagged(struct rte_mbuf *m, const struct droce_flow *f,
					    const struct droce_hdr_fields *h)
{
	uint32_t hroom = l2l4_untagged(f) + droce_opcode_info(h->opcode)->length;
	int rc;

	if (rte_pktmbuf_headroom(m) < hroom + RTE_VLAN_HLEN)
		return droce_opcode_known(h->opcode) ? -ENOSPC : -EINVAL;
	rc = build_mbuf(m, f, h, hroom);
	if (rc != 0)
		return rc;
	tag_insert(rte_pktmbuf_mtod(m, uint8_t *), f->vlan_tci);
	m->data_off -= RTE_VLAN_HLEN;	/* rte_pktmbuf_prepend(), room checked above */
	m->data_len += RTE_VLAN_HLEN;
	m->pkt_len += RTE_VLAN_HLEN;
	return 0;
}

int droce_build_mbuf(struct rte_mbuf *m, const struct droce_flow *f,
		     const struct droce_hdr_fields *h)
{
	if (unlikely(f->vlan))
		return build_mbuf_tagged(m, f, h);
	return build_mbuf(m, f, h, l2l4_untagged(f) + droce_opcode_info(h->opcode)->length);
}
