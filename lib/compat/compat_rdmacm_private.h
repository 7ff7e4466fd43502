/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * librdmacm.so.1 on droce (doc/compat.md): every rdma_cm object handed to the application
 * embeds the struct of <rdma/rdma_cma.h> that programs read, next to the droce_cm handle it
 * stands for; to_rX() convert back. A droce id's context points at its wrapper, so events map
 * back without a table.
 *
 * The ibverbs objects (id->verbs, id->pd, id->qp, the CQs) are the libibverbs drop-in's: this
 * library creates them through its public API and reads the droce handle inside its wrappers
 * (compat_private.h: both libraries are built from one tree and installed side by side; the
 * devices are checked to be the drop-in's before anything is read).
 */
#ifndef RDMACM_PRIVATE_H
#define RDMACM_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "compat_private.h"
#include "droce_cm.h"

/** A device as ids see it: the drop-in's context (the same for every id) and default PD. */
struct rcm_dev {
	struct droce_device *d;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
};

struct rcm_chan {
	struct rdma_event_channel pub;
	struct droce_cm_event_channel *d;
};

struct rcm_event {
	struct rdma_cm_event pub;
	struct droce_cm_event *d;
};

struct rcm_id {
	struct rdma_cm_id pub;
	struct droce_cm_id *d;
	struct rcm_chan *own_chan;	/**< a synchronous id's channel (pub.channel) */
	struct rcm_event *sync_ev;	/**< mirrors d->event (pub.event) */
	bool lib_cqs;			/**< pub.send_cq/recv_cq were made here */
	/* rdma_create_ep() of a passive endpoint: each request's QP (rdma_get_request()) */
	bool ep_qp;
	struct ibv_qp_init_attr ep_attr;
	struct ibv_pd *ep_pd;
};

static inline struct rcm_id *to_rid(struct rdma_cm_id *id)
{
	return compat_container_of(id, struct rcm_id, pub);
}

static inline struct rcm_chan *to_rchan(struct rdma_event_channel *c)
{
	return compat_container_of(c, struct rcm_chan, pub);
}

#define RCM_MSG(fmt, ...) fprintf(stderr, "droce librdmacm: " fmt "\n", ##__VA_ARGS__)

/* compat_rdmacm_dev.c */
/** The device entry of @p d (its context opened and default PD made on first use), or NULL
 *  with errno. */
struct rcm_dev *compat_rcm_dev_get(struct droce_device *d);
/** The droce QP inside the drop-in's @p qp. */
struct droce_qp *compat_rcm_droce_qp(struct ibv_qp *qp);

/* compat_rdmacm_id.c */
/** Copy what droce's id says into the application's (addresses, route, device, port). */
void compat_rcm_id_sync(struct rcm_id *w);
/** A new wrapper for droce id @p d, created by this library, on @p channel (NULL: a
 *  synchronous id, given a channel of its own). @return it, or NULL with errno ENOMEM and
 *  @p d destroyed. */
struct rcm_id *compat_rcm_id_new(struct droce_cm_id *d, struct rdma_event_channel *channel,
			  void *context);
/** The wrapper of droce id @p d, made (for a request's new id) when it has none. */
struct rcm_id *compat_rcm_id_of(struct droce_cm_id *d);
/** Synchronous ids: mirror droce's id->event into the application's, after a call that may
 *  have replaced it. */
void compat_rcm_id_event_sync(struct rcm_id *w);
/** 0, or -1 with errno EINVAL (the libraries' NULL checks, where librdmacm crashes). */
int compat_rcm_check(const struct rdma_cm_id *id);

#endif /* RDMACM_PRIVATE_H */
