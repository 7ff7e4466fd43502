/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Zero-copy TX over the ring pair ([engine] tx_zero_copy, on by default for net_ring):
 *  1. payloads of 512 bytes and more leave attached to the registered memory, exactly one
 *     tx_zero_copy frame per such packet (a 64 KiB WRITE at path MTU 1024: 64; a SEND of
 *     two SGEs from two MRs, 8 700 bytes: 8, its 508-byte tail is copied), shorter ones are
 *     copied, and the bytes arrive intact; with tx_zero_copy = 0 nothing is attached;
 *  2. droce_dereg_mr() of a source MR whose frames are still on their way returns only after
 *     the peer read them: the memory is poisoned right after the dereg, and the data that
 *     arrives is still the original (a frame read after the dereg would carry the poison).
 * argv[1]: "inline" or "lcore" (the INI's engine mode), argv[2]: "on" or "off".
 */
#include "fn.h"

enum { BIG = 64 * 1024, SEND_LEN = 3700 + 5000, FLIGHT = 16 * 1024 };

static bool zc_on;

static uint64_t zc_frames(void)
{
	return fn_counters(0).tx_zero_copy;
}

static void write_big(struct fn_ep ep[2])
{
	struct fn_mem l, r;
	struct ibv_sge s;
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint64_t before = zc_frames();
	struct ibv_wc wc;

	fn_mem_reg(&l, ep[0].pd, BIG, FN_ACCESS_ALL, 0);
	fn_mem_reg(&r, ep[1].pd, BIG, FN_ACCESS_ALL, 0);
	fn_fill(l.buf, BIG, 1);
	s = (struct ibv_sge){ (uintptr_t)l.buf, BIG, l.mr->lkey };
	w.wr.rdma.remote_addr = (uintptr_t)r.buf;
	w.wr.rdma.rkey = r.mr->rkey;
	CHECK_EQ(droce_post_send(ep[0].qp, &w, &bad), 0);
	wc = fn_wait(ep[0].scq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK(memcmp(l.buf, r.buf, BIG) == 0);
	CHECK_EQ(zc_frames() - before, zc_on ? BIG / 1024 : 0);

	/* Below TRANSPORT_ZCOPY_MIN: copied. */
	before = zc_frames();
	s.length = 100;
	CHECK_EQ(droce_post_send(ep[0].qp, &w, &bad), 0);
	CHECK_EQ(fn_wait(ep[0].scq).status, IBV_WC_SUCCESS);
	CHECK_EQ(zc_frames() - before, 0);
	fn_mem_free(&l);
	fn_mem_free(&r);
}

/* Two SGEs from two MRs, their boundary inside a packet. */
static void send_sges(struct fn_ep ep[2])
{
	struct fn_mem a, b, r;
	struct ibv_sge s[2];
	struct ibv_send_wr w = { .wr_id = 2, .sg_list = s, .num_sge = 2, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint8_t *want = malloc(SEND_LEN);
	uint64_t before = zc_frames();
	struct ibv_wc wc;

	CHECK(want != NULL);
	fn_mem_reg(&a, ep[0].pd, 8192, FN_ACCESS_ALL, 0);
	fn_mem_reg(&b, ep[0].pd, 8192, FN_ACCESS_ALL, 0);
	fn_mem_reg(&r, ep[1].pd, SEND_LEN, FN_ACCESS_ALL, 0);
	fn_fill(a.buf, 8192, 2);
	fn_fill(b.buf, 8192, 3);
	s[0] = (struct ibv_sge){ (uintptr_t)a.buf + 5, 3700, a.mr->lkey };
	s[1] = (struct ibv_sge){ (uintptr_t)b.buf + 11, 5000, b.mr->lkey };
	memcpy(want, a.buf + 5, 3700);
	memcpy(want + 3700, b.buf + 11, 5000);
	fn_post_recv(ep[1].qp, 7, r.buf, SEND_LEN, r.mr->lkey);
	CHECK_EQ(droce_post_send(ep[0].qp, &w, &bad), 0);
	wc = fn_wait(ep[1].rcq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, SEND_LEN);
	CHECK(memcmp(r.buf, want, SEND_LEN) == 0);
	CHECK_EQ(fn_wait(ep[0].scq).status, IBV_WC_SUCCESS);
	CHECK_EQ(zc_frames() - before, zc_on ? SEND_LEN / 1024 : 0);
	free(want);
	fn_mem_free(&a);
	fn_mem_free(&b);
	fn_mem_free(&r);
}

/* Dereg of the source while its frames travel: it waits for them. */
static bool dereg_in_flight(struct fn_ep ep[2], unsigned int round)
{
	struct fn_mem l, r;
	struct ibv_sge s;
	struct ibv_send_wr w = { .wr_id = 3, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint8_t *want = malloc(FLIGHT);
	struct ibv_wc wc;

	CHECK(want != NULL);
	fn_mem_reg(&l, ep[0].pd, FLIGHT, FN_ACCESS_ALL, 0);
	fn_mem_reg(&r, ep[1].pd, FLIGHT, FN_ACCESS_ALL, 0);
	fn_fill(l.buf, FLIGHT, 10 + round);
	memcpy(want, l.buf, FLIGHT);
	s = (struct ibv_sge){ (uintptr_t)l.buf, FLIGHT, l.mr->lkey };
	w.wr.rdma.remote_addr = (uintptr_t)r.buf;
	w.wr.rdma.rkey = r.mr->rkey;
	CHECK_EQ(droce_post_send(ep[0].qp, &w, &bad), 0);
	/* Inline: one iteration sends the 16 packets into the ring, where they wait for the
	 * next one. On an lcore they are wherever the engine is. */
	if (pair_inline)
		CHECK(droce_engine_poll(pair_ctx[0]) >= 0);
	CHECK_EQ(droce_dereg_mr(l.mr), 0);
	memset(l.buf, 0xee, FLIGHT);	/* what a frame read from now on would carry */
	wc = fn_wait(ep[0].scq);
	/* Inline, every packet left before the dereg. On an lcore the engine may not have
	 * reached the WR (or its last packets) yet: then the WR fails, as a WR on memory
	 * deregistered under it does, and nothing is read after the dereg either. */
	if (pair_inline || wc.status == IBV_WC_SUCCESS) {
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK(memcmp(r.buf, want, FLIGHT) == 0);
	} else {
		CHECK_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
		CHECK_EQ(fn_state(ep[0].qp), IBV_QPS_ERR);
	}
	free(l.buf);
	free(want);
	fn_mem_free(&r);
	return wc.status == IBV_WC_SUCCESS;
}

int main(int argc, char **argv)
{
	struct fn_attr a = fn_attr_default();
	struct fn_ep ep[2];
	struct droce_counters c;
	unsigned int i;

	CHECK(argc >= 3);
	zc_on = strcmp(argv[2], "on") == 0;
	fn_open(argc, argv);
	a.timeout = 22;		/* ~17 s: no retransmission can hide a frame read too late */
	fn_pair(ep, &a);
	write_big(ep);
	send_sges(ep);
	/* Zero-copy only: copies are made when the engine builds a packet, which may be after
	 * the dereg (the pre-existing rule: memory is the application's until completion). */
	for (i = 0; zc_on && i < 20; i++) {
		if (!dereg_in_flight(ep, i)) {
			fn_pair_destroy(ep);	/* the QP is in ERR: a fresh pair */
			fn_pair(ep, &a);
		}
	}
	c = fn_counters(0);
	CHECK_EQ(c.retransmits, 0);
	/* A frame read after its memory was poisoned would fail its ICRC here. */
	CHECK_EQ(fn_counters(1).parse_err[DROCE_PARSE_BAD_ICRC], 0);
	fn_pair_destroy(ep);
	fn_close();
	printf("zero-copy TX (%s, %s): ok, %llu frames attached\n", argv[1], argv[2],
	       (unsigned long long)c.tx_zero_copy);
	return 0;
}
