/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The synchronous API, as rdma-core's rdma_server and rdma_client use it: getaddrinfo, endpoints
 * (droce_cm_create_ep(): bound, or resolved with its QP and the CQs and channels the CM made),
 * a synchronous listener whose droce_cm_get_request() gives the request's id with its QP
 * made and its event in id->event, accept and connect that return once established (the
 * active side's REP private data readable in id->event), SEND both ways, disconnect that
 * returns with DISCONNECTED. Server and client are two threads of one process. Also: a
 * synchronous connect to a closed port fails with ECONNREFUSED, getaddrinfo's bad input, and a
 * passive result made from hints alone (libfabric) takes their source address.
 *
 * Usage: cm_sync_test {inline|lcore}
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>

#include "cm_test.h"

#define PORT "7471"

static struct droce_qp_init_attr ep_attr(void)
{
	struct droce_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.sq_sig_all = 1;
	a.qp_type = IBV_QPT_RC;
	return a;
}

/* SEND @p len bytes of @p buf (registered as @p mr) and RECV as much into @p rbuf. */
static void post_recv(struct droce_cm_id *id, void *buf, uint32_t len, struct droce_mr *mr)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK_EQ(droce_post_recv(id->qp, &wr, &bad), 0);
}

static void post_send(struct droce_cm_id *id, void *buf, uint32_t len, struct droce_mr *mr)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;

	CHECK_EQ(droce_post_send(id->qp, &wr, &bad), 0);
}

static void *server(void *arg)
{
	struct rdma_addrinfo hints, *res;
	struct droce_qp_init_attr a = ep_attr();
	struct droce_cm_id *listen, *id;
	struct rdma_conn_param p;
	struct droce_mr *mr;
	char buf[64];
	struct ibv_wc wc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	CHECK_EQ(droce_cm_getaddrinfo("10.99.0.2", PORT, &hints, &res), 0);
	CHECK(res->ai_flags & RAI_PASSIVE && res->ai_src_addr != NULL);
	CHECK_EQ(res->ai_qp_type, IBV_QPT_RC);
	CHECK_EQ(droce_cm_create_ep(&listen, res, NULL, &a), 0);
	droce_cm_freeaddrinfo(res);
	CHECK_EQ(droce_cm_listen(listen, 0), 0);
	__atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);	/* the client may start */
	CHECK_EQ(droce_cm_get_request(listen, &id), 0);
	CHECK(id->event != NULL && id->event->event == RDMA_CM_EVENT_CONNECT_REQUEST);
	CHECK(id->qp != NULL && id->recv_cq != NULL && id->recv_cq_channel != NULL);
	mr = droce_reg_mr(id->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	post_recv(id, buf, sizeof(buf), mr);
	memset(&p, 0, sizeof(p));
	p.private_data = "srv";
	p.private_data_len = 4;
	CHECK_EQ(droce_cm_accept(id, &p), 0);	/* returns established */
	CHECK(id->event->event == RDMA_CM_EVENT_ESTABLISHED);
	wc = cmt_wc(id->recv_cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK(strcmp(buf, "ping") == 0);
	strcpy(buf, "pong");
	post_send(id, buf, 5, mr);
	wc = cmt_wc(id->send_cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(droce_cm_disconnect(id), 0);	/* the client's DREQ came, or ours gets a DREP */
	CHECK(id->event->event == RDMA_CM_EVENT_DISCONNECTED);
	CHECK_EQ(droce_dereg_mr(mr), 0);
	droce_cm_destroy_ep(id);
	droce_cm_destroy_ep(listen);
	return NULL;
}

static void client(void)
{
	struct rdma_addrinfo hints, *res;
	struct droce_qp_init_attr a = ep_attr();
	struct droce_cm_id *id;
	struct droce_mr *mr;
	char buf[64];
	struct ibv_wc wc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	CHECK_EQ(droce_cm_getaddrinfo("10.99.0.2", PORT, &hints, &res), 0);
	CHECK(res->ai_dst_addr != NULL && res->ai_src_addr == NULL);
	CHECK_EQ(droce_cm_create_ep(&id, res, NULL, &a), 0);	/* resolved, with its QP */
	droce_cm_freeaddrinfo(res);
	CHECK(id->qp != NULL && id->send_cq != NULL && id->send_cq_channel != NULL);
	CHECK(a.send_cq == id->send_cq);	/* the attributes say what was made */
	mr = droce_reg_mr(id->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	post_recv(id, buf + 32, 32, mr);
	CHECK_EQ(droce_cm_connect(id, NULL), 0);	/* returns established */
	CHECK(id->event->event == RDMA_CM_EVENT_ESTABLISHED);
	CHECK_EQ(id->event->param.conn.private_data_len, 196);
	CHECK(strcmp(id->event->param.conn.private_data, "srv") == 0);
	strcpy(buf, "ping");
	post_send(id, buf, 5, mr);
	wc = cmt_wc(id->send_cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	wc = cmt_wc(id->recv_cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK(strcmp(buf + 32, "pong") == 0);
	CHECK_EQ(droce_cm_disconnect(id), 0);
	CHECK(id->event->event == RDMA_CM_EVENT_DISCONNECTED);
	CHECK_EQ(droce_dereg_mr(mr), 0);
	droce_cm_destroy_ep(id);
}

static void refused(void)
{
	struct rdma_addrinfo hints, *res;
	struct droce_cm_id *id;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	CHECK_EQ(droce_cm_getaddrinfo("10.99.0.2", "7472", &hints, &res), 0);
	CHECK_EQ(droce_cm_create_ep(&id, res, NULL, NULL), 0);
	droce_cm_freeaddrinfo(res);
	errno = 0;
	CHECK_EQ(droce_cm_connect(id, &(struct rdma_conn_param){ .qp_num = 0x55 }), -1);
	CHECK_EQ(errno, ECONNREFUSED);
	CHECK(id->event->event == RDMA_CM_EVENT_REJECTED);
	CHECK_EQ(id->event->status, DROCE_CM_REJ_INVALID_SERVICE_ID);
	droce_cm_destroy_ep(id);

	errno = 0;
	CHECK_EQ(droce_cm_getaddrinfo(NULL, NULL, NULL, &res), -1);
	CHECK_EQ(errno, EINVAL);
	rc = droce_cm_getaddrinfo("not-a-host.invalid", "1", &hints, &res);
	CHECK(rc != 0 && rc != -1);	/* getaddrinfo's EAI_* code, as librdmacm */
	hints.ai_flags = RAI_NUMERICHOST;
	CHECK(droce_cm_getaddrinfo("10.99", "x", &hints, &res) != 0);
}

/* Passive, with only hints (libfabric's verbs provider): the result has the hints' source
 * address, and an endpoint made from it binds to that address. */
static void passive_from_hints(void)
{
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_port = htons(7473) };
	struct rdma_addrinfo hints, *res;
	struct droce_cm_id *id;

	inet_pton(AF_INET, "10.99.0.2", &src.sin_addr);
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	hints.ai_src_addr = (struct sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	CHECK_EQ(droce_cm_getaddrinfo(NULL, NULL, &hints, &res), 0);
	CHECK(res->ai_flags & RAI_PASSIVE);
	CHECK(res->ai_src_len == sizeof(src) && memcmp(res->ai_src_addr, &src, sizeof(src)) == 0);
	CHECK_EQ(droce_cm_create_ep(&id, res, NULL, NULL), 0);
	CHECK(memcmp(&id->route.addr.src_addr, &src, sizeof(src)) == 0);
	droce_cm_destroy_ep(id);
	droce_cm_freeaddrinfo(res);
	/* Without a source address anywhere, the passive endpoint has nothing to bind. */
	hints.ai_src_addr = NULL;
	hints.ai_src_len = 0;
	CHECK_EQ(droce_cm_getaddrinfo(NULL, NULL, &hints, &res), 0);
	errno = 0;
	CHECK_EQ(droce_cm_create_ep(&id, res, NULL, NULL), -1);
	CHECK_EQ(errno, EINVAL);
	droce_cm_freeaddrinfo(res);
}

int main(int argc, char **argv)
{
	int listening = 0;
	pthread_t t;

	CHECK(argc == 2);
	cmt_init();
	CHECK_EQ(pthread_create(&t, NULL, server, &listening), 0);
	while (!__atomic_load_n(&listening, __ATOMIC_ACQUIRE))
		poll(NULL, 0, 1);
	client();
	CHECK_EQ(pthread_join(t, NULL), 0);
	refused();
	passive_from_hints();
	printf("cm sync: endpoints, get_request, accept/connect/disconnect returned their events "
	       "(%s engine)\n", argv[1]);
	return 0;
}
