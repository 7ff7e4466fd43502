/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
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
