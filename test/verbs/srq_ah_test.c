/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* SRQ (create/modify/query/post/take/complete, limit event, EBUSY) and AH (create/destroy). */
#include "vt.h"

static struct droce_context *ctx;
static struct droce_pd *pd;
static struct droce_cq *cq;

static void test_srq(void)
{
	struct ibv_srq_init_attr ia = { .srq_context = &ia, .attr = { .max_wr = 10, .max_sge = 2 } };
	struct droce_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					 .cap = { .max_send_wr = 4, .max_recv_wr = 4 } };
	struct ibv_srq_attr sa;
	struct ibv_recv_wr r = { 0 }, *bad;
	struct verbs_recv_wqe_buf buf;
	struct droce_async_event ev;
	struct droce_srq *srq;
	struct droce_qp *qp;
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .byte_len = 3 };
	int i;

	srq = droce_create_srq(pd, &ia);
	CHECK(srq != NULL && srq->srq_context == &ia && srq->pd == pd);
	CHECK(ia.attr.max_wr >= 10);
	CHECK_EQ(droce_query_srq(srq, &sa), 0);
	CHECK(sa.max_wr == ia.attr.max_wr && sa.max_sge == 2 && sa.srq_limit == 0);
	qa.srq = srq;
	qp = droce_create_qp(pd, &qa);
	CHECK(qp != NULL && qp->srq == srq);
	CHECK_EQ(qa.cap.max_recv_wr, 0);
	CHECK_EQ(droce_destroy_srq(srq), EBUSY);
	vt_walk(qp, IBV_QPS_RTS);
	CHECK_EQ(droce_post_recv(qp, &r, &bad), EINVAL);	/* receives go to the SRQ */
	for (i = 0; i < (int)ia.attr.max_wr; i++) {
		r.wr_id = i;
		CHECK_EQ(droce_post_srq_recv(srq, &r, &bad), 0);
	}
	CHECK_EQ(droce_post_srq_recv(srq, &r, &bad), ENOMEM);
	CHECK(bad == &r);
	/* Limit: armed at 8, fires once when fewer than 8 WQEs remain. */
	sa.srq_limit = 8;
	CHECK_EQ(droce_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
	CHECK_EQ(verbs_srq_take(srq, &buf), 0);
	CHECK_EQ(buf.wqe.wr_id, 0);
	CHECK_EQ(verbs_srq_complete(qp, buf.wqe.wr_id, &wc, false), 0);
	for (i = 1; i < (int)ia.attr.max_wr - 7; i++)
		CHECK_EQ(verbs_srq_take(srq, &buf), 0);
	CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
	CHECK(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq);
	droce_ack_async_event(&ev);
	CHECK_EQ(droce_query_srq(srq, &sa), 0);
	CHECK_EQ(sa.srq_limit, 0);	/* disarmed */
	{
		struct ibv_wc out;

		CHECK_EQ(droce_poll_cq(cq, 1, &out), 1);
		CHECK(out.wr_id == 0 && out.byte_len == 3 && out.qp_num == qp->qp_num);
	}
	/* ERR on a QP with an SRQ: LAST_WQE_REACHED; the SRQ's WQEs stay in the SRQ. */
	vt_to(qp, IBV_QPS_ERR);
	CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
	CHECK(ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == qp);
	droce_ack_async_event(&ev);
	CHECK_EQ(verbs_srq_take(srq, &buf), 0);
	/* Bad inputs. */
	sa.srq_limit = 1000;
	CHECK_EQ(droce_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL);
	CHECK_EQ(droce_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL);
	CHECK_EQ(droce_modify_srq(srq, &sa, 1 << 5), EINVAL);
	CHECK_EQ(droce_modify_srq(NULL, &sa, IBV_SRQ_LIMIT), EINVAL);
	CHECK_EQ(droce_query_srq(NULL, &sa), EINVAL);
	r.num_sge = 3;
	CHECK_EQ(droce_post_srq_recv(srq, &r, &bad), EINVAL);
	CHECK_EQ(droce_post_srq_recv(NULL, &r, &bad), EINVAL);
	ia.attr.max_wr = 0;
	errno = 0;
	CHECK(droce_create_srq(pd, &ia) == NULL && errno == EINVAL);
	ia.attr.max_wr = DROCE_MAX_SRQ_WR + 1;
	CHECK(droce_create_srq(pd, &ia) == NULL && errno == EINVAL);
	ia.attr.max_wr = 4;
	ia.attr.max_sge = DROCE_MAX_SGE + 1;
	CHECK(droce_create_srq(pd, &ia) == NULL && errno == EINVAL);
	CHECK(droce_create_srq(NULL, &ia) == NULL && errno == EINVAL);
	CHECK_EQ(droce_dealloc_pd(pd), EBUSY);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	CHECK_EQ(droce_destroy_srq(srq), 0);
	CHECK_EQ(droce_destroy_srq(NULL), EINVAL);
}

static void test_ah(void)
{
	struct ibv_qp_attr a;
	struct droce_ah *ah;

	vt_fill(&a);
	ah = droce_create_ah(pd, &a.ah_attr);
	CHECK(ah != NULL);
	CHECK_EQ(droce_dealloc_pd(pd), EBUSY);
	CHECK_EQ(droce_destroy_ah(ah), 0);
	a.ah_attr.is_global = 0;	/* RoCE: GRH required */
	errno = 0;
	CHECK(droce_create_ah(pd, &a.ah_attr) == NULL && errno == EINVAL);
	vt_fill(&a);
	a.ah_attr.port_num = 2;
	CHECK(droce_create_ah(pd, &a.ah_attr) == NULL && errno == EINVAL);
	vt_fill(&a);
	a.ah_attr.grh.sgid_index = DROCE_MAX_GID;
	CHECK(droce_create_ah(pd, &a.ah_attr) == NULL && errno == EINVAL);
	CHECK(droce_create_ah(NULL, &a.ah_attr) == NULL && errno == EINVAL);
	CHECK(droce_create_ah(pd, NULL) == NULL && errno == EINVAL);
	CHECK_EQ(droce_destroy_ah(NULL), EINVAL);
}

int main(void)
{
	ctx = vt_open(0);
	pd = droce_alloc_pd(ctx);
	cq = droce_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(pd != NULL && cq != NULL);
	test_srq();
	test_ah();
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	printf("srq_ah_test: OK\n");
	return 0;
}
