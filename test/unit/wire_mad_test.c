/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Proves the CM MAD codec (droce_wire_mad.h) against the layouts of IBA 13.4 (the MAD header,
 * ClassPortInfo) and IBA 12.6 (the CM messages, Tables 106-120) as Linux's
 * include/rdma/ibta_vol1_c12.h and struct ib_class_port_info give them. The places below are
 * written from those tables in their Byte[Bit] notation (bit 0 = the byte's most significant
 * bit), not taken from the codec, and read and written here bit by bit:
 * - every field of every message (header, REQ with both paths, MRA, REJ, REP, RTU, DREQ, DREP,
 *   SIDR_REQ, SIDR_REP, ClassPortInfo) sits at its place: set alone to all ones, it changes
 *   exactly its bits of the MAD; set to a random value, its bits read back that value, most
 *   significant bit first; written alone into a MAD, parse reports it and 0 for every other
 *   field; a message of all-ones fields builds to the union of its fields (reserved bits 0),
 *   a MAD of all-ones bytes parses to all-ones fields;
 * - parse(build(x)) == x for random messages of every attribute;
 * - the MADs Linux's rdma_cm sent in test/captures/rping_cm*.pcap: build(parse(m)) == m byte
 *   for byte, with the values the capture carries and those of the frames around them
 *   (addresses, QPNs, PSNs);
 * - each rejection reason comes from a minimal bad MAD, and none comes from a good one;
 * - 10^6 random and mutated MADs in exact-size heap buffers (ASan sees an overread) never
 *   crash, and whatever parses builds and parses back to the same;
 * - the CMA header (IPv4, IPv6, bad versions) and the rdma_cm service IDs.
 *
 * usage: unit_wire_mad_test DIR  (DIR holds rping_cm.pcap and rping_cm_big.pcap)
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "droce_config.h"
#include "droce_wire.h"
#include "droce_wire_mad.h"
#include "check.h"

#define MAD DROCE_MAD_LEN
#define NUM_ATTRS 10

/* The attributes droce_mad_parse() accepts, and a method each accepts. */
static const uint16_t attrs[NUM_ATTRS] = {
	DROCE_CM_ATTR_CLASS_PORT_INFO, DROCE_CM_ATTR_REQ, DROCE_CM_ATTR_MRA, DROCE_CM_ATTR_REJ,
	DROCE_CM_ATTR_REP, DROCE_CM_ATTR_RTU, DROCE_CM_ATTR_DREQ, DROCE_CM_ATTR_DREP,
	DROCE_CM_ATTR_SIDR_REQ, DROCE_CM_ATTR_SIDR_REP,
};

static uint8_t method_for(uint16_t attr)
{
	return attr == DROCE_CM_ATTR_CLASS_PORT_INFO ? DROCE_MAD_METHOD_GET : DROCE_MAD_METHOD_SEND;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t ones(unsigned int width)
{
	return width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

/* ---- The fields, from the IBA tables ---- */

struct field {
	const char *name;
	uint16_t attr;          /* 0: a header field */
	size_t member;          /* offset in struct droce_cm_mad */
	size_t size;            /* of the member */
	unsigned int byte;      /* from the start of the MAD */
	unsigned int bit;       /* from the most significant bit of that byte */
	unsigned int width;     /* bits */
	bool bytes;             /* bytes copied as they are (GIDs, data), not a number */
	uint64_t max;           /* the largest value a MAD that parses may hold; 0: any */
};

#define MEMBER(m) offsetof(struct droce_cm_mad, m), sizeof(((struct droce_cm_mad *)NULL)->m)
#define HDR(m, byte, bit, width) \
	{ "header " #m, 0, MEMBER(hdr.m), (byte), (bit), (width), false, 0 }
/* Message fields at their table's Byte[Bit]: the message starts at byte 24 of the MAD. */
#define FLD(a, m, byte, bit, width) \
	{ #a " " #m, DROCE_CM_ATTR_##a, MEMBER(u.m), 24 + (byte), (bit), (width), false, 0 }
#define LIM(a, m, byte, bit, width, max) \
	{ #a " " #m, DROCE_CM_ATTR_##a, MEMBER(u.m), 24 + (byte), (bit), (width), false, (max) }
#define BYTES(a, m, byte, len) \
	{ #a " " #m, DROCE_CM_ATTR_##a, MEMBER(u.m), 24 + (byte), 0, (len) * 8, true, 0 }

static const struct field fields[] = {
	/* IBA 13.4.3: the common MAD header (bytes 18-19 reserved) */
	HDR(base_version, 0, 0, 8),
	HDR(mgmt_class, 1, 0, 8),
	HDR(class_version, 2, 0, 8),
	HDR(method, 3, 0, 8),
	HDR(status, 4, 0, 16),
	HDR(class_specific, 6, 0, 16),
	HDR(tid, 8, 0, 64),
	HDR(attr_id, 16, 0, 16),
	HDR(attr_mod, 20, 0, 32),
	/* Table 106: REQ */
	FLD(REQ, req.local_comm_id, 0, 0, 32),
	FLD(REQ, req.service_id, 8, 0, 64),
	FLD(REQ, req.local_ca_guid, 16, 0, 64),
	FLD(REQ, req.local_qkey, 28, 0, 32),
	FLD(REQ, req.local_qpn, 32, 0, 24),
	FLD(REQ, req.responder_resources, 35, 0, 8),
	FLD(REQ, req.local_eecn, 36, 0, 24),
	FLD(REQ, req.initiator_depth, 39, 0, 8),
	FLD(REQ, req.remote_eecn, 40, 0, 24),
	FLD(REQ, req.remote_cm_response_timeout, 43, 0, 5),
	FLD(REQ, req.transport_type, 43, 5, 2),
	FLD(REQ, req.flow_control, 43, 7, 1),
	FLD(REQ, req.starting_psn, 44, 0, 24),
	FLD(REQ, req.local_cm_response_timeout, 47, 0, 5),
	FLD(REQ, req.retry_count, 47, 5, 3),
	FLD(REQ, req.pkey, 48, 0, 16),
	FLD(REQ, req.path_mtu, 50, 0, 4),
	FLD(REQ, req.rdc_exists, 50, 4, 1),
	FLD(REQ, req.rnr_retry_count, 50, 5, 3),
	FLD(REQ, req.max_cm_retries, 51, 0, 4),
	FLD(REQ, req.srq, 51, 4, 1),
	FLD(REQ, req.ext_transport_type, 51, 5, 3),
	FLD(REQ, req.primary.local_lid, 52, 0, 16),
	FLD(REQ, req.primary.remote_lid, 54, 0, 16),
	BYTES(REQ, req.primary.local_gid, 56, 16),
	BYTES(REQ, req.primary.remote_gid, 72, 16),
	FLD(REQ, req.primary.flow_label, 88, 0, 20),
	FLD(REQ, req.primary.packet_rate, 91, 2, 6),
	FLD(REQ, req.primary.traffic_class, 92, 0, 8),
	FLD(REQ, req.primary.hop_limit, 93, 0, 8),
	FLD(REQ, req.primary.sl, 94, 0, 4),
	FLD(REQ, req.primary.subnet_local, 94, 4, 1),
	FLD(REQ, req.primary.local_ack_timeout, 95, 0, 5),
	FLD(REQ, req.alternate.local_lid, 96, 0, 16),
	FLD(REQ, req.alternate.remote_lid, 98, 0, 16),
	BYTES(REQ, req.alternate.local_gid, 100, 16),
	BYTES(REQ, req.alternate.remote_gid, 116, 16),
	FLD(REQ, req.alternate.flow_label, 132, 0, 20),
	FLD(REQ, req.alternate.packet_rate, 135, 2, 6),
	FLD(REQ, req.alternate.traffic_class, 136, 0, 8),
	FLD(REQ, req.alternate.hop_limit, 137, 0, 8),
	FLD(REQ, req.alternate.sl, 138, 0, 4),
	FLD(REQ, req.alternate.subnet_local, 138, 4, 1),
	FLD(REQ, req.alternate.local_ack_timeout, 139, 0, 5),
	FLD(REQ, req.sap_supported, 139, 5, 1),
	BYTES(REQ, req.private_data, 140, 92),
	/* Table 107: MRA (message 3 is reserved) */
	FLD(MRA, mra.local_comm_id, 0, 0, 32),
	FLD(MRA, mra.remote_comm_id, 4, 0, 32),
	LIM(MRA, mra.message_mraed, 8, 0, 2, 2),
	FLD(MRA, mra.service_timeout, 9, 0, 5),
	BYTES(MRA, mra.private_data, 10, 222),
	/* Table 108: REJ (message 3 is reserved; the ARI holds 72 bytes) */
	FLD(REJ, rej.local_comm_id, 0, 0, 32),
	FLD(REJ, rej.remote_comm_id, 4, 0, 32),
	LIM(REJ, rej.message_rejected, 8, 0, 2, 2),
	LIM(REJ, rej.ari_length, 9, 0, 7, 72),
	FLD(REJ, rej.reason, 10, 0, 16),
	BYTES(REJ, rej.ari, 12, 72),
	BYTES(REJ, rej.private_data, 84, 148),
	/* Table 110: REP */
	FLD(REP, rep.local_comm_id, 0, 0, 32),
	FLD(REP, rep.remote_comm_id, 4, 0, 32),
	FLD(REP, rep.local_qkey, 8, 0, 32),
	FLD(REP, rep.local_qpn, 12, 0, 24),
	FLD(REP, rep.local_eecn, 16, 0, 24),
	FLD(REP, rep.starting_psn, 20, 0, 24),
	FLD(REP, rep.responder_resources, 24, 0, 8),
	FLD(REP, rep.initiator_depth, 25, 0, 8),
	FLD(REP, rep.target_ack_delay, 26, 0, 5),
	FLD(REP, rep.failover_accepted, 26, 5, 2),
	FLD(REP, rep.flow_control, 26, 7, 1),
	FLD(REP, rep.rnr_retry_count, 27, 0, 3),
	FLD(REP, rep.srq, 27, 3, 1),
	FLD(REP, rep.local_ca_guid, 28, 0, 64),
	BYTES(REP, rep.private_data, 36, 196),
	/* Table 111: RTU */
	FLD(RTU, rtu.local_comm_id, 0, 0, 32),
	FLD(RTU, rtu.remote_comm_id, 4, 0, 32),
	BYTES(RTU, rtu.private_data, 8, 224),
	/* Table 112: DREQ */
	FLD(DREQ, dreq.local_comm_id, 0, 0, 32),
	FLD(DREQ, dreq.remote_comm_id, 4, 0, 32),
	FLD(DREQ, dreq.remote_qpn, 8, 0, 24),
	BYTES(DREQ, dreq.private_data, 12, 220),
	/* Table 113: DREP */
	FLD(DREP, drep.local_comm_id, 0, 0, 32),
	FLD(DREP, drep.remote_comm_id, 4, 0, 32),
	BYTES(DREP, drep.private_data, 8, 224),
	/* Table 119: SIDR_REQ */
	FLD(SIDR_REQ, sidr_req.request_id, 0, 0, 32),
	FLD(SIDR_REQ, sidr_req.pkey, 4, 0, 16),
	FLD(SIDR_REQ, sidr_req.service_id, 8, 0, 64),
	BYTES(SIDR_REQ, sidr_req.private_data, 16, 216),
	/* Table 120: SIDR_REP (the additional information holds 72 bytes) */
	FLD(SIDR_REP, sidr_rep.request_id, 0, 0, 32),
	FLD(SIDR_REP, sidr_rep.status, 4, 0, 8),
	LIM(SIDR_REP, sidr_rep.info_length, 5, 0, 8, 72),
	FLD(SIDR_REP, sidr_rep.qpn, 8, 0, 24),
	FLD(SIDR_REP, sidr_rep.service_id, 12, 0, 64),
	FLD(SIDR_REP, sidr_rep.qkey, 20, 0, 32),
	BYTES(SIDR_REP, sidr_rep.info, 24, 72),
	BYTES(SIDR_REP, sidr_rep.private_data, 96, 136),
	/* IBA 13.4.8.1, Table 148: ClassPortInfo (byte 32 reserved, bytes 72-231 not part of it) */
	FLD(CLASS_PORT_INFO, cpi.base_version, 0, 0, 8),
	FLD(CLASS_PORT_INFO, cpi.class_version, 1, 0, 8),
	FLD(CLASS_PORT_INFO, cpi.capability_mask, 2, 0, 16),
	FLD(CLASS_PORT_INFO, cpi.cap_mask2_resp_time, 4, 0, 32),
	BYTES(CLASS_PORT_INFO, cpi.redirect_gid, 8, 16),
	FLD(CLASS_PORT_INFO, cpi.redirect_tc_sl_fl, 24, 0, 32),
	FLD(CLASS_PORT_INFO, cpi.redirect_lid, 28, 0, 16),
	FLD(CLASS_PORT_INFO, cpi.redirect_pkey, 30, 0, 16),
	FLD(CLASS_PORT_INFO, cpi.redirect_qp, 33, 0, 24),
	FLD(CLASS_PORT_INFO, cpi.redirect_qkey, 36, 0, 32),
	BYTES(CLASS_PORT_INFO, cpi.trap_gid, 40, 16),
	FLD(CLASS_PORT_INFO, cpi.trap_tc_sl_fl, 56, 0, 32),
	FLD(CLASS_PORT_INFO, cpi.trap_lid, 60, 0, 16),
	FLD(CLASS_PORT_INFO, cpi.trap_pkey, 62, 0, 16),
	FLD(CLASS_PORT_INFO, cpi.trap_hl_qp, 64, 0, 32),
	FLD(CLASS_PORT_INFO, cpi.trap_qkey, 68, 0, 32),
};

#define NUM_FIELDS (sizeof(fields) / sizeof(fields[0]))

/* Whether field @f is part of a MAD of attribute @attr (header fields are part of every MAD). */
static bool in_mad(const struct field *f, uint16_t attr)
{
	return f->attr == 0 || f->attr == attr;
}

/* A field's value: a number, or bytes. */
struct value {
	uint64_t num;
	uint8_t b[DROCE_MAD_DATA_LEN];
};

static bool same_value(const struct field *f, const struct value *a, const struct value *b)
{
	return f->bytes ? memcmp(a->b, b->b, f->width / 8) == 0 : a->num == b->num;
}

static void random_value(const struct field *f, struct value *v, bool valid)
{
	if (f->bytes) {
		for (unsigned int i = 0; i < f->width / 8; i++)
			v->b[i] = (uint8_t)rnd();
		return;
	}
	v->num = rnd() & ones(f->width);
	if (valid && f->max != 0)
		v->num %= f->max + 1;
}

static void ones_value(const struct field *f, struct value *v, bool valid)
{
	memset(v->b, 0xff, sizeof(v->b));
	v->num = valid && f->max != 0 ? f->max : ones(f->width);
}

/* ---- The struct side ---- */

static void struct_put(struct droce_cm_mad *m, const struct field *f, const struct value *v)
{
	uint8_t *p = (uint8_t *)m + f->member;
	uint8_t u8 = (uint8_t)v->num;
	uint16_t u16 = (uint16_t)v->num;
	uint32_t u32 = (uint32_t)v->num;

	if (f->bytes)
		memcpy(p, v->b, f->size);
	else if (f->size == 1)
		memcpy(p, &u8, 1);
	else if (f->size == 2)
		memcpy(p, &u16, 2);
	else if (f->size == 4)
		memcpy(p, &u32, 4);
	else
		memcpy(p, &v->num, 8);
}

static void struct_get(const struct droce_cm_mad *m, const struct field *f, struct value *v)
{
	const uint8_t *p = (const uint8_t *)m + f->member;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;

	memset(v, 0, sizeof(*v));
	if (f->bytes) {
		memcpy(v->b, p, f->size);
	} else if (f->size == 1) {
		memcpy(&u8, p, 1);
		v->num = u8;
	} else if (f->size == 2) {
		memcpy(&u16, p, 2);
		v->num = u16;
	} else if (f->size == 4) {
		memcpy(&u32, p, 4);
		v->num = u32;
	} else {
		memcpy(&v->num, p, 8);
	}
}

/* ---- The wire side, bit by bit: bit i of a field is bit (byte * 8 + bit + i) of the MAD,
 *      counted from the most significant bit of byte 0; numbers go most significant bit first.
 */

static unsigned int wire_bit(const uint8_t *mad, unsigned int pos)
{
	return mad[pos / 8] >> (7 - pos % 8) & 1;
}

static void wire_set_bit(uint8_t *mad, unsigned int pos, unsigned int b)
{
	uint8_t m = (uint8_t)(0x80u >> (pos % 8));

	mad[pos / 8] = (uint8_t)(b ? mad[pos / 8] | m : mad[pos / 8] & ~m);
}

static void wire_put(uint8_t *mad, const struct field *f, const struct value *v)
{
	unsigned int pos = f->byte * 8 + f->bit;

	if (f->bytes) {
		memcpy(mad + f->byte, v->b, f->width / 8);
		return;
	}
	for (unsigned int i = 0; i < f->width; i++)
		wire_set_bit(mad, pos + i, (unsigned int)(v->num >> (f->width - 1 - i) & 1));
}

static void wire_get(const uint8_t *mad, const struct field *f, struct value *v)
{
	unsigned int pos = f->byte * 8 + f->bit;

	memset(v, 0, sizeof(*v));
	if (f->bytes) {
		memcpy(v->b, mad + f->byte, f->width / 8);
		return;
	}
	for (unsigned int i = 0; i < f->width; i++)
		v->num = v->num << 1 | wire_bit(mad, pos + i);
}

static void wire_mask(uint8_t *mask, const struct field *f)
{
	for (unsigned int i = 0; i < f->width; i++)
		wire_set_bit(mask, f->byte * 8 + f->bit + i, 1);
}

/* A MAD header that parses for @attr, written by hand; the message all zero. */
static void wire_header(uint8_t *mad, uint16_t attr, uint8_t method)
{
	memset(mad, 0, MAD);
	mad[0] = 1;
	mad[1] = 0x07;
	mad[2] = 2;
	mad[3] = method;
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
}

/* Every field of the MAD's header and attribute as parse reported it equals its bits. */
static void check_fields_as_wire(const uint8_t *mad, const struct droce_cm_mad *m, uint16_t attr,
				 bool header_only, const char *what)
{
	struct value w, s;

	for (size_t i = 0; i < NUM_FIELDS; i++) {
		const struct field *g = &fields[i];

		if (!in_mad(g, attr) || (header_only && g->attr != 0))
			continue;
		wire_get(mad, g, &w);
		struct_get(m, g, &s);
		EXPECT(same_value(g, &w, &s), "%s: parse gives %s = 0x%llx, its bits hold 0x%llx",
		      what, g->name, (unsigned long long)s.num, (unsigned long long)w.num);
	}
}

/* An exact-size heap copy of @len bytes of @mad, parsed. */
static enum droce_mad_err parse_exact(const uint8_t *mad, size_t len, struct droce_cm_mad *out)
{
	uint8_t *p = malloc(len != 0 ? len : 1);
	enum droce_mad_err e;

	if (len != 0)
		memcpy(p, mad, len);
	e = droce_mad_parse(p, len, out);
	free(p);
	return e;
}

/* ---- Every field at its place ---- */

static void check_table(void)
{
	for (size_t i = 0; i < NUM_FIELDS; i++) {
		const struct field *f = &fields[i];
		unsigned int end = f->byte * 8 + f->bit + f->width;

		EXPECT(f->bytes ? f->size * 8 == f->width :
		      f->size * 8 >= f->width && f->width <= 64,
		      "table: %s: %u bits in a %zu-byte member", f->name, f->width, f->size);
		EXPECT(f->attr == 0 ? end <= DROCE_MAD_HDR_LEN * 8 :
		      f->byte >= DROCE_MAD_HDR_LEN && end <= MAD * 8, "table: %s outside", f->name);
		for (size_t j = 0; j < i; j++) {
			uint8_t a[MAD] = { 0 }, b[MAD] = { 0 };

			if (fields[j].attr != f->attr)
				continue;
			wire_mask(a, f);
			wire_mask(b, &fields[j]);
			for (unsigned int k = 0; k < MAD; k++)
				EXPECT((a[k] & b[k]) == 0, "table: %s overlaps %s", f->name,
				      fields[j].name);
		}
	}
}

/* Built alone, @f all ones changes exactly its bits; a random value reads back from them. */
static void check_build_position(const struct field *f)
{
	struct droce_cm_mad m;
	uint8_t base[MAD], out[MAD], want[MAD] = { 0 };
	struct value v, got;
	unsigned int i;

	memset(&m, 0, sizeof(m));
	m.hdr.attr_id = f->attr;
	droce_mad_build(&m, base);
	wire_mask(want, f);

	ones_value(f, &v, false);
	struct_put(&m, f, &v);
	droce_mad_build(&m, out);
	for (i = 0; i < MAD; i++)
		if ((uint8_t)(base[i] ^ out[i]) != want[i])
			break;
	EXPECT(i == MAD, "%s all ones: MAD byte %u changed by 0x%02x, IBA wants 0x%02x", f->name,
	      i % MAD, (base[i % MAD] ^ out[i % MAD]) & 0xff, want[i % MAD]);

	for (int n = 0; n < 20; n++) {
		memset(&m, 0, sizeof(m));
		m.hdr.attr_id = f->attr;
		random_value(f, &v, false);
		struct_put(&m, f, &v);
		droce_mad_build(&m, out);
		wire_get(out, f, &got);
		EXPECT(same_value(f, &v, &got), "%s = 0x%llx built reads back 0x%llx", f->name,
		      (unsigned long long)v.num, (unsigned long long)got.num);
		for (i = 0; i < MAD; i++)
			if (((base[i] ^ out[i]) & ~want[i]) != 0)
				break;
		EXPECT(i == MAD, "%s = 0x%llx: byte %u changed outside the field", f->name,
		      (unsigned long long)v.num, i);
	}
}

/* Written alone into a MAD, @f is what parse reports, and every other field is 0. */
static void check_parse_position(const struct field *f)
{
	uint16_t attr = f->attr != 0 ? f->attr : DROCE_CM_ATTR_REQ;
	struct droce_cm_mad m;
	uint8_t mad[MAD];
	struct value v;
	enum droce_mad_err e;

	for (int n = 0; n < 20; n++) {
		wire_header(mad, attr, method_for(attr));
		if (n == 0)
			ones_value(f, &v, true);
		else
			random_value(f, &v, true);
		wire_put(mad, f, &v);
		memset(&m, 0xa5, sizeof(m));   /* a field parse leaves alone shows */
		e = parse_exact(mad, MAD, &m);
		if (f->attr != 0)
			EXPECT_EQ(e, DROCE_MAD_OK, "%s = 0x%llx: %s", f->name,
				 (unsigned long long)v.num, droce_mad_err_name(e));
		check_fields_as_wire(mad, &m, attr, f->attr == 0 || e != DROCE_MAD_OK, f->name);
	}
}

/* All fields of a message at once: all ones build to their union; all-ones bytes parse. */
static void check_all_ones(uint16_t attr)
{
	const char *name = droce_cm_attr_name(attr);
	struct droce_cm_mad m;
	uint8_t out[MAD], want[MAD] = { 0 }, mad[MAD];
	struct value v;
	unsigned int i;

	memset(&m, 0, sizeof(m));
	memset(&m.u, 0xff, sizeof(m.u));
	m.hdr.attr_id = attr;
	droce_mad_build(&m, out);
	want[16] = (uint8_t)(attr >> 8);
	want[17] = (uint8_t)attr;
	for (size_t k = 0; k < NUM_FIELDS; k++)
		if (fields[k].attr == attr)
			wire_mask(want, &fields[k]);
	for (i = 0; i < MAD; i++)
		if (out[i] != want[i])
			break;
	EXPECT(i == MAD, "%s of all ones: byte %u is 0x%02x, its fields make 0x%02x", name, i % MAD,
	      out[i % MAD], want[i % MAD]);

	/* reserved bits set on the wire are ignored, and built back as zero */
	wire_header(mad, attr, method_for(attr));
	memset(mad + DROCE_MAD_HDR_LEN, 0xff, DROCE_MAD_DATA_LEN);
	for (size_t k = 0; k < NUM_FIELDS; k++)
		if (fields[k].attr == attr && fields[k].max != 0) {
			ones_value(&fields[k], &v, true);
			wire_put(mad, &fields[k], &v);
		}
	memset(&m, 0xa5, sizeof(m));
	EXPECT_EQ(parse_exact(mad, MAD, &m), DROCE_MAD_OK, "%s of all-ones bytes", name);
	check_fields_as_wire(mad, &m, attr, false, name);
	droce_mad_build(&m, out);
	memset(want, 0, DROCE_MAD_HDR_LEN);
	memcpy(want, mad, DROCE_MAD_HDR_LEN);
	for (i = DROCE_MAD_HDR_LEN; i < MAD; i++)
		want[i] &= mad[i];
	EXPECT(memcmp(out, want, MAD) == 0, "%s of all-ones bytes: built back with reserved bits",
	      name);
}

static void test_positions(void)
{
	check_table();
	for (size_t i = 0; i < NUM_FIELDS; i++) {
		check_build_position(&fields[i]);
		check_parse_position(&fields[i]);
	}
	for (int a = 0; a < NUM_ATTRS; a++)
		check_all_ones(attrs[a]);
}

/* ---- parse(build(x)) == x ---- */

static uint8_t random_method(uint16_t attr)
{
	static const uint8_t cpi[] = { DROCE_MAD_METHOD_GET, DROCE_MAD_METHOD_SET,
				       DROCE_MAD_METHOD_GET_RESP };

	return attr == DROCE_CM_ATTR_CLASS_PORT_INFO ? cpi[rnd() % 3] : DROCE_MAD_METHOD_SEND;
}

/* A random message of @attr that parses, field by field from the table. */
static void random_mad(struct droce_cm_mad *x, uint16_t attr)
{
	struct value v;

	memset(x, 0, sizeof(*x));
	x->hdr.base_version = 1;
	x->hdr.mgmt_class = DROCE_MAD_CLASS_CM;
	x->hdr.class_version = DROCE_CM_CLASS_VERSION;
	x->hdr.method = random_method(attr);
	x->hdr.status = (uint16_t)rnd();
	x->hdr.class_specific = (uint16_t)rnd();
	x->hdr.tid = rnd();
	x->hdr.attr_id = attr;
	x->hdr.attr_mod = (uint32_t)rnd();
	for (size_t i = 0; i < NUM_FIELDS; i++)
		if (fields[i].attr == attr) {
			random_value(&fields[i], &v, true);
			struct_put(x, &fields[i], &v);
		}
}

static void test_roundtrip(unsigned int rounds)
{
	struct droce_cm_mad x, y;
	uint8_t mad[MAD];
	struct value a, b;

	for (unsigned int r = 0; r < rounds; r++)
		for (int k = 0; k < NUM_ATTRS; k++) {
			uint16_t attr = attrs[k];
			enum droce_mad_err e;

			random_mad(&x, attr);
			droce_mad_build(&x, mad);
			memset(&y, 0, sizeof(y));
			e = parse_exact(mad, MAD, &y);
			EXPECT_EQ(e, DROCE_MAD_OK, "random %s: %s", droce_cm_attr_name(attr),
				 droce_mad_err_name(e));
			for (size_t i = 0; i < NUM_FIELDS; i++) {
				if (!in_mad(&fields[i], attr))
					continue;
				struct_get(&x, &fields[i], &a);
				struct_get(&y, &fields[i], &b);
				EXPECT(same_value(&fields[i], &a, &b),
				      "random %s: %s 0x%llx back as 0x%llx",
				      droce_cm_attr_name(attr), fields[i].name,
				      (unsigned long long)a.num, (unsigned long long)b.num);
			}
			/* the table covers every member: nothing else differs either */
			EXPECT(memcmp(&x, &y, sizeof(x)) == 0, "random %s: parse(build(x)) != x",
			      droce_cm_attr_name(attr));
			/* built with every field at its place, neighbours untouched */
			check_fields_as_wire(mad, &x, attr, false, "random built");
		}
}

/* ---- The real MADs ---- */

struct frame {
	uint32_t number;
	uint8_t *data;
	uint32_t len;
	struct droce_pkt pkt;
	enum droce_parse_err err;
};

struct capture {
	unsigned int n;
	struct frame f[256];
};

static int read_capture(const char *path, struct capture *c)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p = pcap_open_offline(path, err);

	c->n = 0;
	if (p == NULL) {
		fprintf(stderr, "%s: %s\n", path, err);
		return -1;
	}
	while (pcap_next_ex(p, &h, &data) == 1 && c->n < 256) {
		struct frame *f = &c->f[c->n];

		f->number = ++c->n;
		f->len = h->caplen;
		f->data = malloc(h->caplen);
		memcpy(f->data, data, h->caplen);
		f->err = droce_parse(f->data, f->len, 0, &f->pkt);
	}
	pcap_close(p);
	return 0;
}

static void free_capture(struct capture *c)
{
	for (unsigned int i = 0; i < c->n; i++)
		free(c->f[i].data);
}

static bool is_mad(const struct frame *f)
{
	const struct droce_deth *d;

	if (f->err != DROCE_PARSE_OK || f->pkt.opcode != DROCE_OP_UD_SEND_ONLY ||
	    droce_bth_qpn(droce_pkt_bth(&f->pkt)) != DROCE_GSI_QPN)
		return false;
	d = droce_pkt_ext(&f->pkt, DROCE_HDR_DETH);
	EXPECT(rte_be_to_cpu_32(d->qkey) == DROCE_GSI_QKEY && droce_deth_sqpn(d) == DROCE_GSI_QPN,
	      "frame %u: GSI Q_Key and source QP", f->number);
	return true;
}

/* What each capture's connection carries (tshark decodes the same; test/captures/INDEX.md). */
struct expect {
	const char *file;
	uint64_t tid;
	uint32_t frames[5];         /* REQ, REP, RTU, DREQ, DREP */
	uint32_t client_comm_id;    /* REQ's local communication ID */
	uint32_t server_comm_id;    /* REP's */
	uint32_t client_qpn, server_qpn;
	uint32_t req_psn, rep_psn;
	uint16_t client_port;       /* the CMA header's source port */
};

static const struct expect expects[] = {
	{ "rping_cm.pcap", 0x000000025670714eull, { 1, 2, 3, 64, 65 }, 0x4e717056, 0xe3d4260b,
	  0x1c, 0x1c, 0x504c45, 0x3db4ea, 34516 },
	{ "rping_cm_big.pcap", 0x000000025670714full, { 1, 2, 3, 58, 59 }, 0x4f717056, 0xe1d4260b,
	  0x1d, 0x1d, 0x8dbd9b, 0xca379b, 52451 },
};

static const uint16_t conn_attrs[5] = { DROCE_CM_ATTR_REQ, DROCE_CM_ATTR_REP, DROCE_CM_ATTR_RTU,
					DROCE_CM_ATTR_DREQ, DROCE_CM_ATTR_DREP };
static const uint8_t gid_client[16] = { [10] = 0xff, 0xff, 10, 47, 0, 2 };
static const uint8_t gid_server[16] = { [10] = 0xff, 0xff, 10, 47, 0, 1 };

/* The first captured REQ, for the reasons test. */
static uint8_t capture_req[MAD];
static uint8_t seeds[16][MAD];
static unsigned int num_seeds;

static void check_req(const struct droce_cm_req *r, const struct expect *x, const struct frame *f)
{
	struct droce_cma_hdr cma;
	uint8_t cma_back[DROCE_CMA_HDR_LEN];

	EXPECT_EQ(r->local_comm_id, x->client_comm_id, "%s REQ local comm ID", x->file);
	EXPECT_EQ(r->service_id, UINT64_C(0x0000000001061c06), "%s REQ service ID", x->file);
	EXPECT_EQ(droce_cma_service_ps(r->service_id), DROCE_CMA_PS_TCP, "%s REQ port space",
		 x->file);
	EXPECT_EQ(droce_cma_service_port(r->service_id), 7174, "%s REQ port", x->file);
	EXPECT_EQ(r->local_ca_guid, UINT64_C(0x505400fffe470002), "%s REQ CA GUID", x->file);
	EXPECT_EQ(r->local_qkey, 0u, "%s REQ Q_Key", x->file);
	EXPECT_EQ(r->local_qpn, x->client_qpn, "%s REQ local QPN", x->file);
	EXPECT_EQ(r->starting_psn, x->req_psn, "%s REQ starting PSN", x->file);
	EXPECT(r->responder_resources == 1 && r->initiator_depth == 1, "%s REQ RDMA READ depths",
	      x->file);
	EXPECT(r->local_eecn == 0 && r->remote_eecn == 0, "%s REQ EECNs", x->file);
	EXPECT(r->remote_cm_response_timeout == 20 && r->local_cm_response_timeout == 20,
	      "%s REQ CM response timeouts %u %u", x->file, r->remote_cm_response_timeout,
	      r->local_cm_response_timeout);
	EXPECT(r->transport_type == DROCE_CM_TRANSPORT_RC && r->flow_control == 0 && r->srq == 0 &&
	      r->ext_transport_type == 0 && r->rdc_exists == 0, "%s REQ RC, no SRQ", x->file);
	EXPECT(r->retry_count == 7 && r->rnr_retry_count == 7, "%s REQ retry counts", x->file);
	EXPECT_EQ(r->max_cm_retries, 15, "%s REQ max CM retries", x->file);
	EXPECT_EQ(r->pkey, 0xffff, "%s REQ P_Key", x->file);
	EXPECT_EQ(r->path_mtu, 3, "%s REQ path MTU 1024", x->file);
	EXPECT(r->primary.local_lid == 0xffff && r->primary.remote_lid == 0xffff,
	      "%s REQ primary LIDs (RoCE: permissive)", x->file);
	EXPECT(memcmp(r->primary.local_gid, gid_client, 16) == 0 &&
	      memcmp(r->primary.remote_gid, gid_server, 16) == 0, "%s REQ primary GIDs", x->file);
	EXPECT(memcmp(r->primary.local_gid, f->pkt.sgid, 16) == 0 &&
	      memcmp(r->primary.remote_gid, f->pkt.dgid, 16) == 0,
	      "%s REQ primary GIDs are the frame's addresses", x->file);
	EXPECT(r->primary.hop_limit == 64 && r->primary.traffic_class == 0 && r->primary.sl == 0 &&
	      r->primary.local_ack_timeout == 19 && r->primary.packet_rate == 0,
	      "%s REQ primary path", x->file);
	EXPECT(r->alternate.local_lid == 0 && r->alternate.remote_lid == 0 &&
	      r->alternate.flow_label == 0 && r->alternate.hop_limit == 0,
	      "%s REQ no alternate path", x->file);

	EXPECT(droce_cma_hdr_parse(r->private_data, &cma), "%s REQ CMA header", x->file);
	EXPECT(cma.version == 0 && cma.ip_version == 4 && cma.src_port == x->client_port,
	      "%s CMA header version %u ip %u port %u", x->file, cma.version, cma.ip_version,
	      cma.src_port);
	EXPECT(memcmp(cma.src, f->pkt.sgid, 16) == 0 && memcmp(cma.dst, f->pkt.dgid, 16) == 0,
	      "%s CMA header addresses are the frame's", x->file);
	droce_cma_hdr_build(&cma, cma_back);
	EXPECT(memcmp(cma_back, r->private_data, DROCE_CMA_HDR_LEN) == 0,
	      "%s CMA header built back as Linux wrote it", x->file);
}

/* RC requests carry the QPNs and start at the PSNs that REQ and REP announced. */
static void check_rc_traffic(const struct capture *c, const struct expect *x)
{
	uint32_t first_to_client = UINT32_MAX, first_to_server = UINT32_MAX;
	unsigned int rc = 0;

	for (unsigned int i = 0; i < c->n; i++) {
		const struct frame *f = &c->f[i];
		const struct droce_bth *b;
		bool to_client;

		if (f->err != DROCE_PARSE_OK || f->pkt.opcode >= 0x20)
			continue;
		b = droce_pkt_bth(&f->pkt);
		to_client = memcmp(f->pkt.dgid, gid_client, 16) == 0;
		rc++;
		EXPECT_EQ(droce_bth_qpn(b), to_client ? x->client_qpn : x->server_qpn,
			 "%s frame %u: RC QPN", x->file, f->number);
		if (!(f->pkt.mask & DROCE_M_REQ))
			continue;
		if (to_client && first_to_client == UINT32_MAX)
			first_to_client = droce_bth_psn(b);
		if (!to_client && first_to_server == UINT32_MAX)
			first_to_server = droce_bth_psn(b);
	}
	EXPECT(rc > 20, "%s: %u RC frames", x->file, rc);
	/* rdma_cm announces the PSN its own side will receive first */
	EXPECT_EQ(first_to_client, x->req_psn, "%s: first request to the client", x->file);
	EXPECT_EQ(first_to_server, x->rep_psn, "%s: first request to the server", x->file);
}

static void check_conn(const struct droce_cm_mad *m, const struct expect *x, const struct frame *f,
		       int k)
{
	bool from_client = memcmp(f->pkt.sgid, gid_client, 16) == 0;
	uint32_t local = from_client ? x->client_comm_id : x->server_comm_id;
	uint32_t remote = from_client ? x->server_comm_id : x->client_comm_id;

	EXPECT(m->hdr.base_version == 1 && m->hdr.mgmt_class == 7 && m->hdr.class_version == 2 &&
	      m->hdr.method == DROCE_MAD_METHOD_SEND && m->hdr.status == 0 &&
	      m->hdr.class_specific == 0 && m->hdr.attr_mod == 0, "%s frame %u: header", x->file,
	      f->number);
	EXPECT_EQ(m->hdr.tid, x->tid, "%s frame %u: TID", x->file, f->number);
	switch (k) {
	case 0:
		EXPECT(from_client, "%s: REQ from the client", x->file);
		check_req(&m->u.req, x, f);
		break;
	case 1:
		EXPECT(!from_client, "%s: REP from the server", x->file);
		EXPECT(m->u.rep.local_comm_id == local && m->u.rep.remote_comm_id == remote,
		      "%s REP comm IDs", x->file);
		EXPECT_EQ(m->u.rep.local_qpn, x->server_qpn, "%s REP local QPN", x->file);
		EXPECT_EQ(m->u.rep.starting_psn, x->rep_psn, "%s REP starting PSN", x->file);
		EXPECT(m->u.rep.local_qkey == 0 && m->u.rep.local_eecn == 0, "%s REP", x->file);
		EXPECT(m->u.rep.responder_resources == 1 && m->u.rep.initiator_depth == 1,
		      "%s REP RDMA READ depths", x->file);
		EXPECT(m->u.rep.target_ack_delay == 15 && m->u.rep.failover_accepted == 0 &&
		      m->u.rep.flow_control == 0 && m->u.rep.rnr_retry_count == 7 &&
		      m->u.rep.srq == 0, "%s REP flags", x->file);
		EXPECT_EQ(m->u.rep.local_ca_guid, UINT64_C(0x505400fffe470001), "%s REP GUID",
			 x->file);
		break;
	case 2:
	case 4:
		EXPECT(m->u.rtu.local_comm_id == local && m->u.rtu.remote_comm_id == remote,
		      "%s %s comm IDs", x->file, droce_cm_attr_name(conn_attrs[k]));
		break;
	default:
		EXPECT(m->u.dreq.local_comm_id == local && m->u.dreq.remote_comm_id == remote,
		      "%s DREQ comm IDs", x->file);
		EXPECT_EQ(m->u.dreq.remote_qpn, from_client ? x->server_qpn : x->client_qpn,
			 "%s DREQ remote QPN", x->file);
		break;
	}
}

static void test_capture(const char *dir, const struct expect *x)
{
	char path[4096];
	struct capture *c = calloc(1, sizeof(*c));
	unsigned int found = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, x->file);
	EXPECT(read_capture(path, c) == 0, "%s", path);
	for (unsigned int i = 0; i < c->n; i++) {
		const struct frame *f = &c->f[i];
		const uint8_t *mad = f->data + f->pkt.payload_off;
		struct droce_cm_mad m;
		uint8_t back[MAD];
		enum droce_mad_err e;

		if (!is_mad(f))
			continue;
		EXPECT(found < 5 && f->number == x->frames[found], "%s: MAD in frame %u", x->file,
		      f->number);
		EXPECT_EQ(f->pkt.payload_len, MAD, "%s frame %u: MAD length", x->file, f->number);
		if (found >= 5 || f->pkt.payload_len != MAD)
			continue;
		memset(&m, 0, sizeof(m));
		e = parse_exact(mad, MAD, &m);
		EXPECT_EQ(e, DROCE_MAD_OK, "%s frame %u: %s", x->file, f->number,
			 droce_mad_err_name(e));
		EXPECT_EQ(m.hdr.attr_id, conn_attrs[found], "%s frame %u: attribute", x->file,
			 f->number);
		check_fields_as_wire(mad, &m, m.hdr.attr_id, false, x->file);
		droce_mad_build(&m, back);
		EXPECT(memcmp(back, mad, MAD) == 0, "%s frame %u: build(parse(m)) != m", x->file,
		      f->number);
		check_conn(&m, x, f, (int)found);
		if (found == 0 && x == &expects[0])
			memcpy(capture_req, mad, MAD);
		if (num_seeds < 16)
			memcpy(seeds[num_seeds++], mad, MAD);
		found++;
	}
	EXPECT_EQ(found, 5u, "%s: MADs found", x->file);
	check_rc_traffic(c, x);
	free_capture(c);
	free(c);
}

/* ---- Rejection reasons ---- */

static bool seen[DROCE_MAD_ERR_NUM];

static void expect_err(const uint8_t *mad, size_t len, enum droce_mad_err want, const char *what)
{
	struct droce_cm_mad m;
	enum droce_mad_err e = parse_exact(mad, len, &m);

	EXPECT_EQ(e, want, "%s: %s, want %s", what, droce_mad_err_name(e), droce_mad_err_name(want));
	if (e == want)
		seen[want] = true;
}

static void test_truncated(void)
{
	static const size_t lens[] = { 0, 1, 23, 24, 25, 100, 255 };
	struct droce_cm_mad m, before;
	uint8_t big[300];

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(&m, 0xa5, sizeof(m));
		before = m;
		EXPECT_EQ(parse_exact(capture_req, lens[i], &m), DROCE_MAD_TRUNCATED, "%zu bytes",
			 lens[i]);
		seen[DROCE_MAD_TRUNCATED] = true;
		if (lens[i] < DROCE_MAD_HDR_LEN)
			EXPECT(memcmp(&m.hdr, &before.hdr, sizeof(m.hdr)) == 0,
			      "%zu bytes: no header to decode", lens[i]);
		else
			check_fields_as_wire(capture_req, &m, DROCE_CM_ATTR_REQ, true,
					     "header of a truncated MAD");
	}
	/* bytes past the 256 are not the MAD's */
	memcpy(big, capture_req, MAD);
	memset(big + MAD, 0xff, sizeof(big) - MAD);
	EXPECT_EQ(parse_exact(big, sizeof(big), &m), DROCE_MAD_OK, "300 bytes");
	check_fields_as_wire(capture_req, &m, DROCE_CM_ATTR_REQ, false, "300 bytes");
}

static void test_header_reasons(void)
{
	static const uint8_t base_versions[] = { 0, 2, 0x81, 0xff };
	static const uint8_t classes[] = { 0x00, 0x01, 0x03, 0x04, 0x06, 0x08, 0x81, 0xff };
	static const uint8_t class_versions[] = { 0, 1, 3, 0xff };
	static const uint16_t bad_attrs[] = { 0x0000, 0x0002, 0x000f, 0x001b, 0x0110, 0x1010,
					      0xffff, DROCE_CM_ATTR_LAP, DROCE_CM_ATTR_APR };
	uint8_t mad[MAD];
	char what[64];

	for (size_t i = 0; i < sizeof(base_versions); i++) {
		memcpy(mad, capture_req, MAD);
		mad[0] = base_versions[i];
		snprintf(what, sizeof(what), "base version %u", base_versions[i]);
		expect_err(mad, MAD, DROCE_MAD_BAD_BASE_VERSION, what);
	}
	for (size_t i = 0; i < sizeof(classes); i++) {
		memcpy(mad, capture_req, MAD);
		mad[1] = classes[i];
		snprintf(what, sizeof(what), "class 0x%02x", classes[i]);
		expect_err(mad, MAD, DROCE_MAD_BAD_CLASS, what);
	}
	for (size_t i = 0; i < sizeof(class_versions); i++) {
		memcpy(mad, capture_req, MAD);
		mad[2] = class_versions[i];
		snprintf(what, sizeof(what), "class version %u", class_versions[i]);
		expect_err(mad, MAD, DROCE_MAD_BAD_CLASS_VERSION, what);
	}
	for (size_t i = 0; i < sizeof(bad_attrs) / sizeof(bad_attrs[0]); i++)
		for (int get = 0; get <= 1; get++) {
			wire_header(mad, bad_attrs[i], get ? DROCE_MAD_METHOD_GET :
				    DROCE_MAD_METHOD_SEND);
			snprintf(what, sizeof(what), "attribute 0x%04x, %s", bad_attrs[i],
				 get ? "GET" : "SEND");
			expect_err(mad, MAD, DROCE_MAD_BAD_ATTR, what);
		}
}

/* Each attribute with every method: SEND for the CM messages, GET/SET/GET_RESP for CPI. */
static void test_methods(void)
{
	uint8_t mad[MAD];
	char what[64];

	for (int k = 0; k < NUM_ATTRS; k++)
		for (unsigned int meth = 0; meth < 256; meth++) {
			uint16_t attr = attrs[k];
			bool ok = attr == DROCE_CM_ATTR_CLASS_PORT_INFO ?
				meth == 0x01 || meth == 0x02 || meth == 0x81 : meth == 0x03;

			wire_header(mad, attr, (uint8_t)meth);
			snprintf(what, sizeof(what), "%s with method 0x%02x",
				 droce_cm_attr_name(attr), meth);
			expect_err(mad, MAD, ok ? DROCE_MAD_OK : DROCE_MAD_BAD_METHOD, what);
		}
	/* the two named in the brief, on real MADs */
	memcpy(mad, capture_req, MAD);
	mad[3] = DROCE_MAD_METHOD_GET;
	expect_err(mad, MAD, DROCE_MAD_BAD_METHOD, "GET on the captured REQ");
	wire_header(mad, DROCE_CM_ATTR_CLASS_PORT_INFO, DROCE_MAD_METHOD_SEND);
	expect_err(mad, MAD, DROCE_MAD_BAD_METHOD, "SEND on ClassPortInfo");
}

/* Reserved encodings: MRA/REJ message 3, REJ ARI and SIDR_REP info longer than 72 bytes. */
static void test_field_reasons(void)
{
	static const struct {
		uint16_t attr;
		unsigned int byte;       /* of the MAD */
		uint8_t value;
		enum droce_mad_err want;
		const char *what;
	} cases[] = {
		{ DROCE_CM_ATTR_MRA, 32, 0xc0, DROCE_MAD_BAD_FIELD, "MRA of message 3" },
		{ DROCE_CM_ATTR_MRA, 32, 0x80, DROCE_MAD_OK, "MRA of message 2 (LAP)" },
		{ DROCE_CM_ATTR_MRA, 32, 0x3f, DROCE_MAD_OK, "MRA, reserved bits of byte 8" },
		{ DROCE_CM_ATTR_REJ, 32, 0xc0, DROCE_MAD_BAD_FIELD, "REJ of message 3" },
		{ DROCE_CM_ATTR_REJ, 32, 0x80, DROCE_MAD_OK, "REJ of message 2" },
		{ DROCE_CM_ATTR_REJ, 33, 73 << 1, DROCE_MAD_BAD_FIELD, "REJ ARI length 73" },
		{ DROCE_CM_ATTR_REJ, 33, 127 << 1, DROCE_MAD_BAD_FIELD, "REJ ARI length 127" },
		{ DROCE_CM_ATTR_REJ, 33, 72 << 1, DROCE_MAD_OK, "REJ ARI length 72" },
		{ DROCE_CM_ATTR_REJ, 33, 0x01, DROCE_MAD_OK, "REJ, reserved bit of byte 9" },
		{ DROCE_CM_ATTR_SIDR_REP, 29, 73, DROCE_MAD_BAD_FIELD, "SIDR_REP info length 73" },
		{ DROCE_CM_ATTR_SIDR_REP, 29, 255, DROCE_MAD_BAD_FIELD,
		  "SIDR_REP info length 255" },
		{ DROCE_CM_ATTR_SIDR_REP, 29, 72, DROCE_MAD_OK, "SIDR_REP info length 72" },
	};
	uint8_t mad[MAD];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		wire_header(mad, cases[i].attr, DROCE_MAD_METHOD_SEND);
		mad[cases[i].byte] = cases[i].value;
		expect_err(mad, MAD, cases[i].want, cases[i].what);
	}
}

/* When a MAD has several faults, the first check names it: length, base version, class,
 * class version, attribute, method, field. */
static void test_reason_order(void)
{
	uint8_t mad[MAD];

	wire_header(mad, DROCE_CM_ATTR_REJ, 0x00);
	mad[0] = 9;
	mad[1] = 9;
	mad[2] = 9;
	mad[33] = 0xff;
	expect_err(mad, 255, DROCE_MAD_TRUNCATED, "all wrong, 255 bytes");
	expect_err(mad, MAD, DROCE_MAD_BAD_BASE_VERSION, "all wrong");
	mad[0] = 1;
	expect_err(mad, MAD, DROCE_MAD_BAD_CLASS, "class, class version, method, field wrong");
	mad[1] = 7;
	expect_err(mad, MAD, DROCE_MAD_BAD_CLASS_VERSION, "class version, method, field wrong");
	mad[2] = 2;
	mad[16] = 0xff;
	expect_err(mad, MAD, DROCE_MAD_BAD_ATTR, "attribute, method, field wrong");
	mad[16] = 0;
	expect_err(mad, MAD, DROCE_MAD_BAD_METHOD, "method, field wrong");
	mad[3] = DROCE_MAD_METHOD_SEND;
	expect_err(mad, MAD, DROCE_MAD_BAD_FIELD, "field wrong");
}

static void test_names(void)
{
	static const char *const attr_names[NUM_ATTRS] = { "ClassPortInfo", "REQ", "MRA", "REJ",
		"REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP" };
	static const char *const err_names[] = { "OK", "TRUNCATED", "BAD_BASE_VERSION",
		"BAD_CLASS", "BAD_CLASS_VERSION", "BAD_METHOD", "BAD_ATTR", "BAD_FIELD" };
	const char *s;

	for (int k = 0; k < NUM_ATTRS; k++) {
		s = droce_cm_attr_name(attrs[k]);
		EXPECT(s != NULL && strcmp(s, attr_names[k]) == 0, "name of 0x%04x", attrs[k]);
	}
	s = droce_cm_attr_name(DROCE_CM_ATTR_LAP);
	EXPECT(s != NULL && strcmp(s, "LAP") == 0, "LAP named though refused");
	EXPECT(droce_cm_attr_name(0) == NULL && droce_cm_attr_name(0x1b) == NULL &&
	      droce_cm_attr_name(0xffff) == NULL, "unknown attributes have no name");

	EXPECT_EQ((int)DROCE_MAD_ERR_NUM, 8, "seven reasons");
	for (int e = 0; e < DROCE_MAD_ERR_NUM; e++)
		EXPECT(strcmp(droce_mad_err_name(e), err_names[e]) == 0, "reason %d named %s", e,
		      droce_mad_err_name(e));
	EXPECT(strcmp(droce_mad_err_name(DROCE_MAD_ERR_NUM), "unknown") == 0, "past the last");
	EXPECT(strcmp(droce_mad_err_name((enum droce_mad_err)-1), "unknown") == 0, "negative");

	/* IBA 12.6.7.2, Table 109: 1-33 and 35 */
	for (unsigned int r = 0; r < 40; r++)
		EXPECT((droce_cm_rej_reason_str((uint16_t)r) != NULL) ==
		      ((r >= 1 && r <= 33) || r == 35), "REJ reason %u named or not", r);
	EXPECT(strcmp(droce_cm_rej_reason_str(28), "consumer defined") == 0, "reason 28");
	EXPECT(strcmp(droce_cm_rej_reason_str(8), "invalid service ID") == 0, "reason 8");
	EXPECT(droce_cm_rej_reason_str(0xffff) == NULL, "reason 0xffff");
}

static void test_reasons(void)
{
	test_truncated();
	test_header_reasons();
	test_methods();
	test_field_reasons();
	test_reason_order();
	for (int e = 1; e < DROCE_MAD_ERR_NUM; e++)
		EXPECT(seen[e], "reason %s produced", droce_mad_err_name(e));
	test_names();
}

/* ---- Random and mutated MADs ---- */

static void make_input(uint8_t *buf, size_t len)
{
	uint8_t mad[MAD];
	struct droce_cm_mad x;
	unsigned int n;

	switch (rnd() % 4) {
	case 0:         /* noise */
		for (size_t i = 0; i < MAD; i++)
			mad[i] = (uint8_t)rnd();
		break;
	case 1:         /* a real MAD, a few bytes changed */
		memcpy(mad, seeds[rnd() % num_seeds], MAD);
		for (n = 1 + rnd() % 8; n != 0; n--)
			mad[rnd() % MAD] = (uint8_t)rnd();
		break;
	case 2:         /* a valid message of any attribute, a few bits flipped */
		random_mad(&x, attrs[rnd() % NUM_ATTRS]);
		droce_mad_build(&x, mad);
		for (n = rnd() % 4; n != 0; n--)
			mad[rnd() % MAD] ^= (uint8_t)(1u << rnd() % 8);
		break;
	default:        /* a header that parses, or nearly, and noise */
		for (size_t i = 0; i < MAD; i++)
			mad[i] = (uint8_t)rnd();
		wire_header(mad, (uint16_t)(rnd() % 8 == 0 ? rnd() % 0x20 :
					    attrs[rnd() % NUM_ATTRS]), (uint8_t)rnd());
		for (size_t i = DROCE_MAD_HDR_LEN; i < MAD; i++)
			mad[i] = (uint8_t)rnd();
		if (rnd() % 2)
			mad[3] = method_for((uint16_t)(mad[16] << 8 | mad[17]));
		break;
	}
	memcpy(buf, mad, len < MAD ? len : MAD);
	for (size_t i = MAD; i < len; i++)
		buf[i] = (uint8_t)rnd();
}

static void test_mutation(unsigned long rounds)
{
	unsigned long counts[DROCE_MAD_ERR_NUM] = { 0 };

	for (unsigned long r = 0; r < rounds; r++) {
		size_t len = rnd() % 8 == 0 ? (size_t)(rnd() % 300) : MAD;
		uint8_t *buf = malloc(len != 0 ? len : 1);   /* exact size: ASan sees overreads */
		struct droce_cm_mad a, b;
		uint8_t out[MAD], again[MAD];
		enum droce_mad_err e;

		make_input(buf, len);
		memset(&a, 0, sizeof(a));
		e = droce_mad_parse(buf, len, &a);
		EXPECT((unsigned int)e < DROCE_MAD_ERR_NUM, "round %lu: result %d", r, e);
		if ((unsigned int)e >= DROCE_MAD_ERR_NUM) {
			free(buf);
			continue;
		}
		counts[e]++;
		EXPECT((len < MAD) == (e == DROCE_MAD_TRUNCATED), "round %lu: %zu bytes, %s", r, len,
		      droce_mad_err_name(e));
		if (e == DROCE_MAD_OK) {
			droce_mad_build(&a, out);
			memset(&b, 0, sizeof(b));
			EXPECT_EQ(droce_mad_parse(out, MAD, &b), DROCE_MAD_OK, "round %lu: rebuilt",
				 r);
			EXPECT(memcmp(&a, &b, sizeof(a)) == 0, "round %lu: parse(build(m)) != m", r);
			droce_mad_build(&b, again);
			EXPECT(memcmp(out, again, MAD) == 0, "round %lu: build not stable", r);
			if (r % 16 == 0)
				check_fields_as_wire(buf, &a, a.hdr.attr_id, false, "mutated");
		} else if (len >= DROCE_MAD_HDR_LEN && r % 16 == 0) {
			check_fields_as_wire(buf, &a, 0, true, "header of a rejected MAD");
		}
		free(buf);
	}
	printf("%lu random and mutated MADs:", rounds);
	for (int e = 0; e < DROCE_MAD_ERR_NUM; e++)
		printf(" %s %lu", droce_mad_err_name(e), counts[e]);
	printf("\n");
	EXPECT(counts[DROCE_MAD_OK] > rounds / 10, "enough inputs parse to test the round trip");
}

/* ---- The CMA header and service IDs ---- */

static bool cma_parse_exact(const uint8_t *bytes, struct droce_cma_hdr *h)
{
	uint8_t *p = malloc(DROCE_CMA_HDR_LEN);
	bool ok;

	memcpy(p, bytes, DROCE_CMA_HDR_LEN);
	ok = droce_cma_hdr_parse(p, h);
	free(p);
	return ok;
}

static void test_cma_hdr(void)
{
	/* Linux's struct cma_hdr: version, IP version in the high nibble, the source port, then
	 * two 16-byte addresses, IPv4 in the last 4 bytes of each */
	static const uint8_t v4[DROCE_CMA_HDR_LEN] = {
		0x00, 0x40, 0x91, 0xc1,
		[16] = 10, 47, 0, 2,
		[32] = 10, 47, 0, 1,
	};
	static const uint8_t v6[DROCE_CMA_HDR_LEN] = {
		0x00, 0x60, 0x12, 0x34,
		0xfe, 0x80, [15] = 0x01,
		0x20, 0x01, 0x0d, 0xb8, [35] = 0x02,
	};
	uint8_t bytes[DROCE_CMA_HDR_LEN], out[DROCE_CMA_HDR_LEN];
	struct droce_cma_hdr h;

	EXPECT(cma_parse_exact(v4, &h), "IPv4 CMA header");
	EXPECT(h.version == 0 && h.ip_version == 4 && h.src_port == 37313, "IPv4 CMA header fields");
	EXPECT(memcmp(h.src, gid_client, 16) == 0 && memcmp(h.dst, gid_server, 16) == 0,
	      "IPv4 addresses reported IPv4-mapped");
	droce_cma_hdr_build(&h, out);
	EXPECT(memcmp(out, v4, sizeof(out)) == 0, "IPv4 CMA header built back");
	/* Linux writes only the last 4 bytes of an IPv4 address: the 12 before are not read... */
	memcpy(bytes, v4, sizeof(bytes));
	bytes[4] = 0xee;
	bytes[25] = 0x11;
	bytes[1] = 0x4f;        /* ... nor is the low nibble of the IP version byte */
	EXPECT(cma_parse_exact(bytes, &h) && h.ip_version == 4 &&
	      memcmp(h.src, gid_client, 16) == 0 && memcmp(h.dst, gid_server, 16) == 0,
	      "IPv4 CMA header, padding not zero");
	/* ... and are written as zeros whatever the struct holds there */
	memset(h.src, 0x99, 12);
	memset(h.dst, 0x77, 12);
	droce_cma_hdr_build(&h, out);
	EXPECT(memcmp(out, v4, sizeof(out)) == 0, "IPv4 CMA header built with zero padding");

	EXPECT(cma_parse_exact(v6, &h), "IPv6 CMA header");
	EXPECT(h.version == 0 && h.ip_version == 6 && h.src_port == 0x1234 &&
	      memcmp(h.src, v6 + 4, 16) == 0 && memcmp(h.dst, v6 + 20, 16) == 0,
	      "IPv6 CMA header fields");
	droce_cma_hdr_build(&h, out);
	EXPECT(memcmp(out, v6, sizeof(out)) == 0, "IPv6 CMA header built back");

	static const struct { unsigned int byte; uint8_t value; const char *what; } bad[] = {
		{ 0, 0x01, "CMA version 1" }, { 0, 0xff, "CMA version 255" },
		{ 1, 0x00, "IP version 0" }, { 1, 0x50, "IP version 5" },
		{ 1, 0xf0, "IP version 15" }, { 1, 0x04, "IP version 4 in the low nibble" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(bytes, v4, sizeof(bytes));
		bytes[bad[i].byte] = bad[i].value;
		EXPECT(!cma_parse_exact(bytes, &h), "%s accepted", bad[i].what);
	}
}

static void test_service_ids(void)
{
	static const uint16_t spaces[] = { DROCE_CMA_PS_IPOIB, DROCE_CMA_PS_IB, DROCE_CMA_PS_TCP,
					   DROCE_CMA_PS_UDP };
	static const uint16_t ports[] = { 0, 1, 7174, 18515, 0xffff };
	/* not rdma_cm's: bits above the 32 set, or a port space it does not have */
	static const uint64_t others[] = { 0, 0x1c06, 0x0000000101061c06ull,
					   0x8000000001061c06ull, 0xffffffffffffffffull,
					   0x0000000001001c06ull, 0x0000000001991c06ull,
					   0x0000000000031c06ull };

	/* rping's: RDMA_PS_TCP (0x0106), port 7174, as the capture carries it; RDMA_PS_IPOIB's
	 * service IDs have no 0x01 in byte 4: 0x0000000000020000 + port */
	EXPECT_EQ(droce_cma_service_id(DROCE_CMA_PS_TCP, 7174), UINT64_C(0x0000000001061c06), "TCP");
	EXPECT_EQ(droce_cma_service_id(DROCE_CMA_PS_IPOIB, 7174), UINT64_C(0x0000000000021c06),
		 "IPoIB");
	EXPECT(DROCE_CMA_PS_IPOIB == 0x0002 && DROCE_CMA_PS_IB == 0x013f &&
	      DROCE_CMA_PS_TCP == 0x0106 && DROCE_CMA_PS_UDP == 0x0111, "rdma_cm's port spaces");
	for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++)
		for (size_t j = 0; j < sizeof(ports) / sizeof(ports[0]); j++) {
			/* rdma_cm: service ID = port space << 16 + port */
			uint64_t want = (uint64_t)spaces[i] * 65536 + ports[j];
			uint64_t sid = droce_cma_service_id(spaces[i], ports[j]);

			EXPECT_EQ(sid, want, "service ID of 0x%04x port %u", spaces[i], ports[j]);
			EXPECT_EQ(droce_cma_service_ps(want), spaces[i], "port space of 0x%016llx",
				 (unsigned long long)want);
			EXPECT_EQ(droce_cma_service_port(want), ports[j], "port of 0x%016llx",
				 (unsigned long long)want);
		}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		EXPECT_EQ(droce_cma_service_ps(others[i]), 0, "0x%016llx is no rdma_cm service ID",
			 (unsigned long long)others[i]);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR (holding rping_cm.pcap, rping_cm_big.pcap)\n",
			argv[0]);
		return 2;
	}
	test_positions();
	test_roundtrip(2000);
	for (size_t i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		test_capture(argv[1], &expects[i]);
	if (num_seeds == 0) {
		fprintf(stderr, "no MAD in the captures of %s\n", argv[1]);
		return test_done("wire_mad_test") | 1;
	}
	test_reasons();
	test_mutation(1000000);
	test_cma_hdr();
	test_service_ids();
	return test_done("wire_mad_test");
}
