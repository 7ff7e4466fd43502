/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The CM's telemetry commands, read from this process's own DPDK telemetry socket as
 * dpdk-telemetry.py reads them (DROCE_CONFIG: telemetry_lcore.ini, file prefix drocecmtel):
 * - /droce/cm_ids lists a listener ("listen", its address) and both ends of a connection
 *   ("connected"/"established", device, addresses with ports, the QPN of each end's QP, each
 *   end's comm ID the other's remote one); after the ids are destroyed, nothing;
 * - /droce/cm_counters,droce0 and ,droce1 equal droce_cm_query_counters() (REQ, REP, RTU,
 *   DREQ, DREP counted each way);
 * - a device that does not exist, no parameter: DPDK's null reply, and the socket still
 *   answers.
 *
 * Usage: cm_telemetry_test lcore
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cm_test.h"

#define PORT 7182
#define SOCK "/var/run/dpdk/drocecmtel/dpdk_telemetry.v2"

static char reply[16384];

static const char *tel(const char *cmd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	ssize_t n;
	int fd;

	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	CHECK(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", SOCK);
	CHECK_EQ(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK(read(fd, reply, sizeof(reply)) > 0);	/* the greeting */
	CHECK_EQ(write(fd, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	n = read(fd, reply, sizeof(reply) - 1);
	CHECK(n > 0);
	reply[n] = '\0';
	close(fd);
	return reply;
}

/* @p text contains @p want. */
#define HAS(text, want) do { \
	if (strstr((text), (want)) == NULL) { \
		fprintf(stderr, "line %d: no %s in %s\n", __LINE__, (want), (text)); \
		exit(1); \
	} \
} while (0)

/* Each counter of @p c as "name":value in @p text. */
static void counters_match(const char *text, const struct droce_cm_counters *c)
{
	const uint64_t *v = (const uint64_t *)c;
	char want[96];
	unsigned int i;

	for (i = 0; droce_cm_counter_name(i) != NULL; i++) {
		snprintf(want, sizeof(want), "\"%s\":%llu", droce_cm_counter_name(i),
			 (unsigned long long)v[i]);
		HAS(text, want);
	}
	for (i = 0; i < DROCE_CM_MSG_NUM; i++) {
		snprintf(want, sizeof(want), "\"rx_%s\":%llu", droce_cm_msg_name(i),
			 (unsigned long long)c->rx_msg[i]);
		HAS(text, want);
		snprintf(want, sizeof(want), "\"tx_%s\":%llu", droce_cm_msg_name(i),
			 (unsigned long long)c->tx_msg[i]);
		HAS(text, want);
	}
}

static void id_entry(const char *text, const struct droce_cm_id *id, const char *dev,
		     uint32_t remote_comm_id)
{
	char want[256], src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
	const struct sockaddr_in *s = (const struct sockaddr_in *)droce_cm_get_local_addr(
		(struct droce_cm_id *)id);
	const struct sockaddr_in *d = (const struct sockaddr_in *)droce_cm_get_peer_addr(
		(struct droce_cm_id *)id);

	CHECK(inet_ntop(AF_INET, &s->sin_addr, src, sizeof(src)) != NULL);
	CHECK(inet_ntop(AF_INET, &d->sin_addr, dst, sizeof(dst)) != NULL);
	snprintf(want, sizeof(want), "\"state\":\"connected\",\"ib_state\":\"established\","
		 "\"port_space\":\"TCP\",\"device\":\"%s\",\"src\":\"%s:%u\",\"dst\":\"%s:%u\"",
		 dev, src, ntohs(s->sin_port), dst, ntohs(d->sin_port));
	HAS(text, want);
	snprintf(want, sizeof(want), "\"remote_comm_id\":%u,\"qpn\":%u,\"destroyed\":0",
		 remote_comm_id, id->qp->qp_num);
	HAS(text, want);
}

/* The comm ID telemetry gives connected @p id (found by its device and source address). */
static uint32_t comm_id_of(const char *text, struct droce_cm_id *id, const char *dev)
{
	const struct sockaddr_in *s = (const struct sockaddr_in *)droce_cm_get_local_addr(id);
	char want[160], src[INET_ADDRSTRLEN];
	const char *p;

	CHECK(inet_ntop(AF_INET, &s->sin_addr, src, sizeof(src)) != NULL);
	snprintf(want, sizeof(want), "\"state\":\"connected\",\"ib_state\":\"established\","
		 "\"port_space\":\"TCP\",\"device\":\"%s\",\"src\":\"%s:%u\"", dev, src,
		 ntohs(s->sin_port));
	p = strstr(text, want);
	CHECK(p != NULL);
	p = strstr(p, "\"comm_id\":");
	CHECK(p != NULL);
	return (uint32_t)strtoul(p + 10, NULL, 10);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = cmt_addr("10.99.0.2", PORT);
	struct droce_cm_event_channel *ch;
	struct droce_cm_id *lis, *cli, *srv;
	struct droce_cm_counters c0, c1;
	struct rdma_conn_param cp;
	struct droce_cm_event *ev;
	struct droce_cq *ccq, *scq;
	uint32_t cli_comm, srv_comm;
	const char *t;
	char want[64];
	int i;

	CHECK(argc == 2);
	cmt_init();
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);
	CHECK_EQ(droce_cm_create_id(ch, &lis, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(lis, (struct sockaddr *)&sa), 0);
	CHECK_EQ(droce_cm_listen(lis, 4), 0);
	t = tel("/droce/cm_ids");
	snprintf(want, sizeof(want), "\"state\":\"listen\"");
	HAS(t, want);
	snprintf(want, sizeof(want), "\"src\":\"10.99.0.2:%u\"", PORT);
	HAS(t, want);

	CHECK_EQ(droce_cm_create_id(ch, &cli, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(cli, NULL, (struct sockaddr *)&sa, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_resolve_route(cli, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	ccq = cmt_cq(cli);
	cmt_qp(cli, ccq, IBV_QPT_RC);
	memset(&cp, 0, sizeof(cp));
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	CHECK_EQ(droce_cm_connect(cli, &cp), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	srv = ev->id;
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	scq = cmt_cq(srv);
	cmt_qp(srv, scq, IBV_QPT_RC);
	CHECK_EQ(droce_cm_accept(srv, &cp), 0);
	for (i = 0; i < 2; i++)
		CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);

	t = tel("/droce/cm_ids");
	cli_comm = comm_id_of(t, cli, "droce0");
	srv_comm = comm_id_of(t, srv, "droce1");
	CHECK(cli_comm != 0 && srv_comm != 0 && cli_comm != srv_comm);
	id_entry(t, cli, "droce0", srv_comm);
	id_entry(t, srv, "droce1", cli_comm);

	CHECK_EQ(droce_cm_disconnect(cli), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK_EQ(droce_cm_disconnect(srv), 0);
	for (i = 0; i < 3; i++)
		CHECK_EQ(droce_cm_ack_cm_event(CMT_EXPECT(ch, i == 0 ? RDMA_CM_EVENT_DISCONNECTED :
				RDMA_CM_EVENT_TIMEWAIT_EXIT, 0)), 0);
	CHECK_EQ(droce_cm_query_counters(cli->verbs, &c0), 0);
	CHECK_EQ(droce_cm_query_counters(srv->verbs, &c1), 0);
	CHECK_EQ(c0.tx_msg[DROCE_CM_MSG_REQ] + c1.tx_msg[DROCE_CM_MSG_REP] +
		 c0.tx_msg[DROCE_CM_MSG_RTU] + c0.tx_msg[DROCE_CM_MSG_DREQ] +
		 c1.tx_msg[DROCE_CM_MSG_DREP], 5);
	counters_match(tel("/droce/cm_counters,droce0"), &c0);
	counters_match(tel("/droce/cm_counters,droce1"), &c1);

	/* Bad parameters: DPDK's null reply; the socket keeps answering. */
	HAS(tel("/droce/cm_counters,droce7"), "{\"/droce/cm_counters\":null}");
	HAS(tel("/droce/cm_counters"), "{\"/droce/cm_counters\":null}");
	HAS(tel("/droce/cm_counters,droce0,droce1"), "{\"/droce/cm_counters\":null}");

	droce_cm_destroy_qp(cli);
	droce_cm_destroy_qp(srv);
	CHECK_EQ(droce_destroy_cq(ccq), 0);
	CHECK_EQ(droce_destroy_cq(scq), 0);
	CHECK_EQ(droce_cm_destroy_id(srv), 0);
	CHECK_EQ(droce_cm_destroy_id(cli), 0);
	CHECK_EQ(droce_cm_destroy_id(lis), 0);
	HAS(tel("/droce/cm_ids"), "{\"/droce/cm_ids\":{}}");
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	printf("cm telemetry: ids and counters as the API gives them (%s engine)\n", argv[1]);
	return 0;
}
