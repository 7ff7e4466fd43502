/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Devices: configuration loading, the device list and the device queries. A device is created
 * once and lives as long as the process. EAL is started (env_eal_start(), with the [eal] args
 * of the configuration, unless the application started it) and each device's port is created
 * or probed (env_port_pair(), env_port_probe()) by the env layer, when droce first needs them.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "env.h"
#include "verbs_config.h"
#include "verbs_private.h"

RTE_LOG_REGISTER(verbs_logtype, droce.verbs, NOTICE);

static struct {
	pthread_mutex_t lock;
	int rc;			/**< 1: not yet initialised, 0: ready, < 0: failed */
	unsigned int n_dev;
	struct droce_device *dev[DROCE_MAX_DEVICES];
	unsigned int n_engine;
	struct verbs_kv engine[VERBS_MAX_KV];	/**< the [engine] section, for the engine layer */
	unsigned int n_cm;
	struct verbs_kv cm[VERBS_MAX_KV];	/**< the [cm] section, for lib/cm */
	unsigned int n_dcqcn;
	struct verbs_kv dcqcn[VERBS_MAX_KV];	/**< the [dcqcn] section, for the engine */
	char *config_path;	/**< DROCE_CONFIG as loaded, NULL: the embedded default */
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .rc = 1 };

/*
 * The engine's hooks, and the lock that serialises device open/close with them (held across
 * the hooks, which may wait for an engine lcore; never taken by the engine).
 */
static const struct verbs_engine_ops *engine_ops;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

void verbs_engine_register(const struct verbs_engine_ops *ops)
{
	__atomic_store_n(&engine_ops, ops, __ATOMIC_RELEASE);
}

const struct verbs_engine_ops *verbs_engine_ops_get(void)
{
	return __atomic_load_n(&engine_ops, __ATOMIC_ACQUIRE);
}

enum ibv_mtu verbs_mtu_from_eth(unsigned int eth_mtu)
{
	enum ibv_mtu m;

	for (m = IBV_MTU_4096; m > IBV_MTU_256; m--)
		if ((128u << m) + DROCE_ROCE_OVERHEAD <= eth_mtu)
			break;
	return m;
}

/* Modified EUI-64 from a MAC (RFC 4291 appendix A): the GUID and the link-local GID. */
static void eui64(const uint8_t mac[6], uint8_t out[8])
{
	out[0] = mac[0] ^ 2;
	out[1] = mac[1];
	out[2] = mac[2];
	out[3] = 0xff;
	out[4] = 0xfe;
	out[5] = mac[3];
	out[6] = mac[4];
	out[7] = mac[5];
}

void verbs_device_gids(struct droce_device *dev)
{
	const struct droce_device_cfg *c = &dev->cfg;
	unsigned int i, n = 0;

	memset(dev->gid, 0, sizeof(dev->gid));
	dev->gid[n].raw[0] = 0xfe;
	dev->gid[n].raw[1] = 0x80;
	eui64(c->mac, &dev->gid[n].raw[8]);
	memcpy(&dev->guid, &dev->gid[n].raw[8], 8);
	n++;
	if (c->has_ipv4) {
		dev->gid[n].raw[10] = 0xff;
		dev->gid[n].raw[11] = 0xff;
		memcpy(&dev->gid[n].raw[12], c->ipv4, 4);
		n++;
	}
	for (i = 0; i < c->n_ipv6 && n < DROCE_MAX_GID; i++, n++)
		memcpy(dev->gid[n].raw, c->ipv6[i], 16);
}

static bool mac_is_zero(const uint8_t mac[6])
{
	static const uint8_t zero[6];

	return memcmp(mac, zero, 6) == 0;
}

static void port_ready(struct droce_device *dev, uint16_t port_id)
{
	uint8_t mac[6];

	if (mac_is_zero(dev->cfg.mac) && env_port_mac(port_id, mac) == 0) {
		memcpy(dev->cfg.mac, mac, 6);
		verbs_device_gids(dev);
	}
	/* Last, and pairs with the load-acquire in verbs_device_port(): an engine that sees the
	 * port (a ring pair's late partner: its link poll starts it) sees the ethdev, MAC and
	 * GIDs complete. */
	__atomic_store_n(&dev->port_id, port_id, __ATOMIC_RELEASE);
}

/* The two devices of a ring pair get their ports together, each receiving what the other
 * transmits. */
static int join_pair(struct droce_device *a, struct droce_device *b)
{
	uint16_t pa, pb;

	if (a->cfg.lcores_per_device != b->cfg.lcores_per_device) {
		char sec[80], where[300];

		/* Shard k of one side transmits on queue k, which shard k of the other polls. */
		snprintf(sec, sizeof(sec), "device %s", b->cfg.name);
		verbs_config_where(sec, NULL, where, sizeof(where));
		VERBS_LOG(ERR, "%s: ring pair %s: %s and %s have different lcores_per_device: "
			  "give both the same", where, a->cfg.ring_pair, a->cfg.name, b->cfg.name);
		return -EINVAL;
	}
	if (env_port_pair(a->cfg.ring_pair, a->cfg.name, b->cfg.name, &pa, &pb) != 0) {
		VERBS_LOG(ERR, "cannot join ring pair %s", a->cfg.ring_pair);
		return -ENODEV;
	}
	port_ready(a, pa);
	port_ready(b, pb);
	return 0;
}

/* Why a port may not come from @p devargs, and what to do. */
static void probe_hint(const char *devargs, char *buf, size_t len)
{
	char iface[IF_NAMESIZE + 1] = "";
	const char *p = strstr(devargs, "iface=");

	if (p != NULL)
		snprintf(iface, sizeof(iface), "%.*s", (int)strcspn(p + 6, ","), p + 6);
	if (iface[0] != '\0' && if_nametoindex(iface) == 0)
		snprintf(buf, len, "network interface '%s' does not exist: iface= must name an "
			 "existing interface ('ip link show' lists them)", iface);
	else if (iface[0] != '\0')
		snprintf(buf, len, "interface '%s' exists; its driver refused it (DPDK's message "
			 "above)%s", iface, geteuid() == 0 ? "" : "; raw sockets need root or "
			 "CAP_NET_RAW");
	else if (strncmp(devargs, "net_", 4) == 0 || strncmp(devargs, "eth_", 4) == 0)
		snprintf(buf, len, "a virtual device: is its driver in this DPDK and are its "
			 "arguments right (DPDK's message above; 'dpdk-testpmd --vdev=...' tries "
			 "it)?");
	else
		snprintf(buf, len, "not a virtual device (net_...): it must be the PCI address of "
			 "a NIC bound to vfio-pci or uio ('dpdk-devbind.py --status'), with no "
			 "--no-pci in [eal] args");
}

static int probe_devargs(struct droce_device *dev)
{
	uint16_t port;
	int rc = env_port_probe(dev->cfg.devargs, &port);

	if (rc == -ENODEV) {
		char why[384];

		probe_hint(dev->cfg.devargs, why, sizeof(why));
		VERBS_LOG(ERR, "[device %s] devargs = '%s': no port: %s", dev->cfg.name,
			  dev->cfg.devargs, why);
	}
	if (rc < 0)
		return rc;
	port_ready(dev, port);
	return 0;
}

/*
 * A ring-pair device whose partner is not there yet stays without port until it is; then its
 * open contexts get PORT_ACTIVE. Its GIDs stay (no GID_CHANGE): without a configured MAC it
 * takes the port's, and a net_ring port's MAC is 00:00:00:00:00:00, the one it had.
 */
static int attach_port(struct droce_device *dev)
{
	unsigned int i;

	if (dev->cfg.devargs[0] != '\0')
		return probe_devargs(dev);
	for (i = 0; i < g.n_dev; i++) {
		struct droce_device *o = g.dev[i];

		if (o->port_id < 0 && strcmp(o->cfg.ring_pair, dev->cfg.ring_pair) == 0) {
			int rc = join_pair(o, dev);

			if (rc == 0)
				verbs_device_event(o, IBV_EVENT_PORT_ACTIVE);
			return rc;
		}
	}
	return 0;
}

static struct droce_device *find_dev(const char *name)
{
	unsigned int i;

	for (i = 0; i < g.n_dev; i++)
		if (strcmp(g.dev[i]->cfg.name, name) == 0)
			return g.dev[i];
	return NULL;
}

/* Caller holds g.lock. */
static int add_device(const struct droce_device_cfg *cfg)
{
	struct droce_device *dev;
	int rc = verbs_config_check_dev(cfg);

	if (rc < 0)
		return rc;
	if (find_dev(cfg->name) != NULL)
		return -EEXIST;
	if (g.n_dev == DROCE_MAX_DEVICES)
		return -ENOSPC;
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL)
		return -ENOMEM;
	dev->cfg = *cfg;
	if (dev->cfg.mtu == 0)
		dev->cfg.mtu = 1500;
	dev->port_id = -1;
	dev->index = g.n_dev;
	dev->active_mtu = verbs_mtu_from_eth(dev->cfg.mtu);
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->mcast_lock, NULL);
	TAILQ_INIT(&dev->contexts);
	verbs_device_gids(dev);
	rc = attach_port(dev);
	if (rc < 0) {
		free(dev);
		return rc;
	}
	g.dev[g.n_dev++] = dev;
	return 0;
}

static int eal_start(const char *args, const char *path)
{
	char why[512];
	int rc = env_eal_start(args);

	if (rc < 0) {
		env_eal_explain(args, rte_errno, why, sizeof(why));
		VERBS_LOG(ERR, "EAL did not start with [eal] args = '%s' of %s: %s", args,
			  path != NULL ? path : "the embedded default", why);
	}
	return rc;
}

static int init_locked(void)
{
	struct verbs_config *cfg;
	const char *path = getenv("DROCE_CONFIG");
	unsigned int i;
	int rc;

	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	if (path != NULL && path[0] != '\0')
		g.config_path = strdup(path);
	rc = verbs_config_load(g.config_path, cfg);
	if (rc == 0) {
		g.n_engine = cfg->n_engine;
		memcpy(g.engine, cfg->engine, sizeof(g.engine));
		g.n_cm = cfg->n_cm;
		memcpy(g.cm, cfg->cm, sizeof(g.cm));
		g.n_dcqcn = cfg->n_dcqcn;
		memcpy(g.dcqcn, cfg->dcqcn, sizeof(g.dcqcn));
		rc = eal_start(cfg->eal_args, g.config_path);
	}
	for (i = 0; rc == 0 && i < cfg->n_dev; i++) {
		rc = add_device(&cfg->dev[i]);
		if (rc < 0)
			VERBS_LOG(ERR, "device %s: %s", cfg->dev[i].name, strerror(-rc));
	}
	free(cfg);
	return rc;
}

int verbs_init(void)
{
	int rc;

	pthread_mutex_lock(&g.lock);
	if (g.rc == 1)
		g.rc = init_locked();
	rc = g.rc;
	pthread_mutex_unlock(&g.lock);
	return rc;
}

bool droce_owns_eal(void)
{
	bool own;

	pthread_mutex_lock(&g.lock);
	own = env_eal_owned();
	pthread_mutex_unlock(&g.lock);
	return own;
}

int droce_device_add(const struct droce_device_cfg *cfg)
{
	int rc;

	if (cfg == NULL)
		return -EINVAL;
	rc = verbs_init();
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&g.lock);
	rc = add_device(cfg);
	pthread_mutex_unlock(&g.lock);
	return rc;
}

struct droce_device *verbs_device_find(const char *name)
{
	struct droce_device *d;

	pthread_mutex_lock(&g.lock);
	d = find_dev(name);
	pthread_mutex_unlock(&g.lock);
	return d;
}

int verbs_device_port(const struct droce_device *dev)
{
	return __atomic_load_n(&dev->port_id, __ATOMIC_ACQUIRE);
}

const char *verbs_config_path(void)
{
	return g.config_path;	/* written once, at initialisation */
}

unsigned int verbs_engine_config(const struct verbs_kv **kv)
{
	*kv = g.engine;	/* written once, before any device exists */
	return g.n_engine;
}

unsigned int verbs_cm_config(const struct verbs_kv **kv)
{
	*kv = g.cm;	/* written once, at initialisation */
	return g.n_cm;
}

unsigned int verbs_dcqcn_config(const struct verbs_kv **kv)
{
	*kv = g.dcqcn;	/* written once, at initialisation */
	return g.n_dcqcn;
}

void *verbs_device_engine(const struct droce_device *dev)
{
	return __atomic_load_n(&dev->engine, __ATOMIC_ACQUIRE);
}

void verbs_device_set_engine(struct droce_device *dev, void *priv)
{
	__atomic_store_n(&dev->engine, priv, __ATOMIC_RELEASE);
}

const struct droce_device_cfg *verbs_device_cfg(const struct droce_device *dev)
{
	return &dev->cfg;
}

const union ibv_gid *verbs_device_gids_get(const struct droce_device *dev)
{
	return dev->gid;
}

unsigned int verbs_device_index(const struct droce_device *dev)
{
	return dev->index;
}

/* The first open starts the device in the engine, the last close stops it. */
static int device_engine_start(struct droce_device *dev)
{
	const struct verbs_engine_ops *ops = verbs_engine_ops_get();
	int rc = 0;

	pthread_mutex_lock(&open_lock);
	if (dev->n_open == 0 && ops != NULL)
		rc = ops->device_open(dev);
	if (rc == 0)
		dev->n_open++;
	pthread_mutex_unlock(&open_lock);
	return rc;
}

static void device_engine_stop(struct droce_device *dev)
{
	const struct verbs_engine_ops *ops = verbs_engine_ops_get();

	pthread_mutex_lock(&open_lock);
	if (--dev->n_open == 0 && ops != NULL)
		ops->device_close(dev);
	pthread_mutex_unlock(&open_lock);
}

struct droce_device **droce_get_device_list(int *num_devices)
{
	struct droce_device **list;
	unsigned int i;

	int rc = verbs_init();

	if (rc < 0) {
		errno = rc == -EINVAL ? EINVAL : EIO;
		return NULL;
	}
	pthread_mutex_lock(&g.lock);
	list = calloc(g.n_dev + 1, sizeof(*list));
	if (list != NULL) {
		for (i = 0; i < g.n_dev; i++)
			list[i] = g.dev[i];
		if (num_devices != NULL)
			*num_devices = (int)g.n_dev;
	}
	pthread_mutex_unlock(&g.lock);
	if (list == NULL)
		errno = ENOMEM;
	return list;
}

void droce_free_device_list(struct droce_device **list)
{
	free(list);
}

const char *droce_get_device_name(struct droce_device *device)
{
	if (device == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return device->cfg.name;
}

__be64 droce_get_device_guid(struct droce_device *device)
{
	return device != NULL ? device->guid : 0;
}

struct droce_context *droce_open_device(struct droce_device *device)
{
	struct verbs_ctx *ctx;
	int rc;

	if (device == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->pub.device = device;
	ctx->pub.num_comp_vectors = DROCE_COMP_VECTORS;
	rc = verbs_async_init(ctx);
	if (rc != 0) {
		free(ctx);
		errno = rc;
		return NULL;
	}
	rc = device_engine_start(device);
	if (rc != 0) {
		verbs_async_fini(ctx);
		free(ctx);
		errno = -rc;
		return NULL;
	}
	pthread_mutex_lock(&device->lock);
	TAILQ_INSERT_TAIL(&device->contexts, ctx, next);
	pthread_mutex_unlock(&device->lock);
	return &ctx->pub;
}

int droce_close_device(struct droce_context *context)
{
	struct verbs_ctx *ctx;
	struct droce_device *dev;

	if (context == NULL) {
		errno = EINVAL;
		return -1;
	}
	ctx = to_vctx(context);
	if (__atomic_load_n(&ctx->n_objs, __ATOMIC_ACQUIRE) != 0) {
		errno = EBUSY;
		return -1;
	}
	dev = context->device;
	pthread_mutex_lock(&dev->lock);
	TAILQ_REMOVE(&dev->contexts, ctx, next);
	pthread_mutex_unlock(&dev->lock);
	device_engine_stop(dev);
	verbs_async_fini(ctx);
	free(ctx);
	return 0;
}

void verbs_ctx_get(struct droce_context *c)
{
	__atomic_fetch_add(&to_vctx(c)->n_objs, 1, __ATOMIC_RELAXED);
}

void verbs_ctx_put(struct droce_context *c)
{
	__atomic_fetch_sub(&to_vctx(c)->n_objs, 1, __ATOMIC_RELEASE);
}

int droce_query_device(struct droce_context *context, struct ibv_device_attr *a)
{
	struct droce_device *dev;

	if (context == NULL || a == NULL)
		return EINVAL;
	dev = context->device;
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "droce %s", "0.1.0");
	a->node_guid = dev->guid;
	a->sys_image_guid = dev->guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 4096;
	a->max_qp = DROCE_MAX_QP;
	a->max_qp_wr = DROCE_MAX_QP_WR;
	/* Windows of type 1 and 2B (verbs_mw.c); no MEM_MGT_EXTENSIONS: no fast-registration MR. */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = DROCE_MAX_SGE;
	a->max_sge_rd = DROCE_MAX_SGE;
	a->max_cq = DROCE_MAX_CQ;
	a->max_cqe = DROCE_MAX_CQE;
	a->max_mr = DROCE_MAX_MR;
	a->max_mw = DROCE_MAX_MW;
	a->max_pd = DROCE_MAX_PD;
	a->max_qp_rd_atom = DROCE_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = DROCE_MAX_RD_ATOM;
	a->max_res_rd_atom = DROCE_MAX_RD_ATOM * DROCE_MAX_QP;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = DROCE_MAX_AH;
	a->max_srq = DROCE_MAX_SRQ;
	a->max_srq_wr = DROCE_MAX_SRQ_WR;
	a->max_srq_sge = DROCE_MAX_SGE;
	a->max_pkeys = 1;
	a->max_mcast_grp = DROCE_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = DROCE_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = DROCE_MAX_TOTAL_MCAST_QP_ATTACH;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	return 0;
}

int droce_query_device_ex(struct droce_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;
	int rc;

	if (context == NULL || attr == NULL || (input != NULL && input->comp_mask != 0) ||
	    attr_size < sizeof(a.orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	rc = droce_query_device(context, &a.orig_attr);
	if (rc != 0)
		return rc;
	a.device_cap_flags_ex = (uint64_t)a.orig_attr.device_cap_flags |
				DROCE_DEVICE_ATOMIC_WRITE | DROCE_DEVICE_FLUSH_GLOBAL |
				DROCE_DEVICE_FLUSH_PERSISTENT;
	a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;	/* as libibverbs fills it */
	memcpy(attr, &a, RTE_MIN(attr_size, sizeof(a)));
	return 0;
}

/*
 * The port's rate as Linux gives a RoCE port's (ib_get_eth_speed(), which rxe's query_port
 * calls): the netdev's speed as an IB width times a lane speed. Here the netdev is the DPDK
 * port (rte_eth_link_get_nowait()); one that does not say (RTE_ETH_SPEED_NUM_NONE, _UNKNOWN)
 * counts as 1 Gb/s, as Linux counts a netdev without a speed: 1X SDR. DPDK 22.11 reports no
 * lane count, so the mapping is Linux's for a link without one.
 */
void verbs_device_rate(const struct droce_device *dev, uint32_t *mbps, uint8_t *width,
		       uint8_t *speed)
{
	static const struct { uint32_t up_to; uint8_t width, speed; } map[] = {
		{ 1000, 1, 1 },		/* 1X SDR: 2.5 Gb/s */
		{ 10000, 1, 8 },	/* 1X FDR10: 10 Gb/s */
		{ 20000, 2, 2 },	/* 4X DDR: 20 Gb/s */
		{ 25000, 1, 32 },	/* 1X EDR: 25 Gb/s */
		{ 40000, 2, 8 },	/* 4X FDR10: 40 Gb/s */
		{ UINT32_MAX, 2, 32 },	/* 4X EDR: 100 Gb/s */
	};
	int port = verbs_device_port(dev);
	uint32_t m = port < 0 ? 0 : env_port_link_mbps((uint16_t)port);
	unsigned int i;

	*mbps = m;
	if (m == 0)
		m = 1000;
	for (i = 0; m > map[i].up_to; i++)
		;
	*width = map[i].width;
	*speed = map[i].speed;
}

void verbs_device_link(struct droce_device *dev, bool up)
{
	uint32_t down = up ? 0 : 1;

	/* Only a change raises: the engine may report the state it sampled at port start. */
	if (__atomic_exchange_n(&dev->link_down, down, __ATOMIC_ACQ_REL) == down)
		return;
	VERBS_LOG(NOTICE, "%s: port 1 %s", dev->cfg.name,
		  up ? "ACTIVE: link up" : "DOWN: link down");
	verbs_device_event(dev, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR);
}

int droce_query_port(struct droce_context *context, uint8_t port_num,
		     struct ibv_port_attr *p)
{
	struct droce_device *dev;
	bool has_port, up;
	uint32_t mbps;

	if (context == NULL || p == NULL || port_num != 1)
		return EINVAL;
	dev = context->device;
	has_port = verbs_device_port(dev) >= 0;
	up = has_port && !__atomic_load_n(&dev->link_down, __ATOMIC_ACQUIRE);
	memset(p, 0, sizeof(*p));
	p->state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	p->max_mtu = IBV_MTU_4096;
	p->active_mtu = dev->active_mtu;
	p->gid_tbl_len = DROCE_MAX_GID;
	p->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_VENDOR_CLASS_SUP;
	p->max_msg_sz = 1u << 31;
	p->pkey_tbl_len = 1;
	p->max_vl_num = 1;
	verbs_device_rate(dev, &mbps, &p->active_width, &p->active_speed);
	/* As rxe: LinkUp; Polling while the port waits for its link; Disabled without a port. */
	p->phys_state = up ? 5 : has_port ? 2 : 3;
	p->link_layer = IBV_LINK_LAYER_ETHERNET;
	p->flags = IBV_QPF_GRH_REQUIRED;
	return 0;
}

int droce_query_gid(struct droce_context *context, uint8_t port_num, int index,
		    union ibv_gid *gid)
{
	if (context == NULL || gid == NULL || port_num != 1 || index < 0 ||
	    index >= DROCE_MAX_GID) {
		errno = EINVAL;
		return -1;
	}
	*gid = context->device->gid[index];
	return 0;
}

int droce_query_pkey(struct droce_context *context, uint8_t port_num, int index,
		     __be16 *pkey)
{
	if (context == NULL || pkey == NULL || port_num != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = 0xffff;	/* the default P_Key, full membership; the same in both byte orders */
	return 0;
}
