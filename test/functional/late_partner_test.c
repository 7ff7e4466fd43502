/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A ring-pair device opened before its partner exists (pair_late_*.ini: droce0 alone in ring
 * pair loop0), public API only. Proves:
 * - opened without a port, droce0 reads IBV_PORT_DOWN;
 * - when droce_device_add() brings its partner droce1, droce0 gets PORT_ACTIVE once and reads
 *   ACTIVE, and it carries traffic without being opened again: an RC WRITE and a SEND each way
 *   between droce0 and droce1 complete with their data (the engine starts droce0's port when
 *   it comes; before, droce0's frames went nowhere and its WRs ended in RETRY_EXC_ERR).
 *
 * Usage: functional_late_partner_test {inline|lcore}
 */
#include <arpa/inet.h>

#include "fn_qp.h"

enum { LEN = 4096 };

static void add_partner(void)
{
	struct droce_device_cfg cfg;
	static const uint8_t mac[6] = { 0x02, 0xd0, 0x0c, 0, 0, 2 };

	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.name, sizeof(cfg.name), "droce1");
	snprintf(cfg.ring_pair, sizeof(cfg.ring_pair), "loop0");
	memcpy(cfg.mac, mac, sizeof(mac));
	cfg.has_ipv4 = true;
	CHECK_EQ(inet_pton(AF_INET, "10.99.0.2", cfg.ipv4), 1);
	cfg.mtu = 1500;
	CHECK_EQ(droce_device_add(&cfg), 0);
}

/* @p from WRITEs and SENDs LEN bytes to @p to; both complete, the data is there. */
static void traffic(struct fn_ep e[2], int from, struct fn_mem m[2], uint32_t seed)
{
	int to = !from;
	struct ibv_wc wc;

	fn_fill(m[from].buf, LEN, seed);
	fn_post_recv(e[to].qp, 7, m[to].buf + LEN, LEN, m[to].mr->lkey);
	fn_post_send1(e[from].qp, 1, IBV_WR_RDMA_WRITE, m[from].buf, LEN, m[from].mr->lkey, 0,
		      NULL, 0, 0, (uintptr_t)m[to].buf, m[to].mr->rkey, 0);
	fn_post_send1(e[from].qp, 2, IBV_WR_SEND, m[from].buf, LEN, m[from].mr->lkey, 0, NULL, 0,
		      0, 0, 0, 0);
	wc = fn_wait(e[from].scq);
	CHECK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	wc = fn_wait(e[from].scq);
	CHECK(wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS);
	wc = fn_wait(e[to].rcq);
	CHECK(wc.wr_id == 7 && wc.status == IBV_WC_SUCCESS && wc.byte_len == LEN);
	CHECK(memcmp(m[to].buf, m[from].buf, LEN) == 0);
	CHECK(memcmp(m[to].buf + LEN, m[from].buf, LEN) == 0);
}

int main(int argc, char **argv)
{
	struct fn_attr a = fn_attr_default();
	struct droce_async_event ev;
	struct droce_device **list;
	struct ibv_port_attr pa;
	struct fn_ep e[2];
	struct fn_mem m[2];
	int n, i;

	CHECK(argc == 2);
	list = droce_get_device_list(&n);
	CHECK(list != NULL && n == 1);
	pair_ctx[0] = droce_open_device(list[0]);
	CHECK(pair_ctx[0] != NULL);
	droce_free_device_list(list);
	pair_inline = droce_engine_is_inline();
	CHECK_EQ(pair_inline, strcmp(argv[1], "inline") == 0);
	CHECK_EQ(droce_query_port(pair_ctx[0], 1, &pa), 0);
	CHECK_EQ(pa.state, IBV_PORT_DOWN);

	add_partner();
	CHECK_EQ(droce_get_async_event(pair_ctx[0], &ev), 0);
	CHECK_EQ(ev.event_type, IBV_EVENT_PORT_ACTIVE);
	droce_ack_async_event(&ev);
	CHECK_EQ(droce_query_port(pair_ctx[0], 1, &pa), 0);
	CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
	list = droce_get_device_list(&n);
	CHECK(list != NULL && n == 2);
	pair_ctx[1] = droce_open_device(list[1]);
	CHECK(pair_ctx[1] != NULL);
	droce_free_device_list(list);

	a.retry_cnt = 3;
	fn_pair(e, &a);
	for (i = 0; i < 2; i++)
		fn_mem_reg(&m[i], e[i].pd, 2 * LEN, FN_ACCESS_ALL, 0);
	traffic(e, 0, m, 1);
	traffic(e, 1, m, 2);
	fn_async_nonblock(0);
	CHECK(!fn_async(0, &ev));	/* PORT_ACTIVE came once */
	for (i = 0; i < 2; i++)
		fn_mem_free(&m[i]);
	fn_pair_destroy(e);
	fn_close();
	printf("late partner (%s): ok\n", argv[1]);
	return 0;
}
