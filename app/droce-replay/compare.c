/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * --compare: droce's responses against the responses of the capture (rxe's), per requester QP
 * (the responses' DestQP), each side in the order it was sent. Rules (doc/droce-replay.md):
 * - READ responses and atomic ACKs: one for one, same opcode, PSN, AETH syndrome and MSN
 *   (where the opcode has an AETH), same payload (READ) or original value (atomic);
 * - ACKs and NAKs: an rxe ACK at PSN p is matched by droce's next ACK. Same PSN: the syndrome
 *   and MSN must be equal. A later PSN q (droce coalesced consecutive ACKs, which a requester
 *   reads as cumulative, IBA 9.7.5.1.1): p is covered when both are positive ACKs, and
 *   droce's ACK is then compared with rxe's ACK at q. An earlier PSN: droce sent an ACK rxe
 *   did not (a difference). A NAK is never coalesced: it must match one for one;
 * - rxe's NAK PSN sequence error right after its RNR NAK at the same PSN is rxe's alone (droce
 *   stays silent after an RNR NAK until the retry): counted apart, not a difference;
 * - anything droce sends that no rxe response matches is a difference;
 * - droce's receive completions carry the captured requests' immediate data, in order (not
 *   with --wire: the device under test's completions are its own).
 * With --wire the answering side is the device under test, named "device" in what is printed.
 * Not compared: the UDP source port, IP ID and checksum, the ICRC (each frame's own, checked
 * by the parser), the MACs and IPs (the same by construction).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

struct item {
	const struct droce_pkt *pkt;
	const uint8_t *data;
	unsigned int frame;	/* capture frame number (1-based) or droce's output number */
};

struct cmp {
	FILE *o;
	const char *who;	/* the side that answered: "droce", or "device" (--wire) */
	unsigned int diffs, covered, matched, after_rnr;
};

static uint32_t psn_of(const struct item *it)
{
	return droce_bth_psn(droce_pkt_bth(it->pkt));
}

static const char *op_name(const struct item *it)
{
	const char *n = droce_opcode_table[it->pkt->opcode].name;

	return n != NULL ? n : "?";
}

static bool aeth_of(const struct item *it, uint8_t *syn, uint32_t *msn)
{
	const struct droce_aeth *a = droce_pkt_ext(it->pkt, DROCE_HDR_AETH);

	if (a == NULL)
		return false;
	*syn = droce_aeth_syndrome(a);
	*msn = droce_aeth_msn(a);
	return true;
}

static void describe(FILE *o, const char *who, const struct item *it)
{
	uint8_t syn;
	uint32_t msn;

	fprintf(o, "%s %s PSN %u", who, op_name(it), psn_of(it));
	if (aeth_of(it, &syn, &msn))
		fprintf(o, " syndrome %#04x MSN %u", syn, msn);
	if (it->pkt->mask & DROCE_M_ATMACK)
		fprintf(o, " orig %#" PRIx64, rte_be_to_cpu_64(((const struct droce_atmack *)
			droce_pkt_ext(it->pkt, DROCE_HDR_ATMACK))->orig));
	if (it->pkt->mask & DROCE_M_PAYLOAD)
		fprintf(o, " %u bytes", it->pkt->payload_len);
}

static void diff(struct cmp *c, const struct item *e, const struct item *d, const char *what)
{
	c->diffs++;
	if (e != NULL) {
		fprintf(c->o, "DIFF capture frame %u: ", e->frame);
		describe(c->o, "rxe", e);
	} else {
		fprintf(c->o, "DIFF no capture frame");
	}
	fprintf(c->o, "; ");
	if (d != NULL) {
		describe(c->o, c->who, d);
		fprintf(c->o, " (%s frame %u)", c->who, d->frame);
	} else {
		fprintf(c->o, "%s: nothing", c->who);
	}
	fprintf(c->o, ": %s\n", what);
}

static bool is_ack(const struct item *it)
{
	return (it->pkt->mask & DROCE_M_ACK) != 0;
}

static bool positive(const struct item *it)
{
	uint8_t syn = 0;
	uint32_t msn;

	return aeth_of(it, &syn, &msn) && (syn & DROCE_AETH_TYPE_MASK) == DROCE_AETH_ACK;
}

static uint8_t syndrome(const struct item *it)
{
	uint8_t syn = 0;
	uint32_t msn;

	return aeth_of(it, &syn, &msn) ? syn : 0;
}

/* rxe's NAK PSN sequence error @p e[i] right after its own RNR NAK at the same PSN (rxe NAKs
 * the packet after the one it RNR NAKed as out of sequence), where droce's next response @p d
 * is not that NAK: droce sent its RNR NAK and stays silent until the retry. */
static bool rxe_nak_after_rnr(const struct item *e, unsigned int i, const struct item *d)
{
	return i > 0 && is_ack(&e[i]) && syndrome(&e[i]) == (DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR) &&
	       is_ack(&e[i - 1]) && (syndrome(&e[i - 1]) & DROCE_AETH_TYPE_MASK) ==
	       DROCE_AETH_RNR_NAK && psn_of(&e[i - 1]) == psn_of(&e[i]) &&
	       (d == NULL || !is_ack(d) || syndrome(d) != syndrome(&e[i]) ||
		psn_of(d) != psn_of(&e[i]));
}

/* A difference found on the answering side: "<who> <what>". */
static void diff_who(struct cmp *c, const struct item *e, const struct item *d,
		     const char *what)
{
	char text[96];

	snprintf(text, sizeof(text), "%s %s", c->who, what);
	diff(c, e, d, text);
}

/* One for one: opcode, PSN, AETH, payload / original value. */
static void exact(struct cmp *c, const struct item *e, const struct item *d)
{
	uint8_t es = 0, ds = 0;
	uint32_t em = 0, dm = 0;
	bool ea = aeth_of(e, &es, &em), da = aeth_of(d, &ds, &dm);
	const char *what = NULL;

	if (e->pkt->opcode != d->pkt->opcode)
		what = "opcode differs";
	else if (psn_of(e) != psn_of(d))
		what = "PSN differs";
	else if (ea != da || es != ds)
		what = "AETH syndrome differs";
	else if (em != dm)
		what = "MSN differs";
	else if (e->pkt->payload_len != d->pkt->payload_len ||
		 memcmp(e->data + e->pkt->payload_off, d->data + d->pkt->payload_off,
			e->pkt->payload_len) != 0)
		what = "payload differs";
	else if ((e->pkt->mask & DROCE_M_ATMACK) &&
		 memcmp(droce_pkt_ext(e->pkt, DROCE_HDR_ATMACK),
			droce_pkt_ext(d->pkt, DROCE_HDR_ATMACK), DROCE_ATMACK_LEN) != 0)
		what = "atomic original value differs";
	if (what != NULL)
		diff(c, e, d, what);
	else
		c->matched++;
}

/* One requester QP's responses: rxe's @p e[ne], droce's @p d[nd]. */
static void compare_qp(struct cmp *c, const struct item *e, unsigned int ne,
		       const struct item *d, unsigned int nd)
{
	unsigned int i = 0, j = 0;

	while (i < ne) {
		if (rxe_nak_after_rnr(e, i, j < nd ? &d[j] : NULL)) {
			c->after_rnr++;
			i++;
			continue;
		}
		if (j == nd) {
			diff_who(c, &e[i++], NULL, "sent no response for it");
			continue;
		}
		if (!is_ack(&e[i]) || !is_ack(&d[j]) || psn_of(&e[i]) == psn_of(&d[j]) ||
		    !positive(&e[i]) || !positive(&d[j])) {
			exact(c, &e[i++], &d[j++]);
		} else if (droce_psn_lt(psn_of(&e[i]), psn_of(&d[j]))) {
			c->covered++;	/* coalesced into droce's later ACK */
			i++;
		} else {
			diff_who(c, NULL, &d[j++], "sent an ACK rxe did not");
		}
	}
	while (j < nd)
		diff_who(c, NULL, &d[j++], "sent a response rxe did not");
}

static uint32_t dqpn(const struct droce_pkt *p)
{
	return droce_bth_qpn(droce_pkt_bth(p));
}

/* Gather one DestQP's responses of both sides and compare them. */
static void compare_dqpn(struct cmp *c, const struct replay_capture *cap,
			 const struct replay_result *r, uint32_t qpn, struct item *e, struct item *d)
{
	unsigned int i, ne = 0, nd = 0;

	for (i = 0; i < cap->n; i++)
		if (cap->f[i].kind == RF_RESPONSE && dqpn(&cap->f[i].pkt) == qpn)
			e[ne++] = (struct item){ &cap->f[i].pkt, cap->f[i].data, i + 1 };
	for (i = 0; i < r->n_out; i++)
		if (r->out[i].parsed && (r->out[i].pkt.mask & DROCE_M_RESP) &&
		    dqpn(&r->out[i].pkt) == qpn)
			d[nd++] = (struct item){ &r->out[i].pkt, r->out[i].data, i + 1 };
	compare_qp(c, e, ne, d, nd);
}

/* Every DestQP that either side's responses name, once. */
static unsigned int dest_qpns(const struct replay_capture *cap, const struct replay_result *r,
			      uint32_t *q)
{
	unsigned int i, k, n = 0;

	for (i = 0; i < cap->n + r->n_out; i++) {
		const struct droce_pkt *p = i < cap->n ? &cap->f[i].pkt : &r->out[i - cap->n].pkt;
		bool resp = i < cap->n ? cap->f[i].kind == RF_RESPONSE :
			(r->out[i - cap->n].parsed && (p->mask & DROCE_M_RESP));

		if (!resp)
			continue;
		for (k = 0; k < n && q[k] != dqpn(p); k++)
			;
		if (k == n)
			q[n++] = dqpn(p);
	}
	return n;
}

/* Immediate data: droce's receive completions carry, in order, the ImmDt of the requests
 * that have one, each (DestQP, PSN) once (a retried request brings the same value again). */
static void compare_imm(struct cmp *c, const struct replay_capture *cap,
			const struct replay_result *r)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < cap->n; i++) {
		const struct replay_frame *f = &cap->f[i];
		const struct droce_immdt *imm = f->kind == RF_REQUEST ?
			droce_pkt_ext(&f->pkt, DROCE_HDR_IMMDT) : NULL;
		const struct droce_bth *b = droce_pkt_bth(&f->pkt);

		if (imm == NULL)
			continue;
		for (j = 0; j < i; j++)	/* the same (DestQP, PSN) with ImmDt before? */
			if (cap->f[j].kind == RF_REQUEST && (cap->f[j].pkt.mask & DROCE_M_IMMDT) &&
			    droce_bth_qpn(droce_pkt_bth(&cap->f[j].pkt)) == droce_bth_qpn(b) &&
			    droce_bth_psn(droce_pkt_bth(&cap->f[j].pkt)) == droce_bth_psn(b))
				break;
		if (j < i)
			continue;
		if (n >= r->n_imm || r->imm[n] != rte_be_to_cpu_32(imm->imm)) {
			c->diffs++;
			fprintf(c->o, "DIFF capture frame %u: ImmDt %#x; droce's receive completion "
				"%u: %s\n", i + 1, rte_be_to_cpu_32(imm->imm), n + 1,
				n < r->n_imm ? "other immediate data" : "none");
		}
		n++;
	}
	if (r->n_imm > n) {
		c->diffs++;
		fprintf(c->o, "DIFF %u receive completions with immediate data no request "
			"carried\n", r->n_imm - n);
	}
	if (n != 0)
		fprintf(c->o, "compare: %u immediate data values in receive completions checked\n",
			n);
}

/* What droce sent that is not a response at all. */
static void others(struct cmp *c, const struct replay_result *r)
{
	unsigned int i, not_roce = 0;

	for (i = 0; i < r->n_out; i++) {
		if (!r->out[i].parsed)
			not_roce++;
		else if (!(r->out[i].pkt.mask & DROCE_M_RESP))
			diff_who(c, NULL, &(struct item){ &r->out[i].pkt, r->out[i].data, i + 1 },
				 "sent a request (it only responds here)");
	}
	if (not_roce)
		fprintf(c->o, "note: %s sent %u frames that are not RoCE v2 (ARP/ND)\n",
			c->who, not_roce);
}

unsigned int replay_compare(const struct replay_capture *cap,
			    const struct replay_result *r, bool wire, FILE *o)
{
	struct cmp c = { .o = o, .who = wire ? "device" : "droce" };
	size_t n = (size_t)cap->n + r->n_out + 1;
	struct item *e = calloc(n, sizeof(*e)), *d = calloc(n, sizeof(*d));
	uint32_t *q = calloc(n, sizeof(*q));
	unsigned int i, nq;

	if (e == NULL || d == NULL || q == NULL) {
		fprintf(o, "compare: out of memory\n");
		free(e), free(d), free(q);
		return 1;
	}
	nq = dest_qpns(cap, r, q);
	for (i = 0; i < nq; i++)
		compare_dqpn(&c, cap, r, q[i], e, d);
	others(&c, r);
	if (!wire)	/* --wire: the receive completions are the device's own */
		compare_imm(&c, cap, r);
	if (c.after_rnr != 0)
		fprintf(o, "compare: %u rxe NAKs PSN sequence error right after its RNR NAK at the "
			"same PSN: %s sends none (its RNR NAK stands), not differences\n",
			c.after_rnr, c.who);
	fprintf(o, "compare: %u captured responses matched one for one, %u covered by a coalesced "
		"%s ACK, %u differences\n", c.matched, c.covered, c.who, c.diffs);
	free(e), free(d), free(q);
	return c.diffs;
}
