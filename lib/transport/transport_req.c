/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The RC requester: send WQEs become request packets. Each WQE gets its PSNs when first sent
 * (one per packet; a READ one per expected response packet, IBA 9.7.1); SEND and WRITE are cut
 * into FIRST/MIDDLE/LAST or ONLY by the path MTU; READ and ATOMIC are limited by
 * max_rd_atomic and ordered by fences. Retransmission (go-back-N from the completer's oldest
 * unacknowledged PSN) rebuilds the packets from the WQE, which stays in the SQ until it
 * completes.
 */
#include <errno.h>
#include <string.h>

#include "transport_private.h"

/* Wire opcode by work request opcode and position (rxe's next_opcode, as a table). */
const uint8_t transport_wr_ops[TRANSPORT_WR_OPS][4] = {
	[IBV_WR_SEND] = { DROCE_OP_RC_SEND_FIRST, DROCE_OP_RC_SEND_MIDDLE,
			  DROCE_OP_RC_SEND_LAST, DROCE_OP_RC_SEND_ONLY },
	[IBV_WR_SEND_WITH_IMM] = { DROCE_OP_RC_SEND_FIRST, DROCE_OP_RC_SEND_MIDDLE,
				   DROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE,
				   DROCE_OP_RC_SEND_ONLY_WITH_IMMEDIATE },
	[IBV_WR_SEND_WITH_INV] = { DROCE_OP_RC_SEND_FIRST, DROCE_OP_RC_SEND_MIDDLE,
				   DROCE_OP_RC_SEND_LAST_WITH_INVALIDATE,
				   DROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE },
	[IBV_WR_RDMA_WRITE] = { DROCE_OP_RC_RDMA_WRITE_FIRST, DROCE_OP_RC_RDMA_WRITE_MIDDLE,
				DROCE_OP_RC_RDMA_WRITE_LAST, DROCE_OP_RC_RDMA_WRITE_ONLY },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { DROCE_OP_RC_RDMA_WRITE_FIRST,
					 DROCE_OP_RC_RDMA_WRITE_MIDDLE,
					 DROCE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
					 DROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE },
};

void transport_req_reset(struct transport_qp *t, uint32_t psn)
{
	struct transport_req *r = &t->req;

	r->head = r->comp = r->cur = 0;
	r->off = 0;
	r->psn = r->psn_hwm = r->comp_psn = psn;
	r->nrd = 0;
	r->nlocal = 0;
	r->noack = 0;
	r->cwnd = TRANSPORT_MAX_UNACKED;
	r->need_retry = false;
	r->retry_started = false;
	r->rnr_wait = false;
	r->rto_deadline = NO_DEADLINE;
	r->rnr_deadline = NO_DEADLINE;
}

static enum req_kind wr_kind(uint32_t opcode)
{
	switch (opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return RK_WRITE;
	case IBV_WR_RDMA_READ:
		return RK_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return RK_ATOMIC;
	case IBV_WR_ATOMIC_WRITE:
		return RK_ATOMIC_WRITE;
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
		return RK_LOCAL;
	case DROCE_WR_FLUSH:
		return RK_FLUSH;
	default:
		return RK_SEND;
	}
}

/* Local checks before anything is sent (IBA 10.8.3.x local errors, completed in order). */
static enum ibv_wc_status wqe_check(const struct transport_qp *t, const struct req_wqe *e)
{
	const struct verbs_send_wqe *w = e->w;
	/* READ and atomic results are written into the SGEs; the others only read them. */
	static const int sge_access[] = { [RK_SEND] = 0, [RK_WRITE] = 0,
					  [RK_READ] = IBV_ACCESS_LOCAL_WRITE,
					  [RK_ATOMIC] = IBV_ACCESS_LOCAL_WRITE,
					  [RK_ATOMIC_WRITE] = 0, [RK_FLUSH] = 0 };
	enum ibv_wc_status st;
	int access;
	uint32_t i;

	if (e->kind == RK_LOCAL)
		return IBV_WC_SUCCESS;	/* checked when done (transport_req_local()) */
	access = sge_access[e->kind];

	/* LOCAL_INV, BIND_MW, TSO: not supported (every RC send/write opcode has an ONLY). */
	if (e->kind < RK_READ && (w->opcode >= TRANSPORT_WR_OPS || transport_wr_ops[w->opcode][OP_ONLY] == 0))
		return IBV_WC_LOC_QP_OP_ERR;
	if (req_kind_rd_atomic(e->kind) && t->max_rd_atomic == 0)
		return IBV_WC_LOC_QP_OP_ERR;
	if (w->length > (1u << 31))	/* IBA 9.4: messages are at most 2^31 bytes */
		return IBV_WC_LOC_LEN_ERR;
	for (i = 0; i < w->num_sge; i++) {
		st = transport_sge_check(t, &w->sge[i], access);
		if (st != IBV_WC_SUCCESS)
			return st;
	}
	return IBV_WC_SUCCESS;
}

/* The WQE to send from, fetching the next one from the SQ when needed; NULL: none. */
static struct req_wqe *req_current(const struct transport_env *env, struct transport_qp *t)
{
	struct transport_req *r = &t->req;
	const struct verbs_send_wqe *w;
	struct req_wqe *e;

	if (r->cur != r->head)
		return &r->ring[r->cur & r->mask];
	if (r->head - r->comp > r->mask)
		return NULL;
	w = verbs_sq_next(t->qp);
	if (w == NULL)
		return NULL;
	e = &r->ring[r->head++ & r->mask];
	memset(e, 0, sizeof(*e));
	e->w = w;
	e->kind = wr_kind(w->opcode);
	e->err = wqe_check(t, e);
	e->checked = env->now;
	return e;
}

/*
 * May the WQE start (get its PSNs)? At most max_rd_atomic READ/ATOMIC
 * outstanding; a fenced WQE waits until every earlier READ/ATOMIC has completed. Every new
 * packet also stays inside the window of unacknowledged PSNs.
 */
static bool req_may_start(const struct transport_qp *t, const struct req_wqe *e)
{
	const struct transport_req *r = &t->req;

	if (e->err)
		return false;
	if (e->kind == RK_LOCAL)
		return !(e->w->send_flags & IBV_SEND_FENCE) || r->nrd == 0;
	if (req_kind_rd_atomic(e->kind) && r->nrd >= t->max_rd_atomic)
		return false;
	if ((e->w->send_flags & IBV_SEND_FENCE) && r->nrd > 0)
		return false;
	return true;
}

static void wqe_start(struct transport_qp *t, struct req_wqe *e)
{
	struct transport_req *r = &t->req;
	/* SEND, WRITE: a packet per MTU; READ: a response per MTU; the others one packet. */
	uint32_t len = e->kind <= RK_READ ? e->w->length : 0;

	e->npkts = RTE_MAX(div_up(len, t->mtu), 1u);
	e->first_psn = r->psn;
	e->last_psn = droce_psn_add(r->psn, e->npkts - 1);
	e->started = 1;
	if (req_kind_rd_atomic(e->kind))
		r->nrd++;
}

/* Copy @len bytes of the WQE's data at message offset @off into @m. Unless @recheck is false,
 * each SGE read is checked against its MR again: wqe_check() ran when the WQE started, and
 * the application may have deregistered (and freed) the memory since; droce_dereg_mr()
 * returns only after every engine entry (iteration, or control call) that may hold an older
 * lookup has ended (verbs_engine_ops.mr_quiesce). So a WQE checked in this same entry (the
 * first packet of most messages) needs no second lookup. */
enum ibv_wc_status transport_req_gather(const struct transport_qp *t,
					const struct verbs_send_wqe *w, uint32_t off,
					struct rte_mbuf *m, uint32_t len, bool recheck)
{
	uint32_t i, n, dst = 0;

	if (w->num_sge == 0) {	/* inline: the bytes follow the WQE */
		transport_pkt_write(m, 0, (const uint8_t *)w->sge + off, len);
		return IBV_WC_SUCCESS;
	}
	for (i = 0; i < w->num_sge && len != 0; i++) {
		const struct ibv_sge *s = &w->sge[i];

		if (off >= s->length) {
			off -= s->length;
			continue;
		}
		if (recheck && unlikely(transport_sge_check(t, s, 0) != IBV_WC_SUCCESS))
			return IBV_WC_LOC_PROT_ERR;
		n = RTE_MIN(len, s->length - off);
		transport_pkt_write(m, dst, (const uint8_t *)(uintptr_t)s->addr + off, n);
		dst += n;
		len -= n;
		off = 0;
	}
	return IBV_WC_SUCCESS;
}

/* Headers of the next SEND/WRITE packet; returns its payload length. */
static uint32_t fill_send_write(const struct transport_qp *t, const struct req_wqe *e,
				struct droce_hdr_fields *h, bool *last)
{
	const struct verbs_send_wqe *w = e->w;
	uint32_t off = t->req.off, rem = w->length - off;
	bool first = off == 0;

	*last = rem <= t->mtu;
	h->opcode = transport_wr_ops[w->opcode][transport_msg_pos(first, *last)];
	if (first && e->kind == RK_WRITE) {
		h->reth.va = w->wr.rdma.remote_addr;
		h->reth.rkey = w->wr.rdma.rkey;
		h->reth.len = w->length;
	}
	if (*last) {
		h->imm = w->imm_data;
		/* ibv_send_wr.invalidate_rkey (host order) shares imm_data's bytes. */
		h->ieth_rkey = (uint32_t)w->imm_data;
		/* IBA 9.2.3: SE is meaningful on the last packet of SEND / WRITE with imm. */
		h->se = (w->send_flags & IBV_SEND_SOLICITED) &&
			(e->kind == RK_SEND || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM);
	}
	return RTE_MIN(rem, t->mtu);
}

static void fill_read_atomic(const struct transport_qp *t, const struct req_wqe *e,
			     struct droce_hdr_fields *h)
{
	const struct verbs_send_wqe *w = e->w;

	if (e->kind == RK_READ) {
		/* A retried READ asks only for what has not arrived (IBA 9.4.4). */
		h->opcode = DROCE_OP_RC_RDMA_READ_REQUEST;
		h->reth.va = w->wr.rdma.remote_addr + t->req.off;
		h->reth.rkey = w->wr.rdma.rkey;
		h->reth.len = w->length - t->req.off;
		return;
	}
	if (e->kind == RK_ATOMIC_WRITE) {	/* the 8 bytes follow as payload (inline) */
		h->opcode = DROCE_OP_RC_ATOMIC_WRITE;
		h->reth.va = w->wr.rdma.remote_addr;
		h->reth.rkey = w->wr.rdma.rkey;
		h->reth.len = w->length;
		return;
	}
	if (e->kind == RK_FLUSH) {	/* droce.h, droce_wr_set_flush(): wr.atomic, length */
		h->opcode = DROCE_OP_RC_FLUSH;
		h->reth.va = w->wr.atomic.remote_addr;
		h->reth.rkey = w->wr.atomic.rkey;
		h->reth.len = w->length;
		h->feth.plt = w->wr.atomic.swap & DROCE_FETH_PLT_MASK;
		h->feth.sel = (w->wr.atomic.swap & DROCE_FETH_SEL_MASK) >> DROCE_FETH_SEL_SHIFT;
		return;
	}
	h->opcode = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? DROCE_OP_RC_COMPARE_SWAP :
							     DROCE_OP_RC_FETCH_ADD;
	h->atomic.va = w->wr.atomic.remote_addr;
	h->atomic.rkey = w->wr.atomic.rkey;
	/* FETCH_ADD: the add value in Swap/Add, Compare unused and zero (IBA 9.4.4), as rxe */
	h->atomic.cmp = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? w->wr.atomic.compare_add : 0;
	h->atomic.swap_add = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? w->wr.atomic.swap :
								       w->wr.atomic.compare_add;
}

/* Would a packet at @p psn be outside the window of unacknowledged PSNs (cut while recovering
 * from a loss: transport_comp.c, window_cut())? The oldest unacknowledged PSN is always inside: a READ
 * asking for more responses than the window still goes, alone. @p psn is never before
 * comp_psn here: when an ACK moves comp_psn past the requester's PSN, transport_comp_rx() asks
 * for a rewind (transport_req_retry()), which transport_req_tx() does before anything else. */
static inline bool window_full(const struct transport_req *r, uint32_t psn)
{
	return !droce_psn_in_window(psn, r->comp_psn, r->cwnd);
}

/* Build and send the next packet of @e. @return 0, -ENOMEM (try later). */
static int send_packet(struct transport_env *env, struct transport_qp *t, struct req_wqe *e)
{
	struct transport_req *r = &t->req;
	struct droce_hdr_fields h;
	struct rte_mbuf *m;
	uint32_t len = 0;
	bool last = true;

	memset(&h, 0, sizeof(h));
	if (e->kind <= RK_WRITE) {
		len = fill_send_write(t, e, &h, &last);
	} else {
		fill_read_atomic(t, e, &h);
		if (e->kind == RK_ATOMIC_WRITE)
			len = e->w->length;	/* its 8 bytes */
	}
	/* Zero-copy for first transmissions only: on a FIFO link such a frame is read before
	 * anything can acknowledge its PSN, so before the WR completes and the application may
	 * reuse the memory; a retransmission may trail an ACK, and is copied. */
	m = NULL;
	if (len >= TRANSPORT_ZCOPY_MIN && e->w->num_sge != 0 && !droce_psn_lt(r->psn, r->psn_hwm) &&
	    env->extbuf_ok != NULL && env->extbuf_ok(env, t->dev)) {
		bool gone;

		m = transport_pkt_zcopy(env, t, e->w->sge, e->w->num_sge, r->off, len, &gone);
		if (gone) {
			/* The application deregistered the memory under a WR in progress: the
			 * WR ends in a local protection error (transport_req_tx()), as the lkey check
			 * of a new one would. */
			e->err = IBV_WC_LOC_PROT_ERR;
			return -EFAULT;
		}
	}
	if (m != NULL) {
		TCNT(env, t, tx_zero_copy);
	} else {
		m = transport_pkt_alloc(env, len);
		if (m == NULL)
			return -ENOMEM;
		if (len != 0 && transport_req_gather(t, e->w, r->off, m, len,
						     e->checked != env->now) !=
				  IBV_WC_SUCCESS) {
			/* Deregistered under the WR, as the zero-copy case above. */
			transport_mbuf_free(env, m);
			e->err = IBV_WC_LOC_PROT_ERR;
			return -EFAULT;
		}
	}
	h.psn = r->psn;
	/* AckReq on the last packet of a message, and now and then inside long ones so
	 * that the window keeps moving (rxe does the same); and on the packet that fills
	 * the window, which waits for that ACK. */
	h.ackreq = last || ++r->noack >= TRANSPORT_ACKREQ_EVERY ||
		   window_full(r, droce_psn_add(r->psn, 1));
	if (h.ackreq)
		r->noack = 0;
	if (droce_psn_lt(r->psn, r->psn_hwm))
		TCNT(env, t, retransmits);
	if (transport_pkt_send(env, t, m, &h) != 0)
		return -ENOMEM;
	if (e->kind == RK_READ) {
		r->psn = droce_psn_add(e->last_psn, 1);
		r->off = e->w->length;
	} else {
		r->psn = droce_psn_add(r->psn, 1);
		r->off += len;
	}
	if (!droce_psn_lt(r->psn, r->psn_hwm))
		r->psn_hwm = r->psn;
	if (last || e->kind >= RK_READ) {
		r->cur++;
		r->off = 0;
	}
	if (r->rto_deadline == NO_DEADLINE && t->req.rto_ticks != 0)
		r->rto_deadline = env->now + r->rto_ticks;
	return 0;
}

/* Go back to comp_psn: the WQE that holds it and the offset inside it (go-back-N). */
static void req_rewind(struct transport_qp *t)
{
	struct transport_req *r = &t->req;
	const struct req_wqe *e;
	uint32_t n;

	r->need_retry = false;
	r->noack = 0;
	r->cur = r->comp;
	r->off = 0;
	if (r->comp == r->head || !r->ring[r->comp & r->mask].started) {
		r->psn = r->comp_psn;
		return;
	}
	e = &r->ring[r->comp & r->mask];
	if (e->kind == RK_LOCAL) {	/* done, its completion on the way: no PSN */
		r->psn = r->comp_psn;
		return;
	}
	n = (uint32_t)droce_psn_diff(r->comp_psn, e->first_psn);
	if (e->kind < RK_ATOMIC)
		r->off = RTE_MIN(n * t->mtu, e->w->length);
	r->psn = r->comp_psn;
}

void transport_req_retry(struct transport_qp *t)
{
	t->req.need_retry = true;
}

static __rte_always_inline bool req_sendable(const struct transport_qp *t, const struct req_wqe *e)
{
	const struct transport_req *r = &t->req;


	if (e->started)	/* a retransmission, or the rest of a message */
		return !window_full(r, r->psn);
	return req_may_start(t, e) && !window_full(r, r->psn);
}

/* A local operation (IBV_WR_BIND_MW, IBV_WR_LOCAL_INV; RC and UC), done when the requester
 * reaches it: in order after every WQE before it was sent, before any after it is. */
enum ibv_wc_status transport_req_local(struct transport_qp *t, const struct verbs_send_wqe *w)
{
	if (w->opcode == IBV_WR_BIND_MW)
		return verbs_local_bind(t->qp, w);
	return verbs_local_inv(t->qp, (uint32_t)w->imm_data);
}

unsigned int transport_req_tx(struct transport_env *env, struct transport_qp *t,
			      unsigned int budget)
{
	struct transport_req *r = &t->req;
	enum ibv_qp_state st = transport_state(t);
	unsigned int sent = 0;
	struct req_wqe *e;

	if ((st != IBV_QPS_RTS && st != IBV_QPS_SQD) || r->rnr_wait)
		return 0;
	if (r->need_retry)
		req_rewind(t);
	while (sent < budget) {
		e = req_current(env, t);
		if (e == NULL)
			break;
		if (e->err) {
			transport_comp_local_err(env, t);
			break;
		}
		if (unlikely(e->kind == RK_LOCAL)) {
			if (!e->started && !req_may_start(t, e))
				break;	/* fenced */
			if (!e->started) {
				e->err = transport_req_local(t, e->w);
				if (e->err)
					continue;	/* fails once it is the oldest */
				e->started = 1;
				r->nlocal++;
			}
			r->cur++;
			transport_comp_locals(t);
			continue;
		}
		if (!req_sendable(t, e) || transport_path_ready(env, t) != 0 ||
		    !transport_cc_tx_ok(env, t))
			break;
		if (!e->started)
			wqe_start(t, e);
		if (send_packet(env, t, e) != 0)
			break;
		sent++;
	}
	return sent;
}

bool transport_req_pending(const struct transport_qp *t)
{
	const struct transport_req *r = &t->req;
	enum ibv_qp_state st = transport_state(t);

	if ((st != IBV_QPS_RTS && st != IBV_QPS_SQD) || r->rnr_wait)
		return false;
	if (r->need_retry)
		return true;
	if (r->cur != r->head) {
		const struct req_wqe *e = &r->ring[r->cur & r->mask];

		if (e->err)
			return r->comp == r->cur;
		if (unlikely(e->kind == RK_LOCAL))
			return e->started || req_may_start(t, e);
		return req_sendable(t, e);
	}
	return st == IBV_QPS_RTS && verbs_wq_pending(t->qp, true);
}
