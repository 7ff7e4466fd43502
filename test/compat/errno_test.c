/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * errno from every libibverbs call of the drop-in that fails, as rdma-core leaves it: each
 * call is made with bad arguments (or on an object in the wrong state) with errno cleared
 * first, and both the return value and errno are checked. Calls that return an error code
 * (ibv_modify_qp(), ibv_dealloc_pd(), ...) also leave it in errno, as rdma-core's do (their
 * commands fail through write(), which sets errno); calls that return a pointer return NULL
 * with errno; -1 calls return -1 with errno. One device (DROCE_CONFIG: droce0 of a ring pair).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "compat_rdma_core_private.h"

/* @p call returns @p ret and leaves errno @p err (errno cleared before the call). */
#define EXPECT_ERR(call, ret, err) do { \
	errno = 0; \
	long long r_ = (long long)(call); \
	int e_ = errno; \
	if (r_ != (long long)(ret) || e_ != (err)) { \
		fprintf(stderr, "%s:%d: %s: returned %lld errno %d (%s), expected %lld errno " \
			"%d (%s)\n", __FILE__, __LINE__, #call, r_, e_, strerror(e_), \
			(long long)(ret), (err), strerror(err)); \
		exit(1); \
	} \
	n_checked++; \
} while (0)

/* @p call returns NULL with errno @p err. */
#define EXPECT_NULL(call, err) EXPECT_ERR((uintptr_t)(call), 0, err)

static unsigned int n_checked;
static uint8_t buf[8192] __attribute__((aligned(4096)));

static void devices(struct ibv_device *dev)
{
	EXPECT_NULL(ibv_get_device_name(NULL), EINVAL);
	EXPECT_ERR(ibv_get_device_guid(NULL), 0, EINVAL);
	EXPECT_ERR(ibv_get_device_index(NULL), -1, EINVAL);
	EXPECT_NULL(ibv_open_device(NULL), EINVAL);
	EXPECT_ERR(ibv_close_device(NULL), -1, EINVAL);
	EXPECT_NULL(ibv_import_device(3), EOPNOTSUPP);
	EXPECT_ERR(ibv_read_sysfs_file("/nonexistent/droce", "x", (char *)buf, 16), -1, ENOENT);
	(void)dev;
}

static void queries(struct ibv_context *ctx)
{
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	struct ibv_device_attr_ex dx;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge[2];
	enum ibv_gid_type_sysfs gt;
	union ibv_gid gid;
	__be16 pkey;

	EXPECT_ERR(ibv_query_device(NULL, &da), EINVAL, EINVAL);
	EXPECT_ERR(ibv_query_device(ctx, NULL), EINVAL, EINVAL);
	/* the inline refuses a comp_mask itself (EINVAL, errno untouched, as rdma-core's);
	 * the drop-in's op refuses what reaches it */
	CHECK_EQ(ibv_query_device_ex(ctx, &in, &dx), EINVAL);
	EXPECT_ERR(verbs_get_ctx(ctx)->query_device_ex(ctx, NULL, &dx, 8), EINVAL, EINVAL);
	EXPECT_ERR(ibv_query_port(ctx, 2, &pa), EINVAL, EINVAL);
	EXPECT_ERR(ibv_query_gid(ctx, 1, 4096, &gid), -1, EINVAL);
	EXPECT_ERR(ibv_query_gid(NULL, 1, 0, &gid), -1, EINVAL);
	EXPECT_ERR(ibv_query_pkey(ctx, 1, 1, &pkey), -1, EINVAL);
	EXPECT_ERR(ibv_get_pkey_index(ctx, 1, htobe16(0x1234)), -1, ENOENT);
	EXPECT_ERR(ibv_query_gid_ex(ctx, 1, 4096, &ge[0], 0), EINVAL, EINVAL);
	EXPECT_ERR(ibv_query_gid_ex(ctx, 1, 2, &ge[0], 0), ENODATA, ENODATA);	/* no IPv6 */
	EXPECT_ERR(ibv_query_gid_ex(ctx, 1, 0, &ge[0], 1), EINVAL, EINVAL);
	EXPECT_ERR(ibv_query_gid_table(ctx, ge, 1, 0), -EINVAL, EINVAL);	/* 2 GIDs */
	EXPECT_ERR(ibv_query_gid_type(ctx, 1, 4096, &gt), -1, EINVAL);
	EXPECT_ERR(ibv_query_gid_type(ctx, 1, 0, NULL), -1, EINVAL);
}

static void pd_mr_mw(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_mr *mr;

	EXPECT_NULL(ibv_alloc_pd(NULL), EINVAL);
	EXPECT_ERR(ibv_dealloc_pd(NULL), EINVAL, EINVAL);
	EXPECT_NULL(ibv_import_pd(ctx, 1), EOPNOTSUPP);
	EXPECT_NULL(ibv_reg_mr(NULL, buf, sizeof(buf), 0), EINVAL);
	EXPECT_NULL(ibv_reg_mr(pd, NULL, sizeof(buf), 0), EINVAL);
	EXPECT_NULL(ibv_reg_mr(pd, buf, 0, 0), EINVAL);
	EXPECT_NULL(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE), EINVAL);
	EXPECT_NULL(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_ON_DEMAND), EOPNOTSUPP);
	EXPECT_NULL(ibv_reg_mr_iova2(pd, buf, sizeof(buf), 0x1001, 0), EINVAL);
	EXPECT_NULL(ibv_reg_mr_iova(pd, buf, sizeof(buf), 0x1001, 0), EINVAL);
	EXPECT_NULL(ibv_reg_dmabuf_mr(pd, 0, sizeof(buf), 0, 3, 0), EOPNOTSUPP);
	EXPECT_NULL(ibv_import_mr(pd, 1), EOPNOTSUPP);
	EXPECT_ERR(ibv_dereg_mr(NULL), EINVAL, EINVAL);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	CHECK(mr != NULL);
	EXPECT_ERR(ibv_rereg_mr(mr, 1 << 10, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT, EINVAL);
	EXPECT_ERR(ibv_rereg_mr(NULL, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0),
		   IBV_REREG_MR_ERR_INPUT, EINVAL);
	EXPECT_ERR(ibv_dealloc_pd(pd), EBUSY, EBUSY);	/* the MR uses it */
	EXPECT_NULL(ibv_alloc_mw(pd, (enum ibv_mw_type)7), EINVAL);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
}

static void cq_channel(struct ibv_context *ctx, struct ibv_comp_channel *ch, struct ibv_cq *cq)
{
	struct ibv_cq *got;
	struct ibv_wc wc;
	void *cctx;
	int fl = fcntl(ch->fd, F_GETFL);

	EXPECT_NULL(ibv_create_comp_channel(NULL), EINVAL);
	EXPECT_ERR(ibv_destroy_comp_channel(ch), EBUSY, EBUSY);	/* the CQ uses it */
	EXPECT_NULL(ibv_create_cq(NULL, 16, NULL, NULL, 0), EINVAL);
	EXPECT_NULL(ibv_create_cq(ctx, 0, NULL, NULL, 0), EINVAL);
	EXPECT_NULL(ibv_create_cq(ctx, 16, NULL, NULL, 1 << 20), EINVAL);
	EXPECT_ERR(ibv_resize_cq(cq, 0), EINVAL, EINVAL);
	EXPECT_ERR(ibv_resize_cq(NULL, 16), EINVAL, EINVAL);
	EXPECT_ERR(ibv_destroy_cq(NULL), EINVAL, EINVAL);
	EXPECT_ERR(ibv_poll_cq(cq, -1, &wc), -EINVAL, EINVAL);
	CHECK(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) == 0);
	EXPECT_ERR(ibv_get_cq_event(ch, &got, &cctx), -1, EAGAIN);
	CHECK(fcntl(ch->fd, F_SETFL, fl) == 0);
	EXPECT_ERR(ibv_get_cq_event(NULL, &got, &cctx), -1, EINVAL);
}

static void srq(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 0, .max_sge = 1 } };
	struct ibv_srq_attr a = { .max_wr = 64 };
	struct ibv_srq *s;
	struct ibv_recv_wr wr = { .num_sge = 99 }, *bad;

	EXPECT_NULL(ibv_create_srq(pd, &sa), EINVAL);
	EXPECT_NULL(ibv_create_srq(NULL, &sa), EINVAL);
	sa.attr.max_wr = 16;
	s = ibv_create_srq(pd, &sa);
	CHECK(s != NULL);
	EXPECT_ERR(ibv_modify_srq(s, &a, IBV_SRQ_MAX_WR), EINVAL, EINVAL);
	EXPECT_ERR(ibv_modify_srq(NULL, &a, IBV_SRQ_LIMIT), EINVAL, EINVAL);
	EXPECT_ERR(ibv_query_srq(NULL, &a), EINVAL, EINVAL);
	EXPECT_ERR(ibv_post_srq_recv(s, &wr, &bad), EINVAL, EINVAL);
	EXPECT_ERR(ibv_destroy_srq(NULL), EINVAL, EINVAL);
	CHECK_EQ(ibv_destroy_srq(s), 0);
}

static void qp_ah(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_qp_init_attr_ex qx = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = qa.cap, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER };
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RTR };
	struct ibv_qp_init_attr ia;
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_recv_wr rwr = { .num_sge = 0 }, *rbad;
	struct ibv_ah_attr ah = { .port_num = 1, .is_global = 0 };
	struct ibv_wc wc = { .wc_flags = 0 };
	struct ibv_grh grh;
	union ibv_gid mgid = { .raw = { 0xff, 0x0e } };
	struct ibv_ece ece;
	struct ibv_qp *qp;

	EXPECT_NULL(ibv_create_qp(NULL, &qa), EINVAL);
	EXPECT_NULL(ibv_create_qp(pd, NULL), EINVAL);
	qa.qp_type = IBV_QPT_XRC_SEND;
	EXPECT_NULL(ibv_create_qp(pd, &qa), EOPNOTSUPP);
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 1u << 30;
	EXPECT_NULL(ibv_create_qp(pd, &qa), EINVAL);
	qa.cap.max_send_wr = 4;
	EXPECT_NULL(ibv_create_qp_ex(ctx, &qx), EOPNOTSUPP);
	qp = ibv_create_qp(pd, &qa);
	CHECK(qp != NULL);
	/* qperf's "failed to modify QP to RTR": RESET -> RTR is no transition (errno says so) */
	EXPECT_ERR(ibv_modify_qp(qp, &at, IBV_QP_STATE), EINVAL, EINVAL);
	CHECK_EQ(qp->state, IBV_QPS_RESET);
	EXPECT_ERR(ibv_modify_qp(NULL, &at, IBV_QP_STATE), EINVAL, EINVAL);
	EXPECT_ERR(ibv_query_qp(NULL, &at, IBV_QP_STATE, &ia), EINVAL, EINVAL);
	EXPECT_ERR(ibv_post_send(qp, &swr, &sbad), EINVAL, EINVAL);	/* RESET */
	CHECK(sbad == &swr);
	EXPECT_ERR(ibv_post_recv(qp, &rwr, &rbad), EINVAL, EINVAL);	/* RESET */
	EXPECT_NULL(ibv_qp_to_qp_ex(qp), EOPNOTSUPP);
	EXPECT_ERR(ibv_attach_mcast(qp, &mgid, 0), EINVAL, EINVAL);	/* not UD */
	EXPECT_ERR(ibv_detach_mcast(qp, &mgid, 0), EINVAL, EINVAL);
	EXPECT_ERR(ibv_set_ece(qp, &ece), EOPNOTSUPP, EOPNOTSUPP);
	EXPECT_ERR(ibv_query_ece(qp, &ece), EOPNOTSUPP, EOPNOTSUPP);
	EXPECT_ERR(ibv_destroy_qp(NULL), EINVAL, EINVAL);
	EXPECT_ERR(ibv_destroy_cq(cq), EBUSY, EBUSY);	/* the QP uses it */
	EXPECT_NULL(ibv_create_ah(pd, &ah), EINVAL);	/* RoCE: no GRH */
	EXPECT_NULL(ibv_create_ah(NULL, &ah), EINVAL);
	EXPECT_ERR(ibv_destroy_ah(NULL), EINVAL, EINVAL);
	memset(&grh, 0, sizeof(grh));
	EXPECT_ERR(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &ah), -1, EINVAL);	/* no GRH */
	EXPECT_NULL(ibv_create_ah_from_wc(pd, &wc, &grh, 1), EINVAL);
	EXPECT_ERR(ibv_resolve_eth_l2_from_gid(NULL, &ah, buf, (uint16_t *)buf), -EINVAL,
		   EINVAL);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void async_and_provider(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_async_event ev;
	int fl = fcntl(ctx->async_fd, F_GETFL);

	CHECK(fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK) == 0);
	EXPECT_ERR(ibv_get_async_event(ctx, &ev), -1, EAGAIN);
	CHECK(fcntl(ctx->async_fd, F_SETFL, fl) == 0);
	EXPECT_ERR(ibv_get_async_event(NULL, &ev), -1, EINVAL);
	/* the provider ABI's stubs (exported for libraries loaded beside the drop-in) */
	EXPECT_ERR(ibv_cmd_dealloc_pd(pd), EOPNOTSUPP, EOPNOTSUPP);
}

int main(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	int n;

	list = ibv_get_device_list(&n);
	CHECK(list != NULL && n >= 1);
	devices(list[0]);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx != NULL);
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	CHECK(pd != NULL && ch != NULL);
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	CHECK(cq != NULL);
	queries(ctx);
	pd_mr_mw(ctx, pd);
	cq_channel(ctx, ch, cq);
	srq(pd);
	qp_ah(ctx, pd, cq);
	async_and_provider(ctx, pd);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	ibv_free_device_list(list);
	printf("compat errno: %u failing calls, each with its return value and errno\n",
	       n_checked);
	return 0;
}
