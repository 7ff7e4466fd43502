/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* A tap for tt.h: records every frame on the wire (who sent it, when, opcode, PSN, AETH, RETH,
 * FETH). */
#ifndef TAP_H
#define TAP_H

#include "tt.h"

#define TAP_MAX 65536

struct tap_rec {
	int from;
	uint8_t opcode;
	uint8_t syndrome;	/* AETH syndrome, or 0xff without an AETH */
	uint8_t ackreq;
	uint32_t psn;
	uint32_t len;		/* payload */
	uint64_t va;		/* RETH (0 without one) */
	uint32_t dmalen;
	uint32_t rkey;		/* RETH (0 without one) */
	uint8_t plt, sel;	/* FETH (0 without one) */
	uint64_t now;
};

static struct tap_rec tap_log[TAP_MAX];
static unsigned int tap_n;

static void tap_record(struct tt *tt, int from, const struct droce_pkt *pkt, struct rte_mbuf *m)
{
	const struct droce_aeth *a = droce_pkt_ext(pkt, DROCE_HDR_AETH);
	const struct droce_reth *reth = droce_pkt_ext(pkt, DROCE_HDR_RETH);
	const struct droce_feth *feth = droce_pkt_ext(pkt, DROCE_HDR_FETH);
	struct tap_rec *r;

	RTE_SET_USED(m);
	if (tap_n >= TAP_MAX)
		return;
	r = &tap_log[tap_n++];
	r->from = from;
	r->opcode = pkt->opcode;
	r->syndrome = a != NULL ? droce_aeth_syndrome(a) : 0xff;
	r->ackreq = droce_bth_ackreq(droce_pkt_bth(pkt));
	r->psn = droce_bth_psn(droce_pkt_bth(pkt));
	r->len = pkt->payload_len;
	r->va = reth != NULL ? rte_be_to_cpu_64(reth->va) : 0;
	r->dmalen = reth != NULL ? rte_be_to_cpu_32(reth->len) : 0;
	r->rkey = reth != NULL ? rte_be_to_cpu_32(reth->rkey) : 0;
	r->plt = feth != NULL ? droce_feth_plt(feth) : 0;
	r->sel = feth != NULL ? droce_feth_sel(feth) : 0;
	r->now = tt->env.now;
}

static inline void tap_start(struct tt *tt)
{
	tap_n = 0;
	tt->tap = tap_record;
}

/* Number of frames from @p from with @p opcode (and @p syndrome unless it is -1). */
static inline unsigned int tap_count(int from, int opcode, int syndrome)
{
	unsigned int i, n = 0;

	for (i = 0; i < tap_n; i++)
		if (tap_log[i].from == from && (opcode < 0 || tap_log[i].opcode == opcode) &&
		    (syndrome < 0 || tap_log[i].syndrome == syndrome))
			n++;
	return n;
}

/* The @p k-th (0-based) such frame, or NULL. */
static inline const struct tap_rec *tap_find(int from, int opcode, int syndrome, unsigned int k)
{
	unsigned int i;

	for (i = 0; i < tap_n; i++)
		if (tap_log[i].from == from && (opcode < 0 || tap_log[i].opcode == opcode) &&
		    (syndrome < 0 || tap_log[i].syndrome == syndrome) && k-- == 0)
			return &tap_log[i];
	return NULL;
}

#endif
