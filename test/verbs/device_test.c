/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Devices: the embedded default (two ring-pair devices, droce owns EAL), the device queries
 * and their bad inputs, the GID table, the MTU mapping, the string helpers, the INI files in
 * config/ and droce_device_add().
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include "vt.h"
#include "verbs_private.h"

static void test_list_and_open(void)
{
	struct droce_device **list;
	struct droce_context *ctx;
	int n = -1;

	list = droce_get_device_list(&n);
	CHECK(list != NULL);
	CHECK_EQ(n, 2);
	CHECK(list[2] == NULL);
	CHECK(strcmp(droce_get_device_name(list[0]), "droce0") == 0);
	CHECK(strcmp(droce_get_device_name(list[1]), "droce1") == 0);
	CHECK(droce_get_device_guid(list[0]) != 0);
	CHECK(droce_get_device_guid(list[0]) != droce_get_device_guid(list[1]));
	CHECK(droce_owns_eal());
	errno = 0;
	CHECK(droce_get_device_name(NULL) == NULL && errno == EINVAL);
	CHECK(droce_get_device_guid(NULL) == 0);
	errno = 0;
	CHECK(droce_open_device(NULL) == NULL && errno == EINVAL);
	ctx = droce_open_device(list[0]);
	CHECK(ctx != NULL && ctx->device == list[0] && ctx->async_fd >= 0);
	CHECK_EQ(ctx->num_comp_vectors, 1);
	droce_free_device_list(list);
	droce_free_device_list(NULL);
	errno = 0;
	CHECK(droce_close_device(NULL) == -1 && errno == EINVAL);
	CHECK_EQ(droce_close_device(ctx), 0);
}

static void test_queries(void)
{
	struct droce_context *ctx = vt_open(0);
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	__be16 pkey;
	struct droce_pd *pd;

	CHECK_EQ(droce_query_device(ctx, &da), 0);
	CHECK_EQ(da.max_qp, DROCE_MAX_QP);
	CHECK_EQ(da.max_qp_wr, DROCE_MAX_QP_WR);
	CHECK_EQ(da.max_cqe, DROCE_MAX_CQE);
	CHECK_EQ(da.max_sge, DROCE_MAX_SGE);
	CHECK_EQ(da.phys_port_cnt, 1);
	CHECK_EQ(da.atomic_cap, IBV_ATOMIC_HCA);
	CHECK_EQ(droce_query_device(NULL, &da), EINVAL);
	CHECK_EQ(droce_query_device(ctx, NULL), EINVAL);

	CHECK_EQ(droce_query_port(ctx, 1, &pa), 0);
	CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
	/* The configured Ethernet MTU decides (9000 in the embedded default: 4096). */
	CHECK_EQ(pa.active_mtu, verbs_mtu_from_eth(verbs_device_cfg(ctx->device)->mtu));
	CHECK_EQ(pa.max_mtu, IBV_MTU_4096);
	CHECK_EQ(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	CHECK_EQ(pa.gid_tbl_len, DROCE_MAX_GID);
	CHECK_EQ(pa.pkey_tbl_len, 1);
	CHECK_EQ(droce_query_port(ctx, 0, &pa), EINVAL);
	CHECK_EQ(droce_query_port(ctx, 2, &pa), EINVAL);
	CHECK_EQ(droce_query_port(NULL, 1, &pa), EINVAL);
	CHECK_EQ(droce_query_port(ctx, 1, NULL), EINVAL);

	/* GID 0: fe80:: + modified EUI-64 of 02:d0:0c:00:00:01; GID 1: ::ffff:10.99.0.1. */
	{
		static const uint8_t g0[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
						0x00, 0xd0, 0x0c, 0xff, 0xfe, 0, 0, 1 };
		static const uint8_t g1[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
						10, 99, 0, 1 };
		static const uint8_t zero[16];

		CHECK_EQ(droce_query_gid(ctx, 1, 0, &gid), 0);
		CHECK(memcmp(gid.raw, g0, 16) == 0);
		CHECK_EQ(droce_query_gid(ctx, 1, 1, &gid), 0);
		CHECK(memcmp(gid.raw, g1, 16) == 0);
		CHECK_EQ(droce_query_gid(ctx, 1, DROCE_MAX_GID - 1, &gid), 0);
		CHECK(memcmp(gid.raw, zero, 16) == 0);
	}
	errno = 0;
	CHECK(droce_query_gid(ctx, 1, DROCE_MAX_GID, &gid) == -1 && errno == EINVAL);
	CHECK(droce_query_gid(ctx, 1, -1, &gid) == -1);
	CHECK(droce_query_gid(ctx, 2, 0, &gid) == -1);
	CHECK(droce_query_gid(NULL, 1, 0, &gid) == -1);
	CHECK(droce_query_gid(ctx, 1, 0, NULL) == -1);
	CHECK_EQ(droce_query_pkey(ctx, 1, 0, &pkey), 0);
	CHECK_EQ(pkey, 0xffff);
	errno = 0;
	CHECK(droce_query_pkey(ctx, 1, 1, &pkey) == -1 && errno == EINVAL);
	CHECK(droce_query_pkey(ctx, 2, 0, &pkey) == -1);
	CHECK(droce_query_pkey(ctx, 1, 0, NULL) == -1);

	/* close refuses while objects exist */
	pd = droce_alloc_pd(ctx);
	CHECK(pd != NULL);
	errno = 0;
	CHECK(droce_close_device(ctx) == -1 && errno == EBUSY);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
}

static void test_mtu_and_strings(void)
{
	CHECK_EQ(verbs_mtu_from_eth(1500), IBV_MTU_1024);
	CHECK_EQ(verbs_mtu_from_eth(9000), IBV_MTU_4096);
	CHECK_EQ(verbs_mtu_from_eth(4176), IBV_MTU_4096);
	CHECK_EQ(verbs_mtu_from_eth(4175), IBV_MTU_2048);
	CHECK_EQ(verbs_mtu_from_eth(576), IBV_MTU_256);
	CHECK(strcmp(droce_wc_status_str(IBV_WC_SUCCESS), "success") == 0);
	CHECK(strcmp(droce_wc_status_str(IBV_WC_WR_FLUSH_ERR), "Work Request Flushed Error") == 0);
	CHECK(strcmp(droce_wc_status_str((enum ibv_wc_status)999), "unknown") == 0);
	CHECK(strcmp(droce_event_type_str(IBV_EVENT_CQ_ERR), "CQ error") == 0);
	CHECK(strcmp(droce_event_type_str((enum ibv_event_type)999), "unknown") == 0);
	CHECK(strcmp(droce_port_state_str(IBV_PORT_ACTIVE), "PORT_ACTIVE") == 0);
	CHECK(strcmp(droce_port_state_str((enum ibv_port_state)99), "unknown") == 0);
}

/* config/default.ini is the embedded default, byte for byte. */
static void test_ini_files(const char *cfgdir)
{
	struct verbs_config *c = calloc(1, sizeof(*c));
	char path[512], buf[4096];
	const char *def = verbs_config_default_ini();
	ssize_t n;
	int fd;

	CHECK(c != NULL);
	snprintf(path, sizeof(path), "%s/default.ini", cfgdir);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	CHECK(n > 0);
	buf[n] = '\0';
	CHECK(strcmp(buf, def) == 0);
	CHECK_EQ(verbs_config_load(path, c), 0);
	CHECK_EQ(c->n_dev, 2);
	CHECK(strcmp(c->dev[1].ring_pair, "loop0") == 0);
	CHECK_EQ(c->dev[0].mtu, 9000);	/* a jumbo link, as RoCE fabrics run */
	CHECK_EQ(c->dev[1].mtu, 9000);

	snprintf(path, sizeof(path), "%s/rig.ini", cfgdir);
	CHECK_EQ(verbs_config_load(path, c), 0);
	CHECK_EQ(c->n_dev, 1);
	CHECK(strstr(c->dev[0].devargs, "net_af_packet") != NULL);
	CHECK(strstr(c->dev[0].devargs, "iface=rxehost0") != NULL);
	CHECK_EQ(c->dev[0].mac[0], 0x02);
	CHECK_EQ(c->dev[0].mac[5], 0x64);
	CHECK(c->dev[0].has_ipv4);
	CHECK_EQ(c->dev[0].ipv4[0], 10);
	CHECK_EQ(c->dev[0].ipv4[3], 100);
	CHECK_EQ(c->dev[0].mtu, 1500);
	CHECK(strlen(c->eal_args) > 0);
	CHECK_EQ(verbs_config_load("/nonexistent.ini", c), -EIO);
	free(c);
}

static void test_device_add(void)
{
	struct droce_device_cfg cfg;
	struct droce_context *ctx;
	struct droce_device **list;
	struct ibv_port_attr pa;
	struct droce_async_event ev;
	static const uint8_t zero_mac_eui64[8] = { 0x02, 0, 0, 0xff, 0xfe, 0, 0, 0 };
	union ibv_gid gid, gid0;
	__be64 guid;
	int n;

	memset(&cfg, 0, sizeof(cfg));
	CHECK_EQ(droce_device_add(NULL), -EINVAL);
	CHECK_EQ(droce_device_add(&cfg), -EINVAL);	/* no name */
	snprintf(cfg.name, sizeof(cfg.name), "droce0");
	snprintf(cfg.ring_pair, sizeof(cfg.ring_pair), "p9");
	CHECK_EQ(droce_device_add(&cfg), -EEXIST);
	snprintf(cfg.name, sizeof(cfg.name), "lib0");
	snprintf(cfg.devargs, sizeof(cfg.devargs), "net_null0");
	CHECK_EQ(droce_device_add(&cfg), -EINVAL);	/* both devargs and ring_pair */
	cfg.devargs[0] = '\0';
	cfg.mtu = 1500;	/* not the default's 9000: a port at active MTU 1024 */
	cfg.n_ipv6 = 1;
	inet_pton(AF_INET6, "fd00::47", cfg.ipv6[0]);
	CHECK_EQ(droce_device_add(&cfg), 0);
	/* Alone in its pair: no port yet. */
	list = droce_get_device_list(&n);
	CHECK_EQ(n, 3);
	ctx = droce_open_device(list[2]);
	droce_free_device_list(list);
	CHECK(ctx != NULL);
	CHECK_EQ(droce_query_port(ctx, 1, &pa), 0);
	CHECK_EQ(pa.state, IBV_PORT_DOWN);
	CHECK_EQ(pa.phys_state, 3);	/* Disabled: no port */
	CHECK_EQ(pa.active_mtu, IBV_MTU_1024);
	CHECK_EQ(droce_query_gid(ctx, 1, 1, &gid), 0);	/* no IPv4: the IPv6 GID is next */
	CHECK_EQ(gid.raw[0], 0xfd);
	CHECK_EQ(gid.raw[15], 0x47);
	/* No MAC configured and none yet: GID 0 is the zero MAC's EUI-64 until the port comes. */
	CHECK_EQ(droce_query_gid(ctx, 1, 0, &gid0), 0);
	CHECK(memcmp(&gid0.raw[8], zero_mac_eui64, 8) == 0);
	/* Its partner arrives: the port comes up and PORT_ACTIVE is raised. The GID table stays
	 * (the net_ring port's MAC is all zero too): no GID_CHANGE, no other event. */
	snprintf(cfg.name, sizeof(cfg.name), "lib1");
	CHECK_EQ(droce_device_add(&cfg), 0);
	CHECK_EQ(droce_query_port(ctx, 1, &pa), 0);
	CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
	CHECK_EQ(pa.phys_state, 5);	/* LinkUp */
	CHECK_EQ(droce_get_async_event(ctx, &ev), 0);
	CHECK_EQ(ev.event_type, IBV_EVENT_PORT_ACTIVE);
	CHECK_EQ(ev.element.port_num, 1);
	droce_ack_async_event(&ev);
	CHECK(fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK) == 0);
	CHECK(droce_get_async_event(ctx, &ev) == -1 && errno == EAGAIN);
	CHECK_EQ(droce_query_gid(ctx, 1, 0, &gid), 0);
	CHECK(memcmp(gid.raw, gid0.raw, 16) == 0);
	guid = droce_get_device_guid(ctx->device);
	CHECK(memcmp(&gid.raw[8], &guid, 8) == 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	/* A devargs device: net_null is probed as a vdev. */
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.name, sizeof(cfg.name), "null0");
	snprintf(cfg.devargs, sizeof(cfg.devargs), "net_null0");
	CHECK_EQ(droce_device_add(&cfg), 0);
	CHECK(verbs_device_port(verbs_device_find("null0")) >= 0);
	snprintf(cfg.name, sizeof(cfg.name), "bad0");
	snprintf(cfg.devargs, sizeof(cfg.devargs), "net_nosuchdriver0");
	CHECK_EQ(droce_device_add(&cfg), -ENODEV);
}

int main(int argc, char **argv)
{
	CHECK(argc >= 2);	/* the config/ directory */
	test_list_and_open();
	test_queries();
	test_mtu_and_strings();
	test_ini_files(argv[1]);
	test_device_add();
	printf("device_test: OK\n");
	return 0;
}
