/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The droce objects of rc_pingpong, set up as ibv_rc_pingpong sets up its verbs objects: one
 * buffer (sent from and received into), one CQ for both queues (with a completion channel for
 * -e), an RC QP with one send WR and rx_depth receive WRs, and the same RTR/RTS attributes.
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

static int alloc_buf(struct pp_ctx *c, unsigned int size)
{
	long page = sysconf(_SC_PAGESIZE);

	if (posix_memalign((void **)&c->buf, (size_t)page, size) != 0) {
		fprintf(stderr, "Couldn't allocate work buf.\n");
		return -1;
	}
	memset(c->buf, PP_FILL_BYTE, size);
	c->size = size;
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
	c->cq = droce_create_cq(c->context, (int)o->rx_depth + 1, NULL, c->channel, 0);
	if (c->cq == NULL) {
		fprintf(stderr, "Couldn't create CQ (%s)\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* Create the RC QP; send inline when the granted inline size allows, as rdma-core does. */
static int create_qp(struct pp_ctx *c)
{
	struct droce_qp_init_attr init = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = c->rx_depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr attr;

	c->qp = droce_create_qp(c->pd, &init);
	if (c->qp == NULL) {
		fprintf(stderr, "Couldn't create QP (%s)\n", strerror(errno));
		return -1;
	}
	if (droce_query_qp(c->qp, &attr, IBV_QP_CAP, &init) == 0 &&
	    init.cap.max_inline_data >= c->size)
		c->send_flags |= IBV_SEND_INLINE;
	return 0;
}

static int qp_to_init(struct pp_ctx *c, int ib_port)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)ib_port,
		.qp_access_flags = 0,
	};
	int rc;

	rc = droce_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS);
	if (rc != 0)
		fprintf(stderr, "Failed to modify QP to INIT (%s)\n", strerror(rc));
	return rc != 0 ? -1 : 0;
}

static int setup(struct pp_ctx *c, struct droce_device *dev, const struct pp_opts *o)
{
	c->context = droce_open_device(dev);
	if (c->context == NULL) {
		fprintf(stderr, "Couldn't get context for %s\n", droce_get_device_name(dev));
		return -1;
	}
	c->pd = droce_alloc_pd(c->context);
	if (c->pd == NULL) {
		fprintf(stderr, "Couldn't allocate PD\n");
		return -1;
	}
	c->mr = droce_reg_mr(c->pd, c->buf, c->size, IBV_ACCESS_LOCAL_WRITE);
	if (c->mr == NULL) {
		fprintf(stderr, "Couldn't register MR\n");
		return -1;
	}
	if (create_cq(c, o) != 0 || create_qp(c) != 0)
		return -1;
	return qp_to_init(c, o->ib_port);
}

/* Open the device and create everything up to a QP in INIT. NULL (and a message) on error. */
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
	c->rx_depth = o->rx_depth;
	c->send_flags = IBV_SEND_SIGNALED;
	if (alloc_buf(c, o->size) != 0 || setup(c, dev, o) != 0) {
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

/* Destroy what pp_ctx_open() created, in reverse order. @return 0, or -1 on the first error. */
int pp_ctx_close(struct pp_ctx *c)
{
	if (c->qp != NULL && droce_destroy_qp(c->qp) != 0)
		return close_err("destroy QP");
	if (c->cq != NULL && droce_destroy_cq(c->cq) != 0)
		return close_err("destroy CQ");
	if (c->mr != NULL && droce_dereg_mr(c->mr) != 0)
		return close_err("deregister MR");
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

static int qp_to_rtr(struct pp_ctx *c, const struct pp_opts *o, const struct pp_dest *d)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = o->mtu,
		.dest_qp_num = (uint32_t)d->qpn,
		.rq_psn = (uint32_t)d->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
	};
	int rc;

	fill_av(&attr.ah_attr, o, d);
	rc = droce_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
	if (rc == 0)
		return 0;
	fprintf(stderr, "Failed to modify QP to RTR (%s)\n", strerror(rc));
	if (!attr.ah_attr.is_global)
		fprintf(stderr, "RoCE needs GIDs on both sides: run both with -g (droce: 1 is "
			"::ffff:<ipv4>, as rxe)\n");
	return -1;
}

static int qp_to_rts(struct pp_ctx *c, int my_psn)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = (uint32_t)my_psn,
		.max_rd_atomic = 1,
	};
	int rc;

	rc = droce_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (rc != 0)
		fprintf(stderr, "Failed to modify QP to RTS (%s)\n", strerror(rc));
	return rc != 0 ? -1 : 0;
}

/* INIT -> RTR -> RTS towards @p dest, with rdma-core's attributes. @return 0 or -1. */
int pp_connect(struct pp_ctx *c, const struct pp_opts *o, int my_psn, const struct pp_dest *dest)
{
	if (qp_to_rtr(c, o, dest) != 0)
		return -1;
	return qp_to_rts(c, my_psn);
}

/* Post up to @p n receives of the whole buffer. @return how many were posted. */
int pp_post_recv(struct pp_ctx *c, int n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf, .length = c->size, .lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = PP_RECV_WRID, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int i;

	for (i = 0; i < n; i++)
		if (droce_post_recv(c->qp, &wr, &bad) != 0)
			break;
	return i;
}

/* Post one SEND of the whole buffer. @return 0 or an errno value. */
int pp_post_send(struct pp_ctx *c)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf, .length = c->size, .lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = PP_SEND_WRID,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = (unsigned int)c->send_flags,
	};
	struct ibv_send_wr *bad;

	return droce_post_send(c->qp, &wr, &bad);
}
