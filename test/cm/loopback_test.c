/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * RDMA CM on this host's own addresses, as Linux's rdma_cm treats them (cma_any_addr(),
 * cma_bind_loopback(), cma_resolve_loopback()), between ids of one process:
 * - binding 127.0.0.1, ::1 or a wildcard ties an id to no device (id->verbs NULL) and takes
 *   the port on every address: a loopback and a wildcard bind of one port collide
 *   (EADDRINUSE);
 * - resolving 127.0.0.1, ::1 or INADDR_ANY gives an unbound id the first device whose port is
 *   active (droce0) and its own GID as the destination (IPv4: ::ffff:10.99.0.1; IPv6: its
 *   link-local GID), the destination address left as given; an id bound to a device
 *   (droce1's 10.99.0.2) keeps it;
 * - a connection to each of them: REQ, REP, RTU over droce0's loopback (the engine hands a
 *   frame to the device's own MAC to its receive path), both ids on droce0, a SEND checked,
 *   DISCONNECTED on both sides, the device's loopback counter moving and nothing dropped;
 * - bad input: a loopback port nobody listens on is REJECTED (invalid service ID, as from a
 *   peer); an AF_INET id resolving ::1 is EINVAL; a second bind of a taken loopback port
 *   EADDRINUSE.
 *
 * Usage: cm_loopback_test {inline|lcore}
 */
#include "cm_test.h"

#define PORT 7190

static struct sockaddr_in6 addr6(const char *ip, uint16_t port)
{
	struct sockaddr_in6 a;

	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	a.sin6_port = htons(port);
	CHECK(inet_pton(AF_INET6, ip, &a.sin6_addr) == 1);
	return a;
}

/* @p cli resolves @p dst (a loopback or wildcard address) to droce0's @p gid_index. */
static void resolve(struct droce_cm_event_channel *ch, struct droce_cm_id *cli,
		    struct sockaddr *dst, int gid_index)
{
	union ibv_gid gid;

	CHECK_EQ(droce_cm_resolve_addr(cli, NULL, dst, 2000), 0);
	CHECK(cli->verbs != NULL);
	CHECK_EQ(strcmp(droce_get_device_name(cli->verbs->device), "droce0"), 0);
	cmt_drive_ctx = cli->verbs;
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_query_gid(cli->verbs, 1, gid_index, &gid), 0);
	CHECK_EQ(memcmp(&cli->route.addr.addr.ibaddr.sgid, &gid, 16), 0);
	CHECK_EQ(memcmp(&cli->route.addr.addr.ibaddr.dgid, &gid, 16), 0);
	CHECK_EQ(memcmp(droce_cm_get_peer_addr(cli), dst, dst->sa_family == AF_INET ?
			sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)), 0);
	CHECK_EQ(droce_cm_resolve_route(cli, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
}

/* A connection from a new id to @p dst, accepted by @p lis's request; a SEND checked; both
 * disconnected and destroyed. */
static void connect_send(struct droce_cm_event_channel *ch, struct droce_cm_id *lis,
			 struct sockaddr *dst, int gid_index)
{
	static char cbuf[64], sbuf[64];
	static const char msg[] = "over droce0's loopback";
	struct droce_cm_id *cli, *srv;
	struct droce_cq *ccq, *scq;
	struct droce_mr *cmr, *smr;
	struct rdma_conn_param cp;
	struct droce_cm_event *ev;
	struct ibv_sge sge;
	struct ibv_send_wr swr, *bs;
	struct ibv_recv_wr rwr, *br;
	struct ibv_wc wc;
	int i;

	CHECK_EQ(droce_cm_create_id(ch, &cli, NULL, RDMA_PS_TCP), 0);
	resolve(ch, cli, dst, gid_index);
	ccq = cmt_cq(cli);
	cmt_qp(cli, ccq, IBV_QPT_RC);
	memset(&cp, 0, sizeof(cp));
	cp.retry_count = 7;
	CHECK_EQ(droce_cm_connect(cli, &cp), 0);

	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	CHECK(ev->listen_id == lis);
	srv = ev->id;
	CHECK(srv->verbs == cli->verbs);	/* the same device: droce0 */
	CHECK_EQ(droce_cm_get_dst_port(srv), droce_cm_get_src_port(cli));
	scq = cmt_cq(srv);
	cmt_qp(srv, scq, IBV_QPT_RC);
	smr = droce_reg_mr(srv->pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(smr != NULL);
	memset(sbuf, 0, sizeof(sbuf));
	sge = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = sizeof(sbuf),
				.lkey = smr->lkey };
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 1;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	CHECK_EQ(droce_post_recv(srv->qp, &rwr, &br), 0);
	memset(&cp, 0, sizeof(cp));
	CHECK_EQ(droce_cm_accept(srv, &cp), 0);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	for (i = 0; i < 2; i++) {
		ev = CMT_EXPECT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
		CHECK(ev->id == cli || ev->id == srv);
		CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	}

	cmr = droce_reg_mr(cli->pd, cbuf, sizeof(cbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(cmr != NULL);
	memcpy(cbuf, msg, sizeof(msg));
	sge = (struct ibv_sge){ .addr = (uintptr_t)cbuf, .length = sizeof(msg),
				.lkey = cmr->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 2;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(droce_post_send(cli->qp, &swr, &bs), 0);
	wc = cmt_wc(ccq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 2);
	wc = cmt_wc(scq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 && wc.byte_len == sizeof(msg));
	CHECK_EQ(memcmp(sbuf, msg, sizeof(msg)), 0);

	/* The DREQ reaches the passive side, whose disconnect sends the DREP (as Linux). */
	CHECK_EQ(droce_cm_disconnect(cli), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK(ev->id == srv);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CHECK_EQ(droce_cm_disconnect(srv), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK(ev->id == cli);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	droce_cm_destroy_qp(cli);
	droce_cm_destroy_qp(srv);
	CHECK_EQ(droce_dereg_mr(cmr), 0);
	CHECK_EQ(droce_dereg_mr(smr), 0);
	CHECK_EQ(droce_cm_destroy_id(cli), 0);
	CHECK_EQ(droce_cm_destroy_id(srv), 0);
	CHECK_EQ(droce_destroy_cq(ccq), 0);
	CHECK_EQ(droce_destroy_cq(scq), 0);
}

static struct droce_cm_id *listen_on(struct droce_cm_event_channel *ch, struct sockaddr *a)
{
	struct droce_cm_id *lis;

	CHECK_EQ(droce_cm_create_id(ch, &lis, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(lis, a), 0);
	CHECK(lis->verbs == NULL);	/* no device: a wildcard */
	CHECK_EQ(droce_cm_listen(lis, 4), 0);
	return lis;
}

/* Bad input: nobody listens, a family mismatch, a port taken. */
static void refusals(struct droce_cm_event_channel *ch)
{
	struct sockaddr_in lo = cmt_addr("127.0.0.1", PORT + 9), any = cmt_addr("0.0.0.0", PORT);
	struct sockaddr_in lo_taken = cmt_addr("127.0.0.2", PORT);
	struct sockaddr_in6 lo6 = addr6("::1", PORT);
	struct rdma_conn_param cp;
	struct droce_cm_id *x;
	struct droce_cq *cq;

	CHECK_EQ(droce_cm_create_id(ch, &x, NULL, RDMA_PS_TCP), 0);
	resolve(ch, x, (struct sockaddr *)&lo, 1);
	cq = cmt_cq(x);
	cmt_qp(x, cq, IBV_QPT_RC);
	memset(&cp, 0, sizeof(cp));
	CHECK_EQ(droce_cm_connect(x, &cp), 0);
	CHECK_EQ(droce_cm_ack_cm_event(CMT_EXPECT(ch, RDMA_CM_EVENT_REJECTED,
						  DROCE_CM_REJ_INVALID_SERVICE_ID)), 0);
	droce_cm_destroy_qp(x);
	CHECK_EQ(droce_cm_destroy_id(x), 0);
	CHECK_EQ(droce_destroy_cq(cq), 0);

	CHECK_EQ(droce_cm_create_id(ch, &x, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(x, (struct sockaddr *)&lo), 0);
	FAILS(droce_cm_resolve_addr(x, NULL, (struct sockaddr *)&lo6, 2000), EINVAL);
	CHECK_EQ(droce_cm_destroy_id(x), 0);

	/* PORT is held by the 127.0.0.1 listener: any loopback or wildcard bind collides */
	CHECK_EQ(droce_cm_create_id(ch, &x, NULL, RDMA_PS_TCP), 0);
	FAILS(droce_cm_bind_addr(x, (struct sockaddr *)&any), EADDRINUSE);
	FAILS(droce_cm_bind_addr(x, (struct sockaddr *)&lo_taken), EADDRINUSE);
	CHECK(x->verbs == NULL);
	CHECK_EQ(droce_cm_destroy_id(x), 0);
}

int main(int argc, char **argv __attribute__((unused)))
{
	struct droce_cm_event_channel *ch;
	struct sockaddr_in lo = cmt_addr("127.0.0.1", PORT), any = cmt_addr("0.0.0.0", PORT + 2);
	struct sockaddr_in a2 = cmt_addr("10.99.0.2", 0);
	struct sockaddr_in6 lo6 = addr6("::1", PORT + 1), any6 = addr6("::", PORT + 1);
	struct droce_cm_id *lis, *lis6, *lisw, *x;
	struct droce_counters c0, c1;
	union ibv_gid g1;

	CHECK(argc == 2);
	cmt_init();
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);
	lis = listen_on(ch, (struct sockaddr *)&lo);
	lis6 = listen_on(ch, (struct sockaddr *)&any6);
	lisw = listen_on(ch, (struct sockaddr *)&any);

	CHECK_EQ(droce_cm_create_id(ch, &x, NULL, RDMA_PS_TCP), 0);	/* drives droce0 */
	resolve(ch, x, (struct sockaddr *)&lo, 1);
	CHECK_EQ(droce_query_counters(x->verbs, &c0), 0);

	connect_send(ch, lis, (struct sockaddr *)&lo, 1);	/* 127.0.0.1: IPv4 GID */
	connect_send(ch, lis6, (struct sockaddr *)&lo6, 0);	/* ::1: link-local GID */
	connect_send(ch, lisw, (struct sockaddr *)&any, 1);	/* INADDR_ANY */
	CHECK_EQ(droce_query_counters(x->verbs, &c1), 0);
	CHECK(c1.loopback > c0.loopback);
	CHECK_EQ(c1.loopback_dropped, 0);
	CHECK_EQ(c1.tx_dropped, 0);
	printf("cm loopback: 3 connections over droce0's loopback, %llu frames looped\n",
	       (unsigned long long)(c1.loopback - c0.loopback));
	CHECK_EQ(droce_cm_destroy_id(x), 0);

	/* An id bound to droce1 keeps its device: 127.0.0.1 is droce1's own GID then. */
	CHECK_EQ(droce_cm_create_id(ch, &x, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(x, (struct sockaddr *)&a2), 0);
	CHECK_EQ(droce_cm_resolve_addr(x, NULL, (struct sockaddr *)&lo, 2000), 0);
	CHECK_EQ(strcmp(droce_get_device_name(x->verbs->device), "droce1"), 0);
	CHECK_EQ(droce_query_gid(x->verbs, 1, 1, &g1), 0);
	CHECK_EQ(memcmp(&x->route.addr.addr.ibaddr.dgid, &g1, 16), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_destroy_id(x), 0);

	refusals(ch);
	CHECK_EQ(droce_cm_destroy_id(lis), 0);
	CHECK_EQ(droce_cm_destroy_id(lis6), 0);
	CHECK_EQ(droce_cm_destroy_id(lisw), 0);
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	printf("cm loopback: refusals (REJECTED, EINVAL, EADDRINUSE) as Linux's\n");
	return 0;
}
