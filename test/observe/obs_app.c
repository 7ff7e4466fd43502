/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A running droce application for the observability tests (observe_test.py drives it):
 * droce0 <-> droce1 over the ring pair with OBS_QPS connected RC QP pairs, plus a device
 * "obs_in" whose port is a ring the program feeds, to inject malformed frames. EAL arguments
 * come from the command line (the program owns EAL, so the test chooses shared config,
 * hugepages and file prefix); DROCE_CONFIG names the devices and the engine mode.
 *
 * It prints "R {json}" lines: one when ready ({"runtime_dir": ...}) and one per command read
 * from stdin:
 *   send N SIZE        N SENDs of SIZE bytes on pair 0 (droce0 -> droce1), completions waited
 *   write N SIZE       N RDMA WRITEs of SIZE bytes on pair 0
 *   load SECONDS       SENDs on every pair for SECONDS
 *   counters DEV       droce_query_counters() of DEV, by name
 *   qp_counters SIDE I droce_query_qp_counters() of pair I's QP on SIDE (0: droce0)
 *   qpns SIDE          the QP numbers on SIDE
 *   inject KIND N      N frames to obs_in: KIND bad_icrc, unknown_qp, qp_state (to obs_in's
 *                      QP, left in RESET: the transport drops it) or bad_pkey (to that QP,
 *                      P_Key 0x7123: the transport drops it for its P_Key first)
 *   quit               tear everything down and exit 0
 * Any failure exits non-zero (check.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_wire.h"
#include "fn.h"

#define OBS_QPS 3
#define OBS_BUF (64 * 1024)

static struct fn_ep ep[OBS_QPS][2];
static struct fn_mem mem[2];
static struct droce_context *in_ctx;
static struct fn_ep in_ep;		/* a QP on obs_in, left in RESET */
static struct rte_ring *in_ring, *out_ring;
static struct rte_mempool *in_pool;

/* ---- Set-up ---- */

/* obs_in: a device on a port whose RX ring this program fills (10.7.0.1). */
static void in_device(void)
{
	struct droce_device_cfg cfg;
	struct droce_device **list;
	int i, n, port;

	in_ring = rte_ring_create("obs_in", 256, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	out_ring = rte_ring_create("obs_out", 256, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	in_pool = rte_pktmbuf_pool_create("obs_pool", 255, 0, 0, 2048, SOCKET_ID_ANY);
	CHECK(in_ring != NULL && out_ring != NULL && in_pool != NULL);
	port = rte_eth_from_rings("obs_in", &in_ring, 1, &out_ring, 1, SOCKET_ID_ANY);
	CHECK(port >= 0);
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.name, sizeof(cfg.name), "obs_in");
	CHECK_EQ(rte_eth_dev_get_name_by_port((uint16_t)port, cfg.devargs), 0);
	memcpy(cfg.mac, "\x02\x00\x00\x00\x07\x01", 6);
	cfg.has_ipv4 = true;
	CHECK(inet_pton(AF_INET, "10.7.0.1", cfg.ipv4) == 1);
	cfg.mtu = 1500;
	CHECK_EQ(droce_device_add(&cfg), 0);
	list = droce_get_device_list(&n);
	CHECK(list != NULL);
	for (i = 0; i < n; i++) {
		const char *name = droce_get_device_name(list[i]);

		if (strcmp(name, "obs_in") == 0)
			in_ctx = droce_open_device(list[i]);
		else if (strcmp(name, "droce0") == 0 || strcmp(name, "droce1") == 0)
			pair_ctx[name[5] - '0'] = droce_open_device(list[i]);
	}
	droce_free_device_list(list);
	CHECK(in_ctx != NULL && pair_ctx[0] != NULL && pair_ctx[1] != NULL);
	pair_inline = droce_engine_is_inline();
}

static void setup(void)
{
	struct fn_attr a = fn_attr_default();
	struct droce_pd *pd[2] = { fn_pd(0), fn_pd(1) };
	int i, s;

	for (i = 0; i < OBS_QPS; i++) {
		fn_ep_create(&ep[i][0], 0, pd[0], &a);
		fn_ep_create(&ep[i][1], 1, pd[1], &a);
		fn_connect(&ep[i][0], &ep[i][1], &a);
		fn_connect(&ep[i][1], &ep[i][0], &a);
	}
	for (s = 0; s < 2; s++)
		fn_mem_reg(&mem[s], pd[s], OBS_BUF, FN_ACCESS_ALL, (uint8_t)s);
	in_ep.pd = droce_alloc_pd(in_ctx);
	CHECK(in_ep.pd != NULL);
	in_ep.scq = droce_create_cq(in_ctx, 16, NULL, NULL, 0);
	CHECK(in_ep.scq != NULL);
	in_ep.rcq = in_ep.scq;
	{
		struct droce_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .send_cq = in_ep.scq,
			.recv_cq = in_ep.scq, .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						       .max_send_sge = 1, .max_recv_sge = 1 } };

		in_ep.qp = droce_create_qp(in_ep.pd, &ia);
		CHECK(in_ep.qp != NULL);
	}
}

static void teardown(void)
{
	struct droce_pd *pd[2] = { ep[0][0].pd, ep[0][1].pd };
	int i, s;

	for (i = 0; i < OBS_QPS; i++)
		for (s = 0; s < 2; s++)
			fn_ep_destroy(&ep[i][s]);
	for (s = 0; s < 2; s++) {
		fn_mem_free(&mem[s]);
		CHECK_EQ(droce_dealloc_pd(pd[s]), 0);
		CHECK_EQ(droce_close_device(pair_ctx[s]), 0);
	}
	CHECK_EQ(droce_destroy_qp(in_ep.qp), 0);
	CHECK_EQ(droce_destroy_cq(in_ep.scq), 0);
	CHECK_EQ(droce_dealloc_pd(in_ep.pd), 0);
	CHECK_EQ(droce_close_device(in_ctx), 0);
}

/* ---- Traffic ---- */

static void post_recv(struct fn_ep *e, uint32_t size)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mem[1].buf, .length = size,
			       .lkey = mem[1].mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK_EQ(droce_post_recv(e->qp, &wr, &bad), 0);
}

static void post_send(struct fn_ep *e, enum ibv_wr_opcode op, uint32_t size)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mem[0].buf, .length = size,
			       .lkey = mem[0].mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)mem[1].buf;
	wr.wr.rdma.rkey = mem[1].mr->rkey;
	CHECK_EQ(droce_post_send(e->qp, &wr, &bad), 0);
}

/* One message on pair @p i, completions on both sides waited for. */
static void one(int i, enum ibv_wr_opcode op, uint32_t size)
{
	struct ibv_wc wc;

	if (op == IBV_WR_SEND)
		post_recv(&ep[i][1], size);
	post_send(&ep[i][0], op, size);
	wc = fn_wait(ep[i][0].scq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	if (op == IBV_WR_SEND) {
		wc = fn_wait(ep[i][1].rcq);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	}
}

static void load(double s)
{
	uint64_t end = pair_deadline(s);
	int i;

	while (rte_get_tsc_cycles() < end)
		for (i = 0; i < OBS_QPS; i++)
			one(i, IBV_WR_SEND, 4096);
}

/* ---- Injection ---- */

static void inject(const char *kind, int n)
{
	struct droce_flow f = { .hop_limit = 64, .sport = 0xc001 };
	struct droce_hdr_fields h = { .opcode = 0x04, .pkey = 0xffff, .dqpn = 0x7ff0, .psn = 7 };
	uint8_t frame[256], payload[16] = { 1, 2, 3 };
	int len, k;

	memcpy(f.src_mac.addr_bytes, "\x02\x00\x00\x00\x07\x09", 6);
	memcpy(f.dst_mac.addr_bytes, "\x02\x00\x00\x00\x07\x01", 6);
	f.sgid[10] = f.sgid[11] = f.dgid[10] = f.dgid[11] = 0xff;
	CHECK(inet_pton(AF_INET, "10.7.0.9", &f.sgid[12]) == 1);
	CHECK(inet_pton(AF_INET, "10.7.0.1", &f.dgid[12]) == 1);
	if (strcmp(kind, "qp_state") == 0 || strcmp(kind, "bad_pkey") == 0)
		h.dqpn = in_ep.qp->qp_num;
	if (strcmp(kind, "bad_pkey") == 0)
		h.pkey = 0x7123;
	len = droce_build(frame, sizeof(frame), &f, &h, payload, sizeof(payload));
	CHECK(len > 0);
	if (strcmp(kind, "bad_icrc") == 0)
		frame[len - 1] ^= 0xff;
	else
		CHECK(strcmp(kind, "unknown_qp") == 0 || strcmp(kind, "qp_state") == 0 ||
		      strcmp(kind, "bad_pkey") == 0);
	for (k = 0; k < n; k++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(in_pool);

		CHECK(m != NULL && rte_pktmbuf_append(m, (uint16_t)len) != NULL);
		memcpy(rte_pktmbuf_mtod(m, void *), frame, (size_t)len);
		CHECK_EQ(rte_ring_enqueue(in_ring, m), 0);
	}
	while (!rte_ring_empty(in_ring))	/* until the engine took them */
		pair_step();
	fn_run(0.05);
}

/* ---- Replies ---- */

static void print_counters(const struct droce_counters *c)
{
	const uint64_t *v = (const uint64_t *)c;
	const char *name;
	unsigned int i, k;

	printf("R {");
	for (i = 0; (name = droce_counter_name(i)) != NULL; i++)
		printf("%s\"%s\": %" PRIu64, i ? ", " : "", name, v[i]);
	for (k = 1; k < DROCE_PARSE_ERR_NUM; k++) {
		char low[64];
		unsigned int j;

		snprintf(low, sizeof(low), "%s", droce_parse_err_name((enum droce_parse_err)k));
		for (j = 0; low[j] != '\0'; j++)
			low[j] = (char)tolower((unsigned char)low[j]);
		printf(", \"parse_err_%s\": %" PRIu64, low, c->parse_err[k]);
	}
	printf("}\n");
}

static struct droce_context *ctx_by_name(const char *name)
{
	if (strcmp(name, "obs_in") == 0)
		return in_ctx;
	CHECK(strcmp(name, "droce0") == 0 || strcmp(name, "droce1") == 0);
	return pair_ctx[name[5] - '0'];
}

/* One command line; false on quit. */
static bool command(const char *line)
{
	struct droce_counters c;
	char word[32], arg[32];
	int x = 0, y = 0;

	if (sscanf(line, "%31s", word) != 1)
		return true;
	if (strcmp(word, "quit") == 0)
		return false;
	if (strcmp(word, "send") == 0 || strcmp(word, "write") == 0) {
		CHECK(sscanf(line, "%*s %d %d", &x, &y) == 2 && y <= OBS_BUF);
		while (x-- > 0)
			one(0, word[0] == 's' ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, (uint32_t)y);
		printf("R {\"ok\": 1}\n");
	} else if (strcmp(word, "load") == 0) {
		CHECK(sscanf(line, "%*s %d", &x) == 1);
		load(x);
		printf("R {\"ok\": 1}\n");
	} else if (strcmp(word, "counters") == 0) {
		CHECK(sscanf(line, "%*s %31s", arg) == 1);
		CHECK_EQ(droce_query_counters(ctx_by_name(arg), &c), 0);
		print_counters(&c);
	} else if (strcmp(word, "qp_counters") == 0) {
		CHECK(sscanf(line, "%*s %d %d", &x, &y) == 2 && x >= 0 && x < 2 && y >= 0 &&
		      y < OBS_QPS);
		CHECK_EQ(droce_query_qp_counters(ep[y][x].qp, &c), 0);
		print_counters(&c);
	} else if (strcmp(word, "qpns") == 0) {
		CHECK(sscanf(line, "%*s %d", &x) == 1 && x >= 0 && x < 2);
		printf("R {\"qpns\": [%u, %u, %u], \"cqs\": [", ep[0][x].qp->qp_num,
		       ep[1][x].qp->qp_num, ep[2][x].qp->qp_num);
		for (y = 0; y < OBS_QPS; y++)
			printf("%s%u, %u", y ? ", " : "", ep[y][x].scq->handle,
			       ep[y][x].rcq->handle);
		printf("]}\n");
	} else if (strcmp(word, "inject") == 0) {
		CHECK(sscanf(line, "%*s %31s %d", arg, &x) == 2);
		inject(arg, x);
		printf("R {\"ok\": 1}\n");
	} else {
		CHECK(!"unknown command");
	}
	return true;
}

int main(int argc, char **argv)
{
	char line[256];

	CHECK(rte_eal_init(argc, argv) >= 0);
	in_device();
	setup();
	printf("R {\"runtime_dir\": \"%s\", \"inline\": %d, \"in_qpn\": %u}\n",
	       rte_eal_get_runtime_dir(), pair_inline, in_ep.qp->qp_num);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (!command(line))
			break;
		fflush(stdout);
	}
	teardown();
	CHECK_EQ(rte_eal_cleanup(), 0);
	return 0;
}
