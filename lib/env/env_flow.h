/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * Flow rules (internal): the rule that sends a port's RoCE v2 frames to the receive queue of
 * the engine shard that owns their QP (doc/engine.md, *Source ports*), and its installation
 * with rte_flow. Like the rest of env, nothing here logs.
 */
#ifndef ENV_FLOW_H
#define ENV_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_flow.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * One steering rule, self-contained (the items and actions point into it): ingress,
 * ETH / IPV4 or IPV6 (any addresses) / UDP destination DROCE_ROCEV2_PORT (mask 0xFFFF),
 * source port @c sport under @c sport_mask → QUEUE @c queue.
 */
struct env_steer {
	struct rte_flow_attr attr;
	struct rte_flow_item pattern[4];
	struct rte_flow_action actions[2];
	struct rte_flow_item_udp udp_spec, udp_mask;
	struct rte_flow_action_queue queue;
};

/**
 * Fill @p s with the rule for frames over @p ipv6 (else IPv4) whose UDP source port has
 * (port & @p sport_mask) == @p sport, to receive queue @p queue. @p s must not move after
 * (its items point into it).
 */
void env_steer_fill(struct env_steer *s, bool ipv6, uint16_t sport, uint16_t sport_mask,
		    uint16_t queue);

/**
 * Create @p s on the started @p port. A port that validates a rule but refuses it at create
 * (net_tap checks masks only then) is found out here: only a created rule steers.
 * @return the rule, or NULL with rte_flow's negative errno in @p *err and its message (or
 * strerror) in @p why[@p len].
 */
struct rte_flow *env_steer_create(uint16_t port, const struct env_steer *s, int *err,
				  char *why, size_t len);

/** Destroy @p flow, created on @p port by env_steer_create(). @return 0 or a negative errno. */
int env_steer_destroy(uint16_t port, struct rte_flow *flow);

#ifdef __cplusplus
}
#endif

#endif /* ENV_FLOW_H */
