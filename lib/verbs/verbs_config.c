/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Configuration: an INI file, checked line by line against the key table (verbs_config.h,
 * verbs_config_keys.c; doc/configuration.md). The embedded default is INI text too, so one
 * parser serves both; config/default.ini is a copy of it. A line is "[section]",
 * "key = value" or blank; ';' starts a comment ("\;" is a ';' in a value). Anything the table
 * does not allow is an error naming the file, the line and the key. [eal] args and the
 * [device NAME] keys are used here; [engine], [cm] and [dcqcn] are kept as key = value pairs
 * for the engine and lib/cm, which read them through the table (verbs_cfg_uint()).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>

#include "verbs_config.h"
#include "verbs_private.h"

#define CFG_VALUE_LEN 256

static const char default_ini[] =
	"; SPDX-License-Identifier: BSD-3-Clause\n"
	"; Copyright (c) 2026 The droce authors\n"
	";\n"
	"; droce embedded default: two devices joined in-process by a net_ring pair.\n"
	"; No NIC, no hugepages. Used when DROCE_CONFIG is not set; this file is a copy of it.\n"
	"; Every section and key: doc/configuration.md (droce-run --config-reference).\n"
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
	if ((cfg->vlan_on && cfg->vlan_id > 4094) || (cfg->pcp_fixed && cfg->pcp > 7))
		return -EINVAL;	/* 4095 is reserved (802.1Q 9.6) */
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

/* One key of a [device] section, already checked against the table. */
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
	if (strcmp(key, "mtu") == 0) {
		d->mtu = (uint16_t)strtoul(val[0] != '\0' ? val : "1500", NULL, 0);
		return 0;
	}
	if (strcmp(key, "neigh") == 0)
		return parse_neigh_list(val, d);
	if (strcmp(key, "vlan") == 0) {
		d->vlan_on = val[0] != '\0';
		d->vlan_id = (uint16_t)strtoul(val, NULL, 0);
		return 0;
	}
	if (strcmp(key, "pcp") == 0) {
		d->pcp_fixed = strcmp(val, "sl") != 0;
		d->pcp = d->pcp_fixed ? (uint8_t)strtoul(val, NULL, 0) : 0;
		return 0;
	}
	if (strcmp(key, "lcores_per_device") == 0) {
		d->lcores_per_device = strcmp(val, "all") == 0 ? DROCE_LCORES_ALL :
				       (uint16_t)strtoul(val, NULL, 0);
		return 0;
	}
	return -EINVAL;
}

enum { SEC_NONE, SEC_EAL, SEC_ENGINE, SEC_CM, SEC_DCQCN, SEC_DEVICE, SEC_KINDS };
static const char *const sec_kind[SEC_KINDS] = { "", "eal", "engine", "cm", "dcqcn", "device" };

struct ini {
	const char *path;		/* as messages name it */
	struct verbs_config *out;
	char *err;
	size_t len;
	unsigned int line;
	int kind;			/* of the current section */
	char section[CFG_VALUE_LEN];	/* its name as written */
	unsigned int sec_line;
	unsigned int first[SEC_KINDS];	/* line of each section seen (not [device]) */
	unsigned int dev_line[DROCE_MAX_DEVICES];
	unsigned int n_seen;		/* keys of the current section, for repeats */
	struct {
		const struct verbs_cfg_key *k;
		unsigned int line;
	} seen[64];
};

static int ini_err(struct ini *st, unsigned int line, const char *fmt, ...)
	__rte_format_printf(3, 4);
static int ini_err(struct ini *st, unsigned int line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(st->err, st->len, "%s:%u: ", st->path, line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < st->len)
		vsnprintf(st->err + n, st->len - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static char *strip(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* The [device NAME] section ending: what a device needs besides its keys. */
static int end_device(struct ini *st)
{
	struct droce_device_cfg *d;

	if (st->kind != SEC_DEVICE)
		return 0;
	d = &st->out->dev[st->out->n_dev - 1];
	if (d->mtu == 0)
		d->mtu = 1500;
	if ((d->devargs[0] == '\0') == (d->ring_pair[0] == '\0'))
		return ini_err(st, st->sec_line, "[%s] needs exactly one of devargs (a DPDK port) "
			       "and ring_pair (an in-process link)", st->section);
	return verbs_config_check_dev(d) == 0 ? 0 :
	       ini_err(st, st->sec_line, "[%s] is not a valid device", st->section);
}

static int new_device(struct ini *st, const char *name)
{
	struct verbs_config *out = st->out;
	unsigned int i;

	if (name[0] == '\0')
		return ini_err(st, st->line, "[device] needs a name: [device NAME]");
	if (out->n_dev == DROCE_MAX_DEVICES)
		return ini_err(st, st->line, "[%s]: more than %u devices", st->section,
			       DROCE_MAX_DEVICES);
	for (i = 0; i < out->n_dev; i++)
		if (strcmp(out->dev[i].name, name) == 0)
			return ini_err(st, st->line, "[%s] given twice (also line %u)",
				       st->section, st->dev_line[i]);
	memset(&out->dev[out->n_dev], 0, sizeof(out->dev[0]));
	if (copy_str(out->dev[out->n_dev].name, sizeof(out->dev[0].name), name) < 0)
		return ini_err(st, st->line, "[%s]: the name is longer than %zu characters",
			       st->section, sizeof(out->dev[0].name) - 1);
	st->dev_line[out->n_dev++] = st->line;
	return 0;
}

static int unknown_section(struct ini *st, const char *word, const char *rest)
{
	const char *s = verbs_cfg_suggest_section(word);

	if (strcmp(word, "device") == 0 || (s != NULL && strcmp(s, "device") == 0 && *rest))
		return ini_err(st, st->line, "unknown section [%s]; did you mean [device %s]?",
			       st->section, *rest ? rest : "NAME");
	if (s != NULL && strcmp(s, "device") != 0)
		return ini_err(st, st->line, "unknown section [%s]; did you mean [%s]?",
			       st->section, s);
	return ini_err(st, st->line, "unknown section [%s]; the sections are [eal], [engine], "
		       "[cm], [dcqcn] and [device NAME] (doc/configuration.md)", st->section);
}

static int section_line(struct ini *st, char *line)
{
	char *end = strchr(line, ']'), *name, *rest;
	size_t w;
	int rc = end_device(st), k;

	if (rc < 0)
		return rc;
	if (end == NULL)
		return ini_err(st, st->line, "'%s': no closing ']'", line);
	*end = '\0';
	name = strip(line + 1);
	if (copy_str(st->section, sizeof(st->section), name) < 0)
		return ini_err(st, st->line, "section name longer than %d characters",
			       CFG_VALUE_LEN - 1);
	st->sec_line = st->line;
	st->n_seen = 0;
	st->kind = SEC_NONE;
	w = strcspn(name, " \t");
	rest = strip(name + w);
	name[w] = '\0';
	for (k = SEC_EAL; k < SEC_KINDS; k++)
		if (strcmp(name, sec_kind[k]) == 0)
			break;
	if (k == SEC_DEVICE && rest[0] != '\0') {
		st->kind = SEC_DEVICE;
		return new_device(st, rest);
	}
	if (k == SEC_KINDS || k == SEC_DEVICE || rest[0] != '\0')
		return unknown_section(st, name, rest);
	if (st->first[k] != 0)
		return ini_err(st, st->line, "[%s] given twice (also line %u)", st->section,
			       st->first[k]);
	st->first[k] = st->line;
	st->kind = k;
	return 0;
}

static int unknown_key(struct ini *st, const char *key)
{
	const char *other = NULL;
	const char *s = verbs_cfg_suggest_key(sec_kind[st->kind], key, &other);

	if (s != NULL && other != NULL)
		return ini_err(st, st->line, "unknown key '%s' in [%s]; '%s' belongs in [%s%s]",
			       key, st->section, key, other,
			       strcmp(other, "device") == 0 ? " NAME" : "");
	if (s != NULL)
		return ini_err(st, st->line, "unknown key '%s' in [%s]; did you mean '%s'?", key,
			       st->section, s);
	return ini_err(st, st->line, "unknown key '%s' in [%s]; the keys of [%s%s] are in "
		       "doc/configuration.md", key, st->section, sec_kind[st->kind],
		       st->kind == SEC_DEVICE ? " NAME" : "");
}

static int store(struct ini *st, const char *key, const char *val)
{
	struct verbs_config *out = st->out;
	struct verbs_kv *kv;
	unsigned int *n;

	switch (st->kind) {
	case SEC_EAL:
		return copy_str(out->eal_args, sizeof(out->eal_args), val);
	case SEC_DEVICE:
		return parse_dev_key(&out->dev[out->n_dev - 1], key, val);
	case SEC_ENGINE:
		kv = out->engine;
		n = &out->n_engine;
		break;
	case SEC_CM:
		kv = out->cm;
		n = &out->n_cm;
		break;
	default:
		kv = out->dcqcn;
		n = &out->n_dcqcn;
		break;
	}
	if (*n == VERBS_MAX_KV || copy_str(kv[*n].key, sizeof(kv[*n].key), key) < 0 ||
	    copy_str(kv[*n].value, sizeof(kv[*n].value), val) < 0)
		return -EINVAL;
	(*n)++;
	return 0;
}

/* "\;" in a value is a ';'. */
static void unescape(char *v)
{
	char *r = v, *w = v;

	for (; *r != '\0'; r++)
		if (!(r[0] == '\\' && r[1] == ';'))
			*w++ = *r;
	*w = '\0';
}

static int entry_line(struct ini *st, char *line)
{
	const struct verbs_cfg_key *k;
	char *eq = strchr(line, '='), *key, *val, why[192];
	unsigned int i;

	if (eq == NULL)
		return ini_err(st, st->line, "'%s' is neither 'key = value' nor a [section]",
			       line);
	*eq = '\0';
	key = strip(line);
	val = strip(eq + 1);
	unescape(val);
	if (st->kind == SEC_NONE)
		return ini_err(st, st->line, "'%s' comes before any [section]", key);
	k = verbs_cfg_key_find(sec_kind[st->kind], key);
	if (k == NULL)
		return unknown_key(st, key);
	for (i = 0; i < st->n_seen; i++)
		if (st->seen[i].k == k && k->type != VERBS_CFG_IPV6 && k->type != VERBS_CFG_NEIGH)
			return ini_err(st, st->line, "'%s' given twice in [%s] (also line %u)",
				       key, st->section, st->seen[i].line);
	if (st->n_seen < RTE_DIM(st->seen)) {
		st->seen[st->n_seen].k = k;
		st->seen[st->n_seen++].line = st->line;
	}
	if (verbs_cfg_check(k, val, why, sizeof(why)) < 0)
		return ini_err(st, st->line, "bad value for '%s' in [%s]: %s", key, st->section,
			       why);
	if (store(st, key, val) < 0)
		return ini_err(st, st->line, "bad value for '%s' in [%s]: '%s'", key,
			       st->section, val);
	return 0;
}

static int parse_line(struct ini *st, char *line)
{
	char *c = line;

	while ((c = strchr(c, ';')) != NULL) {	/* a comment, unless escaped */
		if (c == line || c[-1] != '\\') {
			*c = '\0';
			break;
		}
		c++;
	}
	line = strip(line);
	if (line[0] == '\0')
		return 0;
	return line[0] == '[' ? section_line(st, line) : entry_line(st, line);
}

static int parse_text(char *text, struct ini *st)
{
	char *line = text, *nl;
	int rc = 0;

	memset(st->out, 0, sizeof(*st->out));
	while (rc == 0 && *line != '\0') {
		nl = strchr(line, '\n');
		if (nl != NULL)
			*nl = '\0';
		st->line++;
		rc = parse_line(st, line);
		if (nl == NULL)
			break;
		line = nl + 1;
	}
	return rc == 0 ? end_device(st) : rc;
}

/* The whole file (a pipe too), NUL-terminated; NULL with the reason in @p err. */
static char *read_file(const char *path, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL, *bigger;
	size_t n = 0, cap = 0;
	int rc = 0;

	while (f != NULL && rc == 0) {
		if (n + 1 >= cap) {
			cap = cap != 0 ? 2 * cap : 4096;
			bigger = cap <= (1u << 24) ? realloc(buf, cap) : NULL;
			if (bigger == NULL) {
				rc = EFBIG;
				break;
			}
			buf = bigger;
		}
		n += fread(buf + n, 1, cap - 1 - n, f);
		if (ferror(f))
			rc = errno != 0 ? errno : EIO;
		else if (feof(f))
			break;
	}
	if (f == NULL || rc != 0) {
		snprintf(err, len, "cannot read configuration %s: %s", path,
			 strerror(f == NULL ? errno : rc));
		free(buf);
		buf = NULL;
	} else {
		buf[n] = '\0';
	}
	if (f != NULL)
		fclose(f);
	return buf;
}

static int config_parse(const char *path, struct verbs_config *out, char *err, size_t len)
{
	struct ini *st = calloc(1, sizeof(*st));
	char *text;
	int rc;

	errno = 0;
	text = path != NULL ? read_file(path, err, len) : strdup(default_ini);
	if (st == NULL || text == NULL) {
		free(st);
		free(text);
		return -EIO;
	}
	st->path = path != NULL ? path : "(embedded default)";
	st->out = out;
	st->err = err;
	st->len = len;
	rc = parse_text(text, st);
	free(text);
	free(st);
	return rc;
}

int verbs_config_load(const char *path, struct verbs_config *out)
{
	char err[512];
	int rc = config_parse(path, out, err, sizeof(err));

	if (rc < 0)
		VERBS_LOG(ERR, "%s", err);
	return rc;
}

int verbs_config_check_file(const char *path, char *err, size_t len)
{
	struct verbs_config *c = malloc(sizeof(*c));
	int rc;

	if (c == NULL) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	rc = config_parse(path, c, err, len);
	free(c);
	return rc;
}

/* The line of [section] or of its @p key in @p text, 0 if none. */
static unsigned int line_in(char *text, const char *section, const char *key)
{
	char *line = text, *nl, *l, *eq;
	unsigned int n = 0;
	bool in = false;

	for (; line != NULL && *line != '\0'; line = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl != NULL)
			*nl = '\0';
		n++;
		line[strcspn(line, ";")] = '\0';
		l = strip(line);
		if (l[0] == '[') {
			l[strcspn(l, "]")] = '\0';
			in = strcmp(strip(l + 1), section) == 0;
			if (in && key == NULL)
				return n;
		} else if (in && key != NULL && (eq = strchr(l, '=')) != NULL) {
			*eq = '\0';
			if (strcmp(strip(l), key) == 0)
				return n;
		}
	}
	return 0;
}

void verbs_config_where(const char *section, const char *key, char *buf, size_t len)
{
	const char *path = verbs_config_path();
	char err[8];
	char *text = path != NULL ? read_file(path, err, sizeof(err)) : strdup(default_ini);
	unsigned int line = text != NULL ? line_in(text, section, key) : 0;

	if (path == NULL)
		path = "(embedded default)";
	if (line != 0)
		snprintf(buf, len, "%s:%u", path, line);
	else
		snprintf(buf, len, "%s", path);
	free(text);
}
