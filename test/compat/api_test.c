/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * lib/compat through the libibverbs API only (<infiniband/verbs.h>, linked to droce's
 * libibverbs.so.1): two devices of one process (DROCE_CONFIG: a ring pair, inline or lcore
 * engine) connected RC, then
 * - the new post-send API (ibv_qp_to_qp_ex, ibv_wr_*): SEND with immediate, RDMA WRITE,
 *   RDMA READ, both atomics and ATOMIC_WRITE in one batch, each completion and the memory
 *   checked;
 * - the classic ibv_post_send/ibv_poll_cq path and completion channel events mapped back to
 *   the application's CQ and cq_context; an async event (LAST_WQE_REACHED of a QP on an SRQ)
 *   mapped back to the application's QP;
 * - the link of droce0's port going down and up (rte_eth_dev_set_link_down/up on its net_ring
 *   ethdev, a cable pulled and put back): ibv_get_async_event() returns PORT_ERR, then
 *   PORT_ACTIVE, each with element.port_num 1, and ibv_query_port() follows;
 * - bad input and what droce does not do: EOPNOTSUPP from ibv_create_cq_ex, create_qp_ex with
 *   a comp_mask or send op droce lacks, ibv_wr_bind_mw,
 *   ibv_qp_to_qp_ex of a QP without the ops; ENOMEM from a batch larger than the SQ;
 * - ibv_reg_mr_iova2: an RDMA WRITE names the peer's memory by the iova it was registered
 *   under; an iova with another page offset is EINVAL;
 * - ibv_rereg_mr: the ibv_mr shows the new range and keys and a WRITE with the new rkey lands
 *   there; a bad flag is IBV_REREG_MR_ERR_INPUT with errno EINVAL;
 * - ibv_resolve_eth_l2_from_gid: the peer device's MAC (the one its fe80:: GID encodes), no
 *   VLAN; -EHOSTUNREACH for an address nobody answers, -EINVAL for bad arguments;
 * - ibv_close_device() with objects still open succeeds (as libibverbs) and frees them;
 * - with "exit-open": exiting with devices open, a QP connected, a completion event and an
 *   async event got and never acked exits 0 (droce's destroys wait for acks: the drop-in
 *   acks them at close) and (sanitizer build) leaves nothing allocated.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rte_ethdev.h>

#include "check.h"

#define BUF 4096
#define DEPTH 16

struct ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[BUF] __attribute__((aligned(8)));
	union ibv_gid gid;
};

static struct ep ep[2];

static void open_ep(struct ep *e, struct ibv_device *dev, int with_ops)
{
	struct ibv_qp_init_attr_ex a = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 2,
			 .max_recv_sge = 1 } };

	e->ctx = ibv_open_device(dev);
	CHECK(e->ctx != NULL);
	e->pd = ibv_alloc_pd(e->ctx);
	e->ch = ibv_create_comp_channel(e->ctx);
	CHECK(e->pd != NULL && e->ch != NULL);
	e->cq = ibv_create_cq(e->ctx, 64, e, e->ch, 0);
	CHECK(e->cq != NULL);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(e->mr != NULL);
	CHECK_EQ(e->mr->addr, e->buf);
	a.send_cq = a.recv_cq = e->cq;
	a.pd = e->pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (with_ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE;
	}
	e->qp = ibv_create_qp_ex(e->ctx, &a);
	CHECK(e->qp != NULL);
	CHECK(a.cap.max_send_wr >= DEPTH);
	CHECK_EQ(ibv_query_gid(e->ctx, 1, 1, &e->gid), 0);
}

static void connect_ep(struct ep *e, const struct ep *peer)
{
	struct ibv_qp_attr q = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC };

	CHECK_EQ(ibv_modify_qp(e->qp, &q, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_ACCESS_FLAGS), 0);
	CHECK_EQ(e->qp->state, IBV_QPS_INIT);
	memset(&q, 0, sizeof(q));
	q.qp_state = IBV_QPS_RTR;
	q.path_mtu = IBV_MTU_1024;
	q.dest_qp_num = peer->qp->qp_num;
	q.max_dest_rd_atomic = 4;
	q.min_rnr_timer = 12;
	q.ah_attr.is_global = 1;
	q.ah_attr.port_num = 1;
	q.ah_attr.grh.sgid_index = 1;
	q.ah_attr.grh.hop_limit = 64;
	q.ah_attr.grh.dgid = peer->gid;
	CHECK_EQ(ibv_modify_qp(e->qp, &q, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER), 0);
	memset(&q, 0, sizeof(q));
	q.qp_state = IBV_QPS_RTS;
	q.timeout = 14;
	q.retry_cnt = 7;
	q.rnr_retry = 7;
	q.max_rd_atomic = 4;
	CHECK_EQ(ibv_modify_qp(e->qp, &q, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC), 0);
	CHECK_EQ(e->qp->state, IBV_QPS_RTS);
}

/* Poll @p cq (ibv_poll_cq: the inline verb through ibv_context_ops) for @p n completions. */
static void poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	long spins = 0;
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		CHECK(r >= 0);
		got += r;
		CHECK(++spins < 2000000000L);
	}
	for (r = 0; r < n; r++)
		if (wc[r].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "wc %d: %s\n", r, ibv_wc_status_str(wc[r].status));
			exit(1);
		}
}

static void test_wr_api(void)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(ep[0].qp);
	struct ibv_recv_wr rw = { .wr_id = 7 }, *bad_rw;
	struct ibv_sge rs = { (uintptr_t)ep[1].buf, 64, ep[1].mr->lkey };
	uint64_t *a0 = (uint64_t *)(ep[1].buf + 1024), *a1 = (uint64_t *)(ep[1].buf + 1032);
	uint64_t aw = 0x1122334455667788ull, *a2 = (uint64_t *)(ep[1].buf + 1040);
	struct ibv_wc wc[6];
	int i;

	CHECK(x != NULL);
	for (i = 0; i < 64; i++)
		ep[0].buf[i] = (uint8_t)(i + 1);
	rw.sg_list = &rs;
	rw.num_sge = 1;
	CHECK_EQ(ibv_post_recv(ep[1].qp, &rw, &bad_rw), 0);
	*a0 = 5;
	*a1 = 100;
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htobe32(0xabc));
	ibv_wr_set_sge(x, ep[0].mr->lkey, (uintptr_t)ep[0].buf, 64);
	x->wr_id = 2;
	ibv_wr_rdma_write(x, ep[1].mr->rkey, (uintptr_t)ep[1].buf + 2048);
	ibv_wr_set_sge(x, ep[0].mr->lkey, (uintptr_t)ep[0].buf, 64);
	x->wr_id = 3;
	ibv_wr_rdma_read(x, ep[1].mr->rkey, (uintptr_t)ep[1].buf + 2048);
	ibv_wr_set_sge(x, ep[0].mr->lkey, (uintptr_t)ep[0].buf + 512, 64);
	x->wr_id = 4;
	ibv_wr_atomic_cmp_swp(x, ep[1].mr->rkey, (uintptr_t)a0, 5, 9);
	ibv_wr_set_sge(x, ep[0].mr->lkey, (uintptr_t)ep[0].buf + 256, 8);
	x->wr_id = 5;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_atomic_fetch_add(x, ep[1].mr->rkey, (uintptr_t)a1, 7);
	ibv_wr_set_sge(x, ep[0].mr->lkey, (uintptr_t)ep[0].buf + 264, 8);
	x->wr_id = 6;
	ibv_wr_atomic_write(x, ep[1].mr->rkey, (uintptr_t)a2, &aw);
	aw = 0;					/* taken at the call */
	*a2 = 0;
	CHECK_EQ(ibv_wr_complete(x), 0);
	poll_n(ep[0].cq, wc, 6);
	for (i = 0; i < 6; i++)
		CHECK_EQ(wc[i].wr_id, i + 1);
	CHECK_EQ(wc[2].opcode, IBV_WC_RDMA_READ);
	CHECK_EQ(wc[5].opcode, IBV_WC_ATOMIC_WRITE);
	CHECK_EQ(*a2, 0x1122334455667788ull);
	CHECK_EQ(memcmp(ep[0].buf + 512, ep[0].buf, 64), 0);		/* READ back the WRITE */
	CHECK_EQ(*(uint64_t *)(ep[0].buf + 256), 5);			/* CAS: old value */
	CHECK_EQ(*(uint64_t *)(ep[0].buf + 264), 100);			/* FADD: old value */
	CHECK_EQ(*a0, 9);
	CHECK_EQ(*a1, 107);
	poll_n(ep[1].cq, wc, 1);
	CHECK_EQ(wc[0].wr_id, 7);
	CHECK_EQ(wc[0].byte_len, 64);
	CHECK(wc[0].wc_flags & IBV_WC_WITH_IMM);
	CHECK_EQ(be32toh(wc[0].imm_data), 0xabc);
	CHECK_EQ(memcmp(ep[1].buf, ep[0].buf, 64), 0);
	printf("ibv_wr_*: SEND_IMM, WRITE, READ, CAS, FADD, ATOMIC_WRITE in one batch\n");
}

/* Classic post + a completion channel: the event names the application's CQ and context. */
static void test_channel(void)
{
	struct ibv_sge s = { (uintptr_t)ep[0].buf, 16, ep[0].mr->lkey };
	struct ibv_send_wr w = { .wr_id = 11, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	void *cq_ctx;

	w.wr.rdma.rkey = ep[1].mr->rkey;
	w.wr.rdma.remote_addr = (uintptr_t)ep[1].buf + 3000;
	CHECK_EQ(ibv_req_notify_cq(ep[0].cq, 0), 0);
	CHECK_EQ(ibv_post_send(ep[0].qp, &w, &bad), 0);
	CHECK_EQ(ibv_get_cq_event(ep[0].ch, &cq, &cq_ctx), 0);
	CHECK(cq == ep[0].cq);
	CHECK(cq_ctx == &ep[0]);
	ibv_ack_cq_events(cq, 1);
	CHECK_EQ(cq->comp_events_completed, 1);
	poll_n(cq, &wc, 1);
	CHECK_EQ(wc.wr_id, 11);
	printf("ibv_post_send + ibv_get_cq_event: the application's CQ and cq_context\n");
}

/* ibv_reg_mr_iova2(3): ep[1]'s buffer registered again under an iova of the same page offset;
 * a WRITE from ep[0] names it by that iova (the process address is not one the rkey names). */
static void test_iova(void)
{
	uint64_t iova = 0x7a0000000000ull + ((uintptr_t)ep[1].buf & 4095);
	struct ibv_sge s = { (uintptr_t)ep[0].buf, 32, ep[0].mr->lkey };
	struct ibv_send_wr w = { .wr_id = 12, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_mr *mr;
	struct ibv_wc wc;

	mr = ibv_reg_mr_iova2(ep[1].pd, ep[1].buf, BUF, iova,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr != NULL);
	CHECK(mr->addr == ep[1].buf);
	memset(ep[0].buf, 0x3c, 32);
	memset(ep[1].buf + 2000, 0, 34);
	w.wr.rdma.rkey = mr->rkey;
	w.wr.rdma.remote_addr = iova + 2001;
	CHECK_EQ(ibv_post_send(ep[0].qp, &w, &bad), 0);
	poll_n(ep[0].cq, &wc, 1);
	CHECK_EQ(wc.wr_id, 12);
	CHECK(ep[1].buf[2000] == 0 && ep[1].buf[2001] == 0x3c && ep[1].buf[2032] == 0x3c &&
	      ep[1].buf[2033] == 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	errno = 0;
	CHECK(ibv_reg_mr_iova2(ep[1].pd, ep[1].buf, BUF, iova + 1, IBV_ACCESS_LOCAL_WRITE) == NULL);
	CHECK_EQ(errno, EINVAL);
	printf("ibv_reg_mr_iova2: a WRITE reaches the memory by its iova\n");
}

/* ibv_rereg_mr(3): an MR of ep[1] moved to another range of its buffer; a WRITE reaches it there
 * with the new rkey. */
static void test_rereg(void)
{
	struct ibv_sge s = { (uintptr_t)ep[0].buf, 16, ep[0].mr->lkey };
	struct ibv_send_wr w = { .wr_id = 13, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_mr *mr = ibv_reg_mr(ep[1].pd, ep[1].buf, 1024, IBV_ACCESS_LOCAL_WRITE);
	uint32_t old_rkey;
	struct ibv_wc wc;

	CHECK(mr != NULL);
	old_rkey = mr->rkey;
	errno = 0;
	CHECK_EQ(ibv_rereg_mr(mr, 1 << 6, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(mr->rkey, old_rkey);
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS,
			      NULL, ep[1].buf + 2048, 512,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), 0);
	CHECK(mr->addr == ep[1].buf + 2048 && mr->length == 512 && mr->rkey != old_rkey);
	memset(ep[0].buf, 0x5a, 16);
	memset(ep[1].buf + 2048, 0, 512);
	w.wr.rdma.rkey = mr->rkey;
	w.wr.rdma.remote_addr = (uintptr_t)ep[1].buf + 2048 + 100;
	CHECK_EQ(ibv_post_send(ep[0].qp, &w, &bad), 0);
	poll_n(ep[0].cq, &wc, 1);
	CHECK_EQ(wc.wr_id, 13);
	CHECK(ep[1].buf[2048 + 99] == 0 && ep[1].buf[2048 + 100] == 0x5a &&
	      ep[1].buf[2048 + 115] == 0x5a && ep[1].buf[2048 + 116] == 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	printf("ibv_rereg_mr: new range and keys; a WRITE lands there\n");
}

/* ibv_resolve_eth_l2_from_gid(): ep[1]'s MAC, as its link-local GID (fe80:: + modified EUI-64)
 * encodes it; an address on the subnet nobody answers; bad arguments. */
static void test_resolve_l2(void)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };
	uint8_t mac[ETHERNET_LL_SIZE], want[ETHERNET_LL_SIZE];
	union ibv_gid ll;
	uint16_t vid = 0;

	CHECK_EQ(ibv_query_gid(ep[1].ctx, 1, 0, &ll), 0);
	want[0] = ll.raw[8] ^ 2;
	memcpy(&want[1], &ll.raw[9], 2);
	memcpy(&want[3], &ll.raw[13], 3);
	a.grh.sgid_index = 1;
	a.grh.dgid = ep[1].gid;
	CHECK_EQ(ibv_resolve_eth_l2_from_gid(ep[0].ctx, &a, mac, &vid), 0);
	CHECK(memcmp(mac, want, sizeof(mac)) == 0);
	CHECK_EQ(vid, 0xffff);
	a.grh.dgid.raw[15] ^= 0x40;		/* another host of the subnet: nobody answers */
	CHECK_EQ(ibv_resolve_eth_l2_from_gid(ep[0].ctx, &a, mac, &vid), -EHOSTUNREACH);
	a.grh.dgid = ep[1].gid;
	a.grh.sgid_index = 40;
	CHECK_EQ(ibv_resolve_eth_l2_from_gid(ep[0].ctx, &a, mac, &vid), -EINVAL);
	a.grh.sgid_index = 1;
	a.is_global = 0;
	CHECK_EQ(ibv_resolve_eth_l2_from_gid(ep[0].ctx, &a, mac, &vid), -EINVAL);
	CHECK_EQ(ibv_resolve_eth_l2_from_gid(ep[0].ctx, NULL, mac, &vid), -EINVAL);
	printf("ibv_resolve_eth_l2_from_gid: the peer's MAC; EHOSTUNREACH, EINVAL\n");
}

/* An async event names the application's QP (ibv_get_async_event maps droce's handles back). */
static void test_async_event(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = { .send_cq = ep[0].cq, .recv_cq = ep[0].cq,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 }, .qp_type = IBV_QPT_RC };
	struct ibv_qp_attr q = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_async_event ev;
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	srq = ibv_create_srq(ep[0].pd, &sa);
	CHECK(srq != NULL);
	CHECK(sa.attr.max_wr >= 4);
	qa.srq = srq;
	qa.qp_context = &qa;
	qp = ibv_create_qp(ep[0].pd, &qa);
	CHECK(qp != NULL);
	CHECK(qp->srq == srq);
	CHECK_EQ(ibv_modify_qp(qp, &q, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_ACCESS_FLAGS), 0);
	q.qp_state = IBV_QPS_ERR;
	CHECK_EQ(ibv_modify_qp(qp, &q, IBV_QP_STATE), 0);
	CHECK_EQ(ibv_get_async_event(ep[0].ctx, &ev), 0);	/* blocks until it comes */
	CHECK_EQ(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	CHECK(ev.element.qp == qp);
	CHECK(ev.element.qp->qp_context == &qa);
	ibv_ack_async_event(&ev);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	printf("ibv_get_async_event: LAST_WQE_REACHED names the application's QP\n");
}

static void expect_port(enum ibv_event_type type, enum ibv_port_state state)
{
	struct ibv_async_event ev;
	struct ibv_port_attr pa;

	CHECK_EQ(ibv_get_async_event(ep[0].ctx, &ev), 0);	/* blocks until it comes */
	CHECK_EQ(ev.event_type, type);
	CHECK_EQ(ev.element.port_num, 1);
	ibv_ack_async_event(&ev);
	CHECK_EQ(ibv_query_port(ep[0].ctx, 1, &pa), 0);
	CHECK_EQ(pa.state, state);
}

/* droce0's link goes down and comes back: PORT_ERR, then PORT_ACTIVE. */
static void test_port_events(void)
{
	uint16_t port;

	/* The ethdev of droce0's ring pair (rte_eth_from_rings() names it net_ring_<name>). */
	CHECK_EQ(rte_eth_dev_get_port_by_name("net_ring_droce_droce0", &port), 0);
	CHECK_EQ(rte_eth_dev_set_link_down(port), 0);
	expect_port(IBV_EVENT_PORT_ERR, IBV_PORT_DOWN);
	CHECK_EQ(rte_eth_dev_set_link_up(port), 0);
	expect_port(IBV_EVENT_PORT_ACTIVE, IBV_PORT_ACTIVE);
	printf("ibv_get_async_event: PORT_ERR and PORT_ACTIVE as the link goes down and up\n");
}

/* Events got and never acked, objects left: what exit-open leaves to the drop-in's close. */
static void leave_unacked_events(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = { .send_cq = ep[0].cq, .recv_cq = ep[0].cq,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 }, .qp_type = IBV_QPT_RC };
	struct ibv_qp_attr q = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_sge s = { (uintptr_t)ep[0].buf, 16, ep[0].mr->lkey };
	struct ibv_send_wr w = { .wr_id = 21, .sg_list = &s, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_async_event ev;
	struct ibv_cq *cq;
	void *cq_ctx;

	w.wr.rdma.rkey = ep[1].mr->rkey;
	w.wr.rdma.remote_addr = (uintptr_t)ep[1].buf;
	CHECK_EQ(ibv_req_notify_cq(ep[0].cq, 0), 0);
	CHECK_EQ(ibv_post_send(ep[0].qp, &w, &bad), 0);
	CHECK_EQ(ibv_get_cq_event(ep[0].ch, &cq, &cq_ctx), 0);		/* not acked */
	qa.srq = ibv_create_srq(ep[0].pd, &sa);
	CHECK(qa.srq != NULL);
	qa.qp_context = &qa;
	ep[0].qp = ibv_create_qp(ep[0].pd, &qa);
	CHECK(ep[0].qp != NULL);
	CHECK_EQ(ibv_modify_qp(ep[0].qp, &q, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_ACCESS_FLAGS), 0);
	q.qp_state = IBV_QPS_ERR;
	CHECK_EQ(ibv_modify_qp(ep[0].qp, &q, IBV_QP_STATE), 0);
	CHECK_EQ(ibv_get_async_event(ep[0].ctx, &ev), 0);		/* not acked */
	CHECK(ev.element.qp == ep[0].qp);
}

static void test_unsupported(struct ibv_device *dev)
{
	struct ibv_cq_init_attr_ex cqa = { .cqe = 8 };
	struct ibv_qp_init_attr_ex a = { .qp_type = IBV_QPT_RC, .send_cq = ep[0].cq,
		.recv_cq = ep[0].cq, .cap = { .max_send_wr = 2, .max_recv_wr = 1,
		.max_send_sge = 1, .max_recv_sge = 1 }, .pd = ep[0].pd };
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(ep[0].qp);
	struct ibv_qp *plain;
	int i;

	errno = 0;
	CHECK(ibv_create_cq_ex(ep[0].ctx, &cqa) == NULL);
	CHECK_EQ(errno, EOPNOTSUPP);
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	errno = 0;
	CHECK(ibv_create_qp_ex(ep[0].ctx, &a) == NULL);
	CHECK_EQ(errno, EOPNOTSUPP);
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_BIND_MW;
	errno = 0;
	CHECK(ibv_create_qp_ex(ep[0].ctx, &a) == NULL);
	CHECK_EQ(errno, EOPNOTSUPP);
	a.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;	/* no PD */
	errno = 0;
	CHECK(ibv_create_qp_ex(ep[0].ctx, &a) == NULL);
	CHECK_EQ(errno, EINVAL);
	plain = ibv_create_qp(ep[0].pd, (struct ibv_qp_init_attr *)&a);
	CHECK(plain != NULL);
	errno = 0;
	CHECK(ibv_qp_to_qp_ex(plain) == NULL);
	CHECK_EQ(errno, EOPNOTSUPP);
	CHECK_EQ(ibv_destroy_qp(plain), 0);
	errno = 0;
	CHECK(ibv_alloc_mw(ep[0].pd, IBV_MW_TYPE_1) == NULL);
	CHECK_EQ(errno, EOPNOTSUPP);
	ibv_wr_start(x);
	ibv_wr_bind_mw(x, NULL, 0, NULL);
	CHECK_EQ(ibv_wr_complete(x), EOPNOTSUPP);
	ibv_wr_start(x);
	ibv_wr_set_sge(x, 0, 0, 0);			/* a setter before any WR */
	CHECK_EQ(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x);
	for (i = 0; i < 4 * DEPTH + 1; i++)		/* more WRs than the SQ can hold */
		ibv_wr_rdma_write(x, 0, 0);
	CHECK_EQ(ibv_wr_complete(x), ENOMEM);
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, 0, 0);
	ibv_wr_abort(x);
	CHECK_EQ(ibv_wr_complete(x), 0);		/* aborted: nothing posted */
	CHECK_EQ(ibv_query_ece(ep[0].qp, NULL), EOPNOTSUPP);
	CHECK(ibv_reg_dmabuf_mr(ep[0].pd, 0, 64, 0, -1, 0) == NULL && errno == EOPNOTSUPP);
	(void)dev;
	printf("EOPNOTSUPP/EINVAL/ENOMEM where documented\n");
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	int n = 0, i;

	list = ibv_get_device_list(&n);
	CHECK(list != NULL);
	CHECK(n >= 2);
	if (argc > 1 && strcmp(argv[1], "exit-open") == 0) {
		/* A program that exits with its devices open, a QP connected and events never
		 * acked: the drop-in closes them at exit, releasing every object (LeakSanitizer,
		 * in the sanitizer build, finds none) and stopping the engine; exit status 0. */
		open_ep(&ep[0], list[0], 1);
		open_ep(&ep[1], list[1], 0);
		connect_ep(&ep[0], &ep[1]);
		connect_ep(&ep[1], &ep[0]);
		test_channel();
		leave_unacked_events();
		ibv_free_device_list(list);	/* the program's own; the rest is left open */
		printf("exit with both devices open\n");
		return 0;
	}
	open_ep(&ep[0], list[0], 1);
	open_ep(&ep[1], list[1], 0);
	connect_ep(&ep[0], &ep[1]);
	connect_ep(&ep[1], &ep[0]);
	test_wr_api();
	test_channel();
	test_iova();
	test_resolve_l2();
	test_rereg();
	test_async_event();
	test_port_events();
	test_unsupported(list[0]);
	/* Objects left open: ibv_close_device() releases them, as libibverbs (the kernel) does. */
	for (i = 0; i < 2; i++)
		CHECK_EQ(ibv_close_device(ep[i].ctx), 0);
	ibv_free_device_list(list);
	printf("ibv_close_device with a QP, CQ, channel, MR, PD open: 0\n");
	return 0;
}
