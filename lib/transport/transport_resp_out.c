/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The responder's output queue: ACKs and NAKs, RDMA READ responses and atomic ACKs, sent in
 * the order the requests were executed. That order matters: a requester takes an ACK or a
 * response for PSN p as acknowledging everything before p (IBA 9.7.5.1.1), so an ACK
 * for a SEND after a READ must not overtake that READ's responses. Consecutive ACKs coalesce
 * into one (the latest PSN); READ responses are built one packet at a time from memory.
 */
#include <errno.h>
#include <string.h>

#include "transport_private.h"

static struct resp_out *out_push(struct transport_qp *t)
{
	struct transport_resp *s = &t->resp;

	if (s->out_tail - s->out_head >= TRANSPORT_OUT_SIZE)
		return NULL;
	return &s->out[s->out_tail++ % TRANSPORT_OUT_SIZE];
}

void transport_resp_out_ack(struct transport_env *env, struct transport_qp *t, uint8_t syndrome,
			    uint32_t psn)
{
	struct transport_resp *s = &t->resp;
	struct resp_out *o;

	if (s->out_tail != s->out_head && syndrome == AETH_ACK_UNLIMITED) {
		o = &s->out[(s->out_tail - 1) % TRANSPORT_OUT_SIZE];
		if (o->type == OUT_ACK && o->syndrome == syndrome) {
			if (droce_psn_lt(o->psn, psn))
				o->psn = psn;
			o->msn = s->msn;
			return;
		}
	}
	o = out_push(t);
	if (o == NULL) {
		/* Cannot happen with a requester that keeps its limits; the requester's timer
		 * recovers if it does. */
		TCNT(env, t, resp_out_full);
		return;
	}
	o->type = OUT_ACK;
	o->syndrome = syndrome;
	o->psn = psn;
	o->msn = s->msn;
}

void transport_resp_out_res(struct transport_env *env, struct transport_qp *t, uint32_t i)
{
	struct resp_res *r = &t->resp.res[i];
	struct resp_out *o = out_push(t);

	if (o == NULL) {
		TCNT(env, t, resp_out_full);	/* the requester times out and asks again */
		return;
	}
	/* An ATOMIC_WRITE or FLUSH is answered as a READ of 0 bytes: READ response ONLY, no
	 * payload. */
	o->type = r->kind == RK_ATOMIC ? OUT_ATOMIC : OUT_READ;
	o->res = i;
	o->psn = r->first_psn;
	r->queued = true;
}

static int send_ack(struct transport_env *env, struct transport_qp *t,
		    const struct resp_out *o)
{
	struct droce_hdr_fields h;
	struct rte_mbuf *m = transport_mbuf_alloc(env);

	if (m == NULL)
		return -ENOMEM;
	memset(&h, 0, sizeof(h));
	h.opcode = DROCE_OP_RC_ACKNOWLEDGE;
	h.psn = o->psn;
	h.aeth.syndrome = o->syndrome;
	h.aeth.msn = o->msn;
	if (o->syndrome == AETH_ACK_UNLIMITED)
		TCNT(env, t, ack_sent);
	return transport_pkt_send(env, t, m, &h);
}

static int send_atomic(struct transport_env *env, struct transport_qp *t, struct resp_res *r)
{
	struct droce_hdr_fields h;
	struct rte_mbuf *m = transport_mbuf_alloc(env);

	if (m == NULL)
		return -ENOMEM;
	memset(&h, 0, sizeof(h));
	h.opcode = DROCE_OP_RC_ATOMIC_ACKNOWLEDGE;
	h.psn = r->first_psn;
	h.aeth.syndrome = AETH_ACK_UNLIMITED;
	h.aeth.msn = r->msn;
	h.atomic_orig = r->orig;
	r->queued = false;
	r->answered = true;
	return transport_pkt_send(env, t, m, &h);
}

/*
 * One READ response packet (IBA 9.4.4.1: FIRST/MIDDLE/LAST or ONLY, AETH on all but MIDDLE).
 * The R_Key is checked again for each packet: the MR may have been deregistered since the
 * request was accepted. Then, as rxe's R_Key violation on a later packet: no more data, a NAK
 * remote access error for the PSN this packet would have had (the requester completes the
 * READ with IBV_WC_REM_ACCESS_ERR), and the QP goes to ERR (transport_resp_access_err()).
 * @return 0, -ENOMEM, or -EACCES (the NAK is queued, the READ is over).
 */
static int send_read(struct transport_env *env, struct transport_qp *t, struct resp_res *r,
		     bool *done)
{
	uint32_t rem = r->len - r->off, n = RTE_MIN(rem, t->mtu);
	bool first = r->off == 0, last = rem <= t->mtu;
	struct droce_hdr_fields h;
	const uint8_t *src = NULL;
	struct rte_mbuf *m;

	memset(&h, 0, sizeof(h));
	h.psn = droce_psn_add(r->start_psn, r->off / t->mtu);
	if (n != 0) {
		src = transport_rkey_mem(t, r->rkey, r->va + r->off, n, IBV_ACCESS_REMOTE_READ);
		if (src == NULL) {
			r->queued = false;
			*done = true;
			transport_resp_access_err(env, t, h.psn);
			return -EACCES;
		}
	}
	m = transport_pkt_alloc(env, n);
	if (m == NULL)
		return -ENOMEM;
	h.opcode = first ? (last ? DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY :
			   DROCE_OP_RC_RDMA_READ_RESPONSE_FIRST) :
		   (last ? DROCE_OP_RC_RDMA_READ_RESPONSE_LAST :
			   DROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
	h.aeth.syndrome = AETH_ACK_UNLIMITED;
	h.aeth.msn = r->msn;
	if (n != 0)
		transport_pkt_write(m, 0, src, n);
	r->off += n;
	if (last) {
		r->queued = false;
		r->answered = true;
		*done = true;
	}
	return transport_pkt_send(env, t, m, &h);
}

unsigned int transport_resp_tx(struct transport_env *env, struct transport_qp *t,
			       unsigned int budget)
{
	struct transport_resp *s = &t->resp;
	/* In ERR nothing but NAKs leaves, except after the responder's own class A/C error
	 * (s->err): the responses owed to the requests it accepted before leave first, in PSN
	 * order, as rxe sends each before it looks at the next request. */
	bool err = transport_state(t) == IBV_QPS_ERR && !s->err;
	unsigned int sent = 0;

	while (sent < budget && s->out_head != s->out_tail) {
		struct resp_out *o = &s->out[s->out_head % TRANSPORT_OUT_SIZE];
		struct resp_res *r = &s->res[o->res];
		bool done = true;
		int rc = 0;

		if (transport_path_ready(env, t) != 0)
			break;
		if (o->type == OUT_ACK) {
			rc = send_ack(env, t, o);
		} else if (err || r->first_psn != o->psn || !r->queued) {
			rc = 1;	/* QP in error, or the resource was reused: nothing to send */
		} else if (o->type == OUT_ATOMIC) {
			rc = send_atomic(env, t, r);
		}
		else {
			done = false;
			rc = send_read(env, t, r, &done);
			err = err || rc == -EACCES;	/* the QP went to ERR: only its NAK */
		}
		if (rc == -ENOMEM)
			break;
		if (rc == 0)
			sent++;
		if (done)
			s->out_head++;
	}
	return sent;
}
