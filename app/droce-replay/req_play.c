/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * --requester: droce posts the capture requester's work (requester.c) and the capture's
 * responses are fed back as droce's requests call for them. The capture is walked in order.
 * Each message is posted where its first packet is, so droce never has more work than the
 * capture's requester had sent (a pingpong's one SEND at a time). Each response of the
 * capture's responder at PSN p goes in once droce is quiet and has sent the request holding
 * p, and, where the capture's requester resent requests between the previous response and
 * this one, once droce has resent as often (wait_sent()): an ACK never reaches droce before
 * the request it acknowledges, nor before the retry that preceded it. Requests the
 * capture's requester resent after a response had acknowledged them (w->late) do not count.
 * Each response is rewritten to droce's QPN (BTH DestQP, ICRC) and injected; droce is then
 * polled until quiet. A response droce does not call for within REPLAY_REQ_STALL_US goes in
 * anyway and the stall is counted (a difference).
 */
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "replay_dev.h"

#define FINAL_WAIT_US 20000
#define QUIET_POLLS 4

struct side;

struct req_state {
	struct replay_io *io;
	const struct replay_work *w;
	unsigned int seen;			/* droce's frames taken so far */
	struct side *droce;			/* per QP */
	uint64_t retx_at[REPLAY_MAX_QP];	/* droce's resends at the last injection */
};

/* Post WR @p i: when the capture's requester sent its first packet. */
static int post_wr(struct replay_dev *d, const struct replay_work *w, unsigned int i)
{
	const struct replay_wr *x = &w->wr[i];
	struct ibv_sge sge = { .addr = (uintptr_t)(replay_req_local(d) + x->off),
			       .length = x->len, .lkey = d->mr[0]->lkey };
	struct ibv_send_wr wr = { .wr_id = REPLAY_SEND_WR_ID | i, .sg_list = &sge,
				  .num_sge = x->len ? 1 : 0, .opcode = x->op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	bool atomic = x->op == IBV_WR_ATOMIC_CMP_AND_SWP || x->op == IBV_WR_ATOMIC_FETCH_AND_ADD;
	int rc;

	if (x->solicited)
		wr.send_flags |= IBV_SEND_SOLICITED;
	if (atomic) {
		wr.wr.atomic.remote_addr = x->raddr;
		wr.wr.atomic.rkey = x->rkey;
		wr.wr.atomic.compare_add = x->op == IBV_WR_ATOMIC_CMP_AND_SWP ? x->cmp :
					   x->swap_add;
		wr.wr.atomic.swap = x->swap_add;
	} else {
		wr.wr.rdma.remote_addr = x->raddr;
		wr.wr.rdma.rkey = x->rkey;
	}
	if (x->op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = x->imm;
	else
		wr.imm_data = x->imm;
	rc = droce_post_send(d->qp[x->qp], &wr, &bad);
	if (rc != 0)
		fprintf(stderr, "droce-replay: capture frame %u: droce_post_send: %s\n", x->frame,
			strerror(rc));
	return rc != 0 ? -1 : 0;
}

/* A side's request frames on one QP: the next new PSN, retransmissions so far. */
struct side {
	uint32_t next;
	bool started;
	uint64_t retx;
};

/* Account one request frame @p p; true when it is a retransmission. */
static bool side_add(struct side *sd, const struct droce_pkt *p, const struct replay_scenario *sc)
{
	if (!replay_req_resend(p, sc, &sd->next, &sd->started))
		return false;
	sd->retx++;
	return true;
}

/* Take droce's new request frames into s->droce[]. */
static void droce_frames(struct req_state *s)
{
	const struct replay_scenario *sc = s->io->d->sc;
	const struct replay_result *r = s->io->r;
	unsigned int k;

	for (; s->seen < r->n_out; s->seen++) {
		const struct replay_out *o = &r->out[s->seen];

		if (!o->parsed || !(o->pkt.mask & DROCE_M_REQ))
			continue;
		for (k = 0; k < sc->n_qp; k++)
			if (sc->qp[k].peer_qpn == droce_bth_qpn(droce_pkt_bth(&o->pkt)))
				side_add(&s->droce[k], &o->pkt, sc);
	}
}

static bool in_error(struct replay_dev *d, unsigned int k)
{
	struct ibv_qp_attr a;
	struct droce_qp_init_attr ia;

	return droce_query_qp(d->qp[k], &a, IBV_QP_STATE, &ia) == 0 && a.qp_state == IBV_QPS_ERR;
}

/*
 * Poll until droce is quiet, has sent the request holding the response's PSN @p psn on QP
 * @p k, and has resent @p resends request frames since the previous response: as many as
 * the capture's requester resent that PSN in between, at least one if it resent any PSN up
 * to it (its timer, its RNR wait, a NAK; a resend of later PSNs is not what the response
 * answers). Not the same frames: droce resends after a loss what its
 * recovery window allows, rxe all that is outstanding. Not within a stall: counted; a QP in
 * ERR calls for nothing more (counted).
 */
static int wait_sent(struct req_state *s, unsigned int k, uint32_t psn, uint64_t resends)
{
	uint64_t last = replay_now_us();
	unsigned int quiet = 0;
	struct side *sd = &s->droce[k];

	for (;;) {
		int n;

		droce_frames(s);
		if (quiet >= QUIET_POLLS && sd->started && droce_psn_lt(psn, sd->next) &&
		    sd->retx - s->retx_at[k] >= resends)
			break;
		if (quiet >= QUIET_POLLS && in_error(s->io->d, k)) {
			s->io->r->in_error++;	/* it calls for nothing more */
			break;
		}
		n = replay_io_poll(s->io);
		if (n < 0)
			return -1;
		quiet = n > 0 || rte_ring_count(s->io->d->in) != 0 ? 0 : quiet + 1;
		if (n > 0) {
			last = replay_now_us();
		} else if (replay_now_us() - last > REPLAY_REQ_STALL_US) {
			s->io->r->stalls++;
			break;
		}
	}
	s->retx_at[k] = sd->retx;
	return 0;
}

int replay_req_play(struct replay_dev *d, const struct replay_capture *c,
		    const struct replay_work *w, struct replay_pcap_out *pout,
		    struct replay_result *r)
{
	struct replay_io *io = calloc(1, sizeof(*io));
	struct side rxe[REPLAY_MAX_QP] = { { 0 } }, droce[REPLAY_MAX_QP] = { { 0 } };
	struct req_state s = { .io = io, .w = w, .droce = droce };
	unsigned int since[REPLAY_MAX_QP] = { 0 };	/* the frame after its last response */
	bool *retx = calloc(c->n ? c->n : 1, sizeof(*retx));	/* the requester resent it */
	uint64_t start = replay_now_us(), t_end;
	unsigned int i, j, wr = 0;
	int rc = 0;

	if (io == NULL || retx == NULL) {
		free(io);
		free(retx);
		return -1;
	}
	*io = (struct replay_io){ .d = d, .pout = pout, .r = r };
	for (i = 0; i < c->n && rc == 0; i++) {
		const struct replay_frame *f = &c->f[i];
		const struct replay_qp *q;
		unsigned int k;
		uint64_t n, any;
		uint32_t psn;

		r->kind[f->kind]++;
		if (f->kind == RF_REQUEST) {	/* the requester's: droce sends its own */
			for (; rc == 0 && wr < w->n && w->wr[wr].frame == i + 1; wr++)
				rc = post_wr(d, w, wr);	/* the message starts here */
			for (k = 0; k < d->sc->n_qp && !w->late[i]; k++)
				if (d->sc->qp[k].peer_qpn == droce_bth_qpn(droce_pkt_bth(&f->pkt)))
					retx[i] = side_add(&rxe[k], &f->pkt, d->sc);
			continue;
		}
		if (f->kind != RF_RESPONSE)
			continue;
		q = replay_scenario_qp(d->sc, droce_bth_qpn(droce_pkt_bth(&f->pkt)));
		if (q == NULL)
			continue;	/* to a requester QP droce does not play */
		k = (unsigned int)(q - d->sc->qp);
		psn = droce_bth_psn(droce_pkt_bth(&f->pkt));
		for (j = since[k], n = 0, any = 0; j < i; j++) {
			const struct droce_pkt *p = &c->f[j].pkt;

			if (!retx[j] || droce_bth_qpn(droce_pkt_bth(p)) != q->peer_qpn)
				continue;
			any |= droce_psn_le(droce_bth_psn(droce_pkt_bth(p)), psn);
			n += droce_psn_in_window(psn, droce_bth_psn(droce_pkt_bth(p)),
						 replay_psn_span(p, d->sc));
		}
		since[k] = i + 1;
		rc = wait_sent(&s, k, psn, RTE_MAX(n, any));
		rc = rc ? rc : replay_io_inject_frame(io, f);
		rc = rc ? rc : replay_io_settle(io);
	}
	r->play_us = replay_now_us() - start;
	for (t_end = replay_now_us() + FINAL_WAIT_US; rc == 0 && replay_now_us() < t_end;)
		rc = replay_io_poll(io) < 0 ? -1 : 0;
	free(io);
	free(retx);
	return rc;
}

const uint8_t *replay_req_local(const struct replay_dev *d)
{
	return d->mem[0];
}
