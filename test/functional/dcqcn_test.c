/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * ECN and DCQCN over real DPDK ports (pair_ce_*.ini: [engine] fault_ce marks the first 200
 * ECN-capable frames each device sends CE, as a congested switch would; [dcqcn] defaults).
 * droce0 WRITEs to droce1 until its QP is back at line rate. Each step is proven by the
 * counters: droce0's frames left ECT and were marked (fault_ce_marked) -> droce1 received
 * them CE (rx_ce, every one) -> droce1's QP sent CNPs, one per cnp_interval at most
 * (cnp_sent + cnp_skipped = rx_ce) -> droce0's QP received every one (cnp_rcvd), never as a
 * bad frame, and cut its rate (cc_rate_cut) -> with marking over, its rate increased
 * (cc_rate_inc) back to line rate (cc_rate_full). The same holds the other way for the marked
 * ACKs. Every byte arrives; the per-QP counters carry the same numbers as the devices'.
 *
 * Argument "off" (pair_ce_off_*.ini, [dcqcn] enable = 0): no frame leaves ECN-capable, so
 * nothing is marked, and no CNP or rate change happens. "off0" (pair_ce_off0_*.ini,
 * off_devices = droce0): droce0's frames leave Not-ECT (none marked); droce1's ACKs are
 * marked and arrive CE at droce0, which counts them and answers none with a CNP.
 */
#include <inttypes.h>

#include "fn.h"

enum { LEN = 64 * 1024, DEPTH = 16, MARKS = 200, ROUNDS_MAX = 100000 };

static void write_round(struct fn_ep *ep, struct fn_mem *m, uint32_t seed)
{
	unsigned int i;

	fn_fill(m[0].buf, (size_t)LEN * DEPTH, seed);
	for (i = 0; i < DEPTH; i++) {
		struct ibv_sge s = { (uintptr_t)m[0].buf + (size_t)i * LEN, LEN, m[0].mr->lkey };
		struct ibv_send_wr w = { .wr_id = i, .sg_list = &s, .num_sge = 1,
					 .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;

		w.wr.rdma.remote_addr = (uintptr_t)m[1].buf + (size_t)i * LEN;
		w.wr.rdma.rkey = m[1].mr->rkey;
		CHECK_EQ(droce_post_send(ep[0].qp, &w, &bad), 0);
	}
	for (i = 0; i < DEPTH; i++)
		fn_wait_ok(ep[0].scq, i);
	CHECK(memcmp(m[0].buf, m[1].buf, (size_t)LEN * DEPTH) == 0);
}

/* One direction: @p from's frames marked, @p to notified, @p from reacting. */
static void check_direction(const struct droce_counters *from, const struct droce_counters *to)
{
	CHECK_EQ(from->fault_ce_marked, MARKS);
	CHECK_EQ(to->rx_ce, from->fault_ce_marked);
	CHECK(to->cnp_sent > 0);
	CHECK_EQ(to->cnp_sent + to->cnp_skipped, to->rx_ce);
	CHECK_EQ(from->cnp_rcvd, to->cnp_sent);
	CHECK(from->cc_rate_cut > 0);
	CHECK(from->cc_rate_cut <= from->cnp_rcvd);
}

/* Nothing of congestion control happened on @p c. */
static void check_quiet(const struct droce_counters *c)
{
	CHECK_EQ(c->cnp_sent + c->cnp_rcvd + c->cc_rate_cut + c->cc_rate_inc + c->cc_paced, 0);
}

/* DCQCN off everywhere (@p dev0_only false) or on droce0 only. */
static void off(struct fn_ep *ep, struct fn_mem *m, bool dev0_only)
{
	struct droce_counters c[2];
	unsigned int round;

	for (round = 0; round < ROUNDS_MAX; round++) {
		write_round(ep, m, round + 1);
		c[1] = fn_counters(1);
		/* off: a few rounds; droce0 off: until droce1's ACKs had their marks */
		if (dev0_only ? c[1].fault_ce_marked == MARKS : round == 7)
			break;
	}
	CHECK(round < ROUNDS_MAX);
	fn_run(0.1);
	c[0] = fn_counters(0);
	c[1] = fn_counters(1);
	CHECK_EQ(c[0].fault_ce_marked, 0);	/* droce0's frames: Not-ECT */
	CHECK_EQ(c[1].rx_ce, 0);
	check_quiet(&c[0]);
	check_quiet(&c[1]);
	if (dev0_only) {
		CHECK_EQ(c[0].rx_ce, MARKS);
		CHECK_EQ(c[0].cnp_skipped, MARKS);	/* answered by no CNP */
	} else {
		CHECK_EQ(c[1].fault_ce_marked, 0);
		CHECK_EQ(c[0].rx_ce + c[0].cnp_skipped + c[1].cnp_skipped, 0);
	}
}

int main(int argc, char **argv)
{
	struct fn_attr a = fn_attr_default();
	struct droce_counters c[2], q[2];
	struct fn_mem m[2];
	struct fn_ep ep[2];
	unsigned int round, i;

	fn_open(argc, argv);
	a.timeout = 18;		/* ~1 s: a busy machine makes no retransmission needed */
	fn_pair(ep, &a);
	for (i = 0; i < 2; i++)
		fn_mem_reg(&m[i], ep[i].pd, (size_t)LEN * DEPTH, FN_ACCESS_ALL, 0);
	if (argc > 2) {
		CHECK(strcmp(argv[2], "off") == 0 || strcmp(argv[2], "off0") == 0);
		off(ep, m, strcmp(argv[2], "off0") == 0);
		for (i = 0; i < 2; i++)
			fn_mem_free(&m[i]);
		fn_pair_destroy(ep);
		fn_close();
		return 0;
	}

	/* Marked while the first frames pass, then a clean link: until droce0's QP recovered. */
	for (round = 0; round < ROUNDS_MAX; round++) {
		write_round(ep, m, round + 1);
		c[0] = fn_counters(0);
		c[1] = fn_counters(1);
		if (c[0].cc_rate_full > 0 && c[0].fault_ce_marked == MARKS &&
		    c[1].fault_ce_marked == MARKS)
			break;
	}
	CHECK(round < ROUNDS_MAX);
	fn_run(0.1);	/* the last ACKs and CNPs arrive */
	for (i = 0; i < 2; i++) {
		c[i] = fn_counters((int)i);
		q[i] = fn_qp_counters(ep[i].qp);
	}
	printf("dcqcn: droce0 marked %" PRIu64 ", droce1 rx_ce %" PRIu64 " cnp_sent %" PRIu64
	       " skipped %" PRIu64 "; droce0 cnp_rcvd %" PRIu64 " cuts %" PRIu64 " increases %"
	       PRIu64 " paced %" PRIu64 " back at line rate %" PRIu64 " after %u rounds\n",
	       c[0].fault_ce_marked, c[1].rx_ce, c[1].cnp_sent, c[1].cnp_skipped,
	       c[0].cnp_rcvd, c[0].cc_rate_cut, c[0].cc_rate_inc, c[0].cc_paced,
	       c[0].cc_rate_full, round + 1);
	check_direction(&c[0], &c[1]);	/* WRITEs */
	check_direction(&c[1], &c[0]);	/* ACKs */
	CHECK(c[0].cc_rate_inc > 0);
	CHECK(c[0].cc_rate_full > 0);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(c[i].rx_bad_frame + c[i].rx_bad_opcode + c[i].rx_bad_addr, 0);
		/* One QP per device: its counters are the device's. */
		CHECK_EQ(q[i].rx_ce, c[i].rx_ce);
		CHECK_EQ(q[i].cnp_sent, c[i].cnp_sent);
		CHECK_EQ(q[i].cnp_rcvd, c[i].cnp_rcvd);
		CHECK_EQ(q[i].cc_rate_cut, c[i].cc_rate_cut);
		CHECK_EQ(q[i].cc_rate_full, c[i].cc_rate_full);
	}
	for (i = 0; i < 2; i++)
		fn_mem_free(&m[i]);
	fn_pair_destroy(ep);
	fn_close();
	return 0;
}
