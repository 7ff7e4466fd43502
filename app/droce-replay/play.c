/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The replay itself. Each request to droce's side is copied, rewritten to droce's names
 * (BTH DestQP -> droce's QPN; RETH / AtomicETH / IETH R_Key -> droce's R_Key and VA -> droce's
 * address at the same offset; the ICRC recomputed) and enqueued on the port's receive ring;
 * the inline engine is polled and everything droce transmits is collected (and written to
 * the output pcap). Nothing else of a frame changes: droce's device has the capture
 * responder's MAC and IPv4 address, and its QPs the captured PSNs and peer QPN, so droce's
 * responses need no mapping back.
 *
 * Fast: requests go in bursts of up to 32, the engine is polled until quiet after each burst.
 * Paced (--pace): each request goes in at its capture time relative to the first request.
 * Step (--step): one request at a time, the engine polled until quiet after each, so droce
 * answers every request before it sees the next (it never coalesces two ACKs).
 * Either way no more READ/atomic requests are outstanding than the QP's max_dest_rd_atomic
 * (a requester must not exceed it; the capture's requester knew rxe's, larger, limit), unless
 * --no-rd-limit asks to behave as a requester that does not keep it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>

#include "droce_engine.h"
#include "replay_dev.h"

#define BURST 32
#define QUIET_POLLS 4
#define MAX_SETTLE 200000
#define FINAL_WAIT_US 20000
#define WIRE_QUIET_US 2000	/* --wire: nothing more after the answers for this long */
#define WIRE_WAIT_US 2000000	/* --wire: the answers the capture implies, at most */

uint64_t replay_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int keep_out(struct replay_io *p, struct rte_mbuf *m)
{
	struct replay_out *o;
	uint32_t len = rte_pktmbuf_pkt_len(m);

	if (p->r->n_out == p->cap_out) {
		unsigned int n = p->cap_out ? p->cap_out * 2 : 256;

		o = realloc(p->r->out, n * sizeof(*o));
		if (o == NULL)
			return -1;
		p->r->out = o;
		p->cap_out = n;
	}
	o = &p->r->out[p->r->n_out];
	o->data = malloc(len ? len : 1);
	if (o->data == NULL)
		return -1;
	if (rte_pktmbuf_read(m, 0, len, o->data) != o->data)
		memcpy(o->data, rte_pktmbuf_read(m, 0, len, o->data), len);
	o->len = len;
	o->parsed = droce_parse(o->data, len, 0, &o->pkt) == DROCE_PARSE_OK;
	replay_pcap_write(p->pout, o->data, len);
	p->r->n_out++;
	return 0;
}

static int keep_imm(struct replay_result *r, uint32_t imm)
{
	if (r->n_imm == r->cap_imm) {
		unsigned int n = r->cap_imm ? r->cap_imm * 2 : 64;
		uint32_t *v = realloc(r->imm, n * sizeof(*v));

		if (v == NULL)
			return -1;
		r->imm = v;
		r->cap_imm = n;
	}
	r->imm[r->n_imm++] = imm;
	return 0;
}

static int keep_swc(struct replay_result *r, const struct ibv_wc *wc)
{
	if (r->n_swc == r->cap_swc) {
		unsigned int n = r->cap_swc ? r->cap_swc * 2 : 64;
		struct replay_swc *v = realloc(r->swc, n * sizeof(*v));

		if (v == NULL)
			return -1;
		r->swc = v;
		r->cap_swc = n;
	}
	r->swc[r->n_swc++] = (struct replay_swc){ .wr_id = wc->wr_id, .status = wc->status };
	return 0;
}

/* One engine iteration; returns the frames droce sent in it, or -1. */
int replay_io_poll(struct replay_io *p)
{
	struct rte_mbuf *m[BURST];
	struct ibv_wc wc[BURST];
	unsigned int n, i;
	int k, rc = 0;

	if (p->d->wire) {	/* what the device under test sent */
		n = rte_eth_rx_burst(p->d->port, 0, m, BURST);
	} else {
		if (droce_engine_poll(p->d->ctx) < 0)
			return -1;
		n = rte_ring_dequeue_burst(p->d->out, (void **)m, BURST, NULL);
	}
	for (i = 0; i < n; i++) {
		if (keep_out(p, m[i]) != 0)
			rc = -1;
		rte_pktmbuf_free(m[i]);
	}
	if (p->d->wire)
		return rc < 0 ? rc : (int)n;
	k = droce_poll_cq(p->d->cq, BURST, wc);
	for (i = 0; k > 0 && i < (unsigned int)k; i++) {
		if (wc[i].wr_id & REPLAY_SEND_WR_ID) {	/* an error's opcode is undefined */
			if (keep_swc(p->r, &wc[i]) != 0)
				rc = -1;
			continue;
		}
		if (wc[i].status == IBV_WC_SUCCESS)
			p->r->recv_ok++;
		else
			p->r->recv_err++;
		if (wc[i].status == IBV_WC_SUCCESS && (wc[i].wc_flags & IBV_WC_WITH_IMM) &&
		    keep_imm(p->r, rte_be_to_cpu_32(wc[i].imm_data)) != 0)
			rc = -1;
	}
	return rc < 0 ? rc : (int)n;
}

/* The slot of requester QP @p qpn in p->dq[], added if new; -1 when full. */
static int dq_slot(struct replay_io *p, uint32_t qpn)
{
	unsigned int k;

	for (k = 0; k < p->n_dq; k++)
		if (p->dq[k] == qpn)
			return (int)k;
	if (p->n_dq == REPLAY_MAX_QP)
		return -1;
	p->dq[p->n_dq] = qpn;
	return (int)p->n_dq++;
}

/* Raise @p v[k] to @p psn (PSN order). */
static void newest(uint32_t *v, bool *have, int k, uint32_t psn)
{
	if (k >= 0 && (!have[k] || droce_psn_lt(v[k], psn))) {
		v[k] = psn;
		have[k] = true;
	}
}

/* Has the device answered as far as the capture's responder had by p->pos, and every
 * READ/atomic injected (before one more may go: its responder resources)? Its newest response
 * on each requester QP at or past those PSNs (a coalesced ACK covers). */
static bool wire_answered(struct replay_io *p)
{
	unsigned int k;

	for (; p->c != NULL && p->cpos < p->pos; p->cpos++) {
		const struct replay_frame *f = &p->c->f[p->cpos];

		if (f->kind == RF_RESPONSE)
			newest(p->want, p->have_want,
			       dq_slot(p, droce_bth_qpn(droce_pkt_bth(&f->pkt))),
			       droce_bth_psn(droce_pkt_bth(&f->pkt)));
	}
	for (; p->dpos < p->r->n_out; p->dpos++) {
		const struct replay_out *o = &p->r->out[p->dpos];

		if (o->parsed && (o->pkt.mask & DROCE_M_RESP))
			newest(p->got, p->have_got, dq_slot(p, droce_bth_qpn(droce_pkt_bth(&o->pkt))),
			       droce_bth_psn(droce_pkt_bth(&o->pkt)));
	}
	for (k = 0; k < p->n_dq; k++) {
		if (p->have_want[k] && (!p->have_got[k] || droce_psn_lt(p->got[k], p->want[k])))
			return false;
		if (p->have_rd[k] && (!p->have_got[k] || droce_psn_lt(p->got[k], p->rd_want[k])))
			return false;
	}
	return true;
}

/* --wire: until the device under test has answered as far as the capture's responder had
 * (at most WIRE_WAIT_US: what it does not send is a difference), then nothing for
 * WIRE_QUIET_US more. Another process answers when the OS runs it: no fixed quiet time
 * would tell "done" from "not run yet". */
static int wire_settle(struct replay_io *p)
{
	uint64_t start = replay_now_us(), last = start;

	for (;;) {
		int n = replay_io_poll(p);
		uint64_t now = replay_now_us();

		if (n < 0)
			return -1;
		if (n > 0)
			last = now;
		if (now - last >= WIRE_QUIET_US &&
		    (wire_answered(p) || now - start >= WIRE_WAIT_US))
			return 0;
	}
}

/* Poll until the receive ring is empty and droce has sent nothing for a few iterations. */
int replay_io_settle(struct replay_io *p)
{
	unsigned int quiet = 0, i;
	int n;

	if (p->d->wire)
		return wire_settle(p);
	for (i = 0; i < MAX_SETTLE && quiet < QUIET_POLLS; i++) {
		n = replay_io_poll(p);
		if (n < 0)
			return -1;
		quiet = (n == 0 && rte_ring_count(p->d->in) == 0) ? quiet + 1 : 0;
	}
	return 0;
}

static uint32_t droce_qpn(struct replay_dev *d, uint32_t cap_qpn)
{
	const struct replay_qp *q = replay_scenario_qp(d->sc, cap_qpn);

	return d->live_qpn[q - d->sc->qp];
}

/* R_Key and VA of a RETH / AtomicETH (both start with VA, R_Key) to droce's MR. */
static void map_mem(struct replay_dev *d, uint8_t *hdr)
{
	const struct replay_mr *m;
	uint64_t va;
	uint32_t rkey;

	memcpy(&va, hdr, 8);
	memcpy(&rkey, hdr + 8, 4);
	m = replay_scenario_mr(d->sc, rte_be_to_cpu_32(rkey));
	if (m == NULL)
		return;	/* not in the scenario: droce sees the captured R_Key */
	va = rte_cpu_to_be_64(d->live_va[m - d->sc->mr] + (rte_be_to_cpu_64(va) - m->cap_va));
	rkey = rte_cpu_to_be_32(d->live_rkey[m - d->sc->mr]);
	memcpy(hdr, &va, 8);
	memcpy(hdr + 8, &rkey, 4);
}

static void map_ieth(struct replay_dev *d, uint8_t *hdr)
{
	const struct replay_mr *m;
	uint32_t rkey;

	memcpy(&rkey, hdr, 4);
	m = replay_scenario_mr(d->sc, rte_be_to_cpu_32(rkey));
	if (m == NULL)
		return;
	rkey = rte_cpu_to_be_32(d->live_rkey[m - d->sc->mr]);
	memcpy(hdr, &rkey, 4);
}

/* Copy a request into p->buf with droce's names; its length. */
static uint32_t rewrite(struct replay_io *p, const struct replay_frame *f)
{
	const struct droce_pkt *k = &f->pkt;
	uint8_t *b = p->buf, *bth = b + k->bth_off;
	struct droce_bth *h = (struct droce_bth *)bth;
	uint32_t qw = rte_be_to_cpu_32(h->qpn);

	memcpy(b, f->data, f->len);
	qw = (qw & ~DROCE_QPN_MASK) | droce_qpn(p->d, droce_bth_qpn(droce_pkt_bth(k)));
	h->qpn = rte_cpu_to_be_32(qw);
	if (k->mask & DROCE_M_RETH)
		map_mem(p->d, bth + droce_opcode_table[k->opcode].offset[DROCE_HDR_RETH]);
	if (k->mask & DROCE_M_ATMETH)
		map_mem(p->d, bth + droce_opcode_table[k->opcode].offset[DROCE_HDR_ATMETH]);
	if (k->mask & DROCE_M_IETH)
		map_ieth(p->d, bth + droce_opcode_table[k->opcode].offset[DROCE_HDR_IETH]);
	droce_put_le32(b + k->frame_len - DROCE_ICRC_LEN,
		       droce_icrc(b + k->l3_off, k->frame_len - DROCE_ICRC_LEN - k->l3_off));
	return f->len;
}

static int inject(struct replay_io *p, const void *data, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->d->pool);
	unsigned int tries = 0;

	if (m == NULL || rte_pktmbuf_append(m, (uint16_t)len) == NULL) {
		rte_pktmbuf_free(m);
		return -1;
	}
	memcpy(rte_pktmbuf_mtod(m, void *), data, len);
	while (p->d->wire ? rte_eth_tx_burst(p->d->port, 0, &m, 1) != 1 :
	       rte_ring_enqueue(p->d->in, m) != 0) {
		if (replay_io_poll(p) < 0 || ++tries > MAX_SETTLE) {
			rte_pktmbuf_free(m);
			return -1;
		}
	}
	p->r->injected++;
	return 0;
}

int replay_io_inject_frame(struct replay_io *p, const struct replay_frame *f)
{
	if (p->d->wire && f->kind == RF_REQUEST &&
	    (f->pkt.mask & (DROCE_M_READ | DROCE_M_ATOMIC | DROCE_M_ATMWR | DROCE_M_FLUSH))) {
		const struct replay_qp *q = replay_scenario_qp(p->d->sc,
							       droce_bth_qpn(droce_pkt_bth(&f->pkt)));

		newest(p->rd_want, p->have_rd, dq_slot(p, q->peer_qpn),
		       droce_psn_add(droce_bth_psn(droce_pkt_bth(&f->pkt)),
				     replay_psn_span(&f->pkt, p->d->sc) - 1));
	}
	if (f->kind == RF_MALFORMED)
		return inject(p, f->data, f->len);
	return inject(p, p->buf, rewrite(p, f));
}

/* The next RNR NAK the capture's responder sent to @p q's peer after frame @p from; or NULL. */
static const struct replay_frame *next_rnr(const struct replay_capture *c,
					   const struct replay_qp *q, unsigned int *from)
{
	for (; *from < c->n; (*from)++) {
		const struct replay_frame *f = &c->f[*from];
		const struct droce_aeth *a = f->kind == RF_RESPONSE ?
			droce_pkt_ext(&f->pkt, DROCE_HDR_AETH) : NULL;

		if (a != NULL && droce_bth_qpn(droce_pkt_bth(&f->pkt)) == q->peer_qpn &&
		    (droce_aeth_syndrome(a) & DROCE_AETH_TYPE_MASK) == DROCE_AETH_RNR_NAK)
			return f;
	}
	return NULL;
}

/* recv_post = capture: true for each request that consumed a receive WR at the capture's
 * responder. The responder's expected PSN is followed from rq_psn: a request at another PSN
 * is a duplicate or out of sequence and consumes nothing; the first packet of a message that
 * needs a receive WR at the expected PSN was RNR NAKed if the responder's next RNR NAK
 * carries that PSN, else it consumed one. @p use[] has c->n entries. */
static void recv_consumers(const struct replay_capture *c, const struct replay_scenario *sc,
			   bool *use)
{
	unsigned int i, k, rnr_at[REPLAY_MAX_QP] = { 0 };
	uint32_t want[REPLAY_MAX_QP];

	for (k = 0; k < sc->n_qp; k++)
		want[k] = sc->qp[k].rq_psn;
	for (i = 0; i < c->n; i++) {
		const struct replay_frame *f = &c->f[i], *nak;
		const struct replay_qp *q;
		uint32_t psn;

		if (f->kind != RF_REQUEST)
			continue;
		q = replay_scenario_qp(sc, droce_bth_qpn(droce_pkt_bth(&f->pkt)));
		k = (unsigned int)(q - sc->qp);
		psn = droce_bth_psn(droce_pkt_bth(&f->pkt));
		if (!q->recv_follow || q->type != REPLAY_RC || psn != want[k])
			continue;
		if ((f->pkt.mask & DROCE_M_RWR) && (f->pkt.mask & DROCE_M_FIRST)) {
			rnr_at[k] = RTE_MAX(rnr_at[k], i + 1);
			nak = next_rnr(c, q, &rnr_at[k]);
			if (nak != NULL && droce_bth_psn(droce_pkt_bth(&nak->pkt)) == psn) {
				rnr_at[k]++;
				continue;	/* RNR NAKed: the same PSN comes again */
			}
			use[i] = true;
		}
		want[k] = (psn + replay_psn_span(&f->pkt, sc)) & DROCE_PSN_MASK;
	}
}

static unsigned int rd_limit(const struct replay_scenario *sc, const struct replay_opts *o)
{
	unsigned int i, lim = 255;

	if (o->no_rd_limit)
		return UINT32_MAX;	/* behave as a requester that ignores the limit */
	for (i = 0; i < sc->n_qp; i++)
		if (sc->qp[i].max_dest_rd_atomic != 0 && sc->qp[i].max_dest_rd_atomic < lim)
			lim = sc->qp[i].max_dest_rd_atomic;
	return lim;
}

/* Paced: poll until @p due (microseconds). */
static int wait_until(struct replay_io *p, uint64_t due)
{
	while (replay_now_us() < due) {
		int n = replay_io_poll(p);
		struct timespec idle = { 0, 10000 };

		if (n < 0)
			return -1;
		if (n == 0)
			nanosleep(&idle, NULL);
	}
	return 0;
}

int replay_play(struct replay_dev *d, const struct replay_capture *c,
		const struct replay_opts *o, struct replay_pcap_out *pout,
		struct replay_result *r)
{
	struct replay_io *p = calloc(1, sizeof(*p));
	bool *use = calloc(c->n ? c->n : 1, sizeof(*use));
	unsigned int i, burst = 0, rd = 0, lim = rd_limit(d->sc, o);
	uint64_t start = replay_now_us(), ts0 = UINT64_MAX, t_end, sent = 0, bytes = 0;
	bool paced = o->pace || o->rate_fps > 0 || o->rate_bps > 0;
	int rc = 0;

	if (p == NULL || use == NULL) {
		free(p);
		free(use);
		return -1;
	}
	*p = (struct replay_io){ .d = d, .pout = pout, .r = r };
	recv_consumers(c, d->sc, use);
	p->c = c;
	for (i = 0; i < c->n && rc == 0; i++) {
		const struct replay_frame *f = &c->f[i];

		r->kind[f->kind]++;
		p->pos = i;	/* --wire: answered as far as the capture before this frame */
		if (f->kind != RF_REQUEST && f->kind != RF_MALFORMED)
			continue;
		if (ts0 == UINT64_MAX)
			ts0 = f->ts_us;
		if (o->pace)	/* the capture's time, relative to the first request */
			rc = wait_until(p, start + (f->ts_us - ts0));
		else if (o->rate_fps > 0)
			rc = wait_until(p, start + (uint64_t)(sent * 1e6 / o->rate_fps));
		else if (o->rate_bps > 0)
			rc = wait_until(p, start + (uint64_t)(bytes * 8e6 / o->rate_bps));
		sent++;
		bytes += f->len;
		if (rc == 0 && f->kind == RF_REQUEST &&
		    (f->pkt.mask & (DROCE_M_READ | DROCE_M_ATOMIC | DROCE_M_ATMWR |
				    DROCE_M_FLUSH)) && ++rd > lim) {
			rc = replay_io_settle(p);
			rd = 1;
		}
		if (rc == 0 && use[i] && !d->wire)	/* every earlier request taken, then the WR */
			rc = replay_io_settle(p) != 0 ? -1 : replay_dev_post_recv(d, (unsigned int)
				(replay_scenario_qp(d->sc, droce_bth_qpn(droce_pkt_bth(&f->pkt))) -
				 d->sc->qp)) != 0 ? -1 : 0;
		rc = rc ? rc : replay_io_inject_frame(p, f);
		if (rc == 0 && !paced && ++burst == (o->step ? 1u : BURST)) {
			for (p->pos = i + 1; p->pos < c->n && c->f[p->pos].kind != RF_REQUEST &&
			     c->f[p->pos].kind != RF_MALFORMED; p->pos++)
				;	/* --wire: the answers up to the next request */
			rc = replay_io_settle(p);
			burst = 0;
		}
	}
	p->pos = c->n;
	rc = rc ? rc : replay_io_settle(p);
	r->play_us = replay_now_us() - start;
	for (t_end = replay_now_us() + FINAL_WAIT_US; rc == 0 && replay_now_us() < t_end;)
		rc = replay_io_poll(p) < 0 ? -1 : 0;	/* timers: a coalesced ACK's, say */
	free(p);
	free(use);
	return rc;
}

void replay_result_free(struct replay_result *r)
{
	unsigned int i;

	for (i = 0; i < r->n_out; i++)
		free(r->out[i].data);
	free(r->out);
	free(r->imm);
	free(r->swc);
	memset(r, 0, sizeof(*r));
}
