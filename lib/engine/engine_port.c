/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Ports: the engine configures and starts a device's DPDK port when the device is first
 * opened (verbs only creates or probes it) and owns its one RX and one TX queue. Transmission
 * is buffered per device and flushed once per iteration; frames the port does not take stay
 * buffered for the next iteration, and only a full buffer drops (counted as tx_dropped).
 *
 * Link: the engine samples the port's link when it starts the port and polls it every
 * [engine] link_poll_ms while it serves it (rte_eth_link_get_nowait(), from the iteration: no
 * interrupt thread, the same in both modes); verbs turns a change into the port's state and
 * PORT_ERR / PORT_ACTIVE. While the link is down the port is treated as unplugged, as rxe's
 * netdev without carrier: frames are not sent (tx_link_down) and frames the port still
 * delivers are dropped (rx_link_down); QPs keep their state and recover, or fail, by their own
 * rules (RC retransmits on its timer; UD and UC messages sent meanwhile are lost).
 * With link_poll_ms 0 links are not followed: a port is up for as long as it is started.
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>

#include "engine_private.h"
#include "env.h"

/* Largest Ethernet frame for @p mtu: header, one VLAN tag, CRC. */
static uint32_t frame_len(uint16_t mtu)
{
	return (uint32_t)mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN;
}

static int configure(struct engine_dev *edev, struct rte_mempool *pool)
{
	const struct droce_device_cfg *cfg = verbs_device_cfg(edev->dev);
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t rxd = engine_cfg.rxd, txd = engine_cfg.txd;
	uint32_t room = rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM;
	uint32_t pmd_mtu;
	int rc;

	rc = rte_eth_dev_info_get(edev->port, &info);
	if (rc != 0)
		return rc;
	memset(&conf, 0, sizeof(conf));
	/* Some PMDs report a smaller limit than they carry: DPDK 22.11's af_packet says 1518
	 * bytes yet moves whole framesz slots (9 KiB frames with framesz=16384). Ask the ethdev
	 * layer for no more than the PMD admits; the device keeps its configured MTU. */
	pmd_mtu = RTE_MIN((uint32_t)info.max_mtu,
			  info.max_rx_pktlen - (uint32_t)(RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN));
	conf.rxmode.mtu = RTE_MIN((uint32_t)cfg->mtu, pmd_mtu);
	if (conf.rxmode.mtu < cfg->mtu)
		ENGINE_LOG(INFO, "%s: port %u admits MTU %u; device MTU stays %u", cfg->name,
			   edev->port, conf.rxmode.mtu, cfg->mtu);
	if (frame_len(cfg->mtu) > room) {
		/* Frames larger than one mbuf: only with a port that can scatter them. */
		if (!(info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER))
			return -EINVAL;
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	rc = rte_eth_dev_configure(edev->port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(edev->port, &rxd, &txd);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(edev->port, 0, rxd, rte_eth_dev_socket_id(edev->port),
					    NULL, pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(edev->port, 0, txd, rte_eth_dev_socket_id(edev->port),
					    NULL);
	return rc;
}

/*
 * Free what the port's receive queue holds without reading it: frames a ring partner left
 * while this port was stopped belong to an earlier life of the device (and zero-copy ones
 * point into memory whose MR may be waiting for them, droce_dereg_mr()).
 */
static unsigned int discard_rx(struct engine_dev *edev)
{
	struct rte_mbuf *pkts[ENGINE_BURST];
	unsigned int total = 0;
	uint16_t n;

	while ((n = rte_eth_rx_burst(edev->port, 0, pkts, ENGINE_BURST)) != 0) {
		rte_pktmbuf_free_bulk(pkts, n);
		total += n;
	}
	return total;
}

unsigned int engine_rx_link_down(struct engine_dev *edev)
{
	unsigned int n = discard_rx(edev);

	edev->cnt.rx_link_down += n;
	return n;
}

/* Frames buffered for a port whose link is down go nowhere. */
static void drop_tx(struct engine_dev *edev)
{
	edev->cnt.tx_link_down += edev->n_tx;
	rte_pktmbuf_free_bulk(edev->tx, edev->n_tx);
	edev->n_tx = 0;
	edev->tx_stalled = false;
}

static bool link_up(uint16_t port)
{
	struct rte_eth_link l;

	return rte_eth_link_get_nowait(port, &l) == 0 && l.link_status == RTE_ETH_LINK_UP;
}

unsigned int engine_link_poll(struct engine_lcore *lc)
{
	unsigned int i, changed = 0;

	lc->link_next = lc->env.now + lc->env.hz / 1000 * engine_cfg.link_poll_ms;
	for (i = 0; i < lc->n_dev; i++) {
		struct engine_dev *edev = lc->devs[i];
		bool up;

		if (!edev->started) {
			/* A ring-pair device opened before its partner existed: its port came
			 * with the partner (verbs' attach_port()). Started here, once. */
			if (!edev->start_failed && verbs_device_port(edev->dev) >= 0)
				edev->start_failed = engine_port_start(edev, lc->pool) != 0;
			continue;
		}
		up = link_up(edev->port);
		if (up == edev->link_up)
			continue;
		edev->link_up = up;
		if (!up)
			drop_tx(edev);
		ENGINE_LOG(INFO, "%s: port %u: link %s", verbs_device_cfg(edev->dev)->name,
			   edev->port, up ? "up" : "down");
		verbs_device_link(edev->dev, up);
		changed++;
	}
	return changed;
}

/* Zero-copy TX only where a frame is read by this process and freed after (net_ring): a
 * PMD that hands the buffer to a device or another process (virtio_user, NICs) could not
 * reach application memory. Not with fault injection either: a delayed or reordered frame
 * could be read after its WR completed and the application reused the memory (it would fail
 * its ICRC instead of counting as the duplicate it is). Nor behind the test bottleneck. */
static bool port_takes_extbuf(const struct rte_eth_dev_info *info)
{
	return engine_cfg.tx_zero_copy && strcmp(info->driver_name, "net_ring") == 0;
}

int engine_port_start(struct engine_dev *edev, struct rte_mempool *pool)
{
	struct rte_eth_dev_info info;
	const struct droce_device_cfg *cfg = verbs_device_cfg(edev->dev);
	int port = verbs_device_port(edev->dev);
	sigset_t sigs;
	int rc;

	if (port < 0)
		return -ENODEV;	/* a ring-pair device whose partner does not exist yet */
	edev->port = (uint16_t)port;
	memcpy(edev->mac.addr_bytes, cfg->mac, RTE_ETHER_ADDR_LEN);
	rc = configure(edev, pool);
	if (rc == 0)
		rc = rte_eth_dev_info_get(edev->port, &info);
	if (rc == 0) {
		env_signals_block(&sigs);	/* a PMD's threads (vhost's) are droce's */
		rc = rte_eth_dev_start(edev->port);
		env_signals_restore(&sigs);
	}
	if (rc != 0) {
		ENGINE_LOG(ERR, "%s: port %u: cannot start: %s", cfg->name, edev->port,
			   rte_strerror(-rc));
		return rc < 0 ? rc : -EIO;
	}
	/* The device's MAC may differ from the port's: receive it anyway, and the solicited-node
	 * multicast groups of neighbour discovery. Ports without these simply keep their mode. */
	if (rte_eth_dev_default_mac_addr_set(edev->port, &edev->mac) != 0)
		rte_eth_promiscuous_enable(edev->port);
	rte_eth_allmulticast_enable(edev->port);
	edev->n_tx = 0;
	edev->tx_stalled = false;
	edev->tx_extbuf = port_takes_extbuf(&info);
	discard_rx(edev);
	engine_fault_start(edev);
	engine_bneck_start(edev);
	edev->tx_slow = edev->fault.on || edev->bneck.on;
	engine_cc_setup(edev);	/* the line rate: the port's link speed */
	edev->link_up = engine_cfg.link_poll_ms == 0 || link_up(edev->port);
	verbs_device_link(edev->dev, edev->link_up);
	edev->started = true;
	ENGINE_LOG(INFO, "%s: port %u started, MTU %u", cfg->name, edev->port, cfg->mtu);
	return 0;
}

void engine_port_stop(struct engine_dev *edev)
{
	unsigned int i;

	if (!edev->started)
		return;
	engine_fault_stop(edev);
	engine_bneck_stop(edev);
	engine_mcast_stop(edev);
	/* Frames still buffered (ACKs sent on a QP's way out) get a few chances to leave. */
	for (i = 0; i < 8 && edev->n_tx != 0; i++)
		engine_dev_flush(edev);
	edev->cnt.tx_dropped += edev->n_tx;
	rte_pktmbuf_free_bulk(edev->tx, edev->n_tx);
	edev->n_tx = 0;
	discard_rx(edev);
	if (rte_eth_dev_stop(edev->port) != 0)
		ENGINE_LOG(WARNING, "port %u: stop failed", edev->port);
	edev->started = false;
}

unsigned int engine_dev_flush(struct engine_dev *edev)
{
	uint16_t i, sent;
	uint64_t bytes = 0;

	if (edev->n_tx == 0)
		return 0;
	if (unlikely(!edev->link_up)) {
		drop_tx(edev);
		return 0;
	}
	sent = rte_eth_tx_burst(edev->port, 0, edev->tx, edev->n_tx);
	/* Only what the port took: a full port must not make every retry cost O(n_tx). */
	for (i = 0; i < sent; i++)
		bytes += rte_pktmbuf_pkt_len(edev->tx[i]);
	edev->cnt.tx_packets += sent;
	edev->cnt.tx_bytes += bytes;
	edev->tx_stalled = sent < edev->n_tx;
	if (sent != 0 && sent < edev->n_tx)
		memmove(edev->tx, edev->tx + sent, (edev->n_tx - sent) * sizeof(edev->tx[0]));
	edev->n_tx -= sent;
	return sent;
}

void engine_dev_tx(struct engine_dev *edev, struct rte_mbuf *m)
{
	if (edev->n_tx == ENGINE_TXBUF)
		engine_dev_flush(edev);
	if (edev->n_tx == ENGINE_TXBUF) {
		edev->cnt.tx_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	edev->tx[edev->n_tx++] = m;
	/* Early flushes keep bursts short; once the port is full, wait for the iteration's
	 * flush (or a full buffer) instead of retrying a burst per frame. */
	if (edev->n_tx >= ENGINE_BURST * 4 && !edev->tx_stalled)
		engine_dev_flush(edev);
}

void engine_env_tx(struct transport_env *env, struct droce_device *dev, struct rte_mbuf *m)
{
	struct engine_dev *edev = verbs_device_engine(dev);

	if (unlikely(!edev->link_up)) {
		edev->cnt.tx_link_down++;	/* not even to the device's own group members */
		rte_pktmbuf_free(m);
		return;
	}
	if (unlikely(edev->n_mcg != 0))
		engine_mcast_tx(edev, m);	/* a copy for the device's own group members */
	if (likely(!edev->tx_slow))
		engine_dev_tx(edev, m);
	else if (edev->bneck.on)
		engine_bneck_tx(edev, m, env->now);	/* test bottleneck (not with faults) */
	else
		engine_fault_tx(edev, m, env->now);
}

bool engine_env_extbuf_ok(struct transport_env *env, struct droce_device *dev)
{
	const struct engine_dev *edev = verbs_device_engine(dev);

	RTE_SET_USED(env);
	return edev->tx_extbuf && !edev->fault.on && !edev->bneck.on;
}

