/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * Threads droce starts in the application's process (internal; not installed).
 *
 * rdma-core's libraries start no thread, so a verbs program may direct a signal at its process
 * and count on one of its own threads taking it: tgtd blocks SIGUSR2 in its threads and reads
 * it from a signalfd, and its backing-store workers send it with kill(getpid(), SIGUSR2). The
 * kernel gives a process-directed signal to any thread that does not block it; were that a
 * thread of droce's (EAL's interrupt, telemetry and lcore threads, a PMD's control thread, the
 * CM's service thread), a signal without a handler would end the process, and one with a
 * handler would run it where the application does not expect it. So every thread droce starts
 * blocks every asynchronous signal from its first instruction: it is created, directly or by
 * DPDK, between env_signals_block() and env_signals_restore() (lib/env/env.h), and inherits the
 * mask.
 * Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS) stay deliverable: they belong to
 * the thread that raises them.
 */
#ifndef VERBS_THREAD_H
#define VERBS_THREAD_H

#include <pthread.h>
#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * pthread_create() for a thread of droce's: it starts with every asynchronous signal blocked,
 * and runs @p fn by the time this returns (its mask is then the one it keeps).
 * @return 0, or pthread_create()'s error number (EAGAIN, ...), or sem_init()'s.
 */
int verbs_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* VERBS_THREAD_H */
