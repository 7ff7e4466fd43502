/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The raw link: what DPDK alone does over the very ports droce will use, on the lcore its
 * engine will run on — testpmd's io-forward mode (receive a burst on one port, transmit it
 * unchanged on its partner) over the pair, seeded with PERF_RAW_SEEDS frames of the run's
 * frame length; then one frame ping-ponged for the latency of a hop. It runs after the
 * devices are created (their ports exist) and while they are not open (only opened and closed
 * once for the path MTU: the last close stops the engine's lcores and ports, so nothing else
 * uses them); the engine then reconfigures them.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "perf.h"

#define PERF_RAW_SEEDS 512
#define PERF_RAW_BURST 32
#define PERF_RAW_HOPS 20000
#define PERF_RAW_MBUFS 4095

struct raw_job {
	uint16_t port[2];
	uint32_t frame_len;
	double seconds;
	double mpps;		/* out */
	double hop_us;		/* out */
	int rc;
};

static struct rte_mempool *raw_pool;

/* The raw phases' pool (both modes), made on first use: frames up to MTU 9000. */
static struct rte_mempool *raw_pool_get(void)
{
	if (raw_pool == NULL)
		raw_pool = rte_pktmbuf_pool_create("perf_raw", PERF_RAW_MBUFS, 256, 0,
						   (uint16_t)(RTE_PKTMBUF_HEADROOM + 9216),
						   (int)rte_socket_id());
	return raw_pool;
}

static int port_setup(uint16_t port)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, 1024, rte_eth_dev_socket_id(port), NULL,
					    raw_pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, 1024, rte_eth_dev_socket_id(port), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	return rc;
}

static struct rte_mbuf *frame(uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(raw_pool);
	struct rte_ether_hdr *eh;

	if (m == NULL)
		return NULL;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)len);
	if (eh == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(eh, 0, len);
	memset(&eh->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	return m;
}

static int seed(const struct raw_job *j)
{
	struct rte_mbuf *m;
	unsigned int i;

	for (i = 0; i < PERF_RAW_SEEDS; i++) {
		m = frame(j->frame_len);
		if (m == NULL)
			return -1;
		if (rte_eth_tx_burst(j->port[i & 1], 0, &m, 1) != 1)
			rte_pktmbuf_free(m);
	}
	return 0;
}

/* io-forward: what arrives on one port leaves on the other. @return frames forwarded. */
static uint64_t forward(const struct raw_job *j, uint64_t end)
{
	struct rte_mbuf *pkts[PERF_RAW_BURST];
	uint64_t fwd = 0;
	uint16_t n, sent;
	int p;

	while (rte_rdtsc() < end && !perf_stop) {
		for (p = 0; p < 2; p++) {
			n = rte_eth_rx_burst(j->port[p], 0, pkts, PERF_RAW_BURST);
			if (n == 0)
				continue;
			sent = rte_eth_tx_burst(j->port[1 - p], 0, pkts, n);
			if (sent < n)
				rte_pktmbuf_free_bulk(pkts + sent, n - sent);
			fwd += sent;
		}
	}
	return fwd;
}

static void drain(const struct raw_job *j)
{
	struct rte_mbuf *pkts[PERF_RAW_BURST];
	unsigned int idle = 0;
	uint16_t n;
	int p;

	while (idle < 1000) {
		for (p = 0, n = 0; p < 2; p++) {
			uint16_t k = rte_eth_rx_burst(j->port[p], 0, pkts, PERF_RAW_BURST);

			rte_pktmbuf_free_bulk(pkts, k);
			n += k;
		}
		idle = n ? 0 : idle + 1;
	}
}

int perf_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * One frame bounced for PERF_RAW_HOPS hops, sent on port[i & 1] and awaited on port[1 - (i & 1)]
 * (the same port twice: sent and awaited back from a reflecting peer); the median in
 * microseconds.
 */
static double bounce(const uint16_t port[2], uint32_t frame_len)
{
	static uint64_t t[PERF_RAW_HOPS];
	struct rte_mbuf *m = frame(frame_len);
	unsigned int i;

	if (m == NULL)
		return 0;
	for (i = 0; i < PERF_RAW_HOPS && !perf_stop; i++) {
		uint64_t t0 = rte_rdtsc(), give_up = t0 + rte_get_tsc_hz();

		if (rte_eth_tx_burst(port[i & 1], 0, &m, 1) != 1)
			break;
		while (m != NULL && rte_eth_rx_burst(port[1 - (i & 1)], 0, &m, 1) == 0)
			if (rte_rdtsc() > give_up)
				m = NULL;	/* lost (the pool keeps it): the hops so far */
		if (m == NULL)
			break;
		t[i] = rte_rdtsc() - t0;
	}
	if (m != NULL)
		rte_pktmbuf_free(m);
	if (i == 0)
		return 0;
	qsort(t, i, sizeof(t[0]), perf_cmp_u64);
	return (double)t[i / 2] * 1e6 / (double)rte_get_tsc_hz();
}

/* One frame bounced between the ports; the median hop in microseconds. */
static double hop_latency(const struct raw_job *j)
{
	return bounce(j->port, j->frame_len);
}

static int raw_lcore(void *arg)
{
	struct raw_job *j = arg;
	uint64_t hz = rte_get_tsc_hz(), start, fwd;

	j->rc = seed(j);
	if (j->rc != 0)
		return 0;
	start = rte_rdtsc();
	fwd = forward(j, start + (uint64_t)(j->seconds * (double)hz));
	j->mpps = (double)fwd / ((double)(rte_rdtsc() - start) / (double)hz) / 1e6;
	drain(j);
	j->hop_us = hop_latency(j);
	drain(j);
	return 0;
}

static int find_ports(uint16_t port[2])
{
	uint16_t p, n = 0;

	RTE_ETH_FOREACH_DEV(p) {
		if (n < 2)
			port[n] = p;
		n++;
	}
	return n == 2 ? 0 : -1;
}

/* The lcore the engine will take ("auto": the first worker), else this one. */
static unsigned int engine_lcore(void)
{
	unsigned int l = rte_get_next_lcore(-1, 1, 0);

	return l < RTE_MAX_LCORE ? l : rte_lcore_id();
}

static int run_job(struct raw_job *j)
{
	unsigned int l = engine_lcore();

	if (l == rte_lcore_id())
		return raw_lcore(j) == 0 ? j->rc : -1;
	if (rte_eal_remote_launch(raw_lcore, j, l) != 0)
		return -1;
	rte_eal_wait_lcore(l);
	return j->rc;
}

int perf_raw_measure(const struct perf_opts *o, uint32_t frame_len, struct perf_refs *refs)
{
	struct raw_job j = { .frame_len = frame_len, .seconds = o->raw_seconds };
	int p, rc = 0;

	refs->raw_mpps = 0;
	refs->frame_len = frame_len;
	if (find_ports(j.port) != 0)
		return -1;	/* only the in-process pair has both ends here */
	if (raw_pool_get() == NULL)
		return -1;
	for (p = 0; p < 2 && rc == 0; p++)
		rc = port_setup(j.port[p]);
	if (rc == 0)
		rc = run_job(&j);
	for (p = 0; p < 2; p++)
		rte_eth_dev_stop(j.port[p]);
	if (rc != 0)
		return -1;
	refs->raw_mpps = j.mpps;
	refs->raw_hop_us = j.hop_us;
	return 0;
}

/*
 * Two processes: droce's own vhost-user link belongs to the engines, so the reference runs on
 * a second vhost-user / virtio_user pair between the same two processes (the same kind of
 * link, the same cores), made for it after the QPs are connected. Both sides reflect what they
 * receive back onto the link; the client seeds PERF_RAW_SEEDS frames and counts what it
 * reflects: frames crossing the link each way per second. Then the client bounces one frame
 * off the server (hop = half the round trip) and ends the server's loop with a frame of
 * ethertype RAW_END.
 */
#define RAW_END 0x88B5		/* IEEE local experimental ethertype */
#define RAW_SERVER_MAX_S 30	/* a server whose client vanished stops reflecting */

static int peer_port = -1;

static bool is_end(struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	return eh->ether_type == rte_cpu_to_be_16(RAW_END);
}

/* Reflect until @p end (TSC) or an end frame (not reflected); @return frames reflected. */
static uint64_t reflect(uint16_t port, uint64_t end, bool *ended)
{
	struct rte_mbuf *pkts[PERF_RAW_BURST];
	uint64_t fwd = 0;
	uint16_t n, sent, i, k;

	while (rte_rdtsc() < end && !perf_stop && !*ended) {
		n = rte_eth_rx_burst(port, 0, pkts, PERF_RAW_BURST);
		for (i = 0, k = 0; i < n; i++) {
			if (is_end(pkts[i])) {
				*ended = true;
				rte_pktmbuf_free(pkts[i]);
			} else {
				pkts[k++] = pkts[i];
			}
		}
		n = k;
		sent = n != 0 ? rte_eth_tx_burst(port, 0, pkts, n) : 0;
		if (sent < n)
			rte_pktmbuf_free_bulk(pkts + sent, n - sent);
		fwd += sent;
	}
	return fwd;
}

static void drain_one(uint16_t port)
{
	struct rte_mbuf *pkts[PERF_RAW_BURST];
	unsigned int idle = 0;
	uint16_t n;

	while (idle < 20000) {
		n = rte_eth_rx_burst(port, 0, pkts, PERF_RAW_BURST);
		rte_pktmbuf_free_bulk(pkts, n);
		idle = n ? 0 : idle + 1;
	}
}

/* The pair, once: the server's vhost-user socket first, then the client connects to it. */
static int peer_pair(struct perf_ctx *c)
{
	bool srv = c->o->role == PERF_SERVER;
	char path[128], args[192];
	uint16_t port;
	int rc;

	if (peer_port >= 0)
		return 0;
	if (raw_pool_get() == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s.raw", perf_peer_sock_path());
	if (srv) {
		unlink(path);
		snprintf(args, sizeof(args), "net_vhost_perfraw,iface=%s,queues=1", path);
	} else {
		snprintf(args, sizeof(args), "net_virtio_user_perfraw,path=%s,queues=1,"
			 "queue_size=1024", path);
		if (perf_peer_barrier(c) != 0)	/* the server's socket exists */
			return -1;
	}
	rc = rte_dev_probe(args);
	if (rc == 0)
		rc = rte_eth_dev_get_port_by_name(srv ? "net_vhost_perfraw" :
						  "net_virtio_user_perfraw", &port);
	if (rc == 0)
		rc = port_setup(port);
	if (srv && perf_peer_barrier(c) != 0)
		rc = -1;
	if (perf_peer_barrier(c) != 0)	/* both started */
		rc = -1;
	if (srv)
		unlink(path);	/* connected: the name is no longer needed */
	if (rc != 0)
		return -1;
	peer_port = port;
	return 0;
}

/* Half the median round trip of one frame off the reflecting server. */
static double client_hop(uint16_t port, uint32_t frame_len)
{
	const uint16_t both[2] = { port, port };

	return bounce(both, frame_len) / 2;
}

static void client_end(uint16_t port, uint32_t frame_len)
{
	struct rte_mbuf *m = frame(frame_len);

	if (m == NULL)
		return;
	rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type = rte_cpu_to_be_16(RAW_END);
	if (rte_eth_tx_burst(port, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
}

int perf_raw_measure_peer(struct perf_ctx *c, uint32_t frame_len, struct perf_refs *refs)
{
	uint64_t hz = rte_get_tsc_hz(), start, fwd;
	bool ended = false;
	unsigned int i;

	refs->raw_mpps = 0;
	refs->frame_len = frame_len;
	if (peer_pair(c) != 0 || perf_peer_barrier(c) != 0)
		return -1;
	if (c->o->role == PERF_SERVER) {
		double got[2];

		reflect((uint16_t)peer_port, rte_rdtsc() + RAW_SERVER_MAX_S * hz, &ended);
		drain_one((uint16_t)peer_port);
		if (perf_peer_recv(c, got, sizeof(got)) != 0)	/* the client's figures */
			return -1;
		refs->raw_mpps = got[0];
		refs->raw_hop_us = got[1];
		return 0;
	}
	for (i = 0; i < PERF_RAW_SEEDS; i++) {
		struct rte_mbuf *m = frame(frame_len);

		if (m != NULL && rte_eth_tx_burst((uint16_t)peer_port, 0, &m, 1) != 1)
			rte_pktmbuf_free(m);
	}
	start = rte_rdtsc();
	fwd = reflect((uint16_t)peer_port, start + (uint64_t)(c->o->raw_seconds * (double)hz),
		      &ended);
	refs->raw_mpps = (double)fwd / ((double)(rte_rdtsc() - start) / (double)hz) / 1e6;
	drain_one((uint16_t)peer_port);
	refs->raw_hop_us = client_hop((uint16_t)peer_port, frame_len);
	client_end((uint16_t)peer_port, frame_len);
	{
		double sent[2] = { refs->raw_mpps, refs->raw_hop_us };

		return perf_peer_send(c, sent, sizeof(sent));
	}
}
