/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-stat -r FILE.json: a QP's flight recording (doc/observability.md, "Flight recorder")
 * as a table, oldest frame first, time from the first. The JSON is droce's own
 * (lib/transport/transport_rec.c): a header line, then one line per frame; anything else is
 * refused with its line number.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "stat.h"

struct rec_frame {
	uint64_t us;
	char dir[3], state[8];
	unsigned int len, req_psn, comp_psn, epsn, cwnd, retry, rnr, rate_kbps;
};

static bool parse_frame(const char *line, struct rec_frame *f)
{
	int end = 0;

	return sscanf(line, " {\"time_us\": %" SCNu64 ", \"dir\": \"%2[rxt]\", \"len\": %u, "
		      "\"state\": \"%7[A-Z]\", \"req_psn\": %u, \"comp_psn\": %u, \"epsn\": %u, "
		      "\"cwnd\": %u, \"retry_left\": %u, \"rnr_left\": %u, \"rate_kbps\": %u}%n",
		      &f->us, f->dir, &f->len, f->state, &f->req_psn, &f->comp_psn, &f->epsn,
		      &f->cwnd, &f->retry, &f->rnr, &f->rate_kbps, &end) == 11 && end > 0 &&
	       (line[end] == ',' || line[end] == '\n' || line[end] == '\0') &&
	       (strcmp(f->dir, "rx") == 0 || strcmp(f->dir, "tx") == 0);
}

int stat_recording(const char *path)
{
	char line[512], dev[65], why[65], state[8];
	unsigned int qpn, dqpn, n = 0, lineno = 1;
	uint64_t recorded, overwritten, t0 = 0;
	struct rec_frame f;
	FILE *in = fopen(path, "r");

	if (in == NULL) {
		fprintf(stderr, "droce-stat: %s: %s\n", path, strerror(errno));
		return EXIT_UNKNOWN;
	}
	if (fgets(line, sizeof(line), in) == NULL ||
	    sscanf(line, "{\"device\": \"%64[^\"]\", \"qpn\": %u, \"dest_qpn\": %u, \"why\": "
		   "\"%64[^\"]\", \"state\": \"%7[A-Z]\", \"frames_recorded\": %" SCNu64
		   ", \"overwritten\": %" SCNu64 ",", dev, &qpn, &dqpn, why, state, &recorded,
		   &overwritten) != 7 || fgets(line, sizeof(line), in) == NULL ||
	    strcmp(line, " \"frames\": [\n") != 0)
		goto bad;
	printf("recording: %s QP %u -> %u, %s, state %s: %" PRIu64 " frames recorded, %" PRIu64
	       " kept (%" PRIu64 " overwritten)\n", dev, qpn, dqpn, why, state, recorded,
	       recorded - overwritten, overwritten);
	printf("%12s %3s %5s %-5s %9s %9s %9s %5s %5s %3s %10s\n", "time_us", "dir", "len", "state",
	       "req_psn", "comp_psn", "epsn", "cwnd", "retry", "rnr", "rate_mbps");
	for (lineno = 3; fgets(line, sizeof(line), in) != NULL; lineno++) {
		if (strcmp(line, " ]}\n") == 0)
			break;
		if (!parse_frame(line, &f) || (n > 0 && f.us < t0))
			goto bad;
		if (n++ == 0)
			t0 = f.us;
		printf("%12" PRIu64 " %3s %5u %-5s %9u %9u %9u %5u %5u %3u %10.1f\n", f.us - t0,
		       f.dir, f.len, f.state, f.req_psn, f.comp_psn, f.epsn, f.cwnd, f.retry, f.rnr,
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
