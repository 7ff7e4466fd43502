/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * --print-scenario: a scenario (usually derived from a capture) as an INI file that
 * replay_scenario_load() reads back, so a derived set-up can be saved, edited and replayed.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "replay.h"

#define HEX_PER_LINE 100	/* bytes per data line: rte_cfgfile values hold 255 chars */

static const char *const type_name[] = { "rc", "uc", "ud" };

static void print_mac(FILE *o, const char *key, const uint8_t m[6])
{
	fprintf(o, "%s = %02x:%02x:%02x:%02x:%02x:%02x\n", key, m[0], m[1], m[2], m[3], m[4],
		m[5]);
}

static void print_access(FILE *o, int acc)
{
	fprintf(o, "access =");
	if (acc & IBV_ACCESS_REMOTE_WRITE)
		fprintf(o, " remote_write");
	if (acc & IBV_ACCESS_REMOTE_READ)
		fprintf(o, " remote_read");
	if (acc & IBV_ACCESS_REMOTE_ATOMIC)
		fprintf(o, " remote_atomic");
	if ((acc & IBV_ACCESS_LOCAL_WRITE) &&
	    !(acc & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)))
		fprintf(o, " local_write");
	if (acc & DROCE_ACCESS_FLUSH_GLOBAL)
		fprintf(o, " flush_global");
	if (acc & DROCE_ACCESS_FLUSH_PERSISTENT)
		fprintf(o, " flush_persistent");
	if (acc == 0)
		fprintf(o, " none");
	fprintf(o, "\n");
}

static void print_qp(FILE *o, const struct replay_qp *q)
{
	fprintf(o, "\n[qp %#x]\ntype = %s\npeer_qpn = %#x\nrq_psn = %u\nsq_psn = %u\n",
		q->cap_qpn, type_name[q->type], q->peer_qpn, q->rq_psn, q->sq_psn);
	if (q->type == REPLAY_UD)
		fprintf(o, "qkey = %#x\n", q->qkey);
	fprintf(o, "recv_wrs = %u\nrecv_size = %u\nrecv_post = %s\nmax_dest_rd_atomic = %u\n"
		"min_rnr_timer = %u\n", q->recv_wrs, q->recv_size,
		q->recv_follow ? "capture" : "start", q->max_dest_rd_atomic, q->min_rnr_timer);
	print_access(o, q->access);	/* UD: unused */
}

/* Initial contents: zero, then a data line for every run of non-zero bytes. */
static void print_data(FILE *o, const struct replay_mr *m)
{
	uint32_t i = 0, j, end;

	fprintf(o, "fill = 0\n");
	while (i < m->length) {
		if (m->init[i] == 0) {
			i++;
			continue;
		}
		end = i + HEX_PER_LINE < m->length ? i + HEX_PER_LINE : m->length;
		fprintf(o, "data = %u:", i);
		for (j = i; j < end; j++)
			fprintf(o, "%02x", m->init[j]);
		fprintf(o, "\n");
		i = end;
	}
}

const char *replay_addr_str(const struct replay_scenario *sc, const uint8_t gid[16], char *buf,
			    size_t len)
{
	if (inet_ntop(sc->ipv6 ? AF_INET6 : AF_INET, sc->ipv6 ? gid : gid + 12, buf,
		      (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
	return buf;
}

void replay_scenario_print(FILE *o, const struct replay_scenario *sc, const char *origin)
{
	char addr[64];
	unsigned int i;

	fprintf(o, "; SPDX-License-Identifier: BSD-3-Clause\n; Copyright (c) 2026 The droce "
		"authors\n;\n; droce-replay scenario%s%s (keys: doc/droce-replay.md)\n[device]\n",
		origin != NULL ? ", derived from " : "", origin != NULL ? origin : "");
	print_mac(o, "mac", sc->mac);
	fprintf(o, "%s = %s\n", sc->ipv6 ? "ipv6" : "ipv4",
		replay_addr_str(sc, sc->gid, addr, sizeof(addr)));
	print_mac(o, "peer_mac", sc->peer_mac);
	fprintf(o, "%s = %s\nmtu = %u\n", sc->ipv6 ? "peer_ipv6" : "peer_ipv4",
		replay_addr_str(sc, sc->peer_gid, addr, sizeof(addr)), sc->mtu);
	for (i = 0; i < sc->n_qp; i++)
		print_qp(o, &sc->qp[i]);
	for (i = 0; i < sc->n_mr; i++) {
		const struct replay_mr *m = &sc->mr[i];

		fprintf(o, "\n[mr %#x]\nva = %#" PRIx64 "\nlength = %u\n", m->cap_rkey, m->cap_va,
			m->length);
		print_access(o, m->access);
		print_data(o, m);
	}
}
