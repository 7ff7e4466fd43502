/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * What goes wrong between two CMs ends in the event librdmacm documents, within the timers:
 *   - a peer without a CM (no GSI QP on droce1 yet): the REQ is sent 1 + max_retries times,
 *     then UNREACHABLE (-ETIMEDOUT);
 *   - an address nobody answers ARP for: ADDR_ERROR; the id can resolve another one after;
 *   - a port nobody listens on: REJECTED, status 8 (invalid service ID), 148 bytes of data;
 *   - a listener that rejects with private data: REJECTED, status 28, the data;
 *   - an acceptor slower than the REQ's retries: the repeated REQ gets an MRA, the active side
 *     waits, and the late accept still connects;
 *   - the active side gives up (destroys its id) before the accept: the passive id hears a
 *     REJ "timeout", and accepting it fails (EINVAL);
 *   - a peer that never answers the DREQ: DISCONNECTED with -ETIMEDOUT after the retries;
 *   - a connection destroyed without disconnect: the peer gets DISCONNECTED (one DREQ);
 *   - a listener's backlog: requests beyond it wait (dropped, the sender retries) until the
 *     application takes the queued one.
 * The CM counters name each of these.
 *
 * Usage: cm_fail_test {inline|lcore}
 */
#include "cm_test.h"

static struct droce_cm_event_channel *ch;

/* An active id resolved to 10.99.0.2:@p port, with a QP. */
static struct droce_cm_id *active(uint16_t port, struct droce_cq **cq)
{
	struct sockaddr_in dst = cmt_addr("10.99.0.2", port);
	struct droce_cm_id *id;

	CHECK_EQ(droce_cm_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	cmt_drive_ctx = id->verbs;
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_resolve_route(id, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	*cq = cmt_cq(id);
	cmt_qp(id, *cq, IBV_QPT_RC);
	return id;
}

static void gone(struct droce_cm_id *id, struct droce_cq *cq)
{
	droce_cm_destroy_qp(id);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_cm_destroy_id(id), 0);
}

static struct droce_cm_id *listener(uint16_t port, int backlog)
{
	struct sockaddr_in sa = cmt_addr("10.99.0.2", port);
	struct droce_cm_id *l;

	CHECK_EQ(droce_cm_create_id(ch, &l, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(l, (struct sockaddr *)&sa), 0);
	CHECK_EQ(droce_cm_listen(l, backlog), 0);
	return l;
}

static void no_cm_on_the_peer(struct droce_context *d1)
{
	struct droce_cm_counters c;
	struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7 };
	struct droce_cm_id *a;
	struct droce_cq *cq;
	uint64_t t0;

	a = active(6000, &cq);
	t0 = rte_get_tsc_cycles();
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	CHECK_EQ(droce_cm_ack_cm_event(cmt_expect(ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT,
						  10000, __LINE__)), 0);
	/* 6 REQs 96 ms apart ([cm] in the INI): about 0.58 s, not before. */
	CHECK(rte_get_tsc_cycles() - t0 > rte_get_tsc_hz() / 2);
	CHECK_EQ(droce_cm_query_counters(a->verbs, &c), 0);
	CHECK_EQ(c.tx_msg[DROCE_CM_MSG_REQ], 6);
	CHECK_EQ(c.tx_retries, 5);
	CHECK_EQ(c.timeouts, 1);
	CHECK_EQ(droce_cm_query_counters(d1, &c), 0);
	CHECK_EQ(c.rx_mads, 0);	/* droce1 has no CM yet: its engine dropped them */
	gone(a, cq);
}

static void unanswered_arp(void)
{
	struct sockaddr_in nobody = cmt_addr("10.99.0.77", 6001), ok = cmt_addr("10.99.0.2", 6001);
	struct droce_cm_event *ev;
	struct droce_cm_id *a;

	CHECK_EQ(droce_cm_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(a, NULL, (struct sockaddr *)&nobody, 300), 0);
	ev = cmt_expect(ch, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT, 5000, __LINE__);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	/* Back to bound: another destination resolves. */
	CHECK_EQ(droce_cm_resolve_addr(a, NULL, (struct sockaddr *)&ok, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_destroy_id(a), 0);
}

static void closed_port_and_reject(void)
{
	static const char no[] = "not today";
	struct rdma_conn_param p = { .retry_count = 7 };
	struct droce_cm_id *l = listener(6002, 8), *a, *b;
	struct droce_cm_event *ev;
	struct droce_cq *cq;

	a = active(6003, &cq);	/* nobody on 6003 */
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_REJECTED, DROCE_CM_REJ_INVALID_SERVICE_ID);
	CHECK(ev->id == a);
	CHECK_EQ(ev->param.conn.private_data_len, 148);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	gone(a, cq);

	a = active(6002, &cq);
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	b = ev->id;
	CHECK_EQ(droce_cm_reject(b, no, sizeof(no)), 0);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_REJECTED, DROCE_CM_REJ_CONSUMER_DEFINED);
	CHECK(ev->id == a);
	CHECK_EQ(memcmp(ev->param.conn.private_data, no, sizeof(no)), 0);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CHECK_EQ(droce_cm_destroy_id(b), 0);
	gone(a, cq);
	CHECK_EQ(droce_cm_destroy_id(l), 0);
}

/* The REQ is retried every 96 ms, 6 times in all; accept after 1 s. */
static void slow_acceptor(void)
{
	struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7 };
	struct droce_cm_id *l = listener(6004, 8), *a, *b;
	struct droce_cm_counters c0, c1;
	struct droce_cm_event *ev;
	struct droce_cq *cq, *bcq;

	a = active(6004, &cq);
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	b = ev->id;
	cmt_none(ch, 1000, __LINE__);	/* no UNREACHABLE: the MRA holds the REQ */
	bcq = cmt_cq(b);
	cmt_qp(b, bcq, IBV_QPT_RC);
	CHECK_EQ(droce_cm_accept(b, &p), 0);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CHECK_EQ(droce_cm_query_counters(a->verbs, &c0), 0);
	CHECK_EQ(droce_cm_query_counters(b->verbs, &c1), 0);
	CHECK(c1.tx_msg[DROCE_CM_MSG_MRA] >= 1);
	CHECK(c0.rx_msg[DROCE_CM_MSG_MRA] >= 1);
	CHECK(c1.rx_duplicates >= 1);

	/* The passive application never answers the DREQ: DISCONNECTED (-ETIMEDOUT). */
	CHECK_EQ(droce_cm_disconnect(a), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK(ev->id == b);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	ev = cmt_expect(ch, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT, 5000, __LINE__);
	CHECK(ev->id == a);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	gone(b, bcq);
	gone(a, cq);
	CHECK_EQ(droce_cm_destroy_id(l), 0);
}

static void active_gives_up(void)
{
	struct rdma_conn_param p = { .retry_count = 7 };
	struct droce_cm_id *l = listener(6005, 8), *a, *b;
	struct droce_cm_counters c;
	struct droce_cm_event *ev;
	struct droce_cq *cq;
	uint64_t before;

	a = active(6005, &cq);
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	b = ev->id;
	CHECK_EQ(droce_cm_query_counters(b->verbs, &c), 0);
	before = c.rx_msg[DROCE_CM_MSG_REJ];
	gone(a, cq);	/* REJ "timeout" with our CA GUID */
	while (c.rx_msg[DROCE_CM_MSG_REJ] == before) {
		cmt_step();
		CHECK_EQ(droce_cm_query_counters(b->verbs, &c), 0);
	}
	CHECK_EQ(c.rx_unmatched, 0);	/* it found the request */
	errno = 0;
	CHECK_EQ(droce_cm_accept(b, &p), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CHECK_EQ(droce_cm_destroy_id(b), 0);
	cmt_none(ch, 100, __LINE__);
	CHECK_EQ(droce_cm_destroy_id(l), 0);
}

static void destroyed_connection(void)
{
	struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7 };
	struct droce_cm_id *l = listener(6006, 8), *a, *b;
	struct droce_cm_event *ev;
	struct droce_cq *cq, *bcq;

	a = active(6006, &cq);
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	b = ev->id;
	bcq = cmt_cq(b);
	cmt_qp(b, bcq, IBV_QPT_RC);
	CHECK_EQ(droce_cm_accept(b, &p), 0);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	gone(a, cq);	/* no disconnect: a DREQ, once */
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK(ev->id == b);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CHECK_EQ(droce_cm_disconnect(b), 0);	/* DREP to the destroyed id: still answered */
	gone(b, bcq);
	CHECK_EQ(droce_cm_destroy_id(l), 0);
}

static void backlog(void)
{
	struct rdma_conn_param p = { .retry_count = 7 };
	struct droce_cm_id *l = listener(6007, 1), *a1, *a2;
	struct droce_cm_event *e1, *e2;
	struct droce_cm_counters c;
	struct droce_cq *cq1, *cq2;

	a1 = active(6007, &cq1);
	a2 = active(6007, &cq2);
	CHECK_EQ(droce_cm_connect(a1, &p), 0);
	CHECK_EQ(droce_cm_connect(a2, &p), 0);
	/* Wait until the second REQ met the full backlog at least once. */
	do {
		cmt_step();
		CHECK_EQ(droce_cm_query_counters(l->verbs, &c), 0);
	} while (c.rx_backlog_full == 0);
	e1 = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	e2 = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);	/* a retry, once there is room */
	CHECK(e1->id != e2->id);
	CHECK_EQ(droce_cm_reject(e1->id, NULL, 0), 0);
	CHECK_EQ(droce_cm_reject(e2->id, NULL, 0), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_REJECTED, DROCE_CM_REJ_CONSUMER_DEFINED);
	CMT_GOT(ch, RDMA_CM_EVENT_REJECTED, DROCE_CM_REJ_CONSUMER_DEFINED);
	CHECK_EQ(droce_cm_destroy_id(e1->id), 0);
	CHECK_EQ(droce_cm_destroy_id(e2->id), 0);
	CHECK_EQ(droce_cm_ack_cm_event(e1), 0);
	CHECK_EQ(droce_cm_ack_cm_event(e2), 0);
	gone(a1, cq1);
	gone(a2, cq2);
	CHECK_EQ(droce_cm_destroy_id(l), 0);
}

int main(int argc, char **argv)
{
	struct droce_device **list;
	struct droce_context *d1;

	CHECK(argc == 2);
	cmt_init();
	list = droce_get_device_list(NULL);
	CHECK(list != NULL && list[1] != NULL);
	d1 = droce_open_device(list[1]);	/* droce1's port runs; its CM does not, yet */
	CHECK(d1 != NULL);
	droce_free_device_list(list);
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);
	no_cm_on_the_peer(d1);
	unanswered_arp();
	closed_port_and_reject();
	slow_acceptor();
	active_gives_up();
	destroyed_connection();
	backlog();
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	CHECK_EQ(droce_close_device(d1), 0);
	printf("cm failures: each ended in its event (%s engine)\n", argv[1]);
	return 0;
}
