/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The signal mask of the threads droce starts: every asynchronous signal blocked (env.h).
 */
#include <pthread.h>

#include "env.h"

/* Raised by the thread that faults; blocking them would not stop the kernel delivering them. */
static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };

void env_signals_block(sigset_t *old)
{
	sigset_t all;
	unsigned int i;

	sigfillset(&all);
	for (i = 0; i < sizeof(fault_signals) / sizeof(fault_signals[0]); i++)
		sigdelset(&all, fault_signals[i]);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void env_signals_restore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}
