/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Steering rules (engine_steer.c, env_flow.h) against the source-port convention and the
 * engine's QP ownership, without a port: for N = 2, 4, 8 shards, every frame a droce sender
 * builds for any QP slot (droce_flow_sport(), RC/UC; droce_flow_sport_ud(), UD) matches exactly
 * one of the N rules as rte_flow defines matching (spec under mask, item by item), and that
 * rule's queue is the shard engine_shard_pick() gives the destination QP. The rules' shape:
 * ingress only, ETH / IPV4 or IPV6 without spec / UDP destination 4791 / END, one QUEUE action.
 * Bad input beside it: a frame to another UDP port, or of the other IP version, matches no
 * rule.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "check.h"
#include "droce.h"
#include "droce_config.h"
#include "droce_wire.h"
#include "engine_private.h"
#include "env_flow.h"

/* Does a frame of @p ipv6 with UDP ports @p sport, @p dport match @p s (rte_flow semantics:
 * an item without spec matches any header of its type; a spec is compared under its mask)? */
static bool rule_matches(const struct env_steer *s, bool ipv6, uint16_t sport, uint16_t dport)
{
	const struct rte_flow_item_udp *spec = s->pattern[2].spec, *mask = s->pattern[2].mask;
	uint16_t sp = rte_cpu_to_be_16(sport), dp = rte_cpu_to_be_16(dport);

	if (s->pattern[1].type != (ipv6 ? RTE_FLOW_ITEM_TYPE_IPV6 : RTE_FLOW_ITEM_TYPE_IPV4))
		return false;
	return ((sp ^ spec->hdr.src_port) & mask->hdr.src_port) == 0 &&
	       ((dp ^ spec->hdr.dst_port) & mask->hdr.dst_port) == 0;
}

static void check_shape(const struct env_steer *s, bool ipv6, uint16_t queue)
{
	const struct rte_flow_action_queue *q = s->actions[0].conf;
	const struct rte_flow_item_udp *spec = s->pattern[2].spec, *mask = s->pattern[2].mask;

	CHECK(s->attr.ingress == 1 && s->attr.egress == 0 && s->attr.transfer == 0);
	CHECK(s->attr.group == 0);
	CHECK(s->pattern[0].type == RTE_FLOW_ITEM_TYPE_ETH && s->pattern[0].spec == NULL &&
	      s->pattern[0].mask == NULL);
	CHECK(s->pattern[1].type == (ipv6 ? RTE_FLOW_ITEM_TYPE_IPV6 : RTE_FLOW_ITEM_TYPE_IPV4));
	CHECK(s->pattern[1].spec == NULL && s->pattern[1].mask == NULL);
	CHECK(s->pattern[2].type == RTE_FLOW_ITEM_TYPE_UDP && s->pattern[2].last == NULL);
	CHECK_EQ(rte_be_to_cpu_16(spec->hdr.dst_port), DROCE_ROCEV2_PORT);
	CHECK_EQ(rte_be_to_cpu_16(mask->hdr.dst_port), 0xFFFF);
	CHECK(spec->hdr.dgram_len == 0 && mask->hdr.dgram_len == 0);
	CHECK(mask->hdr.dgram_cksum == 0);
	CHECK(s->pattern[3].type == RTE_FLOW_ITEM_TYPE_END);
	CHECK(s->actions[0].type == RTE_FLOW_ACTION_TYPE_QUEUE && q->index == queue);
	CHECK(s->actions[1].type == RTE_FLOW_ACTION_TYPE_END);
}

/* Which of the @p n rules match; -1 for none, -2 for more than one. */
static int which_rule(const struct env_steer *r, unsigned int n, bool ipv6, uint16_t sport,
		      uint16_t dport)
{
	int hit = -1;
	unsigned int k;

	for (k = 0; k < n; k++) {
		if (!rule_matches(&r[k], ipv6, sport, dport))
			continue;
		if (hit >= 0)
			return -2;
		hit = (int)k;
	}
	return hit;
}

static void check_shards(struct engine_shard *p, unsigned int n, bool ipv6)
{
	static struct env_steer rules[ENGINE_MAX_LCORES];
	const uint32_t srcs[] = { DROCE_QPN_BASE, DROCE_QPN_BASE + 77, 0x00abcdef };
	struct droce_qp qp;
	unsigned int k, i;
	uint32_t slot;

	p->n_shards = (uint16_t)n;
	for (k = 0; k < n; k++) {
		engine_steer_rule(&rules[k], p, ipv6, k);
		check_shape(&rules[k], ipv6, (uint16_t)k);
	}
	memset(&qp, 0, sizeof(qp));
	for (slot = 0; slot < DROCE_QP_SLOTS; slot++) {
		for (i = 0; i < RTE_DIM(srcs); i++) {
			uint32_t dqpn = DROCE_QPN_BASE + slot;
			uint16_t sport;
			int hit;

			qp.qp_num = dqpn;
			qp.qp_type = IBV_QPT_RC;
			sport = droce_flow_sport(srcs[i], dqpn);
			hit = which_rule(rules, n, ipv6, sport, DROCE_ROCEV2_PORT);
			if (hit < 0 || (unsigned int)hit != engine_shard_pick(p, &qp)) {
				fprintf(stderr, "N %u slot %u src 0x%x sport 0x%x: rule %d, owner %u\n",
					n, slot, srcs[i], sport, hit, engine_shard_pick(p, &qp));
				CHECK(0);
			}
			/* The other IP version's rules and other UDP ports: no match. */
			CHECK_EQ(which_rule(rules, n, !ipv6, sport, DROCE_ROCEV2_PORT), -1);
			CHECK_EQ(which_rule(rules, n, ipv6, sport, 4790), -1);
			CHECK_EQ(which_rule(rules, n, ipv6, sport, 53), -1);
			qp.qp_type = IBV_QPT_UD;
			sport = droce_flow_sport_ud(srcs[i], dqpn);
			CHECK_EQ(which_rule(rules, n, ipv6, sport, DROCE_ROCEV2_PORT), 0);
			CHECK_EQ(engine_shard_pick(p, &qp), 0);
		}
	}
}

int main(void)
{
	struct engine_shard *p = calloc(1, sizeof(*p));
	unsigned int n;

	CHECK(p != NULL);
	for (n = 2; n <= ENGINE_MAX_LCORES; n *= 2) {
		check_shards(p, n, false);
		check_shards(p, n, true);
	}
	free(p);
	printf("ok: the steering rules of 2, 4 and 8 shards send every slot's frames to its "
	       "owner, IPv4 and IPv6\n");
	return 0;
}
