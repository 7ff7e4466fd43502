/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A REQ sent while the port's link is down is sent again as soon as the port is ACTIVE, not
 * after its response timeout. The CM timers are Linux rdma_cm's (pair_link_*.ini: a REQ waits
 * about 4 s), droce0's link is cut with rte_eth_dev_set_link_down() on its net_ring port (a
 * cable pulled) after the route is resolved, and rdma_connect() is called. Proves:
 * - while down, the REQ does not reach droce1 (no CONNECT_REQUEST for 300 ms);
 * - link up: droce0's CM sends the REQ again at once (tx_port_up_resends 1, REQs sent 2) and
 *   the connection is established with no retry on timeout (tx_retries 0, timeouts 0);
 * - a second link cycle with nothing outstanding sends nothing (tx_port_up_resends stays 1).
 *
 * Usage: cm_link_test {inline|lcore}
 */
#include <rte_ethdev.h>

#include "cm_test.h"

static struct droce_cm_event_channel *ch;

static uint16_t port_of(const char *dev)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t port;

	/* lib/env/env_port.c names a ring-pair device's ethdev net_ring_droce_<device> */
	snprintf(name, sizeof(name), "net_ring_droce_%s", dev);
	CHECK_EQ(rte_eth_dev_get_port_by_name(name, &port), 0);
	return port;
}

/* Set droce0's link and wait until its port says so. */
static void link_set(struct droce_context *ctx, bool up)
{
	uint64_t end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	struct ibv_port_attr pa;
	uint16_t port = port_of("droce0");

	CHECK_EQ(up ? rte_eth_dev_set_link_up(port) : rte_eth_dev_set_link_down(port), 0);
	for (;;) {
		CHECK_EQ(droce_query_port(ctx, 1, &pa), 0);
		if ((pa.state == IBV_PORT_ACTIVE) == up)
			break;
		CHECK(rte_get_tsc_cycles() < end);
		cmt_step();
	}
}

int main(int argc, char **argv)
{
	struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7 };
	struct sockaddr_in sa = cmt_addr("10.99.0.2", 6100);
	struct droce_cm_id *l, *a, *b;
	struct droce_cm_counters c;
	struct droce_cm_event *ev;
	struct droce_cq *acq, *bcq;

	CHECK(argc == 2);
	cmt_init();
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);
	CHECK_EQ(droce_cm_create_id(ch, &l, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(l, (struct sockaddr *)&sa), 0);
	CHECK_EQ(droce_cm_listen(l, 4), 0);
	CHECK_EQ(droce_cm_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(a, NULL, (struct sockaddr *)&sa, 2000), 0);
	cmt_drive_ctx = a->verbs;
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_resolve_route(a, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	acq = cmt_cq(a);
	cmt_qp(a, acq, IBV_QPT_RC);

	link_set(a->verbs, false);
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	cmt_none(ch, 300, __LINE__);		/* the REQ went nowhere */
	link_set(a->verbs, true);
	/* Within the REQ's first response timeout (4 s) only the resend can have brought it. */
	ev = cmt_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, 10000, __LINE__);
	b = ev->id;
	bcq = cmt_cq(b);
	cmt_qp(b, bcq, IBV_QPT_RC);
	CHECK_EQ(droce_cm_accept(b, &p), 0);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CHECK_EQ(droce_cm_query_counters(a->verbs, &c), 0);
	CHECK_EQ(c.tx_port_up_resends, 1);
	CHECK_EQ(c.tx_msg[DROCE_CM_MSG_REQ], 2);
	CHECK_EQ(c.tx_retries, 0);
	CHECK_EQ(c.timeouts, 0);

	/* Nothing outstanding: a link cycle resends nothing. */
	link_set(a->verbs, false);
	link_set(a->verbs, true);
	cmt_none(ch, 100, __LINE__);
	CHECK_EQ(droce_cm_query_counters(a->verbs, &c), 0);
	CHECK_EQ(c.tx_port_up_resends, 1);
	CHECK_EQ(c.tx_msg[DROCE_CM_MSG_REQ], 2);

	CHECK_EQ(droce_cm_disconnect(a), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK_EQ(droce_cm_disconnect(b), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	droce_cm_destroy_qp(b);
	droce_cm_destroy_qp(a);
	CHECK_EQ(droce_destroy_cq(bcq), 0);
	CHECK_EQ(droce_destroy_cq(acq), 0);
	CHECK_EQ(droce_cm_destroy_id(b), 0);
	CHECK_EQ(droce_cm_destroy_id(a), 0);
	CHECK_EQ(droce_cm_destroy_id(l), 0);
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	printf("cm link: the REQ lost to a down link was sent again at PORT_ACTIVE (%s engine)\n",
	       argv[1]);
	return 0;
}
