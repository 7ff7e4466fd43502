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
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/* Commands to the kernel (ibv_cmd_*) and provider helpers returning an errno value. */
#define PRIVATE_INT(X) \
	X(execute_ioctl) \
	X(ibv_cmd_advise_mr) \
	X(ibv_cmd_alloc_dm) \
	X(ibv_cmd_alloc_mw) \
	X(ibv_cmd_alloc_pd) \
	X(ibv_cmd_attach_mcast) \
	X(ibv_cmd_close_xrcd) \
	X(ibv_cmd_create_ah) \
	X(ibv_cmd_create_counters) \
	X(ibv_cmd_create_cq) \
	X(ibv_cmd_create_cq_ex) \
	X(ibv_cmd_create_flow) \
	X(ibv_cmd_create_flow_action_esp) \
	X(ibv_cmd_create_qp_ex) \
	X(ibv_cmd_create_qp_ex2) \
	X(ibv_cmd_create_rwq_ind_table) \
	X(ibv_cmd_create_srq) \
	X(ibv_cmd_create_srq_ex) \
	X(ibv_cmd_create_wq) \
	X(ibv_cmd_dealloc_mw) \
	X(ibv_cmd_dealloc_pd) \
	X(ibv_cmd_dereg_mr) \
	X(ibv_cmd_destroy_ah) \
	X(ibv_cmd_destroy_counters) \
	X(ibv_cmd_destroy_cq) \
	X(ibv_cmd_destroy_flow) \
	X(ibv_cmd_destroy_flow_action) \
	X(ibv_cmd_destroy_qp) \
	X(ibv_cmd_destroy_rwq_ind_table) \
	X(ibv_cmd_destroy_srq) \
	X(ibv_cmd_destroy_wq) \
	X(ibv_cmd_detach_mcast) \
	X(ibv_cmd_free_dm) \
	X(ibv_cmd_get_context) \
	X(ibv_cmd_modify_cq) \
	X(ibv_cmd_modify_flow_action_esp) \
	X(ibv_cmd_modify_qp) \
	X(ibv_cmd_modify_qp_ex) \
	X(ibv_cmd_modify_srq) \
	X(ibv_cmd_modify_wq) \
	X(ibv_cmd_open_qp) \
	X(ibv_cmd_open_xrcd) \
	X(ibv_cmd_query_context) \
	X(ibv_cmd_query_device_any) \
	X(ibv_cmd_query_mr) \
	X(ibv_cmd_query_port) \
	X(ibv_cmd_query_qp) \
	X(ibv_cmd_query_srq) \
	X(ibv_cmd_read_counters) \
	X(ibv_cmd_reg_dm_mr) \
	X(ibv_cmd_reg_dmabuf_mr) \
	X(ibv_cmd_reg_mr) \
	X(ibv_cmd_rereg_mr) \
	X(ibv_cmd_resize_cq) \
	X(verbs_init_cq)

/* Provider helpers returning an object. */
#define PRIVATE_PTR(X) \
	X(_verbs_init_and_alloc_context) \
	X(verbs_open_device)

/* Provider registration and logging: accepted, nothing to do. */
#define PRIVATE_VOID(X) \
	X(__verbs_log) \
	X(verbs_register_driver_34) \
	X(verbs_set_ops) \
	X(verbs_uninit_context)

/* The arguments are never read, so each stub takes none: only the calling convention matters. */
#define STUB_INT(n) int n(void); int n(void) { return EOPNOTSUPP; }
#define STUB_PTR(n) void *n(void); void *n(void) { errno = EOPNOTSUPP; return NULL; }
#define STUB_VOID(n) void n(void); void n(void) { }

PRIVATE_INT(STUB_INT)
PRIVATE_PTR(STUB_PTR)
PRIVATE_VOID(STUB_VOID)

/* A variable of the provider ABI (providers read it when a device is disassociated). */
extern bool verbs_allow_disassociate_destroy;
bool verbs_allow_disassociate_destroy;
