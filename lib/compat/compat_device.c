/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Devices and contexts: discovery from DROCE_CONFIG (through droce_get_device_list(): no
 * sysfs, no kernel), ibv_open_device() filling the ops the inline verbs call and starting
 * the driver of an inline engine (compat_driver.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat_private.h"

#undef ibv_get_device_list
#undef ibv_query_port

/*
 * What ibv_get_sysfs_path() answers. droce's devices are in no sysfs, so the drop-in's sysfs is
 * a directory that cannot exist (Debian's /nonexistent convention), and the devices' dev_path
 * and ibdev_path lie under it: every file a caller reads there fails to open, as reading an
 * attribute a kernel does not provide, and nothing made of a droce device's name can read a
 * kernel device's attributes instead. SYSFS_PATH, which libibverbs follows, is not: no sysfs
 * tree describes droce's devices.
 */
#define COMPAT_SYSFS_PATH "/nonexistent/droce/sys"

/* Devices are made once and kept: droce's devices live as long as the process. */
static struct {
	pthread_mutex_t lock;
	struct compat_device *dev;
	int n_dev;
	int n_open;			/**< contexts the application has open */
	TAILQ_HEAD(, compat_ctx) ctxs;	/**< those contexts (closed at exit) */
	pid_t pid;			/**< the process that opened them */
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .ctxs = TAILQ_HEAD_INITIALIZER(g.ctxs) };

static void fill_device(struct compat_device *cd, struct droce_device *d, int index)
{
	cd->d = d;
	cd->ibv.node_type = IBV_NODE_CA;
	cd->ibv.transport_type = IBV_TRANSPORT_IB;	/* RoCE is the IB transport */
	snprintf(cd->ibv.name, sizeof(cd->ibv.name), "%s", droce_get_device_name(d));
	snprintf(cd->ibv.dev_name, sizeof(cd->ibv.dev_name), "uverbs%d", index);
	/* Laid out as rdma-core's, under a sysfs that does not exist (COMPAT_SYSFS_PATH). */
	snprintf(cd->ibv.dev_path, sizeof(cd->ibv.dev_path), "%s/class/infiniband_verbs/%s",
		 COMPAT_SYSFS_PATH, cd->ibv.dev_name);
	snprintf(cd->ibv.ibdev_path, sizeof(cd->ibv.ibdev_path), "%s/class/infiniband/%s",
		 COMPAT_SYSFS_PATH, cd->ibv.name);
}

static int discover_locked(void)
{
	const char *cfg = getenv("DROCE_CONFIG");
	struct droce_device **list;
	int i, n = 0;

	if (g.dev != NULL)
		return 0;
	list = droce_get_device_list(&n);
	if (list == NULL || n == 0) {
		COMPAT_MSG("no droce device from %s%s: %s (see doc/compat.md)",
			   cfg != NULL && cfg[0] != '\0' ? "DROCE_CONFIG=" : "the embedded default",
			   cfg != NULL && cfg[0] != '\0' ? cfg : "",
			   list == NULL ? "the configuration could not be used" :
			   "it has no [device] section");
		droce_free_device_list(list);
		return list == NULL ? errno : ENODEV;
	}
	g.dev = calloc((size_t)n, sizeof(*g.dev));
	if (g.dev == NULL) {
		droce_free_device_list(list);
		return ENOMEM;
	}
	for (i = 0; i < n; i++) {
		fill_device(&g.dev[i], list[i], i);
		compat_present_device(&g.dev[i].ibv, droce_get_device_guid(list[i]));
	}
	g.n_dev = n;
	droce_free_device_list(list);
	return 0;
}

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list = NULL;
	int i, rc;

	pthread_mutex_lock(&g.lock);
	rc = discover_locked();
	if (rc == 0) {
		list = calloc((size_t)g.n_dev + 1, sizeof(*list));
		rc = list == NULL ? ENOMEM : 0;
		for (i = 0; list != NULL && i < g.n_dev; i++)
			list[i] = &g.dev[i].ibv;
	}
	if (num_devices != NULL)
		*num_devices = list != NULL ? g.n_dev : 0;
	pthread_mutex_unlock(&g.lock);
	if (list == NULL)
		errno = rc;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	if (device == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return device->name;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	if (device == NULL) {
		errno = EINVAL;
		return 0;
	}
	return droce_get_device_guid(compat_container_of(device, struct compat_device, ibv)->d);
}

int ibv_get_device_index(struct ibv_device *device)
{
	if (device == NULL)
		return compat_fail(EINVAL);
	return (int)(compat_container_of(device, struct compat_device, ibv) - g.dev);
}

/* The first open starts an inline engine's driver (compat_driver.c), the last close stops it. */
static int driver_start_locked(struct compat_device *cd)
{
	int rc;

	if (g.n_open++ > 0)
		return 0;
	rc = compat_driver_start(cd->d);
	if (rc != 0)
		g.n_open--;
	return rc;
}

static void driver_stop_locked(void)
{
	if (--g.n_open > 0)
		return;
	compat_driver_stop();
}

/* ---- Contexts ---- */

static int compat_query_port_ex(struct ibv_context *context, uint8_t port_num,
				struct ibv_port_attr *attr, size_t len)
{
	struct ibv_port_attr a;
	int rc;

	if (context == NULL || attr == NULL)
		return compat_err(EINVAL);
	memset(&a, 0, sizeof(a));
	rc = droce_query_port(to_cctx(context)->d, port_num, &a);
	if (rc != 0)
		return compat_err(rc);
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

/*
 * The device_cap_flags_ex bits rdma-core 44 names: those of enum ibv_device_cap_flags (the
 * low 32, as ibv_device_attr.device_cap_flags) and the two extended ones. droce's other bits
 * (DROCE_DEVICE_ATOMIC_WRITE, DROCE_DEVICE_FLUSH_*: the kernel's IB_UVERBS_DEVICE_* numbers)
 * have no name there, so a libibverbs program does not get them: ibv_devinfo would print
 * them as "Unknown flags".
 */
#define COMPAT_CAP_FLAGS_EX (0xffffffffULL | IBV_DEVICE_RAW_SCATTER_FCS | \
			     IBV_DEVICE_PCI_WRITE_END_PADDING)

static int compat_query_device_ex(struct ibv_context *context,
				  const struct ibv_query_device_ex_input *input,
				  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	int rc;

	if (context == NULL)
		return compat_err(EINVAL);
	rc = droce_query_device_ex(to_cctx(context)->d, input, attr, attr_size);
	if (rc == 0 && attr_size >= offsetof(struct ibv_device_attr_ex, device_cap_flags_ex) +
				    sizeof(attr->device_cap_flags_ex))
		attr->device_cap_flags_ex &= COMPAT_CAP_FLAGS_EX;
	return compat_err(rc);
}

static void fill_context(struct compat_ctx *c, struct ibv_device *device)
{
	struct ibv_context *ic = &c->vctx.context;

	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = compat_query_port_ex;
	c->vctx.query_device_ex = compat_query_device_ex;
	c->vctx.create_qp_ex = compat_create_qp_ex;
	/* Left NULL, so the inline verbs return EOPNOTSUPP as libibverbs does for a provider
	 * without them: create_cq_ex, create_srq_ex, open_qp, xrcd, flows, WQs, DM, counters. */
	ic->device = device;
	ic->ops.poll_cq = compat_poll_cq;
	ic->ops.req_notify_cq = compat_req_notify_cq;
	ic->ops.post_send = compat_post_send;
	ic->ops.post_recv = compat_post_recv;
	ic->ops.post_srq_recv = compat_post_srq_recv;
	ic->ops.alloc_mw = compat_alloc_mw;
	ic->ops.dealloc_mw = compat_dealloc_mw;
	ic->ops.bind_mw = compat_bind_mw;
	ic->cmd_fd = -1;
	ic->async_fd = c->d->async_fd;
	ic->num_comp_vectors = c->d->num_comp_vectors;
	pthread_mutex_init(&ic->mutex, NULL);
	ic->abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&c->obj_lock, NULL);
	TAILQ_INIT(&c->objs);
}

void compat_obj_add(struct ibv_context *ctx, struct compat_obj *o, enum compat_kind kind,
		    void *ibv)
{
	struct compat_ctx *c = to_cctx(ctx);

	o->kind = kind;
	o->ibv = ibv;
	pthread_mutex_lock(&c->obj_lock);
	TAILQ_INSERT_TAIL(&c->objs, o, next);
	pthread_mutex_unlock(&c->obj_lock);
}

void compat_obj_del(struct ibv_context *ctx, struct compat_obj *o)
{
	struct compat_ctx *c = to_cctx(ctx);

	pthread_mutex_lock(&c->obj_lock);
	TAILQ_REMOVE(&c->objs, o, next);
	pthread_mutex_unlock(&c->obj_lock);
}

/* For the objects without a wrapper (AHs). @return the node, removed, or NULL. */
struct compat_obj *compat_obj_take(struct ibv_context *ctx, const void *ibv)
{
	struct compat_ctx *c = to_cctx(ctx);
	struct compat_obj *o;

	pthread_mutex_lock(&c->obj_lock);
	TAILQ_FOREACH(o, &c->objs, next)
		if (o->ibv == ibv)
			break;
	if (o != NULL)
		TAILQ_REMOVE(&c->objs, o, next);
	pthread_mutex_unlock(&c->obj_lock);
	return o;
}

static int destroy_obj(enum compat_kind kind, void *ibv)
{
	switch (kind) {
	case COMPAT_QP:
		compat_qp_drop_events(to_cqp(ibv));
		return ibv_destroy_qp(ibv);
	case COMPAT_SRQ:
		compat_srq_drop_events(to_csrq(ibv));
		return ibv_destroy_srq(ibv);
	case COMPAT_AH: return ibv_destroy_ah(ibv);
	case COMPAT_MW: return ibv_dealloc_mw(ibv);
	case COMPAT_MR: return ibv_dereg_mr(ibv);
	case COMPAT_CQ:
		compat_cq_drop_events(to_ccq(ibv));
		return ibv_destroy_cq(ibv);
	case COMPAT_CHANNEL: return ibv_destroy_comp_channel(ibv);
	case COMPAT_PD: return ibv_dealloc_pd(ibv);
	default: return EINVAL;
	}
}

/* What the application left open, destroyed kind by kind (QPs before their CQs, ...). */
static void release_objects(struct compat_ctx *c)
{
	struct compat_obj *o;
	int kind;

	for (kind = 0; kind < COMPAT_KIND_MAX; kind++) {
		for (;;) {
			pthread_mutex_lock(&c->obj_lock);
			TAILQ_FOREACH(o, &c->objs, next)
				if ((int)o->kind == kind)
					break;
			pthread_mutex_unlock(&c->obj_lock);
			if (o == NULL || destroy_obj(o->kind, o->ibv) != 0)
				break;	/* none left, or one that cannot go (droce says why) */
		}
	}
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct compat_device *cd = compat_container_of(device, struct compat_device, ibv);
	struct compat_ctx *c;
	int rc;

	if (device == NULL) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->d = droce_open_device(cd->d);
	if (c->d == NULL) {
		rc = errno;
		COMPAT_MSG("cannot open %s: %s", device->name, strerror(rc));
		free(c);
		errno = rc;
		return NULL;
	}
	pthread_mutex_lock(&g.lock);
	rc = driver_start_locked(cd);
	pthread_mutex_unlock(&g.lock);
	if (rc != 0) {
		droce_close_device(c->d);
		free(c);
		errno = rc;
		return NULL;
	}
	fill_context(c, device);
	compat_present_port(device, c->d);
	pthread_mutex_lock(&g.lock);
	TAILQ_INSERT_TAIL(&g.ctxs, c, next);
	g.pid = getpid();
	pthread_mutex_unlock(&g.lock);
	return &c->vctx.context;
}

int ibv_close_device(struct ibv_context *context)
{
	struct compat_ctx *c;

	if (context == NULL)
		return compat_fail(EINVAL);
	c = to_cctx(context);
	if (!TAILQ_EMPTY(&c->objs))
		release_objects(c);
	if (droce_close_device(c->d) != 0)
		return -1;
	pthread_mutex_lock(&g.lock);
	TAILQ_REMOVE(&g.ctxs, c, next);
	driver_stop_locked();
	pthread_mutex_unlock(&g.lock);
	pthread_mutex_destroy(&context->mutex);
	pthread_mutex_destroy(&c->obj_lock);
	free(c);
	return 0;
}

/*
 * A program that exits with contexts open: close them, releasing their objects, as the kernel
 * does for libibverbs when the process's files close; the last close stops the driver thread
 * and the engine before DPDK goes away. A context that cannot close (droce says why) is left,
 * and the driver thread is stopped anyway. Only in the process that opened them: a forked
 * child that exits must not stop its parent's engine (its memory may be shared).
 */
__attribute__((destructor)) static void compat_fini(void)
{
	struct compat_ctx *c;

	if (g.pid != getpid())
		return;
	for (;;) {
		pthread_mutex_lock(&g.lock);
		c = TAILQ_FIRST(&g.ctxs);
		pthread_mutex_unlock(&g.lock);
		if (c == NULL || ibv_close_device(&c->vctx.context) != 0)
			break;
	}
	pthread_mutex_lock(&g.lock);
	if (compat_driver_running()) {
		g.n_open = 1;
		driver_stop_locked();
	}
	pthread_mutex_unlock(&g.lock);
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	return compat_err(context != NULL ? droce_query_device(to_cctx(context)->d, attr) : EINVAL);
}

int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	/* libibverbs' old struct: struct ibv_port_attr up to flags (binaries built before
	 * port_cap_flags2 pass a buffer that size; newer ones go through query_port above). */
	return compat_query_port_ex(context, port_num, (struct ibv_port_attr *)port_attr,
				    offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* These two return -1 with errno (droce's calls set it), as libibverbs'. */
int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	if (context == NULL)
		return compat_fail(EINVAL);
	return droce_query_gid(to_cctx(context)->d, port_num, index, gid);
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	if (context == NULL)
		return compat_fail(EINVAL);
	return droce_query_pkey(to_cctx(context)->d, port_num, index, pkey);
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	__be16 p;

	if (context == NULL)
		return compat_fail(EINVAL);
	if (droce_query_pkey(to_cctx(context)->d, port_num, 0, &p) == 0 && p == pkey)
		return 0;
	errno = ENOENT;
	return -1;
}

static bool gid_is_zero(const union ibv_gid *gid)
{
	static const union ibv_gid zero;

	return memcmp(gid, &zero, sizeof(zero)) == 0;
}

/* Every droce GID is RoCE v2 (droce speaks no RoCE v1). @return 0, ENODATA, EINVAL. */
int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e = { .gid_index = gid_index, .port_num = port_num,
				   .gid_type = IBV_GID_TYPE_ROCE_V2 };

	if (context == NULL || entry == NULL || flags != 0 || entry_size < sizeof(e) ||
	    port_num > UINT8_MAX || gid_index > INT32_MAX)
		return compat_err(EINVAL);
	if (droce_query_gid(to_cctx(context)->d, (uint8_t)port_num, (int)gid_index, &e.gid) != 0)
		return compat_err(errno == 0 ? EINVAL : errno);
	if (gid_is_zero(&e.gid))
		return compat_err(ENODATA);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_port_attr pa;
	size_t n = 0;
	int i, rc;

	if (context == NULL || (entries == NULL && max_entries != 0) || flags != 0 ||
	    entry_size < sizeof(*entries))
		return -compat_err(EINVAL);
	rc = compat_query_port_ex(context, 1, &pa, sizeof(pa));
	if (rc != 0)
		return -compat_err(rc);
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (n == max_entries)
			return -compat_err(EINVAL);
		rc = _ibv_query_gid_ex(context, 1, (uint32_t)i, &entries[n], 0, sizeof(*entries));
		if (rc == 0)
			n++;
		else if (rc != ENODATA)
			return -compat_err(rc);
	}
	return (ssize_t)n;
}

/* rdma-core's private ABI (IBVERBS_PRIVATE_34), which ibv_devinfo and perftest import. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type)
{
	struct ibv_gid_entry e;
	int rc = type != NULL ? _ibv_query_gid_ex(context, port_num, index, &e, 0, sizeof(e)) :
		 EINVAL;

	if (rc == ENODATA) {	/* an empty GID: what libibverbs answers */
		*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	*type = IBV_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

/*
 * Callers build paths from it: librdmacm reads <sysfs>/class/misc/rdma_cm/abi_version (and
 * class/infiniband_ucma/) when the kernel's RDMA netlink does not answer; finding neither, it
 * assumes the newest rdma_cm ABI and fails later, at opening /dev/infiniband/rdma_cm.
 */
const char *ibv_get_sysfs_path(void)
{
	return COMPAT_SYSFS_PATH;
}

/*
 * <dir>/<file> into @p buf, as libibverbs: a final newline becomes the terminator; content
 * that fills @p buf without one would be cut, so that fails. @return the length, or -1.
 */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char *path;
	ssize_t len;
	int fd, err;

	if (dir == NULL || file == NULL || buf == NULL)
		return compat_fail(EINVAL);
	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return compat_fail(ENOMEM);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	err = errno;
	close(fd);
	if (len < 0)
		return compat_fail(err);
	if (len == 0)
		return 0;
	if (buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if ((size_t)len < size)
		buf[len] = '\0';
	else
		return compat_fail(EOVERFLOW);	/* it would be cut */
	return (int)len;
}
