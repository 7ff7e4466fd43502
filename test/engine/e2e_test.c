/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce <-> droce end to end over the ring pair, public API only (argv[1]: "inline" or
 * "lcore", matching the INI): an RC QP on droce0 connected to one on droce1; a multi-packet
 * SEND into a posted receive and an RDMA WRITE into a registered buffer, data verified, both
 * sides' completions polled. Skips (77) when no transport is linked.
 */
#include "pair.h"

enum { LEN = 5000, TIMEOUT_S = 10 };

struct side {
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_qp *qp;
	struct droce_mr *mr;
	uint8_t *buf;
};

static struct side s[2];

static void side_init(int i)
{
	struct droce_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 } };

	s[i].pd = droce_alloc_pd(pair_ctx[i]);
	s[i].cq = droce_create_cq(pair_ctx[i], 64, NULL, NULL, 0);
	CHECK(s[i].pd != NULL && s[i].cq != NULL);
	s[i].buf = calloc(1, 2 * LEN);
	CHECK(s[i].buf != NULL);
	s[i].mr = droce_reg_mr(s[i].pd, s[i].buf, 2 * LEN, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_WRITE);
	CHECK(s[i].mr != NULL);
	ia.send_cq = s[i].cq;
	ia.recv_cq = s[i].cq;
	s[i].qp = droce_create_qp(s[i].pd, &ia);
	CHECK(s[i].qp != NULL);
}

static void connect_qp(int i)
{
	struct droce_qp *qp = s[i].qp;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE };

	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = s[!i].qp->qp_num;
	a.rq_psn = 1000 + !i;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	CHECK_EQ(droce_query_gid(pair_ctx[!i], 1, 1, &a.ah_attr.grh.dgid), 0);
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1000 + i;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

/* Poll side @p i's CQ for one completion, driving the engine meanwhile. */
static struct ibv_wc wait_wc(int i)
{
	uint64_t end = pair_deadline(TIMEOUT_S);
	struct ibv_wc wc;
	int n;

	while ((n = droce_poll_cq(s[i].cq, 1, &wc)) == 0) {
		CHECK(rte_get_tsc_cycles() < end);
		pair_step();
	}
	CHECK_EQ(n, 1);
	if (wc.status != IBV_WC_SUCCESS)
		fprintf(stderr, "side %d wr %llu: %s\n", i, (unsigned long long)wc.wr_id,
			droce_wc_status_str(wc.status));
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	return wc;
}

static void test_send(void)
{
	struct ibv_sge rs = { (uintptr_t)s[1].buf, LEN, s[1].mr->lkey };
	struct ibv_sge ss = { (uintptr_t)s[0].buf, LEN, s[0].mr->lkey };
	struct ibv_recv_wr r = { .wr_id = 11, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr w = { .wr_id = 12, .sg_list = &ss, .num_sge = 1,
				 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < LEN; i++)
		s[0].buf[i] = (uint8_t)(i * 7 + 1);
	CHECK_EQ(droce_post_recv(s[1].qp, &r, &rbad), 0);
	CHECK_EQ(droce_post_send(s[0].qp, &w, &sbad), 0);
	wc = wait_wc(0);
	CHECK_EQ(wc.wr_id, 12);
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	wc = wait_wc(1);
	CHECK_EQ(wc.wr_id, 11);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, LEN);
	CHECK(memcmp(s[0].buf, s[1].buf, LEN) == 0);
}

static void test_write(void)
{
	struct ibv_sge ss = { (uintptr_t)s[0].buf, LEN, s[0].mr->lkey };
	struct ibv_send_wr w = { .wr_id = 21, .sg_list = &ss, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < LEN; i++)
		s[0].buf[i] = (uint8_t)(i * 13 + 5);
	w.wr.rdma.remote_addr = (uintptr_t)s[1].buf + LEN;
	w.wr.rdma.rkey = s[1].mr->rkey;
	CHECK_EQ(droce_post_send(s[0].qp, &w, &bad), 0);
	wc = wait_wc(0);
	CHECK_EQ(wc.wr_id, 21);
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	CHECK(memcmp(s[0].buf, s[1].buf + LEN, LEN) == 0);
}

int main(int argc, char **argv)
{
	struct droce_counters c;
	int i;

	CHECK(argc == 2);
	pair_open();
	CHECK_EQ(pair_inline, strcmp(argv[1], "inline") == 0);
	side_init(0);
	side_init(1);
	connect_qp(0);
	connect_qp(1);
	test_send();
	test_write();
	CHECK_EQ(droce_query_counters(pair_ctx[1], &c), 0);
	CHECK(c.rx_roce >= 10);	/* 5 SEND + 5 WRITE packets at 1024 */
	for (i = 0; i < 2; i++) {
		CHECK_EQ(droce_destroy_qp(s[i].qp), 0);
		CHECK_EQ(droce_dereg_mr(s[i].mr), 0);
		CHECK_EQ(droce_destroy_cq(s[i].cq), 0);
		CHECK_EQ(droce_dealloc_pd(s[i].pd), 0);
		CHECK_EQ(droce_close_device(pair_ctx[i]), 0);
		free(s[i].buf);
	}
	printf("e2e (%s): ok\n", argv[1]);
	return 0;
}
