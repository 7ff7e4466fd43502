/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Who drives an inline engine (an [engine] without lcores, as the vhost configurations) for
 * programs that never call droce_engine_poll(): the application's own threads where they can,
 * a driver thread of the drop-in otherwise.
 *
 * - A thread that polls an empty CQ runs one engine iteration itself (compat_engine_kick()):
 *   a busy poll moves its own frames without a second thread competing for the core.
 * - A thread about to block for a completion event (ibv_get_cq_event() on a blocking channel)
 *   first drives the engine itself while it looks for the event, for an adaptive budget
 *   (compat_wait_cq_event()): an event that comes within it costs no sleep and no wake-up, and,
 *   as the thread watches the channel (droce_comp_channel_watch()), no system call either.
 *   When the budget runs out it stands down and wakes the driver thread, then blocks.
 * - The driver thread covers every other time. It stands back while the thread that last
 *   polled is still running (its /proc/self/task/TID/stat state is R, read only when that poll
 *   is older than DRIVER_RECENT_NS: a busy poller costs the driver no read), within
 *   DRIVER_BACKOFF_NS of that poll, looking again after DRIVER_CHECK_US doubling to
 *   DRIVER_CHECK_MAX_US while the poller keeps driving (each look is a timer wake-up that
 *   takes a core from a busy poller); a thread blocked anywhere (ibv_get_cq_event,
 *   rdma_get_cm_event, poll() or epoll on a channel fd, a TCP socket) is not running, and the
 *   driver then drives. Idle, it spins DRIVER_IDLE_SPIN iterations, then naps
 *   DRIVER_NAP_MIN_US doubling to DRIVER_NAP_MAX_US with a 1 us timer slack (the default 50 us
 *   slack would stretch each nap). Its naps are futex waits that a thread standing down cuts
 *   short.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "compat_private.h"
#include "droce_engine.h"

#define DRIVER_BACKOFF_NS 1000000	/* a poll this recent, by a running thread: stand back */
#define DRIVER_CHECK_US 100		/* standing back: look at the poller this often, */
#define DRIVER_CHECK_MAX_US 800		/* doubling to this while it keeps driving */
#define DRIVER_RECENT_NS 20000		/* a poll this recent: the poller drives, unread */
#define DRIVER_IDLE_SPIN 1024		/* idle iterations before napping, as the engine's lcores */
#define DRIVER_NAP_MIN_US 5
#define DRIVER_NAP_MAX_US 100
#define DRIVER_SLACK_NS 1000		/* PR_SET_TIMERSLACK of the driver thread */

/* A waiter's own spin (per channel, adaptive): it grows to twice the time an event took,
 * whether the spin caught the event or the waiter blocked for it, up to WAIT_SPIN_MAX_NS; a
 * blocked wait longer than that halves it (the peer is idle, not slow). */
#define WAIT_SPIN_MIN_NS 10000
#define WAIT_SPIN_MAX_NS 200000
#define WAIT_SPIN_START_NS 50000
#define WAIT_FLAGS_EVERY 64		/* waits between two reads of the fd's flags */

static struct {
	pthread_t thread;
	sem_t started;			/**< posted once the thread runs driver_main() */
	bool run;
	bool inline_engine;		/**< set before the first context is returned */
	uint64_t app_poll_ns;		/**< last time an application thread drove the engine */
	pid_t app_poll_tid;		/**< the thread that did */
	uint32_t seq;			/**< futex word: bumped by a thread standing down */
	bool napping;			/**< the driver waits on @ref seq */
	struct droce_context *ctx;
	int stat_fd;			/**< /proc/self/task/<stat_tid>/stat, or -1 */
	pid_t stat_tid;
	uint64_t blocked_poll_ns;	/**< the app_poll_ns whose thread was found blocked */
} drv = { .stat_fd = -1 };

static __thread pid_t my_tid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static pid_t self_tid(void)
{
	if (my_tid == 0)
		my_tid = (pid_t)syscall(SYS_gettid);
	return my_tid;
}

void compat_engine_kick(struct ibv_context *context)
{
	if (!__atomic_load_n(&drv.inline_engine, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&drv.app_poll_tid, self_tid(), __ATOMIC_RELAXED);
	__atomic_store_n(&drv.app_poll_ns, now_ns(), __ATOMIC_SEQ_CST);
	droce_engine_poll(to_cctx(context)->d);
}

/* This thread stops driving the engine: the driver takes over at once. */
static void stand_down(void)
{
	uint64_t t = __atomic_load_n(&drv.app_poll_ns, __ATOMIC_RELAXED);

	if (__atomic_load_n(&drv.app_poll_tid, __ATOMIC_RELAXED) == self_tid())
		__atomic_compare_exchange_n(&drv.app_poll_ns, &t, 0, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED);
	__atomic_add_fetch(&drv.seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&drv.napping, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &drv.seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * The channel fd's flags: whether a wait would block (O_NONBLOCK). An fcntl() costs a system
 * call, about as long as a polled round trip's share of one event (1.1 us here), so the flags
 * are read again only every WAIT_FLAGS_EVERY waits while they say blocking. An application
 * that makes a blocking channel non-blocking later has at most that many waits spin (up to the
 * budget) before their read returns EAGAIN: the result is the same, only later.
 */
static int fd_flags(struct compat_channel *ch)
{
	int fl = __atomic_load_n(&ch->fd_flags, __ATOMIC_RELAXED);
	unsigned int age = __atomic_add_fetch(&ch->fd_flags_age, 1, __ATOMIC_RELAXED);

	if (fl < 0 || (fl & O_NONBLOCK) != 0 || age % WAIT_FLAGS_EVERY == 0) {
		fl = fcntl(ch->ibv.fd, F_GETFL);
		__atomic_store_n(&ch->fd_flags, fl, __ATOMIC_RELAXED);
	}
	return fl;
}

/* A wait took @p took ns, spinning all along (@p spun) or blocked at the end: the budget
 * grows to cover it (twice the time, at most WAIT_SPIN_MAX_NS); a blocked wait too long for
 * any budget halves it. */
static void spin_learn(struct compat_channel *ch, unsigned int budget, uint64_t took, bool spun)
{
	uint64_t want = 2 * took;

	if (spun || want <= WAIT_SPIN_MAX_NS)
		budget = want > budget ? (unsigned int)(want < WAIT_SPIN_MAX_NS ? want :
							WAIT_SPIN_MAX_NS) : budget;
	else
		budget = budget / 2 > WAIT_SPIN_MIN_NS ? budget / 2 : WAIT_SPIN_MIN_NS;
	__atomic_store_n(&ch->spin_ns, budget, __ATOMIC_RELAXED);
}

int compat_wait_cq_event(struct compat_channel *ch, struct droce_cq **cq, void **cq_context)
{
	unsigned int budget;
	uint64_t t0, spent = 0;
	int fl, rc;

	if (!__atomic_load_n(&drv.inline_engine, __ATOMIC_ACQUIRE))
		return droce_get_cq_event(ch->d, cq, cq_context);
	droce_comp_channel_watch(ch->d, 1);
	rc = droce_comp_channel_take(ch->d, cq, cq_context);
	if (rc != EAGAIN)
		goto out;	/* taken, or waiting in the fd: no wait */
	fl = fd_flags(ch);
	if (fl < 0 || (fl & O_NONBLOCK) != 0)
		goto out;	/* the read will not block (or fails): nothing to wait for */
	budget = __atomic_load_n(&ch->spin_ns, __ATOMIC_RELAXED);
	if (budget == 0)
		budget = WAIT_SPIN_START_NS;
	t0 = now_ns();
	while (rc == EAGAIN && spent < budget) {
		compat_engine_kick(ch->ibv.context);
		rc = droce_comp_channel_take(ch->d, cq, cq_context);
		spent = now_ns() - t0;
	}
	droce_comp_channel_watch(ch->d, 0);
	if (rc == 0) {
		spin_learn(ch, budget, spent, true);
		return 0;
	}
	if (rc == EAGAIN) {
		/* Blocks: the driver drives meanwhile. How long it took says what to spin next. */
		stand_down();
		rc = droce_get_cq_event(ch->d, cq, cq_context);
		spin_learn(ch, budget, now_ns() - t0, false);
		return rc;
	}
	return droce_get_cq_event(ch->d, cq, cq_context);	/* ENOMSG: it is in the fd */
out:
	droce_comp_channel_watch(ch->d, 0);
	return rc == 0 ? 0 : droce_get_cq_event(ch->d, cq, cq_context);
}

/* @return true if thread @p tid is running or runnable (state R in its stat). */
static bool thread_running(pid_t tid)
{
	char buf[512], *p;
	ssize_t n;

	if (tid != drv.stat_tid) {
		if (drv.stat_fd >= 0)
			close(drv.stat_fd);
		snprintf(buf, sizeof(buf), "/proc/self/task/%d/stat", (int)tid);
		drv.stat_fd = open(buf, O_RDONLY | O_CLOEXEC);
		drv.stat_tid = tid;
	}
	if (drv.stat_fd < 0)
		return false;
	n = pread(drv.stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return false;	/* the thread is gone */
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* "tid (comm) S ...": comm may hold anything */
	return p != NULL && p[1] == ' ' && p[2] == 'R';
}

/* An application thread polled recently and is still running: it drives the engine. A
 * poller found blocked is not looked at again until it polls again. */
static bool app_drives(void)
{
	uint64_t t = __atomic_load_n(&drv.app_poll_ns, __ATOMIC_SEQ_CST), age;

	age = now_ns() - t;
	if (t == 0 || t == drv.blocked_poll_ns || age >= DRIVER_BACKOFF_NS)
		return false;
	if (age < DRIVER_RECENT_NS)
		return true;	/* it polls as we look: no need to read its state */
	if (thread_running(__atomic_load_n(&drv.app_poll_tid, __ATOMIC_RELAXED)))
		return true;
	drv.blocked_poll_ns = t;
	return false;
}

/* Sleep up to @p us, or until a thread stands down. @return true if one did. */
static bool nap(unsigned int us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)us * 1000 };
	uint32_t s;
	bool cut;

	__atomic_store_n(&drv.napping, true, __ATOMIC_SEQ_CST);
	s = __atomic_load_n(&drv.seq, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &drv.seq, FUTEX_WAIT_PRIVATE, s, &ts, NULL, 0);
	__atomic_store_n(&drv.napping, false, __ATOMIC_SEQ_CST);
	cut = __atomic_load_n(&drv.seq, __ATOMIC_SEQ_CST) != s;
	return cut;
}

static void *driver_main(void *arg)
{
	struct droce_context *ctx = arg;
	unsigned int idle = 0, nap_us = 0, check_us = DRIVER_CHECK_US;

	prctl(PR_SET_TIMERSLACK, DRIVER_SLACK_NS, 0, 0, 0);
	prctl(PR_SET_NAME, "droce-driver", 0, 0, 0);	/* as top -H and ps -L show it */
	sem_post(&drv.started);
	while (__atomic_load_n(&drv.run, __ATOMIC_ACQUIRE)) {
		if (app_drives()) {
			if (nap(check_us))
				idle = nap_us = 0;
			else if (check_us < DRIVER_CHECK_MAX_US)
				check_us *= 2;	/* it keeps driving: look less often */
			continue;
		}
		check_us = DRIVER_CHECK_US;
		if (droce_engine_poll(ctx) > 0) {
			idle = nap_us = 0;
		} else if (++idle > DRIVER_IDLE_SPIN) {
			nap_us = nap_us == 0 ? DRIVER_NAP_MIN_US :
				 nap_us * 2 < DRIVER_NAP_MAX_US ? nap_us * 2 : DRIVER_NAP_MAX_US;
			if (nap(nap_us))
				idle = nap_us = 0;	/* a waiter blocks: spin again first */
		}
	}
	if (drv.stat_fd >= 0)
		close(drv.stat_fd);
	drv.stat_fd = -1;
	drv.stat_tid = 0;
	return NULL;
}

/*
 * The driver thread blocks every asynchronous signal from its start, as droce's own threads
 * (lib/verbs/verbs_thread.h): libibverbs starts no thread, so the signals a program directs at
 * its process (tgtd's kill(getpid(), SIGUSR2), read from a signalfd) are its own threads'.
 */
static int driver_create(struct droce_context *ctx)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };
	sigset_t all, old;
	unsigned int i;
	int rc;

	sigfillset(&all);
	for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(&all, faults[i]);
	if (sem_init(&drv.started, 0, 0) != 0)
		return errno;
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&drv.thread, NULL, driver_main, ctx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* Return once it runs driver_main(): glibc starts a thread with every signal blocked
	 * and gives it the inherited mask just before that (verbs_thread_create() does the
	 * same for droce's own threads). */
	while (rc == 0 && sem_wait(&drv.started) != 0 && errno == EINTR)
		;
	sem_destroy(&drv.started);
	return rc;
}

int compat_driver_start(struct droce_device *dev)
{
	if (!droce_engine_is_inline())
		return 0;
	drv.ctx = droce_open_device(dev);	/* its own: the engine stays up while it runs */
	if (drv.ctx == NULL)
		return errno != 0 ? errno : EAGAIN;
	__atomic_store_n(&drv.inline_engine, true, __ATOMIC_RELEASE);
	drv.run = true;
	if (driver_create(drv.ctx) == 0)
		return 0;
	__atomic_store_n(&drv.inline_engine, false, __ATOMIC_RELEASE);
	droce_close_device(drv.ctx);
	drv.ctx = NULL;
	return EAGAIN;
}

bool compat_driver_running(void)
{
	return drv.ctx != NULL;
}

void compat_driver_stop(void)
{
	if (drv.ctx == NULL)
		return;
	__atomic_store_n(&drv.run, false, __ATOMIC_RELEASE);
	syscall(SYS_futex, &drv.seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(drv.thread, NULL);
	droce_close_device(drv.ctx);
	drv.ctx = NULL;
	__atomic_store_n(&drv.inline_engine, false, __ATOMIC_RELEASE);
}
