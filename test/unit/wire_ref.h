/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* The frozen reference wire code (wire_ref.c): droce_X of commit abae04d as ref_X. */
#ifndef WIRE_REF_H
#define WIRE_REF_H

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

#endif
