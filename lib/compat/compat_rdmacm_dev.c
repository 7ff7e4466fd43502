/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * librdmacm.so.1's devices: for each droce device an ids use, one context of the libibverbs
 * drop-in (opened on first use, kept until exit, as librdmacm keeps its own) and one default
 * PD on it: every id of the device shows the same id->verbs and id->pd, as librdmacm's do
 * (perftest makes its PD on one id's context and its QPs on others').
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat_rdmacm_private.h"

#define RCM_MAX_DEV 16
/* Where the libibverbs drop-in puts its devices' paths (compat_device.c): proof that an ibv_device
 * is one of its compat_device wrappers before this library looks inside. */
#define RCM_DROPIN_PATH "/nonexistent/droce/"

static struct {
	pthread_mutex_t lock;
	unsigned int n;
	struct rcm_dev dev[RCM_MAX_DEV];
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int open_dev(struct rcm_dev *rd)
{
	struct ibv_device **list;
	int i, n = 0, rc = ENODEV;

	list = ibv_get_device_list(&n);
	if (list == NULL)
		return errno != 0 ? errno : ENODEV;
	for (i = 0; i < n; i++) {
		struct compat_device *cd;

		if (strncmp(list[i]->ibdev_path, RCM_DROPIN_PATH, strlen(RCM_DROPIN_PATH)) != 0) {
			RCM_MSG("%s is not a device of droce's libibverbs.so.1: run with droce-run",
				list[i]->name);
			rc = ENODEV;
			break;
		}
		cd = compat_container_of(list[i], struct compat_device, ibv);
		if (cd->d != rd->d)
			continue;
		rd->ctx = ibv_open_device(list[i]);
		rd->pd = rd->ctx != NULL ? ibv_alloc_pd(rd->ctx) : NULL;
		rc = rd->pd != NULL ? 0 : errno;
		if (rc != 0 && rd->ctx != NULL) {
			ibv_close_device(rd->ctx);
			rd->ctx = NULL;
		}
		break;
	}
	ibv_free_device_list(list);
	return rc;
}

struct rcm_dev *compat_rcm_dev_get(struct droce_device *d)
{
	struct rcm_dev *rd = NULL;
	unsigned int i;
	int rc = 0;

	pthread_mutex_lock(&g.lock);
	for (i = 0; i < g.n && rd == NULL; i++)
		if (g.dev[i].d == d)
			rd = &g.dev[i];
	if (rd == NULL && g.n < RCM_MAX_DEV) {
		rd = &g.dev[g.n];
		rd->d = d;
		rc = open_dev(rd);
		if (rc == 0)
			g.n++;
		else
			rd = NULL;
	} else if (rd == NULL) {
		rc = ENOMEM;
	}
	pthread_mutex_unlock(&g.lock);
	if (rd == NULL)
		errno = rc;
	return rd;
}

struct droce_qp *compat_rcm_droce_qp(struct ibv_qp *qp)
{
	return to_cqp(qp)->d;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct droce_context **dl;
	struct ibv_context **out;
	struct rcm_dev *rd;
	int i, n = 0, k = 0;

	if (num_devices != NULL)
		*num_devices = 0;
	dl = droce_cm_get_devices(&n);
	if (dl == NULL)
		return NULL;
	out = calloc((size_t)n + 1, sizeof(*out));
	if (out == NULL) {
		droce_cm_free_devices(dl);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		rd = compat_rcm_dev_get(dl[i]->device);
		if (rd != NULL)
			out[k++] = rd->ctx;
	}
	droce_cm_free_devices(dl);
	if (num_devices != NULL)
		*num_devices = k;
	return out;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);	/* the contexts stay open while the library is loaded, as librdmacm's */
}
