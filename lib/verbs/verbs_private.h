/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * Verbs internals shared between the files of lib/verbs (not installed). Every object embeds
 * its public handle first; to_vX() convert back (container_of).
 *
 * Locks, in the order they nest (outer first):
 *   device->lock (tables, context list) > qp->ctl_lock (state, attributes) >
 *   sq/rq producer locks (RESET only) > cq->prod_lock (engine side: CQ producers) >
 *   channel->lock, ctx->ev_lock (event queues; innermost, never held across a call out).
 * Post and poll take only their own queue's side lock (verbs_ring.h).
 */
#ifndef VERBS_PRIVATE_H
#define VERBS_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_log.h>

#include "droce.h"
#include "droce_config.h"
#include "verbs_engine.h"
#include "verbs_ring.h"

extern int verbs_logtype;
#define VERBS_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, verbs_logtype, "droce: " fmt "\n", ##__VA_ARGS__)

/** Events handed to the application and acked by it (destroy waits until equal). */
struct verbs_evcnt {
	uint32_t delivered;
	uint32_t acked;
};

struct verbs_ctx;

/** A multicast group of a device and the QPs attached to it (verbs_mcast.c, under mcast_lock). */
struct verbs_mcg {
	union ibv_gid gid;
	uint32_t n_qp;
	struct droce_qp *qp[DROCE_MAX_MCAST_QP_ATTACH];
};

/** A device: configuration, port and the per-device object tables. */
struct droce_device {
	struct droce_device_cfg cfg;
	int port_id;			/**< -1 until the port exists */
	uint32_t link_down;		/**< the engine saw the port's link down (atomic) */
	union ibv_gid gid[DROCE_MAX_GID];
	enum ibv_mtu active_mtu;
	__be64 guid;
	pthread_mutex_t lock;
	TAILQ_HEAD(, verbs_ctx) contexts;
	struct droce_qp *qp_tbl[DROCE_QP_SLOTS];	/**< by verbs_qpn_slot() */
	struct droce_mr *mr_tbl[DROCE_MAX_MR];
	struct verbs_mw *mw_tbl[DROCE_MAX_MW];	/**< by verbs_mw_slot() of an R_Key */
	uint32_t qp_next;
	uint32_t mr_next;
	uint32_t mw_next;
	uint32_t n_pd, n_cq, n_srq, n_ah;
	unsigned int index;		/**< in the device list */
	unsigned int n_open;		/**< open contexts (open_lock in verbs_device.c) */
	pthread_mutex_t mcast_lock;	/**< the groups; never taken by an engine instance */
	uint32_t n_mcg;
	uint32_t n_mcast_attach;	/**< (QP, group) pairs */
	struct verbs_mcg mcg[DROCE_MAX_MCAST_GRP];
	void *engine;			/**< the engine's per-device state (atomic) */
};

struct verbs_async_item {
	TAILQ_ENTRY(verbs_async_item) next;
	struct droce_async_event ev;
};

struct verbs_ctx {
	struct droce_context pub;
	TAILQ_ENTRY(verbs_ctx) next;	/**< in device->contexts */
	uint32_t n_objs;		/**< PDs, CQs, channels on it (atomic) */
	pthread_mutex_t ev_lock;
	pthread_cond_t ev_cond;		/**< an async event was acked */
	TAILQ_HEAD(, verbs_async_item) events;
};

struct droce_pd {
	struct droce_context *context;
	uint32_t handle;
	uint32_t usecnt;		/**< MRs, QPs, SRQs, AHs (atomic) */
};

struct verbs_mr {
	struct droce_mr pub;
	int access;
	uint32_t index;
	/** The address its lkey and rkey name pub.addr by (ibv_reg_mr_iova2(3)); = pub.addr
	 *  for a plain registration. */
	uint64_t iova;
	/** Mbuf segments that carry this MR's memory as an external buffer (zero-copy TX,
	 *  verbs_mr_extbuf_attach()); droce_dereg_mr() waits until none is left. */
	uint32_t inflight;
	/** Set by droce_dereg_mr() before it waits: no new segment may attach. */
	uint32_t dead;
	/** Windows bound to it, plus MR_MW_LOCKED while droce_dereg_mr() or droce_rereg_mr()
	 *  runs (then no bind may take it: verbs_mw.c). */
	uint32_t n_mw;
};

#define MR_MW_LOCKED (1u << 31)

enum { MW_FREE, MW_VALID, MW_DEAD /* being deallocated: nothing binds it */ };

/**
 * A memory window. pub is what the application sees (compat's wrapper may hold another copy);
 * everything the engine uses is below, under @c lock: binds and invalidations run on the
 * engine side (the requester of the binding QP, the responder of a SEND with invalidate),
 * lookups on the responder, droce_dealloc_mw() on the application side.
 */
struct verbs_mw {
	struct droce_mw pub;
	struct droce_pd *pd;
	uint32_t index;
	verbs_lock_t lock;
	uint32_t rkey;			/**< the current R_Key (pub.rkey follows it for type 1) */
	uint8_t state;			/**< MW_FREE, MW_VALID, MW_DEAD */
	uint8_t zero_based;		/**< remote addresses are offsets into the window */
	int access;			/**< IBV_ACCESS_REMOTE_* */
	uint64_t addr;			/**< in the MR's iova space */
	uint64_t length;		/**< 0: bound to nothing */
	struct droce_mr *mr;		/**< holds one of its n_mw */
	const struct droce_qp *qp;	/**< type 2: the QP that bound it */
};

struct verbs_ah {
	struct ibv_ah pub;		/**< the handle (struct droce_ah is struct ibv_ah) */
	struct droce_context *context;
	struct droce_pd *pd;
	struct verbs_av av;
};

static inline struct verbs_ah *to_vah(struct droce_ah *a)
{
	return container_of(a, struct verbs_ah, pub);
}

struct verbs_cq;

struct verbs_channel {
	struct droce_comp_channel pub;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/**< a CQ event was acked */
	TAILQ_HEAD(, verbs_cq) pending;	/**< CQs with unread events, oldest first */
	uint32_t watchers;		/**< threads spinning for events (droce_comp_channel_watch) */
	uint32_t tokens;		/**< events handed over in memory, not through pub.fd */
	uint32_t fd_tokens;		/**< events given to pub.fd and not yet read from it */
};

enum { CQ_ARM_NONE, CQ_ARM_NEXT, CQ_ARM_SOLICITED };

/**
 * A CQ ring: the engine side produces (cq->prod_lock serialises engine lcores), application
 * pollers consume (cq->poll_lock serialises them).
 */
struct verbs_cq {
	struct droce_cq pub;
	struct verbs_ring r;
	struct ibv_wc *wc;		/**< r.size entries */
	/* Each side's lock on its own cache line: the engine takes prod_lock per completion and
	 * the application poll_lock per poll, and sharing a line would bounce it per call. */
	verbs_lock_t prod_lock __rte_cache_aligned;	/**< engine side only */
	verbs_lock_t poll_lock __rte_cache_aligned;	/**< application side only */
	uint32_t armed;			/**< CQ_ARM_*: req_notify stores, producer exchanges */
	uint32_t error;			/**< 1 after an overrun (atomic) */
	uint64_t dropped;		/**< completions lost to the error state (prod_lock) */
	uint32_t n_users;		/**< QP send/recv references (atomic) */
	/* Completion events, under the channel's lock. */
	TAILQ_ENTRY(verbs_cq) chan_next;
	uint32_t comp_pending;
	struct verbs_evcnt comp;
	struct verbs_evcnt async;	/**< under the context's ev_lock */
};

/** A work queue: application threads produce under @c lock, the engine consumes. */
struct verbs_wq {
	struct verbs_ring r;
	uint8_t *buf;
	uint32_t stride;		/**< bytes per WQE slot */
	uint32_t max_sge;
	uint32_t max_inline;
	/* Producer and consumer fields on separate cache lines: the application takes the lock
	 * per post, the engine moves fetch/done per WQE. */
	verbs_lock_t lock __rte_cache_aligned;	/**< producers (application side) */
	uint32_t fetch __rte_cache_aligned;	/**< consumer private: next WQE to hand out */
	uint32_t done;			/**< consumer private: WQEs completed (tail <= done) */
	uint32_t seen_head;		/**< consumer private: ring head last loaded */
};

struct verbs_srq {
	struct droce_srq pub;
	struct verbs_wq q;
	verbs_lock_t cons_lock;	/**< consumers (engine side) */
	uint32_t limit;			/**< armed limit, 0 = disarmed (atomic) */
	uint32_t error;			/**< IBV_EVENT_SRQ_ERR raised (atomic) */
	uint32_t n_users;		/**< QPs using it (atomic) */
	pthread_mutex_t ctl_lock;
	struct verbs_evcnt async;
};

struct verbs_qp {
	struct droce_qp pub;
	struct verbs_wq sq;
	struct verbs_wq rq;
	uint32_t state;			/**< enum ibv_qp_state; store-release by control */
	uint32_t fatal;			/**< CQ overrun seen: to ERR (verbs_qp_apply_fatal()) */
	uint32_t sqd_notify;		/**< raise SQ_DRAINED when the SQ is drained */
	int sq_sig_all;
	uint32_t index;
	struct verbs_owner *owner;	/**< NULL: unowned (atomic) */
	pthread_mutex_t ctl_lock;
	struct ibv_qp_attr attr;	/**< what modify set (ctl_lock) */
	struct ibv_qp_cap cap;		/**< granted */
	struct verbs_av av;
	struct verbs_evcnt async;
	uint32_t n_mcast;		/**< groups attached (device mcast_lock) */
	uint32_t n_mw;			/**< type-2 windows bound through it (atomic) */
	verbs_qp_release_fn *release;	/**< verbs_qp_set_release() (atomic) */
	/** 1: the owner watches the QP, posts ring no doorbell (verbs_qp_db_ring()). Its own
	 *  cache line: the posting thread exchanges it on every post. */
	uint32_t db_armed __attribute__((aligned(64)));
};

static inline struct verbs_ctx *to_vctx(struct droce_context *c)
{
	return container_of(c, struct verbs_ctx, pub);
}
static inline struct verbs_mr *to_vmr(struct droce_mr *m)
{
	return container_of(m, struct verbs_mr, pub);
}
static inline struct verbs_mw *to_vmw(struct droce_mw *m)
{
	return container_of(m, struct verbs_mw, pub);
}

/* verbs_mw.c */
/** Fill bind WQE @p w from @p wr: a type-2 window named by its handle, or (@p type1, from
 *  droce_bind_mw()) the droce_mw itself. @return 0 or EINVAL. */
int verbs_bind_wqe_fill(struct droce_qp *qp, struct verbs_send_wqe *w,
			const struct ibv_send_wr *wr, bool type1);
/** droce_post_send(); @p bind1 lets a BIND_MW name a type-1 window (droce_bind_mw()). */
int verbs_post_send(struct droce_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr,
		    bool bind1);
/** Invalidate every type-2 window bound through @p qp (being destroyed). */
void verbs_mw_qp_gone(struct droce_qp *qp);
uint8_t *verbs_mw_remote_mem(struct droce_device *dev, const struct droce_pd *pd,
			     const struct droce_qp *qp, uint32_t rkey, uint64_t va, uint32_t len,
			     int access);
/** Take one bind reference on @p mr; false while it is being deregistered. */
bool verbs_mr_mw_get(struct droce_mr *mr);
void verbs_mr_mw_put(struct droce_mr *mr);

/** Live MRs, of any device, whose iova is not their address (verbs_pd_mr.c). */
extern uint32_t verbs_n_iova_mr;

void verbs_sge_iova_slow(struct droce_device *dev, struct ibv_sge *sge, uint32_t n);

/* Posted SGEs name memory by their MR's iova (ibv_reg_mr_iova2(3)): move them to the process
 * addresses the engine reads and writes, once, at post. One load and branch while no MR in
 * the process has an iova of its own. */
static inline void verbs_sge_iova(struct droce_device *dev, struct ibv_sge *sge, uint32_t n)
{
	if (unlikely(__atomic_load_n(&verbs_n_iova_mr, __ATOMIC_RELAXED) != 0))
		verbs_sge_iova_slow(dev, sge, n);
}
static inline struct verbs_cq *to_vcq(struct droce_cq *c)
{
	return container_of(c, struct verbs_cq, pub);
}
static inline struct verbs_channel *to_vchan(struct droce_comp_channel *c)
{
	return container_of(c, struct verbs_channel, pub);
}
static inline struct verbs_qp *to_vqp(struct droce_qp *q)
{
	return container_of(q, struct verbs_qp, pub);
}
static inline struct verbs_srq *to_vsrq(struct droce_srq *s)
{
	return container_of(s, struct verbs_srq, pub);
}

static inline uint32_t verbs_qp_state(const struct verbs_qp *qp)
{
	/* Pairs with the store-release in verbs_qp_set_state(). */
	return __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
}

static inline void *verbs_wq_slot(const struct verbs_wq *q, uint32_t idx)
{
	return q->buf + (size_t)(idx & q->r.mask) * q->stride;
}

/* verbs_config.c */
struct verbs_config {
	char eal_args[512];
	unsigned int n_engine;
	struct verbs_kv engine[VERBS_MAX_KV];	/**< [engine] section, interpreted by the engine */
	unsigned int n_cm;
	struct verbs_kv cm[VERBS_MAX_KV];	/**< [cm] section, interpreted by lib/cm */
	unsigned int n_dcqcn;
	struct verbs_kv dcqcn[VERBS_MAX_KV];	/**< [dcqcn] section, interpreted by the engine */
	unsigned int n_dev;
	struct droce_device_cfg dev[DROCE_MAX_DEVICES];
};
/** Parse @p path (NULL: the embedded default). @return 0, -errno. */
int verbs_config_load(const char *path, struct verbs_config *out);
/** The embedded default configuration as INI text (what config/default.ini holds). */
const char *verbs_config_default_ini(void);
/** The configuration file in use, NULL for the embedded default. */
const char *verbs_config_path(void);
/** Check one device description. @return 0, -EINVAL. */
int verbs_config_check_dev(const struct droce_device_cfg *cfg);

/* verbs_device.c */
/** Load the configuration and initialise EAL once. @return 0, -errno. */
int verbs_init(void);
enum ibv_mtu verbs_mtu_from_eth(unsigned int eth_mtu);
void verbs_device_gids(struct droce_device *dev);
void verbs_ctx_get(struct droce_context *c);
/** The registered engine hooks, or NULL. */
const struct verbs_engine_ops *verbs_engine_ops_get(void);
void verbs_ctx_put(struct droce_context *c);

/* verbs_async.c */
int verbs_async_init(struct verbs_ctx *ctx);
void verbs_async_fini(struct verbs_ctx *ctx);
/** Queue an async event on @p ctx and make async_fd readable. */
void verbs_async_raise(struct droce_context *ctx, const struct droce_async_event *ev);
/** Drop the queued events naming @p obj and wait until its delivered events are acked. */
void verbs_async_forget(struct droce_context *ctx, const void *obj, struct verbs_evcnt *cnt);
/** Blocking or non-blocking (as the fd says) read of one token of a semaphore eventfd.
 *  @return 0, or -1 with errno. */
int verbs_efd_take(int fd);
void verbs_efd_give(int fd);

/* verbs_channel.c */
void verbs_channel_signal(struct verbs_cq *cq);
void verbs_channel_forget(struct verbs_cq *cq);

/* verbs_cq.c */
/** Engine side: write one completion. @return 0, -ENOSPC (overrun now or earlier). */
int verbs_cq_push(struct verbs_cq *cq, const struct ibv_wc *wc, bool solicited);
/** After an overrun: raise CQ_ERR once and fail the QPs that use @p cq. */
void verbs_cq_fail(struct verbs_cq *cq);

/* verbs_qp.c */
void verbs_qp_set_state(struct verbs_qp *qp, enum ibv_qp_state st);
/** Complete every outstanding WQE of both queues with FLUSH_ERR (caller: consumer side). */
int verbs_qp_flush(struct verbs_qp *qp, bool sq, bool rq);
/** Empty both queues without completions (RESET). */
void verbs_qp_reset_queues(struct verbs_qp *qp);
/** Move to ERR and flush, under ctl_lock (caller: consumer side). */
void verbs_qp_enter_err(struct verbs_qp *qp);

/* verbs_qp_modify.c */
/** Validate and apply a modify in the calling thread. Caller holds qp->ctl_lock and acts as
 *  the QP's consumer side. @return 0 or an errno value. */
int verbs_qp_modify_apply(struct verbs_qp *qp, struct ibv_qp_attr *attr, int mask);
/** The transition table: may (@p from -> @p to) with @p mask happen on @p type? */
bool verbs_qp_mask_ok(enum ibv_qp_type type, enum ibv_qp_state from, enum ibv_qp_state to,
		      int mask);
int verbs_av_from_attr(struct droce_device *dev, const struct ibv_ah_attr *attr,
		       struct verbs_av *av);

/** After a control or data-path step: handle an overrun of the QP's CQs (no lock held). */
void verbs_qp_check_cqs(struct verbs_qp *qp);

/* verbs_owner.c */
int verbs_owner_modify(struct verbs_qp *qp, struct ibv_qp_attr *attr, int mask);
void verbs_owner_detach(struct verbs_qp *qp);

/* verbs_mcast.c */
/** EBUSY while @p qp is attached to a multicast group, else 0. */
int verbs_qp_mcast_busy(struct verbs_qp *qp);

/* verbs_ring_mem.c */
/** Zeroed memory for a ring of @p n entries of @p size bytes (mapped on its own from 1 MiB:
 *  untouched until used). @return it, or NULL. */
void *verbs_ring_mem_alloc(size_t n, size_t size);
/** Free verbs_ring_mem_alloc()'s @p p, of the same @p n and @p size. */
void verbs_ring_mem_free(void *p, size_t n, size_t size);

/* verbs_srq.c */
int verbs_wq_alloc(struct verbs_wq *q, uint32_t depth, uint32_t hdr, uint32_t max_sge,
		   uint32_t max_inline);
void verbs_wq_free(struct verbs_wq *q);
/** Copy @p wr into the next receive slot of @p q of @p dev (producer lock held), its SGEs
 *  moved to process addresses (verbs_sge_iova()). @return 0, EINVAL, ENOMEM. */
int verbs_wq_put_recv(struct droce_device *dev, struct verbs_wq *q, uint32_t *head,
		      const struct ibv_recv_wr *wr);

#endif /* VERBS_PRIVATE_H */
