/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Threads droce starts run with every asynchronous signal blocked (verbs_thread.h says why).
 */
#include "verbs_thread.h"

/* Raised by the thread that faults; blocking them would not stop the kernel delivering them. */
static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };

void verbs_signals_block(sigset_t *old)
{
	sigset_t all;
	unsigned int i;

	sigfillset(&all);
	for (i = 0; i < sizeof(fault_signals) / sizeof(fault_signals[0]); i++)
		sigdelset(&all, fault_signals[i]);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void verbs_signals_restore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

int verbs_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t old;
	int rc;

	verbs_signals_block(&old);
	rc = pthread_create(thread, NULL, fn, arg);
	verbs_signals_restore(&old);
	return rc;
}
