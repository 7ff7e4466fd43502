/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * The platform under droce (internal; not installed): what droce needs of the process around
 * DPDK. Nothing here logs; callers say what failed, in their own words.
 */
#ifndef ENV_H
#define ENV_H

#include <signal.h>

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

#ifdef __cplusplus
}
#endif

#endif /* ENV_H */
