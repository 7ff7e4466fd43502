/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* The frozen reference wire code (wire_ref.c): droce_X of commit abae04d as ref_X. */
#ifndef WIRE_REF_H
#define WIRE_REF_H

#include <string.h>

#include "droce_wire.h"

uint32_t ref_icrc(const void *l3, uint32_t len);
uint32_t ref_icrc_mbuf(const struct rte_mbuf *m, uint32_t l3_off, uint32_t len);
enum droce_parse_err ref_parse(const void *frame, uint32_t len, uint32_t flags,
			       struct droce_pkt *pkt);
enum droce_parse_err ref_parse_mbuf(const struct rte_mbuf *m, uint32_t flags,
				    struct droce_pkt *pkt);
int ref_build_hdrs(void *buf, uint32_t room, const struct droce_flow *f,
		   const struct droce_hdr_fields *h, uint32_t payload_len);
int ref_build(void *buf, uint32_t size, const struct droce_flow *f,
	      const struct droce_hdr_fields *h, const void *payload, uint32_t payload_len);
int ref_build_mbuf(struct rte_mbuf *m, const struct droce_flow *f,
		   const struct droce_hdr_fields *h);

/* The same view, field by field. */
static inline int ref_pkt_same(const struct droce_pkt *a, const struct droce_pkt *b)
{
	return a->hdr == b->hdr && a->frame_len == b->frame_len &&
	       a->payload_off == b->payload_off && a->payload_len == b->payload_len &&
	       a->mask == b->mask && a->icrc == b->icrc && a->l3_off == b->l3_off &&
	       a->l4_off == b->l4_off && a->bth_off == b->bth_off && a->sport == b->sport &&
	       a->vlan_tci == b->vlan_tci && a->ipv6 == b->ipv6 && a->opcode == b->opcode &&
	       a->pad == b->pad && a->hop_limit == b->hop_limit && a->tclass == b->tclass &&
	       a->flow_label == b->flow_label && memcmp(a->sgid, b->sgid, 16) == 0 &&
	       memcmp(a->dgid, b->dgid, 16) == 0;
}

/* Whether a parse result leaves a complete view (a failed parse leaves it partial). */
static inline int ref_view_complete(enum droce_parse_err e)
{
	return e == DROCE_PARSE_OK || e == DROCE_PARSE_BAD_ICRC;
}

#endif
