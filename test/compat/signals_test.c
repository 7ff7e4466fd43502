/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Signals a program directs at its own process reach its own threads on the drop-ins, as on
 * rdma-core's libraries, which start no thread. tgtd (Debian's tgt) blocks SIGUSR2 in its
 * threads and reads it from a signalfd; its backing-store workers send it with
 * kill(getpid(), SIGUSR2). The kernel gives such a signal to any thread that does not block
 * it, so a thread of droce's that did (EAL's interrupt and telemetry threads, the engine's
 * lcore, the drop-in's driver thread, the CM's service thread) would take it, and with no
 * handler the process would end.
 *
 * The program starts droce as tgtd's iSER driver does (an event channel, a listener on the
 * wildcard address, a context with a PD, a completion channel and a CQ), then, as tgtd's
 * bs_init(), blocks SIGUSR2 in its only thread and opens a signalfd for it. Checked:
 * - every thread of the process other than the program's blocks every asynchronous signal
 *   (SigBlk in /proc/self/task/N/status), and none blocks a fault signal;
 * - 200 times, SIGUSR2 sent to the process arrives on the signalfd.
 *
 * Usage: compat_signals_test (DROCE_CONFIG: test/cm/pair_{inline,lcore}.ini)
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "check.h"

#define ROUNDS 200

/* The thread's blocked signals (SigBlk, a hex mask: bit n-1 is signal n). */
static unsigned long long sigblk(const char *tid, char *comm, size_t len)
{
	char path[300], line[256];
	unsigned long long m = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	f = fopen(path, "r");
	CHECK(f != NULL);
	CHECK(fgets(comm, (int)len, f) != NULL);
	comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "SigBlk: %llx", &m) == 1)
			break;
	fclose(f);
	return m;
}

static unsigned long long bit(int sig)
{
	return 1ull << (sig - 1);
}

/* @return how many threads other than the caller were checked. */
static int check_other_threads(void)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };
	static const int async[] = { SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE,
				     SIGALRM, SIGTERM, SIGCHLD, SIGCONT, SIGTSTP, SIGURG,
				     SIGIO, SIGWINCH };
	char self[32], comm[64];
	struct dirent *d;
	unsigned long long m;
	unsigned int i;
	int n = 0;
	DIR *dir;

	snprintf(self, sizeof(self), "%d", gettid());
	dir = opendir("/proc/self/task");
	CHECK(dir != NULL);
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.' || strcmp(d->d_name, self) == 0)
			continue;
		m = sigblk(d->d_name, comm, sizeof(comm));
		for (i = 0; i < sizeof(async) / sizeof(async[0]); i++)
			if (!(m & bit(async[i]))) {
				fprintf(stderr, "thread %s (%s) does not block %s (SigBlk %llx)\n",
					d->d_name, comm, strsignal(async[i]), m);
				exit(1);
			}
		for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
			if (m & bit(faults[i])) {
				fprintf(stderr, "thread %s (%s) blocks %s (SigBlk %llx)\n",
					d->d_name, comm, strsignal(faults[i]), m);
				exit(1);
			}
		n++;
	}
	closedir(dir);
	return n;
}

int main(void)
{
	struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(3260) };
	struct rdma_event_channel *ch;
	struct signalfd_siginfo si;
	struct ibv_comp_channel *cc;
	struct ibv_context **ctxs;
	struct rdma_cm_id *lis;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct pollfd p;
	sigset_t usr2;
	int i, n, sfd;

	/* droce up as tgtd's iSER driver starts it: EAL, the engine, the CM, a device. */
	ch = rdma_create_event_channel();
	CHECK(ch != NULL);
	CHECK_EQ(rdma_create_id(ch, &lis, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(lis, (struct sockaddr *)&any), 0);
	CHECK_EQ(rdma_listen(lis, 0), 0);
	ctxs = rdma_get_devices(&n);
	CHECK(ctxs != NULL && n > 0);
	pd = ibv_alloc_pd(ctxs[0]);
	CHECK(pd != NULL);
	cc = ibv_create_comp_channel(ctxs[0]);
	CHECK(cc != NULL);
	cq = ibv_create_cq(ctxs[0], 64, NULL, cc, 0);
	CHECK(cq != NULL);

	/* Then, as tgtd's bs_init(): SIGUSR2 blocked here and read from a signalfd. */
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &usr2, NULL), 0);
	sfd = signalfd(-1, &usr2, SFD_CLOEXEC);
	CHECK(sfd >= 0);

	n = check_other_threads();
	CHECK(n >= 3);	/* at least EAL's interrupt and telemetry threads and the CM's */
	for (i = 0; i < ROUNDS; i++) {
		CHECK_EQ(kill(getpid(), SIGUSR2), 0);
		p = (struct pollfd){ .fd = sfd, .events = POLLIN };
		CHECK_EQ(poll(&p, 1, 5000), 1);
		CHECK_EQ(read(sfd, &si, sizeof(si)), (ssize_t)sizeof(si));
		CHECK_EQ(si.ssi_signo, SIGUSR2);
	}
	printf("%d droce threads block every asynchronous signal; %d SIGUSR2 sent to the "
	       "process reached the program's signalfd\n", n, ROUNDS);

	close(sfd);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(cc), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	rdma_free_devices(ctxs);
	CHECK_EQ(rdma_destroy_id(lis), 0);
	rdma_destroy_event_channel(ch);
	return 0;
}
