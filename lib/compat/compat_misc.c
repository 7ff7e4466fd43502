/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The rest of libibverbs' public ABI: strings, rate conversions, fork support, and the entry
 * points droce does not implement, which fail as libibverbs does for a provider without
 * them (EOPNOTSUPP). doc/compat.md lists every entry point and what it does here.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rdma/ib_user_sa.h>	/* the kernel's path record, zeroed below */

#include "compat_private.h"
#include "droce_engine.h"

/* ---- Strings ---- */

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	return droce_wc_status_str(status);
}

const char *ibv_event_type_str(enum ibv_event_type event)
{
	return droce_event_type_str(event);
}

const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	return droce_port_state_str(port_state);
}

const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	switch (node_type) {
	case IBV_NODE_CA: return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH: return "InfiniBand switch";
	case IBV_NODE_ROUTER: return "InfiniBand router";
	case IBV_NODE_RNIC: return "iWARP NIC";
	case IBV_NODE_USNIC: return "usNIC";
	case IBV_NODE_USNIC_UDP: return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED: return "unspecified";
	default: return "unknown";
	}
}

/* ---- Rates: one table of (enum, multiple of 2.5 Gb/s, Mb/s) ---- */

#define RATE_LIST(X) \
	X(IBV_RATE_2_5_GBPS, 1, 2500) X(IBV_RATE_5_GBPS, 2, 5000) \
	X(IBV_RATE_10_GBPS, 4, 10000) X(IBV_RATE_20_GBPS, 8, 20000) \
	X(IBV_RATE_30_GBPS, 12, 30000) X(IBV_RATE_40_GBPS, 16, 40000) \
	X(IBV_RATE_60_GBPS, 24, 60000) X(IBV_RATE_80_GBPS, 32, 80000) \
	X(IBV_RATE_120_GBPS, 48, 120000) X(IBV_RATE_14_GBPS, 0, 14062) \
	X(IBV_RATE_56_GBPS, 22, 56250) X(IBV_RATE_112_GBPS, 45, 112500) \
	X(IBV_RATE_168_GBPS, 67, 168750) X(IBV_RATE_25_GBPS, 10, 25781) \
	X(IBV_RATE_100_GBPS, 40, 103125) X(IBV_RATE_200_GBPS, 80, 206250) \
	X(IBV_RATE_300_GBPS, 120, 309375) X(IBV_RATE_28_GBPS, 11, 28125) \
	X(IBV_RATE_50_GBPS, 20, 53125) X(IBV_RATE_400_GBPS, 160, 425000) \
	X(IBV_RATE_600_GBPS, 240, 637500) X(IBV_RATE_800_GBPS, 320, 850000) \
	X(IBV_RATE_1200_GBPS, 480, 1275000)

static const struct { enum ibv_rate rate; int mult; int mbps; } rates[] = {
#define RATE_ENTRY(r, m, b) { r, m, b },
	RATE_LIST(RATE_ENTRY)
#undef RATE_ENTRY
};

int ibv_rate_to_mult(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate && rates[i].mult != 0)
			return rates[i].mult;
	return -1;
}

enum ibv_rate mult_to_ibv_rate(int mult)
{
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].mult == mult && mult != 0)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

int ibv_rate_to_mbps(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* ---- fork(): droce pins nothing through a kernel, so there is nothing to prepare. ---- */

int ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int ibv_dontfork_range(void *base, size_t size)
{
	(void)base; (void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	(void)base; (void)size;
	return 0;
}

/* ---- Not implemented: EOPNOTSUPP, as libibverbs for a provider without the op ---- */

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access)
{
	(void)pd; (void)offset; (void)length; (void)iova; (void)fd; (void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context; (void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd; (void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context; (void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

/* Nothing can have been imported, so there is nothing to release. */
void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	return compat_err(EOPNOTSUPP);
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	return compat_err(EOPNOTSUPP);
}

/* 0: droce guarantees no in-order placement beyond what the IBA says (as libibverbs' default). */
int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp; (void)op; (void)flags;
	return 0;
}

/*
 * The MAC of the path @p attr describes, from the device's neighbour table, or by ARP / neighbour
 * solicitation from the engine (as the transport resolves a QP's path), waiting as libibverbs
 * does (its netlink query blocks): until an answer, or until the engine gives the resolution
 * up (neigh_retries x neigh_retry_ms). *vid is 0xffff, the "no VLAN" value (callers take a
 * vid above 0xfff as none): a device on a VLAN ([device] vlan) tags its frames itself, nothing
 * the caller builds carries the tag.
 * @return 0, or -EINVAL (NULL argument, no GRH, an sgid index the port lacks), -EHOSTUNREACH
 *   (no answer), -ENODEV (the device has no engine), as libibverbs; errno the same, positive.
 */
int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
				uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	const struct timespec ms = { 0, 1000000 };
	union ibv_gid sgid;
	int rc;

	if (context == NULL || attr == NULL || eth_mac == NULL || vid == NULL ||
	    !attr->is_global ||
	    droce_query_gid(to_cctx(context)->d, attr->port_num, attr->grh.sgid_index, &sgid) != 0)
		return -compat_err(EINVAL);
	while ((rc = droce_engine_neigh_resolve(to_cctx(context)->d, &attr->grh.dgid,
						 eth_mac)) == -EAGAIN)
		nanosleep(&ms, NULL);
	if (rc == 0)
		*vid = 0xffff;
	return -compat_err(-rc);
}

/* Kernel-ABI marshalling (rdma-core's libibverbs/marshall.h, used by librdmacm against the
 * kernel). droce has no kernel ABI: the destination is zeroed. */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	(void)src;
	memset(dst, 0, sizeof(*dst));
}

void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	(void)src;
	memset(dst, 0, sizeof(*dst));
}

void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
	(void)src;
	memset(dst, 0, sizeof(*dst));
}

void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
	(void)src;
	memset(dst, 0, sizeof(*dst));
}
