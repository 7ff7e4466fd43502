/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * CQs: create errors and granted size, FIFO poll with every ibv_wc field, one CQ for several
 * QPs and separate send/recv CQs, resize, EBUSY, and overrun -> IBV_EVENT_CQ_ERR read through
 * async_fd with poll(), QPs moved to ERR with IBV_EVENT_QP_FATAL, poll returning -EIO.
 */
#include <arpa/inet.h>
#include <poll.h>

#include "vt.h"

static void test_create(struct droce_context *ctx, struct droce_context *other)
{
	struct droce_comp_channel *och = droce_create_comp_channel(other);
	struct droce_cq *cq;

	CHECK(och != NULL);
	errno = 0;
	CHECK(droce_create_cq(NULL, 1, NULL, NULL, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(droce_create_cq(ctx, 0, NULL, NULL, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(droce_create_cq(ctx, -1, NULL, NULL, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(droce_create_cq(ctx, DROCE_MAX_CQE + 1, NULL, NULL, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(droce_create_cq(ctx, 1, NULL, och, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(droce_create_cq(ctx, 1, NULL, NULL, 1) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(droce_create_cq(ctx, 1, NULL, NULL, -1) == NULL && errno == EINVAL);
	CHECK_EQ(droce_destroy_comp_channel(och), 0);
	cq = droce_create_cq(ctx, 5, (void *)0x1234, NULL, 0);
	CHECK(cq != NULL && cq->cqe >= 5 && cq->cq_context == (void *)0x1234);
	CHECK(cq->context == ctx && cq->channel == NULL);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	cq = droce_create_cq(ctx, DROCE_MAX_CQE, NULL, NULL, 0);
	CHECK(cq != NULL && cq->cqe == DROCE_MAX_CQE);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_destroy_cq(NULL), EINVAL);
}

static void post_sends(struct droce_qp *qp, int n, uint64_t base, uint32_t len)
{
	static char buf[64];
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = 1 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int i;

	for (i = 0; i < n; i++) {
		wr.wr_id = base + i;
		CHECK_EQ(droce_post_send(qp, &wr, &bad), 0);
		CHECK(verbs_sq_next(qp) != NULL);
	}
}

static void test_poll_fifo(struct droce_pd *pd, struct droce_cq *cq)
{
	struct droce_qp *a = vt_qp(pd, IBV_QPT_RC, cq, cq, 16);
	struct droce_qp *b = vt_qp(pd, IBV_QPT_RC, cq, cq, 16);
	struct ibv_recv_wr rwr = { .wr_id = 77 }, *rbad;
	struct ibv_wc wc[8], in;
	int i;

	vt_walk(a, IBV_QPS_RTS);
	vt_walk(b, IBV_QPS_RTS);
	CHECK_EQ(droce_poll_cq(cq, 8, wc), 0);
	post_sends(a, 3, 100, 10);
	post_sends(b, 3, 200, 20);
	CHECK_EQ(verbs_sq_complete(a, 3), 0);
	CHECK_EQ(verbs_sq_complete(b, 3), 0);
	CHECK_EQ(verbs_sq_complete(b, 1), -EINVAL);	/* nothing handed out */
	CHECK_EQ(droce_poll_cq(cq, 4, wc), 4);
	CHECK_EQ(droce_poll_cq(cq, 8, wc + 4), 2);
	for (i = 0; i < 6; i++) {
		struct droce_qp *q = i < 3 ? a : b;

		CHECK_EQ(wc[i].wr_id, (i < 3 ? 100 : 200) + i % 3);
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		CHECK_EQ(wc[i].opcode, IBV_WC_SEND);
		CHECK_EQ(wc[i].byte_len, i < 3 ? 10 : 20);
		CHECK_EQ(wc[i].qp_num, q->qp_num);
		CHECK_EQ(wc[i].vendor_err, 0);
		CHECK_EQ(wc[i].wc_flags, 0);
	}
	/* A receive completion carries what the engine reports. */
	CHECK_EQ(droce_post_recv(a, &rwr, &rbad), 0);
	CHECK(verbs_rq_next(a) != NULL);
	memset(&in, 0, sizeof(in));
	in.status = IBV_WC_SUCCESS;
	in.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	in.byte_len = 4096;
	in.imm_data = htonl(0xabcd);
	in.src_qp = 0x42;
	in.wc_flags = IBV_WC_WITH_IMM | IBV_WC_GRH;
	in.sl = 3;
	CHECK_EQ(verbs_rq_complete(a, &in, false), 0);
	CHECK_EQ(droce_poll_cq(cq, 8, wc), 1);
	CHECK_EQ(wc[0].wr_id, 77);
	CHECK_EQ(wc[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK_EQ(wc[0].byte_len, 4096);
	CHECK_EQ(wc[0].imm_data, htonl(0xabcd));
	CHECK_EQ(wc[0].src_qp, 0x42);
	CHECK_EQ(wc[0].wc_flags, IBV_WC_WITH_IMM | IBV_WC_GRH);
	CHECK_EQ(wc[0].sl, 3);
	CHECK_EQ(wc[0].qp_num, a->qp_num);
	CHECK_EQ(verbs_rq_complete(a, &in, false), -EINVAL);
	/* Bad arguments. */
	CHECK_EQ(droce_poll_cq(NULL, 1, wc), -EINVAL);
	CHECK_EQ(droce_poll_cq(cq, -1, wc), -EINVAL);
	CHECK_EQ(droce_poll_cq(cq, 1, NULL), -EINVAL);
	CHECK_EQ(droce_poll_cq(cq, 0, NULL), 0);
	CHECK_EQ(droce_destroy_cq(cq), EBUSY);
	CHECK_EQ(droce_destroy_qp(a), 0);
	CHECK_EQ(droce_destroy_cq(cq), EBUSY);
	CHECK_EQ(droce_destroy_qp(b), 0);
}

static void test_split_cqs(struct droce_context *ctx, struct droce_pd *pd)
{
	struct droce_cq *scq = droce_create_cq(ctx, 8, NULL, NULL, 0);
	struct droce_cq *rcq = droce_create_cq(ctx, 8, NULL, NULL, 0);
	struct droce_qp *qp;
	struct ibv_recv_wr rwr = { .wr_id = 5 }, *rbad;
	struct ibv_wc wc;

	CHECK(scq != NULL && rcq != NULL);
	qp = vt_qp(pd, IBV_QPT_UC, scq, rcq, 8);
	vt_walk(qp, IBV_QPS_RTS);
	CHECK_EQ(droce_post_recv(qp, &rwr, &rbad), 0);
	post_sends(qp, 1, 9, 1);
	CHECK_EQ(verbs_sq_complete(qp, 1), 0);
	vt_to(qp, IBV_QPS_ERR);		/* the receive is flushed to the receive CQ */
	CHECK_EQ(droce_poll_cq(scq, 1, &wc), 1);
	CHECK_EQ(wc.wr_id, 9);
	CHECK_EQ(droce_poll_cq(rcq, 1, &wc), 1);
	CHECK_EQ(wc.wr_id, 5);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(droce_destroy_cq(scq), EBUSY);
	CHECK_EQ(droce_destroy_cq(rcq), EBUSY);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_cq(scq), 0);
	CHECK_EQ(droce_destroy_cq(rcq), 0);
}

static void test_resize(struct droce_context *ctx, struct droce_pd *pd)
{
	struct droce_cq *cq = droce_create_cq(ctx, 4, NULL, NULL, 0);
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 8);
	struct ibv_wc wc[8];
	int i;

	vt_walk(qp, IBV_QPS_RTS);
	post_sends(qp, 3, 0, 1);
	CHECK_EQ(verbs_sq_complete(qp, 3), 0);
	CHECK_EQ(droce_resize_cq(cq, 2), EINVAL);	/* 3 completions present */
	CHECK_EQ(droce_resize_cq(cq, 0), EINVAL);
	CHECK_EQ(droce_resize_cq(cq, DROCE_MAX_CQE + 1), EINVAL);
	CHECK_EQ(droce_resize_cq(NULL, 8), EINVAL);
	CHECK_EQ(droce_resize_cq(cq, 100), 0);
	CHECK(cq->cqe >= 100);
	post_sends(qp, 3, 3, 1);
	CHECK_EQ(verbs_sq_complete(qp, 3), 0);
	CHECK_EQ(droce_poll_cq(cq, 8, wc), 6);
	for (i = 0; i < 6; i++)
		CHECK_EQ(wc[i].wr_id, i);
	CHECK_EQ(droce_resize_cq(cq, 1), 0);
	CHECK_EQ(cq->cqe, 1);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_cq(cq), 0);
}

static void expect_event(struct droce_context *ctx, enum ibv_event_type t, void *elem)
{
	struct droce_async_event ev;

	CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
	CHECK_EQ(ev.event_type, t);
	CHECK(t == IBV_EVENT_CQ_ERR ? (void *)ev.element.cq == elem :
	      (void *)ev.element.qp == elem);
	droce_ack_async_event(&ev);
}

static void test_overrun(struct droce_context *ctx, struct droce_pd *pd)
{
	struct droce_cq *cq = droce_create_cq(ctx, 4, NULL, NULL, 0);
	struct droce_cq *other = droce_create_cq(ctx, 16, NULL, NULL, 0);
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 16);
	struct droce_qp *bystander = vt_qp(pd, IBV_QPT_RC, other, cq, 16);
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad;
	struct ibv_wc wc[8];
	unsigned int i;

	CHECK_EQ(cq->cqe, 4);
	vt_walk(qp, IBV_QPS_RTS);
	vt_walk(bystander, IBV_QPS_RTS);
	CHECK_EQ(droce_post_recv(bystander, &rwr, &rbad), 0);
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	post_sends(qp, 5, 0, 1);
	CHECK_EQ(verbs_sq_complete(qp, 4), 0);
	CHECK_EQ(verbs_sq_complete(qp, 1), -ENOSPC);	/* the fifth finds the CQ full */
	CHECK_EQ(poll(&pfd, 1, 1000), 1);
	CHECK(pfd.revents & POLLIN);
	expect_event(ctx, IBV_EVENT_CQ_ERR, cq);
	/* Every QP that feeds the CQ, on either queue, is failed. */
	expect_event(ctx, IBV_EVENT_QP_FATAL, qp);
	expect_event(ctx, IBV_EVENT_QP_FATAL, bystander);
	CHECK_EQ(qp->state, IBV_QPS_ERR);
	CHECK_EQ(bystander->state, IBV_QPS_ERR);
	/* The four completions written before the overrun are still read, in order; then -EIO. */
	CHECK_EQ(droce_poll_cq(cq, 3, wc), 3);
	CHECK_EQ(droce_poll_cq(cq, 8, wc + 3), 1);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(wc[i].wr_id, i);
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
	}
	CHECK_EQ(droce_poll_cq(cq, 8, wc), -EIO);
	CHECK_EQ(droce_poll_cq(cq, 0, NULL), -EIO);
	CHECK_EQ(droce_req_notify_cq(cq, 0), 0);	/* no channel: nothing to arm, as providers */
	CHECK_EQ(droce_resize_cq(cq, 64), EIO);
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_qp(bystander), 0);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_destroy_cq(other), 0);
}

int main(void)
{
	struct droce_context *ctx = vt_open(0), *ctx1 = vt_open(1);
	struct droce_pd *pd = droce_alloc_pd(ctx);
	struct droce_cq *cq;

	CHECK(pd != NULL);
	test_create(ctx, ctx1);
	cq = droce_create_cq(ctx, 32, NULL, NULL, 0);
	CHECK(cq != NULL);
	test_poll_fifo(pd, cq);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	test_split_cqs(ctx, pd);
	test_resize(ctx, pd);
	test_overrun(ctx, pd);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	CHECK_EQ(droce_close_device(ctx1), 0);
	printf("cq_test: OK\n");
	return 0;
}
