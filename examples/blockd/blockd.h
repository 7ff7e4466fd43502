/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * blockd: a block server that embeds libdroce (droce.h, droce_cm.h), and its client. The
 * protocol is the shape of iSER and NVMe-oF over RDMA:
 *
 *   client                                   server
 *   ------ SEND blk_req (READ, offset, len, buffer address + rkey) ------>
 *          <----- RDMA WRITE of the data into the client's buffer ------
 *          <----- SEND blk_rsp (tag, status) ---------------------------
 *   ------ SEND blk_req (WRITE, ...) ------------------------------------>
 *          <----- RDMA READ of the data from the client's buffer -------
 *          <----- SEND blk_rsp ------------------------------------------
 *
 * The server's disk is memory registered once; its request buffers are one registered pool
 * behind a shared receive queue (SRQ) that every connection uses; each worker thread owns a CQ
 * and the connections given to it. The accept carries a blk_hello in its private data. Fields
 * are little-endian (both ends are droce, or any x86 host).
 */
#ifndef BLOCKD_H
#define BLOCKD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "droce.h"
#include "droce_cm.h"

#define BLK_READ 1
#define BLK_WRITE 2
#define BLK_SECTOR 512u
#define BLK_MAX_IO (1u << 20)		/* bytes one request may move */
#define BLK_DEPTH 32u			/* requests a connection may have outstanding */

struct blk_req {
	uint8_t op;			/* BLK_READ, BLK_WRITE */
	uint8_t pad[3];
	uint32_t len;			/* bytes, a multiple of BLK_SECTOR, <= BLK_MAX_IO */
	uint64_t tag;			/* the client's, echoed */
	uint64_t offset;		/* bytes into the disk, a multiple of BLK_SECTOR */
	uint64_t addr;			/* the client's buffer */
	uint32_t rkey;
	uint32_t pad2;
};

struct blk_rsp {
	uint64_t tag;
	uint32_t status;		/* 0, or an errno (EINVAL: bad request, EIO: RDMA failed) */
	uint32_t pad;
};

/* In the accept's private data. */
struct blk_hello {
	uint64_t size;			/* disk bytes */
	uint32_t max_io;
	uint32_t depth;
};

/* blockd.c: the loop a thread without an engine lcore must run (inline engine), events. */
void blk_step(struct droce_context *ctx);
struct droce_cm_event *blk_event(struct droce_cm_event_channel *ch, struct droce_context *ctx,
				 int timeout_ms);
bool blk_parse_addr(const char *s, uint16_t port, struct sockaddr_storage *ss);
/* Up to @p n completions of @p cq; when there are none, wait a little: on @p ch (armed first,
 * then @p cq polled again, since a completion between the poll and the arm raises no event),
 * or, busy polling, by letting the engine move (blk_step()). @return as droce_poll_cq(). */
int blk_cq_wait(struct droce_cq *cq, struct droce_comp_channel *ch, struct droce_context *ctx,
		struct ibv_wc *wc, int n);
uint64_t blk_now_ns(void);

struct blk_server_opts {
	const char *addr;
	uint16_t port;
	uint64_t size;			/* disk bytes */
	unsigned int workers;
	bool events;			/* completion channels instead of busy polling */
	unsigned int exit_after;	/* clients served before exiting (0: until SIGINT/SIGTERM) */
	int *stop;			/* the server ends when it reads 1 (atomic) */
	int *ready;			/* 1 once listening (atomic; may be NULL) */
};

struct blk_client_opts {
	const char *addr;
	uint16_t port;
	unsigned int conns;		/* connections, one thread each */
	unsigned int depth;
	uint32_t io;			/* bytes per request */
	unsigned int read_pct;
	uint64_t ops;			/* per connection */
	bool verify;
	bool events;
};

struct blk_client_result {
	uint64_t ops, bytes, verified, errors;
	double seconds;
};

/* server.c: serve until opts->exit_after clients have come and gone, or *opts->stop. */
int blk_server_run(const struct blk_server_opts *opts);
/* client.c */
int blk_client_run(const struct blk_client_opts *opts, struct blk_client_result *res);

#endif
