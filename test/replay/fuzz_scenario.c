/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * libFuzzer target: droce-replay's scenario parser (app/droce-replay/scenario.c) on any bytes.
 * rte_cfgfile reads a path, so each input goes into one memfd reopened through /proc. A
 * successful parse is printed back and parsed again: what --print-scenario writes must load.
 * Built by run_fuzz_scenario.sh with a small REPLAY_MAX_MR_LEN so that a fuzzed length
 * cannot ask for gigabytes.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct replay_scenario sc;
	char err[REPLAY_ERR_LEN];

	fuzz_put(data, size);
	if (replay_scenario_load(fuzz_path, &sc, err, sizeof(err)) == 0) {
		fuzz_round_trip(&sc);
		replay_scenario_free(&sc);
	} else if (err[0] == '\0') {
		abort();	/* every refusal says why */
	}
	return 0;
}
