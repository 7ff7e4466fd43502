/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Threads droce starts run with every asynchronous signal blocked (verbs_thread.h says why).
 */
#include <errno.h>
#include <semaphore.h>

#include "env.h"
#include "verbs_thread.h"

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	sem_t started;
};

static void *thread_start(void *p)
{
	struct thread_start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	sem_post(&s->started);	/* s lives on the creator's stack until this */
	return fn(arg);
}

int verbs_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	struct thread_start s = { .fn = fn, .arg = arg };
	sigset_t old;
	int rc;

	if (sem_init(&s.started, 0, 0) != 0)
		return errno;
	env_signals_block(&old);
	rc = pthread_create(thread, NULL, thread_start, &s);
	env_signals_restore(&old);
	/* Returns once the thread runs droce's code: glibc starts a thread with every signal
	 * blocked and gives it the inherited mask just before its start routine, so until then
	 * it would even block the fault signals. */
	while (rc == 0 && sem_wait(&s.started) != 0 && errno == EINTR)
		;
	sem_destroy(&s.started);
	return rc;
}
