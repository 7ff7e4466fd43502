/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * The platform under droce (internal; not installed): EAL, and every DPDK port's life from
 * its creation or probe to its stop. The layers above keep their objects: verbs the devices
 * and the ports' numbers, the engine which lcore polls a port, its mbuf pool and its queues'
 * bursts. Nothing here logs; callers say what failed, in their own words.
 */
#ifndef ENV_H
#define ENV_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* env_signal.c */

/**
 * Block every asynchronous signal in the calling thread; its mask before goes to @p old.
 * Every thread droce starts, itself or through DPDK (EAL's interrupt, telemetry and lcore
 * threads, a PMD's control thread), is created between this and env_signals_restore() and
 * inherits the mask (lib/verbs/verbs_thread.h says why). Faults (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGTRAP, SIGSYS) stay deliverable.
 */
void env_signals_block(sigset_t *old);

/** Give the calling thread back the mask env_signals_block() saved in @p old. */
void env_signals_restore(const sigset_t *old);

/* env_eal.c */

/**
 * Make sure EAL is up. If it is (rte_lcore_count() is not 0), the application owns it and it
 * is only used; if not, rte_eal_init() runs with @p args (blank-separated, at most 62) behind
 * the program name "droce", with the asynchronous signals blocked, and droce owns EAL and
 * sends DPDK's log to stderr. rte_eal_init() failing with EALREADY (another thread started
 * EAL meanwhile) also leaves EAL to the application.
 * Not thread-safe: callers serialise it.
 * @return 0, or -EIO with rte_errno saying why rte_eal_init() failed.
 */
int env_eal_start(const char *args);

/**
 * What to do about env_eal_start(@p args) failing with rte_errno @p err, into @p buf: the
 * hugepages it needs (how many, the command reserving them, or --no-huge), root or
 * capabilities, or the argument EAL refused.
 */
void env_eal_explain(const char *args, int err, char *buf, size_t len);

/** Whether env_eal_start() started EAL. */
bool env_eal_owned(void);

/* env_port.c */

/** Queue pairs of a port env_port_pair() makes. */
#define ENV_PAIR_QUEUES 8

/**
 * Create the in-process link @p pair: two net_ring ports named "droce_<name_a>" and
 * "droce_<name_b>" (ethdev names "net_ring_droce_...") of ENV_PAIR_QUEUES queue pairs, each
 * receiving on its queue k what the other transmits on its queue k (a ring each way and queue).
 * Neither port is configured.
 * @return 0 with the ports in @p port_a and @p port_b, or -ENODEV (nothing left behind but
 * ports already created).
 */
int env_port_pair(const char *pair, const char *name_a, const char *name_b,
		  uint16_t *port_a, uint16_t *port_b);

/**
 * The port of @p devargs ("<name>[,<key>=<value>...]", a vdev or a device on a bus): the one
 * that exists under its name, else the one rte_dev_probe() makes (with the asynchronous
 * signals blocked: threads its PMD starts are droce's).
 * @return 0 with the port in @p port, -EINVAL if the name is too long, -ENODEV if probing
 * made no port of that name.
 */
int env_port_probe(const char *devargs, uint16_t *port);

/** @p port's own MAC into @p mac. @return 0, or rte_eth_macaddr_get()'s error. */
int env_port_mac(uint16_t port, uint8_t mac[6]);

/** What a port is configured with (env_port_configure()). */
struct env_port_conf {
	uint16_t mtu;			/**< the device's MTU: frames up to it are received */
	uint16_t rxd, txd;		/**< descriptors per queue, adjusted to the PMD's limits */
	uint16_t queues;		/**< queue pairs wanted (at least 1) */
	struct rte_mempool *const *pools;	/**< mbufs of receive queue k: pools[k] */
	bool ipv4_cksum;		/**< let the port sum IPv4 headers where it can */
};

/** What env_port_configure() found out about the port. */
struct env_port_info {
	uint16_t mtu;		/**< the ethdev MTU set: the device's, or less if the PMD admits less */
	const char *driver;	/**< the PMD's name ("net_ring", ...) */
	uint16_t queues;	/**< queue pairs set up: as wanted, or fewer if the PMD has fewer */
	bool tx_ipv4_cksum;	/**< RTE_ETH_TX_OFFLOAD_IPV4_CKSUM configured (conf.ipv4_cksum) */
};

/**
 * The queue pairs @p port can have (the smaller of its RX and TX maximums), 0 if it cannot
 * say.
 */
uint16_t env_port_max_queues(uint16_t port);

/**
 * Configure @p port with @p conf->queues receive queues (queue k's mbufs from
 * @p conf->pools[k]) and as many transmit queues, or as many as the port has. With more than
 * one, a port that hashes received frames over its queues (RSS) hashes IP addresses and UDP
 * ports.
 * The ethdev MTU is the device's or the PMD's limit (max_mtu, max_rx_pktlen), whichever is
 * smaller: some PMDs carry more than they report. Frames larger than one mbuf need a port
 * that scatters (receive offload enabled); chained mbufs are sent where the PMD takes them.
 * With @p conf->ipv4_cksum, a port that reports the IPv4 header checksum TX offload gets it
 * configured (@p info->tx_ipv4_cksum): its frames may leave with the checksum to fill.
 * @return 0 with @p info filled, -EINVAL if frames of the MTU need scatter the port lacks,
 * or the ethdev layer's error.
 */
int env_port_configure(uint16_t port, const struct env_port_conf *conf,
		       struct env_port_info *info);

/**
 * One line describing the configured @p port into @p buf (@p len bytes, truncated as
 * snprintf): its PMD and device name, its queue maximums, the RX and TX offloads it reports
 * (DPDK's names), those configured, and the RSS hash types it offers.
 */
void env_port_describe(uint16_t port, char *buf, size_t len);

/**
 * Start the configured @p port (with the asynchronous signals blocked: a PMD's threads,
 * vhost's, are droce's) to receive frames to @p mac, its solicited-node groups and every
 * multicast group: the port's MAC becomes @p mac, or the port goes promiscuous where it cannot
 * (ports that can neither keep their mode); all-multicast where the port has it.
 * @return 0, or rte_eth_dev_start()'s error.
 */
int env_port_start(uint16_t port, const uint8_t mac[6]);

/** Stop @p port (its configuration stays), in EAL's interrupt thread, where PMDs that serve
 *  a control socket (net_memif) tear a connection down: never beside that.
 *  @return 0, or rte_eth_dev_stop()'s error. */
int env_port_stop(uint16_t port);

/**
 * Free what @p port's receive queue @p queue holds without reading it.
 * Only from the thread that polls the queue. @return frames freed.
 */
unsigned int env_port_discard_rx(uint16_t port, uint16_t queue);

/** Whether @p port's link is up now (rte_eth_link_get_nowait(): no waiting). */
bool env_port_link_up(uint16_t port);

/** @p port's link speed in Mbit/s now, 0 when the port does not say. */
uint32_t env_port_link_mbps(uint16_t port);

/**
 * Let the started @p port receive frames to the @p n multicast MACs @p macs (its filter; the
 * list replaces the last one). A port in all-multicast mode receives every group already.
 * @return 0, or a negative errno from the driver.
 */
int env_port_mcast_filter(uint16_t port, struct rte_ether_addr *macs, uint32_t n);

/* env_kick.c */

/**
 * The AF_PACKET socket of queue pair @p queue of @p port, when it is a net_af_packet port:
 * the PMD's socket for that queue (bound to the port's interface; the sockets in the order of
 * their descriptors, one per queue pair). A frame the PMD counted sent can wait in its TX ring
 * until the next sendto() on it (env_kick.c): env_port_kick() is that sendto().
 * @return its descriptor, or -1 (another kind of port, or not one socket per queue pair on the
 * interface).
 */
int env_port_kick_fd(uint16_t port, uint16_t queue);

/**
 * Have the kernel send what waits in the TX ring of AF_PACKET socket @p fd.
 * @return the bytes it sent (0: nothing waited), or -errno (-EAGAIN, -ENOBUFS: the socket's
 * send buffer is still full, the frames still wait).
 */
long env_port_kick(int fd);

#ifdef __cplusplus
}
#endif

#endif /* ENV_H */
