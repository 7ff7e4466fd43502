/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * UD "connections" (RDMA_PS_UDP: SIDR_REQ / SIDR_REP) between droce0 and droce1: the UD QPs
 * are in RTS with Q_Key RDMA_UDP_QKEY as soon as droce_cm_create_qp() returns; the passive
 * side sees the request's 180 bytes of private data, accepts with 136; the active side gets
 * ESTABLISHED with what it needs to send (AH attributes, QPN, Q_Key) and a datagram sent with
 * them arrives, GRH and all. A rejection is UNREACHABLE with SIDR status 2, nobody listening
 * status 1; a SIDR_REQ nobody answers is retried, then UNREACHABLE -ETIMEDOUT. Multicast: two
 * UD ids (one per device) join 239.1.2.3, MULTICAST_JOIN gives the group's AH attributes,
 * QPN 0xFFFFFF, RDMA_UDP_QKEY and the join's context; a datagram to the group reaches the
 * other member; joining twice, a non-group address, an RC id, and leaving a group not joined
 * are refused.
 *
 * Usage: cm_ud_test {inline|lcore}
 */
#include "cm_test.h"

static struct droce_cm_event_channel *ch;

static struct droce_cm_id *ud_active(uint16_t port)
{
	struct sockaddr_in dst = cmt_addr("10.99.0.2", port);
	struct droce_cm_id *id;

	CHECK_EQ(droce_cm_create_id(ch, &id, NULL, RDMA_PS_UDP), 0);
	CHECK_EQ(id->qp_type, IBV_QPT_UD);
	CHECK_EQ(droce_cm_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	cmt_drive_ctx = id->verbs;
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_resolve_route(id, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return id;
}

static void datagram(void)
{
	static const char hello[] = "a UD hello through SIDR";
	struct sockaddr_in sa = cmt_addr("10.99.0.2", 7000);
	struct droce_cm_id *l, *a, *b;
	struct droce_cm_event *ev;
	struct rdma_conn_param p;
	struct droce_qp_init_attr qa;
	struct ibv_qp_attr attr;
	struct droce_ah *ah;
	struct droce_mr *amr, *bmr;
	struct droce_cq *acq, *bcq;
	static char abuf[256], bbuf[256 + 40];
	struct ibv_sge sge;
	struct ibv_send_wr swr, *bs;
	struct ibv_recv_wr rwr, *br;
	struct ibv_wc wc;
	uint32_t qkey, qpn;

	CHECK_EQ(droce_cm_create_id(ch, &l, NULL, RDMA_PS_UDP), 0);
	CHECK_EQ(droce_cm_bind_addr(l, (struct sockaddr *)&sa), 0);
	CHECK_EQ(droce_cm_listen(l, 4), 0);
	a = ud_active(7000);
	acq = cmt_cq(a);
	cmt_qp(a, acq, IBV_QPT_UD);
	CHECK_EQ(droce_query_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_QKEY, &qa), 0);
	CHECK_EQ(attr.qp_state, IBV_QPS_RTS);
	CHECK_EQ(attr.qkey, RDMA_UDP_QKEY);
	memset(&p, 0, sizeof(p));
	p.private_data = "sidr";
	p.private_data_len = 5;
	CHECK_EQ(droce_cm_connect(a, &p), 0);

	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	b = ev->id;
	CHECK(ev->listen_id == l);
	CHECK_EQ(b->qp_type, IBV_QPT_UD);
	CHECK_EQ(ev->param.ud.private_data_len, 180);
	CHECK_EQ(memcmp(ev->param.ud.private_data, "sidr", 5), 0);
	bcq = cmt_cq(b);
	cmt_qp(b, bcq, IBV_QPT_UD);
	bmr = droce_reg_mr(b->pd, bbuf, sizeof(bbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(bmr != NULL);
	sge.addr = (uintptr_t)bbuf;
	sge.length = sizeof(bbuf);
	sge.lkey = bmr->lkey;
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	CHECK_EQ(droce_post_recv(b->qp, &rwr, &br), 0);
	memset(&p, 0, sizeof(p));
	p.private_data = "welcome";
	p.private_data_len = 8;
	CHECK_EQ(droce_cm_accept(b, &p), 0);	/* UD: returns at once */
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);

	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CHECK(ev->id == a);
	CHECK_EQ(ev->param.ud.private_data_len, 136);
	CHECK_EQ(memcmp(ev->param.ud.private_data, "welcome", 8), 0);
	CHECK_EQ(ev->param.ud.qp_num, b->qp->qp_num);
	CHECK_EQ(ev->param.ud.qkey, RDMA_UDP_QKEY);
	CHECK_EQ(ev->param.ud.ah_attr.is_global, 1);
	ah = droce_create_ah(a->pd, &ev->param.ud.ah_attr);
	CHECK(ah != NULL);
	qkey = ev->param.ud.qkey;
	qpn = ev->param.ud.qp_num;
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);

	memcpy(abuf, hello, sizeof(hello));
	amr = droce_reg_mr(a->pd, abuf, sizeof(abuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(amr != NULL);
	sge.addr = (uintptr_t)abuf;
	sge.length = sizeof(hello);
	sge.lkey = amr->lkey;
	memset(&swr, 0, sizeof(swr));
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = qpn;
	swr.wr.ud.remote_qkey = qkey;
	CHECK_EQ(droce_post_send(a->qp, &swr, &bs), 0);
	wc = cmt_wc(acq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	wc = cmt_wc(bcq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, 40 + sizeof(hello));
	CHECK_EQ(wc.src_qp, a->qp->qp_num);
	CHECK_EQ(memcmp(bbuf + 40, hello, sizeof(hello)), 0);

	CHECK_EQ(droce_destroy_ah(ah), 0);
	CHECK_EQ(droce_dereg_mr(amr), 0);
	CHECK_EQ(droce_dereg_mr(bmr), 0);
	droce_cm_destroy_qp(a);
	droce_cm_destroy_qp(b);
	CHECK_EQ(droce_destroy_cq(acq), 0);
	CHECK_EQ(droce_destroy_cq(bcq), 0);
	CHECK_EQ(droce_cm_destroy_id(a), 0);
	CHECK_EQ(droce_cm_destroy_id(b), 0);
	CHECK_EQ(droce_cm_destroy_id(l), 0);
}

static void refusals(void)
{
	struct sockaddr_in sa = cmt_addr("10.99.0.2", 7001);
	struct rdma_conn_param p;
	struct droce_cm_event *ev;
	struct droce_cm_id *l, *a;
	struct droce_cq *cq;

	memset(&p, 0, sizeof(p));
	p.qp_num = 0x123;	/* no QP on the id: the parameter names it */
	CHECK_EQ(droce_cm_create_id(ch, &l, NULL, RDMA_PS_UDP), 0);
	CHECK_EQ(droce_cm_bind_addr(l, (struct sockaddr *)&sa), 0);
	CHECK_EQ(droce_cm_listen(l, 4), 0);

	a = ud_active(7001);
	cq = cmt_cq(a);
	cmt_qp(a, cq, IBV_QPT_UD);
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	CHECK_EQ(droce_cm_reject(ev->id, "no", 3), 0);
	CHECK_EQ(droce_cm_destroy_id(ev->id), 0);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_UNREACHABLE, DROCE_CM_SIDR_REJECT);
	droce_cm_destroy_qp(a);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_cm_destroy_id(a), 0);

	a = ud_active(7002);	/* nobody on 7002 */
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_UNREACHABLE, DROCE_CM_SIDR_UNSUPPORTED);
	CHECK_EQ(droce_cm_destroy_id(a), 0);
	CHECK_EQ(droce_cm_destroy_id(l), 0);
}

static struct droce_cm_id *ud_bound(const char *ip, struct droce_cq **cq)
{
	struct sockaddr_in sa = cmt_addr(ip, 0);
	struct droce_cm_id *id;

	CHECK_EQ(droce_cm_create_id(ch, &id, NULL, RDMA_PS_UDP), 0);
	CHECK_EQ(droce_cm_bind_addr(id, (struct sockaddr *)&sa), 0);
	*cq = cmt_cq(id);
	cmt_qp(id, *cq, IBV_QPT_UD);
	return id;
}

static void multicast(void)
{
	struct sockaddr_in grp = cmt_addr("239.1.2.3", 0), uni = cmt_addr("10.99.0.9", 0);
	static char sbuf[64] = "to the group", rbuf[64 + 40];
	struct droce_cm_id *a, *b, *rc;
	struct droce_cq *acq, *bcq;
	struct droce_mr *smr, *rmr;
	struct droce_cm_event *ev;
	struct droce_ah *ah = NULL;
	struct ibv_sge sge;
	struct ibv_send_wr swr, *bs;
	struct ibv_recv_wr rwr, *br;
	struct ibv_wc wc;
	int i;

	a = ud_bound("10.99.0.1", &acq);
	b = ud_bound("10.99.0.2", &bcq);
	cmt_drive_ctx = a->verbs;
	CHECK_EQ(droce_cm_join_multicast(a, (struct sockaddr *)&grp, (void *)0xa), 0);
	CHECK_EQ(droce_cm_join_multicast(b, (struct sockaddr *)&grp, (void *)0xb), 0);
	for (i = 0; i < 2; i++) {
		ev = CMT_EXPECT(ch, RDMA_CM_EVENT_MULTICAST_JOIN, 0);
		CHECK(ev->param.ud.private_data == (ev->id == a ? (void *)0xa : (void *)0xb));
		CHECK_EQ(ev->param.ud.qp_num, 0xffffff);
		CHECK_EQ(ev->param.ud.qkey, RDMA_UDP_QKEY);
		CHECK_EQ(ev->param.ud.ah_attr.grh.dgid.raw[15], 3);
		CHECK_EQ(ev->param.ud.ah_attr.grh.dgid.raw[10], 0xff);
		if (ev->id == a)
			ah = droce_create_ah(a->pd, &ev->param.ud.ah_attr);
		CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	}
	CHECK(ah != NULL);
	errno = 0;
	CHECK_EQ(droce_cm_join_multicast(a, (struct sockaddr *)&grp, NULL), -1);
	CHECK_EQ(errno, EADDRINUSE);
	errno = 0;
	CHECK_EQ(droce_cm_join_multicast(a, (struct sockaddr *)&uni, NULL), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(droce_cm_create_id(ch, &rc, NULL, RDMA_PS_TCP), 0);
	errno = 0;
	CHECK_EQ(droce_cm_join_multicast(rc, (struct sockaddr *)&grp, NULL), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(droce_cm_destroy_id(rc), 0);

	rmr = droce_reg_mr(b->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	smr = droce_reg_mr(a->pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(rmr != NULL && smr != NULL);
	sge = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), rmr->lkey };
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	CHECK_EQ(droce_post_recv(b->qp, &rwr, &br), 0);
	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = 0xffffff;
	swr.wr.ud.remote_qkey = RDMA_UDP_QKEY;
	CHECK_EQ(droce_post_send(a->qp, &swr, &bs), 0);
	CHECK_EQ(cmt_wc(acq).status, IBV_WC_SUCCESS);
	wc = cmt_wc(bcq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK(strcmp(rbuf + 40, "to the group") == 0);

	CHECK_EQ(droce_cm_leave_multicast(a, (struct sockaddr *)&grp), 0);
	errno = 0;
	CHECK_EQ(droce_cm_leave_multicast(a, (struct sockaddr *)&grp), -1);
	CHECK_EQ(errno, EADDRNOTAVAIL);
	CHECK_EQ(droce_destroy_ah(ah), 0);
	CHECK_EQ(droce_dereg_mr(rmr), 0);
	CHECK_EQ(droce_dereg_mr(smr), 0);
	droce_cm_destroy_qp(a);
	droce_cm_destroy_qp(b);	/* still in the group: destroy_qp leaves it first */
	CHECK_EQ(droce_destroy_cq(acq), 0);
	CHECK_EQ(droce_destroy_cq(bcq), 0);
	CHECK_EQ(droce_cm_destroy_id(a), 0);
	CHECK_EQ(droce_cm_destroy_id(b), 0);
}

int main(int argc, char **argv)
{
	struct droce_cm_counters c;
	struct droce_cm_id *a;
	struct droce_device **list;
	struct droce_context *d1;
	struct rdma_conn_param p;

	CHECK(argc == 2);
	cmt_init();
	list = droce_get_device_list(NULL);
	CHECK(list != NULL && list[1] != NULL);
	d1 = droce_open_device(list[1]);
	CHECK(d1 != NULL);
	droce_free_device_list(list);
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);

	/* First, while droce1 has no CM: the SIDR_REQ is retried, then UNREACHABLE. */
	memset(&p, 0, sizeof(p));
	p.qp_num = 0x321;
	a = ud_active(7003);
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	CHECK_EQ(droce_cm_ack_cm_event(cmt_expect(ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT,
						  10000, __LINE__)), 0);
	CHECK_EQ(droce_cm_query_counters(a->verbs, &c), 0);
	CHECK_EQ(c.tx_msg[DROCE_CM_MSG_SIDR_REQ], 6);
	CHECK_EQ(c.timeouts, 1);
	CHECK_EQ(droce_cm_destroy_id(a), 0);

	datagram();
	refusals();
	multicast();
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	CHECK_EQ(droce_close_device(d1), 0);
	printf("cm ud: SIDR resolved, datagram delivered, refusals reported (%s engine)\n", argv[1]);
	return 0;
}
