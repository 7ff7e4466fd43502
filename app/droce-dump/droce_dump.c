/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-dump: decode every frame of a pcap with droce's wire parser, tshark-style, and say
 * whether each RoCE v2 frame (UDP destination port 4791) parses and its ICRC verifies.
 *
 * Exit status: 0 every RoCE v2 frame is good; 1 some RoCE v2 frame is bad (a parse error,
 * a wrong ICRC, or captured truncated); 2 usage error or unreadable file.
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <pcap/pcap.h>

#include "droce_config.h"
#include "dump.h"

#define EXIT_BAD_FRAME 1
#define EXIT_USAGE     2

struct options {
	const char *file;
	int quiet;        /* summary only */
	int fields;       /* --fields lines instead of the human ones; summary to stderr */
};

struct stats {
	uint64_t frames;
	uint64_t roce;
	uint64_t bad;
	uint64_t opcode[256];                   /* RoCE v2 frames whose headers parsed */
	uint64_t reason[DROCE_PARSE_ERR_NUM];   /* rejected and non-RoCE frames */
	uint64_t mads;                          /* UD SENDs to QP 1 */
	uint64_t mad_attr[0x20];                /* MADs decoded, by attribute (all below 0x20) */
	uint64_t mad_err[DROCE_MAD_ERR_NUM];    /* MADs rejected, by reason */
};

static void usage(FILE *o)
{
	fprintf(o, "usage: droce-dump [-q] [--fields] FILE.pcap\n");
}

static void help(void)
{
	static const char *const text[] = {
		"Decode every frame of an Ethernet pcap with droce's RoCE v2 parser and verify",
		"the ICRC of every RoCE v2 frame (UDP destination port 4791): one line per frame,",
		"then a summary of frames per opcode and per rejection reason.",
		"A UD SEND to QP 1 carries a MAD: a Communication Manager MAD is decoded on its",
		"frame's line (header, then the message's key fields named after droce's",
		"struct droce_cm_mad members), or the reason it is rejected is given; a bad MAD",
		"does not make the frame bad.",
		"",
		"  -q, --quiet   print the summary only",
		"  -h, --help    this text",
		"  --version     the version",
		"  --fields      instead of the frame lines, one tab-separated line per RoCE v2",
		"                frame after a '#' header line; the summary goes to stderr.",
		"                Columns, named after tshark's fields where tshark 4.0 has one,",
		"                empty if the frame lacks the field or its headers did not parse:",
	};
	static const char *const notes[] = {
		"                infiniband.reth.va and .r_key hold the AtomicETH's too (as in",
		"                tshark); the ICRC is its four wire bytes read big-endian (as in",
		"                tshark); droce.payload_len excludes the pad; droce.status is OK",
		"                or the reason the frame was rejected.",
		"",
		"Exit status: 0 every RoCE v2 frame good; 1 some RoCE v2 frame bad (parse error,",
		"ICRC mismatch, captured truncated); 2 usage error or unreadable file.",
	};
	unsigned int i;

	usage(stdout);
	for (i = 0; i < RTE_DIM(text); i++)
		puts(text[i]);
	dump_print_fields_help(stdout);
	for (i = 0; i < RTE_DIM(notes); i++)
		puts(notes[i]);
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct options *opt)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "fields", no_argument, NULL, 'f' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			help();
			return EXIT_SUCCESS;
		case 'q':
			opt->quiet = 1;
			break;
		case 'f':
			opt->fields = 1;
			break;
		case 'V':
			printf("droce-dump %s\n", DROCE_VERSION);
			return EXIT_SUCCESS;
		default:
			usage(stderr);
			fprintf(stderr, "Try 'droce-dump --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "droce-dump: expected one pcap file\n");
		usage(stderr);
		fprintf(stderr, "Try 'droce-dump --help'.\n");
		return EXIT_USAGE;
	}
	opt->file = argv[optind];
	return -1;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * From the captured bytes alone: @f's addresses, and whether it goes to UDP port 4791 (OK),
 * is too short to tell (TRUNCATED), or is not RoCE v2 (NOT_IP, NOT_UDP, NOT_ROCE_PORT).
 */
static enum droce_parse_err peek(struct dump_frame *f)
{
	const uint8_t *d = f->data;
	uint32_t off = RTE_ETHER_HDR_LEN, l4;
	uint16_t type;
	uint8_t proto;

	if (f->caplen < off)
		return DROCE_PARSE_TRUNCATED;
	f->src = d + 6;
	f->dst = d;
	f->tos = -1;
	type = get16(d + 12);
	if (type == RTE_ETHER_TYPE_VLAN) {
		off += sizeof(struct rte_vlan_hdr);
		if (f->caplen < off)
			return DROCE_PARSE_TRUNCATED;
		f->tagged = 1;
		f->tci = get16(d + off - 4);
		type = get16(d + off - 2);
	}
	if (type == RTE_ETHER_TYPE_IPV4 && f->caplen >= off + sizeof(struct rte_ipv4_hdr)) {
		f->family = AF_INET;
		f->tos = d[off + 1];
		f->src = d + off + 12;
		f->dst = d + off + 16;
		proto = d[off + 9];
		l4 = off + (d[off] & 0xf) * 4u;
	} else if (type == RTE_ETHER_TYPE_IPV6 && f->caplen >= off + sizeof(struct rte_ipv6_hdr)) {
		f->family = AF_INET6;
		f->tos = (int)((get16(d + off) >> 4) & 0xff);
		f->src = d + off + 8;
		f->dst = d + off + 24;
		proto = d[off + 6];
		l4 = off + sizeof(struct rte_ipv6_hdr);
	} else {
		return type == RTE_ETHER_TYPE_IPV4 || type == RTE_ETHER_TYPE_IPV6 ?
			DROCE_PARSE_TRUNCATED : DROCE_PARSE_NOT_IP;
	}
	if (proto != IPPROTO_UDP)
		return DROCE_PARSE_NOT_UDP;
	if (f->caplen < l4 + 4)
		return DROCE_PARSE_TRUNCATED;
	return get16(d + l4 + 2) == DROCE_ROCEV2_PORT ? DROCE_PARSE_OK : DROCE_PARSE_NOT_ROCE_PORT;
}

/*
 * A RoCE v2 frame cut short (a flight recording keeps 128 bytes, a capture may have a
 * snaplen): its headers, if they were captured whole, parsed from a copy padded with zeros to
 * the frame's length, without the ICRC. @return the parser's verdict, TRUNCATED if the
 * headers were not all captured.
 */
static enum droce_parse_err parse_snapped(struct dump_frame *f)
{
	static uint8_t whole[65536];	/* IP length 16 bits */
	enum droce_parse_err err;

	if (f->len > sizeof(whole))
		return DROCE_PARSE_TRUNCATED;
	memcpy(whole, f->data, f->caplen);
	memset(whole + f->caplen, 0, f->len - f->caplen);
	err = droce_parse(whole, f->len, DROCE_PARSE_NO_ICRC, &f->pkt);
	if (err != DROCE_PARSE_OK || f->pkt.payload_off > f->caplen)
		return DROCE_PARSE_TRUNCATED;
	f->snapped = 1;
	f->data = whole;	/* the frame's headers are the same; pkt points here */
	return DROCE_PARSE_OK;
}

/* RoCE v2 or not (peek), then droce's verdict on a RoCE v2 frame: captured whole, or its
 * headers (parse_snapped()). */
static void classify(struct dump_frame *f)
{
	enum droce_parse_err seen = peek(f);

	f->roce = seen == DROCE_PARSE_OK || seen == DROCE_PARSE_TRUNCATED;
	f->snapped = 0;
	if (!f->roce)
		f->err = seen;
	else if (f->caplen < f->len)
		f->err = parse_snapped(f);	/* the ICRC cannot be checked */
	else
		f->err = droce_parse(f->data, f->caplen, 0, &f->pkt);
	dump_decode_mad(f);
}

static void count(struct stats *s, const struct dump_frame *f)
{
	s->frames++;
	s->roce += f->roce;
	if (f->roce && f->err != DROCE_PARSE_OK)
		s->bad++;
	if (dump_frame_parsed(f))
		s->opcode[f->pkt.opcode]++;
	if (f->err != DROCE_PARSE_OK)
		s->reason[f->err]++;
	if (f->gsi) {
		s->mads++;
		if (f->mad_err == DROCE_MAD_OK)
			s->mad_attr[f->mad.hdr.attr_id]++;
		else
			s->mad_err[f->mad_err]++;
	}
}

static void print_summary(FILE *o, const char *file, const struct stats *s)
{
	unsigned int i;

	fprintf(o, "summary: %s: %" PRIu64 " frames, %" PRIu64 " RoCE v2 (%" PRIu64 " ok, %" PRIu64
		" bad), %" PRIu64 " not RoCE v2\n", file, s->frames, s->roce, s->roce - s->bad,
		s->bad, s->frames - s->roce);
	fprintf(o, "opcodes (RoCE v2 frames whose headers parsed):\n");
	for (i = 0; i < RTE_DIM(s->opcode); i++)
		if (s->opcode[i] != 0)
			fprintf(o, "%8" PRIu64 "  0x%02x %s\n", s->opcode[i], i,
				droce_opcode_name(i));
	fprintf(o, "rejected (bad RoCE v2 frames, and why others are not RoCE v2):\n");
	for (i = 1; i < DROCE_PARSE_ERR_NUM; i++)
		if (s->reason[i] != 0)
			fprintf(o, "%8" PRIu64 "  %s (%s)\n", s->reason[i], droce_parse_err_name(i),
				droce_parse_err_str(i));
	if (s->mads == 0)
		return;
	fprintf(o, "CM MADs (UD SENDs to QP 1): %" PRIu64 "\n", s->mads);
	for (i = 0; i < RTE_DIM(s->mad_attr); i++)
		if (s->mad_attr[i] != 0)
			fprintf(o, "%8" PRIu64 "  %s\n", s->mad_attr[i], droce_cm_attr_name(i));
	for (i = 1; i < DROCE_MAD_ERR_NUM; i++)
		if (s->mad_err[i] != 0)
			fprintf(o, "%8" PRIu64 "  rejected: %s (%s)\n", s->mad_err[i],
				droce_mad_err_name(i), dump_mad_err_str(i));
}

static pcap_t *open_pcap(const char *file)
{
	char err[PCAP_ERRBUF_SIZE];
	const char *name;
	pcap_t *p;
	int dlt;

	p = pcap_open_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, err);
	if (p == NULL) {
		/* libpcap names the file in some messages ("F: No such file") but not in all */
		if (strncmp(err, file, strlen(file)) == 0)
			fprintf(stderr, "droce-dump: %s\n", err);
		else
			fprintf(stderr, "droce-dump: %s: %s\n", file, err);
		return NULL;
	}
	dlt = pcap_datalink(p);
	if (dlt != DLT_EN10MB) {
		name = pcap_datalink_val_to_name(dlt);
		fprintf(stderr, "droce-dump: %s: link type %d (%s) is not supported: "
			"need Ethernet (EN10MB)\n", file, dlt, name != NULL ? name : "?");
		pcap_close(p);
		return NULL;
	}
	return p;
}

static uint64_t ts_ns(const struct pcap_pkthdr *h)
{
	return (uint64_t)h->ts.tv_sec * 1000000000 + (uint64_t)h->ts.tv_usec;   /* nanoseconds */
}

/* Read, classify, print and count every frame. Returns 0, or -1 on a read error. */
static int dump_all(pcap_t *p, const struct options *opt, struct stats *s)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t t0 = 0;
	int rc;

	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		struct dump_frame f = {
			.number = s->frames + 1,
			.data = data,
			.caplen = h->caplen,
			.len = h->len,
		};

		if (s->frames == 0)
			t0 = ts_ns(h);
		f.time_ns = ts_ns(h) - t0;
		classify(&f);
		count(s, &f);
		if (opt->quiet)
			continue;
		if (opt->fields)
			dump_print_fields(stdout, &f);
		else
			dump_print_frame(stdout, &f);
	}
	if (rc == PCAP_ERROR) {
		fflush(stdout);
		fprintf(stderr, "droce-dump: %s: frame %" PRIu64 ": %s\n", opt->file, s->frames + 1,
			pcap_geterr(p));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options opt = { 0 };
	static struct stats s;
	pcap_t *p;
	int rc;

	rc = parse_args(argc, argv, &opt);
	if (rc >= 0)
		return rc;
	p = open_pcap(opt.file);
	if (p == NULL)
		return EXIT_USAGE;
	if (opt.fields && !opt.quiet)
		dump_print_fields_header(stdout);
	rc = dump_all(p, &opt, &s);
	pcap_close(p);
	if (rc < 0)
		return EXIT_USAGE;
	print_summary(opt.fields ? stderr : stdout, opt.file, &s);
	return s.bad != 0 ? EXIT_BAD_FRAME : EXIT_SUCCESS;
}
