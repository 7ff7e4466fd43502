/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Ports: the engine has a device's DPDK port configured and started (env_port_configure(),
 * env_port_start()) when the device is first opened, with the engine's mbuf pool, and stopped
 * when it is last closed; the port itself was created or probed when verbs made the device
 * (env_port_pair(), env_port_probe()). Each shard of the device (engine_shard.c) polls its own
 * RX and TX queue, queue k for shard k: one of each with one engine lcore per device.
 * Transmission is buffered per shard and flushed once per iteration; frames the port does not
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
 * With start_wait_ms too (a port whose peer may come and go), a port down is started again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>

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

/* Configure @p p's port with a queue pair per shard, queue k's mbufs from the pool of the
 * instance serving shard k. */
static int configure(struct engine_shard *p, bool *extbuf)
{
	const struct droce_device_cfg *cfg = verbs_device_cfg(p->dev);
	struct rte_mempool *pools[ENGINE_MAX_LCORES];
	const struct env_port_conf conf = {
		.mtu = cfg->mtu, .rxd = engine_cfg.rxd, .txd = engine_cfg.txd,
		.queues = p->n_shards, .pools = pools,
		.ipv4_cksum = engine_cfg.tx_checksum_offload != 0,
	};
	struct env_port_info info = { .mtu = cfg->mtu, .driver = "" };
	unsigned int k;
	int rc;

	for (k = 0; k < p->n_shards; k++)
		pools[k] = p->shard[k]->lc->pool;
	rc = env_port_configure(p->port, &conf, &info);
	if (rc == 0 && info.queues < p->n_shards) {
		/* Fewer than engine_shards_plan() was told: the port changed meanwhile. */
		ENGINE_LOG(ERR, "%s: port %u has %u queue pairs, not %u", cfg->name, p->port,
			   info.queues, p->n_shards);
		return -EINVAL;
	}
	if (info.mtu < cfg->mtu)
		ENGINE_LOG(INFO, "%s: port %u admits MTU %u; device MTU stays %u", cfg->name,
			   p->port, info.mtu, cfg->mtu);
	*extbuf = port_takes_extbuf(info.driver);
	p->tx_ip_cksum = rc == 0 && info.tx_ipv4_cksum;
	if (rc == 0 && rte_log_can_log((uint32_t)engine_logtype, RTE_LOG_INFO)) {
		char line[1024];

		env_port_describe(p->port, line, sizeof(line));
		ENGINE_LOG(INFO, "%s: port %u: %s", cfg->name, p->port, line);
	}
	return rc;
}

unsigned int engine_rx_link_down(struct engine_shard *edev)
{
	unsigned int n = (edev->primary->port_stopped ? 0 :
			  env_port_discard_rx(edev->port, edev->queue)) +
			 engine_handoff_discard(edev);

	edev->cnt.rx_link_down += n;
	return n;
}

/* Frames buffered for a port whose link is down go nowhere. */
static void drop_tx(struct engine_shard *edev)
{
	edev->cnt.tx_link_down += edev->n_tx;
	rte_pktmbuf_free_bulk(edev->tx, edev->n_tx);
	edev->n_tx = 0;
	edev->tx_stalled = false;
}

/* Shard @p s's side of a port start: its buffers, faults, bottleneck and link. */
static void shard_start(struct engine_shard *s, bool extbuf)
{
	s->port = s->primary->port;
	s->mac = s->primary->mac;
	s->n_tx = 0;
	s->tx_stalled = false;
	s->tx_extbuf = extbuf;
	s->tx_ip_cksum = s->primary->tx_ip_cksum;
	s->kick_fd = env_port_kick_fd(s->port, s->queue);
	if (s->kick_fd >= 0)
		ENGINE_LOG(INFO, "port %u queue %u: af_packet socket %d, kicked when TX goes quiet",
			   s->port, s->queue, s->kick_fd);
	s->kick_at = 0;
	/* What the port holds came while it was stopped: frames a ring partner left belong to an
	 * earlier life of the device (and zero-copy ones point into memory whose MR may be
	 * waiting for them, droce_dereg_mr()). Freed unread. */
	env_port_discard_rx(s->port, s->queue);
	engine_handoff_discard(s);
	engine_fault_start(s);
	engine_bneck_start(s);
	s->tx_slow = s->fault.on || s->bneck.on;
	s->link_up = engine_cfg.link_poll_ms == 0 || env_port_link_up(s->port);
}

/* Shard @p s (not 0) of a port shard 0 started late: its side, once shard 0's is done. */
static void shard_start_late(struct engine_shard *s)
{
	struct engine_shard *p = s->primary;

	if (!__atomic_load_n(&p->started, __ATOMIC_ACQUIRE))
		return;
	shard_start(s, p->tx_extbuf);
	s->started = true;	/* this lcore's own flag from here on */
}

#define START_RETRY_MS 50

/*
 * A port whose link is down, on an engine whose device opens wait for their port's peer
 * ([engine] start_wait_ms): started again every START_RETRY_MS. net_memif as a client
 * connects only when its port starts, so without this a client whose server went away (a
 * qperf server closes its device after each test and opens it for the next) would never
 * see its server again. One queue pair only: the port stops under this shard alone. The
 * first restart comes START_RETRY_MS after the link went down, when the PMD's own teardown
 * of the connection (in the EAL interrupt thread) is long over.
 */
static void port_restart(struct engine_inst *lc, struct engine_shard *edev)
{
	const struct droce_device_cfg *cfg;

	if (engine_cfg.start_wait_ms == 0 || edev->queue != 0 || edev->n_shards != 1 ||
	    lc->env.now < edev->restart_next)
		return;
	edev->restart_next = lc->env.now + lc->env.hz / 1000 * START_RETRY_MS;
	cfg = verbs_device_cfg(edev->dev);
	if (!edev->port_stopped)
		env_port_stop(edev->port);
	edev->port_stopped = env_port_start(edev->port, cfg->mac) != 0;
	if (!edev->port_stopped)
		ENGINE_LOG(INFO, "%s: port %u: started again, its link down", cfg->name,
			   edev->port);
}

unsigned int engine_link_poll(struct engine_inst *lc)
{
	unsigned int i, changed = 0;

	lc->link_next = lc->env.now + lc->env.hz / 1000 * engine_cfg.link_poll_ms;
	for (i = 0; i < lc->n_dev; i++) {
		struct engine_shard *edev = lc->devs[i];
		bool up;

		if (!edev->started) {
			/* A ring-pair device opened before its partner existed: its port came
			 * with the partner (env_port_pair()). Started here, once, by shard 0;
			 * each other shard then starts its side on its own lcore. */
			if (edev->queue != 0)
				shard_start_late(edev);
			else if (!edev->start_failed && verbs_device_port(edev->dev) >= 0)
				edev->start_failed = engine_port_start(edev, false) != 0;
			continue;
		}
		up = env_port_link_up(edev->port);
		if (!up && !edev->link_up)
			port_restart(lc, edev);
		if (up == edev->link_up)
			continue;
		edev->link_up = up;
		if (!up) {
			drop_tx(edev);
			/* The PMD's interrupt thread may still be tearing the connection
			 * down (memif_disconnect()): no restart under it. */
			edev->restart_next = lc->env.now + lc->env.hz / 1000 * START_RETRY_MS;
		}
		if (edev->queue != 0)
			continue;	/* every shard follows the link, the primary reports it */
		ENGINE_LOG(INFO, "%s: port %u: link %s", verbs_device_cfg(edev->dev)->name,
			   edev->port, up ? "up" : "down");
		verbs_device_link(edev->dev, up);
		changed++;
	}
	return changed;
}

#define START_LINK_MS 250
#define LINK_CHECK_MS 5

/* The port of @p cfg started: wait up to @p ms for its link. Stopped again if it stays down. */
static int port_link_wait(uint16_t port, const struct droce_device_cfg *cfg, unsigned int ms)
{
	unsigned int waited;

	for (waited = 0; waited < ms; waited += LINK_CHECK_MS) {
		if (env_port_link_up(port))
			return 0;
		rte_delay_us_sleep(LINK_CHECK_MS * 1000);
	}
	ENGINE_LOG(INFO, "%s: port %u: no link after %u ms: restarted", cfg->name, port, ms);
	env_port_stop(port);
	return -EIO;
}

/* The port of @p cfg started as its device opened: wait up to [engine] link_wait_ms for its
 * link, the port left started either way (a NIC negotiating its link; a restart would begin
 * the negotiation again). */
static void port_link_settle(uint16_t port, const struct droce_device_cfg *cfg)
{
	uint64_t t0 = rte_get_timer_cycles();
	unsigned int waited;

	for (waited = 0; waited < engine_cfg.link_wait_ms; waited += LINK_CHECK_MS) {
		if (env_port_link_up(port)) {
			ENGINE_LOG(INFO, "%s: port %u: link up after %" PRIu64 " ms", cfg->name,
				   port, (rte_get_timer_cycles() - t0) * 1000 / rte_get_timer_hz());
			return;
		}
		rte_delay_us_sleep(LINK_CHECK_MS * 1000);
	}
	ENGINE_LOG(NOTICE, "%s: port %u: no link within link_wait_ms = %u: the port is DOWN",
		   cfg->name, port, engine_cfg.link_wait_ms);
}

/* Start @p port for device @p cfg. When the device opens (@p wait) and [engine]
 * start_wait_ms is set, the start waits that long for the port's peer, so either process of
 * a pair may start first: a start that fails for want of it (-EIO: net_memif as a client with
 * no server listening; env_port_start()), or whose link does not come up within
 * START_LINK_MS (a memif server that has not started its own port refuses the connection,
 * and its client does not connect again by itself), is tried again every START_RETRY_MS. */
static int port_start(uint16_t port, const struct droce_device_cfg *cfg, bool wait)
{
	unsigned int budget = wait ? engine_cfg.start_wait_ms : 0;
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000 * budget;
	bool said = false;
	int rc;

	for (;;) {
		rc = env_port_start(port, cfg->mac);
		if (rc == 0 && budget != 0)
			rc = port_link_wait(port, cfg, RTE_MAX((unsigned int)START_LINK_MS,
							      engine_cfg.link_wait_ms));
		else if (rc == 0 && wait && engine_cfg.link_wait_ms != 0)
			port_link_settle(port, cfg);
		if (rc != -EIO || rte_get_timer_cycles() >= end)
			return rc;
		if (!said)
			ENGINE_LOG(INFO, "%s: port %u: waiting up to %u ms for its peer", cfg->name,
				   port, budget);
		said = true;
		rte_delay_us_sleep(START_RETRY_MS * 1000);
	}
}

int engine_port_start(struct engine_shard *p, bool shards)
{
	const struct droce_device_cfg *cfg = verbs_device_cfg(p->dev);
	int port = verbs_device_port(p->dev);
	unsigned int k;
	bool extbuf;
	int rc;

	if (port < 0)
		return -ENODEV;	/* a ring-pair device whose partner does not exist yet */
	p->port = (uint16_t)port;
	memcpy(p->mac.addr_bytes, cfg->mac, RTE_ETHER_ADDR_LEN);
	rc = configure(p, &extbuf);
	if (rc == 0)
		rc = port_start(p->port, cfg, shards);
	if (rc != 0) {
		ENGINE_LOG(ERR, "%s: port %u: cannot start: %s%s", cfg->name, p->port,
			   rte_strerror(-rc), rc == -ENOMEM ? ": its receive queues take rxd mbufs "
			   "each from the engine's pool: raise [engine] mbufs or lower rxd "
			   "(doc/configuration.md)" : "");
		if (rc == -ENOMEM)
			ENGINE_LOG(ERR, "%s: [engine] mbufs = %u, rxd = %u, %u queue(s)", cfg->name,
				   engine_cfg.mbufs, engine_cfg.rxd, p->n_shards);
		return rc < 0 ? rc : -EIO;
	}
	engine_steer_start(p);
	for (k = 0; k < (shards ? p->n_shards : 1u); k++)
		shard_start(p->shard[k], extbuf);
	engine_cc_setup(p);	/* the line rate: the port's link speed */
	verbs_device_link(p->dev, p->link_up);
	/* Read by the other shards' lcores (a late start: shard_start_late()). */
	for (k = p->n_shards; k-- > 0;)
		if (shards || k == 0)
			__atomic_store_n(&p->shard[k]->started, true, __ATOMIC_RELEASE);
	ENGINE_LOG(INFO, "%s: port %u started, MTU %u, %u queue pair(s)", cfg->name, p->port,
		   cfg->mtu, p->n_shards);
	return 0;
}

/* Shard @p s's side of a port stop (its lcore no longer serves it). */
static void shard_stop(struct engine_shard *s)
{
	unsigned int i;

	engine_fault_stop(s);
	engine_bneck_stop(s);
	/* Frames still buffered (ACKs sent on a QP's way out) get a few chances to leave. */
	for (i = 0; i < 8 && s->n_tx != 0; i++)
		engine_shard_flush(s);
	if (s->kick_fd >= 0)
		engine_shard_kick(s);	/* nothing more will follow them */
	s->cnt.tx_dropped += s->n_tx;
	rte_pktmbuf_free_bulk(s->tx, s->n_tx);
	s->n_tx = 0;
	if (!s->primary->port_stopped)
		env_port_discard_rx(s->port, s->queue);
	engine_handoff_discard(s);
	engine_loop_stop(s);
}

void engine_port_stop(struct engine_shard *p)
{
	unsigned int k;

	if (!p->started)
		return;
	for (k = 0; k < p->n_shards; k++)
		shard_stop(p->shard[k]);
	engine_mcast_stop(p);
	engine_steer_stop(p);
	if (!p->port_stopped && env_port_stop(p->port) != 0)
		ENGINE_LOG(WARNING, "port %u: stop failed", p->port);
	p->port_stopped = false;
	for (k = 0; k < p->n_shards; k++)
		__atomic_store_n(&p->shard[k]->started, false, __ATOMIC_RELEASE);
}

/* When a kick is due: ENGINE_KICK_US from now (TSC, as engine_env's now). */
static uint64_t kick_time(void)
{
	return rte_rdtsc() + rte_get_tsc_hz() / 1000000 * ENGINE_KICK_US;
}

/*
 * A port that sums IPv4 headers (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) gets the frames' headers with
 * the checksum field 0, as DPDK asks for RTE_MBUF_F_TX_IP_CKSUM, and their lengths. Here, not
 * where frames are built: the faults, the bottleneck's CE marks and the neighbour code all end
 * at the flush, which also runs again over frames a full port left (the same result). The
 * ICRC does not cover the field (it is masked), so it was computed over either value.
 */
static void tx_ip_cksum(struct rte_mbuf *const *tx, uint16_t n)
{
	uint16_t i, type;
	uint32_t l2, l3;
	uint8_t *f;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = tx[i];

		f = rte_pktmbuf_mtod(m, uint8_t *);
		l2 = RTE_ETHER_HDR_LEN;
		if (unlikely(m->data_len < l2 + RTE_VLAN_HLEN + sizeof(struct rte_ipv4_hdr)))
			continue;
		memcpy(&type, f + l2 - 2, 2);
		if (type == RTE_BE16(RTE_ETHER_TYPE_VLAN)) {
			l2 += RTE_VLAN_HLEN;
			memcpy(&type, f + l2 - 2, 2);
		}
		l3 = (uint32_t)(f[l2] & 0xf) * 4;
		if (type != RTE_BE16(RTE_ETHER_TYPE_IPV4) || m->data_len < l2 + l3)
			continue;
		memset(f + l2 + offsetof(struct rte_ipv4_hdr, hdr_checksum), 0, 2);
		m->l2_len = l2;
		m->l3_len = l3;
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	}
}

unsigned int engine_shard_flush(struct engine_shard *edev)
{
	uint16_t i, sent;
	uint64_t bytes = 0;

	if (edev->n_tx == 0)
		return 0;
	if (unlikely(!edev->link_up)) {
		drop_tx(edev);
		return 0;
	}
	if (unlikely(edev->tx_ip_cksum))
		tx_ip_cksum(edev->tx, edev->n_tx);
	sent = rte_eth_tx_burst(edev->port, edev->queue, edev->tx, edev->n_tx);
	/* Only what the port took: a full port must not make every retry cost O(n_tx). */
	for (i = 0; i < sent; i++)
		bytes += rte_pktmbuf_pkt_len(edev->tx[i]);
	edev->cnt.tx_packets += sent;
	edev->cnt.tx_bytes += bytes;
	edev->tx_stalled = sent < edev->n_tx;
	if (unlikely(edev->kick_fd >= 0) && sent != 0)
		edev->kick_at = kick_time();
	if (sent != 0 && sent < edev->n_tx)
		memmove(edev->tx, edev->tx + sent, (edev->n_tx - sent) * sizeof(edev->tx[0]));
	edev->n_tx -= sent;
	return sent;
}

void engine_shard_kick(struct engine_shard *edev)
{
	long n = env_port_kick(edev->kick_fd);

	edev->kick_at = 0;
	if (n > 0)
		edev->cnt.tx_ring_kicked++;
	/* Frames waited (the buffer may have filled again half-way through them), or the buffer
	 * is still full: again later, until a kick finds the ring empty. */
	if (n > 0 || n == -EAGAIN || n == -ENOBUFS)
		edev->kick_at = kick_time();
}

void engine_shard_tx(struct engine_shard *edev, struct rte_mbuf *m)
{
	if (edev->n_tx == ENGINE_TXBUF)
		engine_shard_flush(edev);
	if (edev->n_tx == ENGINE_TXBUF) {
		edev->cnt.tx_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	edev->tx[edev->n_tx++] = m;
	/* Early flushes keep bursts short; once the port is full, wait for the iteration's
	 * flush (or a full buffer) instead of retrying a burst per frame. */
	if (edev->n_tx >= ENGINE_BURST * 4 && !edev->tx_stalled)
		engine_shard_flush(edev);
}

/*
 * A frame to the device's own MAC (a QP talking to a QP of its own device, RDMA CM on a
 * loopback address: the neighbour table answers the device's own GIDs with its MAC): a port
 * does not hear what it sends, so it goes to the device's receive path, queued for the next
 * RX step (engine_rx()), as Linux's rxe loops such packets back. A copy: the frame may point
 * into registered memory (zero-copy segments), which the application may reuse once the
 * frame is sent.
 */
static void loop_tx(struct engine_shard *edev, struct rte_mbuf *m)
{
	struct rte_mbuf *copy = edev->n_uloop < ENGINE_LOOP && edev->lc != NULL ?
				rte_pktmbuf_copy(m, edev->lc->pool, 0, UINT32_MAX) : NULL;

	rte_pktmbuf_free(m);
	if (copy == NULL) {
		edev->cnt.loopback_dropped++;	/* lost as on a wire: the sender retransmits */
		return;
	}
	edev->uloop[edev->n_uloop++] = copy;
}

void engine_loop_stop(struct engine_shard *edev)
{
	rte_pktmbuf_free_bulk(edev->uloop, edev->n_uloop);
	edev->n_uloop = 0;
}

void engine_env_tx(struct transport_env *env, struct droce_device *dev, struct rte_mbuf *m)
{
	struct engine_shard *edev = engine_shard_here(env, dev);

	if (unlikely(!edev->link_up)) {
		edev->cnt.tx_link_down++;	/* not even to the device's own group members */
		rte_pktmbuf_free(m);
		return;
	}
	if (unlikely(rte_is_same_ether_addr(&rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->dst_addr,
					    &edev->mac))) {
		loop_tx(edev, m);
		return;
	}
	if (unlikely(edev->n_mcg != 0))
		engine_mcast_tx(edev, m);	/* a copy for the device's own group members */
	if (likely(!edev->tx_slow))
		engine_shard_tx(edev, m);
	else if (edev->bneck.on)
		engine_bneck_tx(edev, m, env->now);	/* test bottleneck (not with faults) */
	else
		engine_fault_tx(edev, m, env->now);
}

bool engine_env_extbuf_ok(struct transport_env *env, struct droce_device *dev)
{
	const struct engine_shard *edev = engine_shard_here(env, dev);

	return edev->tx_extbuf && !edev->fault.on && !edev->bneck.on;
}

