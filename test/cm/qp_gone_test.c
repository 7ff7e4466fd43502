/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * An id's QP destroyed with droce_destroy_qp() instead of through the id, as librdmacm
 * programs do with ibv_destroy_qp() (perftest -R destroys its QPs that way, then
 * disconnects): the id forgets the QP at once (id->qp NULL), and what the peer sends later is
 * served without touching the freed QP (ASan would see it):
 *
 *  1. the active side's QP destroyed while the passive side considers the request: the REP
 *     finds no QP to move, so the application gets CONNECT_RESPONSE (as librdmacm when the id
 *     has no QP); destroying the id then rejects the connection (REJECTED, consumer defined,
 *     on the passive side);
 *  2. an established connection whose active QP was destroyed: the passive side's DREQ still
 *     names the QP the REQ gave, so it is answered (DISCONNECTED on both sides, timewait),
 *     and no DREQ is dropped as naming another QP.
 *
 * Bad input beside it: droce_destroy_qp() of the id's QP a second time through the id
 * (droce_cm_destroy_qp(): nothing left, nothing freed twice); droce_cm_create_qp() on the
 * id afterwards makes a new QP.
 *
 * Usage: cm_qp_gone_test {inline|lcore}
 */
#include "cm_test.h"

#define PORT 7178

/* A connection request from a new active id (@p cli) to the listener, its QP on *@p ccq (made
 * on the first call); @return the passive id. */
static struct droce_cm_id *request(struct droce_cm_event_channel *ch, struct droce_cm_id **cli,
				   struct droce_cq **ccq)
{
	struct sockaddr_in sa = cmt_addr("10.99.0.2", PORT);
	struct droce_cm_event *ev;
	struct droce_cm_id *srv;

	CHECK_EQ(droce_cm_create_id(ch, cli, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(*cli, NULL, (struct sockaddr *)&sa, 2000), 0);
	cmt_drive_ctx = (*cli)->verbs;
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_resolve_route(*cli, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	if (*ccq == NULL)
		*ccq = cmt_cq(*cli);
	cmt_qp(*cli, *ccq, IBV_QPT_RC);
	CHECK_EQ(droce_cm_connect(*cli, NULL), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	srv = ev->id;
	CHECK_EQ(ev->param.conn.qp_num, (*cli)->qp->qp_num);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	return srv;
}

int main(int argc, char **argv)
{
	struct sockaddr_in any = cmt_addr("0.0.0.0", PORT);
	struct droce_cm_event_channel *ch;
	struct droce_cm_id *lis, *cli, *srv;
	struct droce_cm_counters c0, c1;
	struct droce_cq *ccq, *scq;
	struct droce_cm_event *ev;
	int i;

	CHECK(argc == 2);
	cmt_init();
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);
	CHECK_EQ(droce_cm_create_id(ch, &lis, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(lis, (struct sockaddr *)&any), 0);
	CHECK_EQ(droce_cm_listen(lis, 4), 0);

	/* 1. The active QP goes before the REP comes. */
	ccq = NULL;
	srv = request(ch, &cli, &ccq);
	CHECK_EQ(droce_destroy_qp(cli->qp), 0);
	CHECK(cli->qp == NULL);
	scq = cmt_cq(srv);
	cmt_qp(srv, scq, IBV_QPT_RC);
	CHECK_EQ(droce_cm_accept(srv, NULL), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	CHECK(ev->id == cli);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	droce_cm_destroy_qp(cli);	/* nothing left to destroy */
	CHECK_EQ(droce_cm_destroy_id(cli), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_REJECTED, DROCE_CM_REJ_CONSUMER_DEFINED);
	CHECK(ev->id == srv);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	droce_cm_destroy_qp(srv);
	CHECK_EQ(droce_cm_destroy_id(srv), 0);

	/* 2. An established connection loses its active QP; the passive side disconnects. */
	srv = request(ch, &cli, &ccq);
	cmt_qp(srv, scq, IBV_QPT_RC);
	CHECK_EQ(droce_cm_accept(srv, NULL), 0);
	for (i = 0; i < 2; i++)
		CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CHECK_EQ(droce_destroy_qp(cli->qp), 0);
	CHECK(cli->qp == NULL);
	CHECK_EQ(droce_cm_disconnect(srv), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK(ev->id == cli);	/* the DREQ was served */
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CHECK_EQ(droce_cm_disconnect(cli), 0);
	for (i = 0; i < 3; i++) {
		ev = CMT_EXPECT(ch, i == 0 ? RDMA_CM_EVENT_DISCONNECTED :
			    RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
		CHECK(i != 0 || ev->id == srv);
		CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	}
	CHECK_EQ(droce_cm_query_counters(cli->verbs, &c0), 0);
	CHECK_EQ(droce_cm_query_counters(srv->verbs, &c1), 0);
	CHECK_EQ(c0.rx_bad_qpn + c1.rx_bad_qpn, 0);
	CHECK_EQ(c0.rx_msg[DROCE_CM_MSG_DREQ], 1);
	CHECK_EQ(c1.rx_msg[DROCE_CM_MSG_DREP], 1);

	/* The id takes a new QP. */
	cmt_qp(cli, ccq, IBV_QPT_RC);
	droce_cm_destroy_qp(cli);
	CHECK(cli->qp == NULL);
	droce_cm_destroy_qp(srv);
	CHECK_EQ(droce_destroy_cq(ccq), 0);
	CHECK_EQ(droce_destroy_cq(scq), 0);
	CHECK_EQ(droce_cm_destroy_id(srv), 0);
	CHECK_EQ(droce_cm_destroy_id(cli), 0);
	CHECK_EQ(droce_cm_destroy_id(lis), 0);
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	printf("cm: QPs destroyed outside their ids forgotten; REP and DREQ served (%s engine)\n",
	       argv[1]);
	return 0;
}
