/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The responder's set-up read from the capture itself (--compare without -s):
 * - the responder is the destination of the first request (or --responder ADDR), the
 *   requester the source; their MACs, IP version and addresses come from that frame;
 * - a QP per DestQP the requests carry: type from the opcode, first PSN from its first
 *   request, the peer's QPN from the responses' DestQP (RC; paired by PSN) or the DETH (UD),
 *   a receive WR per message that consumes one, sized for the largest; where the responder
 *   sent RNR NAKs, its timer code, and the receive WRs posted as the responder had them;
 * - an MR per R_Key the RETHs / AtomicETHs carry, spanning every VA they address, with the
 *   access those requests need; its initial contents are what the first READ response or
 *   atomic ACK covering each byte says was there (zero elsewhere).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "replay.h"

#define MIN_RECV 64

struct span { uint64_t lo, hi; };

static int errf(char *err, size_t len, const char *msg)
{
	snprintf(err, len, "%s", msg);
	return -1;
}

static const struct replay_frame *first_request(const struct replay_capture *c,
						const uint8_t *dst)
{
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		const struct replay_frame *f = &c->f[i];
		struct droce_pkt pkt;

		if (droce_parse(f->data, f->len, 0, &pkt) == DROCE_PARSE_OK &&
		    (pkt.mask & DROCE_M_REQ) && (dst == NULL || memcmp(pkt.dgid, dst, 16) == 0))
			return f;
	}
	return NULL;
}

/* --responder ADDR as a GID: IPv4 (mapped) or IPv6. */
static int responder_gid(const char *addr, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (inet_pton(AF_INET, addr, gid + 12) == 1) {
		gid[10] = gid[11] = 0xff;
		return 0;
	}
	return inet_pton(AF_INET6, addr, gid) == 1 ? 0 : -1;
}

/* What the scenario parser accepts: IPv4 not 0.0.0.0; IPv6 unicast, not IPv4-mapped. */
static bool addr_ok(const struct replay_scenario *sc, const uint8_t gid[16])
{
	static const uint8_t v4any[16] = { [10] = 0xff, [11] = 0xff };

	return sc->ipv6 ? replay_ipv6_ok(gid) : memcmp(gid, v4any, 16) != 0;
}

/* What the scenario parser refuses as a device's or its peer's MAC address. */
static bool mac_zero(const uint8_t mac[6])
{
	static const uint8_t zero[6];

	return memcmp(mac, zero, 6) == 0;
}

static int endpoints(const struct replay_capture *c, struct replay_scenario *sc,
		     const char *responder, char *err, size_t len)
{
	const struct replay_frame *f;
	struct droce_pkt pkt;
	uint8_t want[16];

	if (responder != NULL && responder_gid(responder, want) != 0)
		return errf(err, len, "--responder wants an IPv4 or IPv6 address");
	f = first_request(c, responder != NULL ? want : NULL);
	if (f == NULL)
		return errf(err, len, responder != NULL ? "no RoCE v2 request to that address" :
			    "no RoCE v2 request in the capture: nothing to respond to");
	droce_parse(f->data, f->len, 0, &pkt);
	memcpy(sc->mac, f->data, 6);
	memcpy(sc->peer_mac, f->data + 6, 6);
	sc->ipv6 = pkt.ipv6 != 0;
	memcpy(sc->gid, pkt.dgid, 16);
	memcpy(sc->peer_gid, pkt.sgid, 16);
	if (!addr_ok(sc, sc->gid) || !addr_ok(sc, sc->peer_gid))
		return errf(err, len, "the first request's addresses cannot be a device's "
			    "(unspecified, multicast or IPv4-mapped IPv6)");
	if (mac_zero(sc->mac) || mac_zero(sc->peer_mac))
		return errf(err, len, "the first request's MAC addresses cannot be a device's "
			    "(all zero)");
	return 0;
}

static enum replay_qp_type qp_type_of(uint8_t opcode)
{
	return (opcode >> 5) == 1 ? REPLAY_UC : (opcode >> 5) == 3 ? REPLAY_UD : REPLAY_RC;
}

/* QPs, receive WRs and their size, from the requests. */
static int derive_qps(const struct replay_capture *c, struct replay_scenario *sc,
		      uint32_t *msg, char *err, size_t len)
{
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		const struct replay_frame *f = &c->f[i];
		const struct droce_bth *b = droce_pkt_bth(&f->pkt);
		struct replay_qp *q;

		if (f->kind != RF_REQUEST)
			continue;
		q = replay_scenario_qp(sc, droce_bth_qpn(b));
		if (q == NULL) {
			if (sc->n_qp == REPLAY_MAX_QP)
				return errf(err, len, "more QPs than droce-replay plays");
			q = &sc->qp[sc->n_qp];
			msg[sc->n_qp++] = 0;
			q->cap_qpn = droce_bth_qpn(b);
			q->type = qp_type_of(f->pkt.opcode);
			q->rq_psn = droce_bth_psn(b);
			q->max_dest_rd_atomic = 16;
			q->min_rnr_timer = REPLAY_MIN_RNR_TIMER;
			q->access = REPLAY_QP_ACCESS;
		}
		if (f->pkt.mask & DROCE_M_DETH) {
			const struct droce_deth *d = droce_pkt_ext(&f->pkt, DROCE_HDR_DETH);

			q->qkey = rte_be_to_cpu_32(d->qkey);
			q->peer_qpn = droce_deth_sqpn(d);
		}
		if ((f->pkt.mask & DROCE_M_RWR) && (f->pkt.mask & DROCE_M_FIRST) &&
		    q->recv_wrs <= REPLAY_MAX_RECV_WRS) {
			q->recv_wrs++;
			msg[q - sc->qp] = 0;
		}
		if ((f->pkt.mask & DROCE_M_RWR) && msg[q - sc->qp] <= REPLAY_MAX_RECV_SIZE) {
			msg[q - sc->qp] += f->pkt.payload_len;
			if (msg[q - sc->qp] > q->recv_size)
				q->recv_size = msg[q - sc->qp];
		}
	}
	for (i = 0; i < sc->n_qp; i++) {
		struct replay_qp *q = &sc->qp[i];

		q->recv_size += q->type == REPLAY_UD ? DROCE_GRH_LEN : 0;
		if (q->recv_size < MIN_RECV)
			q->recv_size = MIN_RECV;
		if (q->recv_wrs > REPLAY_MAX_RECV_WRS || q->recv_size > REPLAY_MAX_RECV_SIZE)
			return errf(err, len, "a QP receives more or larger messages than "
				    "droce-replay posts receive WRs for (16384 WRs of 16 MiB)");
	}
	return 0;
}

uint32_t replay_pmtu(const struct replay_scenario *sc)
{
	return sc->mtu >= 4096 + 64 ? 4096 : 1024;
}

uint32_t replay_psn_span(const struct droce_pkt *p, const struct replay_scenario *sc)
{
	const struct droce_reth *r;
	uint32_t n;

	if (!(p->mask & DROCE_M_READ))
		return 1;
	r = droce_pkt_ext(p, DROCE_HDR_RETH);
	n = (rte_be_to_cpu_32(r->len) + replay_pmtu(sc) - 1) / replay_pmtu(sc);
	return n ? n : 1;
}

/* Path MTU: 4096 when some packet carries more than 1024 bytes. */
static void derive_mtu(const struct replay_capture *c, struct replay_scenario *sc)
{
	unsigned int i;

	sc->mtu = 1500;
	for (i = 0; i < c->n; i++)
		if ((c->f[i].kind == RF_REQUEST || c->f[i].kind == RF_RESPONSE) &&
		    c->f[i].pkt.payload_len > 1024)
			sc->mtu = 9000;
}

/* The request whose PSN range holds @p psn, on a QP whose peer is @p peer (or any). */
static const struct replay_frame *request_of(const struct replay_capture *c,
					     const struct replay_scenario *sc, uint32_t psn,
					     uint32_t dqpn, bool match_peer)
{
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		const struct replay_frame *f = &c->f[i];
		const struct droce_bth *b = droce_pkt_bth(&f->pkt);
		uint32_t n;

		if (f->kind != RF_REQUEST)
			continue;
		n = replay_psn_span(&f->pkt, sc);
		if (match_peer && replay_scenario_qp(sc, droce_bth_qpn(b))->peer_qpn != dqpn)
			continue;
		if (droce_psn_in_window(psn, droce_bth_psn(b), n))
			return f;
	}
	return NULL;
}

/* RC: each QP's peer is the DestQP of the responses to its requests. */
static void derive_peers(const struct replay_capture *c, struct replay_scenario *sc)
{
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		const struct replay_frame *f = &c->f[i], *req;
		const struct droce_bth *b = droce_pkt_bth(&f->pkt);
		struct replay_qp *q;

		if (f->kind != RF_RESPONSE)
			continue;
		req = request_of(c, sc, droce_bth_psn(b), 0, false);
		if (req == NULL)
			continue;
		q = replay_scenario_qp(sc, droce_bth_qpn(droce_pkt_bth(&req->pkt)));
		if (q->peer_qpn == 0)
			q->peer_qpn = droce_bth_qpn(b);
	}
}

/* RC: a QP whose requests drew RNR NAKs gets the NAK's timer code, and its receive WRs are
 * posted as the capture's responder had them (recv_post = capture). */
static void derive_rnr(const struct replay_capture *c, struct replay_scenario *sc)
{
	unsigned int i, j;

	for (i = 0; i < c->n; i++) {
		const struct replay_frame *f = &c->f[i];
		const struct droce_aeth *a = f->kind == RF_RESPONSE ?
			droce_pkt_ext(&f->pkt, DROCE_HDR_AETH) : NULL;

		if (a == NULL || (droce_aeth_syndrome(a) & DROCE_AETH_TYPE_MASK) !=
		    DROCE_AETH_RNR_NAK)
			continue;
		for (j = 0; j < sc->n_qp; j++) {
			struct replay_qp *q = &sc->qp[j];

			if (q->type == REPLAY_RC && !q->recv_follow &&
			    q->peer_qpn == droce_bth_qpn(droce_pkt_bth(&f->pkt))) {
				q->recv_follow = true;
				q->min_rnr_timer = droce_aeth_syndrome(a) & DROCE_AETH_VALUE_MASK;
			}
		}
	}
}

/* The MR access a FLUSH of placement types @p plt needs (the responder's rule). */
static int flush_access(uint8_t plt)
{
	return ((plt & DROCE_FLUSH_GLOBAL) ? DROCE_ACCESS_FLUSH_GLOBAL : 0) |
	       ((plt & DROCE_FLUSH_PERSISTENT) ? DROCE_ACCESS_FLUSH_PERSISTENT : 0);
}

/* The R_Key, VA, length and access a request addresses; false if it addresses no memory.
 * *@p whole: a FLUSH of the whole MR, whose VA and length mean nothing. */
static bool mem_ref(const struct droce_pkt *p, uint32_t *rkey, uint64_t *va, uint32_t *n,
		    int *acc, bool *whole)
{
	*whole = false;
	if (p->mask & DROCE_M_ATMETH) {
		const struct droce_atmeth *a = droce_pkt_ext(p, DROCE_HDR_ATMETH);

		*rkey = rte_be_to_cpu_32(a->rkey);
		*va = rte_be_to_cpu_64(a->va);
		*n = 8;
		*acc = IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
		return true;
	}
	if (p->mask & DROCE_M_RETH) {
		const struct droce_reth *r = droce_pkt_ext(p, DROCE_HDR_RETH);

		*rkey = rte_be_to_cpu_32(r->rkey);
		*va = rte_be_to_cpu_64(r->va);
		*n = rte_be_to_cpu_32(r->len);
		*acc = (p->mask & DROCE_M_READ) ? IBV_ACCESS_REMOTE_READ :
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
		if (p->mask & DROCE_M_FLUSH) {
			const struct droce_feth *f = droce_pkt_ext(p, DROCE_HDR_FETH);

			*acc = flush_access(droce_feth_plt(f));
			*whole = droce_feth_sel(f) == DROCE_FLUSH_MR;
		}
		return true;
	}
	return false;
}

static int derive_mr_spans(const struct replay_capture *c, struct replay_scenario *sc,
			   struct span *sp, char *err, size_t len)
{
	unsigned int i;
	uint32_t rkey, n;
	bool whole;
	uint64_t va;
	int acc;

	for (i = 0; i < c->n; i++) {
		struct replay_mr *m;

		if (c->f[i].kind != RF_REQUEST ||
		    !mem_ref(&c->f[i].pkt, &rkey, &va, &n, &acc, &whole))
			continue;
		m = replay_scenario_mr(sc, rkey);
		if (m == NULL) {
			if (sc->n_mr == REPLAY_MAX_MR)
				return errf(err, len, "more R_Keys than droce-replay maps");
			m = &sc->mr[sc->n_mr];
			m->cap_rkey = rkey;
			sp[sc->n_mr].lo = UINT64_MAX;	/* empty until a range is addressed */
			sp[sc->n_mr++].hi = 0;
		}
		m->access |= acc;
		if (whole)	/* a FLUSH of the whole MR: no range */
			continue;
		sp[m - sc->mr].lo = RTE_MIN(sp[m - sc->mr].lo, va);
		sp[m - sc->mr].hi = RTE_MAX(sp[m - sc->mr].hi, va + n);
	}
	for (i = 0; i < sc->n_mr; i++)	/* named by whole-MR FLUSHes only: 8 bytes at 0 */
		if (sp[i].lo > sp[i].hi)
			sp[i].lo = sp[i].hi = 0;
	return 0;
}

static int derive_mr_alloc(struct replay_scenario *sc, const struct span *sp, uint8_t **known,
			   char *err, size_t len)
{
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < sc->n_mr; i++) {
		struct replay_mr *m = &sc->mr[i];
		uint64_t n = sp[i].hi - sp[i].lo;

		total += n;
		if (sp[i].hi < sp[i].lo || n > REPLAY_MAX_MR_LEN || total > REPLAY_MAX_MEM)
			return errf(err, len, "the R_Keys address more memory than droce-replay "
				    "allocates (256 MiB per MR, 512 MiB in all)");
		m->cap_va = sp[i].lo;
		m->length = n < 8 ? 8 : (uint32_t)n;
		m->init = calloc(1, m->length);
		known[i] = calloc(1, m->length);
		if (m->init == NULL || known[i] == NULL)
			return errf(err, len, "out of memory");
	}
	return 0;
}

/* Bytes the capture shows were in memory, unless an earlier response already said. */
static void learn(struct replay_scenario *sc, uint8_t **known, uint32_t rkey, uint64_t va,
		  const uint8_t *data, uint32_t n)
{
	struct replay_mr *m = replay_scenario_mr(sc, rkey);
	uint64_t off, i;

	if (m == NULL || va < m->cap_va)
		return;
	off = va - m->cap_va;
	for (i = 0; i < n && off + i < m->length; i++)
		if (!known[m - sc->mr][off + i]) {
			m->init[off + i] = data[i];
			known[m - sc->mr][off + i] = 1;
		}
}

static void learn_response(const struct replay_capture *c, struct replay_scenario *sc,
			   uint8_t **known, const struct replay_frame *f)
{
	const struct droce_bth *b = droce_pkt_bth(&f->pkt);
	const struct replay_frame *req = request_of(c, sc, droce_bth_psn(b), droce_bth_qpn(b),
						    true);
	uint32_t rkey, n, off;
	uint64_t va, orig;
	bool whole;
	int acc;

	if (req == NULL || !mem_ref(&req->pkt, &rkey, &va, &n, &acc, &whole))
		return;
	if ((f->pkt.mask & DROCE_M_READ) && (req->pkt.mask & DROCE_M_READ)) {
		off = (uint32_t)droce_psn_diff(droce_bth_psn(b),
			droce_bth_psn(droce_pkt_bth(&req->pkt))) * replay_pmtu(sc);
		n = off < n ? n - off : 0;	/* bytes of the READ left at this packet */
		learn(sc, known, rkey, va + off, f->data + f->pkt.payload_off,
		      RTE_MIN(f->pkt.payload_len, n));
	} else if ((f->pkt.mask & DROCE_M_ATMACK) && (req->pkt.mask & DROCE_M_ATMETH)) {
		const struct droce_atmack *a = droce_pkt_ext(&f->pkt, DROCE_HDR_ATMACK);

		orig = rte_be_to_cpu_64(a->orig);	/* memory holds it in host order */
		learn(sc, known, rkey, va, (const uint8_t *)&orig, 8);
	}
}

static int derive_mrs(const struct replay_capture *c, struct replay_scenario *sc,
		      char *err, size_t len)
{
	struct span sp[REPLAY_MAX_MR];
	uint8_t *known[REPLAY_MAX_MR] = { NULL };
	unsigned int i;
	int rc = derive_mr_spans(c, sc, sp, err, len);

	if (rc == 0)
		rc = derive_mr_alloc(sc, sp, known, err, len);
	for (i = 0; rc == 0 && i < c->n; i++)
		if (c->f[i].kind == RF_RESPONSE)
			learn_response(c, sc, known, &c->f[i]);
	for (i = 0; i < REPLAY_MAX_MR; i++)
		free(known[i]);
	return rc;
}

int replay_derive(struct replay_capture *c, struct replay_scenario *sc, const char *responder,
		  char *err, size_t len)
{
	uint32_t msg[REPLAY_MAX_QP];
	int rc;

	memset(sc, 0, sizeof(*sc));
	if (endpoints(c, sc, responder, err, len) != 0)
		return -1;
	replay_capture_classify(c, sc);
	derive_mtu(c, sc);
	rc = derive_qps(c, sc, msg, err, len);
	if (rc == 0) {
		derive_peers(c, sc);
		derive_rnr(c, sc);
		rc = derive_mrs(c, sc, err, len);
	}
	if (rc != 0)
		replay_scenario_free(sc);
	return rc;
}
