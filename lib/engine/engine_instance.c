/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Engine lifecycle and control: the instances (dedicated lcores or the inline one), starting
 * and stopping devices on them, calls into an instance from other threads, and the public API
 * (droce_engine.h).
 *
 * Start and stop follow device open and close (verbs calls the hooks under its open lock): the
 * first open of any device creates the instances from the [engine] configuration and launches
 * the dedicated lcores; the first open of a device starts its port and hands it to the
 * instance with the fewest devices; the last close stops it, and when no device is open any
 * more the lcores return (they are launched again by the next open).
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pdump.h>

#include "droce_engine.h"
#include "engine_private.h"
#include "env.h"
#include "verbs_config.h"

RTE_LOG_REGISTER(engine_logtype, droce.engine, NOTICE);

struct engine_config engine_cfg;

static struct {
	pthread_mutex_t lock;		/**< lifecycle; never taken by an instance */
	int state;			/**< 0: not initialised, 1: ready, < 0: failed */
	unsigned int n_lc;
	struct engine_inst *lc[ENGINE_MAX_LCORES];
	unsigned int n_open;		/**< started devices */
	unsigned int n_edev;
	struct engine_shard *edev[DROCE_MAX_DEVICES];	/**< every device ever opened */
} eng = { .lock = PTHREAD_MUTEX_INITIALIZER };

RTE_INIT(engine_register)
{
	verbs_engine_register(&engine_verbs_ops);
}

/* ---- Calls into an instance: through its owner's mailbox (verbs verbs_mbox.c) ---- */

struct engine_call {
	struct verbs_mbox_msg m;
	struct engine_inst *lc;
	engine_call_fn fn;
	void *arg;
};

static void call_run(struct verbs_mbox_msg *m)
{
	struct engine_call *c = container_of(m, struct engine_call, m);

	c->fn(c->lc, c->arg);
}

void engine_inst_call(struct engine_inst *lc, engine_call_fn fn, void *arg)
{
	struct engine_call c = { .m.fn = call_run, .lc = lc, .fn = fn, .arg = arg };

	if (lc->dedicated && rte_lcore_id() == lc->lcore_id) {
		fn(lc, arg);	/* from the instance itself (an owner callback) */
		return;
	}
	/* A running dedicated lcore runs it between two iterations; inline, or a dedicated lcore
	 * that is not running: here, under lc->driver (nobody else iterates meanwhile). */
	verbs_mbox_send(&lc->owner.mbox, &c.m);
}

/* The dedicated lcore: the loop, then the calls queued while it was stopping. */
static int lcore_entry(void *arg)
{
	struct engine_inst *lc = arg;

	engine_lcore_main(lc);
	__atomic_store_n(&lc->running, 0, __ATOMIC_RELEASE);
	verbs_mbox_close(&lc->owner.mbox);
	return 0;
}

/* ---- Instances ---- */

/*
 * Bytes a PMD may count against an RX buffer beyond the frame: DPDK 22.11's virtio PMD
 * refuses an RX queue without scatter unless MTU + 14 + 4 + its 12-byte virtio-net header
 * fit in the data room (the header actually goes to the headroom), 8 bytes more than a frame
 * with its CRC.
 */
#define ENGINE_RX_SLACK 64

/* Data room that holds the largest device frame in one segment (or [engine] mbuf_size). */
static uint16_t data_room(void)
{
	struct droce_device **list = droce_get_device_list(NULL);
	uint32_t mtu = 1500, room;
	unsigned int i;

	for (i = 0; list != NULL && list[i] != NULL; i++)
		mtu = RTE_MAX(mtu, (uint32_t)verbs_device_cfg(list[i])->mtu);
	droce_free_device_list(list);
	room = engine_cfg.mbuf_size != 0 ? engine_cfg.mbuf_size :
		mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN + ENGINE_RX_SLACK;
	room = RTE_MAX(room, (uint32_t)RTE_MBUF_DEFAULT_DATAROOM) + RTE_PKTMBUF_HEADROOM;
	return (uint16_t)RTE_MIN(room, (uint32_t)UINT16_MAX);
}

static struct engine_inst *lcore_create(unsigned int i, unsigned int lcore_id, bool dedicated)
{
	struct engine_inst *lc = rte_zmalloc("droce_engine", sizeof(*lc), RTE_CACHE_LINE_SIZE);
	char name[RTE_MEMPOOL_NAMESIZE];

	if (lc == NULL)
		return NULL;
	lc->lcore_id = lcore_id;
	lc->idx = i;
	lc->dedicated = dedicated;
	snprintf(name, sizeof(name), "drc_pool%u", i);
	lc->pool = rte_pktmbuf_pool_create(name, engine_cfg.mbufs, 256, 0, data_room(),
					   (int)rte_socket_id());
	if (lc->pool == NULL)
		ENGINE_LOG(ERR, "engine instance %u: no mbuf pool of %u mbufs of %u bytes "
			   "(%" PRIu64 " MiB): %s: lower [engine] mbufs (now %u) or mbuf_size (now "
			   "%u; 0: from the largest MTU), or give EAL more memory (-m in [eal] args)",
			   i, engine_cfg.mbufs, data_room(),
			   (uint64_t)engine_cfg.mbufs * (data_room() + 128u) >> 20,
			   rte_strerror(rte_errno), engine_cfg.mbufs, engine_cfg.mbuf_size);
	/* One allocation: the QP list and the doorbell slot map. */
	lc->qps = rte_calloc("droce_engine_qps", 2 * ENGINE_MAX_QPS, sizeof(*lc->qps), 0);
	lc->by_slot = lc->qps + ENGINE_MAX_QPS;
	if (lc->pool == NULL || lc->qps == NULL ||
	    engine_timers_init(&lc->timers, ENGINE_MAX_QPS) != 0 ||
	    verbs_owner_init(&lc->owner, name) != 0) {
		rte_mempool_free(lc->pool);
		rte_free(lc->qps);
		engine_timers_free(&lc->timers);
		rte_free(lc);
		return NULL;
	}
	pthread_mutex_init(&lc->driver, NULL);
	lc->owner.detached = engine_qp_detached;
	lc->owner.modified = engine_qp_modified;
	/* Polled only while a dedicated lcore runs (launch_all() opens it); until then, and for
	 * an inline instance always, a control request runs in its sender under lc->driver. */
	verbs_mbox_close(&lc->owner.mbox);
	lc->owner.mbox.driver = &lc->driver;
	lc->owner.arg = lc;
	lc->env.pool = lc->pool;
	lc->env.hz = rte_get_tsc_hz();
	lc->env.now = rte_rdtsc();
	lc->link_next = engine_cfg.link_poll_ms != 0 ? 0 : UINT64_MAX;	/* 0: at once */
	lc->env.tx = engine_env_tx;
	lc->env.resolve = engine_env_resolve;
	lc->env.extbuf_ok = engine_env_extbuf_ok;
	lc->env.dcqcn = engine_env_dcqcn;
	lc->env.engine = lc;
	return lc;
}

/*
 * Let dpdk-dumpcap (a secondary process) capture the ports: it asks the primary over EAL's
 * multi-process channel to copy every frame a port receives or transmits. Needs shared
 * config (no --no-shconf, no --in-memory) and memory the secondary can map (hugepages):
 * without them rte_pdump_init() fails and captures are just not available.
 */
static void pdump_init(void)
{
	if (!engine_cfg.pdump || rte_eal_process_type() != RTE_PROC_PRIMARY)
		return;
	if (rte_pdump_init() == 0)
		ENGINE_LOG(INFO, "pdump ready: dpdk-dumpcap can capture the ports");
	else if (rte_errno == EEXIST)
		ENGINE_LOG(INFO, "pdump already initialised by the application");
	else
		ENGINE_LOG(INFO, "pdump not available (%s): no dpdk-dumpcap capture",
			   rte_strerror(rte_errno));
}

/* Caller holds eng.lock. */
static int init_locked(void)
{
	unsigned int i, n;

	if (engine_config_load(&engine_cfg) < 0 || engine_cc_config_load() < 0)
		return -EINVAL;
	pdump_init();
	n = engine_cfg.inline_mode ? 1 : engine_cfg.n_lcores;
	for (i = 0; i < n; i++) {
		eng.lc[i] = engine_cfg.inline_mode ?
			lcore_create(i, RTE_MAX_LCORE, false) :
			lcore_create(i, engine_cfg.lcores[i], true);
		if (eng.lc[i] == NULL) {
			ENGINE_LOG(ERR, "cannot create engine instance %u", i);
			return -ENOMEM;
		}
		eng.n_lc++;
	}
	ENGINE_LOG(INFO, "%s, %u instance(s)", engine_cfg.inline_mode ? "inline" : "dedicated",
		   eng.n_lc);
	return 0;
}

static int ensure_init(void)
{
	int rc;

	pthread_mutex_lock(&eng.lock);
	if (eng.state == 0)
		eng.state = init_locked() == 0 ? 1 : -1;
	rc = eng.state == 1 ? 0 : -EIO;
	pthread_mutex_unlock(&eng.lock);
	return rc;
}

/* Caller holds eng.lock. */
static int launch_all(void)
{
	unsigned int i;

	for (i = 0; i < eng.n_lc; i++) {
		struct engine_inst *lc = eng.lc[i];

		if (!lc->dedicated)
			continue;
		__atomic_store_n(&lc->stop, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&lc->running, 1, __ATOMIC_RELEASE);
		verbs_mbox_open(&lc->owner.mbox);
		if (rte_eal_remote_launch(lcore_entry, lc, lc->lcore_id) != 0) {
			verbs_mbox_close(&lc->owner.mbox);
			__atomic_store_n(&lc->running, 0, __ATOMIC_RELEASE);
			ENGINE_LOG(ERR, "lcore %u is busy: cannot launch the engine", lc->lcore_id);
			return -EBUSY;
		}
	}
	return 0;
}

/* Caller holds eng.lock. */
static void stop_all(void)
{
	unsigned int i;

	for (i = 0; i < eng.n_lc; i++) {
		struct engine_inst *lc = eng.lc[i];

		if (!lc->dedicated || !__atomic_load_n(&lc->running, __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&lc->stop, 1, __ATOMIC_RELEASE);
		rte_eal_wait_lcore(lc->lcore_id);
	}
}

/* ---- Devices ---- */

static void add_dev(struct engine_inst *lc, void *arg)
{
	struct engine_shard *edev = arg;

	lc->devs[lc->n_dev++] = edev;
}

static void remove_dev(struct engine_inst *lc, void *arg)
{
	struct engine_shard *edev = arg;
	unsigned int i;

	for (i = 0; i < lc->n_dev; i++) {
		if (lc->devs[i] == edev) {
			lc->devs[i] = lc->devs[--lc->n_dev];
			break;
		}
	}
	if (edev->started)
		engine_shard_flush(edev);
}

static struct engine_shard *edev_get(struct droce_device *dev)
{
	struct engine_shard *edev = verbs_device_engine(dev);

	if (edev != NULL)
		return edev;
	edev = rte_zmalloc("droce_engine_dev", sizeof(*edev), RTE_CACHE_LINE_SIZE);
	if (edev == NULL)
		return NULL;
	edev->dev = dev;
	edev->primary = edev;
	edev->kick_fd = -1;	/* until the port starts (engine_port.c) */
	edev->vlan_on = verbs_device_cfg(dev)->vlan_on;
	edev->vlan_id = verbs_device_cfg(dev)->vlan_id;
	edev->drop_untagged = edev->vlan_on && edev->vlan_id != 0;
	edev->neigh = engine_neigh_create(edev);
	if (edev->neigh == NULL) {
		rte_free(edev);
		return NULL;
	}
	verbs_device_set_engine(dev, edev);
	if (eng.n_edev < DROCE_MAX_DEVICES)	/* under eng.lock (open_locked()) */
		eng.edev[eng.n_edev++] = edev;
	return edev;
}

static void gid_cache(struct engine_shard *edev)
{
	static const uint8_t zero[16];
	const union ibv_gid *g = verbs_device_gids_get(edev->dev);
	unsigned int i;

	edev->n_gid = 0;
	for (i = 0; i < DROCE_MAX_GID; i++)
		if (memcmp(g[i].raw, zero, 16) != 0)
			memcpy(edev->gid[edev->n_gid++], g[i].raw, 16);
}

/* The @p n instances with the fewest devices, fewest first, into @p out. */
static void least_loaded(struct engine_inst **out, unsigned int n)
{
	bool taken[ENGINE_MAX_LCORES] = { false };
	unsigned int k, i, best;

	for (k = 0; k < n; k++) {
		best = UINT32_MAX;
		for (i = 0; i < eng.n_lc; i++)
			if (!taken[i] && (best == UINT32_MAX || eng.lc[i]->n_dev < eng.lc[best]->n_dev))
				best = i;
		taken[best] = true;
		out[k] = eng.lc[best];
	}
}

/* Shards for @p dev: its lcores_per_device, else [engine]'s, no more than its port has queue
 * pairs (a ring-pair device without its port yet will have ENV_PAIR_QUEUES). @return them, or
 * 0 when the device asks for more lcores than the engine has. */
static unsigned int shards_wanted(struct droce_device *dev)
{
	const struct droce_device_cfg *cfg = verbs_device_cfg(dev);
	unsigned int lcores = engine_cfg.inline_mode ? 1 : engine_cfg.n_lcores;
	int port = verbs_device_port(dev);
	unsigned int n = engine_cfg.per_device;
	unsigned int max = port >= 0 ? env_port_max_queues((uint16_t)port) : ENV_PAIR_QUEUES;

	if (cfg->lcores_per_device != 0)
		n = cfg->lcores_per_device == DROCE_LCORES_ALL ? lcores : cfg->lcores_per_device;
	if (n > lcores) {
		char sec[80], where[300];

		snprintf(sec, sizeof(sec), "device %s", cfg->name);
		if (cfg->lcores_per_device != 0)
			verbs_config_where(sec, "lcores_per_device", where, sizeof(where));
		else
			verbs_config_where("engine", "lcores_per_device", where, sizeof(where));
		ENGINE_LOG(ERR, "%s: %s: lcores_per_device %u: %s (engine lcores: [engine] "
			   "lcores)", where, cfg->name, n, engine_cfg.inline_mode ?
			   "the inline engine is one instance" : "more than the engine lcores");
		return 0;
	}
	if (max != 0 && max < n) {
		ENGINE_LOG(INFO, "%s: port %d has %u queue pairs: %u engine lcores serve it, not %u",
			   cfg->name, port, max, max, n);
		n = max;
	}
	return RTE_MAX(n, 1u);
}

/* Caller holds eng.lock. */
static int open_locked(struct droce_device *dev)
{
	struct engine_shard *edev = edev_get(dev);
	struct engine_inst *lcs[ENGINE_MAX_LCORES];
	unsigned int k, n;
	int rc = 0;

	if (edev == NULL)
		return -ENOMEM;
	n = shards_wanted(dev);
	if (n == 0)
		return -EINVAL;
	gid_cache(edev);
	if (engine_shards_make(edev, n) != 0)
		return -ENOMEM;
	edev->n_shards = (uint16_t)n;
	edev->rx_direct = n <= 1 && !edev->drop_untagged;
	least_loaded(lcs, n);
	memset(edev->by_lc, 0, sizeof(edev->by_lc));
	for (k = 0; k < n; k++) {
		edev->shard[k]->lc = lcs[k];
		edev->by_lc[lcs[k]->idx] = edev->shard[k];
	}
	edev->start_failed = false;
	if (verbs_device_port(dev) >= 0)
		rc = engine_port_start(edev, true);
	else	/* engine_link_poll() starts it when it comes */
		ENGINE_LOG(INFO, "%s has no port yet: opened without one",
			   verbs_device_cfg(dev)->name);
	if (rc != 0)
		goto fail;
	if (eng.n_open == 0) {
		rc = launch_all();
		if (rc != 0) {
			stop_all();
			engine_port_stop(edev);
			goto fail;
		}
	}
	eng.n_open++;
	for (k = 0; k < n; k++)
		engine_inst_call(lcs[k], add_dev, edev->shard[k]);
	return 0;
fail:
	for (k = 0; k < n; k++)
		edev->shard[k]->lc = NULL;
	return rc;
}

int engine_device_open(struct droce_device *dev);
void engine_device_close(struct droce_device *dev);

int engine_device_open(struct droce_device *dev)
{
	int rc = ensure_init();

	if (rc != 0)
		return rc;
	pthread_mutex_lock(&eng.lock);
	rc = open_locked(dev);
	pthread_mutex_unlock(&eng.lock);
	return rc;
}

/* @p out = the sum of primary @p p's shards' counters (each read where it cannot race). */
static void counters_sum(const struct engine_shard *p, struct droce_counters *out)
{
	unsigned int k, i;

	*out = p->cnt;
	for (k = 1; k < p->n_shards; k++) {
		const uint64_t *v = (const uint64_t *)&p->shard[k]->cnt;

		for (i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
			((uint64_t *)out)[i] += v[i];
	}
}

/* [engine] log_counters: one line of the counters that are not 0, with the parser's reasons
 * (the device is off its lcores: nothing changes them any more). */
static void log_counters(const struct engine_shard *p, struct droce_device *dev)
{
	struct droce_counters sum, *c = &sum;
	const uint64_t *v = (const uint64_t *)c;
	char line[4096];
	const char *name;
	size_t n = 0;
	unsigned int i;

	counters_sum(p, &sum);
	for (i = 0; (name = droce_counter_name(i)) != NULL && n < sizeof(line); i++)
		if (v[i] != 0)
			n += (size_t)snprintf(line + n, sizeof(line) - n, " %s=%" PRIu64, name, v[i]);
	for (i = 0; i < DROCE_PARSE_ERR_NUM && n < sizeof(line); i++)
		if (c->parse_err[i] != 0)
			n += (size_t)snprintf(line + n, sizeof(line) - n, " parse_err[%s]=%" PRIu64,
					      droce_parse_err_name((enum droce_parse_err)i),
					      c->parse_err[i]);
	ENGINE_LOG(NOTICE, "%s: counters at close:%s", droce_get_device_name(dev),
		   n != 0 ? line : " all 0");
}

void engine_device_close(struct droce_device *dev)
{
	struct engine_shard *edev = verbs_device_engine(dev);
	unsigned int k;

	if (edev == NULL || edev->lc == NULL)
		return;
	pthread_mutex_lock(&eng.lock);
	for (k = 0; k < edev->n_shards; k++)
		engine_inst_call(edev->shard[k]->lc, remove_dev, edev->shard[k]);
	if (engine_cfg.log_counters)
		log_counters(edev, dev);
	for (k = edev->n_shards; k-- > 0;)
		edev->shard[k]->lc = NULL;
	engine_port_stop(edev);
	if (--eng.n_open == 0)
		stop_all();
	pthread_mutex_unlock(&eng.lock);
}

/* ---- Public API ---- */

int droce_engine_poll(struct droce_context *ctx)
{
	struct engine_shard *edev;
	struct engine_inst *lc;
	unsigned int n;

	if (ctx == NULL)
		return -EINVAL;
	edev = verbs_device_engine(ctx->device);
	lc = edev != NULL ? __atomic_load_n(&edev->lc, __ATOMIC_ACQUIRE) : NULL;
	if (lc == NULL)
		return -ENODEV;
	if (lc->dedicated)
		return -EBUSY;
	pthread_mutex_lock(&lc->driver);
	n = engine_iteration(lc);
	pthread_mutex_unlock(&lc->driver);
	return (int)RTE_MIN(n, (unsigned int)INT32_MAX);
}

/* droce_dereg_mr() waits for zero-copy frames of @p dev: an inline instance moves them only
 * when somebody drives it, a dedicated lcore needs time only. */
void engine_mr_wait(struct droce_device *dev)
{
	struct engine_shard *edev = verbs_device_engine(dev);
	struct engine_inst *lc = edev != NULL ? __atomic_load_n(&edev->lc, __ATOMIC_ACQUIRE) :
			NULL;

	if (lc != NULL && !lc->dedicated && pthread_mutex_trylock(&lc->driver) == 0) {
		engine_iteration(lc);
		pthread_mutex_unlock(&lc->driver);
		return;
	}
	sched_yield();
}

static void quiesce_op(struct engine_inst *lc, void *arg)
{
	RTE_SET_USED(lc);
	RTE_SET_USED(arg);
}

/*
 * droce_dereg_mr() removed an MR of @p dev from the table: wait until each instance serving
 * the device (each shard's) is between two iterations. A dedicated lcore runs queued calls after the RX,
 * TX and timer phases of an iteration (engine_iteration()), so a no-op call that has run
 * proves that every MR lookup made before it was queued has finished its copy; an inline
 * instance iterates under lc->driver, so holding it is that point; an instance that is not
 * running iterates nowhere (engine_inst_call() then just takes lc->driver). The MR keeps
 * its context, hence the device, open: the shards' lcs do not change meanwhile.
 */
void engine_mr_quiesce(struct droce_device *dev)
{
	struct engine_shard *edev = verbs_device_engine(dev);
	struct engine_inst *lc;
	unsigned int k;

	for (k = 0; edev != NULL && k < edev->n_shards; k++) {
		lc = __atomic_load_n(&edev->shard[k]->lc, __ATOMIC_ACQUIRE);
		if (lc != NULL)
			engine_inst_call(lc, quiesce_op, NULL);
	}
}

bool droce_engine_is_inline(void)
{
	struct droce_device **list = droce_get_device_list(NULL);

	droce_free_device_list(list);	/* loads the configuration, starts EAL */
	return ensure_init() == 0 ? engine_cfg.inline_mode : false;
}

struct counters_arg {
	struct engine_shard *shard;
	struct droce_counters *out;	/**< NULL: reset */
};

static void counters_op(struct engine_inst *lc, void *arg)
{
	struct counters_arg *a = arg;
	unsigned int i;

	RTE_SET_USED(lc);
	if (a->out != NULL) {
		*a->out = a->shard->cnt;
		return;
	}
	memset(&a->shard->cnt, 0, sizeof(a->shard->cnt));
	for (i = 0; i < DROCE_QP_SLOTS; i++)	/* the QPs' shares go with the device's */
		if (a->shard->qps[i] != NULL)
			memset(transport_qp_counters(a->shard->qps[i]->t), 0,
			       sizeof(struct droce_counters));
}

/* Run a counter operation on each shard where it cannot race the instance serving it; a read
 * sums the shards. */
static int counters_do(struct droce_context *ctx, struct droce_counters *out)
{
	struct droce_counters part;
	struct counters_arg a = { .out = out != NULL ? &part : NULL };
	struct engine_shard *edev;
	unsigned int k, i;

	if (ctx == NULL)
		return -EINVAL;
	edev = verbs_device_engine(ctx->device);
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (edev == NULL)
		return 0;
	pthread_mutex_lock(&eng.lock);	/* the device stays on its instances meanwhile */
	for (k = 0; k < RTE_MAX(edev->n_shards, (uint16_t)1); k++) {
		a.shard = edev->shard[k] != NULL ? edev->shard[k] : edev;
		if (a.shard->lc != NULL)
			engine_inst_call(a.shard->lc, counters_op, &a);
		else
			counters_op(NULL, &a);
		for (i = 0; out != NULL && i < sizeof(part) / sizeof(uint64_t); i++)
			((uint64_t *)out)[i] += ((const uint64_t *)&part)[i];
	}
	pthread_mutex_unlock(&eng.lock);
	return 0;
}

struct neigh_arg {
	struct engine_shard *edev;
	const uint8_t *addr;
	uint8_t *mac;
	int rc;
};

static void neigh_op(struct engine_inst *lc, void *arg)
{
	struct neigh_arg *a = arg;

	a->rc = engine_neigh_lookup(lc, a->edev, a->addr, a->mac);
}

int droce_engine_neigh_resolve(struct droce_context *ctx, const union ibv_gid *addr,
			       uint8_t mac[6])
{
	struct neigh_arg a = { .addr = addr != NULL ? addr->raw : NULL, .mac = mac, .rc = -ENODEV };

	if (ctx == NULL || addr == NULL || mac == NULL)
		return -EINVAL;
	a.edev = verbs_device_engine(ctx->device);
	if (a.edev == NULL)
		return -ENODEV;
	pthread_mutex_lock(&eng.lock);	/* the device stays on its instance meanwhile */
	if (a.edev->lc != NULL && a.edev->started)
		engine_inst_call(a.edev->lc, neigh_op, &a);
	pthread_mutex_unlock(&eng.lock);
	return a.rc;
}

int droce_query_counters(struct droce_context *ctx, struct droce_counters *out)
{
	if (out == NULL)
		return -EINVAL;
	return counters_do(ctx, out);
}

int droce_counters_reset(struct droce_context *ctx)
{
	return counters_do(ctx, NULL);
}

/* ---- Observability (engine_telemetry.c) ---- */

int engine_view_run(int (*fn)(const struct engine_view *v, void *arg), void *arg)
{
	struct engine_view v;
	int rc = -ENODEV;

	pthread_mutex_lock(&eng.lock);	/* devices stay on their instances meanwhile */
	/* Only while a device is open: after the last close the application may tear EAL down
	 * (rte_eal_cleanup() unmaps the memory of the instances and devices) while DPDK's
	 * telemetry thread still runs. */
	if (eng.state == 1 && eng.n_open > 0) {
		v.n_lc = eng.n_lc;
		v.lc = eng.lc;
		v.n_dev = eng.n_edev;
		v.dev = eng.edev;
		rc = fn(&v, arg);
	}
	pthread_mutex_unlock(&eng.lock);
	return rc;
}
