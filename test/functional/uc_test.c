/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * UC between droce0 and droce1 over a link that drops 3 % of the RoCE frames (fault
 * injection), public API only. Multi-packet SEND and RDMA WRITE with immediate: the
 * requester completes every WR (no ACKs); the responder completes only messages that arrived
 * whole, with the right bytes, in order; a message that lost a packet completes nothing and
 * its receive WR serves the next message (WR ids complete without gaps); later messages
 * succeed; the drops are counted. argv: mode, optionally the GID both paths use (v4, v6 or
 * ll; fn_gid_arg()).
 */
#include <stdio.h>
#include <stdlib.h>

#include "fn_qp.h"

enum { N = 200, SLEN = 8192, NW = 64, WLEN = 6144, DEPTH = 256 };

struct side {
	struct fn_qp q;
	struct fn_mem mem;
};

static void send_all(struct side *a, struct side *b, enum ibv_wr_opcode op, unsigned int n,
		     uint32_t len)
{
	unsigned int i, done = 0;

	for (i = 0; i < n; i++) {
		uint8_t *src = a->mem.buf + (size_t)(i % 32) * len;
		uint64_t raddr = (uintptr_t)b->mem.buf + (size_t)i * len;

		fn_fill(src, len, i + 1000 * op);
		fn_post_send1(a->q.qp, i, op, src, len, a->mem.mr->lkey, i, NULL, 0, 0, raddr,
			      b->mem.mr->rkey, 0);
		if (i % 32 == 31 || i == n - 1) {
			/* The requester completes every WR in order, loss or not. */
			while (done <= i) {
				struct ibv_wc wc = fn_wait(a->q.cq);

				CHECK_EQ(wc.status, IBV_WC_SUCCESS);
				CHECK_EQ(wc.wr_id, done);
				done++;
			}
		}
	}
}

/* Receive completions until the link is quiet; check each; @return how many. */
static unsigned int recv_all(struct side *b, enum ibv_wr_opcode op, unsigned int n,
			     uint32_t len, bool *gap_then_ok)
{
	uint8_t *exp = malloc(len);
	unsigned int k = 0;
	int64_t last = -1;
	struct ibv_wc wc;
	uint64_t end;

	CHECK(exp != NULL);
	*gap_then_ok = false;
	end = pair_deadline(1.0);
	while (rte_get_tsc_cycles() < end) {
		uint32_t s;
		const uint8_t *got;

		if (droce_poll_cq(b->q.cq, 1, &wc) == 0) {
			pair_step();
			continue;
		}
		end = pair_deadline(1.0);
		s = ntohl(wc.imm_data);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wc_flags, IBV_WC_WITH_IMM);
		CHECK_EQ(wc.byte_len, len);
		CHECK_EQ(wc.wr_id, k);		/* no WR lost to a dropped message */
		CHECK(s < n && (int64_t)s > last);
		if ((int64_t)s > last + 1 && k > 0)
			*gap_then_ok = true;
		fn_fill(exp, len, s + 1000 * op);
		if (op == IBV_WR_SEND_WITH_IMM) {
			CHECK_EQ(wc.opcode, IBV_WC_RECV);
			got = b->mem.buf + (size_t)wc.wr_id * len;
		} else {
			CHECK_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
			got = b->mem.buf + (size_t)s * len;
		}
		CHECK(memcmp(got, exp, len) == 0);	/* whole and right, never partial */
		last = s;
		k++;
	}
	free(exp);
	return k;
}

static void run(struct side *a, struct side *b, enum ibv_wr_opcode op, unsigned int n,
		uint32_t len)
{
	struct droce_counters c0 = fn_counters(1), c1, f;
	unsigned int i, k;
	bool gap_then_ok;

	for (i = 0; i < n; i++)
		fn_post_recv(b->q.qp, i, b->mem.buf + (size_t)i * SLEN, op ==
			     IBV_WR_SEND_WITH_IMM ? len : 0, b->mem.mr->lkey);
	send_all(a, b, op, n, len);
	k = recv_all(b, op, n, len, &gap_then_ok);
	c1 = fn_counters(1);
	f = fn_counters(0);
	printf("uc %s: %u of %u messages of %u B completed whole; dropped: %llu messages, "
	       "%llu packets (link dropped %llu frames)\n",
	       op == IBV_WR_SEND_WITH_IMM ? "send_imm" : "write_imm", k, n, len,
	       (unsigned long long)(c1.rx_uc_msg_dropped - c0.rx_uc_msg_dropped),
	       (unsigned long long)(c1.rx_uc_pkt_dropped - c0.rx_uc_pkt_dropped),
	       (unsigned long long)f.fault_dropped);
	CHECK(k > n / 4 && k < n);
	CHECK(gap_then_ok);		/* messages after a loss succeed */
	CHECK(c1.rx_uc_msg_dropped + c1.rx_uc_pkt_dropped >
	      c0.rx_uc_msg_dropped + c0.rx_uc_pkt_dropped);
	CHECK_EQ(fn_state(b->q.qp), IBV_QPS_RTS);
	/* Flush the unused receive WRs: they complete with FLUSH_ERR, none was lost. */
	{
		struct ibv_qp_attr q = { .qp_state = IBV_QPS_ERR };
		unsigned int left = n - k;

		CHECK_EQ(droce_modify_qp(b->q.qp, &q, IBV_QP_STATE), 0);
		while (left-- > 0) {
			struct ibv_wc wc = fn_wait(b->q.cq);

			CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
			CHECK_EQ(wc.wr_id, n - 1 - left);
		}
	}
}

static void pair_up(struct side s[2], struct droce_pd *pd[2], int gid)
{
	int i;

	for (i = 0; i < 2; i++) {
		fn_qp_create(&s[i].q, i, pd[i], IBV_QPT_UC, NULL, DEPTH);
		CHECK_EQ(fn_state(s[i].q.qp), IBV_QPS_RESET);
	}
	fn_uc_connect(&s[0].q, &s[1].q, IBV_MTU_1024, gid);
	fn_uc_connect(&s[1].q, &s[0].q, IBV_MTU_1024, gid);
}

int main(int argc, char **argv)
{
	struct droce_pd *pd[2];
	struct side s[2];
	int i, gid;

	fn_open(argc, argv);
	gid = fn_gid_arg(argc > 2 ? argv[2] : "v4");
	for (i = 0; i < 2; i++) {
		pd[i] = fn_pd(i);
		fn_mem_reg(&s[i].mem, pd[i], (size_t)DEPTH * SLEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE, 0);
	}
	pair_up(s, pd, gid);
	run(&s[0], &s[1], IBV_WR_SEND_WITH_IMM, N, SLEN);
	for (i = 0; i < 2; i++)
		fn_qp_destroy(&s[i].q);
	pair_up(s, pd, gid);
	run(&s[0], &s[1], IBV_WR_RDMA_WRITE_WITH_IMM, NW, WLEN);
	for (i = 0; i < 2; i++) {
		fn_qp_destroy(&s[i].q);
		fn_mem_free(&s[i].mem);
		CHECK_EQ(droce_dealloc_pd(pd[i]), 0);
	}
	fn_check_gid_family(gid);
	fn_close();
	printf("ok\n");
	return 0;
}
