/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-dump output: one tshark-like line per frame, or (--fields) one tab-separated line of
 * header fields per RoCE v2 frame. Every value comes from droce's parse (struct droce_pkt and
 * the wire accessors), so comparing this output with tshark tests the parser.
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>
#include <sys/socket.h>

#include "dump.h"

enum fmt { FMT_DEC, FMT_TIME, FMT_IP4, FMT_IP6, FMT_HEX24, FMT_HEX32, FMT_HEX64 };

/*
 * The --fields columns: X(id, name, format). Where tshark 4.0 has the field, the column is named
 * after it and holds the same value, so a test can ask tshark for exactly these names. tshark
 * shows the AtomicETH VA and R_Key as infiniband.reth.va / r_key, and so does this table; it
 * reads the ICRC as a big-endian number of the four wire bytes, and so does this table.
 * droce.* columns have no tshark 4.0 equivalent. Empty: the frame has no such field.
 */
#define DUMP_COLS(X) \
	X(FRAME,    "frame.number",                      FMT_DEC) \
	X(TIME,     "frame.time_relative",               FMT_TIME) \
	X(IP_SRC,   "ip.src",                            FMT_IP4) \
	X(IP_DST,   "ip.dst",                            FMT_IP4) \
	X(IP6_SRC,  "ipv6.src",                          FMT_IP6) \
	X(IP6_DST,  "ipv6.dst",                          FMT_IP6) \
	X(SPORT,    "udp.srcport",                       FMT_DEC) \
	X(OPCODE,   "infiniband.bth.opcode",             FMT_DEC) \
	X(SE,       "infiniband.bth.se",                 FMT_DEC) \
	X(MIG,      "infiniband.bth.m",                  FMT_DEC) \
	X(PAD,      "infiniband.bth.padcnt",             FMT_DEC) \
	X(TVER,     "infiniband.bth.tver",               FMT_DEC) \
	X(PKEY,     "infiniband.bth.p_key",              FMT_DEC) \
	X(DQPN,     "infiniband.bth.destqp",             FMT_HEX24) \
	X(ACKREQ,   "infiniband.bth.a",                  FMT_DEC) \
	X(PSN,      "infiniband.bth.psn",                FMT_DEC) \
	X(VA,       "infiniband.reth.va",                FMT_HEX64) \
	X(RKEY,     "infiniband.reth.r_key",             FMT_HEX32) \
	X(DMALEN,   "infiniband.reth.dmalen",            FMT_DEC) \
	X(SWAP_ADD, "infiniband.atomiceth.swapdt",       FMT_DEC) \
	X(CMP,      "infiniband.atomiceth.cmpdt",        FMT_DEC) \
	X(SYNDROME, "infiniband.aeth.syndrome",          FMT_DEC) \
	X(MSN,      "infiniband.aeth.msn",               FMT_DEC) \
	X(ORIG,     "infiniband.atomicacketh.origremdt", FMT_DEC) \
	X(QKEY,     "infiniband.deth.q_key",             FMT_HEX32) \
	X(SRCQP,    "infiniband.deth.srcqp",             FMT_HEX24) \
	X(IMM,      "infiniband.immdt",                  FMT_HEX32) \
	X(IETH,     "infiniband.ieth",                   FMT_HEX32) \
	X(FETH_SEL, "droce.feth.sel",                    FMT_DEC) \
	X(FETH_PLT, "droce.feth.plt",                    FMT_DEC) \
	X(PAYLOAD,  "droce.payload_len",                 FMT_DEC) \
	X(ICRC,     "infiniband.invariant.crc",          FMT_HEX32)

/* The last column, after these: droce.status, "OK" or the droce_parse_err_name(). */
#define STATUS_COL "droce.status"

enum col {
#define COL_ENUM(id, name, fmt) COL_##id,
	DUMP_COLS(COL_ENUM)
#undef COL_ENUM
	COL_NUM
};

static const struct {
	const char *name;
	enum fmt fmt;
} cols[COL_NUM] = {
#define COL_INFO(id, nm, f) [COL_##id] = { .name = nm, .fmt = f },
	DUMP_COLS(COL_INFO)
#undef COL_INFO
};

/* The values of one frame's columns; a column is empty unless its bit is set in @present. */
struct row {
	uint64_t v[COL_NUM];
	uint64_t present;
};

static_assert(COL_NUM <= 64, "one presence bit per column");

static void put(struct row *r, enum col c, uint64_t v)
{
	r->v[c] = v;
	r->present |= UINT64_C(1) << c;
}

static void collect_ext(const struct droce_pkt *p, struct row *r)
{
	const struct droce_reth *reth = droce_pkt_ext(p, DROCE_HDR_RETH);
	const struct droce_atmeth *atm = droce_pkt_ext(p, DROCE_HDR_ATMETH);
	const struct droce_aeth *aeth = droce_pkt_ext(p, DROCE_HDR_AETH);
	const struct droce_atmack *ack = droce_pkt_ext(p, DROCE_HDR_ATMACK);
	const struct droce_deth *deth = droce_pkt_ext(p, DROCE_HDR_DETH);
	const struct droce_immdt *imm = droce_pkt_ext(p, DROCE_HDR_IMMDT);
	const struct droce_ieth *ieth = droce_pkt_ext(p, DROCE_HDR_IETH);
	const struct droce_feth *feth = droce_pkt_ext(p, DROCE_HDR_FETH);

	if (reth != NULL) {
		put(r, COL_VA, rte_be_to_cpu_64(reth->va));
		put(r, COL_RKEY, rte_be_to_cpu_32(reth->rkey));
		put(r, COL_DMALEN, rte_be_to_cpu_32(reth->len));
	}
	if (atm != NULL) {
		put(r, COL_VA, rte_be_to_cpu_64(atm->va));
		put(r, COL_RKEY, rte_be_to_cpu_32(atm->rkey));
		put(r, COL_SWAP_ADD, rte_be_to_cpu_64(atm->swap_add));
		put(r, COL_CMP, rte_be_to_cpu_64(atm->cmp));
	}
	if (aeth != NULL) {
		put(r, COL_SYNDROME, droce_aeth_syndrome(aeth));
		put(r, COL_MSN, droce_aeth_msn(aeth));
	}
	if (ack != NULL)
		put(r, COL_ORIG, rte_be_to_cpu_64(ack->orig));
	if (deth != NULL) {
		put(r, COL_QKEY, rte_be_to_cpu_32(deth->qkey));
		put(r, COL_SRCQP, droce_deth_sqpn(deth));
	}
	if (imm != NULL)
		put(r, COL_IMM, rte_be_to_cpu_32(imm->imm));
	if (ieth != NULL)
		put(r, COL_IETH, rte_be_to_cpu_32(ieth->rkey));
	if (feth != NULL) {
		put(r, COL_FETH_SEL, droce_feth_sel(feth));
		put(r, COL_FETH_PLT, droce_feth_plt(feth));
	}
}

/* Columns of @f: frame and time always, the rest only once all headers parsed. */
static void collect(const struct dump_frame *f, struct row *r)
{
	const struct droce_pkt *p = &f->pkt;
	const struct droce_bth *bth = droce_pkt_bth(p);

	memset(r, 0, sizeof(*r));
	put(r, COL_FRAME, f->number);
	put(r, COL_TIME, f->time_ns);
	if (!dump_frame_parsed(f))
		return;
	put(r, p->ipv6 ? COL_IP6_SRC : COL_IP_SRC, 0);
	put(r, p->ipv6 ? COL_IP6_DST : COL_IP_DST, 0);
	put(r, COL_SPORT, p->sport);
	put(r, COL_OPCODE, p->opcode);
	put(r, COL_SE, droce_bth_se(bth));
	put(r, COL_MIG, droce_bth_mig(bth));
	put(r, COL_PAD, p->pad);
	put(r, COL_TVER, droce_bth_tver(bth));
	put(r, COL_PKEY, droce_bth_pkey(bth));
	put(r, COL_DQPN, droce_bth_qpn(bth));
	put(r, COL_ACKREQ, droce_bth_ackreq(bth));
	put(r, COL_PSN, droce_bth_psn(bth));
	collect_ext(p, r);
	put(r, COL_PAYLOAD, p->payload_len);
	put(r, COL_ICRC, rte_bswap32(p->icrc));
}

/* Address column @c of a parsed frame, from droce's GIDs (IPv4-mapped for IPv4). */
static void print_gid(FILE *o, const struct droce_pkt *p, enum col c)
{
	const uint8_t *gid = (c == COL_IP_SRC || c == COL_IP6_SRC) ? p->sgid : p->dgid;
	char buf[INET6_ADDRSTRLEN];

	if (cols[c].fmt == FMT_IP4)
		inet_ntop(AF_INET, gid + 12, buf, sizeof(buf));
	else
		inet_ntop(AF_INET6, gid, buf, sizeof(buf));
	fputs(buf, o);
}

static void print_col(FILE *o, const struct dump_frame *f, const struct row *r, enum col c)
{
	uint64_t v = r->v[c];

	if (!(r->present & (UINT64_C(1) << c)))
		return;
	switch (cols[c].fmt) {
	case FMT_DEC:
		fprintf(o, "%" PRIu64, v);
		break;
	case FMT_TIME:
		fprintf(o, "%" PRIu64 ".%09" PRIu64, v / 1000000000, v % 1000000000);
		break;
	case FMT_IP4:
	case FMT_IP6:
		print_gid(o, &f->pkt, c);
		break;
	case FMT_HEX24:
		fprintf(o, "0x%06" PRIx64, v);
		break;
	case FMT_HEX32:
		fprintf(o, "0x%08" PRIx64, v);
		break;
	case FMT_HEX64:
		fprintf(o, "0x%016" PRIx64, v);
		break;
	}
}

void dump_print_fields_header(FILE *o)
{
	int c;

	fputc('#', o);
	for (c = 0; c < COL_NUM; c++)
		fprintf(o, "%s\t", cols[c].name);
	fprintf(o, "%s\n", STATUS_COL);
}

void dump_print_fields_help(FILE *o)
{
	int c;

	for (c = 0; c < COL_NUM; c++)
		fprintf(o, "%18d %s\n", c + 1, cols[c].name);
	fprintf(o, "%18d %s\n", COL_NUM + 1, STATUS_COL);
}

void dump_print_fields(FILE *o, const struct dump_frame *f)
{
	struct row r;
	int c;

	if (!f->roce)
		return;
	collect(f, &r);
	for (c = 0; c < COL_NUM; c++) {
		print_col(o, f, &r, c);
		fputc('\t', o);
	}
	fprintf(o, "%s\n", droce_parse_err_name(f->err));
}

/* Source and destination as tshark's summary shows them: IP addresses, else MAC addresses. */
static void print_addrs(FILE *o, const struct dump_frame *f)
{
	char s[INET6_ADDRSTRLEN] = "?", d[INET6_ADDRSTRLEN] = "?";

	if (f->family != 0) {
		inet_ntop(f->family, f->src, s, sizeof(s));
		inet_ntop(f->family, f->dst, d, sizeof(d));
	} else if (f->src != NULL) {
		rte_ether_format_addr(s, sizeof(s), (const struct rte_ether_addr *)f->src);
		rte_ether_format_addr(d, sizeof(d), (const struct rte_ether_addr *)f->dst);
	}
	fprintf(o, " %s -> %s", s, d);
	/* 802.1Q tag, and the DSCP (the TOS / traffic class without its ECN bits) when not 0 */
	if (f->tagged)
		fprintf(o, " vlan %u pcp %u", f->tci & RTE_VLAN_ID_MASK, f->tci >> 13);
	if (f->tos > 0 && (f->tos >> 2) != 0)
		fprintf(o, " dscp %d", f->tos >> 2);
}

static const char *const nak_names[] = {
	[DROCE_NAK_PSN_SEQ_ERR] = "PSN_SEQ_ERR",
	[DROCE_NAK_INV_REQ] = "INV_REQ",
	[DROCE_NAK_REM_ACCESS] = "REM_ACCESS",
	[DROCE_NAK_REM_OP] = "REM_OP",
	[DROCE_NAK_INV_RD_REQ] = "INV_RD_REQ",
};

/* The AETH syndrome spelled out (IBA 9.7.5.1, table 43). */
static void print_aeth(FILE *o, uint8_t syn, uint32_t msn)
{
	uint8_t val = syn & DROCE_AETH_VALUE_MASK;

	fprintf(o, " aeth 0x%02x", syn);
	switch (syn & DROCE_AETH_TYPE_MASK) {
	case DROCE_AETH_ACK:
		if (val == DROCE_AETH_CREDIT_INVALID)
			fprintf(o, " ACK credit invalid");
		else
			fprintf(o, " ACK credit %u", val);
		break;
	case DROCE_AETH_RNR_NAK:
		fprintf(o, " RNR_NAK timer %u", val);
		break;
	case DROCE_AETH_NAK:
		if (val < RTE_DIM(nak_names))
			fprintf(o, " NAK %s", nak_names[val]);
		else
			fprintf(o, " NAK reserved code %u", val);
		break;
	default:
		fprintf(o, " reserved");
		break;
	}
	fprintf(o, " msn %" PRIu32, msn);
}

/* FETH (IBA 1.5, RDMA FLUSH): the selectivity level and the placement type bits by name;
 * values the IBA reserves as "reserved" with their number. */
static void print_feth(FILE *o, uint64_t sel, uint64_t plt)
{
	static const char *const sel_names[] = { "range", "mr" };
	static const char *const plt_names[] = { "global", "persistent" };
	unsigned int i, n = 0;

	if (sel < RTE_DIM(sel_names))
		fprintf(o, " feth sel %s plt ", sel_names[sel]);
	else
		fprintf(o, " feth sel reserved %" PRIu64 " plt ", sel);
	for (i = 0; i < 4; i++) {
		if (!(plt & (1u << i)))
			continue;
		if (n++ != 0)
			fputc('+', o);
		if (i < RTE_DIM(plt_names))
			fputs(plt_names[i], o);
		else
			fprintf(o, "reserved 0x%x", 1u << i);
	}
	if (n == 0)
		fputs("none", o);
}

static void print_ext(FILE *o, const struct droce_pkt *p, const struct row *r)
{
	const uint64_t *v = r->v;

	if (p->mask & DROCE_M_DETH)
		fprintf(o, " deth qkey 0x%08" PRIx64 " srcqp 0x%06" PRIx64, v[COL_QKEY],
			v[COL_SRCQP]);
	if (p->mask & DROCE_M_FETH)
		print_feth(o, v[COL_FETH_SEL], v[COL_FETH_PLT]);
	if (p->mask & DROCE_M_RETH)
		fprintf(o, " reth va 0x%" PRIx64 " rkey 0x%08" PRIx64 " len %" PRIu64,
			v[COL_VA], v[COL_RKEY], v[COL_DMALEN]);
	if (p->mask & DROCE_M_ATMETH)
		fprintf(o, " atomic va 0x%" PRIx64 " rkey 0x%08" PRIx64 " swap_add %" PRIu64
			" cmp %" PRIu64, v[COL_VA], v[COL_RKEY], v[COL_SWAP_ADD], v[COL_CMP]);
	if (p->mask & DROCE_M_AETH)
		print_aeth(o, v[COL_SYNDROME], v[COL_MSN]);
	if (p->mask & DROCE_M_ATMACK)
		fprintf(o, " orig %" PRIu64, v[COL_ORIG]);
	if (p->mask & DROCE_M_IMMDT)
		fprintf(o, " imm 0x%08" PRIx64, v[COL_IMM]);
	if (p->mask & DROCE_M_IETH)
		fprintf(o, " ieth rkey 0x%08" PRIx64, v[COL_IETH]);
}

/* Opcode, BTH, extension headers, payload and ICRC of a frame whose headers all parsed. */
static void print_roce(FILE *o, const struct dump_frame *f)
{
	const struct droce_pkt *p = &f->pkt;
	const struct droce_bth *bth = droce_pkt_bth(p);
	struct row r;

	collect(f, &r);
	fprintf(o, " %s qp 0x%06" PRIx32 " psn %" PRIu32, droce_opcode_name(p->opcode),
		droce_bth_qpn(bth), droce_bth_psn(bth));
	if (droce_bth_se(bth))
		fputs(" se", o);
	if (droce_bth_mig(bth))
		fputs(" mig", o);
	if (droce_bth_ackreq(bth))
		fputs(" ackreq", o);
	if (droce_bth_fecn(bth))
		fputs(" fecn", o);
	if (droce_bth_becn(bth))
		fputs(" becn", o);
	if (p->pad != 0)
		fprintf(o, " pad %u", p->pad);
	if (droce_bth_pkey(bth) != DROCE_DEFAULT_PKEY)
		fprintf(o, " pkey 0x%04x", droce_bth_pkey(bth));
	print_ext(o, p, &r);
	if (p->mask & DROCE_M_PAYLOAD)
		fprintf(o, " payload %" PRIu32, p->payload_len);
	if (f->snapped)
		fputs(" icrc not captured", o);
	else if (f->err == DROCE_PARSE_OK)
		fputs(" icrc ok", o);
	else
		fprintf(o, " icrc BAD (carried 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")", p->icrc,
			droce_icrc(p->hdr + p->l3_off, p->frame_len - p->l3_off - DROCE_ICRC_LEN));
	dump_print_mad(o, f);
}

void dump_print_frame(FILE *o, const struct dump_frame *f)
{
	fprintf(o, "%5" PRIu32 " %11.6f", f->number, f->time_ns / 1e9);
	print_addrs(o, f);
	if (!f->roce)
		fprintf(o, " not RoCE v2: %s", droce_parse_err_name(f->err));
	else if (dump_frame_parsed(f))
		print_roce(o, f);
	else
		fprintf(o, " RoCE v2 rejected: %s (%s)", droce_parse_err_name(f->err),
			droce_parse_err_str(f->err));
	if (f->caplen < f->len)
		fprintf(o, " [captured %" PRIu32 " of %" PRIu32 " bytes]", f->caplen, f->len);
	fputc('\n', o);
}
