/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The DPDK telemetry client of droce-stat: connect to a process's socket, send a command,
 * flatten the JSON reply into (key, value) entries. The replies are DPDK's own JSON
 * (rte_telemetry): objects, arrays, strings without escapes that matter here, integers, null.
 * Nested keys are joined with '.', array elements are keyed by their index.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "stat.h"

void tel_socket_path(char *out, size_t n, const char *prefix)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	/* As EAL places its runtime directory (eal_create_runtime_dir()). */
	if (getuid() == 0)
		snprintf(out, n, "/var/run/dpdk/%s/dpdk_telemetry.v2", prefix);
	else
		snprintf(out, n, "%s/dpdk/%s/dpdk_telemetry.v2", xdg != NULL ? xdg : "/tmp",
			 prefix);
}

int tel_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char hello[1024];
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    recv(fd, hello, sizeof(hello), 0) <= 0) {	/* {"version": ..., "pid": ...} */
		int rc = -errno;

		close(fd);
		return rc != 0 ? rc : -ECONNRESET;
	}
	return fd;
}

/* ---- JSON flattening ---- */

struct jp {
	const char *p;
	struct tel_reply *r;
};

static void skip_ws(struct jp *j)
{
	while (isspace((unsigned char)*j->p))
		j->p++;
}

static int add(struct jp *j, const char *key, const char *s, size_t len, bool num)
{
	struct tel_entry *e;

	if (j->r->n == TEL_MAX_ENTRIES)
		return -E2BIG;
	e = &j->r->e[j->r->n++];
	snprintf(e->key, sizeof(e->key), "%s", key);
	snprintf(e->str, sizeof(e->str), "%.*s", (int)RTE_MIN_SZ(len, sizeof(e->str) - 1), s);
	e->is_num = num;
	e->num = num ? strtoll(e->str, NULL, 10) : 0;
	return 0;
}

static int value(struct jp *j, const char *key);

static int string(struct jp *j, const char **s, size_t *len)
{
	const char *end;

	if (*j->p != '"')
		return -EPROTO;
	end = strchr(j->p + 1, '"');
	if (end == NULL)
		return -EPROTO;
	*s = j->p + 1;
	*len = (size_t)(end - *s);
	j->p = end + 1;
	return 0;
}

static int members(struct jp *j, const char *key, bool object)
{
	char sub[TEL_KEY_MAX];
	unsigned int i = 0;
	int rc;

	j->p++;	/* '{' or '[' */
	skip_ws(j);
	if (*j->p == (object ? '}' : ']')) {
		j->p++;
		return 0;
	}
	for (;; i++) {
		const char *s;
		size_t len;

		skip_ws(j);
		if (object) {
			rc = string(j, &s, &len);
			if (rc != 0)
				return rc;
			skip_ws(j);
			if (*j->p++ != ':')
				return -EPROTO;
			snprintf(sub, sizeof(sub), "%s%s%.*s", key, *key ? "." : "", (int)len, s);
		} else {
			snprintf(sub, sizeof(sub), "%s%s%u", key, *key ? "." : "", i);
		}
		rc = value(j, sub);
		if (rc != 0)
			return rc;
		skip_ws(j);
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p++ != (object ? '}' : ']'))
			return -EPROTO;
		return 0;
	}
}

static int value(struct jp *j, const char *key)
{
	const char *s;
	size_t len;
	int rc;

	skip_ws(j);
	switch (*j->p) {
	case '{':
		return members(j, key, true);
	case '[':
		return members(j, key, false);
	case '"':
		rc = string(j, &s, &len);
		return rc != 0 ? rc : add(j, key, s, len, false);
	case 'n':
		if (strncmp(j->p, "null", 4) != 0)
			return -EPROTO;
		j->p += 4;
		return -ENOENT;
	default:
		s = j->p;
		if (*j->p == '-')
			j->p++;
		while (isdigit((unsigned char)*j->p) || *j->p == '.' || *j->p == 'e' ||
		       *j->p == 'E' || *j->p == '+' || *j->p == '-')
			j->p++;
		if (j->p == s)
			return -EPROTO;
		return add(j, key, s, (size_t)(j->p - s), true);
	}
}

int tel_query(int fd, const char *cmd, struct tel_reply *r)
{
	static char buf[TEL_BUF];
	const char *s;
	size_t len;
	struct jp j = { .p = buf, .r = r };
	ssize_t n;
	int rc;

	r->n = 0;
	if (send(fd, cmd, strlen(cmd), 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -ECONNRESET;
	buf[n] = '\0';
	/* {"<cmd>": value} */
	skip_ws(&j);
	if (*j.p++ != '{')
		return -EPROTO;
	skip_ws(&j);
	rc = string(&j, &s, &len);
	if (rc != 0)
		return rc;
	skip_ws(&j);
	if (*j.p++ != ':')
		return -EPROTO;
	return value(&j, "");	/* -ENOENT: null, the command failed */
}

const struct tel_entry *tel_find(const struct tel_reply *r, const char *key)
{
	unsigned int i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->e[i].key, key) == 0)
			return &r->e[i];
	return NULL;
}
