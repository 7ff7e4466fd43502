/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The process's CM: its lifetime (the first channel or id starts it, it lasts until the
 * process exits, as librdmacm's devices do), the [cm] configuration, the time base, and the
 * service thread.
 *
 * The service thread sleeps in epoll_wait() on the agents' completion channels and an
 * eventfd that API calls write when they armed or moved a timer. Each round, under cm_svc.lock, it
 * polls every agent's CQ (MADs in, sends done), fires the ids' timers that are due, re-arms
 * the CQs (then polls once more: a completion between the poll and the arm would raise no
 * event) and computes how long it may sleep. With an inline engine nobody may be driving the
 * engine while the CM waits for a MAD, so the thread runs engine iterations itself and sleeps
 * at most [cm] inline_tick_ms.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "cm_private.h"
#include "droce_engine.h"
#include "verbs_config.h"
#include "verbs_engine.h"
#include "verbs_thread.h"

RTE_LOG_REGISTER(cm_logtype, droce.cm, NOTICE);

struct cm_global cm_svc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.epfd = -1,
	.wakefd = -1,
};

uint64_t cm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

unsigned int cm_convert_ms(uint8_t t)
{
	return 1u << (t > 8 ? RTE_MIN(t, 31) - 8 : 0);
}

uint32_t cm_random(void)
{
	/* splitmix64 */
	uint64_t z = (cm_svc.rand_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time)
{
	/* IBA 12.7.34: the local ACK timeout covers twice the packet life time plus the
	 * remote CA's ACK delay; in powers of two, the larger term plus one when the two are
	 * close (Linux's cm_ack_timeout()). */
	unsigned int t = packet_life_time + 1u;

	if (t >= ca_ack_delay)
		t += ca_ack_delay >= packet_life_time;
	else
		t = ca_ack_delay + (t >= ca_ack_delay - 1u);
	return (uint8_t)RTE_MIN(t, 31u);
}

void cm_wake(void)
{
	uint64_t one = 1;

	if (cm_svc.wakefd >= 0 && write(cm_svc.wakefd, &one, sizeof(one)) != sizeof(one))
		CM_LOG(DEBUG, "wake-up eventfd full");	/* already readable: the thread wakes */
}

void cm_timer_arm(struct cm_id *id, enum cm_timer what, unsigned int ms)
{
	id->timer = what;
	id->deadline = cm_now_ms() + ms;
	cm_wake();
}

void cm_timer_stop(struct cm_id *id)
{
	id->timer = CM_T_NONE;
}

/* ---- [cm] configuration ---- */

/* Defaults (the table's) are Linux rdma_cm's (CMA_CM_RESPONSE_TIMEOUT, CMA_MAX_CM_RETRIES,
 * CMA_IBOE_PACKET_LIFETIME), so that a droce peer behaves as a Linux one. */
static int config_load(struct cm_config *c)
{
	const struct verbs_kv *kv;
	unsigned int n = verbs_cm_config(&kv);

	if (verbs_cfg_check_kv("cm", kv, n) < 0)
		return -EINVAL;
	c->response_timeout = (uint8_t)verbs_cfg_uint("cm", kv, n, "response_timeout");
	c->max_retries = (uint8_t)verbs_cfg_uint("cm", kv, n, "max_retries");
	c->packet_life_time = (uint8_t)verbs_cfg_uint("cm", kv, n, "packet_life_time");
	c->resolve_poll_ms = verbs_cfg_uint("cm", kv, n, "resolve_poll_ms");
	c->inline_tick_ms = verbs_cfg_uint("cm", kv, n, "inline_tick_ms");
	return 0;
}

/* ---- The thread ---- */

static void fire(struct cm_id *id)
{
	enum cm_timer t = id->timer;

	id->timer = CM_T_NONE;
	switch (t) {
	case CM_T_MAD:
		if (id->ib == IB_SIDR_REQ_SENT)
			cm_sidr_timeout(id);
		else
			cm_conn_timeout(id);
		break;
	case CM_T_RESOLVE:
		cm_resolve_poll(id);
		break;
	case CM_T_TIMEWAIT:
		cm_conn_timewait_end(id);
		break;
	default:
		break;
	}
}

/* Fire what is due; @return the earliest deadline left (UINT64_MAX: none). */
static uint64_t run_timers(uint64_t now)
{
	uint64_t next = UINT64_MAX;
	struct cm_id *id, *nx;

	for (id = TAILQ_FIRST(&cm_svc.ids); id != NULL; id = nx) {
		nx = TAILQ_NEXT(id, next);
		if (id->timer != CM_T_NONE && id->deadline <= now)
			fire(id);	/* may free id, never another */
	}
	TAILQ_FOREACH(id, &cm_svc.ids, next)
		if (id->timer != CM_T_NONE && id->deadline < next)
			next = id->deadline;
	return next;
}

static unsigned int poll_agents(bool arm)
{
	unsigned int i, work = 0;

	for (i = 0; i < RTE_DIM(cm_svc.agent); i++) {
		if (cm_svc.agent[i] == NULL)
			continue;
		if (arm)
			droce_req_notify_cq(cm_svc.agent[i]->cq, 0);
		work += cm_agent_poll(cm_svc.agent[i]);
	}
	return work;
}

/* Inline engine: run iterations until it is idle (bounded), from the first agent's context. */
static void drive_engine(void)
{
	struct droce_context *ctx = NULL;
	unsigned int i, n;

	pthread_mutex_lock(&cm_svc.lock);
	for (i = 0; i < RTE_DIM(cm_svc.agent) && ctx == NULL; i++)
		if (cm_svc.agent[i] != NULL)
			ctx = cm_svc.agent[i]->ctx;
	if (ctx == NULL) {
		pthread_mutex_unlock(&cm_svc.lock);
		return;
	}
	/* Agents (and their contexts) live until exit, which joins this thread first: the
	 * context stays valid without the lock. */
	pthread_mutex_unlock(&cm_svc.lock);
	for (n = 0; n < 256 && droce_engine_poll(ctx) > 0; n++)
		;
}

static void drain(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		CM_LOG(DEBUG, "wake-up read: %s", strerror(errno));
}

static void take_event(const struct cm_source *src)
{
	struct droce_cq *cq;
	void *ctx;

	if (src->kind == CM_SRC_CQ) {
		if (droce_get_cq_event(src->agent->chan, &cq, &ctx) == 0)
			droce_ack_cq_events(cq, 1);
		return;
	}
	pthread_mutex_lock(&cm_svc.lock);
	cm_agent_async(src->agent);
	pthread_mutex_unlock(&cm_svc.lock);
}

static void *service_main(void *arg)
{
	struct epoll_event ev[8];
	uint64_t now, next;
	int i, n, wait;

	RTE_SET_USED(arg);
	for (;;) {
		if (cm_svc.inline_engine)
			drive_engine();
		pthread_mutex_lock(&cm_svc.lock);
		if (cm_svc.stop) {
			pthread_mutex_unlock(&cm_svc.lock);
			break;
		}
		poll_agents(false);
		now = cm_now_ms();
		next = run_timers(now);
		if (poll_agents(true) != 0)
			next = now;	/* work arrived while arming: go round again */
		pthread_mutex_unlock(&cm_svc.lock);
		if (next == UINT64_MAX)
			wait = -1;
		else
			wait = next <= now ? 0 : (int)RTE_MIN(next - now, UINT64_C(60000));
		if (cm_svc.inline_engine && (wait < 0 || wait > (int)cm_svc.cfg.inline_tick_ms))
			wait = (int)cm_svc.cfg.inline_tick_ms;
		n = epoll_wait(cm_svc.epfd, ev, RTE_DIM(ev), wait);
		for (i = 0; i < n; i++) {
			if (ev[i].data.ptr == NULL)
				drain(cm_svc.wakefd);
			else
				take_event(ev[i].data.ptr);
		}
	}
	return NULL;
}

/* ---- Start and stop ---- */

static int start_locked(void)
{
	struct droce_device **list;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int n, rc;

	list = droce_get_device_list(&n);	/* configuration and EAL, once */
	if (list == NULL)
		return -EIO;
	droce_free_device_list(list);
	rc = config_load(&cm_svc.cfg);
	if (rc != 0)
		return rc;
	TAILQ_INIT(&cm_svc.ids);
	/* Seeded per process: two processes start at different comm IDs, PSNs and ports. */
	cm_svc.rand_state = rte_get_tsc_cycles() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)&cm_svc;
	cm_svc.gen = cm_random();
	cm_svc.sidr_next = cm_random();
	cm_svc.inline_engine = droce_engine_is_inline();
	cm_svc.epfd = epoll_create1(EPOLL_CLOEXEC);
	cm_svc.wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cm_svc.epfd < 0 || cm_svc.wakefd < 0 ||
	    epoll_ctl(cm_svc.epfd, EPOLL_CTL_ADD, cm_svc.wakefd, &ev) != 0)
		goto fail;
	cm_svc.stop = false;
	if (verbs_thread_create(&cm_svc.thread, service_main, NULL) != 0)
		goto fail;
	cm_svc.running = true;
	return 0;
fail:
	rc = errno == EMFILE || errno == ENFILE ? -EMFILE : -ENOMEM;
	if (cm_svc.epfd >= 0)
		close(cm_svc.epfd);
	if (cm_svc.wakefd >= 0)
		close(cm_svc.wakefd);
	cm_svc.epfd = cm_svc.wakefd = -1;
	return rc;
}

int cm_start(void)
{
	int rc = 0;

	pthread_mutex_lock(&cm_svc.lock);
	if (!cm_svc.running)
		rc = start_locked();
	pthread_mutex_unlock(&cm_svc.lock);
	return rc;
}

/* MADs posted and not yet on the wire (a REJ or DREP sent just before exit): let them go,
 * for at most CM_FLUSH_MS. */
#define CM_FLUSH_MS 200

static bool sends_pending(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(cm_svc.agent); i++)
		if (cm_svc.agent[i] != NULL && cm_svc.agent[i]->n_send_free != CM_SEND_SLOTS)
			return true;
	return false;
}

static void flush_sends(void)
{
	uint64_t end = cm_now_ms() + CM_FLUSH_MS;
	bool pending = true;

	while (pending && cm_now_ms() < end) {
		pthread_mutex_lock(&cm_svc.lock);
		poll_agents(false);
		pending = sends_pending();
		pthread_mutex_unlock(&cm_svc.lock);
		if (pending) {
			cm_wake();
			usleep(500);	/* the thread drives an inline engine */
		}
	}
}

/*
 * At exit: end what the application left under way as if it destroyed its ids (a REJ for a
 * request it did not answer, a DREQ for a connection: as Linux does when a process exits, so
 * peers learn at once), let those MADs leave, stop the thread, free every id (destroyed ones
 * still in timewait too), and give the devices back before DPDK goes away. The libibverbs and
 * librdmacm drop-ins' destructors, which release what the application left open, run before
 * this one (they depend on libdroce).
 */
static void __attribute__((destructor)) cm_fini(void)
{
	struct cm_id *id;

	pthread_mutex_lock(&cm_svc.lock);
	if (!cm_svc.running) {
		pthread_mutex_unlock(&cm_svc.lock);
		return;
	}
	TAILQ_FOREACH(id, &cm_svc.ids, next)
		cm_conn_abandon(id);
	pthread_mutex_unlock(&cm_svc.lock);
	flush_sends();
	pthread_mutex_lock(&cm_svc.lock);
	cm_svc.stop = true;
	cm_wake();
	pthread_mutex_unlock(&cm_svc.lock);
	pthread_join(cm_svc.thread, NULL);
	pthread_mutex_lock(&cm_svc.lock);
	cm_svc.running = false;
	while ((id = TAILQ_FIRST(&cm_svc.ids)) != NULL)
		cm_id_free(id);
	cm_agents_free();
	close(cm_svc.epfd);
	close(cm_svc.wakefd);
	cm_svc.epfd = cm_svc.wakefd = -1;
	pthread_mutex_unlock(&cm_svc.lock);
}
