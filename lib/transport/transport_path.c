/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Frames of a QP: its flow (addresses from the AV, MACs from the engine), mbuf chains for
 * payloads, copies between mbufs and application memory, and local SGE checks.
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "transport_private.h"

void transport_path_set(struct transport_qp *t)
{
	const struct verbs_av *av = verbs_qp_av(t->qp);
	const struct ibv_global_route *g = &av->attr.grh;
	struct droce_flow *f = &t->flow;

	memset(f, 0, sizeof(*f));
	f->ipv6 = !av->ipv4;
	f->tclass = transport_tclass(t, g->traffic_class);
	f->hop_limit = g->hop_limit;
	f->flow_label = g->flow_label;
	f->sport = droce_flow_sport(t->qpn, t->dqpn);
	transport_flow_vlan(f, t->dev, av->attr.sl);
	memcpy(f->sgid, av->sgid.raw, 16);
	memcpy(f->dgid, g->dgid.raw, 16);
	t->flow_ok = av->attr.is_global;
	t->flow_resolved = false;
	t->path_wait = false;
}

bool transport_path_matches(const struct transport_qp *t, const struct droce_pkt *pkt)
{
	return memcmp(pkt->sgid, t->flow.dgid, 16) == 0 &&
	       memcmp(pkt->dgid, t->flow.sgid, 16) == 0;
}

int transport_path_ready(struct transport_env *env, struct transport_qp *t)
{
	int rc;

	if (!t->flow_ok)
		return -ENOTCONN;
	if (t->flow_resolved)
		return 0;
	rc = env->resolve(env, t->dev, &t->flow);
	if (rc == 0) {
		t->flow_resolved = true;
		return 0;
	}
	return transport_path_park(env, t, rc);
}

/*
 * A path that cannot be used yet parks the QP's TX instead of asking again at every pass:
 * until the engine sees the neighbour table change (transport_path_wake()) or, at the latest,
 * TRANSPORT_PATH_RETRY_US later (transport_deadline(), transport_timeout()).
 */
int transport_path_park(struct transport_env *env, struct transport_qp *t, int rc)
{
	if (rc == -EAGAIN || rc == -EHOSTUNREACH) {
		t->path_wait = true;
		t->path_next = env->now + env->hz * TRANSPORT_PATH_RETRY_US / 1000000;
	}
	return rc;
}

bool transport_path_wake(struct transport_qp *t)
{
	bool waited = t->path_wait;

	t->path_wait = false;
	return waited;
}

struct rte_mbuf *transport_pkt_alloc(const struct transport_env *env, uint32_t len)
{
	struct rte_mbuf *m = transport_mbuf_alloc(env), *seg = m;
	uint32_t room, take;

	if (m == NULL)
		return NULL;
	/* Most payloads fit one segment: no chain to build. */
	if (likely(len + TRANSPORT_TAIL_RESERVE <= rte_pktmbuf_tailroom(m))) {
		m->data_len = len;
		m->pkt_len = len;
		return m;
	}
	for (;;) {
		room = rte_pktmbuf_tailroom(seg);
		room = room > TRANSPORT_TAIL_RESERVE ? room - TRANSPORT_TAIL_RESERVE : 0;
		take = RTE_MIN(room, len);
		seg->data_len = take;
		m->pkt_len += take;
		len -= take;
		if (len == 0)
			return m;
		seg->next = transport_mbuf_alloc(env);
		if (seg->next == NULL || room == 0) {
			transport_mbuf_free(env, m);
			return NULL;
		}
		seg = seg->next;
		seg->data_off = 0;	/* headers go in the first segment only */
		m->nb_segs++;
	}
}

/* Append @p seg to the chain @p m whose last segment is *@p last. */
static void chain(struct rte_mbuf *m, struct rte_mbuf **last, struct rte_mbuf *seg)
{
	(*last)->next = seg;
	*last = seg;
	m->pkt_len += seg->data_len;
	m->nb_segs++;
}

struct rte_mbuf *transport_pkt_zcopy(struct transport_env *env, struct transport_qp *t,
				     const struct ibv_sge *sge, uint32_t num_sge, uint32_t off,
				     uint32_t len, bool *gone)
{
	struct rte_mbuf *m, *last, *seg;
	struct droce_mr *mr;
	uint32_t i, n;

	*gone = false;
	m = transport_mbuf_alloc(env);
	if (m == NULL)
		return NULL;
	last = m;
	for (i = 0; i < num_sge && len != 0; i++) {
		const struct ibv_sge *s = &sge[i];

		if (off >= s->length) {
			off -= s->length;
			continue;
		}
		n = RTE_MIN(len, s->length - off);
		mr = verbs_mr_lookup(t->dev, s->lkey, false);
		seg = mr != NULL ? transport_mbuf_alloc(env) : NULL;
		if (seg != NULL && !verbs_mr_extbuf_attach(seg, mr, (uint8_t *)(uintptr_t)s->addr +
							   off, (uint16_t)n)) {
			transport_mbuf_free(env, seg);
			seg = NULL;
			mr = NULL;
		}
		if (seg == NULL) {
			*gone = mr == NULL;	/* deregistered since the WQE started */
			transport_mbuf_free(env, m);
			return NULL;
		}
		chain(m, &last, seg);
		len -= n;
		off = 0;
	}
	/* Pad and ICRC (droce_build_mbuf()) go after the payload, not into the MR. */
	seg = len == 0 ? transport_mbuf_alloc(env) : NULL;
	if (seg == NULL) {
		transport_mbuf_free(env, m);
		return NULL;
	}
	chain(m, &last, seg);
	return m;
}

/* Short copies (headers, small messages) inline; long ones go to libc's vector memcpy, which
 * beats rte_memcpy built for DPDK's SSE4.2 baseline. Up to 16 bytes, two overlapping moves
 * (rte_memcpy's size dispatch cost more than the copy of an 8-byte message). */
static inline void copy_bytes(void *d, const void *s, uint32_t n)
{
	uint64_t a, b;
	uint32_t x, y;

	if (n >= 8 && n <= 16) {
		memcpy(&a, s, 8);
		memcpy(&b, (const uint8_t *)s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy((uint8_t *)d + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(&x, s, 4);
		memcpy(&y, (const uint8_t *)s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy((uint8_t *)d + n - 4, &y, 4);
	} else if (n <= 64) {
		rte_memcpy(d, s, n);
	} else {
		memcpy(d, s, n);
	}
}

/* Copy @p len bytes between @p buf and the chain @p m at frame offset @p off: into the chain
 * when @p to_chain, out of it otherwise (then nothing in the chain is written). */
static void chain_copy(struct rte_mbuf *m, uint32_t off, uint8_t *buf, uint32_t len,
		       bool to_chain)
{
	uint32_t n;

	for (; m != NULL && len != 0; m = m->next) {
		uint8_t *p;

		if (off >= m->data_len) {
			off -= m->data_len;
			continue;
		}
		n = RTE_MIN(len, m->data_len - off);
		p = rte_pktmbuf_mtod_offset(m, uint8_t *, off);
		if (to_chain)
			memcpy(p, buf, n);
		else
			memcpy(buf, p, n);
		buf += n;
		len -= n;
		off = 0;
	}
}

void transport_pkt_write(struct rte_mbuf *m, uint32_t off, const void *src, uint32_t len)
{
	if (likely(m != NULL && (uint64_t)off + len <= m->data_len)) {	/* one segment */
		copy_bytes(rte_pktmbuf_mtod_offset(m, uint8_t *, off), src, len);
		return;
	}
	chain_copy(m, off, (uint8_t *)(uintptr_t)src, len, true);
}

void transport_pkt_read(const struct rte_mbuf *m, uint32_t off, void *dst, uint32_t len)
{
	if (likely(m != NULL && (uint64_t)off + len <= m->data_len)) {	/* one segment */
		copy_bytes(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), len);
		return;
	}
	chain_copy((struct rte_mbuf *)(uintptr_t)m, off, dst, len, false);
}

enum ibv_wc_status transport_sge_scatter(const struct transport_qp *t, const struct ibv_sge *sge,
					 uint32_t num_sge, uint32_t off, const struct rte_mbuf *m,
					 uint32_t src, const void *buf, uint32_t len)
{
	const uint8_t *b = buf;
	uint32_t i, n;
	uint8_t *dst;

	for (i = 0; i < num_sge && len != 0; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		if (transport_sge_check(t, &sge[i], IBV_ACCESS_LOCAL_WRITE) != IBV_WC_SUCCESS)
			return IBV_WC_LOC_PROT_ERR;
		n = RTE_MIN(len, sge[i].length - off);
		dst = (uint8_t *)(uintptr_t)sge[i].addr + off;
		if (m != NULL)
			transport_pkt_read(m, src, dst, n);
		else
			memcpy(dst, b + src, n);
		src += n;
		len -= n;
		off = 0;
	}
	return IBV_WC_SUCCESS;
}

int transport_pkt_send(struct transport_env *env, struct transport_qp *t, struct rte_mbuf *m,
		       struct droce_hdr_fields *h)
{
	int rc;

	h->pkey = DROCE_DEFAULT_PKEY;	/* P_Key table: one entry (index 0) */
	h->dqpn = t->dqpn;
	rc = droce_build_mbuf(m, &t->flow, h);
	if (rc < 0) {
		TRANSPORT_LOG(ERR, "qp %u: cannot build %s: %d", t->qpn,
			      droce_opcode_name(h->opcode), rc);
		transport_mbuf_free(env, m);
		return rc;
	}
	/* Per QP only: the device counts what its port takes (engine). */
	t->cnt.tx_packets++;
	t->cnt.tx_bytes += rte_pktmbuf_pkt_len(m);
	transport_cc_sent(env, t, rte_pktmbuf_pkt_len(m));
	if (unlikely(t->rec != NULL))
		transport_rec_frame(env, t, m, TREC_TX);
	env->tx(env, t->dev, m);
	return 0;
}

/* IBA 10.6.3 / C10-8x: a local key must name a live MR of the QP's PD with the access the
 * operation needs, and the SGE must lie inside it. */
enum ibv_wc_status transport_sge_check(const struct transport_qp *t, const struct ibv_sge *s,
				       int access)
{
	const struct droce_mr *mr;
	uintptr_t a = (uintptr_t)s->addr, base;

	if (s->length == 0)
		return IBV_WC_SUCCESS;
	mr = verbs_mr_lookup(t->dev, s->lkey, false);
	if (mr == NULL || mr->pd != t->qp->pd || (verbs_mr_access(mr) & access) != access)
		return IBV_WC_LOC_PROT_ERR;
	base = (uintptr_t)mr->addr;
	if (a < base || a - base > mr->length || s->length > mr->length - (a - base))
		return IBV_WC_LOC_PROT_ERR;
	return IBV_WC_SUCCESS;
}
