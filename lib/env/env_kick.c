/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * net_af_packet's transmit ring, kicked (env.h). The PMD (DPDK 22.11, eth_af_packet_tx())
 * copies a burst into its socket's PACKET_TX_RING, marks the frames for sending and has the
 * kernel send them with one sendto(MSG_DONTWAIT). When the socket's send buffer is full -- its
 * earlier frames still queued below it, in a backlog a busy machine has not drained -- the
 * kernel sends what fits and leaves the rest in the ring, still marked, and the PMD counts
 * the whole burst sent. Those frames go at the next burst's sendto(): never, if the port has
 * nothing more to send. A UC message whose last frames wait there is lost, and a ping-pong
 * waits for it forever. The engine calls sendto() on the ring itself once the port's TX has
 * been quiet for a while (engine_port.c), which sends whatever still waits.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_packet.h>

#include <rte_ethdev.h>

#include "env.h"

/* Whether descriptor @p fd is an AF_PACKET socket bound to interface @p ifindex. */
static bool packet_socket_on(int fd, int ifindex)
{
	struct sockaddr_ll sll;
	socklen_t len = sizeof(sll);
	int domain;
	socklen_t dlen = sizeof(domain);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) != 0 || domain != AF_PACKET)
		return false;
	memset(&sll, 0, sizeof(sll));
	return getsockname(fd, (struct sockaddr *)&sll, &len) == 0 && sll.sll_ifindex == ifindex;
}

static int fd_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int env_port_kick_fd(uint16_t port, uint16_t queue)
{
	struct rte_eth_dev_info info;
	int fds[RTE_MAX_QUEUES_PER_PORT];
	struct dirent *e;
	unsigned int n = 0;
	DIR *d;

	if (rte_eth_dev_info_get(port, &info) != 0 || info.driver_name == NULL ||
	    strcmp(info.driver_name, "net_af_packet") != 0 || info.if_index == 0)
		return -1;
	d = opendir("/proc/self/fd");
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (end == e->d_name || *end != '\0' || fd == dirfd(d))
			continue;
		if (!packet_socket_on((int)fd, (int)info.if_index))
			continue;
		if (n == RTE_DIM(fds)) {
			n++;	/* more sockets than queues can be: not only the port's */
			break;
		}
		fds[n++] = (int)fd;
	}
	closedir(d);
	/* The PMD opens its queues' sockets one after the other at probe, so in the order of
	 * their descriptors; any other socket on the interface makes the mapping unsure. */
	if (n != info.nb_rx_queues || queue >= n)
		return -1;
	qsort(fds, n, sizeof(fds[0]), fd_cmp);
	return fds[queue];
}

long env_port_kick(int fd)
{
	ssize_t n = sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0);

	return n < 0 ? -errno : (long)n;
}
