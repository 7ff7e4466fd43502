/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Both engine modes run the loop (argv[1]: "inline" or "lcore", matching the INI):
 * - QPs are created, walked to RTS through the owner path and destroyed while the engine runs:
 *   inline from the thread that drives the engine (no deadlock) and from a second thread while
 *   the first keeps polling; on the lcore from the application thread;
 * - the loop carries traffic between the two devices: droce0 resolves droce1's MAC by ARP
 *   (request over the ring pair, droce1's engine answers), seen in both devices' counters;
 * - closing every device stops the engine, opening one starts it again.
 */
#include <pthread.h>

#include "engine_private.h"
#include "pair.h"

static void to_rts(struct droce_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE };

	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	CHECK_EQ(droce_query_gid(pair_ctx[1], 1, 1, &a.ah_attr.grh.dgid), 0);
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 100;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC), 0);
	CHECK_EQ(qp->state, IBV_QPS_RTS);
}

/* Create, connect (to nobody in particular), move to ERR, destroy: all through the owner. */
static void qp_cycle(int rounds)
{
	struct droce_pd *pd = droce_alloc_pd(pair_ctx[0]);
	struct droce_cq *cq = droce_create_cq(pair_ctx[0], 64, NULL, NULL, 0);
	struct droce_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	int i;

	CHECK(pd != NULL && cq != NULL);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	for (i = 0; i < rounds; i++) {
		struct droce_qp *qp = droce_create_qp(pd, &ia);
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		CHECK(qp != NULL);
		to_rts(qp, 0x77);
		pair_step();
		CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE), 0);
		pair_step();
		CHECK_EQ(droce_destroy_qp(qp), 0);
	}
	while (droce_poll_cq(cq, 1, &(struct ibv_wc){ 0 }) > 0)
		;
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
}

static uint32_t stop_poller;

static void *poller(void *arg)
{
	RTE_SET_USED(arg);
	while (!__atomic_load_n(&stop_poller, __ATOMIC_ACQUIRE))
		CHECK(droce_engine_poll(pair_ctx[0]) >= 0);
	return NULL;
}

struct resolve_arg {
	struct droce_context *ctx;
	int rc;
};

/* Runs on the instance (engine_inst_call): the transport's resolve() for droce1's GID. */
static void resolve_on_engine(struct engine_inst *lc, void *arg)
{
	struct resolve_arg *r = arg;
	struct droce_flow f = { 0 };
	union ibv_gid g;

	CHECK_EQ(droce_query_gid(pair_ctx[1], 1, 1, &g), 0);
	memcpy(f.dgid, g.raw, 16);
	lc->env.now = rte_rdtsc();
	r->rc = lc->env.resolve(&lc->env, r->ctx->device, &f);
}

static void test_arp_between_devices(void)
{
	struct engine_shard *edev = verbs_device_engine(pair_ctx[0]->device);
	struct resolve_arg r = { .ctx = pair_ctx[0], .rc = -1 };
	struct droce_counters c0, c1;
	uint64_t end = pair_deadline(5);

	do {
		engine_inst_call(edev->lc, resolve_on_engine, &r);
		pair_step();
	} while (r.rc != 0 && rte_get_tsc_cycles() < end);
	CHECK_EQ(r.rc, 0);
	CHECK_EQ(droce_query_counters(pair_ctx[0], &c0), 0);
	CHECK_EQ(droce_query_counters(pair_ctx[1], &c1), 0);
	CHECK(c0.neigh_req_sent >= 1 && c0.neigh_resolved >= 1);
	CHECK(c1.rx_arp >= 1 && c1.neigh_reply_sent >= 1);
}

int main(int argc, char **argv)
{
	pthread_t t;

	CHECK(argc == 2);
	pair_open();
	CHECK_EQ(pair_inline, strcmp(argv[1], "inline") == 0);
	if (pair_inline) {
		qp_cycle(3);	/* control from the driving thread itself */
		CHECK_EQ(pthread_create(&t, NULL, poller, NULL), 0);
		qp_cycle(20);	/* control from another thread while this one polls */
		test_arp_between_devices();
		__atomic_store_n(&stop_poller, 1, __ATOMIC_RELEASE);
		CHECK_EQ(pthread_join(t, NULL), 0);
	} else {
		CHECK_EQ(droce_engine_poll(pair_ctx[0]), -EBUSY);
		qp_cycle(20);
		test_arp_between_devices();
	}
	CHECK_EQ(droce_engine_poll(NULL), -EINVAL);
	/* Stop (every device closed), start again. */
	CHECK_EQ(droce_close_device(pair_ctx[0]), 0);
	CHECK_EQ(droce_close_device(pair_ctx[1]), 0);
	pair_open();
	qp_cycle(2);
	CHECK_EQ(droce_close_device(pair_ctx[0]), 0);
	CHECK_EQ(droce_close_device(pair_ctx[1]), 0);
	printf("modes (%s): ok\n", argv[1]);
	return 0;
}
