/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * An event channel destroyed while another thread reads it (rping's event thread is never
 * joined: its main thread destroys the id and the channel and returns): the reader must keep
 * waiting, as a thread in read() on a closed ucma fd does, and touch nothing freed.
 * - A thread blocked in droce_cm_get_cm_event() on an empty channel when it is destroyed
 *   stays blocked.
 * - A thread entering droce_cm_get_cm_event() after the destroy, with the token of an event
 *   queued then dropped with its id still in the eventfd, stays blocked too (before: EBADF
 *   from the closed fd, or a read of the freed channel).
 * - The application's fd is closed by the destroy, as librdmacm closes it.
 * - More channels than droce keeps are then made and destroyed (each freed in turn), and
 *   the readers' channels, still read, are not freed under them.
 * Built with ASan, any access to freed memory fails the run. The readers are left blocked
 * when the process exits.
 *
 * Usage: cm_channel_test {inline|lcore}
 */
#include <pthread.h>
#include <stdatomic.h>

#include "cm_test.h"

struct reader {
	struct droce_cm_event_channel *ch;
	atomic_int returned;	/**< 1 + errno when droce_cm_get_cm_event() returned */
};

static void *read_one(void *arg)
{
	struct reader *r = arg;
	struct droce_cm_event *ev;
	int rc = droce_cm_get_cm_event(r->ch, &ev);

	atomic_store(&r->returned, 1 + (rc == 0 ? 0 : errno));
	return NULL;
}

static void start(struct reader *r, pthread_t *t)
{
	CHECK_EQ(pthread_create(t, NULL, read_one, r), 0);
	CHECK_EQ(pthread_detach(*t), 0);
}

/* @p r is still waiting after @p ms. */
static void still_waiting(struct reader *r, unsigned int ms, const char *what)
{
	poll(NULL, 0, (int)ms);
	if (atomic_load(&r->returned) != 0) {
		fprintf(stderr, "%s: droce_cm_get_cm_event() returned (%s)\n", what,
			atomic_load(&r->returned) == 1 ? "an event" :
			strerror(atomic_load(&r->returned) - 1));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in dst = cmt_addr("10.99.0.2", 7177);
	static struct reader blocked, late;
	struct droce_cm_event_channel *ch, *lch;
	struct droce_cm_id *id, *lis;
	pthread_t t1, t2;
	struct pollfd pfd;
	uint64_t end;
	int i, fd;

	CHECK(argc == 2);
	cmt_init();

	/* A reader blocked on an empty channel, which is then destroyed. */
	blocked.ch = droce_cm_create_event_channel();
	CHECK(blocked.ch != NULL);
	start(&blocked, &t1);
	still_waiting(&blocked, 100, "before the destroy");
	fd = blocked.ch->fd;
	CHECK_EQ(droce_cm_destroy_event_channel(blocked.ch), 0);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
	still_waiting(&blocked, 200, "blocked reader, channel destroyed");

	/* An event queued (its token in the eventfd), dropped with its id, the channel
	 * destroyed; then a reader enters. droce1 listens (its device open, answering ARP). */
	lch = droce_cm_create_event_channel();
	CHECK(lch != NULL);
	CHECK_EQ(droce_cm_create_id(lch, &lis, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(lis, (struct sockaddr *)&dst), 0);
	CHECK_EQ(droce_cm_listen(lis, 1), 0);
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);
	CHECK_EQ(droce_cm_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	cmt_drive_ctx = id->verbs;
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	end = rte_get_tsc_cycles() + 5 * rte_get_tsc_hz();
	while (poll(&pfd, 1, 0) == 0 && rte_get_tsc_cycles() < end)
		cmt_step();
	CHECK(pfd.revents & POLLIN);	/* ADDR_RESOLVED queued, not read */
	cmt_drive_ctx = NULL;
	CHECK_EQ(droce_cm_destroy_id(id), 0);
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	late.ch = ch;
	start(&late, &t2);
	still_waiting(&late, 200, "reader entering a destroyed channel");

	/* More channels than are kept: the readers' channels stay. */
	for (i = 0; i < 40; i++) {
		ch = droce_cm_create_event_channel();
		CHECK(ch != NULL);
		CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	}
	still_waiting(&blocked, 50, "blocked reader, 40 channels later");
	still_waiting(&late, 50, "late reader, 40 channels later");
	CHECK_EQ(droce_cm_destroy_id(lis), 0);
	CHECK_EQ(droce_cm_destroy_event_channel(lch), 0);
	printf("destroyed channels: both readers still waiting (%s engine)\n", argv[1]);
	return 0;
}
