/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The responder destroys its QP right after polling its last receive completion, and the
 * requester's last SEND still completes successfully: the ACK that was due is sent on the
 * QP's way out (transport_flush() from the engine's detach path). To make the ACK due at the
 * moment of the destroy, the SEND follows a large RDMA READ: its ACK is queued behind READ
 * responses that take the engine several iterations, while the receive completion is visible
 * at once. Repeated with the QP moved to RESET instead of destroyed, and to ERR (a SEND
 * alone there: a responder in ERR sends ACKs and NAKs but no READ response). Meant for the
 * dedicated lcore (argv[1] "lcore"), where the application races the engine; inline it runs
 * too.
 */
#include "fn.h"

enum { READ_LEN = 256 * 1024, ROUNDS = 4 };

enum end_how { END_DESTROY, END_RESET, END_ERR };

static void round_trip(enum end_how how, unsigned int round)
{
	struct fn_attr a = fn_attr_default();
	struct fn_mem l, r;
	struct fn_ep ep[2];
	struct ibv_sge rs, ss;
	struct ibv_send_wr w[2], *bad;
	struct ibv_qp_attr q = { .qp_state = how == END_RESET ? IBV_QPS_RESET : IBV_QPS_ERR };
	struct ibv_wc wc;

	a.timeout = 12;		/* ~17 ms: without the ACK the requester fails in ~70 ms */
	a.retry_cnt = 3;
	fn_pair(ep, &a);
	fn_mem_reg(&l, ep[0].pd, READ_LEN, FN_ACCESS_ALL, 0);
	fn_mem_reg(&r, ep[1].pd, READ_LEN, FN_ACCESS_ALL, 0);
	fn_fill(r.buf, READ_LEN, round);
	fn_post_recv(ep[1].qp, 1, r.buf, 64, r.mr->lkey);
	rs = (struct ibv_sge){ (uintptr_t)l.buf, READ_LEN, l.mr->lkey };
	ss = (struct ibv_sge){ (uintptr_t)l.buf, 8, l.mr->lkey };
	memset(w, 0, sizeof(w));
	w[0] = (struct ibv_send_wr){ .wr_id = 10, .next = &w[1], .sg_list = &rs, .num_sge = 1,
				     .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
	w[0].wr.rdma.remote_addr = (uintptr_t)r.buf;
	w[0].wr.rdma.rkey = r.mr->rkey;
	w[1] = (struct ibv_send_wr){ .wr_id = 11, .sg_list = &ss, .num_sge = 1,
				     .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	/* In ERR a responder sends no READ response (only ACKs and NAKs): the SEND alone. */
	CHECK_EQ(droce_post_send(ep[0].qp, how == END_ERR ? &w[1] : w, &bad), 0);
	/* The receiver: its last completion, then at once the end of its QP. */
	wc = fn_wait(ep[1].rcq);
	if (how == END_DESTROY) {
		CHECK_EQ(droce_destroy_qp(ep[1].qp), 0);
		ep[1].qp = NULL;
	} else {
		CHECK_EQ(droce_modify_qp(ep[1].qp, &q, IBV_QP_STATE), 0);
	}
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 8);
	/* The requester: the READ and the SEND complete, nothing was retransmitted. */
	if (how != END_ERR) {
		wc = fn_wait(ep[0].scq);
		if (wc.status != IBV_WC_SUCCESS)
			fprintf(stderr, "round %u, end %d: READ %s\n", round, how,
				droce_wc_status_str(wc.status));
		CHECK_EQ(wc.wr_id, 10);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK(memcmp(l.buf, r.buf, READ_LEN) == 0);
	}
	wc = fn_wait(ep[0].scq);
	CHECK_EQ(wc.wr_id, 11);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(fn_state(ep[0].qp), IBV_QPS_RTS);
	fn_mem_free(&l);
	fn_mem_free(&r);
	fn_pair_destroy(ep);
}

int main(int argc, char **argv)
{
	struct droce_counters c;
	unsigned int i;

	fn_open(argc, argv);
	for (i = 0; i < ROUNDS; i++) {
		round_trip(END_DESTROY, i);
		round_trip(END_RESET, i);
		round_trip(END_ERR, i);
	}
	c = fn_counters(0);
	CHECK_EQ(c.retry_exceeded, 0);
	CHECK_EQ(c.retransmits, 0);
	fn_close();
	printf("destroy after last completion (%s): ok\n", argv[1]);
	return 0;
}
