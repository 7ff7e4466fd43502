/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Steering by flow rule (doc/engine.md, *Shards*): a device of N shards, N a power of two,
 * asks its port at start for one rule per shard k and IP version: UDP destination 4791,
 * source port k under mask N - 1 → receive queue k. droce senders put the destination QP's
 * slot in the source port's low byte (droce_flow_sport()) and shard k owns the slots
 * slot % N == k, so a port that takes the rules delivers every frame from a droce peer to
 * its owner's queue, and no frame is handed between shards. An IP version's rules are all
 * created or none is kept; where the port refuses them (no flow API, no masked port match)
 * frames reach their owner by handoff, as without rules. Frames from other senders (rxe)
 * land by the same rule on some shard and are handed over. Shard 0's, at port start and stop.
 */
#include <errno.h>
#include <stdio.h>

#include <rte_common.h>

#include "engine_private.h"
#include "env_flow.h"

void engine_steer_rule(struct env_steer *s, const struct engine_shard *p, bool ipv6,
		       unsigned int k)
{
	env_steer_fill(s, ipv6, (uint16_t)k, (uint16_t)(p->n_shards - 1), (uint16_t)k);
}

static void steer_drop_rules(struct engine_shard *p, unsigned int from)
{
	while (p->n_steer > from) {
		p->n_steer--;
		if (env_steer_destroy(p->port, p->steer[p->n_steer]) != 0)
			ENGINE_LOG(WARNING, "port %u: a steering rule could not be destroyed",
				   p->port);
	}
}

/* The N rules of one IP version, or none. @return 0, or the first refusal's errno. */
static int steer_version(struct engine_shard *p, bool ipv6, char *why, size_t len)
{
	unsigned int first = p->n_steer, k;
	struct env_steer rule;
	int err = 0;

	for (k = 0; k < p->n_shards; k++) {
		struct rte_flow *f;

		engine_steer_rule(&rule, p, ipv6, k);
		f = env_steer_create(p->port, &rule, &err, why, len);
		if (f == NULL) {
			steer_drop_rules(p, first);
			return err;
		}
		p->steer[p->n_steer++] = f;
	}
	return 0;
}

void engine_steer_start(struct engine_shard *p)
{
	const char *name = verbs_device_cfg(p->dev)->name;
	char why[96];
	int rc4, rc6;

	p->n_steer = 0;
	if (p->n_shards < 2) {
		snprintf(p->steering, sizeof(p->steering), "one queue");
		return;
	}
	if (!rte_is_power_of_2(p->n_shards)) {
		snprintf(p->steering, sizeof(p->steering), "handoff: %u shards, not a power of 2",
			 p->n_shards);
		ENGINE_LOG(NOTICE, "%s: port %u: no steering rule names slot %% %u: frames reach "
			   "their shard by handoff", name, p->port, p->n_shards);
		return;
	}
	rc4 = steer_version(p, false, why, sizeof(why));
	if (rc4 != 0)
		ENGINE_LOG(NOTICE, "%s: port %u refuses IPv4 steering rules (%s): frames reach "
			   "their shard by handoff", name, p->port, why);
	rc6 = rc4 == -ENOSYS ? rc4 : steer_version(p, true, why, sizeof(why));
	if (rc6 != 0 && rc4 == 0)
		ENGINE_LOG(NOTICE, "%s: port %u refuses IPv6 steering rules (%s): such frames "
			   "reach their shard by handoff", name, p->port, why);
	if (rc4 != 0 && rc6 != 0)
		snprintf(p->steering, sizeof(p->steering), "handoff: %s", why);
	else
		snprintf(p->steering, sizeof(p->steering), "rules%s%s",
			 rc4 != 0 ? " (IPv6 only)" : "", rc6 != 0 ? " (IPv4 only)" : "");
}

void engine_steer_stop(struct engine_shard *p)
{
	steer_drop_rules(p, 0);
}
