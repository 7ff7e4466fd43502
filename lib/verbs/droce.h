/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * droce verbs: the public API. If you know ibv_X, you know droce_X: same arguments, same
 * semantics, same return conventions as the ibverbs man pages, with rdma-core's own structs and
 * enums from <infiniband/verbs.h> for work requests, completions, attributes and events.
 * Handles (context, pd, mr, cq, comp channel, qp, srq, ah, device) are droce's own types.
 *
 * A verbs program is ported by renaming every "ibv_" to "droce_": the type names of
 * <infiniband/verbs.h> are available under droce_ spellings too (struct droce_send_wr is
 * struct ibv_send_wr, and so on), see the aliases below.
 *
 * Configuration: the INI file named by the environment variable DROCE_CONFIG, otherwise an
 * embedded default (two devices "droce0" and "droce1" joined in-process, no NIC, no
 * hugepages). EAL: droce initialises it on first use unless the application already did, in
 * which case droce uses the application's EAL. See doc/api.md.
 *
 * Threads: every call is thread-safe. droce_post_send/post_recv/post_srq_recv/poll_cq/
 * req_notify_cq make no system call and take no lock the engine takes; several threads may post
 * to one queue or poll one CQ (they serialise on an application-side spinlock of that queue).
 */
#ifndef DROCE_H
#define DROCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Type aliases: "ibv_" renamed to "droce_" names the same rdma-core type. ---- */
#define droce_gid		ibv_gid
#define droce_device_attr	ibv_device_attr
#define droce_port_attr		ibv_port_attr
#define droce_sge		ibv_sge
#define droce_send_wr		ibv_send_wr
#define droce_recv_wr		ibv_recv_wr
#define droce_wc		ibv_wc
#define droce_qp_cap		ibv_qp_cap
#define droce_qp_attr		ibv_qp_attr
#define droce_ah_attr		ibv_ah_attr
#define droce_global_route	ibv_global_route
#define droce_srq_attr		ibv_srq_attr
#define droce_srq_init_attr	ibv_srq_init_attr
#define droce_wc_status		ibv_wc_status
#define droce_wc_opcode		ibv_wc_opcode
#define droce_wc_flags		ibv_wc_flags
#define droce_wr_opcode		ibv_wr_opcode
#define droce_send_flags	ibv_send_flags
#define droce_access_flags	ibv_access_flags
#define droce_qp_type		ibv_qp_type
#define droce_qp_state		ibv_qp_state
#define droce_qp_attr_mask	ibv_qp_attr_mask
#define droce_srq_attr_mask	ibv_srq_attr_mask
#define droce_event_type	ibv_event_type
#define droce_port_state	ibv_port_state
#define droce_mtu		ibv_mtu
#define droce_mig_state		ibv_mig_state

/* ---- Handles ---- */

/** A device: one DPDK port with its addresses. Opaque; see droce_get_device_name(). */
struct droce_device;
/** A protection domain. Opaque. */
struct droce_pd;
/**
 * An address handle. Opaque, but spelled struct ibv_ah: struct ibv_send_wr (wr.ud.ah) names
 * that type, so a ported UD program assigns a droce AH to it without a cast. Its ibv_ah fields
 * are not meaningful (context and pd are NULL).
 */
#define droce_ah ibv_ah

/** An open device (as struct ibv_context: the fields are read-only for the application). */
struct droce_context {
	struct droce_device *device;
	int async_fd;		/**< pollable; read events with droce_get_async_event() */
	int num_comp_vectors;
};

/** A registered memory region (as struct ibv_mr). Read-only for the application. */
struct droce_mr {
	struct droce_context *context;
	struct droce_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

/**
 * A memory window (as struct ibv_mw, field for field: droce_post_send() reads a BIND_MW WR's
 * wr->bind_mw.mw, a struct ibv_mw *, so pass a droce_mw cast to it; the same goes for
 * wr->bind_mw.bind_info.mr, a droce_mr cast to struct ibv_mr *). Read-only for the
 * application, but for rkey as ibv_bind_mw(3) says.
 */
struct droce_mw {
	struct droce_context *context;
	struct droce_pd *pd;
	uint32_t rkey;
	uint32_t handle;
	enum ibv_mw_type type;
};

/** A completion channel (as struct ibv_comp_channel). */
struct droce_comp_channel {
	struct droce_context *context;
	int fd;			/**< pollable; read events with droce_get_cq_event() */
	int refcnt;		/**< CQs using this channel */
};

/** A completion queue (as struct ibv_cq). Read-only for the application. */
struct droce_cq {
	struct droce_context *context;
	struct droce_comp_channel *channel;
	void *cq_context;
	uint32_t handle;
	int cqe;		/**< capacity actually granted (>= requested) */
};

/** A shared receive queue (as struct ibv_srq). Read-only for the application. */
struct droce_srq {
	struct droce_context *context;
	void *srq_context;
	struct droce_pd *pd;
	uint32_t handle;
};

/** A queue pair (as struct ibv_qp). Read-only for the application. */
struct droce_qp {
	struct droce_context *context;
	void *qp_context;
	struct droce_pd *pd;
	struct droce_cq *send_cq;
	struct droce_cq *recv_cq;
	struct droce_srq *srq;
	uint32_t handle;
	uint32_t qp_num;
	enum ibv_qp_state state;	/**< last state set; droce_query_qp() is authoritative */
	enum ibv_qp_type qp_type;
};

/** QP creation attributes (as struct ibv_qp_init_attr, with droce handles). */
struct droce_qp_init_attr {
	void *qp_context;
	struct droce_cq *send_cq;
	struct droce_cq *recv_cq;
	struct droce_srq *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
};

/** An asynchronous event (as struct ibv_async_event, with droce handles). */
struct droce_async_event {
	union {
		struct droce_cq *cq;
		struct droce_qp *qp;
		struct droce_srq *srq;
		int port_num;
	} element;
	enum ibv_event_type event_type;
};

/* ---- Configuration (DPDK conventions: 0 or -errno) ---- */

/** Maximum number of IPv6 addresses per device (each also becomes a GID). */
#define DROCE_DEVICE_MAX_IPV6 4
/** Maximum number of static neighbour entries per device. */
#define DROCE_DEVICE_MAX_NEIGH 16

/** A static neighbour: the MAC to use for a peer address (never resolved, never expires). */
struct droce_neigh_cfg {
	uint8_t addr[16];		/**< peer address as a GID (IPv4-mapped for IPv4) */
	uint8_t mac[6];
};

/** A device description for droce_device_add(); the INI keys have the same names. */
struct droce_device_cfg {
	char name[64];			/**< "droce0": what droce_get_device_name() returns */
	char devargs[256];		/**< DPDK devargs ("net_af_packet0,iface=eth1"); or "" */
	char ring_pair[32];		/**< devargs "": join with the other device of this pair */
	uint8_t mac[6];			/**< all zero: the port's own MAC */
	bool has_ipv4;
	uint8_t ipv4[4];		/**< network order */
	unsigned int n_ipv6;
	uint8_t ipv6[DROCE_DEVICE_MAX_IPV6][16];
	uint16_t mtu;			/**< Ethernet MTU; 0 means 1500 */
	unsigned int n_neigh;
	struct droce_neigh_cfg neigh[DROCE_DEVICE_MAX_NEIGH];	/**< INI: neigh = ADDR@MAC, ... */
	/** Engine lcores serving the device (INI: lcores_per_device = N|all); 0: [engine]
	 *  lcores_per_device; DROCE_LCORES_ALL: every engine lcore. The two devices of a ring
	 *  pair must say the same. */
	uint16_t lcores_per_device;
	/** 802.1Q (INI: vlan = ID): frames carry a tag with VLAN vlan_id (0..4094; 0: priority
	 *  tagged, no VLAN) and only frames of that VLAN are received; false: untagged. */
	bool vlan_on;
	uint16_t vlan_id;
	/** The tag's priority (INI: pcp = sl|0..7): with pcp_fixed, pcp on every frame; without
	 *  (INI: sl, the default), each QP's service level (ah_attr.sl, low 3 bits), where Linux's
	 *  RoCE drivers take the PCP from. */
	bool pcp_fixed;
	uint8_t pcp;
};

/** droce_device_cfg.lcores_per_device: every engine lcore. */
#define DROCE_LCORES_ALL UINT16_MAX

/**
 * Add a device at run time (the same as a [device NAME] section of the INI file).
 * Initialises droce (configuration, EAL) first if needed.
 *
 * @return 0, or -EINVAL (bad name, MTU below 576, no devargs and no ring pair, a ring-pair
 *   partner with another lcores_per_device), -EEXIST (a
 *   device of that name exists), -ENOSPC (DROCE_MAX_DEVICES reached), -ENODEV (the DPDK port
 *   could not be probed), -EIO (EAL could not be initialised).
 */
int droce_device_add(const struct droce_device_cfg *cfg);

/** True when droce called rte_eal_init() itself; false when the application owns EAL (or
 *  droce is not initialised yet). */
bool droce_owns_eal(void);

/* ---- Devices ---- */

/**
 * List the devices (ibv_get_device_list(3)). The first call loads the configuration and
 * initialises EAL when the application has not.
 *
 * @param num_devices  If not NULL, set to the number of devices.
 * @return A NULL-terminated array to free with droce_free_device_list(), or NULL with errno
 *   ENOMEM, EINVAL (the configuration has an error; droce logged it as FILE:LINE), or EIO
 *   (configuration unreadable, EAL initialisation or a device's port failed).
 */
struct droce_device **droce_get_device_list(int *num_devices);
/** Free a list from droce_get_device_list(); the devices themselves stay valid. */
void droce_free_device_list(struct droce_device **list);
/** The device's name, or NULL (errno EINVAL) for NULL. */
const char *droce_get_device_name(struct droce_device *device);
/** The node GUID (network order; EUI-64 from the MAC), or 0 for NULL. */
__be64 droce_get_device_guid(struct droce_device *device);

/**
 * Open a device (ibv_open_device(3)).
 * @return A context, or NULL with errno EINVAL (NULL device; or its lcores_per_device more
 *   than the engine has lcores, or above 1 with the inline engine), ENOMEM, EMFILE (no
 *   eventfd), EIO (the engine could not start: its configuration, its port).
 */
struct droce_context *droce_open_device(struct droce_device *device);
/**
 * Close a context. @return 0, or -1 with errno EINVAL (NULL) or EBUSY (objects created on it
 *   still exist: droce frees nothing behind the application's back).
 */
int droce_close_device(struct droce_context *context);

/** ibv_query_device(3). @return 0, or EINVAL (NULL argument). */
int droce_query_device(struct droce_context *context, struct ibv_device_attr *device_attr);
/** Capability bits of struct ibv_device_attr_ex's device_cap_flags_ex that rdma-core 44's
 *  headers do not name (the kernel's IB_UVERBS_DEVICE_*, Linux 6.2). */
#define DROCE_DEVICE_FLUSH_GLOBAL (1ULL << 38)
#define DROCE_DEVICE_FLUSH_PERSISTENT (1ULL << 39)
#define DROCE_DEVICE_ATOMIC_WRITE (1ULL << 40)
/**
 * ibv_query_device_ex(3): orig_attr as droce_query_device(), device_cap_flags_ex its
 * device_cap_flags plus DROCE_DEVICE_ATOMIC_WRITE and DROCE_DEVICE_FLUSH_GLOBAL/_PERSISTENT;
 * the other extended fields 0 (no ODP, TSO, RSS, timestamps, packet pacing, tag matching).
 * @p attr_size bytes of @p attr are written (a shorter struct of an older rdma-core too).
 * @return 0, or EINVAL (NULL argument, @p input with a comp_mask, @p attr_size smaller than
 *   orig_attr).
 */
int droce_query_device_ex(struct droce_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
/** ibv_query_port(3); port 1 only. @return 0, or EINVAL (NULL argument, bad port). */
int droce_query_port(struct droce_context *context, uint8_t port_num,
		     struct ibv_port_attr *port_attr);
/** ibv_query_gid(3). Index 0 is the MAC-derived fe80:: GID, then ::ffff:IPv4, then IPv6.
 *  Unused entries read as zero. @return 0, or -1 with errno EINVAL (NULL, bad port/index). */
int droce_query_gid(struct droce_context *context, uint8_t port_num, int index,
		    union ibv_gid *gid);
/** ibv_query_pkey(3): one entry, 0xffff. @return 0, or -1 with errno EINVAL. */
int droce_query_pkey(struct droce_context *context, uint8_t port_num, int index,
		     __be16 *pkey);

/** Name of a completion status ("success", ...); "unknown" when out of range. */
const char *droce_wc_status_str(enum ibv_wc_status status);
/** Name of an async event type; "unknown" when out of range. */
const char *droce_event_type_str(enum ibv_event_type event);
/** Name of a port state; "unknown" when out of range. */
const char *droce_port_state_str(enum ibv_port_state port_state);

/* ---- Async events ---- */

/**
 * Read the next async event (ibv_get_async_event(3)): blocks while there is none, unless
 * context->async_fd was made O_NONBLOCK. Events are returned in the order raised, each once,
 * even to several concurrent readers. Each event must be acked.
 * @return 0, or -1 with errno EINVAL (NULL argument), EAGAIN (O_NONBLOCK and no event),
 *   EINTR.
 */
int droce_get_async_event(struct droce_context *context, struct droce_async_event *event);
/** Acknowledge an event from droce_get_async_event(); destroying its object waits for it. */
void droce_ack_async_event(struct droce_async_event *event);

/* ---- PD and MR ---- */

/** ibv_alloc_pd(3). @return A PD, or NULL with errno EINVAL (NULL context), ENOMEM
 *  (allocation failed or DROCE_MAX_PD reached). */
struct droce_pd *droce_alloc_pd(struct droce_context *context);
/** ibv_dealloc_pd(3). @return 0, EINVAL (NULL), EBUSY (an MR, QP, SRQ or AH uses it). */
int droce_dealloc_pd(struct droce_pd *pd);

/*
 * ---- RDMA FLUSH (IBA 1.5; Linux Soft-RoCE since 6.2) ----
 * rdma-core 44 (Debian 12) has no IBV_WR_FLUSH, IBV_WC_FLUSH, IBV_ACCESS_FLUSH_*, and no
 * ibv_wr_flush(); droce names them DROCE_* with the values newer rdma-core gives them, so a
 * program moving to newer headers keeps its numbers.
 */
/** ibv_send_wr.opcode of a FLUSH (rdma-core's IBV_WR_FLUSH). RC only. */
#define DROCE_WR_FLUSH ((enum ibv_wr_opcode)14)
/** ibv_wc.opcode of a FLUSH's completion (rdma-core's IBV_WC_FLUSH). */
#define DROCE_WC_FLUSH ((enum ibv_wc_opcode)8)
/** MR access: FLUSH with placement type DROCE_FLUSH_GLOBAL may name the MR. */
#define DROCE_ACCESS_FLUSH_GLOBAL (1 << 8)
/** MR access: FLUSH with placement type DROCE_FLUSH_PERSISTENT may name the MR. droce has no
 *  persistent memory: see doc/api.md ("RDMA FLUSH") for what such a FLUSH does. */
#define DROCE_ACCESS_FLUSH_PERSISTENT (1 << 9)
/** Placement types (FETH PlacementType bits; rdma-core's enum ibv_placement_type). */
enum droce_flush_type {
	DROCE_FLUSH_GLOBAL = 1,		/**< global visibility */
	DROCE_FLUSH_PERSISTENT = 2,	/**< persistence */
};
/** Selectivity levels (FETH; rdma-core's enum ibv_selectivity_level). */
enum droce_flush_level {
	DROCE_FLUSH_RANGE = 0,		/**< the bytes [remote_addr, remote_addr + len) */
	DROCE_FLUSH_MR = 1,		/**< the whole MR of the R_Key (remote_addr, len ignored) */
};

/**
 * Fill @p wr as a FLUSH, the arguments of rdma-core's ibv_wr_flush(). struct ibv_send_wr of
 * rdma-core 44 has no flush member, so a FLUSH WR carries (this function writes exactly these;
 * wr_id, next and send_flags stay the caller's):
 * - opcode DROCE_WR_FLUSH, num_sge 0, sg_list NULL (a FLUSH moves no local data);
 * - wr.atomic.remote_addr: the remote VA; wr.atomic.rkey: the R_Key;
 * - wr.atomic.compare_add: the length in bytes (at most 2^31);
 * - wr.atomic.swap: the FETH word as the wire has it (host order): placement type (a non-empty
 *   set of enum droce_flush_type) in bits 0-3, selectivity level in bits 4-5; other bits 0.
 * droce_post_send() refuses anything else with EINVAL: SGEs, IBV_SEND_INLINE, an empty or
 * unknown placement type, an unknown level, a longer length, a QP that is not RC.
 * The FLUSH completes DROCE_WC_FLUSH with byte_len = the length (as rxe reports it).
 */
static inline void droce_wr_set_flush(struct ibv_send_wr *wr, uint32_t rkey, uint64_t remote_addr,
				      uint32_t len, uint8_t type, uint8_t level)
{
	wr->opcode = DROCE_WR_FLUSH;
	wr->sg_list = NULL;
	wr->num_sge = 0;
	wr->wr.atomic.remote_addr = remote_addr;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.compare_add = len;
	wr->wr.atomic.swap = (uint64_t)type | (uint64_t)level << 4;
}

/**
 * ibv_reg_mr(3). Access: IBV_ACCESS_LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC,
 * DROCE_ACCESS_FLUSH_GLOBAL, DROCE_ACCESS_FLUSH_PERSISTENT
 * (REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE, as rdma-core); optional-range flags
 * (IBV_ACCESS_RELAXED_ORDERING...) are accepted and ignored. lkey and rkey are unique among live
 * MRs and carry 19 random bits each.
 * IBV_ACCESS_ZERO_BASED registers the MR under iova (addr's offset in its page), as
 * droce_reg_mr_iova2() with that iova.
 * IBV_ACCESS_MW_BIND lets memory windows be bound to the MR (droce_alloc_mw()).
 * @return An MR, or NULL with errno EINVAL (NULL pd/addr, length 0, bad access combination or
 *   unknown bit), EOPNOTSUPP (ON_DEMAND, HUGETLB), ENOMEM.
 */
struct droce_mr *droce_reg_mr(struct droce_pd *pd, void *addr, size_t length, int access);
/**
 * ibv_reg_mr_iova2(3): as droce_reg_mr(), but the MR's lkey and rkey name its first byte (at
 * @p addr) by @p iova: an SGE with its lkey and a remote READ, WRITE or atomic with its rkey
 * give addresses in [iova, iova + length). @p iova keeps @p addr's offset in its 4 KiB page
 * (as Linux's reg_mr requires). mr->addr is @p addr.
 * @return As droce_reg_mr(); EINVAL also when iova + length wraps or the page offsets differ.
 */
struct droce_mr *droce_reg_mr_iova2(struct droce_pd *pd, void *addr, size_t length,
				    uint64_t iova, unsigned int access);
/**
 * ibv_rereg_mr(3): change an MR's translation (@p addr, @p length; its iova becomes @p addr),
 * its PD (@p pd) and/or its access (@p access), as @p flags (IBV_REREG_MR_CHANGE_*) say. The
 * MR is taken out of use first, as by droce_dereg_mr() (no frame or engine iteration still uses
 * the old registration when it returns), then comes back with new lkey and rkey: a key given
 * out before names nothing. The droce_mr keeps its address.
 * @return 0, or EINVAL (NULL mr, unknown flag, no pd or a pd of another context, NULL addr or
 *   length 0 with CHANGE_TRANSLATION, bad access), EOPNOTSUPP (access droce_reg_mr() refuses);
 *   on error the MR is unchanged.
 */
int droce_rereg_mr(struct droce_mr *mr, int flags, struct droce_pd *pd, void *addr,
		   size_t length, int access);
/** ibv_dereg_mr(3). @return 0, or EINVAL (NULL), EBUSY (a memory window is bound to it:
 *  ibv_alloc_mw(3) NOTES; droce_rereg_mr() also returns EBUSY then). */
int droce_dereg_mr(struct droce_mr *mr);

/* ---- Memory windows (ibv_alloc_mw(3), ibv_bind_mw(3), doc/api.md) ---- */

/**
 * ibv_alloc_mw(3): a window of @p pd, not bound. @p type IBV_MW_TYPE_1 (bound by
 * droce_bind_mw(), unbound by a bind of length 0, never invalidated) or IBV_MW_TYPE_2 (bound
 * by an IBV_WR_BIND_MW WR, invalidated by IBV_WR_LOCAL_INV or a received SEND with
 * invalidate; type 2B: only the QP that bound it reaches it). Its R_Key's low 8 bits are the
 * key a bind changes; the other 24 name the window and are random in part.
 * @return A window, or NULL with errno EINVAL (NULL pd, unknown type), ENOMEM.
 */
struct droce_mw *droce_alloc_mw(struct droce_pd *pd, enum ibv_mw_type type);
/** ibv_dealloc_mw(3): unbinds (invalidates) and frees. @return 0, EINVAL (NULL). */
int droce_dealloc_mw(struct droce_mw *mw);
/**
 * ibv_bind_mw(3): posts to @p qp (RC or UC) a bind of the type-1 window @p mw to
 * mw_bind->bind_info.mr (a droce_mr cast to struct ibv_mr *; NULL with length 0 unbinds),
 * [addr, addr + length) of the MR's iova space, with mw_access_flags (IBV_ACCESS_REMOTE_WRITE,
 * REMOTE_READ, REMOTE_ATOMIC). On success mw->rkey is the key after the bind
 * (ibv_inc_rkey()); the bind completes (IBV_WC_BIND_MW, or IBV_WC_MW_BIND_ERR when the MR
 * turns out dead, lacks IBV_ACCESS_MW_BIND or LOCAL_WRITE for a writable window, or does
 * not cover the range: the QP goes to ERR) in order with the QP's other WRs.
 * @return 0, or EINVAL (NULL, a type-2 window, a QP of another device or type, unknown access
 *   bit, IBV_ACCESS_ZERO_BASED, addr or length without an MR, a QP not in RTS/SQD/SQE/ERR),
 *   EPERM (the MR's PD is not the window's), ENOMEM (the send queue is full).
 */
int droce_bind_mw(struct droce_qp *qp, struct droce_mw *mw, struct ibv_mw_bind *mw_bind);

/* ---- Completion channels and CQs ---- */

/** ibv_create_comp_channel(3). @return A channel, or NULL with errno EINVAL, ENOMEM, EMFILE. */
struct droce_comp_channel *droce_create_comp_channel(struct droce_context *context);
/** ibv_destroy_comp_channel(3). @return 0, EINVAL (NULL), EBUSY (a CQ still uses it). */
int droce_destroy_comp_channel(struct droce_comp_channel *channel);

/**
 * ibv_create_cq(3). The CQ holds at least @p cqe completions; cq->cqe reports the capacity.
 * @return A CQ, or NULL with errno EINVAL (NULL context, cqe outside [1, max_cqe], channel of
 *   another context, comp_vector >= num_comp_vectors), ENOMEM.
 */
struct droce_cq *droce_create_cq(struct droce_context *context, int cqe, void *cq_context,
				 struct droce_comp_channel *channel, int comp_vector);
/**
 * ibv_resize_cq(3): the completions present are kept.
 * @return 0, or EINVAL (NULL, cqe outside [1, max_cqe] or below the completions present),
 *   EIO (the CQ is in error), ENOMEM.
 */
int droce_resize_cq(struct droce_cq *cq, int cqe);
/**
 * ibv_destroy_cq(3). Waits until every event delivered by droce_get_cq_event() for this CQ is
 * acked; events not yet read are discarded.
 * @return 0, EINVAL (NULL), EBUSY (a QP or SRQ uses it).
 */
int droce_destroy_cq(struct droce_cq *cq);

/**
 * ibv_poll_cq(3): non-blocking, oldest first, each completion returned once.
 * @return The number of completions written to @p wc (0..num_entries), or a negative value:
 *   -EINVAL (NULL cq, num_entries < 0, wc NULL with num_entries > 0), -EIO (the CQ overran and
 *   is in error, IBV_EVENT_CQ_ERR was raised, and the completions written before the overrun
 *   have all been returned).
 */
int droce_poll_cq(struct droce_cq *cq, int num_entries, struct ibv_wc *wc);
/** ibv_wc.sl of a UD receive: RoCE has no SL; RoCE devices (mlx5) report the received
 *  packet's L3 header type there instead, which middleware (UCX's ud_verbs) reads to find the
 *  destination address in the GRH: 2 IPv4, 1 IPv6. */
#define DROCE_WC_SL_ROCE_IPV6 1
#define DROCE_WC_SL_ROCE_IPV4 2
/**
 * ibv_req_notify_cq(3): arm the CQ's channel for the next completion (or, with
 * @p solicited_only, the next solicited or error completion). A CQ created without a
 * channel has none to arm: 0, as Linux's providers return, and no event ever follows.
 * @return 0, EINVAL (NULL cq).
 */
int droce_req_notify_cq(struct droce_cq *cq, int solicited_only);
/**
 * ibv_get_cq_event(3): blocks while the channel has no event, unless channel->fd is
 * O_NONBLOCK. @return 0, or -1 with errno EINVAL, EAGAIN (O_NONBLOCK, no event), EINTR.
 */
int droce_get_cq_event(struct droce_comp_channel *channel, struct droce_cq **cq,
		       void **cq_context);
/** ibv_ack_cq_events(3). */
void droce_ack_cq_events(struct droce_cq *cq, unsigned int nevents);
/**
 * Spin for a channel's events without system calls (droce's own, EXPERIMENTAL): while at
 * least one thread watches @p channel, the engine hands its events over in memory instead of
 * through channel->fd, and droce_comp_channel_take() takes them. droce_get_cq_event() takes
 * them too. When the last watcher stops (@p on 0), the events still in memory move to
 * channel->fd, so a program that polls the fd misses none. A watcher must stop before it
 * blocks anywhere.
 * @return 0, EINVAL (NULL channel; stopping a channel nobody watches).
 */
int droce_comp_channel_watch(struct droce_comp_channel *channel, int on);
/**
 * Take an event handed over in memory to a watcher (droce_comp_channel_watch()); never
 * blocks and never reads channel->fd.
 * @return 0 (*cq and *cq_context set, ack it as one from droce_get_cq_event()), EAGAIN (none
 *   in memory, none in channel->fd), ENOMSG (none in memory, but events given before the
 *   watch wait in channel->fd: droce_get_cq_event() reads them), EINVAL (NULL argument).
 */
int droce_comp_channel_take(struct droce_comp_channel *channel, struct droce_cq **cq,
			    void **cq_context);

/* ---- QPs ---- */

/**
 * ibv_create_qp(3): RC, UC or UD. init_attr->cap is updated with what was granted (queue
 * depths rounded up to a power of two, max_recv_wr/sge 0 with an SRQ, max_inline_data at least
 * max_send_sge * 16 bytes, as rxe grants it).
 * @return A QP in RESET, or NULL with errno EINVAL (NULL argument, CQs/SRQ of another
 *   context, cap above a device limit, bad qp_type), EOPNOTSUPP (a qp_type droce lacks:
 *   RAW_PACKET, XRC, DRIVER), ENOMEM (DROCE_MAX_QP reached or allocation failed).
 */
struct droce_qp *droce_create_qp(struct droce_pd *pd, struct droce_qp_init_attr *qp_init_attr);
/**
 * ibv_modify_qp(3): the IBTA transition rules, required and optional masks per transition and
 * QP type as the Linux verbs core enforces them. Moving to ERR completes every outstanding WR
 * with IBV_WC_WR_FLUSH_ERR, in order; moving to RESET empties the queues. ALT_PATH (APM) is
 * rejected on RoCE, as in Linux. IBV_QP_CUR_STATE must name the current state.
 * @return 0, EINVAL (NULL, bad transition or mask, attribute value out of range: the QP is
 *   unchanged; IBV_QP_CAP and IBV_QP_RATE_LIMIT are never allowed, as in Linux).
 */
int droce_modify_qp(struct droce_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
/** ibv_query_qp(3): returns everything (attr_mask is a hint). @return 0, EINVAL (NULL). */
int droce_query_qp(struct droce_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct droce_qp_init_attr *init_attr);
/** ibv_destroy_qp(3). Waits until every delivered event of the QP is acked.
 *  @return 0, EINVAL (NULL), EBUSY (the QP is still attached to a multicast group: detach it
 *  first, as Linux requires). */
int droce_destroy_qp(struct droce_qp *qp);

/**
 * ibv_post_send(3). Allowed in RTS and SQD (queued), SQE and ERR (completed with
 * IBV_WC_WR_FLUSH_ERR). WRs before the failing one are posted; *bad_wr names the failing one.
 * IBV_WR_BIND_MW (RC, UC) binds a type-2 window: wr->bind_mw.mw is the droce_mw cast to
 * struct ibv_mw *, bind_mw.rkey its new R_Key (only the low 8 bits may differ from the
 * window's), bind_info as in droce_bind_mw() (an MR is required, IBV_ACCESS_ZERO_BASED makes
 * remote addresses offsets into the window); the window must be free and of the QP's PD, or
 * the WR completes IBV_WC_MW_BIND_ERR. IBV_WR_LOCAL_INV (RC, UC) invalidates the bound type-2
 * window whose R_Key is wr->invalidate_rkey (anything else: IBV_WC_LOC_QP_OP_ERR, as rxe).
 * Both ignore sg_list and complete in order with IBV_WC_BIND_MW / IBV_WC_LOCAL_INV.
 * @return 0, or EINVAL (NULL, wrong state, opcode not valid for the QP type, bad flags,
 *   num_sge > max_send_sge, inline data > max_inline_data, UD without a valid AH, a FLUSH not
 *   as droce_wr_set_flush() says; BIND_MW: no such window, a type-1 window, unknown access
 *   bit), ENOMEM (the send queue is full).
 */
int droce_post_send(struct droce_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
/**
 * ibv_post_recv(3). Allowed from INIT on (ERR: flushed).
 * @return 0, or EINVAL (NULL, RESET state, QP with an SRQ, num_sge > max_recv_sge), ENOMEM
 *   (the receive queue is full).
 */
int droce_post_recv(struct droce_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* ---- Multicast (UD) ---- */

/**
 * ibv_attach_mcast(3): @p qp (UD) receives the messages sent to multicast group @p gid on its
 * device: an IPv6 multicast GID (ff00::/8) or, for RoCE v2 over IPv4, an IPv4-mapped class D
 * address (::ffff:224.0.0.0/4). Each attached QP of the device gets its own copy (its own
 * receive WR and completion, its own Q_Key check); a message is not delivered back to the QP
 * that sent it, but to the other attached QPs of the sending device. See doc/api.md.
 * Attaching a QP to a group it is in already succeeds and changes nothing (as Linux).
 *
 * @param lid  Ignored: RoCE has no LIDs (as Linux on RoCE ports).
 * @return 0, or EINVAL (NULL qp or gid, QP not UD, gid not a multicast GID), ENOMEM
 *   (DROCE_MAX_MCAST_GRP groups on the device, DROCE_MAX_MCAST_QP_ATTACH QPs in the group, or
 *   DROCE_MAX_TOTAL_MCAST_QP_ATTACH attachments on the device: droce_query_device() reports
 *   them as max_mcast_grp, max_mcast_qp_attach, max_total_mcast_qp_attach).
 */
int droce_attach_mcast(struct droce_qp *qp, const union ibv_gid *gid, uint16_t lid);
/**
 * ibv_detach_mcast(3): @p qp stops receiving group @p gid; the group goes away with its last
 * QP. @param lid  Ignored.
 * @return 0, or EINVAL (NULL qp or gid, QP not UD, gid not a multicast GID, QP not attached to
 *   the group).
 */
int droce_detach_mcast(struct droce_qp *qp, const union ibv_gid *gid, uint16_t lid);

/* ---- SRQs ---- */

/** ibv_create_srq(3). attr is updated with what was granted.
 *  @return An SRQ, or NULL with errno EINVAL (NULL, max_wr/max_sge 0 or above the device
 *  limit, srq_limit > max_wr), ENOMEM. */
struct droce_srq *droce_create_srq(struct droce_pd *pd, struct ibv_srq_init_attr *init_attr);
/** ibv_modify_srq(3): IBV_SRQ_LIMIT arms the limit event. @return 0, EINVAL (NULL, unknown
 *  mask bit, limit > max_wr, IBV_SRQ_MAX_WR: resizing is not supported). */
int droce_modify_srq(struct droce_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
/** ibv_query_srq(3). @return 0, EINVAL. */
int droce_query_srq(struct droce_srq *srq, struct ibv_srq_attr *attr);
/** ibv_destroy_srq(3). @return 0, EINVAL (NULL), EBUSY (a QP uses it). */
int droce_destroy_srq(struct droce_srq *srq);
/** ibv_post_srq_recv(3). @return 0, EINVAL (NULL, num_sge > max_sge, SRQ in error), ENOMEM. */
int droce_post_srq_recv(struct droce_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

/* ---- AHs ---- */

/** ibv_create_ah(3). RoCE needs a GRH: is_global must be 1.
 *  @return An AH, or NULL with errno EINVAL (NULL, port != 1, no GRH, bad sgid_index),
 *  ENOMEM. */
struct droce_ah *droce_create_ah(struct droce_pd *pd, struct ibv_ah_attr *attr);
/** ibv_destroy_ah(3). @return 0, EINVAL (NULL). */
int droce_destroy_ah(struct droce_ah *ah);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_H */
