/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A plain libibverbs program, written the way rdma-core's examples are: open a device, query
 * it, allocate PD/MR/completion channel/CQ/QP, walk an RC QP RESET -> INIT -> RTR -> RTS
 * (looped back to itself), check it with query_qp, post a receive, arm the CQ, clean up.
 *
 * It is not compiled as is: the build renames every "ibv_" to "droce_" and the include
 * <infiniband/verbs.h> to <droce.h> (see port.sh), and compiles the result against libdroce.
 * That the renamed program compiles and runs is the point.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#define RX_DEPTH 64
#define BUF_SIZE 4096

struct ctx {
	struct ibv_context *context;
	struct ibv_comp_channel *channel;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	void *buf;
	union ibv_gid gid;
	int gidx;
};

static int find_ipv4_gid(struct ctx *c, struct ibv_port_attr *port)
{
	int i;

	for (i = 0; i < port->gid_tbl_len; i++) {
		if (ibv_query_gid(c->context, 1, i, &c->gid))
			return -1;
		if (c->gid.raw[10] == 0xff && c->gid.raw[11] == 0xff) {
			c->gidx = i;
			return 0;
		}
	}
	return -1;
}

static int open_ctx(struct ctx *c, struct ibv_device *dev)
{
	struct ibv_device_attr dattr;
	struct ibv_port_attr port;

	c->context = ibv_open_device(dev);
	if (!c->context)
		return -1;
	if (ibv_query_device(c->context, &dattr) || ibv_query_port(c->context, 1, &port))
		return -1;
	printf("device %s: fw %s, max_qp %d, max_cqe %d, port %s, active_mtu %d\n",
	       ibv_get_device_name(dev), dattr.fw_ver, dattr.max_qp, dattr.max_cqe,
	       ibv_port_state_str(port.state), 128 << port.active_mtu);
	if (find_ipv4_gid(c, &port))
		return -1;
	c->buf = calloc(1, BUF_SIZE);
	c->pd = ibv_alloc_pd(c->context);
	if (!c->buf || !c->pd)
		return -1;
	c->mr = ibv_reg_mr(c->pd, c->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	c->channel = ibv_create_comp_channel(c->context);
	if (!c->mr || !c->channel)
		return -1;
	c->cq = ibv_create_cq(c->context, RX_DEPTH + 1, c, c->channel, 0);
	return c->cq ? 0 : -1;
}

static int create_qp(struct ctx *c)
{
	struct ibv_qp_init_attr init_attr = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.cap = {
			.max_send_wr = 1,
			.max_recv_wr = RX_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};

	c->qp = ibv_create_qp(c->pd, &init_attr);
	if (!c->qp)
		return -1;
	printf("QP 0x%06x, granted send_wr %u recv_wr %u\n", c->qp->qp_num,
	       init_attr.cap.max_send_wr, init_attr.cap.max_recv_wr);
	return 0;
}

static int connect_qp(struct ctx *c, uint32_t dest_qpn, uint32_t psn)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = 0,
	};

	if (ibv_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = dest_qpn;
	attr.rq_psn = psn;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = c->gid;
	attr.ah_attr.grh.sgid_index = c->gidx;
	attr.ah_attr.grh.hop_limit = 1;
	attr.ah_attr.port_num = 1;
	if (ibv_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		return -1;
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = psn;
	attr.max_rd_atomic = 1;
	return ibv_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int check_qp(struct ctx *c, uint32_t psn)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init_attr;

	if (ibv_query_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN, &init_attr))
		return -1;
	printf("QP state %d (RTS %d), sq_psn 0x%06x, dest_qp 0x%06x\n", attr.qp_state,
	       IBV_QPS_RTS, attr.sq_psn, attr.dest_qp_num);
	return attr.qp_state == IBV_QPS_RTS && attr.sq_psn == psn &&
	       init_attr.send_cq == c->cq ? 0 : -1;
}

static int post_and_arm(struct ctx *c)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf, .length = BUF_SIZE, .lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad_wr;
	struct ibv_wc wc;

	if (ibv_post_recv(c->qp, &wr, &bad_wr))
		return -1;
	if (ibv_req_notify_cq(c->cq, 0))
		return -1;
	return ibv_poll_cq(c->cq, 1, &wc);	/* nothing has arrived: 0 */
}

static int close_ctx(struct ctx *c)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	int n;

	if (ibv_modify_qp(c->qp, &attr, IBV_QP_STATE))
		return -1;
	n = ibv_poll_cq(c->cq, 1, &wc);	/* the receive, flushed */
	if (n != 1 || wc.status != IBV_WC_WR_FLUSH_ERR)
		return -1;
	printf("flushed: %s\n", ibv_wc_status_str(wc.status));
	if (ibv_destroy_qp(c->qp) || ibv_destroy_cq(c->cq) ||
	    ibv_destroy_comp_channel(c->channel) || ibv_dereg_mr(c->mr) ||
	    ibv_dealloc_pd(c->pd) || ibv_close_device(c->context))
		return -1;
	free(c->buf);
	return 0;
}

int main(int argc, char *argv[])
{
	struct ibv_device **dev_list;
	struct ctx c = { 0 };
	uint32_t psn = 0x1234;
	int i, num;

	dev_list = ibv_get_device_list(&num);
	if (!dev_list || num == 0) {
		perror("no devices");
		return 1;
	}
	for (i = 0; i < num; i++)
		if (argc < 2 || !strcmp(ibv_get_device_name(dev_list[i]), argv[1]))
			break;
	if (i == num || open_ctx(&c, dev_list[i]) || create_qp(&c) ||
	    connect_qp(&c, c.qp->qp_num, psn) || check_qp(&c, psn) ||
	    post_and_arm(&c) != 0 || close_ctx(&c)) {
		fprintf(stderr, "verbs_port: failed\n");
		return 1;
	}
	ibv_free_device_list(dev_list);
	printf("verbs_port: OK\n");
	return 0;
}
