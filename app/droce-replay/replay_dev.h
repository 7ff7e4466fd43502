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
	/* The live names the requests are rewritten to: droce's own objects (in-process), or
	 * another process's, read from its map file (--wire). */
	uint32_t live_qpn[REPLAY_MAX_QP];	/* as sc->qp[] */
	uint32_t live_rkey[REPLAY_MAX_MR];	/* as sc->mr[] */
	uint64_t live_va[REPLAY_MAX_MR];	/* the address of the MR's first byte */
	bool wire;			/* --wire: a real port, no droce device here */
};

/* play.c: the injection and collection both halves use. */
struct replay_io {
	struct replay_dev *d;
	struct replay_pcap_out *pout;
	struct replay_result *r;
	unsigned int cap_out;
	uint8_t buf[REPLAY_MAX_FRAME];
	/* --wire: the capture up to the frame played last (pos), the newest response PSN per
	 * requester QP the capture's responder had sent by then, and the device's */
	const struct replay_capture *c;
	unsigned int pos, cpos, dpos, n_dq;
	uint32_t dq[REPLAY_MAX_QP], want[REPLAY_MAX_QP], got[REPLAY_MAX_QP];
	bool have_want[REPLAY_MAX_QP], have_got[REPLAY_MAX_QP];
	/* and the last PSN a READ/atomic injected is owed (its responder resources) */
	uint32_t rd_want[REPLAY_MAX_QP];
	bool have_rd[REPLAY_MAX_QP];
};

uint64_t replay_now_us(void);
/* One engine iteration: droce's frames kept, completions taken. The frames sent, or -1. */
int replay_io_poll(struct replay_io *p);
/* Poll until the receive ring is empty and droce has sent nothing for a few iterations. */
int replay_io_settle(struct replay_io *p);
/* Inject a frame of the capture, rewritten to droce's QPN, R_Keys and VAs. */
int replay_io_inject_frame(struct replay_io *p, const struct replay_frame *f);

#define REPLAY_WIRE_LINK_MS 30000	/* --wire: how long the port may take to come up */
#define REPLAY_WIRE_V6_WAIT_MS 500	/* --wire, IPv6: what the device under test is given */

/* --serve: droce's device on the port @p devargs names (droce probes it), the scenario's
 * objects; the engine inline. */
struct replay_dev *replay_dev_serve(const struct replay_scenario *sc, const char *devargs,
				    char *err, size_t len);
/* --wire: the port @p devargs names, no droce device; the live names come from a map. */
struct replay_dev *replay_dev_wire(const struct replay_scenario *sc, const char *devargs,
				   char *err, size_t len);

/* wire.c: the map of live names (--serve writes it, --wire reads it). 0 or -1 and @p err. */
int replay_map_write(const struct replay_dev *d, const char *path, char *err, size_t len);
int replay_map_read(struct replay_dev *d, const char *path, char *err, size_t len);
/* --serve: SIGINT and SIGTERM stop replay_serve() (set before the map is written). */
void replay_serve_signals(void);
/* --serve: poll the engine until SIGINT/SIGTERM; a line of receive completions to @p o. */
int replay_serve(struct replay_dev *d, FILE *o);

int replay_dev_objects(struct replay_dev *d, char *err, size_t len);
/* Post QP @p i's next receive WR (none once recv_wrs are posted). 0 or an errno. */
int replay_dev_post_recv(struct replay_dev *d, unsigned int i);

#endif /* DROCE_REPLAY_DEV_H */
