/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * rc_pingpong on droce: shared declarations of the example's files.
 *   rc_pingpong.c  options, the ping-pong loop, the report
 *   pp_ctx.c       droce objects (device, PD, MR, CQ, QP) and the QP connection
 *   pp_exch.c      rdma-core's out-of-band TCP exchange of LID:QPN:PSN:GID
 *   pp_engine.c    the one place that depends on how droce's engine is run
 */
#ifndef PP_H
#define PP_H

#include <stdbool.h>
#include <stdint.h>

#include <droce.h>

/* The TCP message, as rdma-core's pingpong examples send it: "LID:QPN:PSN:GID" printed as
 * "%04x:%06x:%06x:%s" with the GID as 32 hex digits, NUL included: 52 bytes. */
#define PP_MSG_TEMPLATE "0000:000000:000000:00000000000000000000000000000000"
#define PP_MSG_SIZE sizeof(PP_MSG_TEMPLATE)
/* The client's acknowledgement of the server's address ("done" and its NUL). */
#define PP_DONE_MSG "done"
#define PP_DONE_SIZE sizeof(PP_DONE_MSG)

/* The byte rdma-core's ibv_rc_pingpong fills its buffer with. */
#define PP_FILL_BYTE 0x7b

/* Command line, with rdma-core's defaults. */
struct pp_opts {
	const char *servername;	/* NULL: server */
	const char *ib_devname;	/* NULL: first device */
	unsigned int port;	/* TCP */
	int ib_port;
	unsigned int size;
	enum ibv_mtu mtu;
	unsigned int rx_depth;
	unsigned int iters;
	int sl;
	int use_event;
	int gidx;		/* -1: no GID (zero GID sent) */
	int validate;		/* -c */
};

/* One side of the connection, as exchanged. */
struct pp_dest {
	int lid;
	int qpn;
	int psn;
	union ibv_gid gid;
};

struct pp_ctx {
	struct droce_context *context;
	struct droce_comp_channel *channel;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_qp *qp;
	uint8_t *buf;
	unsigned int size;
	unsigned int rx_depth;
	int send_flags;
	int pending;		/* PP_RECV_WRID | PP_SEND_WRID still to complete */
	struct ibv_port_attr portinfo;
};

enum {
	PP_RECV_WRID = 1,
	PP_SEND_WRID = 2,
};

/* pp_ctx.c */
struct pp_ctx *pp_ctx_open(const struct pp_opts *o);
int pp_ctx_close(struct pp_ctx *c);
int pp_connect(struct pp_ctx *c, const struct pp_opts *o, int my_psn,
	       const struct pp_dest *dest);
int pp_post_recv(struct pp_ctx *c, int n);
int pp_post_send(struct pp_ctx *c);

/* pp_exch.c */
void pp_gid_to_wire(const union ibv_gid *gid, char wire[33]);
int pp_wire_to_gid(const char *wire, union ibv_gid *gid);
int pp_client_exch(const struct pp_opts *o, const struct pp_dest *me, struct pp_dest *rem);
int pp_server_exch(struct pp_ctx *c, const struct pp_opts *o, const struct pp_dest *me,
		   struct pp_dest *rem);

/* pp_engine.c */
int pp_engine_start(struct pp_ctx *c);
void pp_engine_stop(struct pp_ctx *c);

#endif /* PP_H */
