/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Every RC error path, each on a fresh QP pair: the completion status on both sides, the NAK
 * on the wire (opcode and AETH syndrome), the responder's memory untouched, the QP states, the
 * async event and the counters; responses the requester cannot take (BAD_RESP_ERR).
 */
#include <sys/mman.h>

#include "tap.h"

#define SZ 65536
#define NS_LIMIT 5000000000ull

static struct tt tt;
static uint8_t *lbuf, *rbuf;
static struct droce_mr *lmr, *rmr;
static struct droce_mr *fmr;	/* rbuf's first 4 KiB with FLUSH_GLOBAL only */
static const int all_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

static struct tt_qp *fresh(struct tt_opts *o)
{
	struct tt_opts d;

	if (o == NULL) {
		tt_opts_default(&d);
		o = &d;
	}
	memset(&tt.cnt, 0, sizeof(tt.cnt));
	while (tt_async(&tt, 0) >= 0 || tt_async(&tt, 1) >= 0)
		;
	tap_start(&tt);
	return tt_pair(&tt, o);
}

static void wr_rdma(struct ibv_send_wr *wr, struct ibv_sge *sge, enum ibv_wr_opcode op,
		    uint32_t len, uint64_t raddr, uint32_t rkey)
{
	memset(wr, 0, sizeof(*wr));
	*sge = (struct ibv_sge){ (uintptr_t)lbuf, len, lmr->lkey };
	wr->wr_id = 42;
	wr->opcode = op;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = rkey;
}

static void expect_send_status(struct tt_qp *q, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.status, st);
	CHECK_EQ(wc.wr_id, 42);
	CHECK_EQ(tt_state(q), IBV_QPS_ERR);
}

/* A remote error on RDMA @p op: NAK @p code, REM_* status, responder in ERR with @p ev. */
static void remote_error(const char *what, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
			 uint8_t code, enum ibv_wc_status st, int ev)
{
	struct tt_qp *q = fresh(NULL);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	memset(rbuf, 0x5a, SZ);
	memset(lbuf, 0xa5, SZ);
	wr_rdma(&wr, &sge, op, 3000, raddr, rkey);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		sge.length = 8;
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	}
	tt_post_send(q, &wr);
	expect_send_status(q, st);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | code), 1);
	CHECK_EQ(tap_count(1, -1, -1), 1);	/* the NAK and nothing else */
	CHECK_EQ(tt_state(q->peer), IBV_QPS_ERR);
	CHECK(tt_has_event(&tt, 1, ev));
	CHECK_EQ(tt.cnt[0].nak_rcvd, 1);
	if (code == DROCE_NAK_REM_ACCESS)
		CHECK_EQ(tt.cnt[1].access_err, 1);
	else
		CHECK_EQ(tt.cnt[1].inv_req_err, 1);
	for (size_t i = 0; i < SZ; i++)
		if (rbuf[i] != 0x5a || (op != IBV_WR_RDMA_WRITE && lbuf[i] != 0xa5)) {
			fprintf(stderr, "%s: memory touched at %zu\n", what, i);
			exit(1);
		}
	printf("%s: ok\n", what);
}

static void access_errors(void)
{
	struct droce_pd *pd2 = droce_alloc_pd(tt.ctx[1]);
	struct droce_mr *ro, *other;

	CHECK(pd2 != NULL);
	ro = tt_mr(&tt, 1, rbuf, SZ, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	other = droce_reg_mr(pd2, rbuf, SZ, all_access);
	CHECK(other != NULL);
	remote_error("write_bad_rkey", IBV_WR_RDMA_WRITE, (uintptr_t)rbuf, rmr->rkey + 0x1000,
		     DROCE_NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	remote_error("write_out_of_bounds", IBV_WR_RDMA_WRITE, (uintptr_t)rbuf + SZ - 2000,
		     rmr->rkey, DROCE_NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR,
		     IBV_EVENT_QP_ACCESS_ERR);
	remote_error("write_before_mr", IBV_WR_RDMA_WRITE, (uintptr_t)rbuf - 8, rmr->rkey,
		     DROCE_NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	remote_error("write_missing_access_flag", IBV_WR_RDMA_WRITE, (uintptr_t)rbuf, ro->rkey,
		     DROCE_NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	remote_error("write_wrong_pd", IBV_WR_RDMA_WRITE, (uintptr_t)rbuf, other->rkey,
		     DROCE_NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	remote_error("read_bad_rkey", IBV_WR_RDMA_READ, (uintptr_t)rbuf, rmr->rkey ^ 0x80000000u,
		     DROCE_NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	remote_error("read_wrong_pd", IBV_WR_RDMA_READ, (uintptr_t)rbuf, other->rkey,
		     DROCE_NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	remote_error("atomic_missing_access_flag", IBV_WR_ATOMIC_FETCH_AND_ADD,
		     (uintptr_t)rbuf + 64, ro->rkey, DROCE_NAK_REM_ACCESS,
		     IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	CHECK_EQ(droce_dereg_mr(ro), 0);
	CHECK_EQ(droce_dereg_mr(other), 0);
	CHECK_EQ(droce_dealloc_pd(pd2), 0);
}

/* QP not enabled for remote writes (qp_access_flags): NAK invalid request (rxe). */
static void qp_access_flags(void)
{
	struct tt_opts o;
	struct tt_qp *q;
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	tt_opts_default(&o);
	o.access[1] = IBV_ACCESS_REMOTE_READ;
	q = fresh(&o);
	memset(rbuf, 0x5a, SZ);
	wr_rdma(&wr, &sge, IBV_WR_RDMA_WRITE, 100, (uintptr_t)rbuf, rmr->rkey);
	tt_post_send(q, &wr);
	expect_send_status(q, IBV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_INV_REQ), 1);
	CHECK_EQ(rbuf[0], 0x5a);
	CHECK(tt_has_event(&tt, 1, IBV_EVENT_QP_REQ_ERR));
	printf("write_qp_without_remote_write: ok\n");
}

/*
 * The affiliated event of a responder error is the one the verbs documentation gives it
 * (NVIDIA's RDMA Aware Programming manual, "Events"): side 1 raised exactly one QP error
 * event, @p want.
 */
static void only_event(int want)
{
	int e, n = 0;

	while ((e = tt_async(&tt, 1)) >= 0) {
		if (e == IBV_EVENT_QP_REQ_ERR || e == IBV_EVENT_QP_ACCESS_ERR ||
		    e == IBV_EVENT_QP_FATAL)
			CHECK_EQ(e, want);
		n += e == want;
	}
	CHECK_EQ(n, 1);
}

/* A receive buffer too small: LOC_LEN_ERR at the responder, NAK invalid request. */
static void recv_too_small(void)
{
	struct tt_qp *q = fresh(NULL);
	struct ibv_sge rs = { (uintptr_t)rbuf, 1000, rmr->lkey };
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;

	tt_post_recv(q->peer, 7, &rs, 1);
	tt_post_recv(q->peer, 8, &rs, 1);	/* flushed when the QP enters ERR */
	wr_rdma(&wr, &sge, IBV_WR_SEND, 3000, 0, 0);
	tt_post_send(q, &wr);
	expect_send_status(q, IBV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(tt_wait_cqes(&tt, q->peer->rcq, 2, (struct ibv_wc[2]){ 0 }, NS_LIMIT), 2);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_INV_REQ), 1);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_ERR);
	CHECK_EQ(tt.cnt[1].inv_req_err, 1);
	/* again, to see the statuses */
	q = fresh(NULL);
	tt_post_recv(q->peer, 7, &rs, 1);
	tt_post_send(q, &wr);
	expect_send_status(q, IBV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(tt_wait_cqes(&tt, q->peer->rcq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
	CHECK_EQ(wc.wr_id, 7);
	only_event(IBV_EVENT_QP_ACCESS_ERR);	/* a length error */
	printf("recv_too_small: ok\n");
}

/* Local errors: nothing goes on the wire, the WQE completes in error, the QP goes to ERR. */
static void local_errors(void)
{
	struct tt_qp *q = fresh(NULL);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	void *huge;
	struct droce_mr *hmr;
	struct ibv_wc wc[2];

	/* a good WQE first: it completes before the bad one */
	wr_rdma(&wr, &sge, IBV_WR_RDMA_WRITE, 100, (uintptr_t)rbuf, rmr->rkey);
	wr.wr_id = 41;
	tt_post_send(q, &wr);
	wr_rdma(&wr, &sge, IBV_WR_SEND, 100, 0, 0);
	sge.lkey ^= 0x1000;
	tt_post_send(q, &wr);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 2, wc, NS_LIMIT), 2);
	CHECK_EQ(wc[0].wr_id, 41);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK_EQ(wc[1].wr_id, 42);
	CHECK_EQ(wc[1].status, IBV_WC_LOC_PROT_ERR);
	CHECK_EQ(tt_state(q), IBV_QPS_ERR);
	CHECK_EQ(tap_count(0, DROCE_OP_RC_SEND_ONLY, -1), 0);
	printf("local_bad_lkey: ok\n");

	q = fresh(NULL);
	wr_rdma(&wr, &sge, IBV_WR_RDMA_READ, 100, (uintptr_t)rbuf, rmr->rkey);
	sge.addr = (uintptr_t)lbuf + SZ - 50;	/* past the local MR */
	tt_post_send(q, &wr);
	expect_send_status(q, IBV_WC_LOC_PROT_ERR);
	CHECK_EQ(tap_n, 0);
	printf("local_sge_out_of_bounds: ok\n");

	/* IBA 9.4: messages are at most 2^31 bytes. Reserve address space only. */
	huge = mmap(NULL, 3ull << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0);
	CHECK(huge != MAP_FAILED);
	hmr = tt_mr(&tt, 0, huge, 3ull << 30, IBV_ACCESS_LOCAL_WRITE);
	q = fresh(NULL);
	{
		struct ibv_sge two[2] = {
			{ (uintptr_t)huge, 1u << 31, hmr->lkey },
			{ (uintptr_t)huge + (1u << 31), 1, hmr->lkey },
		};

		wr_rdma(&wr, &sge, IBV_WR_SEND, 0, 0, 0);
		wr.sg_list = two;
		wr.num_sge = 2;
		tt_post_send(q, &wr);
	}
	expect_send_status(q, IBV_WC_LOC_LEN_ERR);
	CHECK_EQ(tap_n, 0);
	CHECK_EQ(droce_dereg_mr(hmr), 0);
	munmap(huge, 3ull << 30);
	printf("local_length_over_2g: ok\n");
}

/* RNR: no receive WQE -> RNR NAK with min_rnr_timer; retried after the IBTA table time;
 * recovers once a receive is posted. */
struct rnr_arg {
	struct tt_qp *q;
	unsigned int naks;
};

static bool pred_rnr_naks(struct tt *t, void *arg)
{
	struct rnr_arg *a = arg;

	return t->cnt[1].rnr_nak_sent >= a->naks;
}

static void rnr(void)
{
	struct tt_opts o;
	struct tt_qp *q;
	struct ibv_send_wr wr;
	struct ibv_sge sge, rs = { (uintptr_t)rbuf, SZ, rmr->lkey };
	struct ibv_wc wc;
	struct rnr_arg a;
	const struct tap_rec *nak, *again;

	tt_opts_default(&o);
	o.min_rnr_timer = 14;	/* 1.28 ms */
	q = fresh(&o);
	tt_fill(lbuf, 5000, 9);
	wr_rdma(&wr, &sge, IBV_WR_SEND, 5000, 0, 0);
	tt_post_send(q, &wr);
	a.q = q;
	a.naks = 3;
	CHECK(tt_run(&tt, pred_rnr_naks, &a, NS_LIMIT));
	/* RNR NAK for the first packet, PSN = sq_psn, with our timer code */
	nak = tap_find(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_RNR_NAK | 14, 0);
	CHECK(nak != NULL);
	CHECK_EQ(nak->psn, o.psn[0]);
	/* the requester waited 1.28 ms (IBTA table, code 14) before sending SEND_FIRST again */
	again = tap_find(0, DROCE_OP_RC_SEND_FIRST, -1, 1);
	CHECK(again != NULL);
	CHECK_EQ(again->now - nak->now, tt_ns_to_ticks(1280000));
	CHECK_EQ(again->psn, o.psn[0]);
	/* the later packets of the message were out of sequence: one NAK per gap at most */
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR), 0);
	CHECK(tt.cnt[0].rnr_nak_rcvd >= 2);	/* the third may still be on the wire */
	tt_post_recv(q->peer, 5, &rs, 1);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(tt_wait_cqes(&tt, q->peer->rcq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 5000);
	CHECK(memcmp(lbuf, rbuf, 5000) == 0);
	CHECK_EQ(tt_state(q), IBV_QPS_RTS);
	printf("rnr_then_recv_posted_recovers: ok\n");

	/* rnr_retry = 2: the third RNR NAK ends it */
	o.rnr_retry = 2;
	o.min_rnr_timer = 0;	/* 655.36 ms */
	q = fresh(&o);
	tt_post_send(q, &wr);
	expect_send_status(q, IBV_WC_RNR_RETRY_EXC_ERR);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_RNR_NAK | 0), 3);
	nak = tap_find(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_RNR_NAK, 0);
	again = tap_find(0, DROCE_OP_RC_SEND_FIRST, -1, 1);
	CHECK_EQ(again->now - nak->now, tt_ns_to_ticks(655360000));
	CHECK_EQ(tt.cnt[0].rnr_retry_exceeded, 1);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_RTS);	/* the responder is fine */
	printf("rnr_retry_exhausted: ok\n");
}

/* A silent peer: retry_cnt retransmissions, each one timeout apart, then RETRY_EXC_ERR. */
static void retry_exhausted(void)
{
	struct tt_opts o;
	struct tt_qp *q;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint64_t rto = tt_ns_to_ticks(4096ull << 10), t0;
	unsigned int i;

	tt_opts_default(&o);
	o.timeout = 10;		/* 4.194304 ms */
	o.retry_cnt = 3;
	q = fresh(&o);
	tt.blackhole[1] = true;
	wr_rdma(&wr, &sge, IBV_WR_RDMA_WRITE, 100, (uintptr_t)rbuf, rmr->rkey);
	t0 = tt.env.now;
	tt_post_send(q, &wr);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, 100000000000ull), 1);
	CHECK_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
	CHECK_EQ(tt.env.now - t0, 4 * rto);
	CHECK_EQ(tap_count(0, DROCE_OP_RC_RDMA_WRITE_ONLY, -1), 4);
	for (i = 0; i < 4; i++)
		CHECK_EQ(tap_find(0, DROCE_OP_RC_RDMA_WRITE_ONLY, -1, i)->now - t0, i * rto);
	CHECK_EQ(tt.cnt[0].retransmits, 3);
	CHECK_EQ(tt.cnt[0].retry_exceeded, 1);
	CHECK_EQ(tt_state(q), IBV_QPS_ERR);
	tt.blackhole[1] = false;
	printf("retry_exhausted_silent_peer: ok\n");

	/* timeout 0: the timer never fires (infinite) */
	o.timeout = 0;
	q = fresh(&o);
	tt.blackhole[1] = true;
	tt_post_send(q, &wr);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, 100000000000ull), 0);
	CHECK_EQ(transport_deadline(q->t), UINT64_MAX);
	CHECK_EQ(tap_count(0, -1, -1), 1);
	tt.blackhole[1] = false;
	printf("timeout_zero_never_retries: ok\n");
}

/* A response from the responder of @p q's pair (side 1) to @p q. */
static void respond(struct tt_qp *q, uint8_t opcode, uint32_t psn, uint32_t len)
{
	tt_inject(&tt, 0, q->qp->qp_num, opcode, psn, len);
}

/* A fresh pair whose responder hears nothing; @p op of @p len posted and sent (twice with
 * @p two: the second to be flushed); @return the requester QP. */
static struct tt_qp *sent_unanswered(enum ibv_wr_opcode op, uint32_t len, bool two)
{
	struct tt_qp *q = fresh(NULL);
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	tt.blackhole[1] = true;
	wr_rdma(&wr, &sge, op, len, (uintptr_t)rbuf, rmr->rkey);
	if (op == DROCE_WR_FLUSH)
		droce_wr_set_flush(&wr, fmr->rkey, (uintptr_t)rbuf, len, DROCE_FLUSH_GLOBAL,
				   DROCE_FLUSH_RANGE);
	tt_post_send(q, &wr);
	if (two) {
		wr.wr_id = 43;
		tt_post_send(q, &wr);
	}
	tt_run(&tt, NULL, NULL, 1000000);	/* 1 ms: sent, no timeout yet (67 ms) */
	return q;
}

/*
 * Responses that cannot be the one for their PSN (IBA 9.9.2 "bad response"; rxe's
 * COMPST_ERROR): the head WQE completes with IBV_WC_BAD_RESP_ERR, the WQEs after it are
 * flushed, the QP is in ERR. A response past a lost one is not bad: it is an implied NAK.
 */
static void bad_responses(void)
{
	uint32_t p = 0xfffff0;	/* tt_opts_default()'s first send PSN: 3 packets wrap */
	struct ibv_wc wc;
	struct tt_qp *q;

	/* a READ response at the PSN of a WRITE; the WRITE after it flushed */
	q = sent_unanswered(IBV_WR_RDMA_WRITE, 100, true);
	respond(q, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, p, 100);
	expect_send_status(q, IBV_WC_BAD_RESP_ERR);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.wr_id, 43);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(tt.cnt[0].rx_bad_resp, 1);
	/* an atomic ACK at the second PSN of a READ */
	q = sent_unanswered(IBV_WR_RDMA_READ, 3000, false);
	respond(q, DROCE_OP_RC_ATOMIC_ACKNOWLEDGE, p + 1, 0);
	expect_send_status(q, IBV_WC_BAD_RESP_ERR);
	CHECK_EQ(tt.cnt[0].rx_bad_resp, 1);
	/* the READ's first response, 512 bytes instead of the path MTU's 1024 */
	q = sent_unanswered(IBV_WR_RDMA_READ, 3000, false);
	respond(q, DROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, p, 512);
	expect_send_status(q, IBV_WC_BAD_RESP_ERR);
	/* its last PSN's response as a MIDDLE */
	q = sent_unanswered(IBV_WR_RDMA_READ, 3000, false);
	respond(q, DROCE_OP_RC_RDMA_READ_RESPONSE_FIRST, p, 1024);
	respond(q, DROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, p + 1, 1024);
	respond(q, DROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, p + 2, 952);
	expect_send_status(q, IBV_WC_BAD_RESP_ERR);
	CHECK_EQ(tt.cnt[0].rx_bad_resp, 1);
	/* a FLUSH answered by a READ response with payload, or by an atomic ACK */
	q = sent_unanswered(DROCE_WR_FLUSH, 100, false);
	respond(q, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, p, 8);
	expect_send_status(q, IBV_WC_BAD_RESP_ERR);
	CHECK_EQ(tt.cnt[0].rx_bad_resp, 1);
	q = sent_unanswered(DROCE_WR_FLUSH, 100, false);
	respond(q, DROCE_OP_RC_ATOMIC_ACKNOWLEDGE, p, 0);
	expect_send_status(q, IBV_WC_BAD_RESP_ERR);
	CHECK_EQ(tt.cnt[0].rx_bad_resp, 1);
	/* not bad: the READ's second response with its first lost, then the responder heard
	 * again: an implied NAK asks from the first PSN and the READ completes */
	q = sent_unanswered(IBV_WR_RDMA_READ, 3000, false);
	tt.blackhole[1] = false;
	respond(q, DROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, p + 1, 1024);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(tt_state(q), IBV_QPS_RTS);
	CHECK_EQ(tt.cnt[0].rx_bad_resp, 0);
	CHECK_EQ(tt.cnt[0].implied_nak, 1);
	printf("bad_responses_bad_resp_err_flush_qp_err: ok\n");
}

/* A request built by hand from @p q (side 0) to its peer at PSN @p psn. */
static void inject_req(struct tt_qp *q, struct droce_hdr_fields *h, uint32_t psn, uint32_t len)
{
	h->dqpn = q->peer->qp->qp_num;
	h->psn = psn;
	h->ackreq = 1;
	tt_inject_h(&tt, 1, h, len);
}

/* The responder's class C error on a hand-built request: one NAK @p code (invalid request,
 * remote access error) at its PSN, counted, memory untouched, the QP in ERR with the event
 * @p ev alone. */
static void expect_nak(struct tt_qp *q, uint32_t psn, uint8_t code, int ev)
{
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | code), 1);
	CHECK_EQ(tap_count(1, -1, -1), 1);
	CHECK_EQ(tap_find(1, DROCE_OP_RC_ACKNOWLEDGE, -1, 0)->psn, psn & 0xffffff);
	CHECK_EQ(rbuf[4], 0x5a);
	if (code == DROCE_NAK_REM_ACCESS)
		CHECK_EQ(tt.cnt[1].access_err, 1);
	else
		CHECK_EQ(tt.cnt[1].inv_req_err, 1);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_ERR);
	only_event(ev);
}

static void expect_inv_req(struct tt_qp *q, uint32_t psn, int ev)
{
	expect_nak(q, psn, DROCE_NAK_INV_REQ, ev);
}

/* IBA 9.4.5: a misaligned atomic is NAKed invalid request (rxe's ERR_MISALIGNED_ATOMIC),
 * and it is a Local Access Violation WQ error: IBV_EVENT_QP_ACCESS_ERR. The same for an
 * ATOMIC_WRITE (8 bytes of payload). */
static void misaligned_atomic(void)
{
	struct tt_opts o;
	struct tt_qp *q;
	struct droce_hdr_fields h;
	int aw;

	for (aw = 0; aw < 2; aw++) {
		tt_opts_default(&o);
		q = fresh(&o);
		memset(rbuf, 0x5a, 64);
		memset(&h, 0, sizeof(h));
		if (aw) {
			h.opcode = DROCE_OP_RC_ATOMIC_WRITE;
			h.reth.va = (uintptr_t)rbuf + 4;
			h.reth.rkey = rmr->rkey;
			h.reth.len = 8;
		} else {
			h.opcode = DROCE_OP_RC_COMPARE_SWAP;
			h.atomic.va = (uintptr_t)rbuf + 4;
			h.atomic.rkey = rmr->rkey;
			h.atomic.cmp = 0x5a5a5a5a5a5a5a5aull;
			h.atomic.swap_add = 1;
		}
		inject_req(q, &h, o.psn[0], aw ? 8 : 0);
		expect_inv_req(q, o.psn[0], IBV_EVENT_QP_ACCESS_ERR);
		CHECK_EQ(tt.cnt[0].rx_resp_dropped, 1);	/* a NAK for nothing we sent */
	}
	printf("misaligned_atomic_and_atomic_write_nak_inv_req_qp_access_err: ok\n");
}

/*
 * RDMA ATOMIC_WRITE at the responder: the 8 bytes land, the answer is an RDMA READ response
 * ONLY without payload at the request's PSN (as rxe's); the same request again (its PSN: a
 * retry) is answered again and not executed again: memory written since stays.
 */
static void atomic_write(void)
{
	struct droce_hdr_fields h;
	struct tt_opts o;
	struct tt_qp *q;
	unsigned int i;

	tt_opts_default(&o);
	q = fresh(&o);
	memset(rbuf, 0x5a, 64);
	memset(&h, 0, sizeof(h));
	h.opcode = DROCE_OP_RC_ATOMIC_WRITE;
	h.reth.va = (uintptr_t)rbuf + 8;
	h.reth.rkey = rmr->rkey;
	h.reth.len = 8;
	inject_req(q, &h, o.psn[0], 8);		/* 8 zero bytes */
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	for (i = 0; i < 64; i++)
		CHECK_EQ(rbuf[i], i >= 8 && i < 16 ? 0 : 0x5a);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0x1f), 1);
	CHECK_EQ(tap_count(1, -1, -1), 1);
	CHECK_EQ(tap_find(1, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, -1, 0)->psn, o.psn[0] & 0xffffff);
	CHECK_EQ(tap_find(1, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, -1, 0)->len, 0);
	memset(rbuf + 8, 0x33, 8);		/* written since by someone else */
	inject_req(q, &h, o.psn[0], 8);		/* the retry */
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	for (i = 8; i < 16; i++)
		CHECK_EQ(rbuf[i], 0x33);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0x1f), 2);
	CHECK_EQ(tt.cnt[1].duplicate_request, 1);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_RTS);
	printf("atomic_write_read_response_only_duplicate_not_rewritten: ok\n");
}

/* A FLUSH built by hand from @p q to its peer: placement @p plt, selectivity @p sel, RETH. */
static void inject_flush(struct tt_qp *q, uint32_t psn, uint8_t plt, uint8_t sel, uint64_t va,
			 uint32_t len, uint32_t rkey)
{
	struct droce_hdr_fields h;

	memset(&h, 0, sizeof(h));
	h.opcode = DROCE_OP_RC_FLUSH;
	h.feth.plt = plt;
	h.feth.sel = sel;
	h.reth.va = va;
	h.reth.rkey = rkey;
	h.reth.len = len;
	inject_req(q, &h, psn, 0);
}

/*
 * RDMA FLUSH at the responder (fmr: rbuf's first 4 KiB with FLUSH_GLOBAL; gp: the next 4 KiB
 * with FLUSH_GLOBAL and FLUSH_PERSISTENT): a range inside the MR, an empty range at its end,
 * the whole MR (selectivity MR: VA and length outside it are ignored) and a persistent +
 * global range are each answered with an RDMA READ response ONLY without payload at their
 * PSN, nothing else, memory untouched, the QP in RTS; a retry of one (its PSN again) is
 * answered again without being checked or executed again: its MR was deregistered since
 * (as rxe's replay).
 */
static void flush_responder(void)
{
	struct droce_mr *gp = tt_mr(&tt, 1, rbuf + 4096, 4096,
				    DROCE_ACCESS_FLUSH_GLOBAL | DROCE_ACCESS_FLUSH_PERSISTENT);
	uint64_t base = (uintptr_t)rbuf;
	const struct tap_rec *r;
	struct tt_opts o;
	struct tt_qp *q;
	uint32_t gp_rkey;
	unsigned int i;

	tt_opts_default(&o);
	q = fresh(&o);
	memset(rbuf, 0x5a, 8192);
	inject_flush(q, o.psn[0], DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE, base + 8, 100, fmr->rkey);
	inject_flush(q, droce_psn_add(o.psn[0], 1), DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE,
		     base + 4096, 0, fmr->rkey);
	inject_flush(q, droce_psn_add(o.psn[0], 2), DROCE_FLUSH_GLOBAL, DROCE_FLUSH_MR, 0,
		     0xffffffffu, fmr->rkey);
	inject_flush(q, droce_psn_add(o.psn[0], 3), DROCE_FLUSH_GLOBAL | DROCE_FLUSH_PERSISTENT,
		     DROCE_FLUSH_RANGE, base + 4096, 4096, gp->rkey);
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0x1f), 4);
	CHECK_EQ(tap_count(1, -1, -1), 4);
	for (i = 0; i < 4; i++) {
		r = tap_find(1, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, -1, i);
		CHECK_EQ(r->psn, droce_psn_add(o.psn[0], i));
		CHECK_EQ(r->len, 0);
	}
	for (i = 0; i < 8192; i++)
		CHECK_EQ(rbuf[i], 0x5a);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_RTS);
	CHECK_EQ(tt.cnt[1].access_err + tt.cnt[1].inv_req_err, 0);
	gp_rkey = gp->rkey;
	CHECK_EQ(droce_dereg_mr(gp), 0);
	inject_flush(q, droce_psn_add(o.psn[0], 3), DROCE_FLUSH_GLOBAL | DROCE_FLUSH_PERSISTENT,
		     DROCE_FLUSH_RANGE, base + 4096, 4096, gp_rkey);	/* the retry */
	tt_run(&tt, NULL, NULL, NS_LIMIT);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0x1f), 5);
	CHECK_EQ(tap_find(1, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, -1, 4)->psn,
		 droce_psn_add(o.psn[0], 3));
	CHECK_EQ(tt.cnt[1].duplicate_request, 1);
	CHECK_EQ(tt.cnt[1].rx_dup_dropped, 0);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_RTS);
	printf("flush_range_empty_mr_level_persistent_read_response_only_retry_replayed: ok\n");
}

/* A FLUSH the responder refuses: NAK @p code with event @p ev, the QP in ERR. */
static void flush_refused(const char *what, uint8_t plt, uint8_t sel, uint64_t va, uint32_t len,
			  uint32_t rkey, uint8_t code, int ev, uint32_t max_dest_rd_atomic)
{
	struct tt_opts o;
	struct tt_qp *q;

	tt_opts_default(&o);
	o.max_dest_rd_atomic[1] = max_dest_rd_atomic;
	q = fresh(&o);
	memset(rbuf, 0x5a, 64);
	inject_flush(q, o.psn[0], plt, sel, va, len, rkey);
	expect_nak(q, o.psn[0], code, ev);
	printf("%s: ok\n", what);
}

/* The responder's FLUSH rules (rxe's check_rkey() for FLUSH, and droce's stricter FETH check):
 * the MR needs the FLUSH access flag of every placement type named, the range must lie in it;
 * an empty or unknown placement type or an unknown selectivity level is malformed; a FLUSH
 * takes a responder resource. */
static void flush_errors(void)
{
	uint64_t base = (uintptr_t)rbuf;

	flush_refused("flush_mr_without_flush_access_nak_rem_access", DROCE_FLUSH_GLOBAL,
		      DROCE_FLUSH_RANGE, base, 64, rmr->rkey, DROCE_NAK_REM_ACCESS,
		      IBV_EVENT_QP_ACCESS_ERR, 16);
	flush_refused("flush_mr_level_without_flush_access_nak_rem_access", DROCE_FLUSH_GLOBAL,
		      DROCE_FLUSH_MR, base, 64, rmr->rkey, DROCE_NAK_REM_ACCESS,
		      IBV_EVENT_QP_ACCESS_ERR, 16);
	flush_refused("flush_persistent_to_global_only_mr_nak_rem_access",
		      DROCE_FLUSH_PERSISTENT, DROCE_FLUSH_RANGE, base, 64, fmr->rkey,
		      DROCE_NAK_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR, 16);
	flush_refused("flush_range_beyond_mr_nak_rem_access", DROCE_FLUSH_GLOBAL,
		      DROCE_FLUSH_RANGE, base + 4000, 200, fmr->rkey, DROCE_NAK_REM_ACCESS,
		      IBV_EVENT_QP_ACCESS_ERR, 16);
	flush_refused("flush_range_before_mr_nak_rem_access", DROCE_FLUSH_GLOBAL,
		      DROCE_FLUSH_RANGE, base - 8, 0, fmr->rkey, DROCE_NAK_REM_ACCESS,
		      IBV_EVENT_QP_ACCESS_ERR, 16);
	flush_refused("flush_no_placement_type_nak_inv_req_qp_req_err", 0, DROCE_FLUSH_RANGE,
		      base, 64, fmr->rkey, DROCE_NAK_INV_REQ, IBV_EVENT_QP_REQ_ERR, 16);
	flush_refused("flush_unknown_placement_type_nak_inv_req_qp_req_err", 4,
		      DROCE_FLUSH_RANGE, base, 64, fmr->rkey, DROCE_NAK_INV_REQ,
		      IBV_EVENT_QP_REQ_ERR, 16);
	flush_refused("flush_unknown_selectivity_nak_inv_req_qp_req_err", DROCE_FLUSH_GLOBAL, 2,
		      base, 64, fmr->rkey, DROCE_NAK_INV_REQ, IBV_EVENT_QP_REQ_ERR, 16);
	flush_refused("flush_without_responder_resources_nak_inv_req_qp_access_err",
		      DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE, base, 64, fmr->rkey,
		      DROCE_NAK_INV_REQ, IBV_EVENT_QP_ACCESS_ERR, 0);
}

/*
 * The FLUSH requester and completer: a WRITE then two FLUSHes (a range, the whole MR) with
 * max_rd_atomic 1. On the wire: the FLUSH requests carry FETH and RETH as posted and no
 * payload, follow the WRITE, and the second leaves only after the first's answer (a responder
 * resource each); each completes DROCE_WC_FLUSH with byte_len = its length, in order, after
 * the WRITE's data landed. A requester with max_rd_atomic 0 fails a FLUSH locally
 * (IBV_WC_LOC_QP_OP_ERR), as a READ.
 */
static void flush_requester(void)
{
	struct ibv_send_wr wr[3];
	const struct tap_rec *f[2];
	struct ibv_wc wc[3];
	struct ibv_sge sge;
	struct tt_opts o;
	struct tt_qp *q;
	unsigned int i, resp_at = 0, f1_at = 0;

	tt_opts_default(&o);
	o.max_rd_atomic[0] = 1;
	q = fresh(&o);
	tt_fill(lbuf, 3000, 7);
	memset(rbuf, 0, 3000);
	wr_rdma(&wr[0], &sge, IBV_WR_RDMA_WRITE, 3000, (uintptr_t)rbuf, rmr->rkey);
	wr[0].wr_id = 1;
	wr[0].next = &wr[1];
	memset(&wr[1], 0, sizeof(wr[1]));
	wr[1].wr_id = 2;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	droce_wr_set_flush(&wr[1], fmr->rkey, (uintptr_t)rbuf + 16, 3000, DROCE_FLUSH_GLOBAL,
			   DROCE_FLUSH_RANGE);
	wr[1].next = &wr[2];
	wr[2] = wr[1];
	wr[2].wr_id = 3;
	wr[2].next = NULL;
	droce_wr_set_flush(&wr[2], fmr->rkey, 0, 0, DROCE_FLUSH_GLOBAL, DROCE_FLUSH_MR);
	tt_post_send(q, &wr[0]);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 3, wc, NS_LIMIT), 3);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(wc[i].wr_id, i + 1);
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		CHECK_EQ(wc[i].opcode, i == 0 ? IBV_WC_RDMA_WRITE : DROCE_WC_FLUSH);
	}
	CHECK_EQ(wc[1].byte_len, 3000);
	CHECK_EQ(wc[2].byte_len, 0);
	CHECK_EQ(memcmp(lbuf, rbuf, 3000), 0);
	CHECK_EQ(tap_count(0, DROCE_OP_RC_FLUSH, -1), 2);
	for (i = 0; i < 2; i++) {
		f[i] = tap_find(0, DROCE_OP_RC_FLUSH, -1, i);
		CHECK_EQ(f[i]->len, 0);
		CHECK_EQ(f[i]->rkey, fmr->rkey);
		CHECK_EQ(f[i]->plt, DROCE_FLUSH_GLOBAL);
		CHECK_EQ(f[i]->psn, droce_psn_add(o.psn[0], 3 + i));	/* after the WRITE's 3 */
	}
	CHECK(f[0]->va == (uintptr_t)rbuf + 16 && f[0]->dmalen == 3000 &&
	      f[0]->sel == DROCE_FLUSH_RANGE);
	CHECK(f[1]->va == 0 && f[1]->dmalen == 0 && f[1]->sel == DROCE_FLUSH_MR);
	for (i = 0; i < tap_n; i++) {
		if (tap_log[i].from == 1 && tap_log[i].opcode == DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY &&
		    resp_at == 0)
			resp_at = i;
		if (&tap_log[i] == f[1])
			f1_at = i;
	}
	CHECK(resp_at != 0 && f1_at > resp_at);	/* max_rd_atomic 1: after the first's answer */
	CHECK_EQ(tt_state(q), IBV_QPS_RTS);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_RTS);

	tt_opts_default(&o);
	o.max_rd_atomic[0] = 0;
	q = fresh(&o);
	memset(&wr[1], 0, sizeof(wr[1]));
	wr[1].wr_id = 42;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	droce_wr_set_flush(&wr[1], fmr->rkey, (uintptr_t)rbuf, 8, DROCE_FLUSH_GLOBAL,
			   DROCE_FLUSH_RANGE);
	tt_post_send(q, &wr[1]);
	expect_send_status(q, IBV_WC_LOC_QP_OP_ERR);
	CHECK_EQ(tap_count(0, -1, -1), 0);
	printf("flush_requester_after_write_feth_reth_one_resource_each_wc_flush: ok\n");
}

/*
 * Length errors are NAKed invalid request and raise IBV_EVENT_QP_ACCESS_ERR (the verbs
 * manual's list); a receive WQE the message consumed completes REM_INV_REQ_ERR (rxe's
 * ERR_LENGTH): a WRITE whose payload is longer than its RETH length, the same with
 * immediate, and a READ to a responder without READ/atomic resources (rxe's
 * ERR_TOO_MANY_RDMA_ATM_REQ).
 */
static void length_errors(void)
{
	struct ibv_sge rs = { (uintptr_t)rbuf + 4096, 64, rmr->lkey };
	struct droce_hdr_fields h;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct tt_opts o;
	struct tt_qp *q;
	int imm;

	for (imm = 0; imm < 2; imm++) {
		tt_opts_default(&o);
		q = fresh(&o);
		memset(rbuf, 0x5a, 64);
		if (imm)
			tt_post_recv(q->peer, 9, &rs, 1);
		memset(&h, 0, sizeof(h));
		h.opcode = imm ? DROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				 DROCE_OP_RC_RDMA_WRITE_ONLY;
		h.reth.va = (uintptr_t)rbuf;
		h.reth.rkey = rmr->rkey;
		h.reth.len = 8;
		inject_req(q, &h, o.psn[0], 16);
		expect_inv_req(q, o.psn[0], IBV_EVENT_QP_ACCESS_ERR);
		if (imm) {
			CHECK_EQ(tt_wait_cqes(&tt, q->peer->rcq, 1, &wc, NS_LIMIT), 1);
			CHECK_EQ(wc.wr_id, 9);
			CHECK_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR);
		}
	}
	printf("write_payload_beyond_reth_len_nak_inv_req_qp_access_err: ok\n");

	tt_opts_default(&o);
	o.max_dest_rd_atomic[1] = 0;
	q = fresh(&o);
	wr_rdma(&wr, &sge, IBV_WR_RDMA_READ, 100, (uintptr_t)rbuf, rmr->rkey);
	tt_post_send(q, &wr);
	expect_send_status(q, IBV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_INV_REQ), 1);
	CHECK_EQ(tt_state(q->peer), IBV_QPS_ERR);
	only_event(IBV_EVENT_QP_ACCESS_ERR);
	printf("read_without_responder_resources_nak_inv_req_qp_access_err: ok\n");
}

/*
 * SEND with invalidate naming a plain MR of the responder, or no MR: droce has no memory
 * window or fast-registration MR, so nothing may be invalidated, and it does what rxe does
 * (rxe_resp.c: execute() places the data, invalidate_rkey() fails, class J): the message is
 * ACKed (no NAK), so the sender's WR completes successfully and its QP stays in RTS; the
 * receive WR completes IBV_WC_REM_INV_REQ_ERR without IBV_WC_WITH_INV, the responder goes to
 * ERR (event IBV_EVENT_QP_REQ_ERR) and serves nothing more: the sender's next SEND runs out
 * of retries. The MR stays valid.
 */
static void send_with_inv_nothing_to_invalidate(void)
{
	struct ibv_sge rs = { (uintptr_t)rbuf, 4096, rmr->lkey };
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc[2];
	struct tt_opts o;
	struct tt_qp *q;
	int k;

	for (k = 0; k < 2; k++) {
		tt_opts_default(&o);
		o.retry_cnt = 1;
		q = fresh(&o);
		tt_fill(lbuf, 3000, 5);
		memset(rbuf, 0, 4096);
		tt_post_recv(q->peer, 7, &rs, 1);
		tt_post_recv(q->peer, 8, &rs, 1);
		wr_rdma(&wr, &sge, IBV_WR_SEND_WITH_INV, 3000, 0, 0);
		wr.invalidate_rkey = k == 0 ? rmr->rkey : 0x5eed0001;
		tt_post_send(q, &wr);
		CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, wc, NS_LIMIT), 1);
		CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
		CHECK_EQ(wc[0].opcode, IBV_WC_SEND);
		CHECK_EQ(tt_wait_cqes(&tt, q->peer->rcq, 2, wc, NS_LIMIT), 2);
		CHECK_EQ(wc[0].wr_id, 7);
		CHECK_EQ(wc[0].status, IBV_WC_REM_INV_REQ_ERR);
		CHECK_EQ(wc[0].wc_flags & IBV_WC_WITH_INV, 0);
		CHECK_EQ(wc[1].wr_id, 8);
		CHECK_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
		CHECK(memcmp(rbuf, lbuf, 3000) == 0);	/* placed before the invalidation */
		CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, -1), 1);
		CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID), 1);
		CHECK_EQ(tap_find(1, DROCE_OP_RC_ACKNOWLEDGE, -1, 0)->psn, (o.psn[0] + 2) & 0xffffff);
		CHECK_EQ(tt_state(q), IBV_QPS_RTS);
		CHECK_EQ(tt_state(q->peer), IBV_QPS_ERR);
		only_event(IBV_EVENT_QP_REQ_ERR);
		wr_rdma(&wr, &sge, IBV_WR_SEND, 10, 0, 0);
		tt_post_send(q, &wr);
		expect_send_status(q, IBV_WC_RETRY_EXC_ERR);
	}
	/* the MR named is still registered and usable */
	q = fresh(NULL);
	tt_fill(lbuf, 100, 6);
	wr_rdma(&wr, &sge, IBV_WR_RDMA_WRITE, 100, (uintptr_t)rbuf + 8192, rmr->rkey);
	tt_post_send(q, &wr);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, wc, NS_LIMIT), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK(memcmp(rbuf + 8192, lbuf, 100) == 0);
	printf("send_with_inv_plain_mr_or_none_acked_recv_rem_inv_req_err_qp_err: ok\n");
}

/*
 * A READ response lost in the middle: the next one, past the gap, is an implied NAK; the READ
 * is asked again at once for what is missing (its VA and length moved on), not after the
 * local ACK timeout (19 here: 2.1 s, as Linux's rdma_cm sets over RoCE), and the responses
 * still in flight behind the gap start no second retry. Then an atomic ACK past a READ whose
 * last response was lost: the READ's rest and the atomic are asked again, and the atomic,
 * replayed by the responder, runs once.
 */
static void read_response_lost_implied_nak(void)
{
	const uint32_t mtu = 1024, len = 8 * mtu;
	uint64_t rto = tt_ns_to_ticks(4096ull << 19), t0;
	const struct tap_rec *rq;
	struct ibv_send_wr wr, fa;
	struct ibv_sge sge, fsge;
	struct ibv_wc wc[2];
	struct tt_opts o;
	struct tt_qp *q;
	uint64_t v;
	uint32_t i;

	tt_opts_default(&o);
	o.timeout = 19;
	q = fresh(&o);
	for (i = 0; i < len; i++)
		rbuf[i] = (uint8_t)(i * 7 + 1);
	memset(lbuf, 0, SZ);
	wr_rdma(&wr, &sge, IBV_WR_RDMA_READ, len, (uintptr_t)rbuf, rmr->rkey);
	tt.drop_psn[1] = o.psn[0] + 2;	/* the third of the eight responses */
	t0 = tt.env.now;
	tt_post_send(q, &wr);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, wc, NS_LIMIT), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK(tt.env.now - t0 < rto / 1000);
	CHECK_EQ(memcmp(lbuf, rbuf, len), 0);
	CHECK_EQ(tap_count(0, DROCE_OP_RC_RDMA_READ_REQUEST, -1), 2);
	rq = tap_find(0, DROCE_OP_RC_RDMA_READ_REQUEST, -1, 1);
	CHECK_EQ(rq->psn, o.psn[0] + 2);
	CHECK_EQ(rq->va, (uintptr_t)rbuf + 2 * mtu);
	CHECK_EQ(rq->dmalen, len - 2 * mtu);
	CHECK_EQ(tap_count(1, -1, -1), 8 + 6);	/* all eight, then the six asked again */
	CHECK_EQ(tt.cnt[0].implied_nak, 1);
	CHECK_EQ(tt.cnt[0].rto_expired, 0);
	CHECK_EQ(tt.cnt[0].retransmits, 1);
	CHECK_EQ(tt.cnt[0].rx_resp_dropped, 5);	/* the five behind the gap */
	CHECK_EQ(tt.cnt[1].duplicate_request, 1);
	CHECK_EQ(tt_state(q), IBV_QPS_RTS);
	printf("read_response_lost_implied_nak: ok\n");

	/* READ (4 responses, the last lost), then FETCH_AND_ADD: its ACK is the implied NAK. */
	q = fresh(&o);
	memset(lbuf, 0, SZ);
	v = 5;
	memcpy(rbuf + SZ - 8, &v, 8);
	wr_rdma(&wr, &sge, IBV_WR_RDMA_READ, 4 * mtu, (uintptr_t)rbuf, rmr->rkey);
	wr.send_flags = 0;
	wr_rdma(&fa, &fsge, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, 0, 0);
	fsge.addr = (uintptr_t)lbuf + SZ - 8;
	fa.wr.atomic.remote_addr = (uintptr_t)rbuf + SZ - 8;
	fa.wr.atomic.rkey = rmr->rkey;
	fa.wr.atomic.compare_add = 3;
	wr.next = &fa;
	tt.drop_psn[1] = o.psn[0] + 3;
	t0 = tt.env.now;
	tt_post_send(q, &wr);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, wc, NS_LIMIT), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK(tt.env.now - t0 < rto / 1000);
	CHECK_EQ(memcmp(lbuf, rbuf, 4 * mtu), 0);
	memcpy(&v, lbuf + SZ - 8, 8);
	CHECK_EQ(v, 5);			/* the value before the add */
	memcpy(&v, rbuf + SZ - 8, 8);
	CHECK_EQ(v, 8);			/* added once */
	rq = tap_find(0, DROCE_OP_RC_RDMA_READ_REQUEST, -1, 1);
	CHECK(rq != NULL);
	CHECK_EQ(rq->psn, o.psn[0] + 3);
	CHECK_EQ(rq->dmalen, mtu);
	CHECK_EQ(tap_count(0, DROCE_OP_RC_FETCH_ADD, -1), 2);
	CHECK_EQ(tt.cnt[0].implied_nak, 1);
	CHECK_EQ(tt.cnt[0].rto_expired, 0);
	printf("atomic_ack_past_lost_read_response_implied_nak: ok\n");
}

/* The index in the tap of the first frame from @p from with @p psn after index @p after. */
static unsigned int tap_index(int from, uint32_t psn, unsigned int after)
{
	unsigned int i;

	for (i = after; i < tap_n; i++)
		if (tap_log[i].from == from && tap_log[i].psn == psn)
			return i;
	fprintf(stderr, "no frame from %d with PSN %u after %u\n", from, psn, after);
	exit(1);
}

static bool pred_sent(struct tt *t, void *arg)
{
	RTE_SET_USED(t);
	return tap_count(0, -1, -1) >= *(unsigned int *)arg;
}

/*
 * A retry does not resend the whole window at once (a slow responder would drown in it): a
 * 16-packet WRITE lost entirely is resent after the timeout one packet at a time first, with
 * AckReq, then in windows of 2, 4 and 8 packets (each ending with AckReq, each sent only after
 * the ACK of the one before), then the last; a sequence NAK for the fifth packet resends half
 * of the 12 outstanding (6, AckReq on the sixth), and the other 6 after their ACK.
 */
static void retry_window(void)
{
	static const uint32_t timeout_windows[][2] = { { 0, 1 }, { 1, 2 }, { 3, 4 }, { 7, 8 },
						       { 15, 1 } };
	const uint32_t mtu = 1024, len = 16 * mtu;
	uint64_t rto = tt_ns_to_ticks(4096ull << 14), t0;
	unsigned int sent = 16, at, w, k;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct tt_opts o;
	struct tt_qp *q;
	uint32_t p, psn = 0;

	tt_opts_default(&o);
	p = o.psn[0];
	q = fresh(&o);
	tt_fill(lbuf, len, 3);
	memset(rbuf, 0, len);
	wr_rdma(&wr, &sge, IBV_WR_RDMA_WRITE, len, (uintptr_t)rbuf, rmr->rkey);
	tt.blackhole[1] = true;
	t0 = tt.env.now;
	tt_post_send(q, &wr);
	CHECK(tt_run(&tt, pred_sent, &sent, NS_LIMIT));
	tt.blackhole[1] = false;
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(memcmp(lbuf, rbuf, len), 0);
	CHECK_EQ(tap_count(0, -1, -1), 16 + 16);
	at = 16;
	for (w = 0; w < RTE_DIM(timeout_windows); w++) {
		for (k = 0; k < timeout_windows[w][1]; k++, at++) {
			psn = droce_psn_add(p, timeout_windows[w][0] + k);
			CHECK_EQ(tap_log[at].from, 0);
			CHECK_EQ(tap_log[at].psn, psn);
			CHECK_EQ(tap_log[at].ackreq, k + 1 == timeout_windows[w][1]);
			if (w == 0)
				CHECK(tap_log[at].now - t0 >= rto);
		}
		/* the window's ACK came before anything more was sent */
		at = tap_index(1, psn, at) + 1;
	}
	CHECK_EQ(tt.cnt[0].rto_expired, 1);
	CHECK_EQ(tt.cnt[0].window_cut, 1);
	CHECK_EQ(tt.cnt[0].retransmits, 16);
	printf("retry_window_after_timeout_one_then_doubling: ok\n");

	q = fresh(&o);
	tt_fill(lbuf, len, 4);
	memset(rbuf, 0, len);
	tt.drop_psn[0] = droce_psn_add(p, 4);
	t0 = tt.env.now;
	tt_post_send(q, &wr);
	CHECK_EQ(tt_wait_cqes(&tt, q->scq, 1, &wc, NS_LIMIT), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(memcmp(lbuf, rbuf, len), 0);
	CHECK(tt.env.now - t0 < rto);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR), 1);
	at = tap_index(1, droce_psn_add(p, 4), 0) + 1;	/* the NAK */
	for (k = 4; k < 16; k++, at++) {
		if (k == 10)
			at = tap_index(1, droce_psn_add(p, 9), at) + 1;	/* the ACK of 6 */
		CHECK_EQ(tap_log[at].from, 0);
		CHECK_EQ(tap_log[at].psn, droce_psn_add(p, k));
		CHECK_EQ(tap_log[at].ackreq, k == 9 || k == 15);
	}
	CHECK_EQ(tt.cnt[0].nak_rcvd, 1);
	CHECK_EQ(tt.cnt[0].window_cut, 1);
	CHECK_EQ(tt.cnt[0].rto_expired, 0);
	CHECK_EQ(tt.cnt[0].retransmits, 12);
	printf("retry_window_after_nak_half_then_rest: ok\n");
}

int main(int argc, char **argv)
{
	tt_init(&tt, argc, argv, 2);
	lbuf = aligned_alloc(4096, SZ);
	rbuf = aligned_alloc(4096, SZ);
	CHECK(lbuf != NULL && rbuf != NULL);
	lmr = tt_mr(&tt, 0, lbuf, SZ, all_access);
	rmr = tt_mr(&tt, 1, rbuf, SZ, all_access);
	access_errors();
	qp_access_flags();
	recv_too_small();
	local_errors();
	rnr();
	retry_exhausted();
	read_response_lost_implied_nak();
	retry_window();
	misaligned_atomic();
	atomic_write();
	fmr = tt_mr(&tt, 1, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE | DROCE_ACCESS_FLUSH_GLOBAL);
	flush_responder();
	flush_errors();
	flush_requester();
	length_errors();
	send_with_inv_nothing_to_invalidate();
	bad_responses();
	return 0;
}
