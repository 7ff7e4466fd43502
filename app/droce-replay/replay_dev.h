/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* droce's side of a replay (dev.c, dev_objects.c, play.c): private to droce-replay. */
#ifndef DROCE_REPLAY_DEV_H
#define DROCE_REPLAY_DEV_H

#include <rte_mempool.h>
#include <rte_ring.h>

#include "droce.h"
#include "replay.h"

#define REPLAY_RING 1024
/* droce's GID table (lib/verbs/verbs_device.c): 0 fe80::EUI-64, then ::ffff:IPv4 if the device has
 * IPv4, then its IPv6 addresses. A replay device has one of the two: its address is GID 1. */
#define REPLAY_SGID_INDEX 1

struct replay_dev {
	const struct replay_scenario *sc;
	struct rte_ring *in;		/* the tool enqueues, droce's port receives */
	struct rte_ring *out;		/* droce's port transmits, the tool dequeues */
	struct rte_mempool *pool;	/* injected frames */
	uint16_t port;
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_qp *qp[REPLAY_MAX_QP];	/* as sc->qp[] */
	struct droce_mr *mr[REPLAY_MAX_MR];	/* as sc->mr[] */
	uint8_t *mem[REPLAY_MAX_MR];
	struct droce_mr *rmr[REPLAY_MAX_QP];	/* receive buffers */
	uint8_t *rbuf[REPLAY_MAX_QP];
	uint32_t posted[REPLAY_MAX_QP];	/* receive WRs posted so far */
};

/* play.c: the injection and collection both halves use. */
struct replay_io {
	struct replay_dev *d;
	struct replay_pcap_out *pout;
	struct replay_result *r;
	unsigned int cap_out;
	uint8_t buf[REPLAY_MAX_FRAME];
};

uint64_t replay_now_us(void);
/* One engine iteration: droce's frames kept, completions taken. The frames sent, or -1. */
int replay_io_poll(struct replay_io *p);
/* Poll until the receive ring is empty and droce has sent nothing for a few iterations. */
int replay_io_settle(struct replay_io *p);
/* Inject a frame of the capture, rewritten to droce's QPN, R_Keys and VAs. */
int replay_io_inject_frame(struct replay_io *p, const struct replay_frame *f);

int replay_dev_objects(struct replay_dev *d, char *err, size_t len);
/* Post QP @p i's next receive WR (none once recv_wrs are posted). 0 or an errno. */
int replay_dev_post_recv(struct replay_dev *d, unsigned int i);

#endif /* DROCE_REPLAY_DEV_H */
