/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * An RC connection whose QPs the application makes and moves itself (rping -q, as
 * rdma_cm(7) allows): no QP on either id, the QP numbers in the connection parameters, every
 * transition from droce_cm_init_qp_attr() + droce_modify_qp(). The passive side moves its QP
 * to RTR and RTS before droce_cm_accept() (as rping does), so the receive PSN it is given then
 * must be the one the REP carries: the active side's send PSN after CONNECT_RESPONSE equals
 * it, each side's send PSN equals the other's receive PSN, and SENDs complete both ways. Then
 * droce_cm_establish(), ESTABLISHED on the passive side, disconnect.
 *
 * Bad input beside it: droce_cm_establish() before a CONNECT_RESPONSE and twice (EINVAL),
 * droce_cm_connect() with neither a QP nor parameters (EINVAL).
 *
 * Usage: cm_app_qp_test {inline|lcore}
 */
#include "cm_test.h"

#define PORT 7176

static struct droce_qp *app_qp(struct droce_cm_id *id, struct droce_cq *cq)
{
	struct droce_qp_init_attr a;
	struct ibv_qp_attr qa;
	struct droce_qp *qp;
	int mask;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 8;
	a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	qp = droce_create_qp(id->pd, &a);
	CHECK(qp != NULL);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	CHECK_EQ(droce_cm_init_qp_attr(id, &qa, &mask), 0);
	CHECK_EQ(droce_modify_qp(qp, &qa, mask), 0);
	return qp;
}

/* RTR then RTS from the CM's attributes; @return the receive and send PSNs it gave. */
static void to_rts(struct droce_cm_id *id, struct droce_qp *qp, uint32_t *rq_psn,
		   uint32_t *sq_psn)
{
	struct ibv_qp_attr qa;
	int mask;

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	CHECK_EQ(droce_cm_init_qp_attr(id, &qa, &mask), 0);
	CHECK(mask & IBV_QP_RQ_PSN);
	*rq_psn = qa.rq_psn;
	CHECK_EQ(droce_modify_qp(qp, &qa, mask), 0);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	CHECK_EQ(droce_cm_init_qp_attr(id, &qa, &mask), 0);
	CHECK(mask & IBV_QP_SQ_PSN);
	*sq_psn = qa.sq_psn;
	CHECK_EQ(droce_modify_qp(qp, &qa, mask), 0);
}

static void send_one(struct droce_qp *from, struct droce_mr *fmr, char *fbuf,
		     struct droce_cq *fcq, struct droce_qp *to, struct droce_mr *tmr, char *tbuf,
		     struct droce_cq *tcq, char fill)
{
	struct ibv_sge s = { .addr = (uintptr_t)tbuf, .length = 64, .lkey = tmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &s, .num_sge = 1 }, *br;
	struct ibv_send_wr swr, *bs;
	struct ibv_sge ss = { .addr = (uintptr_t)fbuf, .length = 64, .lkey = fmr->lkey };
	struct ibv_wc wc;

	CHECK_EQ(droce_post_recv(to, &rwr, &br), 0);
	memset(fbuf, fill, 64);
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 1;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(droce_post_send(from, &swr, &bs), 0);
	wc = cmt_wc(fcq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	wc = cmt_wc(tcq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 64);
	CHECK(tbuf[0] == fill && tbuf[63] == fill);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = cmt_addr("10.99.0.2", PORT), any = cmt_addr("0.0.0.0", PORT);
	struct droce_cm_event_channel *ch;
	struct droce_cm_id *lis, *cli, *srv;
	uint32_t c_rq, c_sq, s_rq, s_sq;
	struct droce_qp *cqp, *sqp;
	struct droce_cq *ccq, *scq;
	struct droce_mr *cmr, *smr;
	static char cbuf[64], sbuf[64];
	struct rdma_conn_param cp;
	struct droce_cm_event *ev;
	int i;

	CHECK(argc == 2);
	cmt_init();
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);
	CHECK_EQ(droce_cm_create_id(ch, &lis, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(lis, (struct sockaddr *)&any), 0);
	CHECK_EQ(droce_cm_listen(lis, 4), 0);

	CHECK_EQ(droce_cm_create_id(ch, &cli, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(cli, NULL, (struct sockaddr *)&sa, 2000), 0);
	cmt_drive_ctx = cli->verbs;
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_resolve_route(cli, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	FAILS(droce_cm_establish(cli), EINVAL);
	FAILS(droce_cm_connect(cli, NULL), EINVAL);	/* no QP and no parameters */

	ccq = cmt_cq(cli);
	cqp = app_qp(cli, ccq);
	cmr = droce_reg_mr(cli->pd, cbuf, sizeof(cbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(cmr != NULL);
	memset(&cp, 0, sizeof(cp));
	cp.qp_num = cqp->qp_num;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	CHECK_EQ(droce_cm_connect(cli, &cp), 0);

	/* Passive: its own QP, moved to RTS before the accept, as rping -q does. */
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	srv = ev->id;
	CHECK_EQ(ev->param.conn.qp_num, cqp->qp_num);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CHECK(srv->qp == NULL);
	scq = cmt_cq(srv);
	sqp = app_qp(srv, scq);
	smr = droce_reg_mr(srv->pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(smr != NULL);
	to_rts(srv, sqp, &s_rq, &s_sq);
	cp.qp_num = sqp->qp_num;
	CHECK_EQ(droce_cm_accept(srv, &cp), 0);

	/* Active: CONNECT_RESPONSE (no QP on the id), its QP moved, then the RTU. */
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	CHECK(ev->id == cli);
	CHECK_EQ(ev->param.conn.qp_num, sqp->qp_num);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	to_rts(cli, cqp, &c_rq, &c_sq);
	if (c_sq != s_rq || s_sq != c_rq) {
		fprintf(stderr, "PSNs: active sends from %#x, passive receives from %#x; passive "
			"sends from %#x, active receives from %#x\n", c_sq, s_rq, s_sq, c_rq);
		return 1;
	}
	CHECK_EQ(droce_cm_establish(cli), 0);
	FAILS(droce_cm_establish(cli), EINVAL);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CHECK(ev->id == srv);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);

	send_one(cqp, cmr, cbuf, ccq, sqp, smr, sbuf, scq, 'c');
	send_one(sqp, smr, sbuf, scq, cqp, cmr, cbuf, ccq, 's');

	CHECK_EQ(droce_cm_disconnect(cli), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK_EQ(droce_cm_disconnect(srv), 0);
	for (i = 0; i < 3; i++)	/* the DREP, then both ids leave timewait */
		CHECK_EQ(droce_cm_ack_cm_event(CMT_EXPECT(ch, i == 0 ? RDMA_CM_EVENT_DISCONNECTED :
				RDMA_CM_EVENT_TIMEWAIT_EXIT, 0)), 0);

	CHECK_EQ(droce_destroy_qp(cqp), 0);
	CHECK_EQ(droce_destroy_qp(sqp), 0);
	CHECK_EQ(droce_dereg_mr(cmr), 0);
	CHECK_EQ(droce_dereg_mr(smr), 0);
	CHECK_EQ(droce_destroy_cq(ccq), 0);
	CHECK_EQ(droce_destroy_cq(scq), 0);
	CHECK_EQ(droce_cm_destroy_id(srv), 0);
	CHECK_EQ(droce_cm_destroy_id(cli), 0);
	CHECK_EQ(droce_cm_destroy_id(lis), 0);
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	printf("application QPs: PSNs %#x/%#x agree, SENDs both ways, CONNECT_RESPONSE + "
	       "establish (%s engine)\n", c_sq, s_sq, argv[1]);
	return 0;
}
