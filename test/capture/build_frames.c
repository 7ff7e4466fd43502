/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * build_frames OUT.pcap OUT.expected
 *
 * Write a pcap of frames made by droce_build(): every opcode of droce_opcode_table, over IPv4
 * and IPv6, payloads of 0 to 4096 bytes (every pad count) on opcodes that carry one, every kind
 * of AETH syndrome on the ACKs, every FETH value on FLUSH, and header values that differ from
 * frame to frame. Next to it,
 * OUT.expected holds what each frame must decode to: the values this program asked for, in
 * droce-dump --fields' tab-separated format (same column names, a '#' header line, empty where
 * the opcode has no such header). The tests check the pcap against that file with tshark,
 * scapy, test/rig/icrc_check.py and droce-dump.
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <pcap/pcap.h>

#include "droce_wire.h"

#define FRAME_ROOM 8192
#define U24 0xffffffu                  /* field widths from the IBA, not from droce's headers */
#define TS_BASE_SEC 1700000000u
#define TS_STEP_NS 1000003u          /* not a whole number of microseconds */

static const uint32_t payload_lens[] = {
	0, 1, 2, 3, 4, 5, 7, 8, 255, 256, 1023, 1024, 1025, 2048, 4095, 4096,
};

/* ACK (credits, and 31 = invalid), RNR NAK (timers), NAK (each code). */
static const uint8_t syndromes[] = {
	0x00, 0x0b, 0x1f, 0x20, 0x2e, 0x3f, 0x60, 0x61, 0x62, 0x63, 0x64,
};

static const char *const columns[] = {
	"frame.number", "frame.time_relative", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst",
	"udp.srcport", "infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m",
	"infiniband.bth.padcnt", "infiniband.bth.tver", "infiniband.bth.p_key",
	"infiniband.bth.destqp", "infiniband.bth.a", "infiniband.bth.psn", "infiniband.reth.va",
	"infiniband.reth.r_key", "infiniband.reth.dmalen", "infiniband.atomiceth.swapdt",
	"infiniband.atomiceth.cmpdt", "infiniband.aeth.syndrome", "infiniband.aeth.msn",
	"infiniband.atomicacketh.origremdt", "infiniband.deth.q_key", "infiniband.deth.srcqp",
	"infiniband.immdt", "infiniband.ieth", "droce.feth.sel", "droce.feth.plt",
	"droce.payload_len",
};

struct out {
	pcap_t *pcap;
	pcap_dumper_t *dumper;
	FILE *expected;
	uint32_t frames;
	uint64_t rng;
	uint32_t feth;		/* FLUSH frames so far: their FETH runs through every value */
};

/* splitmix64: a reproducible stream of well-mixed values. */
static uint64_t next_rand(struct out *o)
{
	uint64_t z = (o->rng += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Addressing that differs per frame: addresses, UDP source port, traffic class, hop limit. */
static void make_flow(struct out *o, struct droce_flow *f, int ipv6)
{
	static const uint8_t v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	uint64_t r = next_rand(o);

	memset(f, 0, sizeof(*f));
	f->src_mac = (struct rte_ether_addr){ { 0x02, 0x47, 0, 0, 0, 0x64 } };
	f->dst_mac = (struct rte_ether_addr){ { 0x52, 0x54, 0, 0x47, 0, 0x02 } };
	f->ipv6 = ipv6;
	f->tclass = r & 0xff;
	f->hop_limit = 1 + ((r >> 8) & 0xfe);
	f->flow_label = ipv6 ? (r >> 16) & 0xfffff : 0;
	f->sport = droce_flow_sport(o->frames, (uint32_t)(r >> 36));
	if (ipv6) {
		uint64_t a = next_rand(o), b = next_rand(o);

		f->sgid[0] = 0x20;               /* 2001:db8::/32, documentation */
		f->sgid[1] = 0x01;
		f->sgid[2] = 0x0d;
		f->sgid[3] = 0xb8;
		memcpy(f->sgid + 8, &a, 8);
		f->dgid[0] = 0xfd;               /* unique local */
		memcpy(f->dgid + 8, &b, 8);
	} else {
		uint64_t a = next_rand(o);

		memcpy(f->sgid, v4_prefix, 12);
		memcpy(f->dgid, v4_prefix, 12);
		f->sgid[12] = 10;
		memcpy(f->sgid + 13, &a, 3);
		f->dgid[12] = 192;
		f->dgid[13] = 168;
		memcpy(f->dgid + 14, (uint8_t *)&a + 4, 2);
	}
}

/* Header fields that differ per frame, each within its field's width. */
static void make_fields(struct out *o, struct droce_hdr_fields *h, uint8_t opcode, uint8_t syn)
{
	uint64_t r = next_rand(o);

	memset(h, 0, sizeof(*h));
	h->opcode = opcode;
	h->se = r & 1;
	h->mig = (r >> 1) & 1;
	h->ackreq = (r >> 2) & 1;
	h->pkey = (uint16_t)(r >> 8);
	h->dqpn = (r >> 24) & U24;
	h->psn = (r >> 48) | ((r & 0xff) << 16);
	h->reth.va = next_rand(o);
	h->reth.rkey = (uint32_t)next_rand(o);
	h->reth.len = (uint32_t)next_rand(o);
	h->aeth.syndrome = syn;
	h->aeth.msn = next_rand(o) & U24;
	h->atomic.va = next_rand(o);
	h->atomic.rkey = (uint32_t)next_rand(o);
	h->atomic.swap_add = next_rand(o);
	h->atomic.cmp = next_rand(o);
	h->atomic_orig = next_rand(o);
	h->imm = (rte_be32_t)next_rand(o);
	h->ieth_rkey = (uint32_t)next_rand(o);
	h->deth.qkey = (uint32_t)next_rand(o);
	h->deth.sqpn = next_rand(o) & U24;
	/* every selectivity level (2 bits) with every set of placement types (4 bits) */
	h->feth.sel = o->feth & 3;
	h->feth.plt = (o->feth >> 2) & 0xf;
	if (droce_opcode_info(opcode)->mask & DROCE_M_FETH)
		o->feth++;
}

static void put_addr(FILE *e, const uint8_t *gid, int want_v6, int ipv6)
{
	char buf[INET6_ADDRSTRLEN];

	if (want_v6 != ipv6)
		return;
	inet_ntop(ipv6 ? AF_INET6 : AF_INET, ipv6 ? gid : gid + 12, buf, sizeof(buf));
	fputs(buf, e);
}

/* A column that only frames with extension header @m have: the value, or nothing. */
#define EXT(m, fmt, v) do { if (mask & (m)) fprintf(e, fmt, v); fputc('\t', e); } while (0)

static void write_expected(struct out *o, const struct droce_flow *f,
			   const struct droce_hdr_fields *h, uint32_t payload_len)
{
	uint32_t mask = droce_opcode_info(h->opcode)->mask;
	uint64_t t = (uint64_t)(o->frames - 1) * TS_STEP_NS;
	uint64_t va = (mask & DROCE_M_ATMETH) ? h->atomic.va : h->reth.va;
	uint32_t rkey = (mask & DROCE_M_ATMETH) ? h->atomic.rkey : h->reth.rkey;
	FILE *e = o->expected;
	int i;

	fprintf(e, "%" PRIu32 "\t%" PRIu64 ".%09" PRIu64 "\t", o->frames, t / 1000000000,
		t % 1000000000);
	for (i = 0; i < 4; i++) {
		put_addr(e, (i & 1) ? f->dgid : f->sgid, i >= 2, f->ipv6);
		fputc('\t', e);
	}
	fprintf(e, "%u\t%u\t%u\t%u\t%u\t0\t%u\t0x%06x\t%u\t%u\t", f->sport, h->opcode, h->se,
		h->mig, droce_pad_len(payload_len), h->pkey, h->dqpn, h->ackreq, h->psn);
	EXT(DROCE_M_RETH | DROCE_M_ATMETH, "0x%016" PRIx64, va);
	EXT(DROCE_M_RETH | DROCE_M_ATMETH, "0x%08" PRIx32, rkey);
	EXT(DROCE_M_RETH, "%" PRIu32, h->reth.len);
	EXT(DROCE_M_ATMETH, "%" PRIu64, h->atomic.swap_add);
	EXT(DROCE_M_ATMETH, "%" PRIu64, h->atomic.cmp);
	EXT(DROCE_M_AETH, "%u", h->aeth.syndrome);
	EXT(DROCE_M_AETH, "%" PRIu32, h->aeth.msn);
	EXT(DROCE_M_ATMACK, "%" PRIu64, h->atomic_orig);
	EXT(DROCE_M_DETH, "0x%08" PRIx32, h->deth.qkey);
	EXT(DROCE_M_DETH, "0x%06" PRIx32, h->deth.sqpn);
	EXT(DROCE_M_IMMDT, "0x%08" PRIx32, rte_be_to_cpu_32(h->imm));
	EXT(DROCE_M_IETH, "0x%08" PRIx32, h->ieth_rkey);
	EXT(DROCE_M_FETH, "%u", h->feth.sel);
	EXT(DROCE_M_FETH, "%u", h->feth.plt);
	fprintf(e, "%" PRIu32 "\n", payload_len);
}

/* Build one frame, append it to the pcap and its expected values to the sidecar. */
static int emit(struct out *o, uint8_t opcode, int ipv6, uint32_t payload_len, uint8_t syn)
{
	static uint8_t frame[FRAME_ROOM], payload[FRAME_ROOM];
	struct droce_hdr_fields h;
	struct droce_flow f;
	struct pcap_pkthdr ph;
	uint64_t t;
	uint32_t i;
	int len;

	o->frames++;
	make_flow(o, &f, ipv6);
	make_fields(o, &h, opcode, syn);
	for (i = 0; i < payload_len; i++)
		payload[i] = (uint8_t)(next_rand(o) >> 56);
	len = droce_build(frame, sizeof(frame), &f, &h, payload, payload_len);
	if (len < 0) {
		fprintf(stderr, "build_frames: frame %" PRIu32 " (%s, IPv%d, payload %" PRIu32
			"): droce_build: %s\n", o->frames, droce_opcode_name(opcode), ipv6 ? 6 : 4,
			payload_len, strerror(-len));
		return -1;
	}
	t = (uint64_t)(o->frames - 1) * TS_STEP_NS;
	ph.ts.tv_sec = TS_BASE_SEC + t / 1000000000;
	ph.ts.tv_usec = t % 1000000000;           /* nanoseconds: the dumper is NANO */
	ph.caplen = ph.len = len;
	pcap_dump((u_char *)o->dumper, &ph, frame);
	write_expected(o, &f, &h, payload_len);
	return 0;
}

/* Every frame variant of one opcode, over one IP version. */
static int emit_opcode(struct out *o, uint8_t opcode, int ipv6)
{
	uint32_t mask = droce_opcode_info(opcode)->mask;
	unsigned int i, n = RTE_DIM(syndromes);

	if (mask & DROCE_M_PAYLOAD) {
		for (i = 0; i < RTE_DIM(payload_lens); i++)
			if (emit(o, opcode, ipv6, payload_lens[i], syndromes[i % n]) < 0)
				return -1;
	} else if (mask & DROCE_M_AETH) {
		for (i = 0; i < n; i++)
			if (emit(o, opcode, ipv6, 0, syndromes[i]) < 0)
				return -1;
	} else if (mask & DROCE_M_FETH) {
		for (i = 0; i < 64; i++)	/* every FETH value (make_fields()) */
			if (emit(o, opcode, ipv6, 0, 0) < 0)
				return -1;
	} else {
		return emit(o, opcode, ipv6, 0, 0);
	}
	return 0;
}

static int open_out(struct out *o, const char *pcap_path, const char *exp_path)
{
	unsigned int i;

	o->pcap = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, FRAME_ROOM,
						       PCAP_TSTAMP_PRECISION_NANO);
	if (o->pcap == NULL)
		return -1;
	o->dumper = pcap_dump_open(o->pcap, pcap_path);
	if (o->dumper == NULL) {
		fprintf(stderr, "build_frames: %s: %s\n", pcap_path, pcap_geterr(o->pcap));
		return -1;
	}
	o->expected = fopen(exp_path, "w");
	if (o->expected == NULL) {
		perror(exp_path);
		return -1;
	}
	for (i = 0; i < RTE_DIM(columns); i++)
		fprintf(o->expected, "%s%s", i == 0 ? "#" : "\t", columns[i]);
	fputc('\n', o->expected);
	return 0;
}

int main(int argc, char **argv)
{
	struct out o = { .rng = 0x64726f6365 };
	int op, ipv6, rc = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: build_frames OUT.pcap OUT.expected\n");
		return 2;
	}
	if (open_out(&o, argv[1], argv[2]) < 0)
		return 1;
	for (op = 0; op < 256 && rc == 0; op++)
		for (ipv6 = 0; ipv6 <= 1 && rc == 0; ipv6++)
			if (droce_opcode_known(op))
				rc = emit_opcode(&o, op, ipv6);
	pcap_dump_close(o.dumper);
	pcap_close(o.pcap);
	if (fclose(o.expected) != 0)
		rc = -1;
	if (rc == 0)
		printf("build_frames: %" PRIu32 " frames in %s, expected values in %s\n", o.frames,
		       argv[1], argv[2]);
	return rc == 0 ? 0 : 1;
}
