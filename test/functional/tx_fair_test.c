/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * No QP starves under TX backpressure: BUSY QP pairs keep their send queues full of 4 KiB
 * WRITEs from droce0 to droce1, so droce0's TX buffer has room for only a few QPs' packets per
 * engine iteration (droce1 receives one burst per iteration). Then one more QP, activated last,
 * posts a WRITE: it must complete within a fraction of a second while the others keep going
 * (before the engine rotated the start of its TX pass, the QPs listed first took the room every
 * iteration and this one waited until they ran out of work - here, never).
 */
#include "fn.h"

enum { BUSY = 24, DEPTH = 32, LEN = 4096 };

struct busy {
	struct fn_ep ep[2];
	struct fn_mem mem[2];
	uint32_t posted, done;
};

static struct busy b[BUSY + 1];	/* [BUSY]: the late one */

static void start(struct busy *x)
{
	struct fn_attr a = fn_attr_default();
	int i;

	a.depth = DEPTH;
	fn_pair(x->ep, &a);
	for (i = 0; i < 2; i++)
		fn_mem_reg(&x->mem[i], x->ep[i].pd, LEN, FN_ACCESS_ALL, (uint8_t)i);
}

static void post(struct busy *x)
{
	struct ibv_sge sg = { (uintptr_t)x->mem[0].buf, LEN, x->mem[0].mr->lkey };
	struct ibv_send_wr w = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	w.wr_id = x->posted++;
	w.wr.rdma.remote_addr = (uintptr_t)x->mem[1].buf;
	w.wr.rdma.rkey = x->mem[1].mr->rkey;
	CHECK_EQ(droce_post_send(x->ep[0].qp, &w, &bad), 0);
}

/* Reap completions of @p x; keep its queue full when @p refill. */
static void step(struct busy *x, bool refill)
{
	struct ibv_wc wc[DEPTH];
	int n, i;

	n = droce_poll_cq(x->ep[0].scq, DEPTH, wc);
	CHECK(n >= 0);
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		CHECK_EQ(wc[i].wr_id, x->done++);
	}
	while (refill && x->posted - x->done < DEPTH)
		post(x);
}

static void busy_steps(void)
{
	int i;

	for (i = 0; i < BUSY; i++)
		step(&b[i], true);
	pair_step();
}

static void drain(struct busy *x)
{
	uint64_t end = pair_deadline(FN_TIMEOUT_S);
	int i;

	while (x->done < x->posted) {
		CHECK(rte_get_tsc_cycles() < end);
		step(x, false);
		pair_step();
	}
	for (i = 0; i < 2; i++)
		fn_mem_free(&x->mem[i]);
	fn_pair_destroy(x->ep);
}

int main(int argc, char **argv)
{
	struct busy *late = &b[BUSY];
	uint64_t t0, end;
	uint32_t before;
	double ms;
	int i;

	fn_open(argc, argv);
	for (i = 0; i <= BUSY; i++)
		start(&b[i]);
	end = pair_deadline(0.3);		/* the busy ones fill the queues */
	while (rte_get_tsc_cycles() < end)
		busy_steps();
	before = b[0].done;
	t0 = rte_get_tsc_cycles();
	end = pair_deadline(2);
	post(late);
	while (late->done == 0) {
		CHECK(rte_get_tsc_cycles() < end);	/* starved */
		step(late, false);
		busy_steps();
	}
	ms = (double)(rte_get_tsc_cycles() - t0) * 1e3 / (double)rte_get_tsc_hz();
	printf("the late QP's WRITE completed after %.2f ms; QP 0 completed %u WRITEs meanwhile\n",
	       ms, b[0].done - before);
	CHECK(b[0].done > before);	/* the others were still sending: there was contention */
	for (i = 0; i <= BUSY; i++)
		drain(&b[i]);
	fn_close();
	printf("tx fairness (%s): ok\n", argv[1]);
	return 0;
}
