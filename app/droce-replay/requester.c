/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * --requester: the work droce posts in the place of the capture's requester, read from the
 * requests themselves. Per QP the requests are followed in PSN order from the QP's first PSN:
 * a packet at the next new PSN belongs to the message being built (FIRST .. LAST, or ONLY),
 * one behind it is a retransmission (it adds no work), one ahead of it means the wire lost
 * the packet on the way to the capture point: the message is built from the packet's first
 * retransmission, posted where the capture's later packet is. Each message becomes one send WR with
 * the captured opcode, remote address, R_Key, immediate data, atomic operands and solicited
 * bit; its payload is copied into a local buffer that droce's WR points at, so droce's
 * requests carry the captured bytes. A READ gets room for its DMA length, an atomic 8 bytes.
 */
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "replay.h"

#define ALIGN 64	/* each WR's local bytes start on a cache line */

static int wr_opcode(const struct droce_pkt *p)
{
	if (p->mask & DROCE_M_SEND)
		return (p->mask & DROCE_M_IMM) ? IBV_WR_SEND_WITH_IMM :
		       (p->mask & DROCE_M_INV) ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
	if (p->mask & DROCE_M_WRITE)
		return (p->mask & DROCE_M_IMM) ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	if (p->mask & DROCE_M_READ)
		return IBV_WR_RDMA_READ;
	if ((p->mask & DROCE_M_ATOMIC) && p->opcode == DROCE_OP_RC_COMPARE_SWAP)
		return IBV_WR_ATOMIC_CMP_AND_SWP;
	if (p->mask & DROCE_M_ATOMIC)
		return IBV_WR_ATOMIC_FETCH_AND_ADD;
	return -1;	/* FLUSH, ATOMIC_WRITE: not played as a requester */
}

/* Append @p n bytes to WR @p wr's payload (kept apart until layout()). */
static int append(struct replay_wr *wr, const uint8_t *data, uint32_t n)
{
	uint8_t *b;

	if ((uint64_t)wr->len + n > REPLAY_MAX_MR_LEN)
		return -1;
	b = realloc(wr->data, (size_t)wr->len + n);
	if (b == NULL)
		return -1;
	memcpy(b + wr->len, data, n);
	wr->data = b;
	wr->len += n;
	return 0;
}

/* Every WR's bytes into one local buffer, each on a cache line of its own. */
static int layout(struct replay_work *w)
{
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < w->n; i++) {
		w->wr[i].off = total;
		total = (total + w->wr[i].len + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
		if (total > REPLAY_MAX_MR_LEN)
			return -1;
	}
	w->buf = calloc(1, total ? total : 1);
	if (w->buf == NULL)
		return -1;
	w->len = total;
	for (i = 0; i < w->n; i++) {
		if (w->wr[i].data != NULL)
			memcpy(w->buf + w->wr[i].off, w->wr[i].data, w->wr[i].len);
		free(w->wr[i].data);
		w->wr[i].data = NULL;
	}
	return 0;
}

static struct replay_wr *new_wr(struct replay_work *w)
{
	if (w->n == w->cap) {
		unsigned int n = w->cap ? w->cap * 2 : 64;
		struct replay_wr *v = realloc(w->wr, n * sizeof(*v));

		if (v == NULL)
			return NULL;
		w->wr = v;
		w->cap = n;
	}
	memset(&w->wr[w->n], 0, sizeof(w->wr[0]));
	return &w->wr[w->n++];
}

/* The headers of a message's first packet. */
static void first_headers(struct replay_wr *wr, const struct droce_pkt *p)
{
	const struct droce_reth *reth = droce_pkt_ext(p, DROCE_HDR_RETH);
	const struct droce_atmeth *ae = droce_pkt_ext(p, DROCE_HDR_ATMETH);

	if (reth != NULL) {
		wr->raddr = rte_be_to_cpu_64(reth->va);
		wr->rkey = rte_be_to_cpu_32(reth->rkey);
	}
	if (ae != NULL) {
		wr->raddr = rte_be_to_cpu_64(ae->va);
		wr->rkey = rte_be_to_cpu_32(ae->rkey);
		wr->swap_add = rte_be_to_cpu_64(ae->swap_add);
		wr->cmp = rte_be_to_cpu_64(ae->cmp);
		wr->len = 8;
	}
	if (p->mask & DROCE_M_READ)
		wr->len = rte_be_to_cpu_32(reth->len);
}

/* The ImmDt or IETH, the SE bit: carried by a message's last packet. */
static void last_headers(struct replay_wr *wr, const struct droce_pkt *p)
{
	const struct droce_immdt *imm = droce_pkt_ext(p, DROCE_HDR_IMMDT);
	const struct droce_ieth *ieth = droce_pkt_ext(p, DROCE_HDR_IETH);

	if (imm != NULL)
		wr->imm = imm->imm;
	if (ieth != NULL)
		wr->imm = rte_be_to_cpu_32(ieth->rkey);
	wr->solicited = droce_bth_se(droce_pkt_bth(p)) != 0;
}

/* One packet at the next new PSN of QP @p k; @p open is the message being built, or NULL. */
/* One packet at the next new PSN of QP @p k; @p open: the index of the message being built
 * in w->wr (an index: new_wr() moves the array), or -1. */
static int add_packet(struct replay_work *w, const struct replay_scenario *sc, unsigned int k,
		      const struct replay_frame *f, unsigned int frame, int *open,
		      char *err, size_t len)
{
	const struct droce_pkt *p = &f->pkt;
	uint32_t qpn = sc->qp[k].cap_qpn, psn = droce_bth_psn(droce_pkt_bth(p));
	struct replay_wr *wr = *open >= 0 ? &w->wr[*open] : NULL;

	if ((p->mask & DROCE_M_FIRST) != 0 && wr != NULL)
		return replay_errf(err, len, "frame %u: QP %#x PSN %u starts a message while the one "
			    "from PSN %u is not complete", frame, qpn, psn, wr->psn);
	if ((p->mask & DROCE_M_FIRST) == 0 && wr == NULL)
		return replay_errf(err, len, "frame %u: QP %#x PSN %u continues a message the capture "
			    "does not hold the start of", frame, qpn, psn);
	if (wr == NULL) {
		if (wr_opcode(p) < 0)
			return replay_errf(err, len, "frame %u: QP %#x PSN %u: %s is not played as a "
				    "requester", frame, qpn, psn, droce_opcode_table[p->opcode].name);
		wr = new_wr(w);
		if (wr == NULL)
			return replay_errf(err, len, "frame %u: out of memory", frame);
		wr->qp = k;
		wr->op = wr_opcode(p);
		wr->psn = psn;
		wr->frame = frame;
		first_headers(wr, p);
	}
	if ((p->mask & DROCE_M_PAYLOAD) && p->payload_len != 0 &&
	    append(wr, f->data + p->payload_off, p->payload_len) != 0)
		return replay_errf(err, len, "frame %u: QP %#x PSN %u: a message of more than %u "
				   "bytes, or out of memory", frame, qpn, psn, REPLAY_MAX_MR_LEN);
	wr->npsn += replay_psn_span(p, sc);
	*open = (int)(wr - w->wr);
	if (p->mask & DROCE_M_LAST) {
		last_headers(wr, p);
		*open = -1;
	}
	return 0;
}

/* add_packet(), the messages on QP @p k counted. */
static int add_message_packet(struct replay_work *w, const struct replay_scenario *sc,
			      unsigned int k, const struct replay_frame *f, unsigned int frame,
			      int *open, uint32_t *nwr, char *err, size_t len)
{
	if ((f->pkt.mask & DROCE_M_FIRST) && *open < 0 && ++*nwr > REPLAY_REQ_MAX_WR)
		return replay_errf(err, len, "frame %u: QP %#x: more than %u messages on one QP", frame,
			    sc->qp[k].cap_qpn, REPLAY_REQ_MAX_WR);
	return add_packet(w, sc, k, f, frame, open, err, len);
}

/* The first request on QP @p k at @p psn after frame @p from: a packet the capture's
 * requester sent, lost before the capture point, then resent. */
const struct replay_frame *replay_req_resent(const struct replay_capture *c,
				  const struct replay_scenario *sc, unsigned int from,
				  unsigned int k, uint32_t psn)
{
	unsigned int j;

	for (j = from + 1; j < c->n; j++)
		if (c->f[j].kind == RF_REQUEST && replay_req_qp_of(sc, &c->f[j].pkt) == (int)k &&
		    droce_bth_psn(droce_pkt_bth(&c->f[j].pkt)) == psn)
			return &c->f[j];
	return NULL;
}

int replay_req_qp_of(const struct replay_scenario *sc, const struct droce_pkt *p)
{
	const struct replay_qp *q = replay_scenario_qp(sc, droce_bth_qpn(droce_pkt_bth(p)));

	return q != NULL ? (int)(q - sc->qp) : -1;
}

/* Does response @p f acknowledge every PSN up to its own? A positive ACK, an atomic ACK, a
 * READ response's last packet. */
static bool acks_to_psn(const struct droce_pkt *p)
{
	const struct droce_aeth *a = droce_pkt_ext(p, DROCE_HDR_AETH);

	if ((p->mask & DROCE_M_READ) && !(p->mask & DROCE_M_LAST))
		return false;
	return a != NULL && (droce_aeth_syndrome(a) & DROCE_AETH_TYPE_MASK) == DROCE_AETH_ACK;
}

/* w->late[]: requests resent after a response before them acknowledged them. */
static int mark_late(const struct replay_capture *c, const struct replay_scenario *sc,
		     struct replay_work *w)
{
	bool have[REPLAY_MAX_QP] = { false };
	uint32_t acked[REPLAY_MAX_QP];
	unsigned int i, k;

	w->late = calloc(c->n ? c->n : 1, sizeof(*w->late));
	if (w->late == NULL)
		return -1;
	for (i = 0; i < c->n; i++) {
		const struct replay_frame *f = &c->f[i];
		uint32_t psn, last;
		int q;

		if (f->kind != RF_RESPONSE && f->kind != RF_REQUEST)
			continue;	/* f->pkt is parsed for these two only */
		psn = droce_bth_psn(droce_pkt_bth(&f->pkt));
		if (f->kind == RF_RESPONSE && acks_to_psn(&f->pkt)) {
			for (k = 0; k < sc->n_qp; k++)
				if (sc->qp[k].type == REPLAY_RC &&
				    sc->qp[k].peer_qpn == droce_bth_qpn(droce_pkt_bth(&f->pkt)) &&
				    (!have[k] || droce_psn_lt(acked[k], psn))) {
					acked[k] = psn;
					have[k] = true;
				}
			continue;
		}
		if (f->kind != RF_REQUEST || (q = replay_req_qp_of(sc, &f->pkt)) < 0 ||
		    sc->qp[q].type != REPLAY_RC)
			continue;
		last = droce_psn_add(psn, replay_psn_span(&f->pkt, sc) - 1);
		if (have[q] && droce_psn_le(last, acked[q])) {
			w->late[i] = true;
			w->n_late++;
		}
	}
	return 0;
}

int replay_req_derive(const struct replay_capture *c, const struct replay_scenario *sc,
		      struct replay_work *w, char *err, size_t len)
{
	int open[REPLAY_MAX_QP];
	uint32_t next[REPLAY_MAX_QP], nwr[REPLAY_MAX_QP] = { 0 };
	unsigned int i, k;

	memset(w, 0, sizeof(*w));
	for (k = 0; k < REPLAY_MAX_QP; k++)
		open[k] = -1;
	for (k = 0; k < sc->n_qp; k++)
		next[k] = sc->qp[k].rq_psn;
	for (i = 0; i < c->n; i++) {
		const struct replay_frame *f = &c->f[i];
		uint32_t psn;
		int q;

		if (f->kind != RF_REQUEST)
			continue;
		q = replay_req_qp_of(sc, &f->pkt);
		if (q < 0)
			return replay_errf(err, len, "frame %u: a request to QP %#x, which the scenario "
				    "does not define", i + 1, droce_bth_qpn(droce_pkt_bth(&f->pkt)));
		if (sc->qp[q].type == REPLAY_UD)
			continue;	/* not played: replay_req_ud_note() */
		psn = droce_bth_psn(droce_pkt_bth(&f->pkt));
		if (droce_psn_lt(psn, next[q]))
			continue;	/* a retransmission: no new work */
		while (psn != next[q]) {	/* lost before the capture point: resent later */
			const struct replay_frame *g = replay_req_resent(c, sc, i, (unsigned int)q, next[q]);

			if (g == NULL)
				return replay_errf(err, len, "frame %u: QP %#x PSN %u where %u comes next, "
					    "and the capture never holds PSN %u", i + 1,
					    sc->qp[q].cap_qpn, psn, next[q], next[q]);
			if (add_message_packet(w, sc, (unsigned int)q, g, i + 1, &open[q], &nwr[q],
					       err, len) != 0)
				return -1;
			next[q] = droce_psn_add(next[q], replay_psn_span(&g->pkt, sc));
		}
		if (add_message_packet(w, sc, (unsigned int)q, f, i + 1, &open[q], &nwr[q], err,
				       len) != 0)
			return -1;
		next[q] = droce_psn_add(psn, replay_psn_span(&f->pkt, sc));
	}
	for (k = 0; k < sc->n_qp; k++)
		if (open[k] >= 0)	/* the capture ends inside a message */
			return replay_errf(err, len, "frame %u: QP %#x: the message from PSN %u has no "
				    "last packet in the capture", w->wr[open[k]].frame,
				    sc->qp[k].cap_qpn, w->wr[open[k]].psn);
	if (layout(w) != 0)
		return replay_errf(err, len, "the requester's messages come to more than %u bytes, "
				   "or out of memory", REPLAY_MAX_MR_LEN);
	if (mark_late(c, sc, w) != 0)
		return replay_errf(err, len, "out of memory");
	if (w->n == 0)
		return replay_errf(err, len, "no RC or UC request to play (droce plays UD only as the "
			    "responder)");
	return 0;
}

void replay_req_ud_note(const struct replay_capture *c, const struct replay_scenario *sc)
{
	unsigned int i, k, n;

	for (k = 0; k < sc->n_qp; k++) {
		if (sc->qp[k].type != REPLAY_UD)
			continue;
		for (i = 0, n = 0; i < c->n; i++)
			n += c->f[i].kind == RF_REQUEST && replay_req_qp_of(sc, &c->f[i].pkt) == (int)k;
		fprintf(stderr, "droce-replay: note: QP %#x is UD: its %u requests are not played "
			"(droce plays UD only as the responder)\n", sc->qp[k].cap_qpn, n);
	}
}

int replay_req_scenario(const struct replay_scenario *sc, const struct replay_work *w,
			struct replay_scenario *rsc, char *err, size_t len)
{
	unsigned int k, i;

	memset(rsc, 0, sizeof(*rsc));
	memcpy(rsc->mac, sc->peer_mac, 6);
	memcpy(rsc->peer_mac, sc->mac, 6);
	memcpy(rsc->gid, sc->peer_gid, 16);
	memcpy(rsc->peer_gid, sc->gid, 16);
	rsc->ipv6 = sc->ipv6;
	rsc->mtu = sc->mtu;
	rsc->n_qp = sc->n_qp;
	for (k = 0; k < sc->n_qp; k++) {
		struct replay_qp *q = &rsc->qp[k];
		unsigned int n = 0;

		for (i = 0; i < w->n; i++)
			n += w->wr[i].qp == k;
		*q = (struct replay_qp){
			.cap_qpn = sc->qp[k].peer_qpn,	/* the DestQP of the responses */
			.type = sc->qp[k].type,
			.peer_qpn = sc->qp[k].cap_qpn,	/* droce's requests go to the responder */
			.sq_psn = sc->qp[k].rq_psn,	/* the requester's first PSN */
			.rq_psn = sc->qp[k].sq_psn,
			.max_send_wr = (uint16_t)(n ? n : 1),
			.max_rd_atomic = REPLAY_REQ_RD_ATOMIC,
			.min_rnr_timer = REPLAY_MIN_RNR_TIMER,
		};
		for (i = 0; i < k; i++)
			if (q->type == REPLAY_RC && rsc->qp[i].type == REPLAY_RC &&
			    rsc->qp[i].cap_qpn == q->cap_qpn)
				return replay_errf(err, len, "QPs %#x and %#x: their responses go to the same "
					    "requester QP %#x", sc->qp[i].cap_qpn, sc->qp[k].cap_qpn,
					    q->cap_qpn);
	}
	rsc->n_mr = 1;		/* droce's local buffer; its cap_rkey names nothing on the wire */
	rsc->mr[0] = (struct replay_mr){ .length = (uint32_t)w->len,
					 .access = IBV_ACCESS_LOCAL_WRITE, .init = w->buf };
	return 0;
}

bool replay_req_resend(const struct droce_pkt *p, const struct replay_scenario *sc,
		       uint32_t *next, bool *started)
{
	uint32_t psn = droce_bth_psn(droce_pkt_bth(p));

	if (*started && droce_psn_lt(psn, *next))
		return true;
	*next = droce_psn_add(psn, replay_psn_span(p, sc));
	*started = true;
	return false;
}

void replay_work_free(struct replay_work *w)
{
	unsigned int i;

	for (i = 0; i < w->n; i++)
		free(w->wr[i].data);
	free(w->wr);
	free(w->buf);
	free(w->late);
	memset(w, 0, sizeof(*w));
}
