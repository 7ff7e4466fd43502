/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * libFuzzer target: droce-replay's capture reader and derived set-up (app/droce-replay/
 * capture.c, derive.c) on any bytes taken as a pcap file — the capture is user input too.
 * A set-up that was derived must print as a scenario that the scenario parser accepts with
 * the same QPs, MRs and contents (what --print-scenario promises). The requester's work
 * (requester.c, --requester) is derived from it too: refused with a reason, or a WR list
 * whose bytes lie inside the local buffer and whose QPs exist. Then --loop's passes
 * (loop.c): refused with a reason, or three passes whose requests and responses parse.
 */
#include "fuzz_common.h"

static void fuzz_requester(const struct replay_capture *c, const struct replay_scenario *sc)
{
	static struct replay_scenario rsc;
	struct replay_work w;
	char err[REPLAY_ERR_LEN] = "";
	unsigned int i;

	if (replay_req_derive(c, sc, &w, err, sizeof(err)) != 0 ||
	    replay_req_scenario(sc, &w, &rsc, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			abort();
		replay_work_free(&w);
		return;
	}
	for (i = 0; i < w.n; i++)
		if (w.wr[i].qp >= sc->n_qp || w.wr[i].off + w.wr[i].len > w.len ||
		    w.wr[i].frame == 0 || w.wr[i].frame > c->n)
			abort();
	replay_work_free(&w);
}

static void fuzz_loop(struct replay_capture *c, struct replay_scenario *sc)
{
	char err[REPLAY_ERR_LEN] = "";
	unsigned int n = c->n, i;

	if (replay_loop(c, sc, 3, err, sizeof(err)) != 0) {
		if (err[0] == '\0' || c->n != n)
			abort();	/* a refusal says why and leaves the capture */
		return;
	}
	if (c->n != 3 * n)
		abort();
	for (i = 0; i < c->n; i++)
		if (c->f[i].kind != c->f[i % n].kind ||
		    ((c->f[i].kind == RF_REQUEST || c->f[i].kind == RF_RESPONSE) &&
		     (c->f[i].pkt.hdr != c->f[i].data ||
		      c->f[i].pkt.opcode != c->f[i % n].pkt.opcode)))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct replay_scenario sc;
	struct replay_capture c;
	char err[REPLAY_ERR_LEN] = "";

	fuzz_put(data, size);
	if (replay_capture_load(fuzz_path, &c, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			abort();	/* every refusal says why */
		return 0;
	}
	if (replay_derive(&c, &sc, NULL, err, sizeof(err)) == 0) {
		fuzz_round_trip(&sc);
		fuzz_requester(&c, &sc);
		fuzz_loop(&c, &sc);
		replay_scenario_free(&sc);
	} else if (err[0] == '\0') {
		abort();
	}
	replay_capture_free(&c);
	return 0;
}
