/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * Engine internals shared between the files of lib/engine (not installed).
 *
 * One struct engine_inst per engine instance: a dedicated EAL worker lcore, or the single
 * inline instance that application threads drive with droce_engine_poll(). Each open device
 * (struct engine_shard) is served by exactly one instance, which owns its port queues, its
 * neighbour table and every QP of the device. Everything an instance touches on the packet
 * path is its own: no lock, no atomic read-modify-write, no allocation.
 *
 * Control (device start/stop, QP add, counter reads) reaches an instance through
 * engine_inst_call(): queued and applied between two iterations on a dedicated lcore, or
 * applied at once under the instance's driver lock when the instance is inline or not running.
 */
#ifndef ENGINE_PRIVATE_H
#define ENGINE_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "droce_config.h"
#include "droce_counters.h"
#include "transport.h"
#include "verbs_engine.h"
#include "verbs_ring.h"

extern int engine_logtype;
#define ENGINE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, engine_logtype, "droce engine: " fmt "\n", ##__VA_ARGS__)

#define ENGINE_BURST 32			/**< RX burst, TX flush unit, transport_tx budget */
#define ENGINE_RX_BURSTS 8		/**< RX bursts per device and iteration, at most */
#define ENGINE_TXBUF 512		/**< frames buffered per device before the port takes them */
#define ENGINE_KICK_US 50		/**< TX quiet this long: an af_packet ring is kicked */
#define ENGINE_MAX_LCORES 8
#define ENGINE_MAX_QPS VERBS_DB_SLOTS	/**< DROCE_QP_SLOTS per device, every device */
#define ENGINE_MCAST_LOOP 64		/**< multicast frames queued for the device's own QPs */
#define ENGINE_LOOP 256			/**< frames to the device's own MAC, queued for its RX */

/** [engine] settings (engine_config_load()). */
struct engine_config {
	bool inline_mode;		/**< lcores empty (or auto without a free worker) */
	unsigned int n_lcores;
	unsigned int lcores[ENGINE_MAX_LCORES];
	unsigned int per_device;	/**< lcores_per_device: shards of a device (1: none) */
	unsigned int mbufs;		/**< per instance pool */
	unsigned int mbuf_size;		/**< data room; 0: from the largest device MTU */
	unsigned int rxd, txd;		/**< descriptors per queue */
	unsigned int idle_sleep_us;	/**< dedicated lcore: sleep when idle (0: busy poll) */
	unsigned int idle_sleep_max_us;	/**< idle sleeps double up to it (0: idle_sleep_us) */
	unsigned int tx_zero_copy;	/**< attach registered memory to TX mbufs where safe */
	unsigned int tx_checksum_offload;	/**< IPv4 header checksums by the port if it can */
	unsigned int recorder;		/**< frames each QP's flight recorder keeps (0: off) */
	char recorder_dir[256];		/**< where recordings are written */
	unsigned int neigh_retry_ms;	/**< ARP/NS retransmission interval */
	unsigned int neigh_retries;	/**< requests before giving up */
	unsigned int neigh_reachable_s;	/**< learned entries are refreshed after this */
	unsigned int link_poll_ms;	/**< link poll interval; 0: links not followed */
	unsigned int start_wait_ms;	/**< a port start whose peer is absent is retried this long */
	unsigned int link_wait_ms;	/**< a device open waits this long for its port's link */
	unsigned int pdump;		/**< 1: rte_pdump_init() (dpdk-dumpcap can attach) */
	unsigned int fault_drop;	/**< fault injection (engine_fault.c), per mille of frames */
	unsigned int fault_dup;
	unsigned int fault_reorder;
	unsigned int fault_delay;	/**< per mille of frames held back fault_delay_us */
	unsigned int fault_delay_us;
	unsigned int fault_corrupt;	/**< per mille of frames with one bit flipped */
	unsigned int fault_seed;
	unsigned int fault_ce;		/**< per mille of ECN-capable frames marked CE */
	unsigned int fault_ce_frames;	/**< marks per device, at most (0: no limit) */
	unsigned int bottleneck_mbps;	/**< test bottleneck (engine_bottleneck.c): drain rate, 0: off */
	unsigned int bottleneck_mark_kb;	/**< queue above which frames are marked CE */
	unsigned int bottleneck_mark_max_kb;	/**< ... always above this (RED's max) */
	unsigned int bottleneck_mark_pmax;	/**< marking probability at mark_max, per mille */
	unsigned int bottleneck_limit_kb;	/**< queue limit: tail drop */
	unsigned int log_counters;	/**< 1: log a device's counters when it closes */
};

struct engine_inst;
struct neigh_table;
struct rte_flow;

/** One QP as its engine instance sees it. */
struct engine_qp {
	struct droce_qp *qp;
	struct transport_qp *t;		/**< NULL while no transport is linked */
	struct engine_shard *edev;
	uint64_t deadline;		/**< as in the timer heap; UINT64_MAX: not in it */
	uint32_t heap_idx;
	uint32_t list_idx;		/**< in engine_inst.qps */
	uint32_t active_idx;		/**< in engine_shard.active; UINT32_MAX: not in it */
};

#define ENGINE_FAULT_DELAYED 64	/**< frames a device may hold back for fault_delay_us */

/** Fault injection on a device's transport TX path (engine_fault.c); all zero when off. */
struct engine_fault {
	bool on;			/**< any probability non-zero */
	uint16_t drop, dup, reorder, delay, corrupt, ce;	/**< per mille */
	uint32_t ce_left;		/**< CE marks left (fault_ce_frames; UINT32_MAX: no limit) */
	uint64_t rng;			/**< PRNG state (seeded from fault_seed and the port) */
	struct rte_mbuf *held;		/**< a frame held back to be sent after later ones */
	unsigned int held_iters;	/**< iterations it has been held */
	uint64_t delay_tsc;		/**< fault_delay_us in TSC cycles */
	/** Delayed frames, a FIFO (same delay for all, so due in order): [head, head + n). */
	uint16_t d_head, d_n;
	struct rte_mbuf *delayed[ENGINE_FAULT_DELAYED];
	uint64_t due[ENGINE_FAULT_DELAYED];	/**< TSC at which each leaves */
};

#define ENGINE_BNECK_FRAMES 8192	/**< frames the test bottleneck may queue */

/** The test bottleneck on a device's transport TX path (engine_bottleneck.c); off when on is false. */
struct engine_bneck {
	bool on;
	uint32_t head, n;		/**< queued frames: q[head .. head + n) */
	uint64_t bytes;			/**< queued bytes */
	uint64_t next;			/**< TSC at which the head frame leaves */
	uint64_t tick_q16;		/**< TSC ticks per byte at bottleneck_mbps, << 16 */
	uint64_t mark, mark_max;	/**< RED: marking from mark bytes queued, always above max */
	uint32_t pmax;			/**< RED: marking probability at mark_max, per mille */
	uint64_t limit;			/**< tail drop above */
	uint64_t rng;
	struct rte_mbuf *q[ENGINE_BNECK_FRAMES];
};

/** A multicast group of a device as the receive path sees it (engine_mcast.c). */
struct engine_mcg {
	uint8_t gid[16];
	uint32_t n;
	struct engine_qp *eq[DROCE_MAX_MCAST_QP_ATTACH];
};

/* ---- The drop log (engine_droplog.c) ---- */

/** Counter indices: struct droce_counters' fields in order (droce_counter_name()). */
enum engine_cnt_idx {
#define ENGINE_CNT_IDX(name, disposition, desc) ECNT_##name,
	DROCE_COUNTERS(ENGINE_CNT_IDX)
#undef ENGINE_CNT_IDX
	ECNT_NUM
};
/** Drop reasons: a counter index, or a parser reason after them. */
#define ENGINE_DROP_PARSE(err) (ECNT_NUM + (unsigned int)(err))
#define ENGINE_DROP_NUM (ECNT_NUM + DROCE_PARSE_ERR_NUM)

/** What a drop log line shows of a frame. */
struct engine_drop_key {
	bool has_mac, has_ip, has_bth, ipv6;
	struct rte_ether_addr src, dst;
	uint16_t ethertype;
	uint8_t sgid[16], dgid[16];	/**< addresses as GIDs (IPv4-mapped) */
	uint8_t opcode;
	uint32_t qpn, psn, len;
};

#define ENGINE_HANDOFF_RING 1024	/**< frames one shard may have queued for another */

/** A handoff ring: frames one shard received for QPs of another, single producer (the
 *  receiving shard's lcore) and single consumer (the owner's), verbs_ring's indices. */
struct engine_hand {
	struct verbs_ring r;
	struct rte_mbuf *slot[ENGINE_HANDOFF_RING];
};
#define ENGINE_NO_SHARD UINT8_MAX	/**< engine_shard.qp_shard: no QP in the slot */

/**
 * A device as one engine instance serves it: a shard (engine_shard.c). A device served by N
 * lcores ([engine] lcores_per_device) has N shards, each polling its own queue pair of the port
 * on its own lcore and owning its share of the device's QPs; shard 0, the primary (the one
 * verbs_device_engine() gives), also owns the port's start and stop, the neighbour table's
 * timers, ARP/ND, the multicast groups and the UD QPs. Frames a shard receives for a QP of
 * another are handed to it over a ring (hand_in[] of the owner). Everything a shard's packet
 * path writes is its own; the primary's fields marked so are read by the others.
 * Allocated at the first open, kept for life.
 */
struct engine_shard {
	struct droce_device *dev;
	struct engine_inst *lc;	/**< NULL while stopped */
	struct engine_shard *primary;	/**< shard 0 (itself for shard 0) */
	uint16_t port;
	uint16_t queue;			/**< the shard's queue pair, its index among the shards */
	uint16_t n_shards;		/**< the device's (a copy in every shard) */
	bool started;			/**< shard 0's: read by the others with acquire (late start) */
	bool start_failed;		/**< engine_link_poll() could not start the port */
	uint64_t restart_next;		/**< shard 0's: when a port down may be restarted */
	bool port_stopped;		/**< shard 0's: a restart stopped it and could not start it */
	/** The port's link as last polled (engine_link_poll()): while it is down nothing is
	 *  sent (tx_link_down) and what arrives is dropped (rx_link_down). */
	bool link_up;
	/** 802.1Q ([device] vlan): the device's frames carry a tag with vlan_id (0: priority
	 *  tagged) when vlan_on. The receive path takes frames of its own VLAN only: tagged with
	 *  vlan_id on a VLAN device (untagged too when vlan_id is 0), untagged or priority tagged
	 *  on a device without one (engine_classify.c); the rest are dropped by reason. */
	bool vlan_on;
	uint16_t vlan_id;
	bool drop_untagged;		/**< vlan_on with a VLAN id not 0: no untagged frame */
	/** One shard and not drop_untagged: a frame stays with this shard as classify() names it
	 *  (engine_classify.c, rx_classify()); else the owner and the untagged check are looked at. */
	bool rx_direct;
	/** Shard 0's: the port's steering rules (engine_steer.c) and what steers its frames:
	 *  "rules", "handoff: <the port's refusal>", "one queue". */
	uint16_t n_steer;
	struct rte_flow *steer[2 * ENGINE_MAX_LCORES];
	char steering[112];
	struct rte_ether_addr mac;
	unsigned int n_gid;
	uint8_t gid[DROCE_MAX_GID][16];	/**< the device's GIDs (non-zero entries) */
	struct neigh_table *neigh;
	uint32_t neigh_seen;		/**< engine_neigh_gen() when this shard last looked */
	struct engine_qp *qps[DROCE_QP_SLOTS];	/**< by verbs_qpn_slot() (owner only) */
	/* The device's QPs the TX step visits (engine_loop.c): those whose doorbell rang and those the
	 * engine touched (RX, timer, modify) until they have no TX work left. Per device, so a
	 * full device buffer stops only its own QPs' pass. */
	uint32_t n_active;
	uint32_t tx_next;		/**< where the next TX pass starts (round robin) */
	struct engine_qp *active[DROCE_QP_SLOTS];
	uint16_t n_tx;
	bool tx_stalled;		/**< the last flush left frames behind: port full */
	/** net_af_packet: the socket of the shard's queue (-1: none), whose TX ring the shard
	 *  kicks (env_kick.c) at kick_at (TSC; 0: not due), ENGINE_KICK_US after its last frames
	 *  went to the port. */
	int kick_fd;
	uint64_t kick_at;
	/** Zero-copy TX (transport_env.extbuf_ok): the port hands frames to a reader in this
	 *  process (net_ring) and frees them after, so they may point into registered memory. */
	bool tx_extbuf;
	/** The port sums the IPv4 headers (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM, [engine]
	 *  tx_checksum_offload): a flush hands them over (engine_port.c, tx_ip_cksum()). */
	bool tx_ip_cksum;
	struct rte_mbuf *tx[ENGINE_TXBUF];
	struct droce_counters cnt;	/**< written by the serving instance only */
	/** fault.on || bneck.on: the transport's frames take engine_env_tx()'s slow path. */
	bool tx_slow;
	struct engine_fault fault;
	struct engine_bneck bneck;
	/* Congestion control (engine_cc.c): the device's DCQCN parameters, which its QPs point to. */
	bool cc_ready;			/**< cc filled (engine_cc_setup()) */
	bool cc_on;			/**< [dcqcn] enable, and not in off_devices */
	struct dcqcn_params cc;
	/* Multicast (engine_mcast.c): changed by engine calls only, read by the owner's RX path. */
	uint32_t n_mcg;
	struct engine_mcg mcg[DROCE_MAX_MCAST_GRP];
	uint16_t n_loop;		/**< frames in loop[] */
	struct rte_mbuf *loop[ENGINE_MCAST_LOOP];	/**< sent, for the device's own members */
	/* Unicast loopback (engine_port.c), owner only: frames this shard sent to the device's
	 * own MAC, received at its next RX step. */
	uint16_t n_uloop;		/**< frames in uloop[] */
	struct rte_mbuf *uloop[ENGINE_LOOP];
	/* Drop log (engine_droplog.c), owner only. */
	uint64_t drop_logged[(ENGINE_DROP_NUM + 63) / 64];	/**< reasons logged once */
	/* Sharding (engine_shard.c). Primary only: the shards, the shard serving the device on
	 * each instance (by engine_inst.idx), and the shard owning each QP slot (written by
	 * control, read by every shard's RX path: atomics). */
	struct engine_shard *shard[ENGINE_MAX_LCORES];
	struct engine_shard *by_lc[ENGINE_MAX_LCORES];
	uint8_t *qp_shard;		/**< DROCE_QP_SLOTS entries; NULL with one shard */
	/** Frames other shards received for this one's QPs, by sending shard (NULL with one
	 *  shard). */
	struct engine_hand *hand_in[ENGINE_MAX_LCORES];
};

/** Timer heap: QPs with an armed transport deadline, earliest first. */
struct engine_timers {
	struct engine_qp **heap;
	uint32_t n;
	uint32_t cap;
};

typedef void (*engine_call_fn)(struct engine_inst *lc, void *arg);

struct engine_inst {
	unsigned int lcore_id;		/**< EAL lcore; RTE_MAX_LCORE for the inline instance */
	unsigned int idx;		/**< among the instances (engine_shard.by_lc) */
	bool dedicated;
	uint32_t running;		/**< dedicated loop launched (atomic) */
	uint32_t stop;			/**< ask the loop to return (atomic) */
	struct verbs_owner owner;
	struct transport_env env;
	struct rte_mempool *pool;
	unsigned int n_dev;
	struct engine_shard *devs[DROCE_MAX_DEVICES];
	uint32_t n_qps;
	struct engine_qp **qps;		/**< ENGINE_MAX_QPS slots */
	struct engine_qp **by_slot;	/**< by verbs_qp_db_slot(), VERBS_DB_SLOTS entries */
	struct engine_timers timers;
	uint64_t idle_iters;
	uint64_t link_next;		/**< TSC of the next link poll (UINT64_MAX: never) */
	/* Health (engine_loop.c): TSC cycles spent in iterations that did work and in idle ones (a
	 * dedicated lcore's idle sleeps included), and iterations. Written by the instance only,
	 * with relaxed atomic stores, so telemetry reads them from any thread without a call. */
	uint64_t busy_cycles;
	uint64_t idle_cycles;
	uint64_t iterations;
	/* Control calls (engine_instance.c): through owner.mbox, whose driver this is. */
	pthread_mutex_t driver;		/**< held by an inline iteration or a direct call */
};

/* engine_instance.c */
extern struct engine_config engine_cfg;
/** Run @p fn(lc, arg) on @p lc between two iterations and wait for it. */
void engine_inst_call(struct engine_inst *lc, engine_call_fn fn, void *arg);

/* engine_neigh.c (with the others declared further down) */
/** droce_engine_neigh_resolve() on the instance serving @p edev: 0 and @p mac, -EAGAIN (a
 *  request is under way), -EHOSTUNREACH (the last resolution failed, for one more interval). */
int engine_neigh_lookup(struct engine_inst *lc, struct engine_shard *edev, const uint8_t addr[16],
			uint8_t mac[6]);

/** What telemetry sees of the engine (engine_view_run()). */
struct engine_view {
	unsigned int n_lc;
	struct engine_inst *const *lc;	/**< the instances */
	unsigned int n_dev;
	struct engine_shard *const *dev;	/**< every device opened since the start */
};
/**
 * Call @p fn with the engine's instances and devices, holding the lifecycle lock (so no
 * device starts, stops or changes instance meanwhile; @p fn may use engine_inst_call()).
 * @return what @p fn returned, or -ENODEV when the engine is not initialised or no device is
 *   open (EAL memory may be going away then).
 */
int engine_view_run(int (*fn)(const struct engine_view *v, void *arg), void *arg);

/* engine_loop.c */
/** One iteration: RX, transport TX, timers, control, TX flush. @return work done (0: idle). */
unsigned int engine_iteration(struct engine_inst *lc);
/** The dedicated lcore's main function (rte_eal_remote_launch). */
int engine_lcore_main(void *arg);
/** After a transport call on @p eq: re-read its deadline and place it in the timer heap, and
 *  have the TX step visit it (the call may have left TX work: ACK, response, open window). */
void engine_qp_rearm(struct engine_inst *lc, struct engine_qp *eq);
/** Have the TX step visit @p eq until it has no TX work. */
void engine_qp_activate(struct engine_inst *lc, struct engine_qp *eq);
/** @p eq goes away: the TX step forgets it. */
void engine_qp_deactivate(struct engine_inst *lc, struct engine_qp *eq);

/* engine_qp.c */
extern const struct verbs_engine_ops engine_verbs_ops;
/** Owner callbacks (installed on every instance's verbs_owner). */
void engine_qp_detached(struct verbs_owner *o, struct droce_qp *qp);
void engine_qp_modified(struct verbs_owner *o, struct droce_qp *qp, int attr_mask);

/* engine_steer.c */
struct env_steer;
/** The steering rule of shard @p k of @p p (N = p->n_shards, a power of two): UDP destination
 *  4791, source port k under mask N - 1 → queue k (env_steer_fill()). */
void engine_steer_rule(struct env_steer *s, const struct engine_shard *p, bool ipv6,
		       unsigned int k);
/** After the port of primary @p p started: its steering rules, one per shard and IP version,
 *  where the port takes them (p->n_steer, p->steering). */
void engine_steer_start(struct engine_shard *p);
/** Before the port stops: destroy its steering rules. */
void engine_steer_stop(struct engine_shard *p);

/* engine_port.c */
/** Configure and start the port of primary @p p, a queue pair per shard (each shard's lc set:
 *  its pool receives), and start shard 0, and with @p shards the others too (else each starts
 *  its side on its own lcore, engine_link_poll()). @return 0, -errno. */
int engine_port_start(struct engine_shard *p, bool shards);
/** Stop the port of primary @p p and its shards (no instance serves them any more). */
void engine_port_stop(struct engine_shard *p);
/** Poll the link of every port @p lc serves; a change is reported to verbs
 *  (verbs_device_link(): the port's state and its event). @return links that changed. */
unsigned int engine_link_poll(struct engine_inst *lc);
/** Once per iteration: poll the links when [engine] link_poll_ms have passed. */
static inline unsigned int engine_link_tick(struct engine_inst *lc)
{
	return unlikely(lc->env.now >= lc->link_next) ? engine_link_poll(lc) : 0;
}
/** @p edev's link is down: drop what its port received. @return frames dropped. */
unsigned int engine_rx_link_down(struct engine_shard *edev);
/** Queue @p m for transmission (the owner only); drops and counts when the buffer is full. */
void engine_shard_tx(struct engine_shard *edev, struct rte_mbuf *m);
/** Hand buffered frames to the port. @return frames sent. */
unsigned int engine_shard_flush(struct engine_shard *edev);
/** Kick @p edev's af_packet TX ring (env_kick.c), due now; again later until a kick finds
 *  nothing waiting there. */
void engine_shard_kick(struct engine_shard *edev);
/** The transport_env callbacks. */
void engine_env_tx(struct transport_env *env, struct droce_device *dev, struct rte_mbuf *m);
bool engine_env_extbuf_ok(struct transport_env *env, struct droce_device *dev);
void engine_mr_wait(struct droce_device *dev);
/** verbs_engine_ops.mr_quiesce: the instance serving @p dev passed a point between two
 *  iterations. */
void engine_mr_quiesce(struct droce_device *dev);

/* engine_bottleneck.c */
void engine_bneck_start(struct engine_shard *edev);
void engine_bneck_stop(struct engine_shard *edev);
/** Queue @p m in the bottleneck (marked CE above the mark, dropped above the limit). */
void engine_bneck_tx(struct engine_shard *edev, struct rte_mbuf *m, uint64_t now);
/** Once per iteration, before the flush: what the bottleneck's rate lets leave by @p now. */
void engine_bneck_drain(struct engine_shard *edev, uint64_t now);

/* engine_cc.c */
/** Parse the [dcqcn] section (verbs_dcqcn_config()). @return 0, -EINVAL. */
int engine_cc_config_load(void);
/** (Re)make @p edev's DCQCN parameters (at port start: line rate from the link speed). */
void engine_cc_setup(struct engine_shard *edev);
/** transport_env.dcqcn. */
const struct dcqcn_params *engine_env_dcqcn(struct transport_env *env, struct droce_device *dev);
/** The [dcqcn] settings of a device, as telemetry shows them (keys' units). */
struct engine_cc_view {
	bool on, np, rp;
	unsigned int ecn;
	unsigned int cnp_interval_us, rate_reduce_period_us, alpha_g_shift, alpha_init;
	unsigned int alpha_period_us, time_reset_us, byte_reset, stages;
	unsigned int line_rate_mbps, min_rate_mbps, ai_rate_mbps, hai_rate_mbps, burst;
};
void engine_cc_describe(const struct engine_shard *edev, struct engine_cc_view *v);

/* engine_fault.c */
/** Set an ECN-capable frame's ECN field to CE (RFC 3168), the IPv4 checksum following (the
 *  ICRC does not cover the field). @return false when it is Not-ECT or CE already. */
bool engine_mark_ce(struct rte_mbuf *m);
/** Arm @p edev's fault injection from engine_cfg (at port start); off when all are 0. */
void engine_fault_start(struct engine_shard *edev);
/** Free a held frame (at port stop). */
void engine_fault_stop(struct engine_shard *edev);
/**
 * Transmit @p m through the faults (drop, corrupt, duplicate, delay, hold back) instead of
 * engine_shard_tx; @p now is the iteration's TSC (a delayed frame is due fault_delay_us later).
 */
void engine_fault_tx(struct engine_shard *edev, struct rte_mbuf *m, uint64_t now);
/**
 * Once per iteration, before the flush: release a frame held for a whole iteration and the
 * delayed frames that are due at @p now (TSC).
 */
void engine_fault_release(struct engine_shard *edev, uint64_t now);
/*
 * This thread is about to run transport code of @p lc (an iteration, or a control call under
 * the driver lock): the clock, and the mbuf cache of this thread's lcore (the previous entry
 * may have been another thread's).
 */
static inline void engine_env_enter(struct engine_inst *lc)
{
	lc->env.now = rte_rdtsc();
	lc->env.cache = rte_mempool_default_cache(lc->env.pool, rte_lcore_id());
}

static inline void engine_fault_tick(struct engine_shard *edev, uint64_t now)
{
	if (unlikely(edev->fault.held != NULL || edev->fault.d_n != 0))
		engine_fault_release(edev, now);
}

/* engine_shard.c */
/** Make @p p the primary of @p n shards (allocated once, kept; copies of the port, MAC, GIDs).
 *  @return 0, -ENOMEM. */
int engine_shards_make(struct engine_shard *p, unsigned int n);
/** The shard to own @p qp: 0 for UD QPs and with one shard, else its slot % n. */
unsigned int engine_shard_pick(const struct engine_shard *p, const struct droce_qp *qp);
/** Shard @p k owns QP @p qpn's slot from now on (ENGINE_NO_SHARD: nobody). */
void engine_shard_own(struct engine_shard *p, uint32_t qpn, unsigned int k);
/** The shard that owns the QP of RoCE frame @p m (IP header at @p l3_off, UDP at @p l4_off):
 *  0 for multicast, @p s's own index when no QP owns it or the frame is too short to say. */
unsigned int engine_shard_route(const struct engine_shard *s, const struct rte_mbuf *m,
				uint32_t l3_off, uint32_t l4_off, bool v6);
/** Hand @p m, received by shard @p s, to shard @p k (rx_handoff; rx_handoff_dropped). */
void engine_handoff(struct engine_shard *s, unsigned int k, struct rte_mbuf *m);
/** Free the frames handed to @p s and not taken. @return frames freed. */
unsigned int engine_handoff_discard(struct engine_shard *s);
/** The consumer's side of @p h: up to @p n frames into @p pkts. @return how many. */
static inline unsigned int engine_hand_take(struct engine_hand *h, struct rte_mbuf **pkts,
					    unsigned int n)
{
	uint32_t tail = verbs_ring_tail(&h->r);
	unsigned int i, ready = RTE_MIN(verbs_ring_ready(&h->r, tail), n);

	for (i = 0; i < ready; i++)
		pkts[i] = h->slot[(tail + i) & h->r.mask];
	if (ready != 0)
		verbs_ring_retire(&h->r, tail + ready);
	return ready;
}

/** The shard of device @p dev that the instance running @p env serves. */
static inline struct engine_shard *engine_shard_here(const struct transport_env *env,
						     struct droce_device *dev)
{
	const struct engine_inst *lc = env->engine;

	return ((struct engine_shard *)verbs_device_engine(dev))->by_lc[lc->idx];
}

/* engine_classify.c */
/** Receive and dispatch up to ENGINE_RX_BURSTS bursts from @p edev's queue (and the frames
 *  other shards handed over). @return frames received. */
unsigned int engine_rx(struct engine_inst *lc, struct engine_shard *edev);

/* engine_rx_roce.c */
/** The RoCE v2 frames of one receive burst between the stages of engine_rx_roce(). */
struct engine_rx_vec {
	uint16_t n;
	struct rte_mbuf *m[ENGINE_BURST];
	struct engine_qp *eq[ENGINE_BURST];	/**< NULL: a multicast frame */
	struct droce_pkt pkt[ENGINE_BURST];
};
/** engine_rx_roce() of a burst with frames. */
void engine_rx_roce_burst(struct engine_inst *lc, struct engine_shard *edev,
			  struct engine_rx_vec *v);
/** Parse, look up and deliver the @p v->n frames of @p v, in order; consumes them all and
 *  leaves @p v empty. An empty burst (most polls of an idle or handed-to queue) costs a test,
 *  not a call. */
static inline void engine_rx_roce(struct engine_inst *lc, struct engine_shard *edev,
				  struct engine_rx_vec *v)
{
	if (v->n != 0)
		engine_rx_roce_burst(lc, edev, v);
}

/* engine_neigh.c */
struct neigh_table *engine_neigh_create(struct engine_shard *edev);
void engine_neigh_free(struct neigh_table *nt);
/** ARP frame (Ethernet header at @p m's data start): answer and learn. */
void engine_neigh_rx_arp(struct engine_inst *lc, struct engine_shard *edev, struct rte_mbuf *m,
			 uint32_t l3_off);
/** ICMPv6 frame: handle NS/NA. @return true when it was neighbour discovery. */
bool engine_neigh_rx_icmp6(struct engine_inst *lc, struct engine_shard *edev,
			   struct rte_mbuf *m, uint32_t l3_off);
/** Retransmit or give up pending resolutions. @return requests sent. */
unsigned int engine_neigh_timers(struct engine_inst *lc, struct engine_shard *edev);
/** transport_env.resolve. */
int engine_env_resolve(struct transport_env *env, struct droce_device *dev,
		       struct droce_flow *flow);
/** How many times an entry of @p edev's table was resolved or failed: a change wakes the QPs
 *  whose path waits (engine_loop.c). */
uint32_t engine_neigh_gen(const struct engine_shard *edev);
/** Is @p addr (16 bytes, GID form) one of @p edev's GIDs? */
bool engine_is_our_gid(const struct engine_shard *edev, const uint8_t addr[16]);

/* engine_mcast.c */
/** The verbs mcast hook: update the device's group table on its instance. @return 0. */
int engine_mcast_update(struct droce_qp *qp, const union ibv_gid *gid, bool attach);
/** A parsed RoCE v2 frame to multicast group pkt->dgid: a copy to every attached QP except
 *  the sender when @p loop (the frame was sent by this device). Consumes @p m. */
void engine_mcast_rx(struct engine_inst *lc, struct engine_shard *edev, struct rte_mbuf *m,
		     const struct droce_pkt *pkt, bool loop);
/** A frame the transport sends to a multicast MAC: queue a copy for the device's own members
 *  (other than the sender). */
void engine_mcast_tx(struct engine_shard *edev, const struct rte_mbuf *m);
/** Deliver the queued loopback frames. @return frames delivered. */
unsigned int engine_mcast_loop_rx(struct engine_inst *lc, struct engine_shard *edev);
/** Free the queued loopback frames (port stop). */
void engine_mcast_stop(struct engine_shard *edev);
/* engine_port.c: unicast loopback (frames to the device's own MAC), freed at port stop */
void engine_loop_stop(struct engine_shard *edev);
/** @p eq goes away: take it out of every group. */
void engine_mcast_forget(struct engine_shard *edev, struct engine_qp *eq);

/* engine_droplog.c */
/** Name of drop @p reason as the counters call it ("rx_unknown_qp", "parse_err_bad_icrc")
 *  into @p s; @return its description. */
const char *engine_drop_reason_name(unsigned int reason, char *s, size_t n);
void engine_drop_key_mbuf(struct engine_drop_key *k, const struct rte_mbuf *m);
/** Log drop @p reason of @p k's frame: NOTICE the first time for the device, else DEBUG. */
void engine_drop_log(struct engine_shard *edev, unsigned int reason,
		     const struct engine_drop_key *k);
/** engine_drop_log() of a frame still in @p m. */
void engine_drop_raw(struct engine_shard *edev, unsigned int reason, const struct rte_mbuf *m);
/** The transport dropped @p pkt (its QPN and PSN, read before the frame went) for @p v:
 *  log it as engine_drop() logs the engine's drops. */
void engine_tdrop_log(struct engine_shard *edev, enum transport_verdict v,
		      const struct droce_pkt *pkt, uint32_t qpn, uint32_t psn);

static inline bool engine_drop_logged(const struct engine_shard *edev, unsigned int reason)
{
	return (edev->drop_logged[reason / 64] >> (reason % 64)) & 1;
}

/** Is a drop of @p reason to be logged: the first one, or any at DEBUG? */
static inline bool engine_drop_wanted(const struct engine_shard *edev, unsigned int reason)
{
	return !engine_drop_logged(edev, reason) ||
	       rte_log_can_log((uint32_t)engine_logtype, RTE_LOG_DEBUG);
}

/** @p edev drops the frame in @p m for @p reason (counted by the caller). */
static inline void engine_drop(struct engine_shard *edev, unsigned int reason,
			       const struct rte_mbuf *m)
{
	if (unlikely(engine_drop_wanted(edev, reason)))
		engine_drop_raw(edev, reason, m);
}

/** transport_rx() of @p pkt (its QPN, PSN) gave verdict @p v: a drop goes to the drop log. */
static inline void engine_tdrop(struct engine_shard *edev, enum transport_verdict v,
				const struct droce_pkt *pkt, uint32_t qpn, uint32_t psn)
{
	if (unlikely(v != TRANSPORT_RX_ACCEPTED))
		engine_tdrop_log(edev, v, pkt, qpn, psn);
}

/* engine_timer.c */
int engine_timers_init(struct engine_timers *t, uint32_t cap);
void engine_timers_free(struct engine_timers *t);
/** Set @p eq's deadline (UINT64_MAX removes it). */
void engine_timers_set(struct engine_timers *t, struct engine_qp *eq, uint64_t deadline);
/** The earliest QP whose deadline is <= @p now, or NULL. */
struct engine_qp *engine_timers_expired(const struct engine_timers *t, uint64_t now);

/* engine_config.c */
/** Parse the [engine] section (verbs_engine_config()) into @p c. @return 0, -EINVAL. */
int engine_config_load(struct engine_config *c);
/** The same from @p n key/value pairs @p kv. @return 0, -EINVAL (logged). */
int engine_config_from(struct engine_config *c, const struct verbs_kv *kv, unsigned int n);
/** How long a dedicated lcore that found no work sleeps next, after a sleep of @p prev us
 *  (0: it worked since): idle_sleep_us, then twice the last up to idle_sleep_max_us. */
unsigned int engine_idle_sleep_next(const struct engine_config *c, unsigned int prev);

#endif /* ENGINE_PRIVATE_H */
