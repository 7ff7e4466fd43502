/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Captures in and out with libpcap: the whole input file is read first (a bad file is an
 * error before anything is set up), then every frame is given a kind relative to droce's
 * side. The output pcap holds what droce sent, stamped with the time it came out.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <pcap/pcap.h>

#include "droce_config.h"

#include "replay.h"

struct replay_pcap_out {
	pcap_t *pc;
	pcap_dumper_t *d;
};

static int add_frame(struct replay_capture *c, unsigned int *cap,
		     const struct pcap_pkthdr *h, const uint8_t *data)
{
	struct replay_frame *f;

	if (c->n == *cap) {
		unsigned int ncap = *cap ? *cap * 2 : 256;

		f = realloc(c->f, ncap * sizeof(*f));
		if (f == NULL)
			return -1;
		c->f = f;
		*cap = ncap;
	}
	f = &c->f[c->n];
	memset(f, 0, sizeof(*f));
	f->data = malloc(h->caplen ? h->caplen : 1);
	if (f->data == NULL)
		return -1;
	memcpy(f->data, data, h->caplen);
	f->len = h->caplen;
	f->ts_us = (uint64_t)h->ts.tv_sec * 1000000u + (uint64_t)h->ts.tv_usec;
	c->n++;
	return 0;
}

int replay_capture_load(const char *path, struct replay_capture *c, char *err, size_t len)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned int cap = 0;
	pcap_t *pc;
	int rc;

	memset(c, 0, sizeof(*c));
	c->path = path;
	pc = pcap_open_offline(path, ebuf);
	if (pc == NULL) {
		snprintf(err, len, "not a readable pcap: %s", ebuf);
		return -1;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		snprintf(err, len, "link type %d is not Ethernet", pcap_datalink(pc));
		pcap_close(pc);
		return -1;
	}
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		if (h->caplen < h->len) {
			rc = -4;	/* its payload and ICRC are not there to inject */
			break;
		}
		if (add_frame(c, &cap, h, data) != 0) {
			rc = -3;
			break;
		}
	}
	if (rc == -4)
		snprintf(err, len, "frame %u was captured short (%u of %u bytes): a replay needs "
			 "whole frames (a flight recording keeps 128 bytes of each)", c->n + 1,
			 h->caplen, h->len);
	else if (rc != PCAP_ERROR_BREAK)
		snprintf(err, len, "%s after frame %u", rc == -3 ? "out of memory" :
			 pcap_geterr(pc), c->n);
	pcap_close(pc);
	if (rc != PCAP_ERROR_BREAK) {
		replay_capture_free(c);
		return -1;
	}
	return 0;
}

void replay_capture_free(struct replay_capture *c)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		free(c->f[i].data);
	free(c->f);
	c->f = NULL;
	c->n = 0;
}

/* A RoCE v2 frame of @p sc's IP version from @p src (or anyone) to @p dst (or anyone). */
static bool frame_is(const struct replay_frame *f, const struct replay_scenario *sc,
		     const uint8_t *src, const uint8_t *dst)
{
	const struct droce_pkt *p = &f->pkt;

	if (f->kind == RF_NOT_ROCE || (p->ipv6 != 0) != sc->ipv6)
		return false;
	return (src == NULL || memcmp(p->sgid, src, 16) == 0) &&
	       (dst == NULL || memcmp(p->dgid, dst, 16) == 0);
}

/* Of a frame the parser refused: UDP to 4791 over an options-free IPv4 header or an IPv6
 * header without extensions, i.e. a broken RoCE v2 frame rather than ARP or the TCP exchange.
 * Its destination as a GID in @p dst. */
static bool looks_roce(const struct replay_frame *f, uint8_t dst[16])
{
	const uint8_t *d = f->data;

	if (f->len >= 38 && d[12] == 0x08 && d[13] == 0x00 && d[14] == 0x45 && d[23] == 17 &&
	    (d[36] << 8 | d[37]) == DROCE_ROCEV2_PORT) {
		memset(dst, 0, 10);
		dst[10] = dst[11] = 0xff;
		memcpy(dst + 12, d + 30, 4);
		return true;
	}
	if (f->len >= 58 && d[12] == 0x86 && d[13] == 0xdd && (d[14] >> 4) == 6 && d[20] == 17 &&
	    (d[56] << 8 | d[57]) == DROCE_ROCEV2_PORT) {
		memcpy(dst, d + 38, 16);
		return true;
	}
	return false;
}

static void classify_one(struct replay_frame *f, const struct replay_scenario *sc)
{
	uint8_t dst[16];

	if (droce_parse(f->data, f->len, 0, &f->pkt) != DROCE_PARSE_OK) {
		if (!looks_roce(f, dst))
			f->kind = RF_NOT_ROCE;
		else
			f->kind = (f->data[12] == 0x86) == sc->ipv6 &&
				  memcmp(dst, sc->gid, 16) == 0 ? RF_MALFORMED : RF_OTHER_DIR;
		return;
	}
	f->kind = RF_OTHER_DIR;
	if ((f->pkt.mask & DROCE_M_REQ) && frame_is(f, sc, NULL, sc->gid))
		f->kind = RF_REQUEST;
	else if ((f->pkt.mask & DROCE_M_RESP) && frame_is(f, sc, sc->gid, NULL))
		f->kind = RF_RESPONSE;
}

void replay_capture_classify(struct replay_capture *c, const struct replay_scenario *sc)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		classify_one(&c->f[i], sc);
}

struct replay_pcap_out *replay_pcap_open(const char *path, char *err, size_t len)
{
	struct replay_pcap_out *o = calloc(1, sizeof(*o));

	if (o == NULL || (o->pc = pcap_open_dead(DLT_EN10MB, 65535)) == NULL) {
		snprintf(err, len, "out of memory");
		free(o);
		return NULL;
	}
	o->d = pcap_dump_open(o->pc, path);
	if (o->d == NULL) {
		snprintf(err, len, "cannot write %s: %s", path, pcap_geterr(o->pc));
		pcap_close(o->pc);
		free(o);
		return NULL;
	}
	return o;
}

void replay_pcap_write(struct replay_pcap_out *o, const void *data, uint32_t len)
{
	struct pcap_pkthdr h = { .caplen = len, .len = len };

	if (o == NULL)
		return;
	gettimeofday(&h.ts, NULL);
	pcap_dump((u_char *)o->d, &h, data);
}

void replay_pcap_close(struct replay_pcap_out *o)
{
	if (o == NULL)
		return;
	pcap_dump_close(o->d);
	pcap_close(o->pc);
	free(o);
}
