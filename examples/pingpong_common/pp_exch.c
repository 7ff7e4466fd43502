/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The out-of-band exchange of rdma-core 44's pingpong examples, byte for byte, so that droce's
 * examples talk to the unmodified tools:
 *
 *   client                                   server
 *   connect(TCP port)                        accept() one connection
 *   write n x 52 bytes "LID:QPN:PSN:GID\0" --> read them; connect its QP(s) (RTR, RTS; UD: AH)
 *   read n x 52 bytes                   <--  write its own n x 52 bytes
 *   write "done\0" (5 bytes), close     -->  read them, close
 *
 * n is 1 for ibv_rc/uc/ud_pingpong; ibv_srq_pingpong always sends 256 (its MAX_QP), the
 * addresses of its -q QPs and then zeroes. The server connects before it answers, so the
 * client's first SEND never finds it unconnected. After "done" both sides run the ping-pong.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>

#include "pp.h"

/* The GID as 32 hex digits, its 16 bytes in wire order (rdma-core's gid_to_wire_gid()). */
void pp_gid_to_wire(const union ibv_gid *gid, char wire[33])
{
	int i;

	for (i = 0; i < 16; i++)
		snprintf(&wire[i * 2], 3, "%02x", gid->raw[i]);
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* The inverse of pp_gid_to_wire(). @return 0, or -1 if @p wire is not 32 hex digits. */
int pp_wire_to_gid(const char *wire, union ibv_gid *gid)
{
	int i, hi, lo;

	for (i = 0; i < 16; i++) {
		hi = hexval(wire[i * 2]);
		lo = hi < 0 ? -1 : hexval(wire[i * 2 + 1]);
		if (lo < 0)
			return -1;
		gid->raw[i] = (uint8_t)(hi << 4 | lo);
	}
	return wire[32] == '\0' ? 0 : -1;
}

static void format_msg(const struct pp_dest *d, char msg[PP_MSG_SIZE])
{
	char gid[33];

	pp_gid_to_wire(&d->gid, gid);
	snprintf(msg, PP_MSG_SIZE, "%04x:%06x:%06x:%s", d->lid, d->qpn, d->psn, gid);
}

/* Parse a peer's message; strict about the layout, so a foreign peer is caught here. */
static int parse_msg(const char msg[PP_MSG_SIZE], struct pp_dest *d)
{
	unsigned int lid, qpn, psn;
	char gid[33];
	int n = 0;

	if (msg[PP_MSG_SIZE - 1] != '\0' || strlen(msg) != PP_MSG_SIZE - 1 ||
	    sscanf(msg, "%4x:%6x:%6x:%32s%n", &lid, &qpn, &psn, gid, &n) != 4 ||
	    n != (int)PP_MSG_SIZE - 1 || msg[4] != ':' || msg[11] != ':' || msg[18] != ':' ||
	    pp_wire_to_gid(gid, &d->gid) != 0) {
		fprintf(stderr, "Couldn't parse remote address \"%.*s\"\n",
			(int)PP_MSG_SIZE - 1, msg);
		return -1;
	}
	d->lid = (int)lid;
	d->qpn = (int)qpn;
	d->psn = (int)psn;
	return 0;
}

/* Read exactly @p len bytes (the peer's messages are small, but TCP may split them). */
static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static int tcp_connect(const char *host, unsigned int port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *t;
	char service[8];
	int fd = -1, rc;

	snprintf(service, sizeof(service), "%u", port);
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, "%s for %s:%u\n", gai_strerror(rc), host, port);
		return -1;
	}
	for (t = res; t != NULL && fd < 0; t = t->ai_next) {
		fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
		if (fd >= 0 && connect(fd, t->ai_addr, t->ai_addrlen) != 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		fprintf(stderr, "Couldn't connect to %s:%u\n", host, port);
	return fd;
}

static int tcp_listen(unsigned int port)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE, .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *t;
	char service[8];
	int fd = -1, one = 1, rc;

	snprintf(service, sizeof(service), "%u", port);
	rc = getaddrinfo(NULL, service, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, "%s for port %u\n", gai_strerror(rc), port);
		return -1;
	}
	for (t = res; t != NULL && fd < 0; t = t->ai_next) {
		fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, t->ai_addr, t->ai_addrlen) != 0 || listen(fd, 1) != 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		fprintf(stderr, "Couldn't listen to port %u\n", port);
	return fd;
}

static int write_msgs(int fd, const struct pp_dest *d, unsigned int n)
{
	char msg[PP_MSG_SIZE];
	unsigned int i;

	for (i = 0; i < n; i++) {
		format_msg(&d[i], msg);
		if (write_full(fd, msg, PP_MSG_SIZE) != 0)
			return -1;
	}
	return 0;
}

/* @return 0, 1 when the socket failed, -1 when a message was malformed (with a message). */
static int read_msgs(int fd, struct pp_dest *d, unsigned int n)
{
	char msg[PP_MSG_SIZE];
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (read_full(fd, msg, PP_MSG_SIZE) != 0)
			return 1;
		if (parse_msg(msg, &d[i]) != 0)
			return -1;
	}
	return 0;
}

/* Client side: send ours, read the server's, acknowledge with "done". @return 0 or -1. */
int pp_client_exch(const struct pp_opts *o, const struct pp_dest *me, struct pp_dest *rem,
		   unsigned int n)
{
	int fd, rc = -1;

	fd = tcp_connect(o->servername, o->port);
	if (fd < 0)
		return -1;
	if (write_msgs(fd, me, n) != 0) {
		fprintf(stderr, "Couldn't send local address\n");
		goto out;
	}
	rc = read_msgs(fd, rem, n);
	if (rc == 0 && write_full(fd, PP_DONE_MSG, PP_DONE_SIZE) != 0)
		rc = 1;
	if (rc > 0)
		fprintf(stderr, "Couldn't read/write remote address\n");
out:
	close(fd);
	return rc == 0 ? 0 : -1;
}

/* Server side, after accept(): read the client's addresses, connect, answer, read "done". */
static int server_talk(int fd, struct pp_ctx *c, const struct pp_opts *o,
		       const struct pp_dest *me, struct pp_dest *rem, unsigned int n)
{
	char done[PP_DONE_SIZE];
	int rc;

	rc = read_msgs(fd, rem, n);
	if (rc > 0)
		fprintf(stderr, "Couldn't read remote address\n");
	if (rc != 0)
		return -1;
	if (pp_connect(c, o, me, rem) != 0) {
		fprintf(stderr, "Couldn't connect to remote QP\n");
		return -1;
	}
	if (write_msgs(fd, me, n) != 0 || read_full(fd, done, PP_DONE_SIZE) != 0 ||
	    memcmp(done, PP_DONE_MSG, PP_DONE_SIZE) != 0) {
		fprintf(stderr, "Couldn't send/recv local address\n");
		return -1;
	}
	return 0;
}

/* Server side: accept one client, exchange, connect the QP(s). @return 0 or -1. */
int pp_server_exch(struct pp_ctx *c, const struct pp_opts *o, const struct pp_dest *me,
		   struct pp_dest *rem, unsigned int n)
{
	int lfd, fd, rc;

	lfd = tcp_listen(o->port);
	if (lfd < 0)
		return -1;
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd < 0) {
		fprintf(stderr, "accept() failed\n");
		return -1;
	}
	rc = server_talk(fd, c, o, me, rem, n);
	close(fd);
	return rc;
}
