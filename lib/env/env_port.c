/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Ports: created (a ring pair) or probed (devargs) when verbs makes a device, configured and
 * started when the engine starts serving it, stopped when it stops; their link (env.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_ring.h>

#include "env.h"

#define PAIR_RING_SIZE 1024
#define DISCARD_BURST 32

int env_port_pair(const char *pair, const char *name_a, const char *name_b,
		  uint16_t *port_a, uint16_t *port_b)
{
	struct rte_ring *ab[ENV_PAIR_QUEUES] = { NULL }, *ba[ENV_PAIR_QUEUES] = { NULL };
	char name[RTE_RING_NAMESIZE];
	unsigned int k;
	int pa, pb;

	for (k = 0; k < ENV_PAIR_QUEUES; k++) {
		snprintf(name, sizeof(name), "drc_%.12s_a%u", pair, k);
		ab[k] = rte_ring_create(name, PAIR_RING_SIZE, SOCKET_ID_ANY,
					RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "drc_%.12s_b%u", pair, k);
		ba[k] = rte_ring_create(name, PAIR_RING_SIZE, SOCKET_ID_ANY,
					RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ab[k] == NULL || ba[k] == NULL)
			goto fail;
	}
	snprintf(name, sizeof(name), "droce_%.20s", name_a);
	pa = rte_eth_from_rings(name, ba, ENV_PAIR_QUEUES, ab, ENV_PAIR_QUEUES, SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "droce_%.20s", name_b);
	pb = rte_eth_from_rings(name, ab, ENV_PAIR_QUEUES, ba, ENV_PAIR_QUEUES, SOCKET_ID_ANY);
	if (pa < 0 || pb < 0)
		goto fail;
	*port_a = (uint16_t)pa;
	*port_b = (uint16_t)pb;
	return 0;
fail:
	for (k = 0; k < ENV_PAIR_QUEUES; k++) {
		rte_ring_free(ab[k]);
		rte_ring_free(ba[k]);
	}
	return -ENODEV;
}

int env_port_probe(const char *devargs, uint16_t *port)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t n = strcspn(devargs, ",");
	sigset_t sigs;
	int rc = 0;

	if (n >= sizeof(name))
		return -EINVAL;
	memcpy(name, devargs, n);
	name[n] = '\0';
	if (rte_eth_dev_get_port_by_name(name, port) == 0)
		return 0;
	env_signals_block(&sigs);	/* threads a PMD starts at probe are droce's */
	if (rte_dev_probe(devargs) != 0 || rte_eth_dev_get_port_by_name(name, port) != 0)
		rc = -ENODEV;
	env_signals_restore(&sigs);
	return rc;
}

int env_port_mac(uint16_t port, uint8_t mac[6])
{
	struct rte_ether_addr ea;
	int rc = rte_eth_macaddr_get(port, &ea);

	if (rc == 0)
		memcpy(mac, ea.addr_bytes, RTE_ETHER_ADDR_LEN);
	return rc;
}

/* Largest Ethernet frame for @p mtu: header, one VLAN tag, CRC. */
static uint32_t frame_len(uint16_t mtu)
{
	return (uint32_t)mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN;
}

uint16_t env_port_max_queues(uint16_t port)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port, &info) != 0)
		return 0;
	return RTE_MIN(info.max_rx_queues, info.max_tx_queues);
}

int env_port_configure(uint16_t port, const struct env_port_conf *conf,
		       struct env_port_info *out)
{
	struct rte_eth_conf ec;
	struct rte_eth_dev_info info;
	uint16_t rxd = conf->rxd, txd = conf->txd, q, nq;
	uint32_t room = rte_pktmbuf_data_room_size(conf->pools[0]) - RTE_PKTMBUF_HEADROOM;
	uint32_t pmd_mtu;
	int rc;

	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	memset(&ec, 0, sizeof(ec));
	/* Some PMDs report a smaller limit than they carry: DPDK 22.11's af_packet says 1518
	 * bytes yet moves whole framesz slots (9 KiB frames with framesz=16384). Ask the ethdev
	 * layer for no more than the PMD admits; the device keeps its configured MTU. */
	pmd_mtu = RTE_MIN((uint32_t)info.max_mtu,
			  info.max_rx_pktlen - (uint32_t)(RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN));
	ec.rxmode.mtu = RTE_MIN((uint32_t)conf->mtu, pmd_mtu);
	out->mtu = (uint16_t)ec.rxmode.mtu;
	out->driver = info.driver_name;
	nq = RTE_MIN(info.max_rx_queues, info.max_tx_queues);
	nq = RTE_MIN(conf->queues, nq);
	nq = RTE_MAX(nq, (uint16_t)1);
	out->queues = nq;
	if (frame_len(conf->mtu) > room) {
		/* Frames larger than one mbuf: only with a port that can scatter them. */
		if (!(info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER))
			return -EINVAL;
		ec.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		ec.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	out->tx_ipv4_cksum = conf->ipv4_cksum &&
			     (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) != 0;
	if (out->tx_ipv4_cksum)
		ec.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	if (nq > 1 && (info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP))) {
		ec.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		ec.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads &
						 (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
	}
	rc = rte_eth_dev_configure(port, nq, nq, &ec);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
	for (q = 0; q < nq && rc == 0; q++) {
		rc = rte_eth_rx_queue_setup(port, q, rxd, rte_eth_dev_socket_id(port), NULL,
					    conf->pools[q]);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port, q, txd, rte_eth_dev_socket_id(port),
						    NULL);
	}
	return rc;
}

/* Append the names of the offload bits in @p bits to @p buf at @p *at. */
static void put_offloads(char *buf, size_t len, size_t *at, uint64_t bits, bool rx)
{
	unsigned int b;
	bool first = true;

	if (bits == 0 && *at < len)
		*at += (size_t)snprintf(buf + *at, len - *at, "none");
	for (b = 0; b < 64; b++) {
		if (!(bits & (UINT64_C(1) << b)) || *at >= len)
			continue;
		*at += (size_t)snprintf(buf + *at, len - *at, "%s%s", first ? "" : ",",
					rx ? rte_eth_dev_rx_offload_name(UINT64_C(1) << b)
					   : rte_eth_dev_tx_offload_name(UINT64_C(1) << b));
		first = false;
	}
}

void env_port_describe(uint16_t port, char *buf, size_t len)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t at = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (rte_eth_dev_info_get(port, &info) != 0) {
		snprintf(buf, len, "no device information");
		return;
	}
	if (rte_eth_dev_get_name_by_port(port, name) != 0)
		snprintf(name, sizeof(name), "?");
	if (rte_eth_dev_conf_get(port, &conf) != 0)
		memset(&conf, 0, sizeof(conf));
	at += (size_t)snprintf(buf, len, "driver %s, device %s, queues at most %u RX %u TX; "
			       "RX offloads ", info.driver_name, name,
			       info.max_rx_queues, info.max_tx_queues);
	put_offloads(buf, len, &at, info.rx_offload_capa, true);
	if (at < len)
		at += (size_t)snprintf(buf + at, len - at, "; TX offloads ");
	put_offloads(buf, len, &at, info.tx_offload_capa, false);
	if (at < len)
		at += (size_t)snprintf(buf + at, len - at, "; RSS hash types 0x%" PRIx64
				       "; in use: RX ", info.flow_type_rss_offloads);
	put_offloads(buf, len, &at, conf.rxmode.offloads, true);
	if (at < len)
		at += (size_t)snprintf(buf + at, len - at, ", TX ");
	put_offloads(buf, len, &at, conf.txmode.offloads, false);
	if (at < len)
		snprintf(buf + at, len - at, ", RSS %s",
			 conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS ? "on" : "off");
}

int env_port_start(uint16_t port, const uint8_t mac[6])
{
	struct rte_ether_addr ea;
	sigset_t sigs;
	int rc;

	env_signals_block(&sigs);	/* a PMD's threads (vhost's) are droce's */
	rc = rte_eth_dev_start(port);
	env_signals_restore(&sigs);
	/* Some PMDs fail with a bare -1, not an errno: net_memif as a client with no server
	 * listening. Read as -EPERM it would blame privileges; it is a failed start. */
	if (rc == -1)
		return -EIO;
	if (rc != 0)
		return rc;
	/* The device's MAC may differ from the port's: receive it anyway, and the solicited-node
	 * multicast groups of neighbour discovery. Ports without these simply keep their mode. */
	memcpy(ea.addr_bytes, mac, RTE_ETHER_ADDR_LEN);
	if (rte_eth_dev_default_mac_addr_set(port, &ea) != 0)
		rte_eth_promiscuous_enable(port);
	rte_eth_allmulticast_enable(port);
	return 0;
}

/* A stop made in EAL's interrupt thread (struct stop_call: on the caller's stack until done). */
struct stop_call {
	uint16_t port;
	int rc;
	int done;
};

static void stop_in_intr_thread(void *arg)
{
	struct stop_call *c = arg;

	c->rc = rte_eth_dev_stop(c->port);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
}

/* Does @p port's PMD tear its connection down in EAL's interrupt thread (net_memif)? */
static bool stops_in_intr_thread(uint16_t port)
{
	struct rte_eth_dev_info info;

	return rte_eth_dev_info_get(port, &info) == 0 && info.driver_name != NULL &&
	       strcmp(info.driver_name, "net_memif") == 0;
}

/* net_memif serves its control socket in EAL's interrupt thread: a peer that goes away has
 * memif_disconnect() run there, which marks the link down first and then unmaps and frees the
 * shared regions. A stop from another thread at that moment (the engine restarts a port whose
 * link went down) runs memif_disconnect() beside it and frees the regions twice ("EAL: Error:
 * Invalid memory", DPDK 22.11). Made from an alarm callback, which the interrupt thread runs
 * between its handlers, the stop cannot overlap them. Other PMDs stop where they are called
 * (DPDK's alarm list, locked with its own spinlock, is not one ThreadSanitizer can follow). */
int env_port_stop(uint16_t port)
{
	struct stop_call c = { .port = port };

	if (!stops_in_intr_thread(port) || rte_thread_is_intr() ||
	    rte_eal_alarm_set(1, stop_in_intr_thread, &c) != 0)
		return rte_eth_dev_stop(port);
	while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE))
		rte_delay_us_sleep(20);
	return c.rc;
}

unsigned int env_port_discard_rx(uint16_t port, uint16_t queue)
{
	struct rte_mbuf *pkts[DISCARD_BURST];
	unsigned int total = 0;
	uint16_t n;

	while ((n = rte_eth_rx_burst(port, queue, pkts, DISCARD_BURST)) != 0) {
		rte_pktmbuf_free_bulk(pkts, n);
		total += n;
	}
	return total;
}

bool env_port_link_up(uint16_t port)
{
	struct rte_eth_link l;

	return rte_eth_link_get_nowait(port, &l) == 0 && l.link_status == RTE_ETH_LINK_UP;
}

uint32_t env_port_link_mbps(uint16_t port)
{
	struct rte_eth_link l;

	if (rte_eth_link_get_nowait(port, &l) != 0 || l.link_speed == RTE_ETH_SPEED_NUM_NONE ||
	    l.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN)
		return 0;
	return l.link_speed;
}

int env_port_mcast_filter(uint16_t port, struct rte_ether_addr *macs, uint32_t n)
{
	if (rte_eth_allmulticast_get(port) == 1)
		return 0;
	return rte_eth_dev_set_mc_addr_list(port, macs, n);
}
