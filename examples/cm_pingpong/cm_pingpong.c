/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * cm_pingpong: a connection made with droce's connection manager (droce_cm.h), the way a
 * daemon embedding libdroce makes one, speaking rdma-core's rping protocol, so that an
 * unmodified rping (Linux Soft-RoCE, a RoCE NIC, or rping on droce's drop-in) can be the peer:
 *
 *   cm_pingpong -s [-a ADDR] [-p PORT] [-S SIZE] [-C COUNT] [-v] [-r] server (rping -s)
 *   cm_pingpong -c  -a ADDR  [-p PORT] [-S SIZE] [-C COUNT] [-v] [-V] [-I SRC]   client
 *
 * The client advertises a buffer (address, rkey, size) in a SEND; the server RDMA READs it,
 * says "go ahead" with a SEND; the client advertises a second buffer, the server RDMA WRITEs
 * what it read into it and says "go ahead" again; the client compares the two (-V) and starts
 * the next of COUNT pings. The client disconnects at the end; the server serves one client and
 * exits when it disconnects; with -r it rejects the client instead (with private data
 * "cm_pingpong says no"), exit status 0. Exit status 0 on success, 1 on a failure (the
 * client prints the CM event that ended it, e.g. RDMA_CM_EVENT_REJECTED and the reason).
 *
 * One thread, no blocking call: CM events come from a non-blocking channel, completions from
 * polling the CQ; with an inline engine the same loop drives it (droce_engine_poll()). The
 * device comes from DROCE_CONFIG (doc/cm.md; config/rig.ini for the rxe rig).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce.h"
#include "droce_cm.h"
#include "droce_engine.h"

#define PP_MSG_FMT "rdma-ping-%d: "

/* The SEND payload of rping: where a buffer is (rping_rdma_info, big-endian). */
struct pp_info {
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
};

struct pp {
	bool server, verbose, validate, reject;
	const char *addr, *src;
	uint16_t port;
	uint32_t size;
	long count;
	struct droce_cm_event_channel *ch;
	struct droce_cm_id *listen, *id;
	struct droce_cq *cq;
	struct droce_mr *start_mr, *rdma_mr, *send_mr, *recv_mr;
	char *start_buf, *rdma_buf;
	struct pp_info send_info, recv_info;
	bool connected, disconnected;
};

static void usage(void)
{
	fprintf(stderr, "usage: cm_pingpong -s [-a ADDR] [-p PORT] [-S SIZE] [-C COUNT] [-v] [-r]\n"
			"       cm_pingpong -c -a ADDR [-I SRC] [-p PORT] [-S SIZE] [-C COUNT] "
			"[-v] [-V]\n");
	exit(2);
}

/* Inline engine: this thread moves the frames; else let the engine lcore run. */
static void step(struct pp *pp)
{
	struct droce_context *ctx = pp->id != NULL ? pp->id->verbs :
				    pp->listen != NULL ? pp->listen->verbs : NULL;

	if (ctx != NULL && droce_engine_is_inline())
		droce_engine_poll(ctx);
	else
		poll(NULL, 0, 1);
}

/* The next CM event (blocking on the loop, not on the channel). */
static struct droce_cm_event *next_event(struct pp *pp)
{
	struct droce_cm_event *ev;

	for (;;) {
		if (droce_cm_get_cm_event(pp->ch, &ev) == 0)
			return ev;
		if (errno != EAGAIN) {
			perror("droce_cm_get_cm_event");
			exit(1);
		}
		step(pp);
	}
}

/* Wait for event @p want; anything else fatal but DISCONNECTED, which ends the run. */
static struct droce_cm_event *expect(struct pp *pp, enum rdma_cm_event_type want)
{
	struct droce_cm_event *ev = next_event(pp);

	if (ev->event == want)
		return ev;
	fprintf(stderr, "cm_pingpong: %s (status %d) while waiting for %s\n",
		droce_cm_event_str(ev->event), ev->status, droce_cm_event_str(want));
	exit(1);
}

static struct droce_mr *reg(struct pp *pp, void *buf, size_t len, int access)
{
	struct droce_mr *mr = droce_reg_mr(pp->id->pd, buf, len, access);

	if (mr == NULL) {
		perror("droce_reg_mr");
		exit(1);
	}
	return mr;
}

static void post_recv(struct pp *pp)
{
	struct ibv_sge sge = { (uintptr_t)&pp->recv_info, sizeof(pp->recv_info),
			       pp->recv_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (droce_post_recv(pp->id->qp, &wr, &bad) != 0) {
		fprintf(stderr, "cm_pingpong: post_recv failed\n");
		exit(1);
	}
}

/* The QP, its CQ, the buffers; a receive posted before connecting (rping does the same). */
static void setup(struct pp *pp)
{
	struct droce_qp_init_attr qa;

	pp->cq = droce_create_cq(pp->id->verbs, 32, NULL, NULL, 0);
	if (pp->cq == NULL) {
		perror("droce_create_cq");
		exit(1);
	}
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = pp->cq;
	qa.recv_cq = pp->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (droce_cm_create_qp(pp->id, NULL, &qa) != 0) {
		perror("droce_cm_create_qp");
		exit(1);
	}
	pp->start_buf = calloc(1, pp->size);
	pp->rdma_buf = calloc(1, pp->size);
	if (pp->start_buf == NULL || pp->rdma_buf == NULL)
		exit(1);
	pp->start_mr = reg(pp, pp->start_buf, pp->size,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	pp->rdma_mr = reg(pp, pp->rdma_buf, pp->size,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	pp->send_mr = reg(pp, &pp->send_info, sizeof(pp->send_info), IBV_ACCESS_LOCAL_WRITE);
	pp->recv_mr = reg(pp, &pp->recv_info, sizeof(pp->recv_info), IBV_ACCESS_LOCAL_WRITE);
	post_recv(pp);
}

static void teardown(struct pp *pp)
{
	droce_cm_destroy_qp(pp->id);
	droce_dereg_mr(pp->start_mr);
	droce_dereg_mr(pp->rdma_mr);
	droce_dereg_mr(pp->send_mr);
	droce_dereg_mr(pp->recv_mr);
	droce_destroy_cq(pp->cq);
	free(pp->start_buf);
	free(pp->rdma_buf);
}

/* Watch for the peer's DISCONNECTED without waiting. */
static void check_events(struct pp *pp)
{
	struct droce_cm_event *ev;

	if (droce_cm_get_cm_event(pp->ch, &ev) != 0)
		return;
	if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
		pp->disconnected = true;
	else if (ev->event != RDMA_CM_EVENT_TIMEWAIT_EXIT)
		fprintf(stderr, "cm_pingpong: unexpected %s (status %d)\n",
			droce_cm_event_str(ev->event), ev->status);
	droce_cm_ack_cm_event(ev);
}

/* The next completion; false when the peer disconnected first. */
static bool wait_wc(struct pp *pp, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;
	int n;

	for (;;) {
		n = droce_poll_cq(pp->cq, 1, &wc);
		if (n < 0) {
			fprintf(stderr, "cm_pingpong: poll_cq %d\n", n);
			exit(1);
		}
		if (n == 1)
			break;
		check_events(pp);
		if (pp->disconnected)
			return false;
		step(pp);
	}
	if (wc.status != IBV_WC_SUCCESS) {
		/* A peer going away fails what is in flight: its DISCONNECTED follows. */
		for (n = 0; n < 5000 && !pp->disconnected; n++) {
			check_events(pp);
			step(pp);
		}
		if (pp->disconnected)
			return false;
		fprintf(stderr, "cm_pingpong: completion %s\n", droce_wc_status_str(wc.status));
		exit(1);
	}
	if (wc.opcode != op) {
		fprintf(stderr, "cm_pingpong: completion opcode %d, expected %d\n", wc.opcode, op);
		exit(1);
	}
	if (op == IBV_WC_RECV)
		post_recv(pp);
	return true;
}

static void post(struct pp *pp, enum ibv_wr_opcode op, void *buf, uint32_t len, uint32_t lkey,
		 uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (droce_post_send(pp->id->qp, &wr, &bad) != 0) {
		fprintf(stderr, "cm_pingpong: post_send failed\n");
		exit(1);
	}
}

/* SEND where @p buf is. */
static bool advertise(struct pp *pp, const char *buf, const struct droce_mr *mr)
{
	pp->send_info.buf = htobe64((uintptr_t)buf);
	pp->send_info.rkey = htobe32(mr->rkey);
	pp->send_info.size = htobe32(pp->size);
	post(pp, IBV_WR_SEND, &pp->send_info, sizeof(pp->send_info), pp->send_mr->lkey, 0, 0);
	return wait_wc(pp, IBV_WC_SEND);
}

static int client(struct pp *pp)
{
	unsigned char c, start = 65;
	long ping;
	uint32_t i;
	int cc;

	for (ping = 0; pp->count == 0 || ping < pp->count; ping++) {
		cc = snprintf(pp->start_buf, pp->size, PP_MSG_FMT, (int)ping);
		for (i = (uint32_t)cc, c = start; i < pp->size; i++) {
			pp->start_buf[i] = (char)c;
			if (++c > 122)
				c = 65;
		}
		if (++start > 122)
			start = 65;
		pp->start_buf[pp->size - 1] = 0;
		if (!advertise(pp, pp->start_buf, pp->start_mr) || !wait_wc(pp, IBV_WC_RECV))
			return 1;	/* the server READs, then says go ahead */
		if (!advertise(pp, pp->rdma_buf, pp->rdma_mr) || !wait_wc(pp, IBV_WC_RECV))
			return 1;	/* the server WRITEs, then says go ahead */
		if (pp->validate && memcmp(pp->start_buf, pp->rdma_buf, pp->size) != 0) {
			fprintf(stderr, "data mismatch!\n");
			return 1;
		}
		if (pp->verbose)
			printf("ping data: %s\n", pp->rdma_buf);
	}
	return 0;
}

static int server(struct pp *pp)
{
	uint64_t raddr;
	uint32_t rkey, rlen;

	for (;;) {
		if (!wait_wc(pp, IBV_WC_RECV))	/* the client's start buffer */
			break;
		raddr = be64toh(pp->recv_info.buf);
		rkey = be32toh(pp->recv_info.rkey);
		rlen = be32toh(pp->recv_info.size);
		if (rlen > pp->size) {
			fprintf(stderr, "cm_pingpong: the client's buffer (%u) exceeds -S %u\n",
				rlen, pp->size);
			return 1;
		}
		post(pp, IBV_WR_RDMA_READ, pp->rdma_buf, rlen, pp->rdma_mr->lkey, raddr, rkey);
		if (!wait_wc(pp, IBV_WC_RDMA_READ))
			break;
		if (pp->verbose)
			printf("server ping data: %s\n", pp->rdma_buf);
		post(pp, IBV_WR_SEND, &pp->send_info, sizeof(pp->send_info), pp->send_mr->lkey,
		     0, 0);
		if (!wait_wc(pp, IBV_WC_SEND) || !wait_wc(pp, IBV_WC_RECV))
			break;	/* go ahead; the client's sink buffer */
		raddr = be64toh(pp->recv_info.buf);
		rkey = be32toh(pp->recv_info.rkey);
		post(pp, IBV_WR_RDMA_WRITE, pp->rdma_buf, (uint32_t)strlen(pp->rdma_buf) + 1,
		     pp->rdma_mr->lkey, raddr, rkey);
		if (!wait_wc(pp, IBV_WC_RDMA_WRITE))
			break;
		post(pp, IBV_WR_SEND, &pp->send_info, sizeof(pp->send_info), pp->send_mr->lkey,
		     0, 0);
		if (!wait_wc(pp, IBV_WC_SEND))
			break;
	}
	return pp->disconnected ? 0 : 1;	/* the client's disconnection ends the run */
}

static struct sockaddr_storage parse_addr(const char *s, uint16_t port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, s, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
	} else {
		fprintf(stderr, "cm_pingpong: bad address %s\n", s);
		exit(2);
	}
	return ss;
}

static struct rdma_conn_param conn_param(void)
{
	struct rdma_conn_param p;

	memset(&p, 0, sizeof(p));
	p.responder_resources = 1;	/* the server READs the client's buffer */
	p.initiator_depth = 1;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	return p;
}

static void connect_client(struct pp *pp)
{
	struct sockaddr_storage dst = parse_addr(pp->addr, pp->port), src;
	struct rdma_conn_param p = conn_param();

	if (pp->src != NULL)
		src = parse_addr(pp->src, 0);
	if (droce_cm_create_id(pp->ch, &pp->id, pp, RDMA_PS_TCP) != 0 ||
	    droce_cm_resolve_addr(pp->id, pp->src != NULL ? (struct sockaddr *)&src : NULL,
				  (struct sockaddr *)&dst, 2000) != 0) {
		perror("cm_pingpong: resolve_addr");
		exit(1);
	}
	droce_cm_ack_cm_event(expect(pp, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (droce_cm_resolve_route(pp->id, 2000) != 0) {
		perror("cm_pingpong: resolve_route");
		exit(1);
	}
	droce_cm_ack_cm_event(expect(pp, RDMA_CM_EVENT_ROUTE_RESOLVED));
	setup(pp);
	if (droce_cm_connect(pp->id, &p) != 0) {
		perror("cm_pingpong: connect");
		exit(1);
	}
	droce_cm_ack_cm_event(expect(pp, RDMA_CM_EVENT_ESTABLISHED));
}

static void accept_client(struct pp *pp)
{
	struct sockaddr_storage sa = parse_addr(pp->addr, pp->port);
	struct rdma_conn_param p = conn_param();
	struct droce_cm_event *ev;

	if (droce_cm_create_id(pp->ch, &pp->listen, pp, RDMA_PS_TCP) != 0 ||
	    droce_cm_bind_addr(pp->listen, (struct sockaddr *)&sa) != 0 ||
	    droce_cm_listen(pp->listen, 3) != 0) {
		perror("cm_pingpong: listen");
		exit(1);
	}
	ev = expect(pp, RDMA_CM_EVENT_CONNECT_REQUEST);
	pp->id = ev->id;
	if (pp->reject) {
		static const char no[] = "cm_pingpong says no";

		if (droce_cm_reject(pp->id, no, sizeof(no)) != 0) {
			perror("cm_pingpong: reject");
			exit(1);
		}
		droce_cm_ack_cm_event(ev);
		droce_cm_destroy_id(pp->id);
		droce_cm_destroy_id(pp->listen);
		droce_cm_destroy_event_channel(pp->ch);
		printf("cm_pingpong: server rejected the client\n");
		exit(0);
	}
	setup(pp);
	if (droce_cm_accept(pp->id, &p) != 0) {
		perror("cm_pingpong: accept");
		exit(1);
	}
	droce_cm_ack_cm_event(ev);
	droce_cm_ack_cm_event(expect(pp, RDMA_CM_EVENT_ESTABLISHED));
}

/* The client disconnects; each side waits for its DISCONNECTED (the server has it already). */
static void finish(struct pp *pp)
{
	droce_cm_disconnect(pp->id);
	while (!pp->disconnected) {
		check_events(pp);
		step(pp);
	}
	teardown(pp);
	droce_cm_destroy_id(pp->id);
	if (pp->listen != NULL)
		droce_cm_destroy_id(pp->listen);
	droce_cm_destroy_event_channel(pp->ch);
}

int main(int argc, char **argv)
{
	struct pp pp = { .port = 7174, .size = 64, .addr = "0.0.0.0" };
	bool role = false;
	int op, rc;

	while ((op = getopt(argc, argv, "sca:I:p:S:C:vVr")) != -1) {
		switch (op) {
		case 's':
		case 'c':
			pp.server = op == 's';
			role = true;
			break;
		case 'a':
			pp.addr = optarg;
			break;
		case 'I':
			pp.src = optarg;
			break;
		case 'p':
			pp.port = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 'S':
			pp.size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'C':
			pp.count = strtol(optarg, NULL, 0);
			break;
		case 'v':
			pp.verbose = true;
			break;
		case 'V':
			pp.validate = true;
			break;
		case 'r':
			pp.reject = true;
			break;
		default:
			usage();
		}
	}
	if (!role || optind != argc || pp.size < 16 || pp.count < 0)
		usage();	/* rping's minimum size: the "rdma-ping-N: " header */
	pp.ch = droce_cm_create_event_channel();
	if (pp.ch == NULL) {
		perror("cm_pingpong: event channel");
		return 1;
	}
	fcntl(pp.ch->fd, F_SETFL, fcntl(pp.ch->fd, F_GETFL) | O_NONBLOCK);
	if (pp.server) {
		accept_client(&pp);
		rc = server(&pp);
	} else {
		connect_client(&pp);
		rc = client(&pp);
	}
	finish(&pp);
	printf("cm_pingpong: %s done\n", pp.server ? "server" : "client");
	return rc;
}
