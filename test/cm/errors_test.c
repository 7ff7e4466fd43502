/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Every misuse of the CM API fails with librdmacm's errno and changes nothing: NULL arguments,
 * unknown port spaces and families, an address no device has (EADDRNOTAVAIL; 127.0.0.1 is a
 * wildcard, as in Linux: test cm_loopback_*), ports in use (EADDRINUSE, and
 * RDMA_OPTION_ID_REUSEADDR sharing), calls in the wrong state (resolve_route before the
 * address, connect before the route, accept/reject/establish/notify on an id that is no request,
 * listen twice, get_request on an asynchronous listener), oversized private data, options
 * (bad lengths, unknown ones), QP creation on an unbound id or of the wrong type, a channel
 * still in use, events (NULL, non-blocking and empty). After each refusal the id still works:
 * the test ends with a connection made through the ids it misused.
 *
 * Usage: cm_errors_test {inline|lcore}
 */
#include "cm_test.h"

static void bind_errors(struct droce_cm_event_channel *ch)
{
	struct sockaddr_in foreign = cmt_addr("192.0.2.7", 0);
	struct sockaddr_in a1 = cmt_addr("10.99.0.1", 5000), any = cmt_addr("0.0.0.0", 5000);
	struct sockaddr_in a2 = cmt_addr("10.99.0.2", 5000);
	struct sockaddr unix_sa = { .sa_family = AF_UNIX };
	struct droce_cm_id *x, *y, *z;
	int one = 1;

	CHECK_EQ(droce_cm_create_id(ch, &x, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_create_id(ch, &y, NULL, RDMA_PS_TCP), 0);
	FAILS(droce_cm_bind_addr(NULL, (struct sockaddr *)&a1), EINVAL);
	FAILS(droce_cm_bind_addr(x, NULL), EINVAL);
	FAILS(droce_cm_bind_addr(x, &unix_sa), EINVAL);
	FAILS(droce_cm_bind_addr(x, (struct sockaddr *)&foreign), EADDRNOTAVAIL);
	CHECK(x->verbs == NULL);	/* nothing happened */
	CHECK_EQ(droce_cm_bind_addr(x, (struct sockaddr *)&a1), 0);
	CHECK(x->verbs != NULL && x->pd != NULL);
	FAILS(droce_cm_bind_addr(x, (struct sockaddr *)&a2), EINVAL);	/* bound already */
	FAILS(droce_cm_bind_addr(y, (struct sockaddr *)&a1), EADDRINUSE);
	FAILS(droce_cm_bind_addr(y, (struct sockaddr *)&any), EADDRINUSE);	/* overlaps */
	CHECK_EQ(droce_cm_bind_addr(y, (struct sockaddr *)&a2), 0);	/* another address */
	/* Another port space: no conflict. */
	CHECK_EQ(droce_cm_create_id(ch, &z, NULL, RDMA_PS_UDP), 0);
	CHECK_EQ(droce_cm_bind_addr(z, (struct sockaddr *)&a1), 0);
	CHECK_EQ(droce_cm_destroy_id(z), 0);
	CHECK_EQ(droce_cm_destroy_id(x), 0);
	CHECK_EQ(droce_cm_destroy_id(y), 0);
	/* The port is free again once its ids are gone. */
	CHECK_EQ(droce_cm_create_id(ch, &x, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(x, (struct sockaddr *)&any), 0);
	CHECK_EQ(droce_cm_destroy_id(x), 0);

	/* REUSEADDR: shared by ids that both set it; not by a listener. */
	CHECK_EQ(droce_cm_create_id(ch, &x, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_create_id(ch, &y, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_set_option(x, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one,
				     sizeof(one)), 0);
	CHECK_EQ(droce_cm_set_option(y, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one,
				     sizeof(one)), 0);
	CHECK_EQ(droce_cm_bind_addr(x, (struct sockaddr *)&a1), 0);
	CHECK_EQ(droce_cm_bind_addr(y, (struct sockaddr *)&a1), 0);
	FAILS(droce_cm_listen(y, 1), EADDRINUSE);
	CHECK_EQ(droce_cm_destroy_id(x), 0);
	CHECK_EQ(droce_cm_listen(y, 1), 0);
	FAILS(droce_cm_listen(y, 1), EINVAL);	/* listening already */
	FAILS(droce_cm_set_option(y, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)),
	      EINVAL);
	FAILS(droce_cm_get_request(y, &x), EINVAL);	/* not a synchronous listener */
	CHECK_EQ(droce_cm_destroy_id(y), 0);
}

static void state_errors(struct droce_cm_event_channel *ch)
{
	struct sockaddr_in a1 = cmt_addr("10.99.0.1", 0), dst = cmt_addr("10.99.0.2", 5001);
	struct sockaddr_in6 d6;
	struct droce_cm_id *x;
	struct droce_qp_init_attr qa;
	struct rdma_conn_param p;
	struct ibv_qp_attr qpa;
	char big[200];
	uint8_t u8 = 1;
	int mask, i = 1;

	memset(&d6, 0, sizeof(d6));
	d6.sin6_family = AF_INET6;
	memset(&p, 0, sizeof(p));
	memset(big, 'x', sizeof(big));
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;

	CHECK_EQ(droce_cm_create_id(ch, &x, NULL, RDMA_PS_TCP), 0);
	FAILS(droce_cm_create_qp(x, NULL, &qa), EINVAL);	/* bound to no device yet */
	FAILS(droce_cm_create_qp(x, NULL, NULL), EINVAL);
	FAILS(droce_cm_resolve_route(x, 1000), EINVAL);
	FAILS(droce_cm_connect(x, &p), EINVAL);
	FAILS(droce_cm_accept(x, &p), EINVAL);
	FAILS(droce_cm_reject(x, NULL, 0), EINVAL);
	FAILS(droce_cm_establish(x), EINVAL);
	FAILS(droce_cm_disconnect(x), EINVAL);
	FAILS(droce_cm_notify(x, IBV_EVENT_COMM_EST), EINVAL);
	FAILS(droce_cm_notify(x, IBV_EVENT_QP_FATAL), EINVAL);
	FAILS(droce_cm_resolve_addr(x, NULL, NULL, 1000), EINVAL);
	FAILS(droce_cm_resolve_addr(x, (struct sockaddr *)&a1, (struct sockaddr *)&d6, 1000),
	      EINVAL);	/* families differ */
	mask = 0;
	qpa.qp_state = IBV_QPS_RTR;
	FAILS(droce_cm_init_qp_attr(x, &qpa, &mask), EINVAL);	/* no connection yet */
	qpa.qp_state = IBV_QPS_INIT;
	CHECK_EQ(droce_cm_init_qp_attr(x, &qpa, &mask), 0);
	CHECK_EQ(mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	CHECK_EQ(qpa.qp_access_flags, 0);	/* no remote access before a REQ */
	FAILS(droce_cm_init_qp_attr(x, NULL, &mask), EINVAL);

	/* Options. */
	FAILS(droce_cm_set_option(x, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &i, sizeof(i)), EINVAL);
	FAILS(droce_cm_set_option(x, RDMA_OPTION_ID, 77, &u8, 1), ENOSYS);
	FAILS(droce_cm_set_option(x, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, big, 64), ENOSYS);
	FAILS(droce_cm_set_option(x, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, NULL, 1), EINVAL);
	CHECK_EQ(droce_cm_set_option(x, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &u8, 1), 0);
	u8 = 32;
	FAILS(droce_cm_set_option(x, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &u8, 1), EINVAL);
	u8 = 16;
	CHECK_EQ(droce_cm_set_option(x, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &u8, 1), 0);

	/* Resolved: the QP's type must be the id's; oversized private data is refused. */
	CHECK_EQ(droce_cm_resolve_addr(x, NULL, (struct sockaddr *)&dst, 2000), 0);
	cmt_drive_ctx = x->verbs;
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	FAILS(droce_cm_resolve_addr(x, NULL, (struct sockaddr *)&dst, 2000), EINVAL);
	FAILS(droce_cm_connect(x, &p), EINVAL);	/* route not resolved */
	CHECK_EQ(droce_cm_resolve_route(x, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	CHECK_EQ(x->route.path_rec->packet_life_time, 15);	/* ACK_TIMEOUT 16 - 1 */
	qa.qp_type = IBV_QPT_UD;
	FAILS(droce_cm_create_qp(x, NULL, &qa), EINVAL);
	FAILS(droce_cm_connect(x, NULL), EINVAL);	/* no QP and no parameters */
	p.private_data = big;
	p.private_data_len = 57;	/* 92 - the 36-byte CMA header = 56 */
	FAILS(droce_cm_connect(x, &p), EINVAL);
	p.private_data = NULL;
	p.private_data_len = 4;
	FAILS(droce_cm_connect(x, &p), EINVAL);
	p.private_data_len = 0;
	p.responder_resources = 200;	/* above the device's 128 (0xff means "the maximum") */
	FAILS(droce_cm_connect(x, &p), EINVAL);
	CHECK_EQ(droce_cm_destroy_id(x), 0);
}

static void event_errors(struct droce_cm_event_channel *ch)
{
	struct droce_cm_event *ev;
	struct droce_cm_id *x;

	FAILS(droce_cm_get_cm_event(NULL, &ev), EINVAL);
	FAILS(droce_cm_get_cm_event(ch, NULL), EINVAL);
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	FAILS(droce_cm_get_cm_event(ch, &ev), EAGAIN);
	FAILS(droce_cm_ack_cm_event(NULL), EINVAL);
	FAILS(droce_cm_destroy_event_channel(NULL), EINVAL);
	CHECK_EQ(droce_cm_create_id(ch, &x, NULL, RDMA_PS_TCP), 0);
	FAILS(droce_cm_destroy_event_channel(ch), EBUSY);
	FAILS(droce_cm_destroy_id(NULL), EINVAL);
	FAILS(droce_cm_migrate_id(NULL, ch), EINVAL);
	CHECK_EQ(droce_cm_destroy_id(x), 0);
	FAILS(droce_cm_create_id(ch, NULL, NULL, RDMA_PS_TCP), EINVAL);
	FAILS(droce_cm_create_id(ch, &x, NULL, (enum rdma_port_space)0x1234), EINVAL);
	CHECK(strcmp(droce_cm_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT),
		     "RDMA_CM_EVENT_TIMEWAIT_EXIT") == 0);
	CHECK(strcmp(droce_cm_event_str((enum rdma_cm_event_type)99), "UNKNOWN EVENT") == 0);
	CHECK_EQ(droce_cm_get_src_port(NULL), 0);
}

/* After all that: a connection through fresh ids works, accept/reject errors on a request. */
static void still_works(struct droce_cm_event_channel *ch)
{
	struct sockaddr_in any = cmt_addr("0.0.0.0", 5002), dst = cmt_addr("10.99.0.2", 5002);
	struct droce_cm_id *lis, *cli, *srv;
	struct droce_cm_event *ev;
	struct droce_cq *c1, *c2;
	struct rdma_conn_param p;
	char big[200];

	memset(&p, 0, sizeof(p));
	memset(big, 'y', sizeof(big));
	CHECK_EQ(droce_cm_create_id(ch, &lis, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(lis, (struct sockaddr *)&any), 0);
	CHECK_EQ(droce_cm_listen(lis, 0), 0);
	CHECK_EQ(droce_cm_create_id(ch, &cli, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(cli, NULL, (struct sockaddr *)&dst, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_resolve_route(cli, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	c1 = cmt_cq(cli);
	cmt_qp(cli, c1, IBV_QPT_RC);
	FAILS(droce_cm_create_qp(cli, NULL, &(struct droce_qp_init_attr){ .send_cq = c1,
		.recv_cq = c1, .qp_type = IBV_QPT_RC }), EINVAL);	/* it has one */
	CHECK_EQ(droce_cm_connect(cli, &p), 0);
	FAILS(droce_cm_connect(cli, &p), EINVAL);	/* under way */
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	srv = ev->id;
	c2 = cmt_cq(srv);
	cmt_qp(srv, c2, IBV_QPT_RC);
	p.private_data = big;
	p.private_data_len = 197;	/* REP carries 196 */
	FAILS(droce_cm_accept(srv, &p), EINVAL);
	FAILS(droce_cm_reject(srv, big, 149), EINVAL);	/* REJ carries 148 */
	FAILS(droce_cm_reject(srv, NULL, 5), EINVAL);
	p.private_data_len = 196;
	CHECK_EQ(droce_cm_accept(srv, &p), 0);
	FAILS(droce_cm_accept(srv, &p), EINVAL);	/* answered */
	FAILS(droce_cm_reject(srv, NULL, 0), EINVAL);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	errno = 0;
	CHECK_EQ(droce_cm_notify(srv, IBV_EVENT_COMM_EST), -1);
	CHECK_EQ(errno, EISCONN);
	CHECK_EQ(droce_cm_disconnect(srv), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK_EQ(droce_cm_disconnect(cli), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK_EQ(droce_cm_disconnect(cli), 0);	/* again: nothing to send, as Linux */
	droce_cm_destroy_qp(cli);
	droce_cm_destroy_qp(srv);
	CHECK_EQ(droce_destroy_cq(c1), 0);
	CHECK_EQ(droce_destroy_cq(c2), 0);
	CHECK_EQ(droce_cm_destroy_id(cli), 0);	/* in timewait: the events are dropped */
	CHECK_EQ(droce_cm_destroy_id(srv), 0);
	CHECK_EQ(droce_cm_destroy_id(lis), 0);
}

int main(int argc, char **argv)
{
	struct droce_cm_event_channel *ch;

	CHECK(argc == 2);
	cmt_init();
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);
	bind_errors(ch);
	state_errors(ch);
	event_errors(ch);
	still_works(ch);
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	printf("cm errors: every misuse refused with librdmacm's errno (%s engine)\n", argv[1]);
	return 0;
}
