/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * EAL: started by droce when the application has not (env.h), and who owns it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "env.h"

#define EAL_MAX_ARGS 64		/**< argv entries: the program name, the args, NULL */
#define EAL_ARGS_LEN 512	/**< longest argument string taken whole */

/* Written by env_eal_start(), under its caller's lock; read with the same lock held. */
static bool own_eal;

int env_eal_start(const char *args)
{
	char buf[EAL_ARGS_LEN];
	char *argv[EAL_MAX_ARGS], *save = NULL, *tok;
	sigset_t sigs;
	int argc = 0, rc;

	if (rte_lcore_count() > 0)
		return 0;	/* the application's EAL */
	snprintf(buf, sizeof(buf), "%s", args);
	argv[argc++] = (char *)(uintptr_t)"droce";
	for (tok = strtok_r(buf, " \t", &save); tok != NULL && argc < EAL_MAX_ARGS - 1;
	     tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	/* EAL's threads (interrupts, telemetry, the lcores the engine runs on) are droce's. */
	env_signals_block(&sigs);
	rc = rte_eal_init(argc, argv);
	env_signals_restore(&sigs);
	if (rc < 0)
		return rte_errno == EALREADY ? 0 : -EIO;
	own_eal = true;
	/* DPDK logs to stdout by default; a library's diagnostics (the drop log among them)
	 * belong on stderr, so that the application's stdout stays its own. An application that
	 * starts EAL itself chooses with rte_openlog_stream(). */
	rte_openlog_stream(stderr);
	return 0;
}

bool env_eal_owned(void)
{
	return own_eal;
}
