/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Flow rules: a RoCE v2 steering rule built from rte_flow items and actions, created and
 * destroyed on a port (env_flow.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>

#include "droce_config.h"
#include "env_flow.h"

void env_steer_fill(struct env_steer *s, bool ipv6, uint16_t sport, uint16_t sport_mask,
		    uint16_t queue)
{
	memset(s, 0, sizeof(*s));
	s->attr.ingress = 1;
	s->udp_spec.hdr.src_port = rte_cpu_to_be_16(sport & sport_mask);
	s->udp_spec.hdr.dst_port = rte_cpu_to_be_16(DROCE_ROCEV2_PORT);
	s->udp_mask.hdr.src_port = rte_cpu_to_be_16(sport_mask);
	s->udp_mask.hdr.dst_port = RTE_BE16(0xFFFF);
	/* Items without spec match any header of their type. */
	s->pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
	s->pattern[1].type = ipv6 ? RTE_FLOW_ITEM_TYPE_IPV6 : RTE_FLOW_ITEM_TYPE_IPV4;
	s->pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
	s->pattern[2].spec = &s->udp_spec;
	s->pattern[2].mask = &s->udp_mask;
	s->pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
	s->queue.index = queue;
	s->actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
	s->actions[0].conf = &s->queue;
	s->actions[1].type = RTE_FLOW_ACTION_TYPE_END;
}

struct rte_flow *env_steer_create(uint16_t port, const struct env_steer *s, int *err,
				  char *why, size_t len)
{
	struct rte_flow_error fe;
	struct rte_flow *flow;

	memset(&fe, 0, sizeof(fe));
	flow = rte_flow_create(port, &s->attr, s->pattern, s->actions, &fe);
	if (flow != NULL)
		return flow;
	/* rte_flow sets rte_errno; a PMD's fe.type says which part it refused. */
	*err = rte_errno > 0 ? -rte_errno : -EIO;
	snprintf(why, len, "%s", fe.message != NULL ? fe.message : strerror(-*err));
	return NULL;
}

int env_steer_destroy(uint16_t port, struct rte_flow *flow)
{
	struct rte_flow_error fe;

	return rte_flow_destroy(port, flow, &fe);
}
