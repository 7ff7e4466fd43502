/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * --requester --compare: droce in the requester's place against the capture's requester.
 * - Requests, per QP: first transmissions one for one in order, the same opcode, PSN, SE,
 *   AckReq (on a message's last packet; inside a message counted apart), pad count, payload,
 *   RETH, AtomicETH, ImmDt, IETH; retransmissions one for one
 *   when both sides resent the same PSNs, else (droce resends after a NAK what its window
 *   allows, rxe everything outstanding) each of droce's against the first transmission of
 *   its PSN, the numbers said. rxe's resends of a request a response before them had
 *   acknowledged (its timer fired with the ACK on the wire) are counted apart.
 * - Completions: UC messages complete once sent. RC: what the capture's responses imply
 *   for each message: a positive ACK, READ
 *   response or atomic ACK at PSN p completes every message ending at or before p; a NAK
 *   PSN sequence error at p every one before p; a NAK with another code fails the message
 *   holding p with the status the code maps to (IBA 9.9.3.1.2 as rdma-core names them) and
 *   flushes the rest; a message no response covers is outstanding at the capture's end and
 *   must not complete. droce's completions must say the same, in each QP's WR order.
 * - Data: where droce completed a READ or an atomic, the local bytes hold what the capture's
 *   READ responses carried and the atomic ACKs' original values.
 * - Responses droce's requests did not call for in time (stalls) and any frame droce sends
 *   that is not a request are differences. Not compared: UDP source port, IP ID and checksum,
 *   ICRC, MACs and IPs.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define NONE (-1)	/* no completion */

struct rcmp {
	FILE *o;
	unsigned int diffs, matched, wcs, bytes;
	unsigned int late;		/* rxe's resends of acknowledged requests */
	unsigned int lost;		/* requests lost before the capture point */
	unsigned int retx_other;	/* QPs whose retransmissions differ in number */
	unsigned int retx_checked;	/* droce's retransmissions checked by content */
	unsigned int ackreq_inside;	/* AckReq set by one side only, not on a last packet */
};

static uint32_t dqpn(const struct droce_pkt *p)
{
	return droce_bth_qpn(droce_pkt_bth(p));
}

static uint32_t psn(const struct droce_pkt *p)
{
	return droce_bth_psn(droce_pkt_bth(p));
}

static const char *opname(const struct droce_pkt *p)
{
	const char *n = droce_opcode_table[p->opcode].name;

	return n != NULL ? n : "?";
}

static void diff(struct rcmp *c, unsigned int frame, const struct droce_pkt *e,
		 unsigned int out, const struct droce_pkt *d, const char *what)
{
	c->diffs++;
	if (e != NULL)
		fprintf(c->o, "DIFF capture frame %u: rxe %s PSN %u; ", frame, opname(e), psn(e));
	else
		fprintf(c->o, "DIFF no capture frame; ");
	if (d != NULL)
		fprintf(c->o, "droce %s PSN %u (droce frame %u)", opname(d), psn(d), out);
	else
		fprintf(c->o, "droce: nothing");
	fprintf(c->o, ": %s\n", what);
}

static bool ext_differs(const struct droce_pkt *e, const struct droce_pkt *d, enum droce_hdr h,
			size_t len)
{
	const void *a = droce_pkt_ext(e, h), *b = droce_pkt_ext(d, h);

	if ((a == NULL) != (b == NULL))
		return true;
	return a != NULL && memcmp(a, b, len) != 0;
}

/* AckReq on one side only, inside a message: where a requester asks for ACKs inside a message
 * is its own choice (rxe every few packets; droce also on the packet that fills its window,
 * transport_req.c); on a message's last packet both must ask (Linux ACKs only what asks). */
static bool ackreq_inside(const struct droce_pkt *e, const struct droce_pkt *d)
{
	return !(e->mask & DROCE_M_LAST) &&
	       droce_bth_ackreq(droce_pkt_bth(e)) != droce_bth_ackreq(droce_pkt_bth(d));
}

static const char *request_differs(const struct replay_frame *f, const struct replay_out *o)
{
	const struct droce_pkt *e = &f->pkt, *d = &o->pkt;
	const struct droce_bth *eb = droce_pkt_bth(e), *db = droce_pkt_bth(d);

	if (e->opcode != d->opcode)
		return "opcode differs";
	if (psn(e) != psn(d))
		return "PSN differs";
	if (droce_bth_se(eb) != droce_bth_se(db))
		return "SE differs";
	if (droce_bth_ackreq(eb) != droce_bth_ackreq(db) && (e->mask & DROCE_M_LAST))
		return "AckReq differs";	/* inside a message: ackreq_inside() */
	if (e->pad != d->pad)
		return "pad count differs";
	if (ext_differs(e, d, DROCE_HDR_RETH, DROCE_RETH_LEN))
		return "RETH differs";
	if (ext_differs(e, d, DROCE_HDR_ATMETH, DROCE_ATMETH_LEN))
		return "AtomicETH differs";
	if (ext_differs(e, d, DROCE_HDR_IMMDT, DROCE_IMMDT_LEN))
		return "ImmDt differs";
	if (ext_differs(e, d, DROCE_HDR_IETH, DROCE_IETH_LEN))
		return "IETH differs";
	if (e->payload_len != d->payload_len ||
	    memcmp(f->data + e->payload_off, o->data + d->payload_off, e->payload_len) != 0)
		return "payload differs";
	return NULL;
}

/* One side's request frames on a QP, split into first transmissions and retransmissions
 * (a PSN behind the next new one). */
struct reqs {
	unsigned int *first, *retx;	/* frame indices */
	unsigned int n_first, n_retx;
};

static void split(struct reqs *q, unsigned int idx, const struct droce_pkt *p, uint32_t *next,
		  bool *started, const struct replay_scenario *sc)
{
	if (replay_req_resend(p, sc, next, started))
		q->retx[q->n_retx++] = idx;
	else
		q->first[q->n_first++] = idx;
}

/* Retransmissions: one for one when both sides resent the same PSNs in the same order;
 * otherwise (droce resends what its window allows after a NAK, rxe everything outstanding)
 * each of droce's must carry what the capture's first transmission of its PSN carried. */
static void compare_retx(struct rcmp *c, const struct replay_capture *cap,
			 const struct replay_result *r, const struct reqs *e, const struct reqs *d)
{
	unsigned int i, j;
	const char *what;
	bool same = e->n_retx == d->n_retx;

	for (i = 0; same && i < e->n_retx; i++)
		same = psn(&cap->f[e->retx[i]].pkt) == psn(&r->out[d->retx[i]].pkt);
	if (same) {
		for (i = 0; i < e->n_retx; i++) {
			const struct replay_frame *f = &cap->f[e->retx[i]];
			const struct replay_out *o = &r->out[d->retx[i]];

			if ((what = request_differs(f, o)) != NULL)
				diff(c, e->retx[i] + 1, &f->pkt, d->retx[i] + 1, &o->pkt, what);
			else
				c->matched++;
		}
		return;
	}
	c->retx_other++;
	fprintf(c->o, "compare: retransmissions: rxe resent %u request frames, droce %u",
		e->n_retx, d->n_retx);
	for (j = 0; j < d->n_retx; j++) {
		const struct replay_out *o = &r->out[d->retx[j]];

		for (i = 0; i < e->n_first && psn(&cap->f[e->first[i]].pkt) != psn(&o->pkt); i++)
			;
		if (i == e->n_first) {
			fprintf(c->o, "\n");
			diff(c, 0, NULL, d->retx[j] + 1, &o->pkt, "droce resent a PSN rxe never sent");
		} else if ((what = request_differs(&cap->f[e->first[i]], o)) != NULL) {
			fprintf(c->o, "\n");
			diff(c, e->first[i] + 1, &cap->f[e->first[i]].pkt, d->retx[j] + 1, &o->pkt,
			     what);
		} else {
			c->retx_checked++;
		}
	}
	fprintf(c->o, "; each of droce's carries what the first transmission of its PSN "
		"carried\n");
}

/* A QP's requests: the capture's requester's against droce's, first transmissions one for
 * one, then the retransmissions. A PSN the capture skips (the wire lost it before the
 * capture point) has its first resend as the capture's first transmission. */
static void compare_requests(struct rcmp *c, const struct replay_capture *cap,
			     const struct replay_scenario *sc, const struct replay_work *w,
			     const struct replay_result *r, unsigned int k, unsigned int *buf,
			     bool *used)
{
	uint32_t qpn = sc->qp[k].cap_qpn;
	struct reqs e = { buf, buf + cap->n, 0, 0 };
	struct reqs d = { buf + 2 * cap->n, buf + 2 * cap->n + r->n_out, 0, 0 };
	uint32_t next = 0;
	bool started = false;
	unsigned int i;
	const char *what;

	memset(used, 0, cap->n * sizeof(*used));
	for (i = 0; i < cap->n; i++) {
		const struct replay_frame *g;
		uint32_t ps;

		if (cap->f[i].kind != RF_REQUEST || dqpn(&cap->f[i].pkt) != qpn || used[i])
			continue;
		ps = psn(&cap->f[i].pkt);
		if (w->late[i]) {
			c->late++;
			continue;
		}
		while (started && droce_psn_lt(next, ps) &&	/* lost before the capture point */
		       (g = replay_req_resent(cap, sc, i, k, next)) != NULL) {
			used[g - cap->f] = true;
			c->lost++;
			split(&e, (unsigned int)(g - cap->f), &g->pkt, &next, &started, sc);
		}
		split(&e, i, &cap->f[i].pkt, &next, &started, sc);
	}
	started = false;
	for (i = 0; i < r->n_out; i++)
		if (r->out[i].parsed && (r->out[i].pkt.mask & DROCE_M_REQ) &&
		    dqpn(&r->out[i].pkt) == qpn)
			split(&d, i, &r->out[i].pkt, &next, &started, sc);
	for (i = 0; i < RTE_MAX(e.n_first, d.n_first); i++) {
		const struct replay_frame *f = i < e.n_first ? &cap->f[e.first[i]] : NULL;
		const struct replay_out *o = i < d.n_first ? &r->out[d.first[i]] : NULL;

		if (o == NULL)
			diff(c, e.first[i] + 1, &f->pkt, 0, NULL, "droce did not send it");
		else if (f == NULL)
			diff(c, 0, NULL, d.first[i] + 1, &o->pkt, "droce sent a request rxe did not");
		else if ((what = request_differs(f, o)) != NULL)
			diff(c, e.first[i] + 1, &f->pkt, d.first[i] + 1, &o->pkt, what);
		else
			c->matched++;
		if (f != NULL && o != NULL && ackreq_inside(&f->pkt, &o->pkt))
			c->ackreq_inside++;
	}
	compare_retx(c, cap, r, &e, &d);
}

static int nak_status(uint8_t code)
{
	switch (code) {
	case DROCE_NAK_INV_REQ: return IBV_WC_REM_INV_REQ_ERR;
	case DROCE_NAK_REM_ACCESS: return IBV_WC_REM_ACCESS_ERR;
	case DROCE_NAK_REM_OP: return IBV_WC_REM_OP_ERR;
	default: return IBV_WC_REM_INV_RD_REQ_ERR;
	}
}

/* The completion each of QP @p k's WRs should get, from the capture's responses. */
static void expect_qp(const struct replay_capture *cap, const struct replay_scenario *sc,
		      const struct replay_work *w, unsigned int k, int *want)
{
	uint32_t start = sc->qp[k].rq_psn;
	int32_t acked = -1, fail_at = -1;
	int fail = 0;
	unsigned int i;

	for (i = 0; i < cap->n && fail_at < 0; i++) {
		const struct replay_frame *f = &cap->f[i];
		const struct droce_aeth *a;
		int32_t off;
		uint8_t syn;

		if (f->kind != RF_RESPONSE || dqpn(&f->pkt) != sc->qp[k].peer_qpn)
			continue;
		off = droce_psn_diff(psn(&f->pkt), start);
		a = droce_pkt_ext(&f->pkt, DROCE_HDR_AETH);
		syn = a != NULL ? droce_aeth_syndrome(a) : DROCE_AETH_ACK;
		if ((syn & DROCE_AETH_TYPE_MASK) == DROCE_AETH_ACK)
			acked = RTE_MAX(acked, off);
		else if (syn == (DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR))
			acked = RTE_MAX(acked, off - 1);
		else if ((syn & DROCE_AETH_TYPE_MASK) == DROCE_AETH_NAK) {
			fail_at = off;
			fail = nak_status(syn & DROCE_AETH_VALUE_MASK);
		}
	}
	for (i = 0; i < w->n; i++) {
		const struct replay_wr *x = &w->wr[i];
		int32_t first = droce_psn_diff(x->psn, start), last = first + (int32_t)x->npsn - 1;

		if (x->qp != k)
			continue;
		if (sc->qp[k].type == REPLAY_UC)	/* complete once sent */
			want[i] = IBV_WC_SUCCESS;
		else if (fail_at >= 0 && last >= fail_at)
			want[i] = first <= fail_at ? fail : IBV_WC_WR_FLUSH_ERR;
		else
			want[i] = last <= acked || (fail_at >= 0 && last < fail_at) ? IBV_WC_SUCCESS :
				  NONE;
	}
}

static const char *status_str(int s)
{
	return s == NONE ? "none" : droce_wc_status_str((enum ibv_wc_status)s);
}

static void compare_completions(struct rcmp *c, const struct replay_capture *cap,
				const struct replay_scenario *sc, const struct replay_work *w,
				const struct replay_result *r, int *want, int *got)
{
	unsigned int i, k, last[REPLAY_MAX_QP];
	bool in_order = true;

	for (k = 0; k < sc->n_qp; k++) {
		expect_qp(cap, sc, w, k, want);
		last[k] = UINT32_MAX;
	}
	for (i = 0; i < w->n; i++)
		got[i] = NONE;
	for (i = 0; i < r->n_swc; i++) {
		uint64_t id = r->swc[i].wr_id & ~REPLAY_SEND_WR_ID;

		if (id >= w->n || got[id] != NONE) {
			c->diffs++;
			fprintf(c->o, "DIFF droce completion %u: wr_id %#" PRIx64 " is no WR's or "
				"completed twice\n", i + 1, r->swc[i].wr_id);
			continue;
		}
		got[id] = r->swc[i].status;
		k = w->wr[id].qp;
		if (last[k] != UINT32_MAX && id < last[k])
			in_order = false;
		last[k] = (unsigned int)id;
	}
	if (!in_order) {
		c->diffs++;
		fprintf(c->o, "DIFF droce's completions are not in the WRs' order\n");
	}
	for (i = 0; i < w->n; i++) {
		const struct replay_wr *x = &w->wr[i];

		c->wcs++;
		if (got[i] == want[i])
			continue;
		c->diffs++;
		fprintf(c->o, "DIFF capture frame %u: message PSN %u (%u bytes): the capture "
			"implies completion %s; droce's: %s\n", x->frame, x->psn, x->len,
			status_str(want[i]), status_str(got[i]));
	}
}

/* The WR of QP @p k whose PSNs hold @p p. */
static const struct replay_wr *wr_at(const struct replay_work *w, unsigned int k, uint32_t p,
				     unsigned int *idx)
{
	unsigned int i;

	for (i = 0; i < w->n; i++) {
		const struct replay_wr *x = &w->wr[i];

		if (x->qp == k && droce_psn_in_window(p, x->psn, x->npsn)) {
			*idx = i;
			return x;
		}
	}
	return NULL;
}

/* READ response payloads and atomic original values against droce's local buffer. */
static void compare_data(struct rcmp *c, const struct replay_capture *cap,
			 const struct replay_scenario *sc, const struct replay_work *w,
			 const int *got, const uint8_t *local)
{
	uint32_t pmtu = replay_pmtu(sc);
	unsigned int i, k, idx;

	for (i = 0; i < cap->n; i++) {
		const struct replay_frame *f = &cap->f[i];
		const struct droce_atmack *aa;
		const struct replay_wr *x;
		uint64_t at, v;

		if (f->kind != RF_RESPONSE || !(f->pkt.mask & (DROCE_M_READ | DROCE_M_ATMACK)))
			continue;
		for (k = 0; k < sc->n_qp && sc->qp[k].peer_qpn != dqpn(&f->pkt); k++)
			;
		x = k < sc->n_qp ? wr_at(w, k, psn(&f->pkt), &idx) : NULL;
		if (x == NULL || got[idx] != IBV_WC_SUCCESS)
			continue;
		if (f->pkt.mask & DROCE_M_READ) {
			at = (uint64_t)droce_psn_diff(psn(&f->pkt), x->psn) * pmtu;
			if (x->op != IBV_WR_RDMA_READ || at + f->pkt.payload_len > x->len ||
			    memcmp(local + x->off + at, f->data + f->pkt.payload_off,
				   f->pkt.payload_len) != 0) {
				c->diffs++;
				fprintf(c->o, "DIFF capture frame %u: READ response PSN %u: droce's "
					"local bytes differ from its payload\n", i + 1, psn(&f->pkt));
			}
			c->bytes += f->pkt.payload_len;
			continue;
		}
		aa = droce_pkt_ext(&f->pkt, DROCE_HDR_ATMACK);
		memcpy(&v, local + x->off, 8);
		if (v != rte_be_to_cpu_64(aa->orig)) {
			c->diffs++;
			fprintf(c->o, "DIFF capture frame %u: atomic ACK PSN %u: original value "
				"%#" PRIx64 "; droce's local 8 bytes %#" PRIx64 "\n", i + 1,
				psn(&f->pkt), rte_be_to_cpu_64(aa->orig), v);
		}
		c->bytes += 8;
	}
}

unsigned int replay_req_compare(const struct replay_capture *cap, const struct replay_scenario *sc,
				const struct replay_work *w, const struct replay_result *r,
				const uint8_t *local, FILE *o)
{
	struct rcmp c = { .o = o };
	int *want = calloc(w->n + 1, sizeof(int)), *got = calloc(w->n + 1, sizeof(int));
	unsigned int *buf = calloc(2 * ((size_t)cap->n + r->n_out) + 1, sizeof(*buf));
	bool *used = calloc(cap->n + 1, sizeof(*used));
	unsigned int i, not_roce = 0;

	if (want == NULL || got == NULL || buf == NULL || used == NULL) {
		fprintf(o, "compare: out of memory\n");
		free(want), free(got), free(buf), free(used);
		return 1;
	}
	for (i = 0; i < sc->n_qp; i++)
		if (sc->qp[i].type != REPLAY_UD)	/* not played */
			compare_requests(&c, cap, sc, w, r, i, buf, used);
	compare_completions(&c, cap, sc, w, r, want, got);
	compare_data(&c, cap, sc, w, got, local);
	for (i = 0; i < r->n_out; i++) {
		if (!r->out[i].parsed)
			not_roce++;
		else if (!(r->out[i].pkt.mask & DROCE_M_REQ))
			diff(&c, 0, NULL, i + 1, &r->out[i].pkt, "droce sent a response (it only "
			     "requests here)");
	}
	if (not_roce)
		fprintf(o, "note: droce sent %u frames that are not RoCE v2 (ARP/ND)\n", not_roce);
	if (r->stalls) {
		c.diffs += r->stalls;
		fprintf(o, "DIFF %u captured responses went in after droce had sent fewer requests "
			"than the capture's requester (droce sent nothing for %u ms)\n", r->stalls,
			REPLAY_REQ_STALL_US / 1000);
	}
	if (r->in_error) {
		c.diffs += r->in_error;
		fprintf(o, "DIFF %u captured responses went to a droce QP in the error state\n",
			r->in_error);
	}
	if (c.ackreq_inside != 0)
		fprintf(o, "compare: %u first transmissions inside a message with AckReq on one side "
			"only (each requester's choice; droce also asks on the packet that fills its "
			"window): not differences\n", c.ackreq_inside);
	if (c.lost != 0)
		fprintf(o, "compare: %u requests the capture shows only resent (lost before the "
			"capture point): droce's first transmission compared with rxe's resend\n",
			c.lost);
	if (c.late != 0)
		fprintf(o, "compare: %u rxe retransmissions of a request a response had already "
			"acknowledged (the ACK was on the wire when rxe's timer fired): droce had the "
			"ACK, not differences\n", c.late);
	fprintf(o, "compare: %u messages' completions checked, %u bytes of READ responses and "
		"atomic values checked\n", c.wcs, c.bytes);
	fprintf(o, "compare: %u captured requests matched one for one, %u QPs' retransmissions "
		"differ in number (%u of droce's checked against the first transmission), "
		"%u differences\n", c.matched, c.retx_other, c.retx_checked, c.diffs);
	free(want), free(got), free(buf), free(used);
	return c.diffs;
}
