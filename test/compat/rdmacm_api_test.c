/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * lib/compat's librdmacm.so.1 through librdmacm's API only (<rdma/rdma_cma.h>,
 * <rdma/rdma_verbs.h>, <rdma/rsocket.h>; linked to droce's librdmacm.so.1 and
 * libibverbs.so.1): droce0 (10.99.0.1) and droce1 (10.99.0.2) of one process (DROCE_CONFIG:
 * test/cm/pair_{inline,lcore}.ini).
 * - Misuse and what droce does not do, each with librdmacm's errno: NULL channel, event or
 *   id (EINVAL), an unknown port space (EINVAL), an empty non-blocking channel (EAGAIN), an
 *   address no device has (EADDRNOTAVAIL; 127.0.0.1 binds, as in Linux, to no device),
 *   connect before resolving, accept of an id that is no
 *   request, disconnect of an unconnected id (EINVAL), rsockets (ENOSYS), ECE and XRC SRQs
 *   and send-only multicast (EOPNOTSUPP); destroying a channel with ids on it leaves it
 *   (its fd stays open, its ids work).
 * - An RC connection: ADDR_RESOLVED and ROUTE_RESOLVED with id->verbs and id->pd set, one
 *   context and PD per device for every id (two ids on droce0 share them, the acceptor's on
 *   droce1 differ), rdma_create_qp() with no CQs given (the library makes them, with
 *   completion channels), the request with its listener and the listener's context,
 *   rdma_accept, ESTABLISHED on both, rdma_post_send/rdma_post_recv and
 *   rdma_get_send_comp/rdma_get_recv_comp (blocking on those channels) with the data
 *   checked, DISCONNECTED on both.
 * - A thread in rdma_get_cm_event() when another destroys the channel (rping's event thread,
 *   never joined) keeps waiting; so does one entering just after.
 *
 * Usage: compat_rdmacm_api_test
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "check.h"

#define FAILS(call, err) do { \
	errno = 0; \
	CHECK_EQ((call), -1); \
	CHECK_EQ(errno, (err)); \
} while (0)

static struct sockaddr_in addr(const char *ip, uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	CHECK(inet_pton(AF_INET, ip, &a.sin_addr) == 1);
	return a;
}

/* The next event of @p ch within 5 s (the channel fd polled), which must be @p type. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch,
				    enum rdma_cm_event_type type, int line)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, 5000) != 1) {
		fprintf(stderr, "line %d: no event within 5 s, expected %s\n", line,
			rdma_event_str(type));
		exit(1);
	}
	CHECK_EQ(rdma_get_cm_event(ch, &ev), 0);
	if (ev->event != type || ev->status != 0) {
		fprintf(stderr, "line %d: got %s status %d, expected %s\n", line,
			rdma_event_str(ev->event), ev->status, rdma_event_str(type));
		exit(1);
	}
	return ev;
}
#define EXPECT_EVENT(ch, type) expect(ch, type, __LINE__)
#define GOT(ch, type) CHECK_EQ(rdma_ack_cm_event(EXPECT_EVENT(ch, type)), 0)

static void misuse(void)
{
	struct sockaddr_in lo = addr("127.0.0.1", 0), far = addr("10.99.0.2", 7179);
	struct sockaddr_in foreign = addr("192.0.2.7", 0);
	struct rdma_cm_join_mc_attr_ex mc;
	struct ibv_srq_init_attr_ex srq;
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct ibv_ece ece;

	ch = rdma_create_event_channel();
	CHECK(ch != NULL);
	FAILS(rdma_get_cm_event(NULL, &ev), EINVAL);
	FAILS(rdma_get_cm_event(ch, NULL), EINVAL);
	CHECK_EQ(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	FAILS(rdma_get_cm_event(ch, &ev), EAGAIN);
	FAILS(rdma_create_id(ch, NULL, NULL, RDMA_PS_TCP), EINVAL);
	FAILS(rdma_create_id(ch, &id, NULL, (enum rdma_port_space)0x9999), EINVAL);
	FAILS(rdma_destroy_id(NULL), EINVAL);

	CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	FAILS(rdma_bind_addr(id, (struct sockaddr *)&foreign), EADDRNOTAVAIL);
	CHECK_EQ(rdma_destroy_id(id), 0);
	CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(id, (struct sockaddr *)&lo), 0);	/* no device, as Linux */
	CHECK(id->verbs == NULL);
	CHECK_EQ(rdma_destroy_id(id), 0);
	CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	FAILS(rdma_connect(id, NULL), EINVAL);		/* nothing resolved */
	FAILS(rdma_accept(id, NULL), EINVAL);		/* not a connection request */
	FAILS(rdma_disconnect(id), EINVAL);		/* not connected */
	FAILS(rdma_set_local_ece(id, NULL), EINVAL);
	memset(&ece, 0, sizeof(ece));
	FAILS(rdma_set_local_ece(id, &ece), EOPNOTSUPP);
	FAILS(rdma_get_remote_ece(id, &ece), EOPNOTSUPP);
	memset(&srq, 0, sizeof(srq));
	srq.comp_mask = IBV_SRQ_INIT_ATTR_TYPE;
	srq.srq_type = IBV_SRQT_XRC;
	srq.attr.max_wr = 4;
	srq.attr.max_sge = 1;
	FAILS(rdma_create_srq_ex(id, &srq), EOPNOTSUPP);
	memset(&mc, 0, sizeof(mc));
	mc.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
	mc.addr = (struct sockaddr *)&far;
	mc.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
	FAILS(rdma_join_multicast_ex(id, &mc, NULL), EOPNOTSUPP);
	FAILS(rsocket(AF_INET, SOCK_STREAM, 0), ENOSYS);

	/* A channel with an id left on it is not destroyed (droce says so on stderr): its
	 * fd stays open and its id keeps working. */
	rdma_destroy_event_channel(ch);
	CHECK(fcntl(ch->fd, F_GETFD) != -1);
	CHECK_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&far, 2000), 0);
	CHECK(id->verbs != NULL);
	CHECK_EQ(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

#define MSG 256

static void rc_connection(void)
{
	struct sockaddr_in dst = addr("10.99.0.2", 7180);
	static uint8_t cbuf[MSG], sbuf[MSG];
	struct rdma_cm_id *lis, *cli, *cli2, *srv;
	struct rdma_event_channel *ch;
	struct ibv_qp_init_attr qa;
	struct rdma_conn_param cp;
	struct ibv_mr *cmr, *smr;
	struct rdma_cm_event *ev;
	struct ibv_wc wc;
	int i, n;

	ch = rdma_create_event_channel();
	CHECK(ch != NULL);
	CHECK_EQ(rdma_create_id(ch, &lis, (void *)0x77, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(lis, (struct sockaddr *)&dst), 0);
	CHECK_EQ(rdma_listen(lis, 2), 0);
	CHECK(lis->verbs != NULL);

	CHECK_EQ(rdma_create_id(ch, &cli, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_create_id(ch, &cli2, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_resolve_addr(cli, NULL, (struct sockaddr *)&dst, 2000), 0);
	CHECK_EQ(rdma_resolve_addr(cli2, NULL, (struct sockaddr *)&dst, 2000), 0);
	for (i = 0; i < 2; i++) {
		ev = EXPECT_EVENT(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
		CHECK(ev->id == cli || ev->id == cli2);
		CHECK_EQ(rdma_ack_cm_event(ev), 0);
	}
	CHECK(cli->verbs != NULL && cli->pd != NULL);
	CHECK(cli2->verbs == cli->verbs && cli2->pd == cli->pd);	/* one per device */
	CHECK(cli->verbs != lis->verbs);				/* droce0, droce1 */
	CHECK_EQ(((struct sockaddr_in *)rdma_get_local_addr(cli))->sin_addr.s_addr,
		 inet_addr("10.99.0.1"));
	CHECK_EQ(rdma_destroy_id(cli2), 0);
	CHECK_EQ(rdma_resolve_route(cli, 2000), 0);
	GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	CHECK_EQ(rdma_create_qp(cli, NULL, &qa), 0);	/* no CQs given: the library's */
	CHECK(cli->qp != NULL && cli->send_cq != NULL && cli->recv_cq != NULL);
	CHECK(cli->send_cq_channel != NULL && cli->recv_cq_channel != NULL);
	cmr = rdma_reg_msgs(cli, cbuf, MSG);
	CHECK(cmr != NULL);
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	CHECK_EQ(rdma_connect(cli, &cp), 0);

	ev = EXPECT_EVENT(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	CHECK(ev->listen_id == lis);
	srv = ev->id;
	CHECK(srv != lis && srv->context == (void *)0x77);
	CHECK(srv->verbs == lis->verbs && srv->pd != NULL);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	CHECK_EQ(rdma_create_qp(srv, NULL, &qa), 0);
	smr = rdma_reg_msgs(srv, sbuf, MSG);
	CHECK(smr != NULL);
	CHECK_EQ(rdma_post_recv(srv, (void *)1, sbuf, MSG, smr), 0);
	CHECK_EQ(rdma_accept(srv, &cp), 0);
	for (i = 0; i < 2; i++) {
		ev = EXPECT_EVENT(ch, RDMA_CM_EVENT_ESTABLISHED);
		CHECK(ev->id == cli || ev->id == srv);
		CHECK_EQ(rdma_ack_cm_event(ev), 0);
	}

	for (i = 0; i < MSG; i++)
		cbuf[i] = (uint8_t)(i * 7);
	CHECK_EQ(rdma_post_send(cli, (void *)2, cbuf, MSG, cmr, IBV_SEND_SIGNALED), 0);
	n = rdma_get_recv_comp(srv, &wc);	/* blocks on the library CQ's channel */
	CHECK_EQ(n, 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 1);
	CHECK_EQ(wc.byte_len, MSG);
	CHECK_EQ(memcmp(cbuf, sbuf, MSG), 0);
	n = rdma_get_send_comp(cli, &wc);
	CHECK_EQ(n, 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 2);

	CHECK_EQ(rdma_disconnect(cli), 0);
	ev = EXPECT_EVENT(ch, RDMA_CM_EVENT_DISCONNECTED);
	CHECK(ev->id == srv);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_disconnect(srv), 0);
	ev = EXPECT_EVENT(ch, RDMA_CM_EVENT_DISCONNECTED);
	CHECK(ev->id == cli);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);

	CHECK_EQ(rdma_dereg_mr(cmr), 0);
	CHECK_EQ(rdma_dereg_mr(smr), 0);
	rdma_destroy_qp(cli);
	rdma_destroy_qp(srv);
	CHECK_EQ(rdma_destroy_id(cli), 0);
	CHECK_EQ(rdma_destroy_id(srv), 0);
	CHECK_EQ(rdma_destroy_id(lis), 0);
	rdma_destroy_event_channel(ch);
}

struct reader {
	struct rdma_event_channel *ch;
	atomic_int returned;
};

static void *read_one(void *arg)
{
	struct reader *r = arg;
	struct rdma_cm_event *ev;

	rdma_get_cm_event(r->ch, &ev);
	atomic_store(&r->returned, 1);
	return NULL;
}

static void channel_destroyed_under_reader(void)
{
	static struct reader r1, r2;
	pthread_t t;

	r1.ch = rdma_create_event_channel();
	CHECK(r1.ch != NULL);
	CHECK_EQ(pthread_create(&t, NULL, read_one, &r1), 0);
	CHECK_EQ(pthread_detach(t), 0);
	usleep(100 * 1000);
	rdma_destroy_event_channel(r1.ch);
	r2.ch = r1.ch;	/* a thread coming back for the next event, just too late */
	CHECK_EQ(pthread_create(&t, NULL, read_one, &r2), 0);
	CHECK_EQ(pthread_detach(t), 0);
	usleep(200 * 1000);
	CHECK_EQ(atomic_load(&r1.returned), 0);
	CHECK_EQ(atomic_load(&r2.returned), 0);
}

int main(void)
{
	misuse();
	rc_connection();
	channel_destroyed_under_reader();
	printf("librdmacm API on droce: misuse refused, RC connection with library CQs, "
	       "destroyed channel keeps its readers waiting\n");
	return 0;
}
