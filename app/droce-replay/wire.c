/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Wire mode. `--serve DEVARGS --map FILE`: droce's device on a real DPDK port (net_memif, an
 * af_packet endpoint, a NIC) with the scenario's responder QPs and MRs, their live names
 * (QPN, R_Key, address) written to FILE, the engine polled until SIGINT or SIGTERM: a device
 * under test in a process of its own. `--wire DEVARGS --map FILE`: the capture's requests
 * played onto that port, rewritten to the live names the map gives, what comes back
 * collected and compared as in-process (play.c, compare.c).
 *
 * The map, one line per name: "qp CAPTURED LIVE", "mr CAPTURED_RKEY LIVE_RKEY LIVE_VA" (hex),
 * after a first line "droce-replay map 1". A scenario QP or MR the map lacks is refused
 * before anything is sent.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "droce_engine.h"
#include "replay_dev.h"

#define MAP_MAGIC "droce-replay map 1"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int replay_map_write(const struct replay_dev *d, const char *path, char *err, size_t len)
{
	char tmp[4096];
	unsigned int i;
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return replay_errf(err, len, "%s: path too long", path);
	f = fopen(tmp, "w");
	if (f == NULL)
		return replay_errf(err, len, "%s: %s", tmp, strerror(errno));
	fprintf(f, "%s\n", MAP_MAGIC);
	for (i = 0; i < d->sc->n_qp; i++)
		fprintf(f, "qp %#x %#x\n", d->sc->qp[i].cap_qpn, d->live_qpn[i]);
	for (i = 0; i < d->sc->n_mr; i++)
		fprintf(f, "mr %#x %#x %#" PRIx64 "\n", d->sc->mr[i].cap_rkey, d->live_rkey[i],
			d->live_va[i]);
	if (fclose(f) != 0 || rename(tmp, path) != 0)	/* whole, or not there */
		return replay_errf(err, len, "%s: %s", path, strerror(errno));
	return 0;
}

int replay_map_read(struct replay_dev *d, const char *path, char *err, size_t len)
{
	bool qp_set[REPLAY_MAX_QP] = { false }, mr_set[REPLAY_MAX_MR] = { false };
	char line[256];
	unsigned int n = 0, i;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return replay_errf(err, len, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned int a, b;
		uint64_t va;
		const struct replay_qp *q;
		const struct replay_mr *m;

		n++;
		if (n == 1 && strcmp(line, MAP_MAGIC "\n") == 0)
			continue;
		if (n > 1 && sscanf(line, "qp %x %x", &a, &b) == 2 &&
		    (q = replay_scenario_qp(d->sc, a)) != NULL && b <= DROCE_QPN_MASK) {
			d->live_qpn[q - d->sc->qp] = b;
			qp_set[q - d->sc->qp] = true;
		} else if (n > 1 && sscanf(line, "mr %x %x %" SCNx64, &a, &b, &va) == 3 &&
			   (m = replay_scenario_mr(d->sc, a)) != NULL) {
			d->live_rkey[m - d->sc->mr] = b;
			d->live_va[m - d->sc->mr] = va;
			mr_set[m - d->sc->mr] = true;
		} else {
			fclose(f);
			return replay_errf(err, len, "%s:%u: not a line of a map of this capture's "
					   "scenario: %.80s", path, n, line);
		}
	}
	fclose(f);
	for (i = 0; i < d->sc->n_qp; i++)
		if (!qp_set[i])
			return replay_errf(err, len, "%s: QP %#x is not in the map: the device under "
					   "test has no such QP", path, d->sc->qp[i].cap_qpn);
	for (i = 0; i < d->sc->n_mr; i++)
		if (!mr_set[i])
			return replay_errf(err, len, "%s: MR %#x is not in the map: the device under "
					   "test has no such MR", path, d->sc->mr[i].cap_rkey);
	return 0;
}

void replay_serve_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

int replay_serve(struct replay_dev *d, FILE *o)
{
	struct ibv_wc wc[32];
	uint64_t ok = 0, bad = 0;
	int k;

	while (!stop) {
		int n = droce_engine_poll(d->ctx);
		struct timespec idle = { 0, 20000 };

		if (n < 0)
			return -1;
		if (n == 0)
			nanosleep(&idle, NULL);	/* the other process needs the CPU */
		k = droce_poll_cq(d->cq, 32, wc);
		for (; k > 0; k--) {
			if (wc[k - 1].status == IBV_WC_SUCCESS)
				ok++;
			else
				bad++;
		}
	}
	fprintf(o, "droce-replay --serve: stopped; receive completions: %" PRIu64 " ok, %"
		PRIu64 " error\n", ok, bad);
	return 0;
}
