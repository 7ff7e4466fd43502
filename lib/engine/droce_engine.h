/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * The droce engine (public): the DPDK loop that moves RoCE v2 frames between the ports and the
 * QPs. It starts by itself: opening the first context of a device configures and starts the
 * device's port and hands it to an engine instance; closing its last context stops it.
 *
 * Two ways to run, chosen by [engine] lcores in the configuration (doc/engine.md):
 * - dedicated: one or more EAL worker lcores run the loop (rte_eal_remote_launch()); devices
 *   are spread over them, each device (its port, neighbour table and QPs) served by one.
 *   "lcores = auto" (the embedded default) takes the first worker lcore if EAL has one.
 * - inline: no engine lcore; application threads drive the loop with droce_engine_poll(). One
 *   inline instance serves every device, so one thread can drive a whole process.
 */
#ifndef DROCE_ENGINE_H
#define DROCE_ENGINE_H

#include <stdbool.h>

#include "droce.h"
#include "droce_counters.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Run one iteration of the inline engine: receive a burst from every open device's port,
 * dispatch it (ARP, neighbour discovery, RoCE v2 to its QP), let every QP with work transmit,
 * fire expired timers, apply pending control, flush transmissions.
 *
 * Any application thread may call it; calls serialise on the instance's driver lock (which
 * droce_modify_qp()/droce_destroy_qp() of an inline QP also take, so control never waits for a
 * poll that its own thread would have to make). Makes no system call.
 *
 * @param ctx  An open context (names the device; the inline instance serves all of them).
 * @return Work done in this iteration (frames, completions, requests; 0 when idle), or
 *   -EINVAL (@p ctx is NULL), -EBUSY (the engine runs on dedicated lcores: nothing to drive),
 *   -ENODEV (the device is not started).
 */
int droce_engine_poll(struct droce_context *ctx);

/**
 * @return true when the engine runs inline (the application must call droce_engine_poll()),
 *   false when it runs on dedicated lcores. Loads the configuration if needed.
 */
bool droce_engine_is_inline(void);

/**
 * Resolve a peer's MAC on @p ctx's device, as the transport does for a QP's path: an answer
 * from the neighbour table (static entries, ARP replies, neighbour advertisements), or a
 * request sent (ARP who-has, or a neighbour solicitation), repeated every neigh_retry_ms up to
 * neigh_retries times by the engine ([engine] keys, doc/engine.md). Call again to learn the
 * outcome. Safe from any thread; waits for at most one engine iteration.
 *
 * @param addr  The peer's address as a GID (::ffff:a.b.c.d for IPv4) or an IPv6 multicast GID.
 * @param mac   Filled on success.
 * @return 0, -EAGAIN (resolution under way), -EHOSTUNREACH (the last resolution got no
 *   answer; a call after neigh_retry_ms more starts a new one), -EINVAL (NULL argument),
 *   -ENODEV (the device is not started).
 */
int droce_engine_neigh_resolve(struct droce_context *ctx, const union ibv_gid *addr,
			       uint8_t mac[6]);

/**
 * Read the counters of @p ctx's device (summed over the engine instances that served it
 * since the process started). Safe from any thread; waits for at most one engine iteration.
 *
 * @return 0, -EINVAL (NULL argument).
 */
int droce_query_counters(struct droce_context *ctx, struct droce_counters *out);

/**
 * Set the counters of @p ctx's device, and those of every QP of the device, to zero.
 * @return 0, -EINVAL (NULL argument).
 */
int droce_counters_reset(struct droce_context *ctx);

/**
 * Read the counters of one QP: its share of every transport counter of its device (duplicates,
 * out-of-sequence, NAKs sent and received, RNR, retransmits, retry exhaustion, access and
 * invalid-request errors, opcode-sequence and QP-state drops, ACKs, ...), each counted
 * together with the device's, so that over the QPs of a device they add up to the device's;
 * and the frames of the QP: rx_packets/rx_bytes/rx_roce for the RoCE v2 frames the engine
 * delivered to it, tx_packets/tx_bytes for the frames it transmitted (built and handed to the
 * port's TX buffer; the device's count what the port took, plus ARP/ND). Counters that do not
 * concern a QP (port, parser, neighbour, fault injection) stay 0. They count from the QP's
 * creation (droce_counters_reset() of its device zeroes them), whatever its state.
 *
 * Safe from any thread; like droce_query_counters() the read is done by the engine instance
 * that owns the QP (an engine call: waits for at most one iteration), so it never races it.
 *
 * @param qp   A QP of an open context (not destroyed).
 * @param out  Filled on success.
 * @return 0, -EINVAL (@p qp or @p out NULL, or @p qp is not a QP the engine drives),
 *   -ENODEV (the QP's device has no port, so no engine instance serves it).
 */
int droce_query_qp_counters(struct droce_qp *qp, struct droce_counters *out);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_ENGINE_H */
