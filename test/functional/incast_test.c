/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Incast through a congested link (pair_bneck_*.ini: the engine's test bottleneck, 1 Gb/s,
 * CE marked above 32 KiB queued, tail drop above 1 MiB; [dcqcn] defaults): 8 QP pairs, each
 * droce0 QP keeping 4 64 KiB WRITEs outstanding, into the one bottleneck of droce0's port.
 * Every WRITE completes and every byte arrives (the drops are retransmitted); the queue
 * marked frames CE (bneck_marked), droce1 received each of them CE and sent CNPs, droce0 received
 * every CNP and cut rates, and each QP's counters sum to the device's.
 */
#include <inttypes.h>

#include "fn.h"

enum { NQP = 8, LEN = 64 * 1024, DEPTH = 4, ROUNDS = 16 };

struct pairx {
	struct fn_ep ep[2];
	struct fn_mem m[2];
};

static void post_write(struct pairx *p, uint64_t id, unsigned int slot)
{
	size_t off = (size_t)slot * LEN;
	struct ibv_sge s = { (uintptr_t)p->m[0].buf + off, LEN, p->m[0].mr->lkey };
	struct ibv_send_wr w = { .wr_id = id, .sg_list = &s, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	w.wr.rdma.remote_addr = (uintptr_t)p->m[1].buf + off;
	w.wr.rdma.rkey = p->m[1].mr->rkey;
	CHECK_EQ(droce_post_send(p->ep[0].qp, &w, &bad), 0);
}

int main(int argc, char **argv)
{
	struct fn_attr a = fn_attr_default();
	struct droce_counters c[2], sum[2];
	static struct pairx p[NQP];
	unsigned int k, r, i, s;

	fn_open(argc, argv);
	a.timeout = 14;		/* 67 ms */
	a.retry_cnt = 7;
	for (k = 0; k < NQP; k++) {
		fn_pair(p[k].ep, &a);
		for (s = 0; s < 2; s++)
			fn_mem_reg(&p[k].m[s], p[k].ep[s].pd, (size_t)LEN * DEPTH, FN_ACCESS_ALL, 0);
	}
	CHECK_EQ(droce_counters_reset(pair_ctx[0]), 0);
	CHECK_EQ(droce_counters_reset(pair_ctx[1]), 0);
	for (r = 0; r < ROUNDS; r++) {
		for (k = 0; k < NQP; k++) {
			fn_fill(p[k].m[0].buf, (size_t)LEN * DEPTH, r * NQP + k + 1);
			for (i = 0; i < DEPTH; i++)
				post_write(&p[k], i, i);
		}
		for (k = 0; k < NQP; k++)
			for (i = 0; i < DEPTH; i++)
				fn_wait_ok(p[k].ep[0].scq, i);
		for (k = 0; k < NQP; k++)
			CHECK(memcmp(p[k].m[0].buf, p[k].m[1].buf, (size_t)LEN * DEPTH) == 0);
	}
	fn_run(0.1);	/* the last ACKs and CNPs arrive */
	for (s = 0; s < 2; s++) {
		c[s] = fn_counters((int)s);
		memset(&sum[s], 0, sizeof(sum[s]));
		for (k = 0; k < NQP; k++) {
			struct droce_counters q = fn_qp_counters(p[k].ep[s].qp);

			sum[s].rx_ce += q.rx_ce;
			sum[s].cnp_sent += q.cnp_sent;
			sum[s].cnp_rcvd += q.cnp_rcvd;
			sum[s].cc_rate_cut += q.cc_rate_cut;
			sum[s].retransmits += q.retransmits;
		}
	}
	printf("incast: %u QPs: marked %" PRIu64 " dropped %" PRIu64 "; droce1 cnp_sent %" PRIu64
	       "; droce0 cuts %" PRIu64 " retransmits %" PRIu64 " timeouts %" PRIu64 "\n", NQP,
	       c[0].bneck_marked, c[0].bneck_dropped, c[1].cnp_sent, c[0].cc_rate_cut,
	       c[0].retransmits, c[0].rto_expired);
	CHECK(c[0].bneck_marked > 0);
	CHECK_EQ(c[1].rx_ce, c[0].bneck_marked + c[0].fault_ce_marked);
	CHECK(c[1].cnp_sent > 0);
	CHECK_EQ(c[1].cnp_sent + c[1].cnp_skipped, c[1].rx_ce);
	CHECK_EQ(c[0].cnp_rcvd, c[1].cnp_sent);
	CHECK(c[0].cc_rate_cut > 0);
	/* The requests the bottleneck dropped were retransmitted (and then some: go-back-N);
	 * the rest of what it dropped were droce0's own CNPs. */
	CHECK(c[0].retransmits + c[0].cnp_sent >= c[0].bneck_dropped);
	for (s = 0; s < 2; s++) {
		CHECK_EQ(sum[s].rx_ce, c[s].rx_ce);
		CHECK_EQ(sum[s].cnp_sent, c[s].cnp_sent);
		CHECK_EQ(sum[s].cnp_rcvd, c[s].cnp_rcvd);
		CHECK_EQ(sum[s].cc_rate_cut, c[s].cc_rate_cut);
		CHECK_EQ(sum[s].retransmits, c[s].retransmits);
		CHECK_EQ(c[s].rx_bad_frame + c[s].rx_bad_opcode + c[s].rx_bad_addr, 0);
	}
	for (k = 0; k < NQP; k++) {
		for (s = 0; s < 2; s++)
			fn_mem_free(&p[k].m[s]);
		fn_pair_destroy(p[k].ep);
	}
	fn_close();
	return 0;
}
