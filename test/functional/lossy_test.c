/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Through a link that drops, duplicates, reorders, delays and corrupts frames (the engine's
 * fault injection, [engine] fault_* in pair_lossy_*.ini and soak_*.ini), Q pairs of RC QPs
 * move N mixed messages each way at once - SEND, SEND with immediate, RDMA WRITE, WRITE with
 * immediate, RDMA READ (one in eight of them an ATOMIC_WRITE, one in eight a FLUSH instead),
 * FETCH_AND_ADD,
 * COMPARE_AND_SWAP in turn, varying lengths - and every message is delivered exactly once, in
 * order, intact:
 * - SENDs and WRITEs with immediate consume the receives in posting order (sequence number in
 *   the payload, the immediate), each SEND with its bytes;
 * - every WRITE's bytes are in its slot of the peer's memory when it completes, nothing beside
 *   them, and nothing is written after (a stale duplicate executed twice);
 * - every READ brings the peer's bytes;
 * - the FETCH_ADDs on the peer's counter return 0, 1, 2, ... in posting order (a duplicate
 *   executed twice would skip a value), the COMPARE_AND_SWAPs (compare j, swap j + 1) on a
 *   second counter return j, and both counters end at their number;
 * - each ATOMIC_WRITE writes its number to a third word of the peer: at its completion the
 *   word holds it or a later one's, and at the end the last one's (an old duplicate executed
 *   again would leave an older number);
 * - each FLUSH (of the slot the WRITE just before it wrote) completes DROCE_WC_FLUSH with its
 *   length, in its place (after that WRITE), however often it or its answer was lost;
 * - every completion is a success, in order; the faults and retransmissions are counted;
 *   every corrupted frame is counted by its receiver as BAD_ICRC and nothing else is
 *   rejected; no QP is in error.
 * Usage: lossy_test MODE [QPS [MESSAGES [all]]] (defaults 1 and 10000; "all": every kind of
 * fault must have happened, delays and corruption included). Prints the bytes it compared
 * ("soak bytes checked: N", summed by test/run.sh).
 */
#include "fn.h"

enum {
	DEPTH = 64,		/* outstanding per QP */
	SLOT = 4096,		/* local buffer per outstanding WR, receive buffer size */
	WSLOT = 2048,		/* size of a WRITE slot in the peer's memory */
	NWSLOT = 1024,		/* WRITE slots, used in turn (checked and cleared as they complete) */
	RREGION = 64 * 1024,	/* the peer's memory READs read */
	CANARY = 0xee,
	MAX_QPS = 64,
};

enum kind { K_SEND, K_SEND_IMM, K_WRITE, K_WRITE_IMM, K_READ, K_FADD, K_CSWAP, K_AWRITE,
	    K_FLUSH };

struct side {
	struct fn_ep ep;
	struct fn_mem local;	/* DEPTH send slots, then DEPTH receive slots */
	struct fn_mem target;	/* NWSLOT write slots, the read region, the two atomic counters */
	uint32_t posted, completed, adds, swaps;
	uint32_t rcvd, next_rx;	/* receives completed; the message the next one must be */
};

static struct side s[MAX_QPS][2];
static uint32_t n_qps = 1, n_msg = 10000;
static bool all_faults;		/* delays and corruption expected too */
static uint64_t checked;	/* bytes compared with what they must be */

static enum kind kind(uint32_t i)
{
	bool odd = (i / 4) % 2 != 0;

	switch (i % 4) {
	case 0:
		return (enum kind)(K_SEND + i / 4 % 2);
	case 1:
		return odd ? K_WRITE_IMM : K_WRITE;
	case 2:
		return i / 4 % 8 == 7 ? K_AWRITE : i / 4 % 8 == 3 ? K_FLUSH : K_READ;
	default:
		return odd ? K_CSWAP : K_FADD;
	}
}

static bool consumes_recv(uint32_t i)
{
	enum kind k = kind(i);

	return k == K_SEND || k == K_SEND_IMM || k == K_WRITE_IMM;
}

static uint32_t msg_len(uint32_t i)
{
	if (kind(i) == K_AWRITE)
		return 8;
	if (kind(i) == K_FLUSH)
		return WSLOT;				/* the WRITE slot before it */
	switch (i % 4) {
	case 0:
		return 4 + i * 37 % 3000;		/* SEND (carries its number) */
	case 1:
		return 1 + i * 53 % (WSLOT - 1);	/* WRITE */
	case 2:
		return 1 + i * 29 % SLOT;		/* READ */
	default:
		return 8;				/* atomics */
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
	return x->target.buf + (size_t)NWSLOT * WSLOT;
}

static uint8_t *write_slot(struct side *x, uint32_t i)
{
	return x->target.buf + (size_t)(i / 4 % NWSLOT) * WSLOT;
}

/* [0]: the FETCH_ADD counter, [1]: the COMPARE_AND_SWAP one, [2]: the ATOMIC_WRITE word. */
static uint64_t *counter(struct side *x)
{
	return (uint64_t *)(void *)(read_region(x) + RREGION);
}

static uint32_t read_off(uint32_t i)
{
	return i * 97 % (RREGION - SLOT);
}

static void set_remote(struct ibv_send_wr *w, struct side *x, struct side *peer, uint32_t i)
{
	uint8_t *p = send_slot(x, i);

	switch (kind(i)) {
	case K_WRITE:
	case K_WRITE_IMM:
		fn_fill(p, msg_len(i), i);
		w->wr.rdma.remote_addr = (uintptr_t)write_slot(peer, i);
		w->wr.rdma.rkey = peer->target.mr->rkey;
		break;
	case K_READ:
		memset(p, CANARY, msg_len(i));
		w->wr.rdma.remote_addr = (uintptr_t)read_region(peer) + read_off(i);
		w->wr.rdma.rkey = peer->target.mr->rkey;
		break;
	case K_FADD:
		w->wr.atomic.remote_addr = (uintptr_t)&counter(peer)[0];
		w->wr.atomic.rkey = peer->target.mr->rkey;
		w->wr.atomic.compare_add = 1;
		break;
	case K_AWRITE:
		memcpy(p, &(uint64_t){ i }, 8);
		w->wr.rdma.remote_addr = (uintptr_t)&counter(peer)[2];
		w->wr.rdma.rkey = peer->target.mr->rkey;
		break;
	case K_FLUSH:	/* i - 1 is a WRITE (i % 4 == 1) */
		droce_wr_set_flush(w, peer->target.mr->rkey, (uintptr_t)write_slot(peer, i - 1),
				   WSLOT, DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE);
		break;
	case K_CSWAP:
		w->wr.atomic.remote_addr = (uintptr_t)&counter(peer)[1];
		w->wr.atomic.rkey = peer->target.mr->rkey;
		w->wr.atomic.compare_add = i / 8;	/* the CSWAPs before this one */
		w->wr.atomic.swap = i / 8 + 1;
		break;
	default:
		fn_fill(p, msg_len(i), i);
		memcpy(p, &i, 4);
		break;
	}
}

static void post_one(struct side *x, struct side *peer, uint32_t i)
{
	static const enum ibv_wr_opcode op[] = {
		[K_SEND] = IBV_WR_SEND, [K_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
		[K_WRITE] = IBV_WR_RDMA_WRITE, [K_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
		[K_READ] = IBV_WR_RDMA_READ, [K_FADD] = IBV_WR_ATOMIC_FETCH_AND_ADD,
		[K_CSWAP] = IBV_WR_ATOMIC_CMP_AND_SWP, [K_AWRITE] = IBV_WR_ATOMIC_WRITE,
		[K_FLUSH] = DROCE_WR_FLUSH,
	};
	struct ibv_sge sg = { (uintptr_t)send_slot(x, i), msg_len(i), x->local.mr->lkey };
	struct ibv_send_wr w = { .wr_id = i, .sg_list = &sg, .num_sge = 1,
				 .opcode = op[kind(i)], .imm_data = htonl(i),
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	set_remote(&w, x, peer, i);
	CHECK_EQ(droce_post_send(x->ep.qp, &w, &bad), 0);
}

/* Every non-zero counter of both devices (to explain a failure). */
static void dump_counters(void)
{
	struct droce_counters c;
	const uint64_t *v = (const uint64_t *)&c;
	unsigned int j;
	int d;

	for (d = 0; d < 2; d++) {
		c = fn_counters(d);
		for (j = 0; droce_counter_name(j) != NULL; j++)
			if (v[j] != 0)
				fprintf(stderr, "droce%d %s %llu\n", d, droce_counter_name(j),
					(unsigned long long)v[j]);
	}
}

/*
 * WRITE @p i is complete: its slot in @p peer holds its bytes and canaries after them. The
 * slot is cleared for the WRITE that reuses it, NWSLOT WRITEs later; a stale duplicate
 * executed after the completion would show in the final check (check_side()).
 */
static void check_write(struct side *peer, uint32_t i)
{
	uint8_t want[WSLOT], *slot = write_slot(peer, i);
	uint32_t len = msg_len(i);

	fn_fill(want, len, i);
	CHECK(memcmp(slot, want, len) == 0);
	CHECK(fn_all(slot + len, WSLOT - len, CANARY));
	memset(slot, CANARY, WSLOT);
	checked += WSLOT;
}

static void send_done(struct side *x, struct side *peer, const struct ibv_wc *wc)
{
	uint32_t i = x->completed++;
	uint64_t v;

	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "QP 0x%x wr %u: %s\n", x->ep.qp->qp_num, i,
			droce_wc_status_str(wc->status));
		dump_counters();
	}
	CHECK_EQ(wc->status, IBV_WC_SUCCESS);
	CHECK_EQ(wc->wr_id, i);			/* in order, each once */
	CHECK_EQ(wc->byte_len, msg_len(i));
	if (kind(i) == K_WRITE || kind(i) == K_WRITE_IMM)
		check_write(peer, i);
	if (kind(i) == K_READ) {
		CHECK(memcmp(send_slot(x, i), read_region(peer) + read_off(i), msg_len(i)) == 0);
		checked += msg_len(i);
	}
	if (kind(i) == K_FADD || kind(i) == K_CSWAP) {
		memcpy(&v, send_slot(x, i), 8);
		CHECK_EQ(v, kind(i) == K_FADD ? x->adds++ : x->swaps++);
		checked += 8;
	}
	if (kind(i) == K_AWRITE) {
		v = __atomic_load_n(&counter(peer)[2], __ATOMIC_ACQUIRE);
		CHECK(v >= i && kind((uint32_t)v) == K_AWRITE);
		checked += 8;
	}
	if (kind(i) == K_FLUSH)
		CHECK_EQ(wc->opcode, DROCE_WC_FLUSH);
}

static void recv_done(struct side *x, const struct ibv_wc *wc)
{
	uint32_t k = (uint32_t)wc->wr_id, i = x->next_rx, got;
	uint8_t want[SLOT];

	CHECK_EQ(wc->status, IBV_WC_SUCCESS);
	CHECK_EQ(wc->byte_len, msg_len(i));
	if (kind(i) == K_SEND_IMM || kind(i) == K_WRITE_IMM) {
		CHECK_EQ(wc->wc_flags & IBV_WC_WITH_IMM, IBV_WC_WITH_IMM);
		CHECK_EQ(ntohl(wc->imm_data), i);	/* in order, none twice or missing */
	}
	if (kind(i) == K_WRITE_IMM) {
		CHECK_EQ(wc->opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	} else {
		CHECK_EQ(wc->opcode, IBV_WC_RECV);
		memcpy(&got, recv_slot(x, k), 4);
		CHECK_EQ(got, i);
		fn_fill(want, msg_len(i), i);
		CHECK(memcmp(recv_slot(x, k) + 4, want + 4, msg_len(i) - 4) == 0);
		checked += msg_len(i);
	}
	x->rcvd++;
	do
		x->next_rx++;
	while (!consumes_recv(x->next_rx));
	fn_post_recv(x->ep.qp, k, recv_slot(x, k), SLOT, x->local.mr->lkey);
}

static void progress(struct side *x, struct side *peer)
{
	struct ibv_wc wc[16];
	int n, j;

	while (x->posted < n_msg && x->posted - x->completed < DEPTH)
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

static void setup_pair(struct side x[2])
{
	struct fn_attr a = fn_attr_default();
	struct fn_ep ep[2];
	uint32_t k;
	int i;

	a.depth = DEPTH;
	a.timeout = 12;		/* 4.096 us * 2^12 ~ 17 ms */
	a.rd_atomic = 8;
	fn_pair(ep, &a);
	for (i = 0; i < 2; i++) {
		x[i].ep = ep[i];
		fn_mem_reg(&x[i].local, ep[i].pd, 2 * DEPTH * SLOT, FN_ACCESS_ALL, 0);
		fn_mem_reg(&x[i].target, ep[i].pd, (size_t)NWSLOT * WSLOT + RREGION + 24,
			   FN_ACCESS_ALL | DROCE_ACCESS_FLUSH_GLOBAL, CANARY);
		fn_fill(read_region(&x[i]), RREGION, 77 + (uint32_t)i);
		counter(&x[i])[0] = 0;
		counter(&x[i])[1] = 0;
		counter(&x[i])[2] = 0;
		for (k = 0; k < DEPTH; k++)
			fn_post_recv(ep[i].qp, k, recv_slot(&x[i], k), SLOT, x[i].local.mr->lkey);
	}
}

static uint32_t count_kind(enum kind k)
{
	uint32_t i, n = 0;

	for (i = 0; i < n_msg; i++)
		n += kind(i) == k;
	return n;
}

/* The number of the last ATOMIC_WRITE (0 if none). */
static uint32_t last_awrite(void)
{
	uint32_t i, last = 0;

	for (i = 0; i < n_msg; i++)
		if (kind(i) == K_AWRITE)
			last = i;
	return last;
}

static uint32_t count_recv(void)
{
	uint32_t i, n = 0;

	for (i = 0; i < n_msg; i++)
		n += consumes_recv(i);
	return n;
}

static bool done(void)
{
	uint32_t q, n_recv = count_recv();
	int i;

	for (q = 0; q < n_qps; q++)
		for (i = 0; i < 2; i++)
			if (s[q][i].completed < n_msg || s[q][i].rcvd < n_recv)
				return false;
	return true;
}

static void check_side(struct side *x)
{
	CHECK(fn_all(x->target.buf, (size_t)NWSLOT * WSLOT, CANARY));
	CHECK_EQ(counter(x)[0], count_kind(K_FADD));
	CHECK_EQ(counter(x)[1], count_kind(K_CSWAP));
	CHECK_EQ(counter(x)[2], last_awrite());
	CHECK_EQ(fn_state(x->ep.qp), IBV_QPS_RTS);
	fn_mem_free(&x->local);
	fn_mem_free(&x->target);
}

/* Faults happened, were recovered from, and each corrupted frame was a BAD_ICRC there. */
static void check_counters(void)
{
	struct droce_counters c[2] = { fn_counters(0), fn_counters(1) };
	int i;

	for (i = 0; i < 2; i++) {
		printf("droce%d: dropped %llu duplicated %llu reordered %llu delayed %llu "
		       "corrupted %llu bad_icrc %llu retransmits %llu duplicate_request %llu "
		       "out_of_sequence %llu\n", i,
		       (unsigned long long)c[i].fault_dropped,
		       (unsigned long long)c[i].fault_duplicated,
		       (unsigned long long)c[i].fault_reordered,
		       (unsigned long long)c[i].fault_delayed,
		       (unsigned long long)c[i].fault_corrupted,
		       (unsigned long long)c[i].parse_err[DROCE_PARSE_BAD_ICRC],
		       (unsigned long long)c[i].retransmits,
		       (unsigned long long)c[i].duplicate_request,
		       (unsigned long long)c[i].out_of_sequence);
		CHECK(c[i].fault_dropped > 0 && c[i].fault_duplicated > 0 &&
		      c[i].fault_reordered > 0);
		CHECK(!all_faults || (c[i].fault_delayed > 0 && c[i].fault_corrupted > 0));
		CHECK(c[i].retransmits > 0);
		CHECK_EQ(c[i].retry_exceeded, 0);
		CHECK_EQ(c[i].parse_err[DROCE_PARSE_BAD_ICRC], c[1 - i].fault_corrupted);
		CHECK_EQ(c[i].rx_bad_frame, c[1 - i].fault_corrupted);
	}
}

int main(int argc, char **argv)
{
	uint64_t end;
	uint32_t q;
	int i;

	fn_open(argc, argv);
	if (argc > 2)
		n_qps = (uint32_t)atoi(argv[2]);
	if (argc > 3)
		n_msg = (uint32_t)atoi(argv[3]);
	all_faults = argc > 4 && strcmp(argv[4], "all") == 0;
	CHECK(n_qps >= 1 && n_qps <= MAX_QPS && n_msg >= 8);
	for (q = 0; q < n_qps; q++)
		setup_pair(s[q]);
	end = pair_deadline(n_msg * n_qps / 1000.0 + 50);
	while (!done()) {
		CHECK(rte_get_tsc_cycles() < end);
		for (q = 0; q < n_qps; q++) {
			progress(&s[q][0], &s[q][1]);
			progress(&s[q][1], &s[q][0]);
		}
		pair_step();
	}
	fn_run(0.05);		/* frames still held back or delayed reach their receiver */
	check_counters();	/* before the destroys send their last ACKs */
	for (q = 0; q < n_qps; q++) {
		struct fn_ep ep[2] = { s[q][0].ep, s[q][1].ep };

		for (i = 0; i < 2; i++)
			check_side(&s[q][i]);
		fn_pair_destroy(ep);
	}
	fn_close();
	printf("lossy link (%s): %u QP pairs, %u messages each way: ok\n", argv[1], n_qps,
	       n_msg);
	printf("soak bytes checked: %llu\n", (unsigned long long)checked);
	return 0;
}
