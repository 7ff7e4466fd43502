/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * rdma-core's provider ABI (IBVERBS_PRIVATE_34), exported only so that the libraries an
 * unmodified binary or DPDK loads next to us resolve at load time (Debian links them with
 * BIND_NOW): the system providers libmlx5/libmlx4/libefa, librdmacm, and DPDK's mlx4/mlx5
 * PMDs, which EAL loads from its plugin directory at rte_eal_init(). droce discovers its
 * devices from DROCE_CONFIG and never hands a device to a provider, so none of these can be
 * reached with an object of ours: a provider's constructor registering itself is accepted and
 * ignored; every other entry point fails (EOPNOTSUPP, or NULL with errno EOPNOTSUPP).
 * The list is the union of those libraries' imports (doc/compat.md says how to regenerate it).
 *
 * Each stub is defined with rdma-core 44's parameter list, which the compiler checks against
 * the prototype in compat_rdma_core_private.h; none reads its arguments.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "compat_private.h"	/* compat_err() */

#pragma GCC diagnostic ignored "-Wunused-parameter"

/* ---- Provider registration and logging: accepted, nothing to do ---- */

void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
}

void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
{
}

void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops)
{
}

void verbs_uninit_context(struct verbs_context *context)
{
}

void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context)
{
}

/* ---- Provider helpers returning an object: none, errno EOPNOTSUPP ---- */

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id)
{
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* A variable of the provider ABI (providers read it when a device is disassociated). */
bool verbs_allow_disassociate_destroy;

/* ---- Commands to the kernel: an errno value, also set in errno, as rdma-core's ---- */

int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		      struct ibv_sge *sg_list, uint32_t num_sge)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_alloc_dm(struct ibv_context *ctx, const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type, struct ibv_mw *mw,
		     struct ibv_alloc_mw *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_counters(struct ibv_context *context, struct ibv_counters_init_attr *init_attr,
			    struct verbs_counters *vcounters, struct ibv_command_buffer *link)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		      int comp_vector, struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_cq_ex(struct ibv_context *context, const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd, size_t ucmd_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_flow_action_esp(struct ibv_context *ctx, struct ibv_flow_action_esp_attr *attr,
				   struct verbs_flow_action *flow_action,
				   struct ibv_command_buffer *driver)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex, struct ibv_create_qp *cmd,
			 size_t cmd_size, struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd,
			  size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex, struct ibv_create_xsrq *cmd,
			  size_t cmd_size, struct ib_uverbs_create_srq_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr,
		      struct ibv_wq *wq, struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_dealloc_mw(struct ibv_mw *mw)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_dealloc_pd(struct ibv_pd *pd)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_dereg_mr(struct verbs_mr *vmr)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_destroy_ah(struct ibv_ah *ah)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_destroy_counters(struct verbs_counters *vcounters)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_destroy_cq(struct ibv_cq *cq)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_destroy_flow(struct ibv_flow *flow_id)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_destroy_flow_action(struct verbs_flow_action *action)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_destroy_qp(struct ibv_qp *qp)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_destroy_srq(struct ibv_srq *srq)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_destroy_wq(struct ibv_wq *wq)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_free_dm(struct verbs_dm *dm)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr, struct ibv_modify_cq *cmd,
		      size_t cmd_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_modify_flow_action_esp(struct verbs_flow_action *flow_action,
				   struct ibv_flow_action_esp_attr *attr,
				   struct ibv_command_buffer *driver)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_modify_qp_ex(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			 struct ibv_modify_qp_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_modify_qp_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask,
		       struct ibv_modify_srq *cmd, size_t cmd_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr, struct ibv_modify_wq *cmd,
		      size_t cmd_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp, int vqp_sz,
		    struct ibv_qp_open_attr *attr, struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd, int vxrcd_size,
		      struct ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_query_context(struct ibv_context *ctx, struct ibv_command_buffer *driver)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr, uint32_t mr_handle)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, struct ibv_query_port *cmd, size_t cmd_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr, int attr_mask,
		     struct ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd,
		     size_t cmd_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, struct ibv_query_srq *cmd,
		      size_t cmd_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_read_counters(struct verbs_counters *vcounters, uint64_t *counters_value,
			  uint32_t ncounters, uint32_t flags, struct ibv_command_buffer *link)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm, uint64_t offset, size_t length,
		      unsigned int access, struct verbs_mr *vmr, struct ibv_command_buffer *link)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
			  int access, struct verbs_mr *vmr)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
		   struct verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr, size_t length,
		     uint64_t hca_va, int access, struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp, size_t resp_sz)
{
	return compat_err(EOPNOTSUPP);
}

int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size)
{
	return compat_err(EOPNOTSUPP);
}
