/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Ports: the engine has a device's DPDK port configured and started (env_port_configure(),
 * env_port_start()) when the device is first opened, with the engine's mbuf pool, and stopped
 * when it is last closed; the port itself was created or probed when verbs made the device
 * (env_port_pair(), env_port_probe()). The engine polls the port's one RX and one TX queue.
 * Transmission is buffered per device and flushed once per iteration; frames the port does not
 * take stay buffered for the next iteration, and only a full buffer drops (tx_dropped).
 *
 * Link: the engine samples the port's link when it starts the port and polls it every
 * [engine] link_poll_ms while it serves it (env_port_link_up(), from the iteration: no
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

/* Zero-copy TX only where a frame is read by this process and freed after (net_ring): a
 * PMD that hands the buffer to a device or another process (virtio_user, NICs) could not
 * reach application memory. Not with fault injection either: a delayed or reordered frame
 * could be read after its WR completed and the application reused the memory (it would fail
 * its ICRC instead of counting as the duplicate it is). Nor behind the test bottleneck. */
static bool port_takes_extbuf(const char *driver)
{
	return engine_cfg.tx_zero_copy && strcmp(driver, "net_ring") == 0;
}

static int configure(struct engine_dev *edev, struct rte_mempool *pool, bool *extbuf)
{
	const struct droce_device_cfg *cfg = verbs_device_cfg(edev->dev);
	const struct env_port_conf conf = {
		.mtu = cfg->mtu, .rxd = engine_cfg.rxd, .txd = engine_cfg.txd, .pool = pool,
	};
	struct env_port_info info = { .mtu = cfg->mtu, .driver = "" };
	int rc = env_port_configure(edev->port, &conf, &info);

	if (info.mtu < cfg->mtu)
		ENGINE_LOG(INFO, "%s: port %u admits MTU %u; device MTU stays %u", cfg->name,
			   edev->port, info.mtu, cfg->mtu);
	*extbuf = port_takes_extbuf(info.driver);
	return rc;
}

unsigned int engine_rx_link_down(struct engine_dev *edev)
{
	unsigned int n = env_port_discard_rx(edev->port);

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

unsigned int engine_link_poll(struct engine_lcore *lc)
{
	unsigned int i, changed = 0;

	lc->link_next = lc->env.now + lc->env.hz / 1000 * engine_cfg.link_poll_ms;
	for (i = 0; i < lc->n_dev; i++) {
		struct engine_dev *edev = lc->devs[i];
		bool up;

		if (!edev->started) {
			/* A ring-pair device opened before its partner existed: its port came
			 * with the partner (env_port_pair()). Started here, once. */
			if (!edev->start_failed && verbs_device_port(edev->dev) >= 0)
				edev->start_failed = engine_port_start(edev, lc->pool) != 0;
			continue;
		}
		up = env_port_link_up(edev->port);
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

int engine_port_start(struct engine_dev *edev, struct rte_mempool *pool)
{
	const struct droce_device_cfg *cfg = verbs_device_cfg(edev->dev);
	int port = verbs_device_port(edev->dev);
	bool extbuf;
	int rc;

	if (port < 0)
		return -ENODEV;	/* a ring-pair device whose partner does not exist yet */
	edev->port = (uint16_t)port;
	memcpy(edev->mac.addr_bytes, cfg->mac, RTE_ETHER_ADDR_LEN);
	rc = configure(edev, pool, &extbuf);
	if (rc == 0)
		rc = env_port_start(edev->port, cfg->mac);
	if (rc != 0) {
		ENGINE_LOG(ERR, "%s: port %u: cannot start: %s", cfg->name, edev->port,
			   rte_strerror(-rc));
		return rc < 0 ? rc : -EIO;
	}
	edev->n_tx = 0;
	edev->tx_stalled = false;
	edev->tx_extbuf = extbuf;
	/* What the port holds came while it was stopped: frames a ring partner left belong to an
	 * earlier life of the device (and zero-copy ones point into memory whose MR may be
	 * waiting for them, droce_dereg_mr()). Freed unread. */
	env_port_discard_rx(edev->port);
	engine_fault_start(edev);
	engine_bneck_start(edev);
	edev->tx_slow = edev->fault.on || edev->bneck.on;
	engine_cc_setup(edev);	/* the line rate: the port's link speed */
	edev->link_up = engine_cfg.link_poll_ms == 0 || env_port_link_up(edev->port);
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
	env_port_discard_rx(edev->port);
	if (env_port_stop(edev->port) != 0)
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

