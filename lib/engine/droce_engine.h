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

/* The counters' calls (droce_query_counters(), droce_query_qp_counters(),
 * droce_counters_reset()) are in droce_counters.h, included above. */

#ifdef __cplusplus
}
#endif

#endif /* DROCE_ENGINE_H */
