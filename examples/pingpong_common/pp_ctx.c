/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The droce objects of the pingpong examples, set up as rdma-core's tools set up their verbs
 * objects: one buffer (sent from and received into), one CQ for every queue (with a completion
 * channel for -e), the QP(s) with one send WR, and the same attributes per QP type:
 *   RC   INIT; RTR with path MTU, dest QPN, RQ PSN, max_dest_rd_atomic 1, min_rnr_timer 12;
 *        RTS with timeout 14, retry_cnt 7, rnr_retry 7, SQ PSN, max_rd_atomic 1
 *   UC   RTR with path MTU, dest QPN, RQ PSN; RTS with the SQ PSN only
 *   UD   INIT with Q_Key 0x11111111; RTR, RTS with the SQ PSN; then an AH to the peer; the
 *        buffer has 40 bytes for the GRH in front of the message
 *   SRQ  -q RC QPs, all receiving from one SRQ of rx_depth WRs
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pp.h"

static struct droce_device *find_device(const char *name)
{
	struct droce_device **list, *dev = NULL;
	int i, n;

	list = droce_get_device_list(&n);
	if (list == NULL) {
		perror("Failed to get droce devices list (DROCE_CONFIG?)");
		return NULL;
	}
	for (i = 0; i < n && dev == NULL; i++)
		if (name == NULL || strcmp(droce_get_device_name(list[i]), name) == 0)
			dev = list[i];
	if (dev == NULL && name == NULL)
		fprintf(stderr, "No droce devices found\n");
	else if (dev == NULL)
		fprintf(stderr, "droce device %s not found\n", name);
	droce_free_device_list(list);
	return dev;
}

static int alloc_buf(struct pp_ctx *c)
{
	long page = sysconf(_SC_PAGESIZE);

	if (posix_memalign((void **)&c->buf, (size_t)page, c->grh + c->size) != 0) {
		fprintf(stderr, "Couldn't allocate work buf.\n");
		return -1;
	}
	memset(c->buf, c->tool->srq ? 0 : PP_FILL_BYTE, c->grh + c->size);
	return 0;
}

static int create_cq(struct pp_ctx *c, const struct pp_opts *o)
{
	if (o->use_event) {
		c->channel = droce_create_comp_channel(c->context);
		if (c->channel == NULL) {
			fprintf(stderr, "Couldn't create completion channel\n");
			return -1;
		}
	}
	c->cq = droce_create_cq(c->context, (int)(o->rx_depth + c->num_qp), NULL, c->channel, 0);
	if (c->cq == NULL) {
		fprintf(stderr, "Couldn't create CQ (%s)\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int create_srq(struct pp_ctx *c)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = c->rx_depth, .max_sge = 1 } };

	c->srq = droce_create_srq(c->pd, &attr);
	if (c->srq == NULL) {
		fprintf(stderr, "Couldn't create SRQ (%s)\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* Create QP @p i; send inline when the granted inline size allows, as rdma-core does. */
static int create_qp(struct pp_ctx *c, unsigned int i)
{
	struct droce_qp_init_attr init = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.srq = c->srq,
		.cap = { .max_send_wr = 1, .max_recv_wr = c->srq != NULL ? 0 : c->rx_depth,
			 .max_send_sge = 1, .max_recv_sge = c->srq != NULL ? 0 : 1 },
		.qp_type = c->tool->qp_type,
	};
	struct ibv_qp_attr attr;

	c->qp[i] = droce_create_qp(c->pd, &init);
	if (c->qp[i] == NULL) {
		fprintf(stderr, "Couldn't create QP[%u] (%s)\n", i, strerror(errno));
		return -1;
	}
	if (droce_query_qp(c->qp[i], &attr, IBV_QP_CAP, &init) == 0 &&
	    init.cap.max_inline_data >= c->size)
		c->send_flags |= IBV_SEND_INLINE;
	return 0;
}

static int qp_to_init(struct pp_ctx *c, unsigned int i, int ib_port)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)ib_port,
		.qp_access_flags = 0,
		.qkey = PP_UD_QKEY,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	int rc;

	mask |= c->tool->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	rc = droce_modify_qp(c->qp[i], &attr, mask);
	if (rc != 0)
		fprintf(stderr, "Failed to modify QP[%u] to INIT (%s)\n", i, strerror(rc));
	return rc != 0 ? -1 : 0;
}

/* ibv_ud_pingpong: the message must fit the port's MTU (a UD message is one packet). */
static int check_ud_size(struct pp_ctx *c, const struct pp_opts *o)
{
	struct ibv_port_attr pa;
	unsigned int mtu;

	if (c->tool->qp_type != IBV_QPT_UD)
		return 0;
	if (droce_query_port(c->context, (uint8_t)o->ib_port, &pa) != 0) {
		fprintf(stderr, "Unable to query port info for port %d\n", o->ib_port);
		return -1;
	}
	mtu = 1u << (pa.active_mtu + 7);
	if (c->size > mtu) {
		fprintf(stderr, "Requested size larger than port MTU (%u)\n", mtu);
		return -1;
	}
	return 0;
}

static int create_qps(struct pp_ctx *c, const struct pp_opts *o)
{
	unsigned int i;

	if (create_cq(c, o) != 0 || (c->tool->srq && create_srq(c) != 0))
		return -1;
	for (i = 0; i < c->num_qp; i++)
		if (create_qp(c, i) != 0)
			return -1;
	for (i = 0; i < c->num_qp; i++)
		if (qp_to_init(c, i, o->ib_port) != 0)
			return -1;
	return 0;
}

static int setup(struct pp_ctx *c, struct droce_device *dev, const struct pp_opts *o)
{
	c->context = droce_open_device(dev);
	if (c->context == NULL) {
		fprintf(stderr, "Couldn't get context for %s\n", droce_get_device_name(dev));
		return -1;
	}
	if (check_ud_size(c, o) != 0)
		return -1;
	c->pd = droce_alloc_pd(c->context);
	if (c->pd == NULL) {
		fprintf(stderr, "Couldn't allocate PD\n");
		return -1;
	}
	c->mr = droce_reg_mr(c->pd, c->buf, c->grh + c->size, IBV_ACCESS_LOCAL_WRITE);
	if (c->mr == NULL) {
		fprintf(stderr, "Couldn't register MR\n");
		return -1;
	}
	return create_qps(c, o);
}

/* Open the device and create everything up to the QPs in INIT. NULL (and a message) on error. */
struct pp_ctx *pp_ctx_open(const struct pp_opts *o)
{
	struct droce_device *dev;
	struct pp_ctx *c;

	dev = find_device(o->ib_devname);
	if (dev == NULL)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->tool = o->tool;
	c->num_qp = o->num_qp;
	c->rx_depth = o->rx_depth;
	c->size = o->size;
	c->grh = o->tool->qp_type == IBV_QPT_UD ? PP_GRH_SIZE : 0;
	c->send_flags = IBV_SEND_SIGNALED;
	if (alloc_buf(c) != 0 || setup(c, dev, o) != 0) {
		pp_ctx_close(c);
		return NULL;
	}
	return c;
}

static int close_err(const char *what)
{
	fprintf(stderr, "Couldn't %s\n", what);
	return -1;
}

static int close_qps(struct pp_ctx *c)
{
	unsigned int i;

	for (i = 0; i < c->num_qp; i++)
		if (c->qp[i] != NULL && droce_destroy_qp(c->qp[i]) != 0)
			return close_err("destroy QP");
	if (c->srq != NULL && droce_destroy_srq(c->srq) != 0)
		return close_err("destroy SRQ");
	return 0;
}

/* Destroy what pp_ctx_open() created, in reverse order. @return 0, or -1 on the first error. */
int pp_ctx_close(struct pp_ctx *c)
{
	if (close_qps(c) != 0)
		return -1;
	if (c->cq != NULL && droce_destroy_cq(c->cq) != 0)
		return close_err("destroy CQ");
	if (c->mr != NULL && droce_dereg_mr(c->mr) != 0)
		return close_err("deregister MR");
	if (c->ah != NULL && droce_destroy_ah(c->ah) != 0)
		return close_err("destroy AH");
	if (c->pd != NULL && droce_dealloc_pd(c->pd) != 0)
		return close_err("deallocate PD");
	if (c->channel != NULL && droce_destroy_comp_channel(c->channel) != 0)
		return close_err("destroy completion channel");
	if (c->context != NULL && droce_close_device(c->context) != 0)
		return close_err("release context");
	free(c->buf);
	free(c);
	return 0;
}

/* The path to the peer. RoCE needs its GID: rdma-core uses a GRH only if the peer sent one. */
static void fill_av(struct ibv_ah_attr *ah, const struct pp_opts *o, const struct pp_dest *d)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = (uint16_t)d->lid;
	ah->sl = (uint8_t)o->sl;
	ah->port_num = (uint8_t)o->ib_port;
	if (d->gid.global.interface_id != 0) {
		ah->is_global = 1;
		ah->grh.hop_limit = 1;
		ah->grh.dgid = d->gid;
		ah->grh.sgid_index = (uint8_t)o->gidx;
	}
}

static void no_gid_hint(const struct ibv_ah_attr *ah)
{
	if (!ah->is_global)
		fprintf(stderr, "RoCE needs GIDs on both sides: run both with -g (droce: 1 is "
			"::ffff:<ipv4>, as rxe)\n");
}

static int modify(struct pp_ctx *c, unsigned int i, struct ibv_qp_attr *attr, int mask)
{
	int rc = droce_modify_qp(c->qp[i], attr, mask);

	if (rc != 0) {
		fprintf(stderr, "Failed to modify QP[%u] to %s (%s)\n", i,
			attr->qp_state == IBV_QPS_RTR ? "RTR" : "RTS", strerror(rc));
		if (attr->qp_state == IBV_QPS_RTR)
			no_gid_hint(&attr->ah_attr);
	}
	return rc != 0 ? -1 : 0;
}

/* RC and UC: INIT -> RTR -> RTS towards @p d, with rdma-core's attributes. */
static int connect_qp(struct pp_ctx *c, unsigned int i, const struct pp_opts *o, int my_psn,
		      const struct pp_dest *d)
{
	bool rc = c->tool->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = o->mtu,
		.dest_qp_num = (uint32_t)d->qpn,
		.rq_psn = (uint32_t)d->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	fill_av(&attr.ah_attr, o, d);
	if (modify(c, i, &attr, mask | (rc ? IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_MIN_RNR_TIMER : 0)) != 0)
		return -1;
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = (uint32_t)my_psn;
	attr.max_rd_atomic = 1;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	return modify(c, i, &attr, mask | (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

/* UD: RTR, RTS with our PSN, then the address handle towards the peer. */
static int connect_ud(struct pp_ctx *c, const struct pp_opts *o, int my_psn,
		      const struct pp_dest *d)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTR };
	struct ibv_ah_attr ah;

	if (modify(c, 0, &attr, IBV_QP_STATE) != 0)
		return -1;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = (uint32_t)my_psn;
	if (modify(c, 0, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0)
		return -1;
	fill_av(&ah, o, d);
	c->ah = droce_create_ah(c->pd, &ah);
	if (c->ah == NULL) {
		fprintf(stderr, "Failed to create AH (%s)\n", strerror(errno));
		no_gid_hint(&ah);
		return -1;
	}
	c->rem_qpn = (uint32_t)d->qpn;
	return 0;
}

/* Connect QP i to rem[i], for every QP. @return 0 or -1. */
int pp_connect(struct pp_ctx *c, const struct pp_opts *o, const struct pp_dest *me,
	       const struct pp_dest *rem)
{
	unsigned int i;

	if (c->tool->qp_type == IBV_QPT_UD)
		return connect_ud(c, o, me[0].psn, &rem[0]);
	for (i = 0; i < c->num_qp; i++)
		if (connect_qp(c, i, o, me[i].psn, &rem[i]) != 0)
			return -1;
	return 0;
}

/* Post up to @p n receives of the whole buffer (UD: GRH and message), to the QP or the SRQ.
 * @return how many were posted. */
int pp_post_recv(struct pp_ctx *c, int n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf, .length = c->grh + c->size, .lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = PP_RECV_WRID, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int i;

	for (i = 0; i < n; i++)
		if ((c->srq != NULL ? droce_post_srq_recv(c->srq, &wr, &bad) :
		     droce_post_recv(c->qp[0], &wr, &bad)) != 0)
			break;
	return i;
}

/* Post one SEND of the message on QP @p qp_index (UD: to the peer's QPN through the AH).
 * @return 0 or an errno value. */
int pp_post_send(struct pp_ctx *c, unsigned int qp_index)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf + c->grh, .length = c->size, .lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = PP_SEND_WRID,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = (unsigned int)c->send_flags,
	};
	struct ibv_send_wr *bad;

	if (c->ah != NULL) {
		wr.wr.ud.ah = c->ah;
		wr.wr.ud.remote_qpn = c->rem_qpn;
		wr.wr.ud.remote_qkey = PP_UD_QKEY;
	}

	return droce_post_send(c->qp[qp_index], &wr, &bad);
}
