/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * --loop N: the capture played N times in a row, as one capture N times as long. Pass k
 * (from 0) is the capture's frames with, per RC or UC QP of the scenario:
 * - every request's and response's PSN moved on by k times the PSNs a pass takes (from the
 *   QP's first request to just past its last message, a READ's response packets counted);
 * - every response's MSN moved on by k times the messages a pass's requests carry (each
 *   message once, however often it was resent);
 * - a FETCH_ADD's original value (its atomic ACK) moved on by k times what the pass adds to
 *   that address (the responder's memory after pass k-1 holds the capture's value plus that);
 * each changed frame's ICRC recomputed. Pass k starts one mean frame gap after pass k-1's
 * last frame. UD frames and frames that are not requests or responses repeat as they are.
 * What would not repeat the capture is refused with the reason: a NAK other than PSN
 * sequence error (it ends the QP), a COMPARE_SWAP (its outcome in the next pass is not the
 * capture's), a WRITE or ATOMIC_WRITE over an address a FETCH_ADD uses, a QP whose requests
 * take 2^23 PSNs or more per pass (they would wrap into the pass before).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define LOOP_MAX_FRAMES (4u << 20)	/* frames of all passes together */
#define LOOP_MAX_BYTES (1ull << 30)	/* their bytes */
#define LOOP_MAX_ADDRS 4096		/* distinct FETCH_ADD addresses */

struct pass_qp {
	uint32_t first;		/* the first request's PSN */
	uint32_t psns;		/* PSNs a pass takes */
	uint32_t msgs;		/* messages a pass carries */
};

struct fadd {
	uint32_t rkey;
	uint64_t va, total;	/* what a pass adds there */
};

/* The first request of the capture with a (DestQP, PSN): open addressing, frame + 1. */
struct slot {
	uint64_t key;
	uint32_t frame;
};

struct loop {
	const struct replay_capture *c;
	const struct replay_scenario *sc;
	struct pass_qp qp[REPLAY_MAX_QP];
	struct fadd fa[LOOP_MAX_ADDRS];
	unsigned int n_fa;
	struct slot *slot;		/* the requests by (DestQP, PSN) */
	size_t n_slot;			/* a power of two */
	const struct fadd **ack_fa;	/* per frame: the address an atomic ACK answers */
	char *err;
	size_t len;
};

static const struct droce_bth *bth(const struct replay_frame *f)
{
	return droce_pkt_bth(&f->pkt);
}

/* The scenario QP (index) a request to it or a response from it belongs to, or -1 (UD, or
 * a frame of no QP of the scenario). */
static int qp_of(const struct loop *l, const struct replay_frame *f)
{
	unsigned int i;
	uint32_t qpn;

	if (f->kind != RF_REQUEST && f->kind != RF_RESPONSE)
		return -1;	/* its pkt is not a parsed frame's: no BTH to read */
	qpn = droce_bth_qpn(bth(f));
	for (i = 0; i < l->sc->n_qp; i++) {
		const struct replay_qp *q = &l->sc->qp[i];

		if (q->type != REPLAY_UD &&
		    (f->kind == RF_REQUEST ? q->cap_qpn : q->peer_qpn) == qpn)
			return (int)i;
	}
	return -1;
}

/* Pass 1: each QP's first PSN and the PSNs a pass takes. */
static int psn_spans(struct loop *l)
{
	bool seen[REPLAY_MAX_QP] = { false };
	unsigned int i;

	for (i = 0; i < l->c->n; i++) {
		const struct replay_frame *f = &l->c->f[i];
		const struct droce_aeth *a = f->kind == RF_RESPONSE ?
			droce_pkt_ext(&f->pkt, DROCE_HDR_AETH) : NULL;
		int q = f->kind == RF_REQUEST ? qp_of(l, f) : -1;
		uint32_t d;

		if (a != NULL && (droce_aeth_syndrome(a) & DROCE_AETH_TYPE_MASK) == DROCE_AETH_NAK &&
		    (droce_aeth_syndrome(a) & DROCE_AETH_VALUE_MASK) != DROCE_NAK_PSN_SEQ_ERR)
			return replay_errf(l->err, l->len, "frame %u: the responder's NAK %#04x ends "
					   "the QP: no pass can follow", i + 1,
					   droce_aeth_syndrome(a));
		if (q < 0)
			continue;
		if (!seen[q]) {
			seen[q] = true;
			l->qp[q].first = droce_bth_psn(bth(f));
		}
		d = (droce_bth_psn(bth(f)) - l->qp[q].first) & DROCE_PSN_MASK;
		if (d >= (1u << 23))	/* before the first: a resend of an earlier message */
			continue;
		d += replay_psn_span(&f->pkt, l->sc);
		if (d >= (1u << 23))
			return replay_errf(l->err, l->len, "QP %#x: a pass takes %u PSNs or more, "
					   "the next would wrap into it", l->sc->qp[q].cap_qpn,
					   1u << 23);
		if (d > l->qp[q].psns)
			l->qp[q].psns = d;
	}
	return 0;
}

/* Pass 2: the messages per QP, each once (a bitmap of the end PSNs seen). */
static int messages(struct loop *l)
{
	uint8_t *bits[REPLAY_MAX_QP] = { NULL };
	unsigned int i;
	int rc = 0;

	for (i = 0; i < l->sc->n_qp && rc == 0; i++)
		if (l->qp[i].psns != 0 && (bits[i] = calloc(l->qp[i].psns / 8 + 1, 1)) == NULL)
			rc = replay_errf(l->err, l->len, "out of memory");
	for (i = 0; i < l->c->n && rc == 0; i++) {
		const struct replay_frame *f = &l->c->f[i];
		int q = f->kind == RF_REQUEST ? qp_of(l, f) : -1;
		uint32_t d;

		if (q < 0 || !(f->pkt.mask & DROCE_M_LAST))
			continue;
		d = (droce_bth_psn(bth(f)) - l->qp[q].first) & DROCE_PSN_MASK;
		if (d >= l->qp[q].psns || (bits[q][d / 8] & (1u << (d % 8))))
			continue;
		bits[q][d / 8] |= (uint8_t)(1u << (d % 8));
		l->qp[q].msgs++;
	}
	for (i = 0; i < l->sc->n_qp; i++)
		free(bits[i]);
	return rc;
}

static uint64_t req_key(const struct replay_frame *f)
{
	return (uint64_t)droce_bth_qpn(bth(f)) << 24 | droce_bth_psn(bth(f));
}

/* The requests by (DestQP, PSN), each key's first frame kept. */
static int index_requests(struct loop *l)
{
	unsigned int i, n = 0;

	for (i = 0; i < l->c->n; i++)
		n += l->c->f[i].kind == RF_REQUEST;
	for (l->n_slot = 64; l->n_slot < 2 * (size_t)n; l->n_slot *= 2)
		;
	l->slot = calloc(l->n_slot, sizeof(*l->slot));
	if (l->slot == NULL)
		return replay_errf(l->err, l->len, "out of memory");
	for (i = 0; i < l->c->n; i++) {
		uint64_t key;
		size_t h;

		if (l->c->f[i].kind != RF_REQUEST)
			continue;
		key = req_key(&l->c->f[i]);
		for (h = (key * 0x9e3779b97f4a7c15ull) >> 20 & (l->n_slot - 1);
		     l->slot[h].frame != 0 && l->slot[h].key != key; h = (h + 1) & (l->n_slot - 1))
			;
		if (l->slot[h].frame == 0)
			l->slot[h] = (struct slot){ key, i + 1 };
	}
	return 0;
}

/* The capture's first request to DestQP @p qpn at @p psn (frame index), or -1. */
static int first_request(const struct loop *l, uint32_t qpn, uint32_t psn)
{
	uint64_t key = (uint64_t)qpn << 24 | psn;
	size_t h;

	for (h = (key * 0x9e3779b97f4a7c15ull) >> 20 & (l->n_slot - 1); l->slot[h].frame != 0;
	     h = (h + 1) & (l->n_slot - 1))
		if (l->slot[h].key == key)
			return (int)l->slot[h].frame - 1;
	return -1;
}

static struct fadd *fadd_find(struct loop *l, uint32_t rkey, uint64_t va)
{
	unsigned int i;

	for (i = 0; i < l->n_fa; i++)
		if (l->fa[i].rkey == rkey && l->fa[i].va == va)
			return &l->fa[i];
	return NULL;
}

/* Request frame @p i is a resend: an earlier request has its DestQP and PSN. */
static bool resent(const struct loop *l, unsigned int i)
{
	const struct replay_frame *f = &l->c->f[i];

	return first_request(l, droce_bth_qpn(bth(f)), droce_bth_psn(bth(f))) != (int)i;
}

/* Pass 3: what each pass adds per FETCH_ADD address; refuse what would not repeat. */
static int atomics(struct loop *l)
{
	unsigned int i;

	for (i = 0; i < l->c->n; i++) {
		const struct replay_frame *f = &l->c->f[i];
		const struct droce_atmeth *a;
		struct fadd *x;

		if (f->kind != RF_REQUEST || !(f->pkt.mask & DROCE_M_ATMETH))
			continue;
		if (f->pkt.opcode == DROCE_OP_RC_COMPARE_SWAP)
			return replay_errf(l->err, l->len, "frame %u: a COMPARE_SWAP does not repeat "
					   "(its outcome in the next pass is not the capture's)",
					   i + 1);
		if (resent(l, i))	/* the responder answers a resend from its memory */
			continue;
		a = droce_pkt_ext(&f->pkt, DROCE_HDR_ATMETH);
		x = fadd_find(l, rte_be_to_cpu_32(a->rkey), rte_be_to_cpu_64(a->va));
		if (x == NULL) {
			if (l->n_fa == LOOP_MAX_ADDRS)
				return replay_errf(l->err, l->len, "more than %u FETCH_ADD addresses",
						   LOOP_MAX_ADDRS);
			x = &l->fa[l->n_fa++];
			*x = (struct fadd){ rte_be_to_cpu_32(a->rkey), rte_be_to_cpu_64(a->va), 0 };
		}
		x->total += rte_be_to_cpu_64(a->swap_add);
	}
	for (i = 0; i < l->c->n; i++) {	/* a write over one of them */
		const struct replay_frame *f = &l->c->f[i];
		const struct droce_reth *r = f->kind == RF_REQUEST ?
			droce_pkt_ext(&f->pkt, DROCE_HDR_RETH) : NULL;
		unsigned int k;

		if (r == NULL || !(f->pkt.mask & (DROCE_M_WRITE | DROCE_M_ATMWR)))
			continue;
		for (k = 0; k < l->n_fa; k++) {
			uint64_t va = rte_be_to_cpu_64(r->va);
			uint64_t end = va + ((f->pkt.mask & DROCE_M_ATMWR) ? 8 :
					     rte_be_to_cpu_32(r->len));

			if (l->fa[k].rkey == rte_be_to_cpu_32(r->rkey) && l->fa[k].va + 8 > va &&
			    l->fa[k].va < end)
				return replay_errf(l->err, l->len, "frame %u: a write over the address "
						   "of a FETCH_ADD (%#" PRIx64 ") does not repeat",
						   i + 1, l->fa[k].va);
		}
	}
	return 0;
}

/* Per atomic ACK of a scenario QP: the FETCH_ADD address it answers (the request with its
 * QP and PSN), NULL for any other frame. */
static int ack_addresses(struct loop *l)
{
	unsigned int i;

	l->ack_fa = calloc(l->c->n, sizeof(*l->ack_fa));
	if (l->ack_fa == NULL)
		return replay_errf(l->err, l->len, "out of memory");
	for (i = 0; i < l->c->n; i++) {
		const struct replay_frame *f = &l->c->f[i], *g;
		const struct droce_atmeth *a;
		int q = f->kind == RF_RESPONSE ? qp_of(l, f) : -1, j;

		if (q < 0 || !(f->pkt.mask & DROCE_M_ATMACK))
			continue;
		j = first_request(l, l->sc->qp[q].cap_qpn, droce_bth_psn(bth(f)));
		g = j >= 0 ? &l->c->f[j] : NULL;
		if (g == NULL || g->pkt.opcode != DROCE_OP_RC_FETCH_ADD)
			continue;
		a = droce_pkt_ext(&g->pkt, DROCE_HDR_ATMETH);
		l->ack_fa[i] = fadd_find(l, rte_be_to_cpu_32(a->rkey), rte_be_to_cpu_64(a->va));
	}
	return 0;
}

/* Frame @p i of pass @p k into @p out (its data copied, moved on, parsed again). */
static int pass_frame(struct loop *l, unsigned int i, unsigned int k, uint64_t shift_us,
		      struct replay_frame *out)
{
	const struct replay_frame *f = &l->c->f[i];
	int q = k > 0 ? qp_of(l, f) : -1;
	struct droce_bth *b;

	*out = *f;
	out->data = malloc(f->len);
	if (out->data == NULL)
		return replay_errf(l->err, l->len, "out of memory");
	memcpy(out->data, f->data, f->len);
	out->ts_us = f->ts_us + shift_us;
	if (f->kind != RF_REQUEST && f->kind != RF_RESPONSE) {
		/* as classify_one() left it: parsed where it parses, pointing at this copy */
		(void)droce_parse(out->data, out->len, 0, &out->pkt);
		return 0;
	}
	if (q >= 0) {
		const struct droce_pkt *p = &f->pkt;
		uint32_t apsn;

		b = (struct droce_bth *)(out->data + p->bth_off);
		apsn = rte_be_to_cpu_32(b->apsn);
		b->apsn = rte_cpu_to_be_32((apsn & ~DROCE_PSN_MASK) |
					   ((apsn + k * l->qp[q].psns) & DROCE_PSN_MASK));
		if (p->mask & DROCE_M_AETH) {
			struct droce_aeth *a = (struct droce_aeth *)(out->data + p->bth_off +
				droce_opcode_table[p->opcode].offset[DROCE_HDR_AETH]);

			droce_aeth_set(a, droce_aeth_syndrome(a),
				       droce_aeth_msn(a) + k * l->qp[q].msgs);
		}
		if (p->mask & DROCE_M_ATMACK) {
			const struct fadd *x = l->ack_fa[i];
			struct droce_atmack *a = (struct droce_atmack *)(out->data + p->bth_off +
				droce_opcode_table[p->opcode].offset[DROCE_HDR_ATMACK]);

			if (x != NULL)
				a->orig = rte_cpu_to_be_64(rte_be_to_cpu_64(a->orig) + k * x->total);
		}
		droce_put_le32(out->data + p->frame_len - DROCE_ICRC_LEN,
			       droce_icrc(out->data + p->l3_off,
					  p->frame_len - DROCE_ICRC_LEN - p->l3_off));
	}
	if (droce_parse(out->data, out->len, 0, &out->pkt) != DROCE_PARSE_OK)
		return replay_errf(l->err, l->len, "pass %u: a moved frame does not parse", k + 1);
	return 0;
}

/* N passes' receive WRs (recv_post = start) fit every QP: 0, or -1 with the reason. */
static int recv_check(const struct replay_scenario *sc, unsigned int n, char *err, size_t len)
{
	unsigned int i;

	for (i = 0; i < sc->n_qp; i++) {
		const struct replay_qp *q = &sc->qp[i];

		if (!q->recv_follow && (uint64_t)q->recv_wrs * n > REPLAY_MAX_RECV_WRS)
			return replay_errf(err, len, "[qp %#x]: %u passes need %" PRIu64 " receive "
					   "WRs, more than %u", q->cap_qpn, n,
					   (uint64_t)q->recv_wrs * n, REPLAY_MAX_RECV_WRS);
	}
	return 0;
}

int replay_loop_scenario(struct replay_scenario *sc, unsigned int n, char *err, size_t len)
{
	unsigned int i;

	if (recv_check(sc, n, err, len) != 0)
		return -1;
	for (i = 0; i < sc->n_qp; i++)
		if (!sc->qp[i].recv_follow)	/* else posted per request, every pass */
			sc->qp[i].recv_wrs *= n;
	return 0;
}

/* The N passes into a new frame array; -1 on failure (nothing changed). */
static int passes(struct loop *l, struct replay_capture *c, unsigned int n)
{
	uint64_t span = c->f[c->n - 1].ts_us - c->f[0].ts_us;
	uint64_t gap = c->n > 1 ? span / (c->n - 1) : 1000;
	struct replay_frame *f = calloc((size_t)c->n * n, sizeof(*f));
	unsigned int i, k;

	if (f == NULL)
		return replay_errf(l->err, l->len, "out of memory");
	for (k = 0; k < n; k++)
		for (i = 0; i < c->n; i++)
			if (pass_frame(l, i, k, k * (span + gap), &f[k * c->n + i]) != 0) {
				unsigned int j;

				for (j = 0; j <= k * c->n + i; j++)
					free(f[j].data);
				free(f);
				return -1;
			}
	for (i = 0; i < c->n; i++)
		free(c->f[i].data);
	free(c->f);
	c->f = f;
	c->n *= n;
	return 0;
}

int replay_loop(struct replay_capture *c, struct replay_scenario *sc, unsigned int n,
		char *err, size_t len)
{
	static struct loop l;	/* large: not on the stack */
	uint64_t bytes = 0;
	unsigned int i;
	int rc;

	if (n <= 1 || c->n == 0)
		return 0;
	memset(&l, 0, sizeof(l));
	l.c = c;
	l.sc = sc;
	l.err = err;
	l.len = len;
	for (i = 0; i < c->n; i++)
		bytes += c->f[i].len;
	if ((uint64_t)c->n * n > LOOP_MAX_FRAMES || bytes * n > LOOP_MAX_BYTES)
		return replay_errf(err, len, "%u passes of %u frames (%" PRIu64 " bytes): more "
				   "than %u frames or %llu MiB in all", n, c->n, bytes,
				   LOOP_MAX_FRAMES, LOOP_MAX_BYTES >> 20);
	rc = index_requests(&l) != 0 || psn_spans(&l) != 0 || messages(&l) != 0 ||
	     atomics(&l) != 0 || ack_addresses(&l) != 0 || recv_check(sc, n, err, len) != 0 ||
	     passes(&l, c, n) != 0 ? -1 : 0;
	if (rc == 0)	/* checked: it cannot fail now */
		(void)replay_loop_scenario(sc, n, err, len);
	free(l.slot);
	free(l.ack_fa);
	return rc;
}
