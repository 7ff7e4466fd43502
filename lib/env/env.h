/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * The platform under droce (internal; not installed): EAL and what droce needs of the process
 * around DPDK. Nothing here logs; callers say what failed, in their own words.
 */
#ifndef ENV_H
#define ENV_H

#include <signal.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* env_signal.c */

/**
 * Block every asynchronous signal in the calling thread; its mask before goes to @p old.
 * Every thread droce starts, itself or through DPDK (EAL's interrupt, telemetry and lcore
 * threads, a PMD's control thread), is created between this and env_signals_restore() and
 * inherits the mask (lib/verbs/verbs_thread.h says why). Faults (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGTRAP, SIGSYS) stay deliverable.
 */
void env_signals_block(sigset_t *old);

/** Give the calling thread back the mask env_signals_block() saved in @p old. */
void env_signals_restore(const sigset_t *old);

/* env_eal.c */

/**
 * Make sure EAL is up. If it is (rte_lcore_count() is not 0), the application owns it and it
 * is only used; if not, rte_eal_init() runs with @p args (blank-separated, at most 62) behind
 * the program name "droce", with the asynchronous signals blocked, and droce owns EAL and
 * sends DPDK's log to stderr. rte_eal_init() failing with EALREADY (another thread started
 * EAL meanwhile) also leaves EAL to the application.
 * Not thread-safe: callers serialise it.
 * @return 0, or -EIO with rte_errno saying why rte_eal_init() failed.
 */
int env_eal_start(const char *args);

/** Whether env_eal_start() started EAL. */
bool env_eal_owned(void);

#ifdef __cplusplus
}
#endif

#endif /* ENV_H */
