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
 * - memory windows through the unmodified API: ibv_alloc_mw() (context, pd, type set),
 *   ibv_bind_mw() of a type-1 window (mw->rkey moves on, IBV_WC_BIND_MW; the peer READs
 *   through it), EINVAL for a type-2 one; ibv_wr_bind_mw() of a type-2 window, the peer's
 *   WRITE through it, ibv_dereg_mr() of its MR EBUSY, the peer's SEND with invalidate (the
 *   receive has IBV_WC_WITH_INV and the key), ibv_wr_bind_mw() + ibv_wr_local_inv() in one
 *   batch, ibv_wr_send_inv() to a window the peer bound with ibv_post_send(IBV_WR_BIND_MW);
 *   ibv_query_device() advertises MEM_WINDOW and TYPE_2B, ibv_query_device_ex() the same
 *   flags and nothing rdma-core 44 does not name; windows left open are released by
 *   ibv_close_device();
 * - bad input and what droce does not do: EOPNOTSUPP from ibv_create_cq_ex, create_qp_ex with
 *   a comp_mask or send op droce lacks (TSO, newer rdma-core's FLUSH), ibv_wr_send_tso,
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
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE |
			IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
			IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_SEND;
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

/* One classic WR from ep[1]: @p op through @p rkey at @p raddr (SEND_WITH_INV: invalidates
 * @p rkey), @p len bytes from ep[1].buf + 3072. */
static void peer_post(enum ibv_wr_opcode op, uint32_t rkey, uint64_t raddr, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)ep[1].buf + 3072, len, ep[1].mr->lkey };
	struct ibv_send_wr w = { .wr_id = 30, .sg_list = &s, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	if (op == IBV_WR_SEND_WITH_INV)
		w.invalidate_rkey = rkey;
	w.wr.rdma.remote_addr = raddr;
	w.wr.rdma.rkey = rkey;
	CHECK_EQ(ibv_post_send(ep[1].qp, &w, &bad), 0);
	poll_n(ep[1].cq, &wc, 1);
	CHECK_EQ(wc.wr_id, 30);
}

static void post_recv1(struct ep *e, uint64_t wr_id, void *addr)
{
	struct ibv_sge s = { (uintptr_t)addr, 64, e->mr->lkey };
	struct ibv_recv_wr r = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(e->qp, &r, &bad), 0);
}

static void test_mw(void)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(ep[0].qp);
	uint8_t *w1mem = ep[0].buf + 3072, *w2mem = ep[0].buf + 3584;
	struct ibv_mw_bind mb = { .wr_id = 20, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_mw_bind_info info;
	struct ibv_send_wr bw = { .wr_id = 40, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_device_attr_ex dx;
	struct ibv_device_attr da;
	struct ibv_mw *w1, *w2, *w3;
	struct ibv_mr *mr2, *mr3;
	uint32_t k0, k2, k3;
	struct ibv_wc wc[2];

	CHECK_EQ(ibv_query_device(ep[0].ctx, &da), 0);
	CHECK((da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) && da.max_mw > 0);
	/* The extended flags: only those rdma-core 44 names (ibv_devinfo prints any other as
	 * "Unknown flags"): the basic ones, none of the kernel's ATOMIC_WRITE/FLUSH bits. */
	CHECK_EQ(ibv_query_device_ex(ep[0].ctx, NULL, &dx), 0);
	CHECK_EQ(dx.device_cap_flags_ex, (uint64_t)da.device_cap_flags);
	CHECK_EQ(dx.phys_port_cnt_ex, 1);
	CHECK_EQ(dx.orig_attr.max_mw, da.max_mw);
	mr2 = ibv_reg_mr(ep[0].pd, ep[0].buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	CHECK(mr2 != NULL);
	w1 = ibv_alloc_mw(ep[0].pd, IBV_MW_TYPE_1);
	w2 = ibv_alloc_mw(ep[0].pd, IBV_MW_TYPE_2);
	CHECK(w1 != NULL && w2 != NULL);
	CHECK(w1->context == ep[0].ctx && w1->pd == ep[0].pd && w1->type == IBV_MW_TYPE_1);
	CHECK(w2->type == IBV_MW_TYPE_2);
	/* Type 1 by ibv_bind_mw(): the peer READs through it. */
	k0 = w1->rkey;
	mb.bind_info = (struct ibv_mw_bind_info){ mr2, (uintptr_t)w1mem, 256,
						  IBV_ACCESS_REMOTE_READ };
	CHECK_EQ(ibv_bind_mw(ep[0].qp, w1, &mb), 0);
	CHECK_EQ(w1->rkey, ibv_inc_rkey(k0));
	poll_n(ep[0].cq, wc, 1);
	CHECK(wc[0].wr_id == 20 && wc[0].opcode == IBV_WC_BIND_MW);
	memset(w1mem, 0x77, 256);
	peer_post(IBV_WR_RDMA_READ, w1->rkey, (uintptr_t)w1mem + 16, 64);
	CHECK(ep[1].buf[3072] == 0x77 && ep[1].buf[3072 + 63] == 0x77);
	CHECK_EQ(ibv_bind_mw(ep[0].qp, w2, &mb), EINVAL);	/* type 2: by a WR */
	/* Type 2 by ibv_wr_bind_mw(): the peer WRITEs, then invalidates it remotely. */
	info = (struct ibv_mw_bind_info){ mr2, (uintptr_t)w2mem, 256, IBV_ACCESS_REMOTE_WRITE };
	k2 = ibv_inc_rkey(w2->rkey);
	ibv_wr_start(x);
	x->wr_id = 21;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, w2, k2, &info);
	CHECK_EQ(ibv_wr_complete(x), 0);
	poll_n(ep[0].cq, wc, 1);
	CHECK(wc[0].wr_id == 21 && wc[0].opcode == IBV_WC_BIND_MW);
	memset(ep[1].buf + 3072, 0x66, 32);
	peer_post(IBV_WR_RDMA_WRITE, k2, (uintptr_t)w2mem + 8, 32);
	CHECK(w2mem[7] != 0x66 && w2mem[8] == 0x66 && w2mem[39] == 0x66);
	CHECK_EQ(ibv_dereg_mr(mr2), EBUSY);
	post_recv1(&ep[0], 22, ep[0].buf + 2560);
	peer_post(IBV_WR_SEND_WITH_INV, k2, 0, 8);
	poll_n(ep[0].cq, wc, 1);
	CHECK(wc[0].wr_id == 22 && (wc[0].wc_flags & IBV_WC_WITH_INV) &&
	      wc[0].invalidated_rkey == k2);
	/* Free again: bind with the next key and invalidate locally, one batch. */
	k3 = ibv_inc_rkey(k2);
	ibv_wr_start(x);
	x->wr_id = 23;
	ibv_wr_bind_mw(x, w2, k3, &info);
	x->wr_id = 24;
	ibv_wr_local_inv(x, k3);
	CHECK_EQ(ibv_wr_complete(x), 0);
	poll_n(ep[0].cq, wc, 2);
	CHECK(wc[0].wr_id == 23 && wc[0].opcode == IBV_WC_BIND_MW);
	CHECK(wc[1].wr_id == 24 && wc[1].opcode == IBV_WC_LOCAL_INV);
	/* ibv_wr_send_inv() to a window ep[1] bound by a classic IBV_WR_BIND_MW. */
	mr3 = ibv_reg_mr(ep[1].pd, ep[1].buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	w3 = ibv_alloc_mw(ep[1].pd, IBV_MW_TYPE_2);
	CHECK(mr3 != NULL && w3 != NULL);
	bw.bind_mw.mw = w3;
	bw.bind_mw.rkey = ibv_inc_rkey(w3->rkey);
	bw.bind_mw.bind_info = (struct ibv_mw_bind_info){ mr3, (uintptr_t)ep[1].buf + 512, 64,
							 IBV_ACCESS_REMOTE_WRITE };
	CHECK_EQ(ibv_post_send(ep[1].qp, &bw, &bad), 0);
	poll_n(ep[1].cq, wc, 1);
	CHECK(wc[0].wr_id == 40 && wc[0].opcode == IBV_WC_BIND_MW);
	post_recv1(&ep[1], 41, ep[1].buf + 1536);
	ibv_wr_start(x);
	x->wr_id = 25;
	ibv_wr_send_inv(x, bw.bind_mw.rkey);
	ibv_wr_set_sge(x, ep[0].mr->lkey, (uintptr_t)ep[0].buf, 16);
	CHECK_EQ(ibv_wr_complete(x), 0);
	poll_n(ep[0].cq, wc, 1);
	CHECK_EQ(wc[0].wr_id, 25);
	poll_n(ep[1].cq, wc, 1);
	CHECK(wc[0].wr_id == 41 && (wc[0].wc_flags & IBV_WC_WITH_INV) &&
	      wc[0].invalidated_rkey == bw.bind_mw.rkey && wc[0].byte_len == 16);
	CHECK_EQ(ibv_dealloc_mw(w3), 0);
	CHECK_EQ(ibv_dereg_mr(mr3), 0);
	/* w1 stays bound to mr2 and w2 allocated: ibv_close_device() releases them. */
	printf("memory windows: type 1 and 2 bound, used, invalidated remotely and locally\n");
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
	a.send_ops_flags = IBV_QP_EX_WITH_TSO;
	errno = 0;
	CHECK(ibv_create_qp_ex(ep[0].ctx, &a) == NULL);
	CHECK_EQ(errno, EOPNOTSUPP);
	a.send_ops_flags = 1 << 11;	/* newer rdma-core's IBV_QP_EX_WITH_FLUSH (doc/compat.md) */
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
	CHECK(ibv_alloc_mw(ep[0].pd, (enum ibv_mw_type)3) == NULL);
	CHECK_EQ(errno, EINVAL);
	ibv_wr_start(x);
	ibv_wr_send_tso(x, NULL, 0, 0);
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
	{	/* newer rdma-core's IBV_ACCESS_FLUSH_GLOBAL / _PERSISTENT: registered */
		static uint8_t fbuf[64];
		struct ibv_mr *fm = ibv_reg_mr(ep[0].pd, fbuf, sizeof(fbuf),
					       IBV_ACCESS_LOCAL_WRITE | 1 << 8 | 1 << 9);

		CHECK(fm != NULL);
		CHECK_EQ(ibv_dereg_mr(fm), 0);
	}
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
	test_mw();
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
	printf("ibv_close_device with a QP, CQ, channel, MW, MR, PD open: 0\n");
	return 0;
}
