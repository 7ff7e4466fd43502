/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-stat internals: a DPDK telemetry client (tel.c) and the printing (droce_stat.c).
 * No EAL: droce-stat only talks to the telemetry socket of a running droce process.
 */
#ifndef DROCE_STAT_H
#define DROCE_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEL_BUF (64 * 1024)		/* DPDK 22.11 replies are at most 16 KiB */
#define TEL_MAX_ENTRIES 1024
#define TEL_KEY_MAX 96
#define RTE_MIN_SZ(a, b) ((a) < (b) ? (a) : (b))

/** Exit codes (doc/observability.md). */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,		/* bad options */
	EXIT_NO_PROCESS = 2,	/* no telemetry socket, or the process does not run droce */
	EXIT_UNKNOWN = 3,	/* no such device or QP */
	EXIT_PROTOCOL = 4,	/* the process answered something droce-stat cannot read */
};

/** One value of a reply, its key flattened ("1.busy_cycles"; array elements by index). */
struct tel_entry {
	char key[TEL_KEY_MAX];
	char str[64];			/**< the value as text */
	bool is_num;
	int64_t num;
};

struct tel_reply {
	unsigned int n;
	struct tel_entry e[TEL_MAX_ENTRIES];
};

/** The telemetry socket of the DPDK process with --file-prefix @p prefix. */
void tel_socket_path(char *out, size_t n, const char *prefix);
/** @return a connected socket, or -errno. */
int tel_connect(const char *path);
/** Send @p cmd and flatten the reply into @p r.
 *  @return 0, -ENOENT (null reply: the command failed), -EPROTO, -errno. */
int tel_query(int fd, const char *cmd, struct tel_reply *r);
/** Print the flight recording @p path (its JSON) as a table (recording.c). @return the exit
 *  status: EXIT_OK, EXIT_UNKNOWN (cannot open), EXIT_PROTOCOL (not a recording). */
int stat_recording(const char *path);
/** The entry keyed @p key, or NULL. */
const struct tel_entry *tel_find(const struct tel_reply *r, const char *key);

#endif
