/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A thread blocked for completion events is woken once for every completion, through the
 * libibverbs API linked to droce's libibverbs.so.1 (DROCE_CONFIG: a ring pair, inline or lcore
 * engine; two devices of this process connected RC).
 *
 * A waiter thread arms ep[0]'s CQ, tells the main thread, and waits: in ibv_get_cq_event()
 * (the drop-in drives an inline engine itself for a while, then blocks), or in poll() on the
 * channel's fd first (the drop-in cannot see that wait: its driver thread must). The main
 * thread then, after no delay, a yield, 200 us or 2 ms (the waiter spinning, blocked, the
 * driver napping), completes one work request on that CQ: an RDMA WRITE of ep[0] or a SEND
 * of ep[1] into a receive of ep[0]. Each time the waiter must get exactly one event, for
 * ep[0]'s CQ and its context, and then exactly that completion (wr_id, opcode, status): a
 * lost wake-up hangs the test (meson's timeout), a double or stale event returns with an
 * empty CQ or leaves a token on the fd, which is checked at the end.
 *
 * With "nonblocking" (the bad-input twin): ibv_get_cq_event() on a channel whose fd is
 * O_NONBLOCK with nothing pending returns -1 with errno EAGAIN, armed or not, and leaves the
 * channel usable: the next completion's event is got as usual.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"

#define BUF 4096
#define ITERS 1200

struct ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[BUF] __attribute__((aligned(8)));
	union ibv_gid gid;
};

static struct ep ep[2];
static sem_t armed, done;

static void open_ep(struct ep *e, struct ibv_device *dev, int channel)
{
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 } };

	e->ctx = ibv_open_device(dev);
	CHECK(e->ctx != NULL);
	e->pd = ibv_alloc_pd(e->ctx);
	CHECK(e->pd != NULL);
	if (channel) {
		e->ch = ibv_create_comp_channel(e->ctx);
		CHECK(e->ch != NULL);
	}
	e->cq = ibv_create_cq(e->ctx, 64, e, e->ch, 0);
	CHECK(e->cq != NULL);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(e->mr != NULL);
	a.send_cq = a.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &a);
	CHECK(e->qp != NULL);
	CHECK_EQ(ibv_query_gid(e->ctx, 1, 1, &e->gid), 0);
}

static void connect_ep(struct ep *e, const struct ep *peer)
{
	struct ibv_qp_attr q = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	CHECK_EQ(ibv_modify_qp(e->qp, &q, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_ACCESS_FLAGS), 0);
	memset(&q, 0, sizeof(q));
	q.qp_state = IBV_QPS_RTR;
	q.path_mtu = IBV_MTU_1024;
	q.dest_qp_num = peer->qp->qp_num;
	q.max_dest_rd_atomic = 1;
	q.min_rnr_timer = 1;
	q.ah_attr.is_global = 1;
	q.ah_attr.port_num = 1;
	q.ah_attr.grh.sgid_index = 1;
	q.ah_attr.grh.hop_limit = 64;
	q.ah_attr.grh.dgid = peer->gid;
	CHECK_EQ(ibv_modify_qp(e->qp, &q, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER), 0);
	memset(&q, 0, sizeof(q));
	q.qp_state = IBV_QPS_RTS;
	q.timeout = 14;
	q.retry_cnt = 7;
	q.rnr_retry = 7;
	q.max_rd_atomic = 1;
	CHECK_EQ(ibv_modify_qp(e->qp, &q, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

/* Iteration @p i: even ones an RDMA WRITE of ep[0] (a send completion), odd ones a SEND of
 * ep[1] into the receive ep[0] posted (a receive completion); wr_id i either way. */
static void post_recv(uint64_t i)
{
	struct ibv_sge s = { (uintptr_t)ep[0].buf, 64, ep[0].mr->lkey };
	struct ibv_recv_wr w = { .wr_id = i, .sg_list = &s, .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(ep[0].qp, &w, &bad), 0);
}

static void complete_one(uint64_t i)
{
	struct ibv_sge s = { 0, 8, 0 };
	struct ibv_send_wr w = { .wr_id = i, .sg_list = &s, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int n;

	if (i % 2 == 0) {
		s.addr = (uintptr_t)ep[0].buf + 256;
		s.lkey = ep[0].mr->lkey;
		w.opcode = IBV_WR_RDMA_WRITE;
		w.wr.rdma.rkey = ep[1].mr->rkey;
		w.wr.rdma.remote_addr = (uintptr_t)ep[1].buf + 256;
		CHECK_EQ(ibv_post_send(ep[0].qp, &w, &bad), 0);
		return;
	}
	s.addr = (uintptr_t)ep[1].buf;
	s.lkey = ep[1].mr->lkey;
	w.opcode = IBV_WR_SEND;
	CHECK_EQ(ibv_post_send(ep[1].qp, &w, &bad), 0);
	while ((n = ibv_poll_cq(ep[1].cq, 1, &wc)) == 0)	/* ep[1]'s CQ has no channel */
		;
	CHECK_EQ(n, 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, i);
}

/* One event for ep[0]'s CQ, then exactly the completion of iteration @p i. */
static void take_event(uint64_t i)
{
	struct ibv_cq *cq;
	struct ibv_wc wc[2];
	void *ctx;

	CHECK_EQ(ibv_get_cq_event(ep[0].ch, &cq, &ctx), 0);
	CHECK(cq == ep[0].cq);
	CHECK(ctx == &ep[0]);
	ibv_ack_cq_events(cq, 1);
	CHECK_EQ(ibv_poll_cq(cq, 2, wc), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	CHECK_EQ(wc[0].wr_id, i);
	CHECK_EQ(wc[0].opcode, i % 2 == 0 ? IBV_WC_RDMA_WRITE : IBV_WC_RECV);
	CHECK_EQ(ibv_poll_cq(cq, 2, wc), 0);
}

static void *waiter(void *arg)
{
	struct pollfd p = { .fd = ep[0].ch->fd, .events = POLLIN };
	uint64_t i;

	(void)arg;
	for (i = 0; i < ITERS; i++) {
		if (i % 2 == 1)
			post_recv(i);
		CHECK_EQ(ibv_req_notify_cq(ep[0].cq, 0), 0);
		CHECK_EQ(sem_post(&armed), 0);
		if ((i / 4) % 2 == 1) {		/* the application's own poll() on the fd */
			while (poll(&p, 1, -1) < 0)
				CHECK_EQ(errno, EINTR);
			CHECK(p.revents & POLLIN);
		}
		take_event(i);
		CHECK_EQ(sem_post(&done), 0);
	}
	return NULL;
}

static void sem_take(sem_t *s)
{
	while (sem_wait(s) != 0)
		CHECK_EQ(errno, EINTR);
}

/* Nothing left on the channel: no token on its fd, no completion in its CQ. */
static void check_channel_empty(void)
{
	struct pollfd p = { .fd = ep[0].ch->fd, .events = POLLIN };
	struct ibv_wc wc;

	CHECK_EQ(poll(&p, 1, 0), 0);
	CHECK_EQ(ibv_poll_cq(ep[0].cq, 1, &wc), 0);
}

static void test_woken_once_per_completion(void)
{
	static const unsigned int delay_us[] = { 0, 1, 200, 2000 };
	pthread_t t;
	uint64_t i;

	CHECK_EQ(sem_init(&armed, 0, 0), 0);
	CHECK_EQ(sem_init(&done, 0, 0), 0);
	CHECK_EQ(pthread_create(&t, NULL, waiter, NULL), 0);
	for (i = 0; i < ITERS; i++) {
		unsigned int d = delay_us[(i / 8) % 4];

		sem_take(&armed);
		if (d == 1)
			sched_yield();
		else if (d != 0)
			usleep(d);
		complete_one(i);
		sem_take(&done);
	}
	CHECK_EQ(pthread_join(t, NULL), 0);
	check_channel_empty();
	printf("%d completions, each woke the waiter (ibv_get_cq_event, poll() on the fd) "
	       "with exactly one event\n", ITERS);
}

static void test_nonblocking_empty(void)
{
	int fl = fcntl(ep[0].ch->fd, F_GETFL);
	struct ibv_cq *cq;
	void *ctx;

	CHECK(fl >= 0);
	CHECK_EQ(fcntl(ep[0].ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	errno = 0;
	CHECK_EQ(ibv_get_cq_event(ep[0].ch, &cq, &ctx), -1);	/* not armed, nothing pending */
	CHECK_EQ(errno, EAGAIN);
	CHECK_EQ(ibv_req_notify_cq(ep[0].cq, 0), 0);
	errno = 0;
	CHECK_EQ(ibv_get_cq_event(ep[0].ch, &cq, &ctx), -1);	/* armed, nothing completed */
	CHECK_EQ(errno, EAGAIN);
	check_channel_empty();
	CHECK_EQ(fcntl(ep[0].ch->fd, F_SETFL, fl), 0);
	complete_one(0);		/* still armed: the event comes, blocking again */
	take_event(0);
	check_channel_empty();
	printf("ibv_get_cq_event on an empty O_NONBLOCK channel: -1 EAGAIN (armed or not); "
	       "the next completion's event got\n");
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	int n = 0, i;

	list = ibv_get_device_list(&n);
	CHECK(list != NULL);
	CHECK(n >= 2);
	open_ep(&ep[0], list[0], 1);
	open_ep(&ep[1], list[1], 0);
	connect_ep(&ep[0], &ep[1]);
	connect_ep(&ep[1], &ep[0]);
	if (argc > 1 && strcmp(argv[1], "nonblocking") == 0)
		test_nonblocking_empty();
	else
		test_woken_once_per_completion();
	for (i = 1; i >= 0; i--) {
		CHECK_EQ(ibv_destroy_qp(ep[i].qp), 0);
		CHECK_EQ(ibv_destroy_cq(ep[i].cq), 0);
		if (ep[i].ch != NULL)
			CHECK_EQ(ibv_destroy_comp_channel(ep[i].ch), 0);
		CHECK_EQ(ibv_dereg_mr(ep[i].mr), 0);
		CHECK_EQ(ibv_dealloc_pd(ep[i].pd), 0);
		CHECK_EQ(ibv_close_device(ep[i].ctx), 0);
	}
	ibv_free_device_list(list);
	return 0;
}
