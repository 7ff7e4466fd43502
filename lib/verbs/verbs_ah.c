/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Address handles. An AH holds the resolved address vector (source GID from the GID table,
 * IPv4 or IPv6 encapsulation); each UD send WQE copies it, so destroying an AH never leaves a
 * posted WQE pointing at freed memory. Destination MAC resolution (ARP/ND) is the engine's.
 */
#include <errno.h>
#include <stdlib.h>

#include "verbs_private.h"

static int count_ah(struct droce_device *dev, int delta)
{
	int rc = 0;

	pthread_mutex_lock(&dev->lock);
	if (delta > 0 && dev->n_ah == DROCE_MAX_AH)
		rc = ENOMEM;
	else
		dev->n_ah += delta;
	pthread_mutex_unlock(&dev->lock);
	return rc;
}

struct droce_ah *droce_create_ah(struct droce_pd *pd, struct ibv_ah_attr *attr)
{
	struct verbs_ah *ah;
	struct verbs_av av;
	int rc;

	if (pd == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	rc = verbs_av_from_attr(pd->context->device, attr, &av);
	if (rc == 0)
		rc = count_ah(pd->context->device, 1);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL) {
		count_ah(pd->context->device, -1);
		errno = ENOMEM;
		return NULL;
	}
	ah->context = pd->context;
	ah->pd = pd;
	ah->av = av;
	__atomic_fetch_add(&pd->usecnt, 1, __ATOMIC_RELAXED);
	return &ah->pub;
}

int droce_destroy_ah(struct droce_ah *a)
{
	struct verbs_ah *ah;

	if (a == NULL)
		return EINVAL;
	ah = to_vah(a);
	count_ah(ah->context->device, -1);
	__atomic_fetch_sub(&ah->pd->usecnt, 1, __ATOMIC_RELEASE);
	free(ah);
	return 0;
}
