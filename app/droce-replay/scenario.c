/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The scenario file: INI read with rte_cfgfile (no EAL needed, so the libFuzzer target in
 * test/replay links this file alone). Sections: [device], [qp CAPTURED_QPN], [mr CAPTURED_RKEY];
 * keys in doc/droce-replay.md. Every unknown section, unknown key and bad value is an error
 * that names the file, the line, the section, the key and the value ("did you mean" for a
 * near miss of a key).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rte_cfgfile.h>

#include "replay.h"

struct pctx {
	struct replay_scenario *sc;
	const char *path;
	const char *sec;
	const char *key;	/* the key being parsed, NULL between keys */
	char *err;
	size_t len;
	uint64_t mem;	/* bytes of MR so far */
	unsigned int addr;	/* ADDR_* keys given */
};

enum { ADDR_V4 = 1, ADDR_PEER_V4 = 2, ADDR_V6 = 4, ADDR_PEER_V6 = 8 };

static char *strip(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strcspn(s, ";\r\n");
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	s[n] = '\0';
	return s;
}

/* The line of [sec] (@p key NULL) or of its first @p key in the file; 0 if not found. */
static unsigned int line_of(const char *path, const char *sec, const char *key)
{
	char buf[512], *l, *eq;
	unsigned int n = 0, found = 0;
	bool in = false;
	FILE *f = fopen(path, "r");

	while (f != NULL && found == 0 && fgets(buf, sizeof(buf), f) != NULL) {
		n++;
		l = strip(buf);
		if (l[0] == '[') {
			l[strcspn(l, "]")] = '\0';
			in = strcmp(strip(l + 1), sec) == 0;
			if (in && key == NULL)
				found = n;
		} else if (in && key != NULL && (eq = strchr(l, '=')) != NULL) {
			*eq = '\0';
			if (strcmp(strip(l), key) == 0)
				found = n;
		}
	}
	if (f != NULL)
		fclose(f);
	return found;
}

int replay_errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* "PATH:LINE: [sec] what", LINE that of the key being parsed or of the section. */
static int fail(struct pctx *p, const char *fmt, ...)
{
	va_list ap;
	unsigned int line = p->sec[0] != '\0' ? line_of(p->path, p->sec, p->key) : 0;
	int n = line != 0 ? snprintf(p->err, p->len, "%s:%u: [%s] ", p->path, line, p->sec) :
		snprintf(p->err, p->len, "%s: [%s] ", p->path, p->sec);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->len)
		vsnprintf(p->err + n, p->len - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Levenshtein distance of two short names (UINT_MAX past 32 characters). */
static unsigned int distance(const char *a, const char *b)
{
	unsigned int row[33], i, j, la = strlen(a), lb = strlen(b);

	if (la > 32 || lb > 32)
		return UINT32_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		unsigned int diag = row[0], up;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			up = row[j];
			row[j] = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < row[j])
				row[j] = up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag = up;
		}
	}
	return row[lb];
}

/* @p k not among @p keys (NULL-terminated): "unknown key", with the nearest if near. */
static int unknown_key(struct pctx *p, const char *const *keys, const char *k, const char *v)
{
	const char *best = NULL;
	unsigned int d, best_d = 3;

	for (; *keys != NULL; keys++) {
		if (strcmp(*keys, k) == 0)
			return 1;	/* known */
		d = distance(k, *keys);
		if (d < best_d && 2 * d < strlen(k)) {
			best = *keys;
			best_d = d;
		}
	}
	if (best != NULL)
		return fail(p, "unknown key: %s = %s; did you mean '%s'?", k, v, best);
	return fail(p, "unknown key: %s = %s (doc/droce-replay.md lists the keys)", k, v);
}

static const char *const device_keys[] = { "mac", "peer_mac", "ipv4", "peer_ipv4", "ipv6",
					   "peer_ipv6", "mtu", NULL };
static const char *const qp_keys[] = { "type", "peer_qpn", "rq_psn", "sq_psn", "qkey",
				       "recv_wrs", "recv_size", "max_dest_rd_atomic",
				       "min_rnr_timer", "access", "recv_post", NULL };
static const char *const mr_keys[] = { "va", "length", "access", "fill", "data", NULL };

/* An unsigned number (decimal or 0x hex) no larger than @p max. */
static int num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (*s == '\0' || *s == '-')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno != 0 || *end != '\0' || *v > max) ? -1 : 0;
}

static int mac(const char *s, uint8_t out[6])
{
	unsigned int b[6], i;
	char tail;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return -1;
	for (i = 0; i < 6; i++)
		out[i] = (uint8_t)b[i];
	return 0;
}

bool replay_ipv6_ok(const uint8_t a[16])
{
	static const uint8_t zero[16];
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(a, zero, 16) != 0 && a[0] != 0xff && memcmp(a, v4mapped, 12) != 0;
}

/* An address key: IPv4 into its mapped GID, or IPv6 (a unicast, non-IPv4-mapped one). */
static int addr_key(struct pctx *p, const char *k, const char *v)
{
	static const char *const name[] = { "ipv4", "peer_ipv4", "ipv6", "peer_ipv6" };
	struct replay_scenario *sc = p->sc;
	unsigned int i;

	for (i = 0; i < 4 && strcmp(k, name[i]) != 0; i++)
		;
	if (i == 4)
		return 1;	/* not an address key */
	if (i < 2) {
		uint8_t *g = i == 0 ? sc->gid : sc->peer_gid;
		uint8_t a[4];

		if (inet_pton(AF_INET, v, a) != 1)
			return fail(p, "bad key or value: %s = %s", k, v);
		memset(g, 0, 10);
		g[10] = g[11] = 0xff;
		memcpy(g + 12, a, 4);
	} else {
		uint8_t a[16];

		if (inet_pton(AF_INET6, v, a) != 1 || !replay_ipv6_ok(a))
			return fail(p, "bad key or value: %s = %s (a unicast IPv6 address, not "
				    "::ffff:IPv4: use ipv4 then)", k, v);
		memcpy(i == 2 ? sc->gid : sc->peer_gid, a, 16);
	}
	p->addr |= 1u << i;
	return 0;
}

static int device_key(struct pctx *p, const char *k, const char *v)
{
	struct replay_scenario *sc = p->sc;
	uint64_t n;
	int rc;

	p->key = k;
	if (unknown_key(p, device_keys, k, v) < 0)
		return -1;
	if (strcmp(k, "mac") == 0 && mac(v, sc->mac) == 0)
		return 0;
	if (strcmp(k, "peer_mac") == 0 && mac(v, sc->peer_mac) == 0)
		return 0;
	rc = addr_key(p, k, v);
	if (rc <= 0)
		return rc;
	if (strcmp(k, "mtu") == 0 && num(v, 9216, &n) == 0 && n >= 576) {
		sc->mtu = (uint16_t)n;
		return 0;
	}
	return fail(p, "bad key or value: %s = %s", k, v);
}

static int qp_type(const char *v, enum replay_qp_type *t)
{
	if (strcmp(v, "rc") == 0)
		*t = REPLAY_RC;
	else if (strcmp(v, "uc") == 0)
		*t = REPLAY_UC;
	else if (strcmp(v, "ud") == 0)
		*t = REPLAY_UD;
	else
		return -1;
	return 0;
}

static int access_flags(const char *v, int *acc);

static int qp_key(struct pctx *p, struct replay_qp *q, const char *k, const char *v)
{
	uint64_t n = 0;
	int bad;

	p->key = k;
	if (unknown_key(p, qp_keys, k, v) < 0)
		return -1;
	if (strcmp(k, "type") == 0)
		bad = qp_type(v, &q->type);
	else if (strcmp(k, "peer_qpn") == 0 && (bad = num(v, DROCE_QPN_MASK, &n)) == 0)
		q->peer_qpn = (uint32_t)n;
	else if (strcmp(k, "rq_psn") == 0 && (bad = num(v, DROCE_PSN_MASK, &n)) == 0)
		q->rq_psn = (uint32_t)n;
	else if (strcmp(k, "sq_psn") == 0 && (bad = num(v, DROCE_PSN_MASK, &n)) == 0)
		q->sq_psn = (uint32_t)n;
	else if (strcmp(k, "qkey") == 0 && (bad = num(v, UINT32_MAX, &n)) == 0)
		q->qkey = (uint32_t)n;
	else if (strcmp(k, "recv_wrs") == 0 && (bad = num(v, REPLAY_MAX_RECV_WRS, &n)) == 0)
		q->recv_wrs = (uint32_t)n;
	else if (strcmp(k, "recv_size") == 0 && (bad = num(v, REPLAY_MAX_RECV_SIZE, &n)) == 0)
		q->recv_size = (uint32_t)n;
	else if (strcmp(k, "max_dest_rd_atomic") == 0 && (bad = num(v, 255, &n)) == 0)
		q->max_dest_rd_atomic = (uint8_t)n;
	else if (strcmp(k, "min_rnr_timer") == 0 && (bad = num(v, 31, &n)) == 0)
		q->min_rnr_timer = (uint8_t)n;
	else if (strcmp(k, "access") == 0 && access_flags(v, &q->access) == 0)
		bad = 0;
	else if (strcmp(k, "recv_post") == 0 && (strcmp(v, "start") == 0 ||
						  strcmp(v, "capture") == 0)) {
		q->recv_follow = strcmp(v, "capture") == 0;
		bad = 0;
	} else
		bad = -1;
	return bad != 0 ? fail(p, "bad key or value: %s = %s", k, v) : 0;
}

static int access_flags(const char *v, int *acc)
{
	char buf[CFG_VALUE_LEN];
	char *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", v);
	*acc = 0;
	for (tok = strtok_r(buf, ", \t", &save); tok != NULL; tok = strtok_r(NULL, ", \t", &save)) {
		if (strcmp(tok, "remote_write") == 0)
			*acc |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
		else if (strcmp(tok, "remote_read") == 0)
			*acc |= IBV_ACCESS_REMOTE_READ;
		else if (strcmp(tok, "remote_atomic") == 0)
			*acc |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
		else if (strcmp(tok, "local_write") == 0)
			*acc |= IBV_ACCESS_LOCAL_WRITE;
		else if (strcmp(tok, "flush_global") == 0)
			*acc |= DROCE_ACCESS_FLUSH_GLOBAL;
		else if (strcmp(tok, "flush_persistent") == 0)
			*acc |= DROCE_ACCESS_FLUSH_PERSISTENT;
		else if (strcmp(tok, "none") != 0)
			return -1;
	}
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* data = OFFSET:HEX, applied after fill (so both may appear in any order). */
static int mr_data(struct pctx *p, struct replay_mr *m, const char *v)
{
	char off_s[32];
	const char *colon = strchr(v, ':'), *h;
	uint64_t off;
	size_t n, i;

	if (colon == NULL || (size_t)(colon - v) >= sizeof(off_s))
		return fail(p, "data must be OFFSET:HEXBYTES: %s", v);
	memcpy(off_s, v, colon - v);
	off_s[colon - v] = '\0';
	h = colon + 1;
	n = strlen(h);
	if (num(off_s, m->length, &off) != 0 || n == 0 || n % 2 != 0 || off + n / 2 > m->length)
		return fail(p, "data outside the MR or not whole hex bytes: %s", v);
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(h[2 * i]), lo = hexval(h[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return fail(p, "data is not hex: %s", v);
		m->init[off + i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* Pass 1 of an [mr]: va, length, access, fill. */
static int mr_key(struct pctx *p, struct replay_mr *m, const char *k, const char *v, int *fill)
{
	uint64_t n = 0;

	p->key = k;
	if (unknown_key(p, mr_keys, k, v) < 0)
		return -1;
	if (strcmp(k, "va") == 0 && num(v, UINT64_MAX, &n) == 0)
		m->cap_va = n;
	else if (strcmp(k, "length") == 0 && num(v, REPLAY_MAX_MR_LEN, &n) == 0 && n > 0)
		m->length = (uint32_t)n;
	else if (strcmp(k, "access") == 0 && access_flags(v, &m->access) == 0)
		return 0;
	else if (strcmp(k, "fill") == 0 && num(v, 255, &n) == 0)
		*fill = (int)n;
	else if (strcmp(k, "data") != 0)
		return fail(p, "bad key or value: %s = %s", k, v);
	return 0;
}

static int section_entries(struct pctx *p, struct rte_cfgfile *cf,
			   struct rte_cfgfile_entry **ent)
{
	int n = rte_cfgfile_section_num_entries(cf, p->sec);

	if (n < 0)
		return fail(p, "cannot read the entries");
	*ent = calloc(n > 0 ? n : 1, sizeof(**ent));
	if (*ent == NULL)
		return fail(p, "out of memory");
	if (n > 0 && rte_cfgfile_section_entries(cf, p->sec, *ent, n) != n) {
		free(*ent);
		return fail(p, "cannot read the entries");
	}
	return n;
}

static int parse_mr(struct pctx *p, struct rte_cfgfile *cf, uint32_t rkey)
{
	struct replay_mr *m = &p->sc->mr[p->sc->n_mr];
	struct rte_cfgfile_entry *ent;
	int n = section_entries(p, cf, &ent), i, fill = 0, rc = 0;

	if (n < 0)
		return -1;
	m->cap_rkey = rkey;
	for (i = 0; i < n && rc == 0; i++)
		rc = mr_key(p, m, ent[i].name, ent[i].value, &fill);
	p->key = NULL;
	if (rc == 0 && m->length == 0)
		rc = fail(p, "length is missing");
	if (rc == 0 && m->cap_va + m->length < m->cap_va)
		rc = fail(p, "va + length wraps");
	if (rc == 0 && p->mem + m->length > REPLAY_MAX_MEM)
		rc = fail(p, "the MRs add up to more than %u MiB", (unsigned int)(REPLAY_MAX_MEM >> 20));
	if (rc == 0 && (m->init = malloc(m->length)) == NULL)
		rc = fail(p, "cannot allocate %u bytes", m->length);
	if (rc == 0) {
		p->sc->n_mr++;
		p->mem += m->length;
		memset(m->init, fill, m->length);
	}
	for (i = 0; i < n && rc == 0; i++)
		if (strcmp(ent[i].name, "data") == 0) {
			p->key = "data";
			rc = mr_data(p, m, ent[i].value);
		}
	free(ent);
	return rc;
}

static int parse_qp(struct pctx *p, struct rte_cfgfile *cf, uint32_t qpn)
{
	struct replay_qp *q = &p->sc->qp[p->sc->n_qp];
	struct rte_cfgfile_entry *ent;
	int n = section_entries(p, cf, &ent), i, rc = 0;

	if (n < 0)
		return -1;
	q->cap_qpn = qpn;
	q->max_dest_rd_atomic = 16;
	q->min_rnr_timer = REPLAY_MIN_RNR_TIMER;
	q->access = REPLAY_QP_ACCESS;
	for (i = 0; i < n && rc == 0; i++)
		rc = qp_key(p, q, ent[i].name, ent[i].value);
	free(ent);
	p->key = NULL;
	if (rc == 0 && q->recv_follow && q->type != REPLAY_RC)
		rc = fail(p, "recv_post = capture is for RC QPs (only RC has RNR NAKs)");
	if (rc == 0 && q->type == REPLAY_UD && q->recv_wrs > 0 && q->recv_size < DROCE_GRH_LEN)
		rc = fail(p, "a UD receive buffer holds the 40-byte GRH: recv_size >= 40");
	if (rc == 0)
		p->sc->n_qp++;
	return rc;
}

static int parse_device(struct pctx *p, struct rte_cfgfile *cf)
{
	struct rte_cfgfile_entry *ent;
	int n = section_entries(p, cf, &ent), i, rc = 0;

	if (n < 0)
		return -1;
	for (i = 0; i < n && rc == 0; i++)
		rc = device_key(p, ent[i].name, ent[i].value);
	free(ent);
	return rc;
}

/* "qp 0x32" / "mr 0x2421": the captured number after the word. */
static int section_number(struct pctx *p, const char *word, uint64_t max, uint32_t *v)
{
	const char *s = p->sec + strlen(word);
	uint64_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	if (num(s, max, &n) != 0)
		return fail(p, "expected [%s NUMBER] (at most %#" PRIx64 ")", word, max);
	*v = (uint32_t)n;
	return 0;
}

static int parse_section(struct pctx *p, struct rte_cfgfile *cf)
{
	struct replay_scenario *sc = p->sc;
	uint32_t v = 0;

	if (strcmp(p->sec, "device") == 0)
		return parse_device(p, cf);
	if (strncmp(p->sec, "qp", 2) == 0 && (p->sec[2] == ' ' || p->sec[2] == '\t')) {
		if (section_number(p, "qp", DROCE_QPN_MASK, &v) != 0)
			return -1;
		if (replay_scenario_qp(sc, v) != NULL)
			return fail(p, "QP %#x defined twice", v);
		if (sc->n_qp == REPLAY_MAX_QP)
			return fail(p, "more than %d QPs", REPLAY_MAX_QP);
		return parse_qp(p, cf, v);
	}
	if (strncmp(p->sec, "mr", 2) == 0 && (p->sec[2] == ' ' || p->sec[2] == '\t')) {
		if (section_number(p, "mr", UINT32_MAX, &v) != 0)
			return -1;
		if (replay_scenario_mr(sc, v) != NULL)
			return fail(p, "MR %#x defined twice", v);
		if (sc->n_mr == REPLAY_MAX_MR)
			return fail(p, "more than %d MRs", REPLAY_MAX_MR);
		return parse_mr(p, cf, v);
	}
	return fail(p, "unknown section (expected [device], [qp QPN], [mr RKEY])");
}

static int check_device(struct pctx *p)
{
	static const uint8_t zero[6];
	static const uint8_t v4any[16] = { [10] = 0xff, [11] = 0xff };

	p->sec = "device";
	p->key = NULL;
	if (p->addr != (ADDR_V4 | ADDR_PEER_V4) && p->addr != (ADDR_V6 | ADDR_PEER_V6))
		return fail(p, "ipv4 and peer_ipv4, or ipv6 and peer_ipv6, are required (one IP "
			    "version)");
	p->sc->ipv6 = p->addr == (ADDR_V6 | ADDR_PEER_V6);
	if (!p->sc->ipv6 && (memcmp(p->sc->gid, v4any, 16) == 0 ||
			     memcmp(p->sc->peer_gid, v4any, 16) == 0))
		return fail(p, "ipv4 and peer_ipv4 must not be 0.0.0.0");
	if (memcmp(p->sc->mac, zero, 6) == 0 || memcmp(p->sc->peer_mac, zero, 6) == 0)
		return fail(p, "mac and peer_mac are required");
	if (p->sc->n_qp == 0) {
		snprintf(p->err, p->len, "%s: no [qp QPN] section: droce would have no QP", p->path);
		return -1;
	}
	return 0;
}

static bool duplicate(struct pctx *p, char **names, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (strcmp(names[j], p->sec) == 0)
			return true;
	return false;
}

static int parse_file(struct pctx *p, struct rte_cfgfile *cf)
{
	int n = rte_cfgfile_num_sections(cf, NULL, 0), i, rc = 0;
	char **names;

	if (n <= 0 || !rte_cfgfile_has_section(cf, "device")) {
		snprintf(p->err, p->len, "%s: no [device] section", p->path);
		return -1;
	}
	names = calloc(n, sizeof(*names));
	for (i = 0; names != NULL && i < n; i++)
		names[i] = calloc(1, CFG_NAME_LEN);
	if (names == NULL || names[n - 1] == NULL)
		rc = -1;
	if (rc == 0 && rte_cfgfile_sections(cf, names, n) != n)
		rc = -1;
	if (rc != 0)
		snprintf(p->err, p->len, "%s: cannot read the sections", p->path);
	for (i = 0; rc == 0 && i < n; i++) {
		p->sec = names[i];
		p->key = NULL;
		rc = duplicate(p, names, i) ? fail(p, "section appears twice") :
			parse_section(p, cf);
	}
	for (i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
	return rc == 0 ? check_device(p) : rc;
}

int replay_scenario_load(const char *path, struct replay_scenario *sc, char *err, size_t len)
{
	struct pctx p = { .sc = sc, .path = path, .sec = "", .err = err, .len = len };
	struct rte_cfgfile *cf;
	int rc;

	memset(sc, 0, sizeof(*sc));
	sc->mtu = 1500;
	cf = rte_cfgfile_load(path, 0);
	if (cf == NULL) {
		snprintf(err, len, "%s: cannot read it as INI (missing, unreadable, or a line that "
			 "is neither [section], key = value nor a ; comment)", path);
		return -1;
	}
	rc = parse_file(&p, cf);
	rte_cfgfile_close(cf);
	if (rc != 0)
		replay_scenario_free(sc);
	return rc;
}

void replay_scenario_free(struct replay_scenario *sc)
{
	unsigned int i;

	for (i = 0; i < sc->n_mr; i++) {
		free(sc->mr[i].init);
		sc->mr[i].init = NULL;
	}
	sc->n_mr = 0;
	sc->n_qp = 0;
}

struct replay_qp *replay_scenario_qp(const struct replay_scenario *sc, uint32_t cap_qpn)
{
	unsigned int i;

	for (i = 0; i < sc->n_qp; i++)
		if (sc->qp[i].cap_qpn == cap_qpn)
			return (struct replay_qp *)(uintptr_t)&sc->qp[i];	/* as strchr() */
	return NULL;
}

struct replay_mr *replay_scenario_mr(const struct replay_scenario *sc, uint32_t cap_rkey)
{
	unsigned int i;

	for (i = 0; i < sc->n_mr; i++)
		if (sc->mr[i].cap_rkey == cap_rkey)
			return (struct replay_mr *)(uintptr_t)&sc->mr[i];
	return NULL;
}
