/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The flight recorder (transport_rec.h). Recording is a copy of at most TREC_SNAP bytes and a
 * few words of state per frame, by the QP's owner; nothing when the recorder is off (one
 * predictable branch per frame). Writing is file I/O on the owner's thread: at a QP's entry
 * into ERR (once per QP), or on request (droce_qp_record()).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "transport_private.h"

int transport_rec_enable(struct transport_qp *t, unsigned int frames, const char *dir)
{
	uint32_t n;

	if (frames == 0 || t->rec != NULL)
		return 0;
	n = rte_align32pow2(RTE_MIN(frames, (unsigned int)TREC_MAX));
	t->rec = rte_zmalloc("droce_trec", sizeof(*t->rec) + n * sizeof(t->rec->e[0]),
			     RTE_CACHE_LINE_SIZE);
	if (t->rec == NULL)
		return -ENOMEM;
	t->rec->mask = n - 1;
	t->rec->dir = dir;
	snprintf(t->rec->dev, sizeof(t->rec->dev), "%s", droce_get_device_name(t->dev));
	return 0;
}

/* The next entry, with the QP's state now. Frames carry the iteration's time, events the
 * TSC read when they happen: kept in order, an entry is never older than the one before. */
static struct trec_entry *entry(struct transport_qp *t, uint64_t tsc, enum trec_dir dir)
{
	struct trec *r = t->rec;
	uint64_t prev = r->n != 0 ? r->e[(r->n - 1) & r->mask].tsc : 0;
	struct trec_entry *e = &r->e[r->n++ & r->mask];

	e->tsc = RTE_MAX(tsc, prev);
	e->dir = (uint8_t)dir;
	e->state = (uint8_t)t->state;
	e->req_psn = t->req.psn;
	e->comp_psn = t->req.comp_psn;
	e->epsn = t->resp.epsn;
	e->cwnd = t->req.cwnd;
	e->rate_kbps = t->cc.p != NULL ? t->cc.rc : 0;
	e->retry_left = t->req.retry_left;
	e->rnr_left = t->req.rnr_left;
	return e;
}

void transport_rec_frame(struct transport_env *env, struct transport_qp *t,
			 const struct rte_mbuf *m, enum trec_dir dir)
{
	struct trec_entry *e = entry(t, env->now, dir);
	uint32_t len = rte_pktmbuf_pkt_len(m);
	const void *p;

	e->len = len;
	e->caplen = (uint16_t)RTE_MIN(len, (uint32_t)TREC_SNAP);
	p = rte_pktmbuf_read(m, 0, e->caplen, e->bytes);
	if (p != e->bytes)
		memcpy(e->bytes, p, e->caplen);
}

void transport_rec_event(struct transport_qp *t, enum trec_event ev)
{
	struct trec_entry *e = entry(t, rte_get_tsc_cycles(), TREC_EVENT);

	e->len = (uint32_t)ev;
	e->caplen = 0;
}

static const char *event_name(uint32_t ev)
{
	static const char *const names[] = {
		[TREC_EV_RETRY_TIMEOUT] = "retry_timeout",
		[TREC_EV_RETRY_NAK] = "retry_nak",
		[TREC_EV_RETRY_IMPLIED_NAK] = "retry_implied_nak",
		[TREC_EV_RETRY_EXCEEDED] = "retry_exceeded",
		[TREC_EV_RNR_NAK] = "rnr_nak",
		[TREC_EV_RNR_RETRY_EXCEEDED] = "rnr_retry_exceeded",
		[TREC_EV_RNR_WAIT_OVER] = "rnr_wait_over",
		[TREC_EV_ERR] = "err",
	};

	return ev < RTE_DIM(names) ? names[ev] : "?";
}

/* pcap (libpcap's format, microseconds, Ethernet), little-endian as written here. */
struct pcap_file_hdr {
	uint32_t magic;
	uint16_t major, minor;
	int32_t zone;
	uint32_t sigfigs, snaplen, linktype;
};

struct pcap_rec_hdr {
	uint32_t sec, usec, caplen, len;
};

/* Wall-clock microseconds of TSC @p tsc, from the pair (@p now_tsc, @p now_us). */
static uint64_t wall_us(uint64_t tsc, uint64_t now_tsc, uint64_t now_us)
{
	uint64_t ago = (now_tsc - tsc) * 1000000 / rte_get_tsc_hz();

	return ago < now_us ? now_us - ago : 0;
}

static int write_pcap(const struct trec *r, const char *path, uint64_t first, uint64_t now_tsc,
		      uint64_t now_us)
{
	const struct pcap_file_hdr fh = { 0xa1b2c3d4, 2, 4, 0, 0, TREC_SNAP, 1 };
	FILE *f = fopen(path, "w");
	uint64_t i;
	int rc = 0;

	if (f == NULL)
		return -errno;
	if (fwrite(&fh, sizeof(fh), 1, f) != 1)
		rc = -EIO;
	for (i = first; i < r->n && rc == 0; i++) {
		const struct trec_entry *e = &r->e[i & r->mask];
		uint64_t us = wall_us(e->tsc, now_tsc, now_us);
		struct pcap_rec_hdr h = { (uint32_t)(us / 1000000), (uint32_t)(us % 1000000),
					  e->caplen, e->len };

		if (e->dir == TREC_EVENT)
			continue;	/* in the JSON only */
		if (fwrite(&h, sizeof(h), 1, f) != 1 || fwrite(e->bytes, e->caplen, 1, f) != 1)
			rc = -EIO;
	}
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

static int write_json(const struct transport_qp *t, const char *path, const char *why,
		      uint64_t first, uint64_t now_tsc, uint64_t now_us)
{
	const struct trec *r = t->rec;
	FILE *f = fopen(path, "w");
	uint64_t i;

	if (f == NULL)
		return -errno;
	fprintf(f, "{\"device\": \"%s\", \"qpn\": %" PRIu32 ", \"dest_qpn\": %" PRIu32
		", \"why\": \"%s\", \"state\": \"%s\", \"recorded\": %" PRIu64
		", \"overwritten\": %" PRIu64 ",\n \"entries\": [", r->dev, t->qpn, t->dqpn, why,
		transport_qp_state_name(t->state), r->n, first);
	for (i = first; i < r->n; i++) {
		const struct trec_entry *e = &r->e[i & r->mask];
		uint64_t us = wall_us(e->tsc, now_tsc, now_us);

		fprintf(f, "%s\n  {\"time_us\": %" PRIu64, i == first ? "" : ",", us);
		if (e->dir == TREC_EVENT)
			fprintf(f, ", \"event\": \"%s\"", event_name(e->len));
		else
			fprintf(f, ", \"dir\": \"%s\", \"len\": %" PRIu32,
				e->dir == TREC_TX ? "tx" : "rx", e->len);
		fprintf(f, ", \"state\": \"%s\", \"req_psn\": %" PRIu32 ", \"comp_psn\": %" PRIu32
			", \"epsn\": %" PRIu32 ", \"cwnd\": %" PRIu32 ", \"retry_left\": %u"
			", \"rnr_left\": %u, \"rate_kbps\": %" PRIu32 "}",
			transport_qp_state_name(e->state),
			e->req_psn, e->comp_psn, e->epsn, e->cwnd, e->retry_left, e->rnr_left,
			e->rate_kbps);
	}
	fprintf(f, "\n ]}\n");
	return fclose(f) == 0 ? 0 : -errno;
}

/* Write @p file + ".tmp" with @p rc = 0 so far, then rename it: a reader that sees the file
 * sees it whole. */
static int publish(const char *file, int rc)
{
	char tmp[PATH_MAX + 16];

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	if (rc == 0 && rename(tmp, file) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

int transport_rec_write(struct transport_qp *t, const char *why, char *path, size_t len)
{
	const struct trec *r = t->rec;
	char base[PATH_MAX], file[PATH_MAX + 8], tmp[PATH_MAX + 16];
	uint64_t first, now_tsc = rte_get_tsc_cycles(), now_us;
	struct timeval tv;
	int rc;

	if (r == NULL)
		return -ENODATA;
	gettimeofday(&tv, NULL);
	now_us = (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
	first = r->n > r->mask + 1 ? r->n - r->mask - 1 : 0;
	snprintf(base, sizeof(base), "%s/droce-rec-%s-qp%" PRIu32 "-%d-%" PRIu64, r->dir, r->dev,
		 t->qpn, (int)getpid(), now_us);
	/* The JSON last: once it is there, so is the pcap. */
	snprintf(file, sizeof(file), "%s.pcap", base);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	rc = publish(file, write_pcap(r, tmp, first, now_tsc, now_us));
	snprintf(file, sizeof(file), "%s.json", base);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	if (rc == 0) {
		rc = publish(file, write_json(t, tmp, why, first, now_tsc, now_us));
		if (rc != 0) {
			snprintf(file, sizeof(file), "%s.pcap", base);
			unlink(file);	/* both or neither */
		}
	}
	if (rc < 0)
		TRANSPORT_LOG(ERR, "qp %u: cannot write its recording %s: %s", t->qpn, base,
			      strerror(-rc));
	else
		TRANSPORT_LOG(NOTICE, "qp %u: %s: its last %" PRIu64 " entries are in %s.pcap and "
			      "%s.json", t->qpn, why, r->n - first, base, base);
	if (path != NULL && len != 0)
		snprintf(path, len, "%s", base);
	return rc;
}

void transport_rec_err(struct transport_qp *t)
{
	if (t->rec->written)
		return;
	transport_rec_event(t, TREC_EV_ERR);
	t->rec->written = true;
	(void)transport_rec_write(t, "entered ERR", NULL, 0);
}
