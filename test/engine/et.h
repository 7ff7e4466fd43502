/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Helpers shared by the engine tests: checks, and a device under test whose port is a
 * net_ring ethdev over two rte_rings the test holds, so it injects frames (enqueue on "in")
 * and sees what the engine transmits (dequeue from "out").
 */
#ifndef ET_H
#define ET_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "check.h"
#include "droce.h"
#include "droce_engine.h"
#include "engine_private.h"

struct et_dut {
	struct rte_ring *in;		/**< the test enqueues, the DUT's port receives */
	struct rte_ring *out;		/**< the DUT's port transmits, the test dequeues */
	struct rte_mempool *pool;	/**< for injected frames */
	struct droce_context *ctx;
	struct rte_ether_addr mac;
};

static const struct rte_ether_addr et_peer_mac = { .addr_bytes = { 2, 0, 0, 0, 0, 0x22 } };

/* The DUT's 802.1Q settings (droce_device_cfg vlan_on, vlan_id, pcp_fixed, pcp): a test sets
 * them before et_setup(); zero: untagged. */
static struct { bool on; uint16_t id; bool pcp_fixed; uint8_t pcp; } et_vlan;

/* EAL from argv (the test owns it), then the DUT device: 10.1.0.1, fd00::1, static
 * neighbour 10.1.0.9. */
static inline void et_setup(struct et_dut *d, int argc, char **argv)
{
	struct droce_device_cfg cfg;
	struct droce_device **list;
	int i, n, port;

	CHECK(rte_eal_init(argc, argv) >= 0);
	d->in = rte_ring_create("et_in", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	d->out = rte_ring_create("et_out", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	d->pool = rte_pktmbuf_pool_create("et_pool", 1023, 0, 0, 4096, SOCKET_ID_ANY);
	CHECK(d->in != NULL && d->out != NULL && d->pool != NULL);
	port = rte_eth_from_rings("et_dut", &d->in, 1, &d->out, 1, SOCKET_ID_ANY);
	CHECK(port >= 0);
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.name, sizeof(cfg.name), "dut");
	/* devargs naming an existing port: droce uses it as it is. */
	CHECK_EQ(rte_eth_dev_get_name_by_port((uint16_t)port, cfg.devargs), 0);
	CHECK(rte_ether_unformat_addr("02:00:00:00:00:11", &d->mac) == 0);
	memcpy(cfg.mac, d->mac.addr_bytes, 6);
	cfg.has_ipv4 = true;
	CHECK(inet_pton(AF_INET, "10.1.0.1", cfg.ipv4) == 1);
	cfg.n_ipv6 = 1;
	CHECK(inet_pton(AF_INET6, "fd00::1", cfg.ipv6[0]) == 1);
	cfg.mtu = 1500;
	cfg.n_neigh = 1;
	cfg.neigh[0].addr[10] = 0xff;
	cfg.neigh[0].addr[11] = 0xff;
	CHECK(inet_pton(AF_INET, "10.1.0.9", &cfg.neigh[0].addr[12]) == 1);
	memcpy(cfg.neigh[0].mac, "\x02\x00\x00\x00\x00\x09", 6);
	cfg.vlan_on = et_vlan.on;
	cfg.vlan_id = et_vlan.id;
	cfg.pcp_fixed = et_vlan.pcp_fixed;
	cfg.pcp = et_vlan.pcp;
	CHECK_EQ(droce_device_add(&cfg), 0);
	list = droce_get_device_list(&n);
	CHECK(list != NULL);
	d->ctx = NULL;
	for (i = 0; i < n; i++)
		if (strcmp(droce_get_device_name(list[i]), "dut") == 0)
			d->ctx = droce_open_device(list[i]);
	droce_free_device_list(list);
	CHECK(d->ctx != NULL);
}

/* Inject one frame of @p len bytes. */
static inline void et_inject(struct et_dut *d, const void *frame, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(d->pool);

	CHECK(m != NULL);
	CHECK(rte_pktmbuf_append(m, (uint16_t)len) != NULL);
	memcpy(rte_pktmbuf_mtod(m, void *), frame, len);
	CHECK_EQ(rte_ring_enqueue(d->in, m), 0);
}

/* The next frame the DUT transmitted, copied into @p buf; its length, or 0 for none. */
static inline uint32_t et_take(struct et_dut *d, void *buf, uint32_t size)
{
	struct rte_mbuf *m;
	uint32_t len;

	if (rte_ring_dequeue(d->out, (void **)&m) != 0)
		return 0;
	len = RTE_MIN(rte_pktmbuf_pkt_len(m), size);
	{
		const void *p = rte_pktmbuf_read(m, 0, len, buf);

		if (p != buf)
			memcpy(buf, p, len);
	}
	rte_pktmbuf_free(m);
	return len;
}

/* The GID index of the DUT's IPv4 address (10.1.0.1). */
static inline int et_gid_index_v4(struct et_dut *d)
{
	union ibv_gid g, want;

	memset(&want, 0, sizeof(want));
	want.raw[10] = want.raw[11] = 0xff;
	CHECK(inet_pton(AF_INET, "10.1.0.1", &want.raw[12]) == 1);
	for (int i = 0; i < 8; i++)
		if (droce_query_gid(d->ctx, 1, i, &g) == 0 && memcmp(&g, &want, 16) == 0)
			return i;
	CHECK(!"no IPv4 GID");
	return -1;
}

/* Drive the inline engine @p n iterations. */
static inline void et_poll(struct et_dut *d, int n)
{
	while (n-- > 0)
		CHECK(droce_engine_poll(d->ctx) >= 0);
}

static inline struct droce_counters et_counters(struct et_dut *d)
{
	struct droce_counters c;

	CHECK_EQ(droce_query_counters(d->ctx, &c), 0);
	return c;
}

/* The engine instance serving the DUT (to call the transport_env callbacks). */
static inline struct engine_inst *et_lcore(struct et_dut *d)
{
	struct engine_shard *edev = verbs_device_engine(d->ctx->device);

	CHECK(edev != NULL && edev->lc != NULL);
	return edev->lc;
}

#endif
