/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * rdma-core 44's prototypes for the libibverbs.so.1 exports that Debian's libibverbs-dev does
 * not declare: rdma-core keeps them in headers it does not install (libibverbs/driver.h,
 * cmd_ioctl.h, cmd_write.h, marshall.h). Every declaration below has the types rdma-core
 * v44.0 gives it; the file and line it comes from are cited at each one. Every compilation
 * unit of lib/compat sees this header (and <infiniband/verbs.h>, which declares the other
 * exports), so a definition whose signature differs from rdma-core's fails the build
 * (doc/compat.md, "ABI conformance").
 *
 * Structures that rdma-core passes only by pointer are declared incomplete here: their tags
 * are rdma-core's, so a pointer to another structure is still a conflicting type. The
 * command structures (struct ibv_alloc_pd, ...) are rdma-core's libibverbs/kern-abi.h ones,
 * the responses and the kernel's attribute structures the kernel's <rdma/ib_user_verbs.h>
 * and <rdma/ib_user_sa.h> ones.
 *
 * Only what droce exports is declared; a new export of these headers gets its prototype here.
 */
#ifndef RDMA_CORE_PRIVATE_H
#define RDMA_CORE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rdma-core's provider-side objects (driver.h) and command buffer (cmd_ioctl.h). */
struct ibv_command_buffer;
struct verbs_context_ops;
struct verbs_counters;
struct verbs_cq;
struct verbs_device_ops;
struct verbs_dm;
struct verbs_flow_action;
struct verbs_mr;
struct verbs_qp;
struct verbs_srq;
struct verbs_xrcd;

/* Write-command requests (kern-abi.h, DECLARE_CMD* give each its struct tag). */
struct ibv_alloc_mw;
struct ibv_alloc_pd;
struct ibv_create_cq;
struct ibv_create_cq_ex;
struct ibv_create_qp;
struct ibv_create_qp_ex;
struct ibv_create_srq;
struct ibv_create_wq;
struct ibv_create_xsrq;
struct ibv_get_context;
struct ibv_modify_cq;
struct ibv_modify_qp;
struct ibv_modify_qp_ex;
struct ibv_modify_srq;
struct ibv_modify_wq;
struct ibv_open_qp;
struct ibv_open_xrcd;
struct ibv_query_port;
struct ibv_query_qp;
struct ibv_query_srq;
struct ibv_reg_mr;
struct ibv_rereg_mr;
struct ibv_resize_cq;

/* The kernel's uverbs structures (<rdma/ib_user_verbs.h>, <rdma/ib_user_sa.h>). */
struct ib_uverbs_ah_attr;
struct ib_uverbs_alloc_mw_resp;
struct ib_uverbs_alloc_pd_resp;
struct ib_uverbs_create_ah_resp;
struct ib_uverbs_create_cq_resp;
struct ib_uverbs_create_qp_resp;
struct ib_uverbs_create_srq_resp;
struct ib_uverbs_ex_create_cq_resp;
struct ib_uverbs_ex_create_qp_resp;
struct ib_uverbs_ex_create_rwq_ind_table_resp;
struct ib_uverbs_ex_create_wq_resp;
struct ib_uverbs_ex_modify_qp_resp;
struct ib_uverbs_ex_query_device_resp;
struct ib_uverbs_get_context_resp;
struct ib_uverbs_open_xrcd_resp;
struct ib_uverbs_qp_attr;
struct ib_uverbs_reg_mr_resp;
struct ib_uverbs_rereg_mr_resp;
struct ib_uverbs_resize_cq_resp;
struct ib_user_path_rec;

/* ---- IBVERBS_1.0 / 1.1 exports declared outside <infiniband/verbs.h> ---- */

/* libibverbs/driver.h:709. The sysfs mount point, without a trailing '/'; never NULL. */
const char *ibv_get_sysfs_path(void);

/* libibverbs/driver.h:711. Reads <dir>/<file>: its length, or -1. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);

/* libibverbs/driver.h:689, 690. */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

/* libibverbs/marshall.h:45, 48, 51, 54 (kernel-ABI marshalling, used by librdmacm). */
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);

/* ---- IBVERBS_PRIVATE_34: rdma-core's provider ABI ---- */

/* libibverbs/driver.h:130. */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};

/* libibverbs/driver.h:724. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type);

/* libibverbs/driver.h:60. */
void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...);

/* libibverbs/driver.h:468: verbs_register_driver, which driver.h:464-466 renames to
 * verbs_register_driver_<IBVERBS_PABI_VERSION>, 34 in rdma-core 44 (CMakeLists.txt:84). */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

/* libibverbs/driver.h:484, 498, 499, 502, 506. */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);
struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data);

/* libibverbs/cmd_ioctl.h:193. */
int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd);

/* libibverbs/cmd_write.h:321 (defined in libibverbs/cmd.c:48). */
extern bool verbs_allow_disassociate_destroy;

/* The ibv_cmd_* commands, libibverbs/driver.h, line given at each. */
/* :508 */
int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd,
			size_t cmd_size, struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
/* :511 */
int ibv_cmd_query_context(struct ibv_context *ctx, struct ibv_command_buffer *driver);
/* :513 */
int ibv_cmd_create_flow_action_esp(struct ibv_context *ctx,
				   struct ibv_flow_action_esp_attr *attr,
				   struct verbs_flow_action *flow_action,
				   struct ibv_command_buffer *driver);
/* :517 */
int ibv_cmd_modify_flow_action_esp(struct verbs_flow_action *flow_action,
				   struct ibv_flow_action_esp_attr *attr,
				   struct ibv_command_buffer *driver);
/* :520 */
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size);
/* :525 */
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, struct ibv_query_port *cmd,
		       size_t cmd_size);
/* :529 */
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
/* :532 */
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
/* :533 */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd, int vxrcd_size,
		      struct ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd,
		      size_t cmd_size, struct ib_uverbs_open_xrcd_resp *resp,
		      size_t resp_size);
/* :538 */
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
/* :539 */
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
		   struct verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
/* :544 */
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr, size_t length,
		     uint64_t hca_va, int access, struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp, size_t resp_sz);
/* :549 */
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/* :550 */
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr, uint32_t mr_handle);
/* :552 */
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		      struct ibv_sge *sg_list, uint32_t num_sge);
/* :557 */
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
			  int fd, int access, struct verbs_mr *vmr);
/* :560 */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type, struct ibv_mw *mw,
		     struct ibv_alloc_mw *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
/* :564 */
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
/* :565 */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		      int comp_vector, struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp, size_t resp_size);
/* :570 */
int ibv_cmd_create_cq_ex(struct ibv_context *context, const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags);
/* :580 */
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
/* :583 */
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
/* :584 */
int ibv_cmd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr,
		      struct ibv_modify_cq *cmd, size_t cmd_size);
/* :589 */
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size);
/* :593 */
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex, struct ibv_create_xsrq *cmd,
			  size_t cmd_size, struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
/* :598 */
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask,
		       struct ibv_modify_srq *cmd, size_t cmd_size);
/* :602 */
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
/* :605 */
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
/* :611 */
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex, struct ibv_create_qp *cmd,
			 size_t cmd_size, struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
/* :616 */
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd,
			  size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
/* :623 */
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp, int vqp_sz,
		    struct ibv_qp_open_attr *attr, struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
/* :628 */
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr, int attr_mask,
		     struct ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd,
		     size_t cmd_size);
/* :632 */
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size);
/* :635 */
int ibv_cmd_modify_qp_ex(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			 struct ibv_modify_qp_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_modify_qp_resp *resp, size_t resp_size);
/* :640 */
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
/* :647 */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
/* :651 */
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
/* :652, :653 */
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
/* :655 */
int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd, size_t ucmd_size);
/* :660 */
int ibv_cmd_destroy_flow(struct ibv_flow *flow_id);
/* :661 */
int ibv_cmd_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr,
		      struct ibv_wq *wq, struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp, size_t resp_size);
/* :669 */
int ibv_cmd_destroy_flow_action(struct verbs_flow_action *action);
/* :670 */
int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr, struct ibv_modify_wq *cmd,
		      size_t cmd_size);
/* :672 */
int ibv_cmd_destroy_wq(struct ibv_wq *wq);
/* :673 */
int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size);
/* :678 */
int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);
/* :679 */
int ibv_cmd_create_counters(struct ibv_context *context,
			    struct ibv_counters_init_attr *init_attr,
			    struct verbs_counters *vcounters, struct ibv_command_buffer *link);
/* :683 */
int ibv_cmd_destroy_counters(struct verbs_counters *vcounters);
/* :684 */
int ibv_cmd_read_counters(struct verbs_counters *vcounters, uint64_t *counters_value,
			  uint32_t ncounters, uint32_t flags, struct ibv_command_buffer *link);
/* :691 */
int ibv_cmd_alloc_dm(struct ibv_context *ctx, const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link);
/* :695 */
int ibv_cmd_free_dm(struct verbs_dm *dm);
/* :696 */
int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm, uint64_t offset, size_t length,
		      unsigned int access, struct verbs_mr *vmr, struct ibv_command_buffer *link);

#ifdef __cplusplus
}
#endif

#endif /* RDMA_CORE_PRIVATE_H */
