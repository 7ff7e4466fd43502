/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * An RC connection through droce's CM between droce0 (active) and droce1 (passive), public API
 * only: resolve, listen, connect with private data, the request's parameters from the
 * acceptor's point of view, accept with private data, ESTABLISHED on both sides, the retry
 * counts each QP got (the passive QP retries RNR NAKs as the REQ said, the active one as the
 * REP said), a SEND and an RDMA READ over the QPs the CM moved (the READ needs the responder
 * resources negotiated),
 * disconnect from the active side (DISCONNECTED on both, TIMEWAIT_EXIT), and the CM counters
 * of each device (REQ, REP, RTU, DREQ, DREP once each, nothing dropped).
 *
 * Usage: cm_rc_test {inline|lcore}
 */
#include "cm_test.h"

#define PORT 7174

static void expect_retries(struct droce_qp *qp, uint8_t retry_cnt, uint8_t rnr_retry)
{
	struct droce_qp_init_attr init;
	struct ibv_qp_attr attr;

	CHECK_EQ(droce_query_qp(qp, &attr, IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY, &init), 0);
	CHECK_EQ(attr.retry_cnt, retry_cnt);
	CHECK_EQ(attr.rnr_retry, rnr_retry);
}

int main(int argc, char **argv)
{
	struct droce_cm_event_channel *ch = NULL;
	struct droce_cm_id *lis, *cli, *srv;
	struct sockaddr_in sa = cmt_addr("10.99.0.2", PORT), any = cmt_addr("0.0.0.0", PORT);
	struct rdma_conn_param cp;
	struct droce_cm_event *ev;
	struct droce_cm_counters c0, c1;
	struct droce_cq *ccq, *scq;
	struct droce_mr *cmr, *smr;
	static char cbuf[4096], sbuf[4096];
	static const char req_pd[] = "hello from the active side";
	static const char rep_pd[] = "and from the passive side";
	struct ibv_sge sge;
	struct ibv_send_wr swr, *bs;
	struct ibv_recv_wr rwr, *br;
	struct ibv_wc wc;
	int i;

	CHECK(argc == 2);
	cmt_init();
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);

	/* Passive: a wildcard listener. */
	CHECK_EQ(droce_cm_create_id(ch, &lis, (void *)0x1234, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(lis, (struct sockaddr *)&any), 0);
	CHECK_EQ(droce_cm_listen(lis, 4), 0);
	CHECK_EQ(ntohs(droce_cm_get_src_port(lis)), PORT);

	/* Active: resolve address and route. */
	CHECK_EQ(droce_cm_create_id(ch, &cli, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(cli, NULL, (struct sockaddr *)&sa, 2000), 0);
	CHECK(cli->verbs != NULL);
	cmt_drive_ctx = cli->verbs;
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(((struct sockaddr_in *)droce_cm_get_local_addr(cli))->sin_addr.s_addr,
		 inet_addr("10.99.0.1"));
	CHECK(ntohs(droce_cm_get_src_port(cli)) != 0);
	CHECK_EQ(droce_cm_resolve_route(cli, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	CHECK_EQ(cli->route.num_paths, 1);
	CHECK_EQ(cli->route.path_rec->mtu, IBV_MTU_1024);

	ccq = cmt_cq(cli);
	cmt_qp(cli, ccq, IBV_QPT_RC);
	cmr = droce_reg_mr(cli->pd, cbuf, sizeof(cbuf),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(cmr != NULL);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = req_pd;
	cp.private_data_len = sizeof(req_pd);
	cp.responder_resources = 2;
	cp.initiator_depth = 3;
	cp.retry_count = 5;
	cp.rnr_retry_count = 6;
	CHECK_EQ(droce_cm_connect(cli, &cp), 0);

	/* The request, as the acceptor sees it. */
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	CHECK(ev->listen_id == lis);
	srv = ev->id;
	CHECK(srv != lis && srv != cli);
	CHECK(srv->context == (void *)0x1234);
	CHECK_EQ(ev->param.conn.private_data_len, 56);
	CHECK_EQ(memcmp(ev->param.conn.private_data, req_pd, sizeof(req_pd)), 0);
	CHECK_EQ(ev->param.conn.responder_resources, 3);	/* the peer's initiator depth */
	CHECK_EQ(ev->param.conn.initiator_depth, 2);
	CHECK_EQ(ev->param.conn.retry_count, 5);
	CHECK_EQ(ev->param.conn.rnr_retry_count, 6);
	CHECK_EQ(ev->param.conn.qp_num, cli->qp->qp_num);
	CHECK_EQ(((struct sockaddr_in *)droce_cm_get_peer_addr(srv))->sin_addr.s_addr,
		 inet_addr("10.99.0.1"));
	CHECK_EQ(droce_cm_get_dst_port(srv), droce_cm_get_src_port(cli));
	CHECK_EQ(ntohs(droce_cm_get_src_port(srv)), PORT);
	CHECK(srv->verbs != NULL && srv->verbs != cli->verbs);

	scq = cmt_cq(srv);
	cmt_qp(srv, scq, IBV_QPT_RC);
	smr = droce_reg_mr(srv->pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(smr != NULL);
	sge.addr = (uintptr_t)sbuf;
	sge.length = sizeof(sbuf);
	sge.lkey = smr->lkey;
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 7;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	CHECK_EQ(droce_post_recv(srv->qp, &rwr, &br), 0);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = rep_pd;
	cp.private_data_len = sizeof(rep_pd);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.rnr_retry_count = 7;
	CHECK_EQ(droce_cm_accept(srv, &cp), 0);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);

	/* Both sides established; the active side sees the REP's parameters and data. */
	for (i = 0; i < 2; i++) {
		ev = CMT_EXPECT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
		if (ev->id == cli) {
			CHECK_EQ(ev->param.conn.private_data_len, 196);
			CHECK_EQ(memcmp(ev->param.conn.private_data, rep_pd, sizeof(rep_pd)), 0);
			CHECK_EQ(ev->param.conn.qp_num, srv->qp->qp_num);
			CHECK_EQ(ev->param.conn.initiator_depth, 1);
			CHECK_EQ(ev->param.conn.responder_resources, 1);
		} else {
			CHECK(ev->id == srv);
			CHECK_EQ(ev->param.conn.private_data_len, 0);
		}
		CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	}
	/* Each QP retries RNR NAKs as often as the other side said (the passive QP: the REQ's
	 * count, the active QP: the REP's); both retry as often as the REQ said. */
	expect_retries(cli->qp, 5, 7);
	expect_retries(srv->qp, 5, 6);

	/* Data: a SEND from the active side, an RDMA READ of its buffer by the passive side. */
	memset(cbuf, 'a', sizeof(cbuf));
	sge.addr = (uintptr_t)cbuf;
	sge.length = 100;
	sge.lkey = cmr->lkey;
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 1;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(droce_post_send(cli->qp, &swr, &bs), 0);
	wc = cmt_wc(scq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 7);
	CHECK_EQ(wc.byte_len, 100);
	wc = cmt_wc(ccq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	memset(cbuf, 'r', sizeof(cbuf));
	sge.addr = (uintptr_t)sbuf;
	sge.length = sizeof(sbuf);
	sge.lkey = smr->lkey;
	swr.opcode = IBV_WR_RDMA_READ;
	swr.wr.rdma.remote_addr = (uintptr_t)cbuf;
	swr.wr.rdma.rkey = cmr->rkey;
	CHECK_EQ(droce_post_send(srv->qp, &swr, &bs), 0);
	wc = cmt_wc(scq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK(sbuf[0] == 'r' && sbuf[sizeof(sbuf) - 1] == 'r');

	/* Disconnect from the active side: both learn it, then timewait ends. */
	CHECK_EQ(droce_cm_disconnect(cli), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK(ev->id == srv);	/* the DREQ arrived; the DREP waits for the passive side */
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CHECK_EQ(droce_cm_disconnect(srv), 0);
	for (i = 0; i < 3; i++) {
		ev = CMT_EXPECT(ch, i == 0 ? RDMA_CM_EVENT_DISCONNECTED :
			    RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
		CHECK(i != 0 || ev->id == cli);
		CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	}
	cmt_none(ch, 200, __LINE__);

	/* Counters: one of each message, each way; nothing dropped. */
	CHECK_EQ(droce_cm_query_counters(cli->verbs, &c0), 0);
	CHECK_EQ(droce_cm_query_counters(srv->verbs, &c1), 0);
	CHECK_EQ(c0.tx_msg[DROCE_CM_MSG_REQ], 1);
	CHECK_EQ(c1.rx_msg[DROCE_CM_MSG_REQ], 1);
	CHECK_EQ(c1.tx_msg[DROCE_CM_MSG_REP], 1);
	CHECK_EQ(c0.rx_msg[DROCE_CM_MSG_REP], 1);
	CHECK_EQ(c0.tx_msg[DROCE_CM_MSG_RTU], 1);
	CHECK_EQ(c1.rx_msg[DROCE_CM_MSG_RTU], 1);
	CHECK_EQ(c0.tx_msg[DROCE_CM_MSG_DREQ], 1);
	CHECK_EQ(c1.tx_msg[DROCE_CM_MSG_DREP], 1);
	CHECK_EQ(c0.rx_mads + c1.rx_mads, 5);
	CHECK_EQ(c0.rx_unmatched + c1.rx_unmatched + c0.rx_duplicates + c1.rx_duplicates +
		 c0.rx_bad_mad + c1.rx_bad_mad + c0.tx_retries + c1.tx_retries, 0);

	droce_cm_destroy_qp(cli);
	droce_cm_destroy_qp(srv);
	CHECK_EQ(droce_dereg_mr(cmr), 0);
	CHECK_EQ(droce_dereg_mr(smr), 0);
	CHECK_EQ(droce_destroy_cq(ccq), 0);
	CHECK_EQ(droce_destroy_cq(scq), 0);
	CHECK_EQ(droce_cm_destroy_id(srv), 0);
	CHECK_EQ(droce_cm_destroy_id(cli), 0);
	CHECK_EQ(droce_cm_destroy_id(lis), 0);
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	printf("cm rc: connected, SEND and READ, disconnected (%s engine)\n", argv[1]);
	return 0;
}
