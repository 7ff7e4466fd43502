/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Two processes (--server, --client): the set-up channel is TCP on 127.0.0.1, perftest's port
 * 18515 by default (-p). The server writes its configuration (as config/vhost-server.ini, with
 * a socket path of this run: /tmp/droce-perf-PID.sock), listens, opens its device (net_vhost
 * creates the socket), then accepts and sends the socket path; the client connects before it
 * starts EAL, writes its configuration (as config/vhost-client.ini, net_virtio_user on that
 * path) and opens its device. Both then exchange their options (they must agree) and their
 * views (QPNs, GID, buffer, R_Key), connect their QPs and meet at a barrier. While a side
 * waits on the channel it drives its engine (inline), so ARP and ACKs are answered.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "perf.h"

#define PERF_CONNECT_S 30	/* the client waits this long for the server */
#define PERF_HUGE_FREE "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
#define PERF_HUGE_NEED 128	/* -m 256 */

static const char eal_args[] = "--in-memory --single-file-segments -m 256 --no-pci "
	"--no-telemetry --lcores 0@(0-1) --log-level=lib.eal:error "
	"--log-level=lib.vhost.config:warning";

static char ini_path[64], sock_path[108];
static int listen_fd = -1;

static int hugepages(void)
{
	FILE *f = fopen(PERF_HUGE_FREE, "r");
	long n = 0;

	if (f != NULL) {
		if (fscanf(f, "%ld", &n) != 1)
			n = 0;
		fclose(f);
	}
	if (n >= PERF_HUGE_NEED)
		return 0;
	fprintf(stderr, "droce-perf: two processes need %d free 2 MiB hugepages (%ld free): "
		"echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages\n",
		PERF_HUGE_NEED, n);
	return -1;
}

/* This side's configuration (doc/engine.md "Two processes over vhost-user"). */
static int write_ini(const struct perf_opts *o)
{
	bool srv = o->role == PERF_SERVER;
	FILE *f;

	snprintf(ini_path, sizeof(ini_path), "/tmp/droce-perf-%d-%s.ini", (int)getpid(),
		 srv ? "server" : "client");
	f = fopen(ini_path, "w");
	if (f == NULL) {
		fprintf(stderr, "droce-perf: cannot write %s: %s\n", ini_path, strerror(errno));
		return -1;
	}
	fprintf(f, "[eal]\nargs = %s\n[engine]\nlcores =\nmbufs = 4095\nneigh_retry_ms = 100\n",
		o->eal != NULL ? o->eal : eal_args);
	/* A vhost-user server's link is down until its client connects: as
	 * config/vhost-server.ini, the server does not follow it (the set-up needs the port
	 * ACTIVE before the client comes). */
	if (srv)
		fprintf(f, "link_poll_ms = 0\n[device vhost0]\ndevargs = net_vhost0,iface=%s,queues=1\n"
			"mac = 02:d0:0c:00:01:01\nipv4 = 10.98.0.1\nmtu = 9000\n", sock_path);
	else
		fprintf(f, "[device virtio0]\ndevargs = net_virtio_user0,path=%s,queues=1,"
			"queue_size=1024,mac=02:d0:0c:00:01:02\nmac = 02:d0:0c:00:01:02\n"
			"ipv4 = 10.98.0.2\nmtu = 9000\n", sock_path);
	if (fclose(f) != 0)
		return -1;
	setenv("DROCE_CONFIG", ini_path, 1);
	return 0;
}

static struct sockaddr_in local_addr(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* Small messages go out at once (no Nagle delay between a message's parts). */
static void nodelay(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int server_listen(const struct perf_opts *o)
{
	struct sockaddr_in a = local_addr(o->port);
	int one = 1;

	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (listen_fd < 0 ||
	    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(listen_fd, 1) != 0) {
		fprintf(stderr, "droce-perf: cannot listen on 127.0.0.1:%u: %s\n", o->port,
			strerror(errno));
		return -1;
	}
	snprintf(sock_path, sizeof(sock_path), "/tmp/droce-perf-%d.sock", (int)getpid());
	unlink(sock_path);
	return write_ini(o);
}

static int client_connect(struct perf_ctx *c, const struct perf_opts *o)
{
	struct sockaddr_in a = local_addr(o->port);
	int i;

	for (i = 0; i < PERF_CONNECT_S * 10 && !perf_stop; i++) {
		c->fd = socket(AF_INET, SOCK_STREAM, 0);
		if (c->fd >= 0 && connect(c->fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		close(c->fd);
		c->fd = -1;
		usleep(100000);
	}
	if (c->fd < 0) {
		fprintf(stderr, "droce-perf: no server on 127.0.0.1:%u after %d s\n", o->port,
			PERF_CONNECT_S);
		return -1;
	}
	nodelay(c->fd);
	if (perf_peer_recv(c, sock_path, sizeof(sock_path)) != 0)
		return -1;
	sock_path[sizeof(sock_path) - 1] = '\0';
	return write_ini(o);
}

/* Before EAL: the channel and this side's configuration. */
int perf_peer_start(struct perf_opts *o, struct perf_ctx *c)
{
	if (hugepages() != 0)
		return -1;
	return o->role == PERF_SERVER ? server_listen(o) : client_connect(c, o);
}

/* Server, device open (the vhost-user socket exists): take the client, tell it the path. */
static int server_accept(struct perf_ctx *c)
{
	struct pollfd pf = { .fd = listen_fd, .events = POLLIN };

	if (!c->o->json)
		fprintf(stderr, "droce-perf: server waiting on 127.0.0.1:%u\n", c->o->port);
	while (poll(&pf, 1, 100) == 0)
		if (perf_stop)
			return -1;
	c->fd = accept(listen_fd, NULL, NULL);
	if (c->fd < 0) {
		fprintf(stderr, "droce-perf: accept: %s\n", strerror(errno));
		return -1;
	}
	nodelay(c->fd);
	return perf_peer_send(c, sock_path, sizeof(sock_path));
}

int perf_peer_send(struct perf_ctx *c, const void *p, size_t len)
{
	const uint8_t *b = p;
	ssize_t n;

	while (len > 0) {
		n = write(c->fd, b, len);
		if (n <= 0) {
			fprintf(stderr, "droce-perf: the peer closed the set-up channel "
				"(%s)\n", n < 0 ? strerror(errno) : "EOF");
			return -1;
		}
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Something (or EOF) is waiting on the channel. */
int perf_peer_ready(struct perf_ctx *c)
{
	struct pollfd pf = { .fd = c->fd, .events = POLLIN };

	return poll(&pf, 1, 0) > 0;
}

/* Read @p len bytes, driving the engine meanwhile (once the device is open). */
int perf_peer_recv(struct perf_ctx *c, void *p, size_t len)
{
	uint8_t *b = p;
	ssize_t n;

	while (len > 0) {
		while (c->side[c->lo].ctx != NULL && !perf_peer_ready(c)) {
			if (perf_stop)
				return -1;
			perf_step(c);
		}
		n = read(c->fd, b, len);
		if (n <= 0) {
			fprintf(stderr, "droce-perf: the peer closed the set-up channel "
				"(%s)\n", n < 0 ? strerror(errno) : "EOF");
			return -1;
		}
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* What both sides must agree on. */
struct perf_agree {
	char verb[8];
	uint32_t test, conn, qps, tx_depth, size, all_sizes, mtu;
};

static int agree(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	struct perf_agree me = { .test = o->test, .conn = o->conn, .qps = o->qps,
		.tx_depth = o->tx_depth, .size = o->size, .all_sizes = o->all_sizes,
		.mtu = c->mtu }, peer;

	snprintf(me.verb, sizeof(me.verb), "%s", o->verb->name);
	if (perf_peer_send(c, &me, sizeof(me)) != 0 || perf_peer_recv(c, &peer, sizeof(peer)) != 0)
		return -1;
	if (memcmp(&me, &peer, sizeof(me)) != 0) {
		fprintf(stderr, "droce-perf: the peer runs another test or other options (test, "
			"-c, -q, -t, -s, -a and the MTU must be the same on both sides)\n");
		return -1;
	}
	return 0;
}

/* Exchange the views, after the options are found to agree. */
int perf_peer_views(struct perf_ctx *c)
{
	int me = c->lo;

	if (c->o->role == PERF_SERVER && server_accept(c) != 0)
		return -1;
	if (agree(c) != 0 || perf_peer_send(c, &c->view[me], sizeof(c->view[me])) != 0)
		return -1;
	return perf_peer_recv(c, &c->view[1 - me], sizeof(c->view[1 - me]));
}

/* The vhost-user socket of droce's link (the raw reference's is this + ".raw"). */
const char *perf_peer_sock_path(void)
{
	return sock_path;
}

void perf_peer_stop(struct perf_ctx *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (listen_fd >= 0)
		close(listen_fd);
	if (ini_path[0] != '\0')
		unlink(ini_path);
	if (c->o->role == PERF_SERVER && sock_path[0] != '\0')
		unlink(sock_path);
}
