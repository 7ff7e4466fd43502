/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The raw link: what DPDK alone does over the very ports droce will use, on the lcore its
 * engine will run on — testpmd's io-forward mode (receive a burst on one port, transmit it
 * unchanged on its partner) over the pair, seeded with PERF_RAW_SEEDS frames of the run's
 * frame length; then one frame ping-ponged for the latency of a hop. It runs after the
 * devices are created (their ports exist) and before they are opened (the engine has not
 * configured the ports yet, so nothing else uses them); the engine then reconfigures them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* One frame bounced between the ports; the median hop in microseconds. */
static double hop_latency(const struct raw_job *j)
{
	static uint64_t t[PERF_RAW_HOPS];
	struct rte_mbuf *m = frame(j->frame_len);
	unsigned int i;

	if (m == NULL)
		return 0;
	for (i = 0; i < PERF_RAW_HOPS && !perf_stop; i++) {
		uint64_t t0 = rte_rdtsc(), give_up = t0 + rte_get_tsc_hz();

		if (rte_eth_tx_burst(j->port[i & 1], 0, &m, 1) != 1)
			break;
		while (rte_eth_rx_burst(j->port[1 - (i & 1)], 0, &m, 1) == 0)
			if (rte_rdtsc() > give_up)
				return 0;	/* lost: the pool keeps it */
		t[i] = rte_rdtsc() - t0;
	}
	rte_pktmbuf_free(m);
	if (i == 0)
		return 0;
	qsort(t, i, sizeof(t[0]), cmp_u64);
	return (double)t[i / 2] * 1e6 / (double)rte_get_tsc_hz();
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
	if (raw_pool == NULL)
		raw_pool = rte_pktmbuf_pool_create("perf_raw", PERF_RAW_MBUFS, 256, 0,
						   (uint16_t)(RTE_PKTMBUF_HEADROOM + 9216),
						   (int)rte_socket_id());
	if (raw_pool == NULL)
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
