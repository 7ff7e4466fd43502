/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * lib/compat internals: every libibverbs object handed to the application embeds the ibv_
 * struct the inline verbs of <infiniband/verbs.h> read, next to the droce handle it stands
 * for; to_cX() convert back (container_of). The droce object's own context pointer
 * (qp_context, cq_context, srq_context) points at the wrapper, so events map back without a
 * lookup table.
 */
#ifndef COMPAT_PRIVATE_H
#define COMPAT_PRIVATE_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>

#include "droce.h"
#include "compat_rdma_core_private.h"

#define compat_container_of(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

/**
 * What a context owns, in the order ibv_close_device() releases what the application left
 * open (libibverbs closes the kernel's file and the kernel frees them; droce's close refuses
 * while objects exist, so the drop-in destroys them first).
 */
enum compat_kind { COMPAT_QP, COMPAT_SRQ, COMPAT_AH, COMPAT_MW, COMPAT_MR, COMPAT_CQ,
		   COMPAT_CHANNEL, COMPAT_PD, COMPAT_KIND_MAX };

struct compat_obj {
	TAILQ_ENTRY(compat_obj) next;
	enum compat_kind kind;
	void *ibv;			/**< the struct ibv_qp/srq/ah/... handed out */
};
TAILQ_HEAD(compat_obj_list, compat_obj);

/** A droce device as libibverbs shows it; lives as long as the process. */
struct compat_device {
	struct ibv_device ibv;
	struct droce_device *d;
};

struct compat_ctx {
	TAILQ_ENTRY(compat_ctx) next;	/**< in the list of open contexts */
	struct droce_context *d;
	pthread_mutex_t obj_lock;
	struct compat_obj_list objs;
	struct verbs_context vctx;	/**< ends with struct ibv_context (libibverbs' layout) */
};

struct compat_pd {
	struct ibv_pd ibv;
	struct droce_pd *d;
	struct compat_obj obj;
};

struct compat_mr {
	struct ibv_mr ibv;
	struct droce_mr *d;
	struct compat_obj obj;
};

/* ibv.handle is the droce_mw's: droce_post_send() finds a BIND_MW's window by it. */
struct compat_mw {
	struct ibv_mw ibv;
	struct droce_mw *d;
	struct compat_obj obj;
};

struct compat_channel {
	struct ibv_comp_channel ibv;
	struct droce_comp_channel *d;
	struct compat_obj obj;
	unsigned int spin_ns;		/**< compat_wait_cq_event()'s budget for this channel */
	int fd_flags;			/**< fcntl(F_GETFL) of ibv.fd as last read, or -1 */
	unsigned int fd_flags_age;	/**< waits since it was read */
};

/*
 * Events handed to the application (ibv_get_cq_event, ibv_get_async_event) and not yet
 * acked: droce's destroy waits for their acks, so a close that releases what the application
 * left open (ibv_close_device, exit) acks them first, as the kernel drops them for libibverbs.
 */
struct compat_cq {
	struct ibv_cq ibv;
	struct droce_cq *d;
	struct compat_obj obj;
	unsigned int comp_got;		/**< completion events returned (ack: ibv.comp_events_completed) */
	unsigned int async_got;		/**< async events returned (ack: ibv.async_events_completed) */
};

struct compat_srq {
	struct ibv_srq ibv;
	struct droce_srq *d;
	struct compat_obj obj;
	unsigned int async_got;		/**< async events returned (ack: ibv.events_completed) */
};

/** The WRs an ibv_wr_start() .. ibv_wr_complete() batch builds (the new post-send API). */
struct compat_wr_batch {
	struct ibv_send_wr *wr;		/**< max_send_wr entries, linked when posted */
	struct ibv_sge *sge;		/**< max_send_sge per WR */
	uint64_t *aw;			/**< per WR: the 8 bytes of an ATOMIC_WRITE */
	uint32_t n;			/**< WRs built so far */
	uint32_t cap;			/**< entries of @ref wr */
	uint32_t max_sge;
	int err;			/**< first error of the batch, returned by wr_complete */
};

struct compat_qp {
	struct ibv_qp_ex ibvx;		/**< starts with struct ibv_qp */
	struct droce_qp *d;
	struct compat_obj obj;
	unsigned int async_got;		/**< async events returned (ack: events_completed) */
	struct compat_wr_batch batch;
};

/*
 * errno as rdma-core leaves it. Its calls fail through the kernel's write() or ioctl(), which
 * set errno, and the calls that return an error code return that same value (ibv_modify_qp()
 * returns EINVAL with errno EINVAL); pointer calls return NULL with errno set. The drop-in's
 * calls do the same through these: @p rc (an errno value, or 0) is returned, and set in errno
 * when it is not 0.
 */
/** @p a: the extended attributes that @p attr (ibv_create_qp(), rdma_create_qp()) stands for. */
static inline void compat_qp_attr_ex(const struct ibv_qp_init_attr *attr,
				     struct ibv_qp_init_attr_ex *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_context = attr->qp_context;
	a->send_cq = attr->send_cq;
	a->recv_cq = attr->recv_cq;
	a->srq = attr->srq;
	a->cap = attr->cap;
	a->qp_type = attr->qp_type;
	a->sq_sig_all = attr->sq_sig_all;
}

static inline int compat_err(int rc)
{
	if (rc != 0)
		errno = rc;
	return rc;
}

/* For the calls that return -1 (or NULL) with errno: set it to @p e, return -1. */
static inline int compat_fail(int e)
{
	errno = e;
	return -1;
}

static inline struct compat_ctx *to_cctx(struct ibv_context *c)
{
	return compat_container_of(c, struct compat_ctx, vctx.context);
}

static inline struct compat_pd *to_cpd(struct ibv_pd *p)
{
	return compat_container_of(p, struct compat_pd, ibv);
}

static inline struct compat_cq *to_ccq(struct ibv_cq *c)
{
	return compat_container_of(c, struct compat_cq, ibv);
}

static inline struct compat_qp *to_cqp(struct ibv_qp *q)
{
	return compat_container_of(q, struct compat_qp, ibvx.qp_base);
}

static inline struct compat_srq *to_csrq(struct ibv_srq *s)
{
	return compat_container_of(s, struct compat_srq, ibv);
}

/* compat_device.c: the objects of a context. */
void compat_obj_add(struct ibv_context *ctx, struct compat_obj *o, enum compat_kind kind,
		    void *ibv);
void compat_obj_del(struct ibv_context *ctx, struct compat_obj *o);
struct compat_obj *compat_obj_take(struct ibv_context *ctx, const void *ibv);

/* compat_objects.c: ack what the application got and did not ack, before a forced destroy. */
void compat_cq_drop_events(struct compat_cq *cq);
void compat_qp_drop_events(struct compat_qp *qp);
void compat_srq_drop_events(struct compat_srq *srq);

/* compat_driver.c: who drives an inline engine (the application's threads, a driver thread). */
int compat_driver_start(struct droce_device *dev);
bool compat_driver_running(void);
void compat_driver_stop(void);
/* One engine iteration from an application thread that found its CQ empty. */
void compat_engine_kick(struct ibv_context *context);
/* ibv_get_cq_event() on @p ch: on an inline engine, drive the engine while the event may come
 * soon (a budget kept in ch->spin_ns), watching the channel so that the event arrives in
 * memory, then leave the engine to the driver thread and block. @return 0 or -1 (errno). */
int compat_wait_cq_event(struct compat_channel *ch, struct droce_cq **cq, void **cq_context);

/* compat_objects.c: the ibv_context_ops data path. */
int compat_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int compat_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int compat_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* compat_objects.c: memory windows */
struct ibv_mw *compat_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int compat_dealloc_mw(struct ibv_mw *mw);
int compat_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);

/* compat_qp.c */
int compat_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int compat_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
struct ibv_qp *compat_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);

/* compat_qp_ex.c: struct ibv_qp_ex's wr_* ops on top of droce_post_send(). */
int compat_qp_ex_init(struct compat_qp *qp, uint64_t send_ops_flags);
void compat_qp_ex_fini(struct compat_qp *qp);

/* compat_present.c: the device presence of droce-run -p (DROCE_PRESENT). */
void compat_present_device(const struct ibv_device *dev, __be64 guid);
void compat_present_port(const struct ibv_device *dev, struct droce_context *ctx);

/* Messages for the user (stderr), prefixed so they are told apart from the tool's own. */
#define COMPAT_MSG(fmt, ...) fprintf(stderr, "droce libibverbs: " fmt "\n", ##__VA_ARGS__)

#endif /* COMPAT_PRIVATE_H */
