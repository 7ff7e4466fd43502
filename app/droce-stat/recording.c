/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-stat -r FILE.json: a QP's flight recording (doc/observability.md, "Flight recorder")
 * as a table, oldest entry (frame or event) first, time from the first. The JSON is droce's
 * own (lib/transport/transport_rec.c): a header line, then one line per entry; anything else
 * is refused with its line number.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "stat.h"

/* One entry: a frame (what "rx" or "tx", its length) or an event (what its name). */
struct rec_entry {
	uint64_t us;
	char what[24], state[8], len[12];
	unsigned int req_psn, comp_psn, epsn, cwnd, retry, rnr, rate_kbps;
};

static bool parse_entry(const char *line, struct rec_entry *e)
{
	unsigned int len;
	int at = 0, end = 0;

	if (sscanf(line, " {\"time_us\": %" SCNu64 ", %n", &e->us, &at) != 1 || at == 0)
		return false;
	line += at;
	at = 0;
	if (sscanf(line, "\"dir\": \"%2[rxt]\", \"len\": %u, %n", e->what, &len, &at) == 2 &&
	    at > 0 && (strcmp(e->what, "rx") == 0 || strcmp(e->what, "tx") == 0))
		snprintf(e->len, sizeof(e->len), "%u", len);
	else if (at = 0, sscanf(line, "\"event\": \"%23[a-z_]\", %n", e->what, &at) == 1 &&
		 at > 0)
		snprintf(e->len, sizeof(e->len), "-");
	else
		return false;
	line += at;
	return sscanf(line, "\"state\": \"%7[A-Z]\", \"req_psn\": %u, \"comp_psn\": %u, "
		      "\"epsn\": %u, \"cwnd\": %u, \"retry_left\": %u, \"rnr_left\": %u, "
		      "\"rate_kbps\": %u}%n", e->state, &e->req_psn, &e->comp_psn, &e->epsn,
		      &e->cwnd, &e->retry, &e->rnr, &e->rate_kbps, &end) == 8 && end > 0 &&
	       (line[end] == ',' || line[end] == '\n' || line[end] == '\0');
}

int stat_recording(const char *path)
{
	char line[512], dev[65], why[65], state[8];
	unsigned int qpn, dqpn, n = 0, lineno = 1;
	uint64_t recorded, overwritten, t0 = 0;
	struct rec_entry f;
	FILE *in = fopen(path, "r");

	if (in == NULL) {
		fprintf(stderr, "droce-stat: %s: %s\n", path, strerror(errno));
		return EXIT_UNKNOWN;
	}
	if (fgets(line, sizeof(line), in) == NULL ||
	    sscanf(line, "{\"device\": \"%64[^\"]\", \"qpn\": %u, \"dest_qpn\": %u, \"why\": "
		   "\"%64[^\"]\", \"state\": \"%7[A-Z]\", \"recorded\": %" SCNu64
		   ", \"overwritten\": %" SCNu64 ",", dev, &qpn, &dqpn, why, state, &recorded,
		   &overwritten) != 7 || fgets(line, sizeof(line), in) == NULL ||
	    strcmp(line, " \"entries\": [\n") != 0)
		goto bad;
	printf("recording: %s QP %u -> %u, %s, state %s: %" PRIu64 " entries recorded, %" PRIu64
	       " kept (%" PRIu64 " overwritten)\n", dev, qpn, dqpn, why, state, recorded,
	       recorded - overwritten, overwritten);
	printf("%12s %-18s %5s %-5s %9s %9s %9s %5s %5s %3s %10s\n", "time_us", "what", "len", "state",
	       "req_psn", "comp_psn", "epsn", "cwnd", "retry", "rnr", "rate_mbps");
	for (lineno = 3; fgets(line, sizeof(line), in) != NULL; lineno++) {
		if (strcmp(line, " ]}\n") == 0)
			break;
		if (!parse_entry(line, &f) || (n > 0 && f.us < t0))
			goto bad;
		if (n++ == 0)
			t0 = f.us;
		printf("%12" PRIu64 " %-18s %5s %-5s %9u %9u %9u %5u %5u %3u %10.1f\n", f.us - t0,
		       f.what, f.len, f.state, f.req_psn, f.comp_psn, f.epsn, f.cwnd, f.retry, f.rnr,
		       f.rate_kbps / 1000.0);
	}
	if (strcmp(line, " ]}\n") != 0 || n != recorded - overwritten)
		goto bad;
	fclose(in);
	return EXIT_OK;
bad:
	fprintf(stderr, "droce-stat: %s:%u: not a droce flight recording (doc/observability.md)\n",
		path, lineno);
	fclose(in);
	return EXIT_PROTOCOL;
}
