/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce_dereg_mr() under a WR in progress on the copy path (tx_zero_copy = 0), through a
 * lossy link (drops force retransmissions, which are always copied):
 *  1. requester: a 256 KiB WRITE or SEND whose source MR is deregistered while its packets
 *     are being sent. The source is poisoned right after the dereg returns (and freed at once
 *     in an ASan build): no poisoned byte arrives, and the WR completes with IBV_WC_SUCCESS
 *     (every packet was built before the dereg) or IBV_WC_LOC_PROT_ERR, nothing else;
 *  2. responder: a 256 KiB READ whose responder MR is deregistered while the responses are
 *     being sent: no poisoned byte arrives; the READ completes with IBV_WC_SUCCESS or
 *     IBV_WC_REM_ACCESS_ERR (the NAK; IBV_WC_RETRY_EXC_ERR when the lossy link dropped it:
 *     the responder QP is in ERR and answers no retry).
 * Inline, the dereg falls between two engine iterations in the middle of the message (each
 * kind must fail at least once); on an lcore wherever the engine is.
 * argv[1]: "inline" or "lcore" (the INI's engine mode).
 */
#include <unistd.h>

#include "fn.h"

#if defined(__SANITIZE_ADDRESS__)
#define FREE_AT_ONCE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FREE_AT_ONCE 1
#endif
#endif
#ifndef FREE_AT_ONCE
#define FREE_AT_ONCE 0
#endif

enum { LEN = 256 * 1024, ROUNDS = 8, POISON = 0xee };

static struct fn_attr attr;

/* Data bytes are 1..200: never 0 (the target's fill) nor POISON. */
static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(1 + (i * 131 + seed * 7 + (i >> 8)) % 200);
}

/* Every byte of @p got is what was sent or still the target's fill: nothing read late. */
static void check_bytes(const uint8_t *got, const uint8_t *want, bool all)
{
	size_t i;

	for (i = 0; i < LEN; i++) {
		if (got[i] != want[i] && (all || got[i] != 0)) {
			fprintf(stderr, "byte %zu: 0x%02x, want 0x%02x%s\n", i, got[i], want[i],
				got[i] == POISON ? " (poison: read after the dereg)" : "");
			CHECK(false);
		}
	}
}

/* Let the WR get under way: inline, a few iterations (each sends at most a burst per QP);
 * on an lcore, a little time. */
static void advance(unsigned int round)
{
	unsigned int i;

	if (!pair_inline) {
		usleep(100 * (round % 4));
		return;
	}
	for (i = 0; i < 2 + round % 3; i++)
		CHECK(droce_engine_poll(pair_ctx[0]) >= 0);
}

/* Deregister @p m under the engine, poison its memory and (ASan) free it at once. */
static void dereg_poison(struct fn_mem *m)
{
	CHECK_EQ(droce_dereg_mr(m->mr), 0);
	memset(m->buf, POISON, LEN);
	if (FREE_AT_ONCE) {
		free(m->buf);
		m->buf = NULL;
	}
}

/* After an error the QPs are in ERR: a fresh pair for the next round. */
static void renew(struct fn_ep ep[2], enum ibv_wc_status st)
{
	if (st == IBV_WC_SUCCESS)
		return;
	fn_pair_destroy(ep);
	fn_pair(ep, &attr);
}

/* @return true when the WR failed (its memory was deregistered under it). */
static bool send_round(struct fn_ep ep[2], unsigned int round, bool send)
{
	struct fn_mem l, r;
	struct ibv_sge s;
	struct ibv_send_wr w = { .wr_id = round, .sg_list = &s, .num_sge = 1,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint8_t *want = malloc(LEN);
	struct ibv_wc wc;

	CHECK(want != NULL);
	fn_mem_reg(&l, ep[0].pd, LEN, FN_ACCESS_ALL, 0);
	fn_mem_reg(&r, ep[1].pd, LEN, FN_ACCESS_ALL, 0);
	fill(l.buf, LEN, round);
	memcpy(want, l.buf, LEN);
	s = (struct ibv_sge){ (uintptr_t)l.buf, LEN, l.mr->lkey };
	w.opcode = send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
	w.wr.rdma.remote_addr = (uintptr_t)r.buf;
	w.wr.rdma.rkey = r.mr->rkey;
	if (send)
		fn_post_recv(ep[1].qp, round, r.buf, LEN, r.mr->lkey);
	CHECK_EQ(droce_post_send(ep[0].qp, &w, &bad), 0);
	advance(round);
	dereg_poison(&l);
	wc = fn_wait(ep[0].scq);
	if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_LOC_PROT_ERR) {
		fprintf(stderr, "%s round %u: status %d\n", send ? "SEND" : "WRITE", round,
			(int)wc.status);
		CHECK(false);
	}
	if (wc.status == IBV_WC_SUCCESS && send)
		CHECK_EQ(fn_wait(ep[1].rcq).status, IBV_WC_SUCCESS);
	/* After a failed WR, packets the requester sent before the failure may still be on
	 * the lossy link and land in the target: deregistering it quiesces the responder
	 * first, as an application must before it reads what a failed WR targeted. */
	CHECK_EQ(droce_dereg_mr(r.mr), 0);
	check_bytes(r.buf, want, wc.status == IBV_WC_SUCCESS);
	free(l.buf);
	free(r.buf);
	free(want);
	renew(ep, wc.status);
	return wc.status != IBV_WC_SUCCESS;
}

static bool read_round(struct fn_ep ep[2], unsigned int round)
{
	struct fn_mem l, r;
	struct ibv_sge s;
	struct ibv_send_wr w = { .wr_id = round, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint8_t *want = malloc(LEN);
	struct ibv_wc wc;

	CHECK(want != NULL);
	fn_mem_reg(&l, ep[0].pd, LEN, FN_ACCESS_ALL, 0);
	fn_mem_reg(&r, ep[1].pd, LEN, FN_ACCESS_ALL, 0);
	fill(r.buf, LEN, 100 + round);
	memcpy(want, r.buf, LEN);
	s = (struct ibv_sge){ (uintptr_t)l.buf, LEN, l.mr->lkey };
	w.wr.rdma.remote_addr = (uintptr_t)r.buf;
	w.wr.rdma.rkey = r.mr->rkey;
	CHECK_EQ(droce_post_send(ep[0].qp, &w, &bad), 0);
	advance(round + 1);	/* inline: the request's iteration, then responses */
	dereg_poison(&r);
	wc = fn_wait(ep[0].scq);
	if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_REM_ACCESS_ERR &&
	    wc.status != IBV_WC_RETRY_EXC_ERR) {
		fprintf(stderr, "READ round %u: status %d\n", round, (int)wc.status);
		CHECK(false);
	}
	CHECK_EQ(droce_dereg_mr(l.mr), 0);	/* as above: no response lands during the check */
	check_bytes(l.buf, want, wc.status == IBV_WC_SUCCESS);
	if (wc.status != IBV_WC_SUCCESS)	/* the responder's QP went to ERR */
		CHECK_EQ(fn_state(ep[1].qp), IBV_QPS_ERR);
	free(r.buf);
	free(l.buf);
	free(want);
	renew(ep, wc.status);
	return wc.status != IBV_WC_SUCCESS;
}

int main(int argc, char **argv)
{
	unsigned int i, nw = 0, ns = 0, nr = 0;
	struct fn_ep ep[2];

	fn_open(argc, argv);
	attr = fn_attr_default();
	fn_pair(ep, &attr);
	for (i = 0; i < ROUNDS; i++) {
		nw += send_round(ep, i, false);
		ns += send_round(ep, i, true);
		nr += read_round(ep, i);
	}
	/* Inline the dereg always lands mid-message some time: the test saw the case. */
	if (pair_inline)
		CHECK(nw > 0 && ns > 0 && nr > 0);
	fn_pair_destroy(ep);
	fn_close();
	printf("dereg under copy (%s%s): failed WRITE %u, SEND %u, READ %u of %u each; "
	       "no byte read after a dereg\n", argv[1], FREE_AT_ONCE ? ", freed at once" : "",
	       nw, ns, nr, ROUNDS);
	return 0;
}
