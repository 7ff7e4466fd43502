/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Through a link that drops, duplicates and reorders a few percent of the frames (the
 * engine's fault injection, [engine] fault_* in pair_lossy_*.ini), both sides move N mixed
 * messages to each other at once - SEND, RDMA WRITE, RDMA READ, ATOMIC FETCH_AND_ADD in turn,
 * varying lengths - and every message is delivered exactly once, in order, intact:
 * - SENDs arrive in posting order (sequence number in the payload), each with its bytes;
 * - every WRITE's bytes are in its own slot of the peer's memory, nothing beside them;
 * - every READ brings the peer's bytes;
 * - the FETCH_ADDs on the peer's counter return 0, 1, 2, ... in posting order (a duplicate
 *   executed twice would skip a value) and leave it at their number;
 * - every completion is a success, in order; the faults and retransmissions are counted;
 *   no QP is in error.
 */
#include "fn.h"

enum {
	N = 10000,		/* messages each way */
	DEPTH = 64,		/* outstanding per side */
	SLOT = 4096,		/* local buffer per outstanding WR, receive buffer size */
	WSLOT = 2048,		/* WRITE slots in the peer's memory, one per WRITE */
	NW = N / 4 + 1,
	RREGION = 64 * 1024,	/* the peer's memory READs read */
	CANARY = 0xee,
};

struct side {
	struct fn_ep ep;
	struct fn_mem local;	/* DEPTH send slots, then DEPTH receive slots */
	struct fn_mem target;	/* NW write slots, the read region, the atomic counter */
	uint32_t posted, completed, sends_rcvd, adds;
};

static struct side s[2];

static uint32_t msg_len(uint32_t i)
{
	switch (i % 4) {
	case 0:
		return 4 + i * 37 % 3000;		/* SEND (carries its number) */
	case 1:
		return 1 + i * 53 % (WSLOT - 1);	/* WRITE */
	case 2:
		return 1 + i * 29 % SLOT;		/* READ */
	default:
		return 8;				/* FETCH_ADD */
	}
}

static uint8_t *send_slot(struct side *x, uint32_t i)
{
	return x->local.buf + (size_t)(i % DEPTH) * SLOT;
}

static uint8_t *recv_slot(struct side *x, uint32_t k)
{
	return x->local.buf + (size_t)(DEPTH + k) * SLOT;
}

static uint8_t *read_region(struct side *x)
{
	return x->target.buf + (size_t)NW * WSLOT;
}

static uint64_t *counter(struct side *x)
{
	return (uint64_t *)(void *)(read_region(x) + RREGION);
}

static uint32_t read_off(uint32_t i)
{
	return i * 97 % (RREGION - SLOT);
}

static void post_one(struct side *x, struct side *peer, uint32_t i)
{
	uint32_t len = msg_len(i);
	uint8_t *p = send_slot(x, i);
	struct ibv_sge sg = { (uintptr_t)p, len, x->local.mr->lkey };
	struct ibv_send_wr w = { .wr_id = i, .sg_list = &sg, .num_sge = 1,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	switch (i % 4) {
	case 0:
		w.opcode = IBV_WR_SEND;
		fn_fill(p, len, i);
		memcpy(p, &i, 4);
		break;
	case 1:
		w.opcode = IBV_WR_RDMA_WRITE;
		fn_fill(p, len, i);
		w.wr.rdma.remote_addr = (uintptr_t)peer->target.buf + (size_t)(i / 4) * WSLOT;
		w.wr.rdma.rkey = peer->target.mr->rkey;
		break;
	case 2:
		w.opcode = IBV_WR_RDMA_READ;
		memset(p, CANARY, len);
		w.wr.rdma.remote_addr = (uintptr_t)read_region(peer) + read_off(i);
		w.wr.rdma.rkey = peer->target.mr->rkey;
		break;
	default:
		w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		w.wr.atomic.remote_addr = (uintptr_t)counter(peer);
		w.wr.atomic.rkey = peer->target.mr->rkey;
		w.wr.atomic.compare_add = 1;
		break;
	}
	CHECK_EQ(droce_post_send(x->ep.qp, &w, &bad), 0);
}

static void send_done(struct side *x, struct side *peer, const struct ibv_wc *wc)
{
	uint32_t i = x->completed++;
	uint64_t v;

	if (wc->status != IBV_WC_SUCCESS)
		fprintf(stderr, "wr %u: %s\n", i, droce_wc_status_str(wc->status));
	CHECK_EQ(wc->status, IBV_WC_SUCCESS);
	CHECK_EQ(wc->wr_id, i);			/* in order, each once */
	CHECK_EQ(wc->byte_len, msg_len(i));
	if (i % 4 == 2)
		CHECK(memcmp(send_slot(x, i), read_region(peer) + read_off(i), msg_len(i)) == 0);
	if (i % 4 == 3) {
		memcpy(&v, send_slot(x, i), 8);
		CHECK_EQ(v, x->adds++);
	}
}

static void recv_done(struct side *x, const struct ibv_wc *wc)
{
	uint32_t k = (uint32_t)wc->wr_id, i = x->sends_rcvd * 4, got;
	uint8_t want[SLOT];

	CHECK_EQ(wc->status, IBV_WC_SUCCESS);
	CHECK_EQ(wc->byte_len, msg_len(i));
	memcpy(&got, recv_slot(x, k), 4);
	CHECK_EQ(got, i);				/* in order, none twice or missing */
	fn_fill(want, msg_len(i), i);
	CHECK(memcmp(recv_slot(x, k) + 4, want + 4, msg_len(i) - 4) == 0);
	x->sends_rcvd++;
	fn_post_recv(x->ep.qp, k, recv_slot(x, k), SLOT, x->local.mr->lkey);
}

static void progress(struct side *x, struct side *peer)
{
	struct ibv_wc wc[16];
	int n, j;

	while (x->posted < N && x->posted - x->completed < DEPTH)
		post_one(x, peer, x->posted++);
	n = droce_poll_cq(x->ep.scq, 16, wc);
	CHECK(n >= 0);
	for (j = 0; j < n; j++)
		send_done(x, peer, &wc[j]);
	n = droce_poll_cq(x->ep.rcq, 16, wc);
	CHECK(n >= 0);
	for (j = 0; j < n; j++)
		recv_done(x, &wc[j]);
}

static void setup(void)
{
	struct fn_attr a = fn_attr_default();
	struct fn_ep ep[2];
	uint32_t k;
	int i;

	a.depth = DEPTH;
	a.timeout = 8;		/* 4.096 us * 2^8 ~ 1 ms */
	a.rd_atomic = 8;
	fn_pair(ep, &a);
	for (i = 0; i < 2; i++) {
		s[i].ep = ep[i];
		fn_mem_reg(&s[i].local, ep[i].pd, 2 * DEPTH * SLOT, FN_ACCESS_ALL, 0);
		fn_mem_reg(&s[i].target, ep[i].pd, (size_t)NW * WSLOT + RREGION + 8,
			   FN_ACCESS_ALL, CANARY);
		fn_fill(read_region(&s[i]), RREGION, 77 + (uint32_t)i);
		*counter(&s[i]) = 0;
		for (k = 0; k < DEPTH; k++)
			fn_post_recv(ep[i].qp, k, recv_slot(&s[i], k), SLOT, s[i].local.mr->lkey);
	}
}

/* Every WRITE slot of @p x holds its WRITE's bytes and canaries after them. */
static void check_writes(struct side *x)
{
	uint8_t want[WSLOT];
	uint32_t i, len;

	for (i = 1; i < N; i += 4) {
		const uint8_t *slot = x->target.buf + (size_t)(i / 4) * WSLOT;

		len = msg_len(i);
		fn_fill(want, len, i);
		CHECK(memcmp(slot, want, len) == 0);
		CHECK(fn_all(slot + len, WSLOT - len, CANARY));
	}
}

int main(int argc, char **argv)
{
	uint64_t end;
	struct droce_counters c[2];
	int i;

	fn_open(argc, argv);
	setup();
	end = pair_deadline(60);
	while (s[0].completed < N || s[1].completed < N || s[0].sends_rcvd < (N + 3) / 4 ||
	       s[1].sends_rcvd < (N + 3) / 4) {
		CHECK(rte_get_tsc_cycles() < end);
		progress(&s[0], &s[1]);
		progress(&s[1], &s[0]);
		pair_step();
	}
	for (i = 0; i < 2; i++) {
		check_writes(&s[i]);
		CHECK_EQ(*counter(&s[i]), N / 4);	/* one per i % 4 == 3 */
		CHECK_EQ(fn_state(s[i].ep.qp), IBV_QPS_RTS);
		c[i] = fn_counters(i);
		printf("droce%d: dropped %llu duplicated %llu reordered %llu retransmits %llu "
		       "duplicate_request %llu out_of_sequence %llu\n", i,
		       (unsigned long long)c[i].fault_dropped,
		       (unsigned long long)c[i].fault_duplicated,
		       (unsigned long long)c[i].fault_reordered,
		       (unsigned long long)c[i].retransmits,
		       (unsigned long long)c[i].duplicate_request,
		       (unsigned long long)c[i].out_of_sequence);
		CHECK(c[i].fault_dropped > 0 && c[i].fault_duplicated > 0 &&
		      c[i].fault_reordered > 0);
		CHECK(c[i].retransmits > 0);
		CHECK_EQ(c[i].retry_exceeded, 0);
	}
	for (i = 0; i < 2; i++) {
		fn_mem_free(&s[i].local);
		fn_mem_free(&s[i].target);
	}
	{
		struct fn_ep ep[2] = { s[0].ep, s[1].ep };

		fn_pair_destroy(ep);
	}
	fn_close();
	printf("lossy link (%s): ok\n", argv[1]);
	return 0;
}
