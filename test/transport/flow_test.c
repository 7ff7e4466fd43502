/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Ordering and limits: READ/ATOMIC at max_rd_atomic depth (never more outstanding), a fence
 * holding a WRITE until an earlier READ completed, duplicate requests answered (SEND re-ACKed,
 * READ replayed from memory (a "replay" naming another R_Key or bytes outside the READ's
 * dropped, one naming a part of them answered), ATOMIC replayed from the
 * saved result and never executed twice),
 * one sequence NAK per PSN gap then go-back-N, a request whose opcode breaks the message
 * sequence NAKed (invalid request, class C) with the QP in error, QP state and P_Key drops, COMM_EST,
 * MAC resolution pending, and many QP pairs at once.
 */
#include "tap.h"

#define SZ (1u << 20)
#define NS_LIMIT 20000000000ull

static struct tt tt;
static uint8_t *lbuf, *rbuf;
static struct droce_mr *lmr, *rmr;

static struct tt_qp *fresh(struct tt_opts *o)
{
	struct tt_opts d;

	if (o == NULL) {
		tt_opts_default(&d);
		o = &d;
	}
	memset(&tt.cnt, 0, sizeof(tt.cnt));
	tap_start(&tt);
	return tt_pair(&tt, o);
}

static void post(struct tt_qp *q, uint64_t id, enum ibv_wr_opcode op, uint8_t *l, uint32_t len,
		 uint8_t *r, int flags)
{
	struct ibv_sge sge = { (uintptr_t)l, len, lmr->lkey };
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)r;
		wr.wr.atomic.rkey = rmr->rkey;
		wr.wr.atomic.compare_add = id;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)r;
		wr.wr.rdma.rkey = rmr->rkey;
	}
	tt_post_send(q, &wr);
}

static void wait_ok(struct droce_cq *cq, int n)
{
	struct ibv_wc wc[64];
	int i;

	CHECK_EQ(tt_wait_cqes(&tt, cq, n, wc, NS_LIMIT), n);
	for (i = 0; i < n; i++)
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
}

/* Never more than max_rd_atomic READ/ATOMIC outstanding, and the depth is used. */
static void rd_atomic_depth(void)
{
	struct tt_opts o;
	struct tt_qp *q;
	uint64_t *ctr = (uint64_t *)(rbuf + SZ - 64);
	unsigned int i, reqs = 0, resps = 0, peak = 0;

	tt_opts_default(&o);
	o.max_rd_atomic[0] = 4;
	o.max_dest_rd_atomic[1] = 4;
	q = fresh(&o);
	*ctr = 0;
	tt_fill(rbuf, 24 * 10240, 3);
	for (i = 0; i < 24; i++) {
		if (i % 2 == 0)
			post(q, i, IBV_WR_RDMA_READ, lbuf + i * 10240, 10240, rbuf + i * 10240, 0);
		else
			post(q, i, IBV_WR_ATOMIC_FETCH_AND_ADD, lbuf + SZ - 4096 + i * 8, 8,
			     (uint8_t *)ctr, 0);
	}
	wait_ok(q->scq, 24);
	for (i = 0; i < 24; i += 2)
		CHECK(memcmp(lbuf + i * 10240, rbuf + i * 10240, 10240) == 0);
	/* FETCH_ADD executed once each, in order: orig values are the running sums */
	{
		uint64_t sum = 0;

		for (i = 1; i < 24; i += 2) {
			CHECK_EQ(*(uint64_t *)(lbuf + SZ - 4096 + i * 8), sum);
			sum += i;
		}
		CHECK_EQ(*ctr, sum);
	}
	for (i = 0; i < tap_n; i++) {
		const struct tap_rec *r = &tap_log[i];

		if (r->from == 0 && (r->opcode == DROCE_OP_RC_RDMA_READ_REQUEST ||
				     r->opcode == DROCE_OP_RC_FETCH_ADD))
			peak = RTE_MAX(peak, ++reqs - resps);
		if (r->from == 1 && (r->opcode == DROCE_OP_RC_RDMA_READ_RESPONSE_LAST ||
				     r->opcode == DROCE_OP_RC_ATOMIC_ACKNOWLEDGE))
			resps++;
	}
	CHECK_EQ(reqs, 24);
	CHECK_EQ(peak, 4);
	printf("read_atomic_at_max_rd_atomic_depth: ok\n");
}

/* Is an async event @p type among those side 1 has raised since the last call? */
static bool event_raised(int type)
{
	return tt_has_event(&tt, 1, type);
}

/*
 * A requester beyond the responder's max_dest_rd_atomic (IBA 9.5 forbids it; a replayed
 * capture or another stack may do it): the request that finds the oldest responder resource's
 * response not yet sent is "too many RDMA READ or atomic requests" (class C, rxe's
 * ERR_TOO_MANY_RDMA_ATM_REQ): NAK invalid request at its PSN, counted (rx_rd_atomic_excess),
 * the responder to ERR with IBV_EVENT_QP_ACCESS_ERR. The requests accepted before it are
 * answered with their own data first; the excess ATOMIC never executes.
 */
static void rd_atomic_beyond_responder_limit(void)
{
	struct ibv_wc wc[3];
	struct tt_opts o;
	struct tt_qp *q;
	uint64_t *ctr = (uint64_t *)(rbuf + SZ - 64);
	unsigned int i;

	tt_opts_default(&o);
	o.max_rd_atomic[0] = 16;
	o.max_dest_rd_atomic[1] = 2;
	q = fresh(&o);
	while (tt_async(&tt, 1) >= 0)
		;
	*ctr = 0;
	memset(lbuf, 0, 2 * 3000);
	tt_fill(rbuf, 2 * 3000, 11);
	post(q, 0, IBV_WR_RDMA_READ, lbuf, 3000, rbuf, 0);
	post(q, 1, IBV_WR_RDMA_READ, lbuf + 3000, 3000, rbuf + 3000, 0);
	post(q, 2, IBV_WR_ATOMIC_FETCH_AND_ADD, lbuf + SZ - 4096, 8, (uint8_t *)ctr, 0);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 3, wc, NS_LIMIT), 3);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(wc[i].wr_id, i);
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
	}
	CHECK(memcmp(lbuf, rbuf, 2 * 3000) == 0);
	CHECK_EQ(wc[2].wr_id, 2);
	CHECK_EQ(wc[2].status, IBV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(*ctr, 0);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_INV_REQ), 1);
	CHECK_EQ(tt.cnt[1].rx_rd_atomic_excess, 1);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_ERR);
	CHECK(event_raised(IBV_EVENT_QP_ACCESS_ERR));
	printf("read_atomic_beyond_responder_limit_nak_inv_req_qp_access_err: ok\n");
}

/* A READ request built by hand to the responder of @p q: @p len bytes of rbuf at @p psn. */
static void inject_read(struct tt_qp *q, uint32_t psn, uint32_t len)
{
	struct droce_hdr_fields h;

	memset(&h, 0, sizeof(h));
	h.opcode = DROCE_OP_RC_RDMA_READ_REQUEST;
	h.dqpn = q->peer->qp->qp_num;
	h.psn = psn;
	h.reth.va = (uintptr_t)rbuf;
	h.reth.rkey = rmr->rkey;
	h.reth.len = len;
	tt_inject_h(&tt, 1, &h, 0);
}

/*
 * A requester that keeps to max_dest_rd_atomic (2) is never NAKed, even when a retry of its
 * oldest READ crossed that READ's response: READs A and B are answered; A's duplicate (the
 * retry) and then C arrive together. The requester got A's response before it sent C, so the
 * replay of A queued in the oldest resource is dropped (rx_dup_dropped) and C takes the
 * resource (rxe reuses its oldest resource), answered with its own length; no NAK.
 */
static void rd_atomic_retry_crossing_response_not_excess(void)
{
	struct tt_opts o;
	struct tt_qp *q;
	uint32_t p;
	const struct tap_rec *r;

	tt_opts_default(&o);
	o.max_dest_rd_atomic[1] = 2;
	q = fresh(&o);
	p = o.psn[0];
	inject_read(q, p, 8);
	inject_read(q, (p + 1) & 0xffffff, 16);
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, -1), 2);
	inject_read(q, p, 8);				/* A again */
	inject_read(q, (p + 2) & 0xffffff, 24);	/* C */
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	r = tap_find(1, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, -1, 2);
	CHECK(r != NULL);
	CHECK_EQ(r->psn, (p + 2) & 0xffffff);
	CHECK_EQ(r->len, 24);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_INV_REQ), 0);
	CHECK_EQ(tt.cnt[1].rx_rd_atomic_excess, 0);
	CHECK_EQ(tt.cnt[1].rx_dup_dropped, 1);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_RTS);
	printf("read_retry_crossing_response_then_new_read_answered_no_nak: ok\n");
}

/*
 * IBV_EVENT_COMM_EST (IBA 11.6.3) is raised for the first packet a QP in RTR accepts, not for
 * one it drops: a SEND out of sequence (sequence NAK) and a duplicate (re-ACKed) raise nothing;
 * the SEND at the expected PSN raises it, once.
 */
static void comm_est_first_accepted_packet(void)
{
	struct ibv_sge sge = { (uintptr_t)rbuf, 4096, rmr->lkey };
	struct tt_opts o;
	struct tt_qp *a, *b;
	struct ibv_wc wc[2];
	uint32_t p;

	tt_opts_default(&o);
	memset(&tt.cnt, 0, sizeof(tt.cnt));
	tap_start(&tt);
	a = tt_qp_new(&tt, 0, &o);
	b = tt_qp_new(&tt, 1, &o);
	a->peer = b;
	b->peer = a;
	tt_connect_rtr(&tt, b, a, &o);	/* b stays in RTR */
	tt_connect_one(&tt, a, b, &o);
	while (tt_async(&tt, 1) >= 0)
		;
	p = o.psn[0];
	tt_post_recv(b, 1, &sge, 1);
	tt_post_recv(b, 2, &sge, 1);
	tt_inject(&tt, 1, b->qp->qp_num, DROCE_OP_RC_SEND_ONLY, p + 3, 16);
	tt_inject(&tt, 1, b->qp->qp_num, DROCE_OP_RC_SEND_ONLY, p - 1, 16);
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	CHECK_EQ(tt.cnt[1].out_of_sequence, 1);
	CHECK_EQ(tt.cnt[1].duplicate_request, 1);
	CHECK(!event_raised(IBV_EVENT_COMM_EST));
	tt_inject(&tt, 1, b->qp->qp_num, DROCE_OP_RC_SEND_ONLY, p, 16);
	tt_inject(&tt, 1, b->qp->qp_num, DROCE_OP_RC_SEND_ONLY, p + 1, 0);
	CHECK_EQ(tt_wait_cqes(&tt, b->rcq, 2, wc, NS_LIMIT), 2);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK_EQ(wc[1].status, IBV_WC_SUCCESS);
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	CHECK_EQ(tt_async(&tt, 1), IBV_EVENT_COMM_EST);
	CHECK_EQ(tt_async(&tt, 1), -1);
	CHECK_EQ(tt_state(b), IBV_QPS_RTR);
	printf("comm_est_first_accepted_packet_in_rtr_only: ok\n");
}

/* Position of the first tap record matching, or tap_n. */
static unsigned int tap_pos(int from, int opcode, bool last)
{
	unsigned int i, at = tap_n;

	for (i = 0; i < tap_n; i++)
		if (tap_log[i].from == from && tap_log[i].opcode == opcode) {
			at = i;
			if (!last)
				break;
		}
	return at;
}

/* IBA 10.8.3.3: a fenced WQE waits until earlier READ/ATOMIC completed. */
static void fence(void)
{
	struct tt_qp *q;
	unsigned int w, rl;

	q = fresh(NULL);
	memset(rbuf, 0xaa, 65536);
	memset(lbuf + 65536, 0xbb, 65536);
	post(q, 1, IBV_WR_RDMA_READ, lbuf, 65536, rbuf, 0);
	post(q, 2, IBV_WR_RDMA_WRITE, lbuf + 65536, 65536, rbuf, IBV_SEND_FENCE);
	wait_ok(q->scq, 2);
	for (w = 0; w < 65536; w++)
		CHECK(lbuf[w] == 0xaa && rbuf[w] == 0xbb);
	w = tap_pos(0, DROCE_OP_RC_RDMA_WRITE_FIRST, false);
	rl = tap_pos(1, DROCE_OP_RC_RDMA_READ_RESPONSE_LAST, true);
	CHECK(rl < w && w < tap_n);
	/* without the fence the WRITE does not wait (so the fence is what ordered it) */
	q = fresh(NULL);
	post(q, 1, IBV_WR_RDMA_READ, lbuf, 65536, rbuf, 0);
	post(q, 2, IBV_WR_RDMA_WRITE, lbuf + 65536, 65536, rbuf, 0);
	wait_ok(q->scq, 2);
	CHECK(tap_pos(0, DROCE_OP_RC_RDMA_WRITE_FIRST, false) <
	      tap_pos(1, DROCE_OP_RC_RDMA_READ_RESPONSE_LAST, true));
	printf("fence_orders_write_after_read: ok\n");
}

/* Keep copies of request frames side 0 sends, to replay them as duplicates. */
static struct rte_mbuf *saved[8];
static unsigned int nsaved;

static void tap_save(struct tt *t, int from, const struct droce_pkt *pkt, struct rte_mbuf *m)
{
	tap_record(t, from, pkt, m);
	if (from == 0 && (pkt->mask & DROCE_M_REQ) && nsaved < RTE_DIM(saved)) {
		saved[nsaved] = rte_pktmbuf_copy(m, t->pool, 0, UINT32_MAX);
		CHECK(saved[nsaved] != NULL);
		nsaved++;
	}
}

static void replay_saved(void)
{
	unsigned int i;

	for (i = 0; i < nsaved; i++) {
		struct droce_pkt pkt;

		CHECK_EQ(droce_parse_mbuf(saved[i], 0, &pkt), DROCE_PARSE_OK);
		tt_enqueue(&tt, saved[i], &pkt, 1);
	}
	nsaved = 0;
	tt_run(&tt, NULL, NULL, NS_LIMIT);
}

/* A copy of the READ request @p m with its R_Key xor @p rkey_x, @p va_add added to its VA
 * and @p len_add to its length, and its ICRC made right again. */
static struct rte_mbuf *forged_read_copy(const struct rte_mbuf *m, uint32_t rkey_x,
					 uint64_t va_add, uint32_t len_add)
{
	struct rte_mbuf *c = m != NULL ? rte_pktmbuf_copy(m, tt.pool, 0, UINT32_MAX) : NULL;
	struct droce_pkt pkt;
	struct droce_reth *reth;
	uint8_t *d;

	CHECK(c != NULL && c->nb_segs == 1);
	if (c == NULL || c->nb_segs != 1)
		return NULL;
	CHECK_EQ(droce_parse_mbuf(c, 0, &pkt), DROCE_PARSE_OK);
	CHECK(pkt.opcode == DROCE_OP_RC_RDMA_READ_REQUEST);
	d = rte_pktmbuf_mtod(c, uint8_t *);
	reth = (struct droce_reth *)(uintptr_t)droce_pkt_ext(&pkt, DROCE_HDR_RETH);
	reth->rkey ^= rte_cpu_to_be_32(rkey_x);
	reth->va = rte_cpu_to_be_64(rte_be_to_cpu_64(reth->va) + va_add);
	reth->len = rte_cpu_to_be_32(rte_be_to_cpu_32(reth->len) + len_add);
	droce_put_le32(d + pkt.frame_len - DROCE_ICRC_LEN,
		       droce_icrc(d + pkt.l3_off, pkt.frame_len - pkt.l3_off - DROCE_ICRC_LEN));
	return c;
}

/* IBA 9.7.5.1.2: duplicates are answered, never executed twice. */
/* Enqueue @p forged to side 1; @return how many frames side 1 sent in answer. */
static unsigned int forged_answers(struct rte_mbuf *forged)
{
	struct droce_pkt fp;
	unsigned int n = tap_count(1, -1, -1);

	CHECK_EQ(droce_parse_mbuf(forged, 0, &fp), DROCE_PARSE_OK);
	tt_enqueue(&tt, forged, &fp, 1);
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	return tap_count(1, -1, -1) - n;
}

static void duplicates(void)
{
	uint64_t *ctr = (uint64_t *)(rbuf + 128);
	struct ibv_sge rs = { (uintptr_t)rbuf + 4096, 4096, rmr->lkey };
	struct rte_mbuf *forged[4];
	struct tt_qp *q;
	struct ibv_wc wc;
	unsigned int n;

	q = fresh(NULL);
	tt.tap = tap_save;
	*ctr = 10;
	post(q, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, lbuf, 8, (uint8_t *)ctr, 0);
	wait_ok(q->scq, 1);
	CHECK_EQ(*ctr, 11);
	n = tap_count(1, DROCE_OP_RC_ATOMIC_ACKNOWLEDGE, -1);
	replay_saved();
	CHECK_EQ(*ctr, 11);	/* not executed again */
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ATOMIC_ACKNOWLEDGE, -1), n + 1);
	CHECK_EQ(tt.cnt[1].duplicate_request, 1);
	CHECK_EQ(tt.cnt[0].rx_resp_dropped, 1);	/* the requester saw it already */

	tt_fill(rbuf + 8192, 3000, 4);
	post(q, 2, IBV_WR_RDMA_READ, lbuf, 3000, rbuf + 8192, 0);
	wait_ok(q->scq, 1);
	forged[0] = forged_read_copy(saved[0], 0x100, 0, 0);	/* another R_Key */
	forged[1] = forged_read_copy(saved[0], 0, 1024, 0);	/* 1 KiB past its end */
	forged[2] = forged_read_copy(saved[0], 0, 0, 1);	/* a byte longer */
	forged[3] = forged_read_copy(saved[0], 0, 1024, (uint32_t)-1024); /* its last 1976 bytes */
	n = tap_count(1, -1, -1);
	replay_saved();
	CHECK_EQ(tap_count(1, -1, -1), n + 3);	/* 3000 bytes at MTU 1024: replayed */
	CHECK_EQ(tt.cnt[1].duplicate_request, 2);
	/* The same READ naming another R_Key or bytes outside it is no replay of it: dropped,
	 * nothing answered, and the QP goes on (the SEND below); a part of it is answered. */
	CHECK_EQ(forged_answers(forged[0]), 0);
	CHECK_EQ(forged_answers(forged[1]), 0);
	CHECK_EQ(forged_answers(forged[2]), 0);
	CHECK_EQ(tt.cnt[1].duplicate_request, 5);
	CHECK_EQ(tt.cnt[1].rx_dup_dropped, 3);
	CHECK_EQ(forged_answers(forged[3]), 2);	/* 1976 bytes at MTU 1024 */
	CHECK_EQ(tt.cnt[1].duplicate_request, 6);
	CHECK_EQ(tt.cnt[1].rx_dup_dropped, 3);

	tt_post_recv(q->peer, 9, &rs, 1);
	post(q, 3, IBV_WR_SEND, lbuf, 100, NULL, 0);
	wait_ok(q->scq, 1);
	n = tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, -1);
	replay_saved();
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, -1), n + 1);	/* re-ACKed */
	CHECK_EQ(tt_wait_cqes(&tt, q->peer->rcq, 2, (struct ibv_wc[2]){ 0 }, NS_LIMIT), 1);
	CHECK_EQ(tt.cnt[1].duplicate_request, 7);
	RTE_SET_USED(wc);
	printf("duplicates_reacked_read_replayed_atomic_once: ok\n");
}

/* A PSN sequence error: one NAK per gap, silence until the expected PSN, then go-back-N. */
static void out_of_sequence(void)
{
	struct tt_opts o;
	struct tt_qp *q;

	tt_opts_default(&o);
	q = fresh(&o);
	tt_fill(lbuf, 10 * 1024, 5);
	tt.drop_psn[0] = (o.psn[0] + 2) & 0xffffff;	/* the third packet of the WRITE */
	post(q, 1, IBV_WR_RDMA_WRITE, lbuf, 10 * 1024, rbuf, 0);
	wait_ok(q->scq, 1);
	CHECK(memcmp(lbuf, rbuf, 10 * 1024) == 0);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR), 1);
	CHECK_EQ(tap_find(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK, 0)->psn,
		 (o.psn[0] + 2) & 0xffffff);
	CHECK_EQ(tt.cnt[1].out_of_sequence, 7);
	CHECK_EQ(tt.cnt[1].seq_nak_sent, 1);
	CHECK_EQ(tt.cnt[0].nak_rcvd, 1);
	CHECK_EQ(tt.cnt[0].retransmits, 8);	/* go-back-N from the NAKed PSN */
	printf("out_of_sequence_one_nak_go_back_n: ok\n");
}

/* Send @p opcode with @p len zero bytes at @p psn to the responder of @p q (side 1). */
static void inject(struct tt_qp *q, uint8_t opcode, uint32_t psn, uint32_t len)
{
	tt_inject(&tt, 1, q->peer->qp->qp_num, opcode, psn, len);
}

/* A SEND_FIRST, then in sequence a SEND_ONLY instead of its MIDDLE or LAST (rxe's "missing
 * LAST", class C): the responder NAKs invalid request at that PSN, completes the receive
 * WQE the message held with REM_INV_REQ_ERR, and goes to ERR with QP_REQ_ERR. */
static void opcode_sequence_missing_last(void)
{
	struct tt_opts o;
	struct tt_qp *q;
	struct ibv_sge sge = { (uintptr_t)rbuf, 4096, rmr->lkey };
	struct ibv_wc wc;

	tt_opts_default(&o);
	q = fresh(&o);
	tt_post_recv(q->peer, 77, &sge, 1);
	inject(q, DROCE_OP_RC_SEND_FIRST, o.psn[0], 1024);
	inject(q, DROCE_OP_RC_SEND_ONLY, (o.psn[0] + 1) & 0xffffff, 16);
	CHECK_EQ(tt_wait_cqes(&tt, q->peer->qp->recv_cq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.wr_id, 77);
	CHECK_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_INV_REQ), 1);
	CHECK_EQ(tap_find(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_INV_REQ, 0)->psn, (o.psn[0] + 1) & 0xffffff);
	CHECK_EQ(tt.cnt[1].rx_opcode_seq, 1);
	CHECK_EQ(tt.cnt[1].inv_req_err, 1);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_ERR);
	CHECK(tt_has_event(&tt, 1, IBV_EVENT_QP_REQ_ERR));
	printf("opcode_sequence_missing_last_nak_inv_req_qp_err: ok\n");
}

/* Opcode sequence (missing FIRST: NAK, QP to error), QP state and P_Key admission. */
static void admission(void)
{
	struct tt_opts o;
	struct tt_qp *q, *lone;
	struct droce_flow f;
	struct droce_hdr_fields h;
	struct droce_pkt pkt;
	struct rte_mbuf *m;

	tt_opts_default(&o);
	q = fresh(&o);
	memset(&f, 0, sizeof(f));
	memcpy(f.sgid, tt.gid[0].raw, 16);
	memcpy(f.dgid, tt.gid[1].raw, 16);
	memset(&h, 0, sizeof(h));
	h.opcode = DROCE_OP_RC_SEND_MIDDLE;	/* no message open */
	h.pkey = 0xffff;
	h.dqpn = q->peer->qp->qp_num;
	h.psn = o.psn[0];
	m = rte_pktmbuf_alloc(tt.pool);
	memset(rte_pktmbuf_append(m, 1024), 0, 1024);
	CHECK_EQ(droce_build_mbuf(m, &f, &h), 0);
	CHECK_EQ(droce_parse_mbuf(m, 0, &pkt), DROCE_PARSE_OK);
	tt_enqueue(&tt, m, &pkt, 1);
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	CHECK_EQ(tt.cnt[1].rx_opcode_seq, 1);
	CHECK_EQ(tt.cnt[1].inv_req_err, 1);
	CHECK_EQ(tap_n, 1);	/* the NAK, at the MIDDLE's PSN */
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_INV_REQ), 1);
	CHECK_EQ(tap_log[0].psn, o.psn[0]);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_ERR);
	CHECK(tt_has_event(&tt, 1, IBV_EVENT_QP_REQ_ERR));

	/* a QP in INIT takes nothing */
	lone = tt_qp_new(&tt, 1, &o);
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

		tt_modify(&tt, lone, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS);
	}
	h.opcode = DROCE_OP_RC_SEND_ONLY;
	h.dqpn = lone->qp->qp_num;
	m = rte_pktmbuf_alloc(tt.pool);
	CHECK_EQ(droce_build_mbuf(m, &f, &h), 0);
	CHECK_EQ(droce_parse_mbuf(m, 0, &pkt), DROCE_PARSE_OK);
	tt_enqueue(&tt, m, &pkt, 1);
	/* a bad P_Key */
	h.dqpn = q->peer->qp->qp_num;
	h.pkey = 0x7001;
	m = rte_pktmbuf_alloc(tt.pool);
	CHECK_EQ(droce_build_mbuf(m, &f, &h), 0);
	CHECK_EQ(droce_parse_mbuf(m, 0, &pkt), DROCE_PARSE_OK);
	tt_enqueue(&tt, m, &pkt, 1);
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	CHECK_EQ(tt.cnt[1].rx_qp_state, 1);
	CHECK_EQ(tt.cnt[1].rx_bad_pkey, 1);
	CHECK_EQ(tap_n, 1);	/* nothing answers either */
	printf("opcode_sequence_nak_state_pkey_drops_counted: ok\n");
}

/* A MAC still being resolved (-EAGAIN): nothing is sent, nothing is lost, it goes later. */
static void resolve_pending(void)
{
	struct tt_opts o;
	struct tt_qp *q;

	tt_opts_default(&o);
	q = fresh(&o);	/* connecting resolves nothing yet: MACs are resolved lazily */
	tt.resolve_fail = 50;
	tt_fill(lbuf, 3000, 8);
	post(q, 1, IBV_WR_RDMA_WRITE, lbuf, 3000, rbuf, 0);
	wait_ok(q->scq, 1);
	CHECK_EQ(tt.resolve_fail, 0);
	CHECK(memcmp(lbuf, rbuf, 3000) == 0);
	CHECK_EQ(tt.cnt[0].retransmits, 0);
	CHECK_EQ(tap_count(0, -1, -1), 3);
	printf("mac_resolution_pending_then_sent: ok\n");
}

/*
 * A path waiting for its resolution parks the QP's TX: no resolution is asked for again at
 * the next passes, until TRANSPORT_PATH_RETRY_US (100 us) later or a wake from the engine
 * (the neighbour table changed); then the WRITE goes, once.
 */
static void path_wait_parks(void)
{
	const uint64_t retry = TT_HZ / 10000;	/* 100 us */
	struct tt_opts o;
	struct tt_qp *q;
	uint64_t t0;

	tt_opts_default(&o);
	q = fresh(&o);
	tt.resolve_fail = 3;
	tt_fill(lbuf, 64, 9);
	post(q, 1, IBV_WR_RDMA_WRITE, lbuf, 64, rbuf, 0);
	t0 = tt.env.now;
	CHECK(transport_tx_pending(q->t));
	tt_step(&tt);					/* asks: -EAGAIN */
	CHECK_EQ(tt.resolve_fail, 2);
	CHECK(!transport_tx_pending(q->t));
	CHECK_EQ(transport_deadline(q->t), t0 + retry);
	tt_step(&tt);					/* parked: asks nothing */
	tt_step(&tt);
	CHECK_EQ(tt.resolve_fail, 2);
	CHECK(!transport_path_wake(q->peer->t));	/* the peer's path was not waiting */
	CHECK(transport_path_wake(q->t));		/* the table changed: ask again */
	CHECK(!transport_path_wake(q->t));
	CHECK(transport_tx_pending(q->t));
	tt_step(&tt);					/* -EAGAIN: parked again */
	CHECK_EQ(tt.resolve_fail, 1);
	CHECK(!transport_tx_pending(q->t));
	tt.env.now = transport_deadline(q->t) - 1;
	tt_timers(&tt);
	CHECK(!transport_tx_pending(q->t));		/* not yet */
	tt.env.now++;
	tt_timers(&tt);
	CHECK(transport_tx_pending(q->t));		/* its deadline */
	tt_step(&tt);					/* the last -EAGAIN */
	CHECK_EQ(tt.resolve_fail, 0);
	wait_ok(q->scq, 1);
	CHECK(memcmp(lbuf, rbuf, 64) == 0);
	CHECK_EQ(tt.cnt[0].retransmits, 0);
	printf("path_wait_parks_until_deadline_or_wake: ok\n");
}

/* Many QP pairs at once. */
static void many_qps(void)
{
	enum { NP = 48 };
	struct tt_qp *q[NP];
	struct tt_opts o;
	unsigned int i, base;
	uint64_t *ctr = (uint64_t *)(rbuf + SZ - 8);

	tt_opts_default(&o);
	memset(&tt.cnt, 0, sizeof(tt.cnt));
	tt.tap = NULL;
	*ctr = 0;
	tt_fill(rbuf, SZ / 2, 6);
	tt_fill(lbuf + SZ / 2, SZ / 2 - 8192, 7);
	for (i = 0; i < NP; i++) {
		struct ibv_sge rs;

		q[i] = tt_pair(&tt, &o);
		base = i * 8192;
		rs = (struct ibv_sge){ (uintptr_t)rbuf + SZ / 2 + base, 3000, rmr->lkey };
		tt_post_recv(q[i]->peer, i, &rs, 1);
		post(q[i], 1, IBV_WR_SEND, lbuf + SZ / 2 + base, 3000, NULL, 0);
		post(q[i], 2, IBV_WR_RDMA_WRITE, lbuf + SZ / 2 + base + 3000, 5000,
		     rbuf + SZ / 2 + base + 3000, 0);
		post(q[i], 3, IBV_WR_RDMA_READ, lbuf + base, 7000, rbuf + base, 0);
		post(q[i], 4, IBV_WR_ATOMIC_FETCH_AND_ADD, lbuf + SZ / 2 - 8 * (i + 1), 8,
		     (uint8_t *)ctr, 0);
	}
	for (i = 0; i < NP; i++) {
		wait_ok(q[i]->scq, 4);
		wait_ok(q[i]->peer->rcq, 1);
		base = i * 8192;
		CHECK(memcmp(lbuf + base, rbuf + base, 7000) == 0);
		CHECK(memcmp(lbuf + SZ / 2 + base, rbuf + SZ / 2 + base, 8000) == 0);
	}
	CHECK_EQ(*ctr, 4 * NP);
	printf("many_qps_at_once (%d pairs): ok\n", NP);
}

int main(int argc, char **argv)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;

	tt_init(&tt, argc, argv, 3);
	lbuf = aligned_alloc(4096, SZ);
	rbuf = aligned_alloc(4096, SZ);
	CHECK(lbuf != NULL && rbuf != NULL);
	lmr = tt_mr(&tt, 0, lbuf, SZ, access);
	rmr = tt_mr(&tt, 1, rbuf, SZ, access);
	rd_atomic_depth();
	rd_atomic_beyond_responder_limit();
	rd_atomic_retry_crossing_response_not_excess();
	comm_est_first_accepted_packet();
	fence();
	duplicates();
	out_of_sequence();
	admission();
	opcode_sequence_missing_last();
	resolve_pending();
	path_wait_parks();
	many_qps();
	return 0;
}
