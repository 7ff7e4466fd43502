/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Configuration: an INI file parsed with rte_cfgfile. The embedded default is INI text too, so
 * one parser serves both; config/default.ini is a copy of it.
 *
 *   [eal]            args = EAL arguments used when droce initialises EAL itself
 *   [engine]         kept as key = value pairs for the engine layer (doc/engine.md)
 *   [cm]             kept as key = value pairs for the connection manager (doc/cm.md)
 *   [dcqcn]          kept as key = value pairs for the engine (doc/congestion.md)
 *   [device NAME]    devargs = DPDK devargs | ring_pair = PAIR (two devices joined in-process)
 *                    mac = 02:..., ipv4 = a.b.c.d, ipv6 = addr[,addr...], mtu = Ethernet MTU,
 *                    neigh = ADDR@MAC[,ADDR@MAC...] (static neighbours, IPv4 or IPv6 ADDR)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_ether.h>

#include "verbs_private.h"

static const char default_ini[] =
	"; SPDX-License-Identifier: BSD-3-Clause\n"
	"; Copyright (c) 2026 The droce authors\n"
	";\n"
	"; droce embedded default: two devices joined in-process by a net_ring pair.\n"
	"; No NIC, no hugepages. Used when DROCE_CONFIG is not set; this file is a copy of it.\n"
	"; Keys: [eal] args; [engine] lcores, mbufs, ... (doc/engine.md); [device NAME]\n"
	"; devargs | ring_pair, mac, ipv4, ipv6 (comma-separated), mtu (Ethernet), neigh.\n"
	"; See doc/api.md.\n"
	"; mtu = 9000: an in-memory link carries jumbo frames, as RoCE fabrics do, so the active MTU\n"
	"; is 4096. For path MTU 1024 set mtu = 1500 (or per QP: path_mtu, perftest's -m 1024).\n"
	"[eal]\n"
	"args = --no-huge --no-shconf -m 512 --no-pci --log-level=lib.eal:error\n"
	"\n"
	"[engine]\n"
	"lcores = auto\n"
	"mbufs = 8191\n"
	"idle_sleep_us = 20\n"
	"\n"
	"[device droce0]\n"
	"ring_pair = loop0\n"
	"mac = 02:d0:0c:00:00:01\n"
	"ipv4 = 10.99.0.1\n"
	"mtu = 9000\n"
	"\n"
	"[device droce1]\n"
	"ring_pair = loop0\n"
	"mac = 02:d0:0c:00:00:02\n"
	"ipv4 = 10.99.0.2\n"
	"mtu = 9000\n";

const char *verbs_config_default_ini(void)
{
	return default_ini;
}

int verbs_config_check_dev(const struct droce_device_cfg *cfg)
{
	if (cfg->name[0] == '\0' || memchr(cfg->name, '\0', sizeof(cfg->name)) == NULL)
		return -EINVAL;
	if ((cfg->devargs[0] == '\0') == (cfg->ring_pair[0] == '\0'))
		return -EINVAL;	/* exactly one way to get a port */
	if (cfg->mtu != 0 && cfg->mtu < 576)
		return -EINVAL;
	if (cfg->n_ipv6 > DROCE_DEVICE_MAX_IPV6 || cfg->n_neigh > DROCE_DEVICE_MAX_NEIGH)
		return -EINVAL;
	return 0;
}

static int copy_str(char *dst, size_t size, const char *src)
{
	if (strlen(src) >= size)
		return -EINVAL;
	strcpy(dst, src);
	return 0;
}

static int parse_ipv6_list(const char *val, struct droce_device_cfg *d)
{
	char buf[CFG_VALUE_LEN];
	char *save = NULL, *tok;

	if (copy_str(buf, sizeof(buf), val) < 0)
		return -EINVAL;
	for (tok = strtok_r(buf, ", \t", &save); tok != NULL; tok = strtok_r(NULL, ", \t", &save)) {
		if (d->n_ipv6 == DROCE_DEVICE_MAX_IPV6 ||
		    inet_pton(AF_INET6, tok, d->ipv6[d->n_ipv6]) != 1)
			return -EINVAL;
		d->n_ipv6++;
	}
	return 0;
}

/* ADDR@MAC: IPv4 (stored IPv4-mapped, as a GID) or IPv6. */
static int parse_neigh_one(char *tok, struct droce_neigh_cfg *n)
{
	struct rte_ether_addr ea;
	char *at = strchr(tok, '@');

	if (at == NULL)
		return -EINVAL;
	*at = '\0';
	memset(n, 0, sizeof(*n));
	if (inet_pton(AF_INET, tok, &n->addr[12]) == 1) {
		n->addr[10] = 0xff;
		n->addr[11] = 0xff;
	} else if (inet_pton(AF_INET6, tok, n->addr) != 1) {
		return -EINVAL;
	}
	if (rte_ether_unformat_addr(at + 1, &ea) != 0)
		return -EINVAL;
	memcpy(n->mac, ea.addr_bytes, 6);
	return 0;
}

static int parse_neigh_list(const char *val, struct droce_device_cfg *d)
{
	char buf[CFG_VALUE_LEN];
	char *save = NULL, *tok;

	if (copy_str(buf, sizeof(buf), val) < 0)
		return -EINVAL;
	for (tok = strtok_r(buf, ", \t", &save); tok != NULL; tok = strtok_r(NULL, ", \t", &save)) {
		if (d->n_neigh == DROCE_DEVICE_MAX_NEIGH ||
		    parse_neigh_one(tok, &d->neigh[d->n_neigh]) < 0)
			return -EINVAL;
		d->n_neigh++;
	}
	return 0;
}

static int parse_mtu(const char *val, uint16_t *mtu)
{
	char *end;
	unsigned long v = strtoul(val, &end, 10);

	if (end == val || *end != '\0' || v < 576 || v > 65535)
		return -EINVAL;
	*mtu = (uint16_t)v;
	return 0;
}

/* lcores_per_device: a count from 1, or "all". */
static int parse_lcores(const char *val, uint16_t *n)
{
	char *end;
	unsigned long v;

	if (strcmp(val, "all") == 0) {
		*n = DROCE_LCORES_ALL;
		return 0;
	}
	v = strtoul(val, &end, 10);
	if (end == val || *end != '\0' || v == 0 || v >= DROCE_LCORES_ALL)
		return -EINVAL;
	*n = (uint16_t)v;
	return 0;
}

/* One key of a [device] section. */
static int parse_dev_key(struct droce_device_cfg *d, const char *key, const char *val)
{
	struct rte_ether_addr ea;

	if (strcmp(key, "devargs") == 0)
		return copy_str(d->devargs, sizeof(d->devargs), val);
	if (strcmp(key, "ring_pair") == 0)
		return copy_str(d->ring_pair, sizeof(d->ring_pair), val);
	if (strcmp(key, "mac") == 0) {
		if (rte_ether_unformat_addr(val, &ea) != 0)
			return -EINVAL;
		memcpy(d->mac, ea.addr_bytes, 6);
		return 0;
	}
	if (strcmp(key, "ipv4") == 0) {
		d->has_ipv4 = true;
		return inet_pton(AF_INET, val, d->ipv4) == 1 ? 0 : -EINVAL;
	}
	if (strcmp(key, "ipv6") == 0)
		return parse_ipv6_list(val, d);
	if (strcmp(key, "mtu") == 0)
		return parse_mtu(val, &d->mtu);
	if (strcmp(key, "neigh") == 0)
		return parse_neigh_list(val, d);
	if (strcmp(key, "lcores_per_device") == 0)
		return parse_lcores(val, &d->lcores_per_device);
	return -EINVAL;
}

static int parse_device(struct rte_cfgfile *cf, const char *sec, struct droce_device_cfg *d)
{
	struct rte_cfgfile_entry ent[16];
	const char *name = sec + strlen("device");
	int i, n;

	memset(d, 0, sizeof(*d));
	while (*name == ' ' || *name == '\t')
		name++;
	if (copy_str(d->name, sizeof(d->name), name) < 0 || d->name[0] == '\0')
		return -EINVAL;
	n = rte_cfgfile_section_entries(cf, sec, ent, RTE_DIM(ent));
	if (n < 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (parse_dev_key(d, ent[i].name, ent[i].value) < 0) {
			VERBS_LOG(ERR, "[%s] bad key or value: %s = %s", sec, ent[i].name,
				  ent[i].value);
			return -EINVAL;
		}
	}
	if (d->mtu == 0)
		d->mtu = 1500;
	return verbs_config_check_dev(d);
}

/* A section kept as key = value pairs for a layer above verbs ([engine], [cm]). */
static int parse_kv(struct rte_cfgfile *cf, const char *section, struct verbs_kv *kv,
		    unsigned int max, unsigned int *n_out)
{
	struct rte_cfgfile_entry ent[VERBS_MAX_KV];
	int i, n;

	if (!rte_cfgfile_has_section(cf, section))
		return 0;
	n = rte_cfgfile_section_entries(cf, section, ent, RTE_MIN(max, RTE_DIM(ent)));
	if (n < 0 || n > (int)max || rte_cfgfile_section_num_entries(cf, section) > n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (copy_str(kv[i].key, sizeof(kv[i].key), ent[i].name) < 0 ||
		    copy_str(kv[i].value, sizeof(kv[i].value), ent[i].value) < 0)
			return -EINVAL;
	}
	*n_out = (unsigned int)n;
	return 0;
}

static int parse_globals(struct rte_cfgfile *cf, struct verbs_config *out)
{
	const char *v;
	int rc;

	v = rte_cfgfile_get_entry(cf, "eal", "args");
	if (v != NULL && copy_str(out->eal_args, sizeof(out->eal_args), v) < 0)
		return -EINVAL;
	rc = parse_kv(cf, "engine", out->engine, RTE_DIM(out->engine), &out->n_engine);
	if (rc == 0)
		rc = parse_kv(cf, "cm", out->cm, RTE_DIM(out->cm), &out->n_cm);
	if (rc == 0)
		rc = parse_kv(cf, "dcqcn", out->dcqcn, RTE_DIM(out->dcqcn), &out->n_dcqcn);
	return rc;
}

static int parse_cfgfile(struct rte_cfgfile *cf, struct verbs_config *out)
{
	char names[DROCE_MAX_DEVICES + 8][CFG_NAME_LEN];
	char *secs[RTE_DIM(names)];
	int i, n, rc;

	memset(out, 0, sizeof(*out));
	rc = parse_globals(cf, out);
	if (rc < 0)
		return rc;
	for (i = 0; i < (int)RTE_DIM(names); i++)
		secs[i] = names[i];
	n = rte_cfgfile_sections(cf, secs, RTE_DIM(names));
	for (i = 0; i < n; i++) {
		if (strncmp(secs[i], "device", 6) != 0)
			continue;
		if (out->n_dev == DROCE_MAX_DEVICES)
			return -ENOSPC;
		rc = parse_device(cf, secs[i], &out->dev[out->n_dev]);
		if (rc < 0)
			return rc;
		out->n_dev++;
	}
	return 0;
}

/* rte_cfgfile reads files only: give it the embedded text through a memfd. */
static struct rte_cfgfile *load_default(void)
{
	struct rte_cfgfile *cf = NULL;
	char path[64];
	size_t len = sizeof(default_ini) - 1;
	int fd = memfd_create("droce-default.ini", MFD_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (write(fd, default_ini, len) == (ssize_t)len) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		cf = rte_cfgfile_load(path, CFG_FLAG_EMPTY_VALUES);
	}
	close(fd);
	return cf;
}

int verbs_config_load(const char *path, struct verbs_config *out)
{
	struct rte_cfgfile *cf;
	int rc;

	cf = path != NULL ? rte_cfgfile_load(path, CFG_FLAG_EMPTY_VALUES) : load_default();
	if (cf == NULL) {
		VERBS_LOG(ERR, "cannot read configuration %s", path ? path : "(embedded)");
		return -EIO;
	}
	rc = parse_cfgfile(cf, out);
	rte_cfgfile_close(cf);
	if (rc < 0)
		VERBS_LOG(ERR, "bad configuration %s", path ? path : "(embedded)");
	return rc;
}
