/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The port follows its DPDK link (rte_eth_dev_set_link_down/up on droce0's net_ring port, as
 * a cable pulled and put back). Proves:
 * - link down: droce0's contexts get IBV_EVENT_PORT_ERR (element.port_num 1) once, and
 *   droce_query_port() says IBV_PORT_DOWN, phys_state Polling (2); droce1, whose link is up,
 *   gets nothing and stays ACTIVE;
 * - while down droce0 sends nothing (tx_link_down) and drops what arrives (rx_link_down): an
 *   RC WRITE from droce0 and a SEND from droce1 do not complete;
 * - link up: IBV_EVENT_PORT_ACTIVE once, IBV_PORT_ACTIVE, LinkUp (5); both messages then
 *   complete successfully by retransmission (each QP's retransmits >= 1), their bytes intact,
 *   the QPs still in RTS, and no other event was raised.
 */
#include <rte_ethdev.h>

#include "fn_qp.h"

enum { LEN = 4096, TIMEOUT = 14 };	/* 4.096 us * 2^14 = 67 ms: 7 retries outlast the cut */

static uint16_t port_of(const char *dev)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t port;

	/* The ethdev droce creates for a ring-pair device (lib/env/env_port.c, rte_eth_from_rings()
	 * prefixes net_ring_). */
	snprintf(name, sizeof(name), "net_ring_droce_%s", dev);
	CHECK_EQ(rte_eth_dev_get_port_by_name(name, &port), 0);
	return port;
}

static void check_port(int side, enum ibv_port_state state, uint8_t phys)
{
	struct ibv_port_attr pa;

	CHECK_EQ(droce_query_port(pair_ctx[side], 1, &pa), 0);
	CHECK_EQ(pa.state, state);
	CHECK_EQ(pa.phys_state, phys);
}

/* The next async event of @p side is a port event of @p type. */
static void expect_port_event(int side, enum ibv_event_type type)
{
	uint64_t end = pair_deadline(FN_TIMEOUT_S);
	struct droce_async_event ev;

	while (!fn_async(side, &ev)) {
		CHECK(rte_get_tsc_cycles() < end);
		pair_step();
	}
	CHECK_EQ(ev.event_type, type);
	CHECK_EQ(ev.element.port_num, 1);
}

static void no_event(int side)
{
	struct droce_async_event ev;

	CHECK(!fn_async(side, &ev));
}

static void post(struct fn_ep *e, enum ibv_wr_opcode op, struct fn_mem *src, size_t off,
		 const struct fn_mem *dst, uint64_t wr_id)
{
	struct ibv_sge s = { (uintptr_t)src->buf + off, LEN, src->mr->lkey };
	struct ibv_send_wr w = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	w.wr.rdma.remote_addr = (uintptr_t)dst->buf;
	w.wr.rdma.rkey = dst->mr->rkey;
	CHECK_EQ(droce_post_send(e->qp, &w, &bad), 0);
}

int main(int argc, char **argv)
{
	struct fn_attr a = fn_attr_default();
	struct fn_ep e[2];
	struct fn_mem m[2];
	struct droce_counters c;
	struct ibv_wc wc;
	uint16_t port0;
	int i;

	fn_open(argc, argv);
	port0 = port_of("droce0");
	for (i = 0; i < 2; i++) {
		fn_async_nonblock(i);
		check_port(i, IBV_PORT_ACTIVE, 5);
		no_event(i);
	}
	a.timeout = TIMEOUT;
	fn_pair(e, &a);
	for (i = 0; i < 2; i++)
		fn_mem_reg(&m[i], e[i].pd, 2 * LEN, FN_ACCESS_ALL, 0);
	/* The link up: a WRITE completes (the peer's MAC is resolved before the cut). */
	fn_fill(m[0].buf, LEN, 1);
	post(&e[0], IBV_WR_RDMA_WRITE, &m[0], 0, &m[1], 1);
	fn_wait_ok(e[0].scq, 1);
	CHECK(memcmp(m[0].buf, m[1].buf, LEN) == 0);

	/* Down: PORT_ERR once on droce0, nothing on droce1. */
	CHECK_EQ(rte_eth_dev_set_link_down(port0), 0);
	expect_port_event(0, IBV_EVENT_PORT_ERR);
	check_port(0, IBV_PORT_DOWN, 2);
	check_port(1, IBV_PORT_ACTIVE, 5);
	/* A WRITE droce0 -> droce1 and a SEND droce1 -> droce0: neither gets through. */
	fn_fill(m[0].buf, LEN, 2);
	fn_fill(m[1].buf + LEN, LEN, 3);
	fn_post_recv(e[0].qp, 10, m[0].buf + LEN, LEN, m[0].mr->lkey);
	post(&e[0], IBV_WR_RDMA_WRITE, &m[0], 0, &m[1], 2);
	post(&e[1], IBV_WR_SEND, &m[1], LEN, &m[0], 3);
	fn_quiet(e[0].scq, 0.1);
	CHECK_EQ(droce_poll_cq(e[0].rcq, 1, &wc), 0);
	CHECK_EQ(droce_poll_cq(e[1].scq, 1, &wc), 0);
	c = fn_counters(0);
	CHECK(c.tx_link_down > 0);
	CHECK(c.rx_link_down > 0);
	check_port(0, IBV_PORT_DOWN, 2);
	no_event(0);
	no_event(1);

	/* Up: PORT_ACTIVE once; both messages complete by retransmission. */
	CHECK_EQ(rte_eth_dev_set_link_up(port0), 0);
	expect_port_event(0, IBV_EVENT_PORT_ACTIVE);
	check_port(0, IBV_PORT_ACTIVE, 5);
	fn_wait_ok(e[0].scq, 2);
	fn_wait_ok(e[1].scq, 3);
	wc = fn_wait(e[0].rcq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 10);
	CHECK_EQ(wc.byte_len, LEN);
	CHECK(memcmp(m[0].buf, m[1].buf, LEN) == 0);
	CHECK(memcmp(m[0].buf + LEN, m[1].buf + LEN, LEN) == 0);
	for (i = 0; i < 2; i++) {
		CHECK(fn_qp_counters(e[i].qp).retransmits >= 1);
		CHECK_EQ(fn_state(e[i].qp), IBV_QPS_RTS);
		no_event(i);
	}

	for (i = 0; i < 2; i++)
		fn_mem_free(&m[i]);
	fn_pair_destroy(e);
	fn_close();
	printf("link_test (%s): OK\n", argv[1]);
	return 0;
}
