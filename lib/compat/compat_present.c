/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Device presence (droce-run -p, doc/compat.md "Device presence"): middleware such as UCX
 * looks for an RDMA device where the kernel shows one, /sys/class/infiniband/<name> and
 * /sys/class/infiniband_verbs/uverbsN, before and after ibv_open_device(). droce-run -p runs
 * the program in a private mount namespace whose /sys/class/infiniband and
 * /sys/class/infiniband_verbs are empty tmpfs directories of its own and sets DROCE_PRESENT;
 * the drop-in then writes there, in the kernel's layout and format
 * (drivers/infiniband/core/sysfs.c), what a virtual RoCE device (rxe) shows:
 *
 *   infiniband/<name>/node_type, node_guid, sys_image_guid, node_desc    (at discovery)
 *   infiniband/<name>/ports/1/{state,phys_state,rate,link_layer,lid,sm_lid,lid_mask_count,
 *     sm_sl,cap_mask}, gids/<i>, gid_attrs/types/<i> ("RoCE v2"), pkeys/0  (at each open)
 *   infiniband_verbs/uverbsN/ibdev, infiniband_verbs/abi_version           (at discovery)
 *
 * What a virtual device has not, droce does not write, so a reader gets ENOENT as on rxe: no
 * device/ (no PCI parent: no local_cpus, numa_node, vendor), no board_id, hca_type or tc/
 * (mlx5's), no gid_attrs/ndevs (no kernel net device carries droce's addresses).
 *
 * Nothing is written outside droce-run's tmpfs: the directories must exist and be tmpfs,
 * never the host's sysfs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "compat_private.h"

#define PRESENT_IB "/sys/class/infiniband"
#define PRESENT_UVERBS "/sys/class/infiniband_verbs"

static bool present_on(const char *dir)
{
	const char *e = getenv("DROCE_PRESENT");
	struct statfs s;

	return e != NULL && e[0] != '\0' && statfs(dir, &s) == 0 &&
	       s.f_type == TMPFS_MAGIC;
}

/* mkdir -p of the directories of @p path under an existing base. */
static void make_dirs(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
		*p = '\0';
		(void)mkdir(path, 0755);
		*p = '/';
	}
}

static void __attribute__((format(printf, 2, 3))) put(const char *path, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s", path);
	make_dirs(tmp);
	f = fopen(path, "w");
	if (f == NULL) {
		COMPAT_MSG("device presence: cannot write %s: %s", path, strerror(errno));
		return;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) != 0)
		COMPAT_MSG("device presence: cannot write %s: %s", path, strerror(errno));
}

static void put_guid(const char *path, __be64 guid)
{
	const uint8_t *g = (const uint8_t *)&guid;

	put(path, "%02x%02x:%02x%02x:%02x%02x:%02x%02x\n", g[0], g[1], g[2], g[3], g[4], g[5],
	    g[6], g[7]);
}

void compat_present_device(const struct ibv_device *dev, __be64 guid)
{
	char p[512];

	if (!present_on(PRESENT_IB) || !present_on(PRESENT_UVERBS))
		return;
	snprintf(p, sizeof(p), PRESENT_IB "/%s/node_type", dev->name);
	put(p, "1: CA\n");
	snprintf(p, sizeof(p), PRESENT_IB "/%s/node_guid", dev->name);
	put_guid(p, guid);
	snprintf(p, sizeof(p), PRESENT_IB "/%s/sys_image_guid", dev->name);
	put_guid(p, guid);
	snprintf(p, sizeof(p), PRESENT_IB "/%s/node_desc", dev->name);
	put(p, "droce %s\n", dev->name);
	snprintf(p, sizeof(p), PRESENT_UVERBS "/%s/ibdev", dev->dev_name);
	put(p, "%s\n", dev->name);
	put(PRESENT_UVERBS "/abi_version", "6\n");	/* IB_USER_VERBS_ABI_VERSION */
}

static const char *port_state_str(enum ibv_port_state s)
{
	static const char *const n[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
					  "ACTIVE_DEFER" };

	return (unsigned int)s < sizeof(n) / sizeof(n[0]) ? n[s] : "UNKNOWN";
}

static const char *phys_state_str(uint8_t s)
{
	static const char *const n[] = { "<unknown>", "Sleep", "Polling", "Disabled",
					 "PortConfigurationTraining", "LinkUp",
					 "LinkErrorRecovery", "Phy Test" };

	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "<unknown>";
}

/* ports/1/rate as the kernel prints it: "<Gb/s> Gb/sec (<width>X <speed>)". */
static void put_rate(const char *path, const struct ibv_port_attr *a)
{
	static const struct { uint32_t speed; unsigned int tenths; const char *name; } sp[] = {
		{ 1, 25, "SDR" }, { 2, 50, "DDR" }, { 4, 100, "QDR" }, { 8, 100, "FDR10" },
		{ 16, 140, "FDR" }, { 32, 250, "EDR" }, { 64, 500, "HDR" }, { 128, 1000, "NDR" },
	};
	static const struct { uint8_t width; unsigned int lanes; } wd[] = {
		{ 1, 1 }, { 2, 4 }, { 4, 8 }, { 8, 12 }, { 16, 2 },
	};
	unsigned int i, j, r;

	for (i = 0; i < sizeof(sp) / sizeof(sp[0]) && sp[i].speed != a->active_speed; i++)
		;
	for (j = 0; j < sizeof(wd) / sizeof(wd[0]) && wd[j].width != a->active_width; j++)
		;
	if (i == sizeof(sp) / sizeof(sp[0]) || j == sizeof(wd) / sizeof(wd[0]))
		return;	/* the kernel's read fails too (EINVAL): no file */
	r = sp[i].tenths * wd[j].lanes;
	put(path, "%u%s Gb/sec (%uX %s)\n", r / 10, r % 10 ? ".5" : "", wd[j].lanes, sp[i].name);
}

void compat_present_port(const struct ibv_device *dev, struct droce_context *ctx)
{
	struct ibv_port_attr a;
	union ibv_gid gid;
	char p[512];
	int i;

	if (!present_on(PRESENT_IB))
		return;
	memset(&a, 0, sizeof(a));
	if (droce_query_port(ctx, 1, &a) != 0)
		return;
#define PORT(file) (snprintf(p, sizeof(p), PRESENT_IB "/%s/ports/1/" file, dev->name), p)
	put(PORT("state"), "%d: %s\n", a.state, port_state_str(a.state));
	put(PORT("phys_state"), "%u: %s\n", a.phys_state, phys_state_str(a.phys_state));
	put_rate(PORT("rate"), &a);
	put(PORT("link_layer"), "Ethernet\n");
	put(PORT("lid"), "0x%x\n", a.lid);
	put(PORT("sm_lid"), "0x%x\n", a.sm_lid);
	put(PORT("lid_mask_count"), "%u\n", a.lmc);
	put(PORT("sm_sl"), "%u\n", a.sm_sl);
	put(PORT("cap_mask"), "0x%08x\n", a.port_cap_flags);
	put(PORT("pkeys/0"), "0xffff\n");
#undef PORT
	for (i = 0; i < a.gid_tbl_len; i++) {
		static const uint8_t zero[16];

		if (droce_query_gid(ctx, 1, i, &gid) != 0 || memcmp(gid.raw, zero, 16) == 0)
			continue;
		snprintf(p, sizeof(p), PRESENT_IB "/%s/ports/1/gids/%d", dev->name, i);
		put(p, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x\n",
		    gid.raw[0], gid.raw[1], gid.raw[2], gid.raw[3], gid.raw[4], gid.raw[5],
		    gid.raw[6], gid.raw[7], gid.raw[8], gid.raw[9], gid.raw[10], gid.raw[11],
		    gid.raw[12], gid.raw[13], gid.raw[14], gid.raw[15]);
		snprintf(p, sizeof(p), PRESENT_IB "/%s/ports/1/gid_attrs/types/%d", dev->name, i);
		put(p, "RoCE v2\n");
	}
}
