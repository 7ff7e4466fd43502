/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The pingpong examples on droce (rc_pingpong, uc_pingpong, ud_pingpong, srq_pingpong): one
 * program in four variants, each speaking the options, TCP exchange and output of the
 * rdma-core 44 tool of the same name. A variant is a struct pp_tool; the files:
 *   pp_opts.c    the command line (the options of the variant's rdma-core tool) and usage
 *   pp_ctx.c     droce objects (device, PD, MR, CQ, SRQ, QPs, AH) and the QP connection
 *   pp_exch.c    rdma-core's out-of-band TCP exchange of LID:QPN:PSN:GID
 *   pp_run.c     the addresses, the ping-pong loop, the report, pp_main()
 *   pp_engine.c  the one place that depends on how droce's engine is run
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

/* The byte rdma-core's rc/uc/ud_pingpong fill their buffer with (srq_pingpong: 0). */
#define PP_FILL_BYTE 0x7b
/* ibv_srq_pingpong's MAX_QP: it always exchanges this many addresses (unused ones zero) and
 * takes -q below it. */
#define PP_MAX_QP 256
/* UD: a receive starts with the 40-byte GRH (RoCE v2/IPv4: the IPv4 header in its last 20). */
#define PP_GRH_SIZE 40
/* ibv_ud_pingpong's Q_Key. */
#define PP_UD_QKEY 0x11111111u

/* A variant: what differs between the four rdma-core tools. */
struct pp_tool {
	enum ibv_qp_type qp_type;
	bool srq;		/* RC QPs (-q of them) sharing one SRQ */
	const char *optstring;	/* the options of the rdma-core tool (getopt) */
	unsigned int def_size;
	const char *local_sep;	/* before "GID" on the local line: ibv_ud_pingpong prints ":" */
};

/* Command line, with rdma-core's defaults. */
struct pp_opts {
	const struct pp_tool *tool;
	const char *servername;	/* NULL: server */
	const char *ib_devname;	/* NULL: first device */
	unsigned int port;	/* TCP */
	int ib_port;
	unsigned int size;
	enum ibv_mtu mtu;
	unsigned int num_qp;	/* -q (srq); 1 otherwise */
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
	const struct pp_tool *tool;
	struct droce_context *context;
	struct droce_comp_channel *channel;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_srq *srq;
	struct droce_ah *ah;		/* UD: the path to the peer */
	uint32_t rem_qpn;		/* UD: the peer's QPN */
	struct droce_qp *qp[PP_MAX_QP];
	int pending[PP_MAX_QP];		/* PP_RECV_WRID | PP_SEND_WRID still to complete */
	unsigned int num_qp;
	uint8_t *buf;			/* grh bytes, then the message */
	unsigned int grh;		/* UD: PP_GRH_SIZE, else 0 */
	unsigned int size;
	unsigned int rx_depth;
	int send_flags;
	struct ibv_port_attr portinfo;
};

enum {
	PP_RECV_WRID = 1,
	PP_SEND_WRID = 2,
};

/* pp_opts.c: @return 0 to run, 1 to exit 0 (-h), -1 to exit 1 (a message was printed). */
int pp_parse_opts(int argc, char **argv, const struct pp_tool *tool, struct pp_opts *o);

/* pp_ctx.c */
struct pp_ctx *pp_ctx_open(const struct pp_opts *o);
int pp_ctx_close(struct pp_ctx *c);
int pp_connect(struct pp_ctx *c, const struct pp_opts *o, const struct pp_dest *me,
	       const struct pp_dest *rem);
int pp_post_recv(struct pp_ctx *c, int n);
int pp_post_send(struct pp_ctx *c, unsigned int qp_index);

/* pp_exch.c: @p n addresses each way (me[] and rem[] hold n). */
void pp_gid_to_wire(const union ibv_gid *gid, char wire[33]);
int pp_wire_to_gid(const char *wire, union ibv_gid *gid);
int pp_client_exch(const struct pp_opts *o, const struct pp_dest *me, struct pp_dest *rem,
		   unsigned int n);
int pp_server_exch(struct pp_ctx *c, const struct pp_opts *o, const struct pp_dest *me,
		   struct pp_dest *rem, unsigned int n);

/* pp_run.c: the whole program of a variant. @return the exit status. */
int pp_main(int argc, char **argv, const struct pp_tool *tool);

/* pp_engine.c */
int pp_engine_start(struct pp_ctx *c);
void pp_engine_stop(struct pp_ctx *c);

#endif /* PP_H */
