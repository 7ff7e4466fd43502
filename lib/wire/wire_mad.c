/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * CM MADs: decode and encode (droce_wire_mad.h). Offsets below are those of IBA 12.6's tables,
 * counted from the start of the MAD's class data (byte 24 of the MAD). A sub-word field is
 * named by the word it sits in, its width, and how far its lowest bit is from the word's
 * lowest bit.
 */
#include <string.h>

#include "droce_wire_mad.h"

/* ---- Big-endian fields ---- */

static uint32_t get_be(const uint8_t *p, unsigned int bytes)
{
	uint32_t v = 0;

	while (bytes-- != 0)
		v = v << 8 | *p++;
	return v;
}

static void put_be(uint8_t *p, unsigned int bytes, uint32_t v)
{
	while (bytes-- != 0) {
		p[bytes] = (uint8_t)v;
		v >>= 8;
	}
}

/* A field of @p bits bits, @p shift bits above the lowest bit of the @p bytes-byte word. */
static uint32_t fget(const uint8_t *d, unsigned int off, unsigned int bytes, unsigned int shift,
		     unsigned int bits)
{
	uint32_t mask = bits >= 32 ? UINT32_MAX : (UINT32_C(1) << bits) - 1;

	return get_be(d + off, bytes) >> shift & mask;
}

static void fput(uint8_t *d, unsigned int off, unsigned int bytes, unsigned int shift,
		 unsigned int bits, uint32_t v)
{
	uint32_t mask = bits >= 32 ? UINT32_MAX : (UINT32_C(1) << bits) - 1;
	uint32_t w = get_be(d + off, bytes);

	w = (w & ~(mask << shift)) | (v & mask) << shift;
	put_be(d + off, bytes, w);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get_be(p, 4) << 32 | get_be(p + 4, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	put_be(p, 4, (uint32_t)(v >> 32));
	put_be(p + 4, 4, (uint32_t)v);
}

/* Whole bytes, halves and words. */
#define G8(d, off) fget(d, off, 1, 0, 8)
#define G16(d, off) fget(d, off, 2, 0, 16)
#define G32(d, off) fget(d, off, 4, 0, 32)
#define P8(d, off, v) fput(d, off, 1, 0, 8, v)
#define P16(d, off, v) fput(d, off, 2, 0, 16, v)
#define P32(d, off, v) fput(d, off, 4, 0, 32, v)
/* The high 24 bits of a word (QPNs, PSNs, EECNs). */
#define G24H(d, off) fget(d, off, 4, 8, 24)
#define P24H(d, off, v) fput(d, off, 4, 8, 24, v)

/* ---- Header ---- */

static void hdr_get(const uint8_t *m, struct droce_mad_hdr *h)
{
	h->base_version = m[0];
	h->mgmt_class = m[1];
	h->class_version = m[2];
	h->method = m[3];
	h->status = (uint16_t)G16(m, 4);
	h->class_specific = (uint16_t)G16(m, 6);
	h->tid = get64(m + 8);
	h->attr_id = (uint16_t)G16(m, 16);
	h->attr_mod = G32(m, 20);
}

static void hdr_put(uint8_t *m, const struct droce_mad_hdr *h)
{
	m[0] = h->base_version;
	m[1] = h->mgmt_class;
	m[2] = h->class_version;
	m[3] = h->method;
	P16(m, 4, h->status);
	P16(m, 6, h->class_specific);
	put64(m + 8, h->tid);
	P16(m, 16, h->attr_id);
	P32(m, 20, h->attr_mod);
}

/* ---- REQ (IBA 12.6.5, Table 106) ---- */

/* A path at @p off: 44 bytes (primary at 52, alternate at 96). */
static void path_get(const uint8_t *d, unsigned int off, struct droce_cm_path *p)
{
	p->local_lid = (uint16_t)G16(d, off);
	p->remote_lid = (uint16_t)G16(d, off + 2);
	memcpy(p->local_gid, d + off + 4, 16);
	memcpy(p->remote_gid, d + off + 20, 16);
	p->flow_label = fget(d, off + 36, 4, 12, 20);
	p->packet_rate = (uint8_t)fget(d, off + 39, 1, 0, 6);
	p->traffic_class = (uint8_t)G8(d, off + 40);
	p->hop_limit = (uint8_t)G8(d, off + 41);
	p->sl = (uint8_t)fget(d, off + 42, 1, 4, 4);
	p->subnet_local = (uint8_t)fget(d, off + 42, 1, 3, 1);
	p->local_ack_timeout = (uint8_t)fget(d, off + 43, 1, 3, 5);
}

static void path_put(uint8_t *d, unsigned int off, const struct droce_cm_path *p)
{
	P16(d, off, p->local_lid);
	P16(d, off + 2, p->remote_lid);
	memcpy(d + off + 4, p->local_gid, 16);
	memcpy(d + off + 20, p->remote_gid, 16);
	fput(d, off + 36, 4, 12, 20, p->flow_label);
	fput(d, off + 39, 1, 0, 6, p->packet_rate);
	P8(d, off + 40, p->traffic_class);
	P8(d, off + 41, p->hop_limit);
	fput(d, off + 42, 1, 4, 4, p->sl);
	fput(d, off + 42, 1, 3, 1, p->subnet_local);
	fput(d, off + 43, 1, 3, 5, p->local_ack_timeout);
}

static void req_get(const uint8_t *d, struct droce_cm_req *r)
{
	r->local_comm_id = G32(d, 0);
	r->service_id = get64(d + 8);
	r->local_ca_guid = get64(d + 16);
	r->local_qkey = G32(d, 28);
	r->local_qpn = G24H(d, 32);
	r->responder_resources = (uint8_t)G8(d, 35);
	r->local_eecn = G24H(d, 36);
	r->initiator_depth = (uint8_t)G8(d, 39);
	r->remote_eecn = G24H(d, 40);
	r->remote_cm_response_timeout = (uint8_t)fget(d, 43, 1, 3, 5);
	r->transport_type = (uint8_t)fget(d, 43, 1, 1, 2);
	r->flow_control = (uint8_t)fget(d, 43, 1, 0, 1);
	r->starting_psn = G24H(d, 44);
	r->local_cm_response_timeout = (uint8_t)fget(d, 47, 1, 3, 5);
	r->retry_count = (uint8_t)fget(d, 47, 1, 0, 3);
	r->pkey = (uint16_t)G16(d, 48);
	r->path_mtu = (uint8_t)fget(d, 50, 1, 4, 4);
	r->rdc_exists = (uint8_t)fget(d, 50, 1, 3, 1);
	r->rnr_retry_count = (uint8_t)fget(d, 50, 1, 0, 3);
	r->max_cm_retries = (uint8_t)fget(d, 51, 1, 4, 4);
	r->srq = (uint8_t)fget(d, 51, 1, 3, 1);
	r->ext_transport_type = (uint8_t)fget(d, 51, 1, 0, 3);
	path_get(d, 52, &r->primary);
	path_get(d, 96, &r->alternate);
	r->sap_supported = (uint8_t)fget(d, 139, 1, 2, 1);
	memcpy(r->private_data, d + 140, DROCE_CM_REQ_PDATA);
}

static void req_put(uint8_t *d, const struct droce_cm_req *r)
{
	P32(d, 0, r->local_comm_id);
	put64(d + 8, r->service_id);
	put64(d + 16, r->local_ca_guid);
	P32(d, 28, r->local_qkey);
	P24H(d, 32, r->local_qpn);
	P8(d, 35, r->responder_resources);
	P24H(d, 36, r->local_eecn);
	P8(d, 39, r->initiator_depth);
	P24H(d, 40, r->remote_eecn);
	fput(d, 43, 1, 3, 5, r->remote_cm_response_timeout);
	fput(d, 43, 1, 1, 2, r->transport_type);
	fput(d, 43, 1, 0, 1, r->flow_control);
	P24H(d, 44, r->starting_psn);
	fput(d, 47, 1, 3, 5, r->local_cm_response_timeout);
	fput(d, 47, 1, 0, 3, r->retry_count);
	P16(d, 48, r->pkey);
	fput(d, 50, 1, 4, 4, r->path_mtu);
	fput(d, 50, 1, 3, 1, r->rdc_exists);
	fput(d, 50, 1, 0, 3, r->rnr_retry_count);
	fput(d, 51, 1, 4, 4, r->max_cm_retries);
	fput(d, 51, 1, 3, 1, r->srq);
	fput(d, 51, 1, 0, 3, r->ext_transport_type);
	path_put(d, 52, &r->primary);
	path_put(d, 96, &r->alternate);
	fput(d, 139, 1, 2, 1, r->sap_supported);
	memcpy(d + 140, r->private_data, DROCE_CM_REQ_PDATA);
}

/* ---- MRA, REJ, REP, RTU/DREP, DREQ (Tables 107-113) ---- */

static void mra_get(const uint8_t *d, struct droce_cm_mra *r)
{
	r->local_comm_id = G32(d, 0);
	r->remote_comm_id = G32(d, 4);
	r->message_mraed = (uint8_t)fget(d, 8, 1, 6, 2);
	r->service_timeout = (uint8_t)fget(d, 9, 1, 3, 5);
	memcpy(r->private_data, d + 10, DROCE_CM_MRA_PDATA);
}

static void mra_put(uint8_t *d, const struct droce_cm_mra *r)
{
	P32(d, 0, r->local_comm_id);
	P32(d, 4, r->remote_comm_id);
	fput(d, 8, 1, 6, 2, r->message_mraed);
	fput(d, 9, 1, 3, 5, r->service_timeout);
	memcpy(d + 10, r->private_data, DROCE_CM_MRA_PDATA);
}

static void rej_get(const uint8_t *d, struct droce_cm_rej *r)
{
	r->local_comm_id = G32(d, 0);
	r->remote_comm_id = G32(d, 4);
	r->message_rejected = (uint8_t)fget(d, 8, 1, 6, 2);
	r->ari_length = (uint8_t)fget(d, 9, 1, 1, 7);
	r->reason = (uint16_t)G16(d, 10);
	memcpy(r->ari, d + 12, DROCE_CM_ARI_LEN);
	memcpy(r->private_data, d + 84, DROCE_CM_REJ_PDATA);
}

static void rej_put(uint8_t *d, const struct droce_cm_rej *r)
{
	P32(d, 0, r->local_comm_id);
	P32(d, 4, r->remote_comm_id);
	fput(d, 8, 1, 6, 2, r->message_rejected);
	fput(d, 9, 1, 1, 7, r->ari_length);
	P16(d, 10, r->reason);
	memcpy(d + 12, r->ari, DROCE_CM_ARI_LEN);
	memcpy(d + 84, r->private_data, DROCE_CM_REJ_PDATA);
}

static void rep_get(const uint8_t *d, struct droce_cm_rep *r)
{
	r->local_comm_id = G32(d, 0);
	r->remote_comm_id = G32(d, 4);
	r->local_qkey = G32(d, 8);
	r->local_qpn = G24H(d, 12);
	r->local_eecn = G24H(d, 16);
	r->starting_psn = G24H(d, 20);
	r->responder_resources = (uint8_t)G8(d, 24);
	r->initiator_depth = (uint8_t)G8(d, 25);
	r->target_ack_delay = (uint8_t)fget(d, 26, 1, 3, 5);
	r->failover_accepted = (uint8_t)fget(d, 26, 1, 1, 2);
	r->flow_control = (uint8_t)fget(d, 26, 1, 0, 1);
	r->rnr_retry_count = (uint8_t)fget(d, 27, 1, 5, 3);
	r->srq = (uint8_t)fget(d, 27, 1, 4, 1);
	r->local_ca_guid = get64(d + 28);
	memcpy(r->private_data, d + 36, DROCE_CM_REP_PDATA);
}

static void rep_put(uint8_t *d, const struct droce_cm_rep *r)
{
	P32(d, 0, r->local_comm_id);
	P32(d, 4, r->remote_comm_id);
	P32(d, 8, r->local_qkey);
	P24H(d, 12, r->local_qpn);
	P24H(d, 16, r->local_eecn);
	P24H(d, 20, r->starting_psn);
	P8(d, 24, r->responder_resources);
	P8(d, 25, r->initiator_depth);
	fput(d, 26, 1, 3, 5, r->target_ack_delay);
	fput(d, 26, 1, 1, 2, r->failover_accepted);
	fput(d, 26, 1, 0, 1, r->flow_control);
	fput(d, 27, 1, 5, 3, r->rnr_retry_count);
	fput(d, 27, 1, 4, 1, r->srq);
	put64(d + 28, r->local_ca_guid);
	memcpy(d + 36, r->private_data, DROCE_CM_REP_PDATA);
}

static void rtu_get(const uint8_t *d, struct droce_cm_rtu *r)
{
	r->local_comm_id = G32(d, 0);
	r->remote_comm_id = G32(d, 4);
	memcpy(r->private_data, d + 8, DROCE_CM_RTU_PDATA);
}

static void rtu_put(uint8_t *d, const struct droce_cm_rtu *r)
{
	P32(d, 0, r->local_comm_id);
	P32(d, 4, r->remote_comm_id);
	memcpy(d + 8, r->private_data, DROCE_CM_RTU_PDATA);
}

static void dreq_get(const uint8_t *d, struct droce_cm_dreq *r)
{
	r->local_comm_id = G32(d, 0);
	r->remote_comm_id = G32(d, 4);
	r->remote_qpn = G24H(d, 8);
	memcpy(r->private_data, d + 12, DROCE_CM_DREQ_PDATA);
}

static void dreq_put(uint8_t *d, const struct droce_cm_dreq *r)
{
	P32(d, 0, r->local_comm_id);
	P32(d, 4, r->remote_comm_id);
	P24H(d, 8, r->remote_qpn);
	memcpy(d + 12, r->private_data, DROCE_CM_DREQ_PDATA);
}

/* ---- SIDR (Tables 119, 120) ---- */

static void sidr_req_get(const uint8_t *d, struct droce_cm_sidr_req *r)
{
	r->request_id = G32(d, 0);
	r->pkey = (uint16_t)G16(d, 4);
	r->service_id = get64(d + 8);
	memcpy(r->private_data, d + 16, DROCE_CM_SIDR_REQ_PDATA);
}

static void sidr_req_put(uint8_t *d, const struct droce_cm_sidr_req *r)
{
	P32(d, 0, r->request_id);
	P16(d, 4, r->pkey);
	put64(d + 8, r->service_id);
	memcpy(d + 16, r->private_data, DROCE_CM_SIDR_REQ_PDATA);
}

static void sidr_rep_get(const uint8_t *d, struct droce_cm_sidr_rep *r)
{
	r->request_id = G32(d, 0);
	r->status = (uint8_t)G8(d, 4);
	r->info_length = (uint8_t)G8(d, 5);
	r->qpn = G24H(d, 8);
	r->service_id = get64(d + 12);
	r->qkey = G32(d, 20);
	memcpy(r->info, d + 24, DROCE_CM_ARI_LEN);
	memcpy(r->private_data, d + 96, DROCE_CM_SIDR_REP_PDATA);
}

static void sidr_rep_put(uint8_t *d, const struct droce_cm_sidr_rep *r)
{
	P32(d, 0, r->request_id);
	P8(d, 4, r->status);
	P8(d, 5, r->info_length);
	P24H(d, 8, r->qpn);
	put64(d + 12, r->service_id);
	P32(d, 20, r->qkey);
	memcpy(d + 24, r->info, DROCE_CM_ARI_LEN);
	memcpy(d + 96, r->private_data, DROCE_CM_SIDR_REP_PDATA);
}

/* ---- ClassPortInfo (IBA 13.4.8.1, Table 148) ---- */

static void cpi_get(const uint8_t *d, struct droce_mad_cpi *c)
{
	c->base_version = (uint8_t)G8(d, 0);
	c->class_version = (uint8_t)G8(d, 1);
	c->capability_mask = (uint16_t)G16(d, 2);
	c->cap_mask2_resp_time = G32(d, 4);
	memcpy(c->redirect_gid, d + 8, 16);
	c->redirect_tc_sl_fl = G32(d, 24);
	c->redirect_lid = (uint16_t)G16(d, 28);
	c->redirect_pkey = (uint16_t)G16(d, 30);
	c->redirect_qp = fget(d, 32, 4, 0, 24);
	c->redirect_qkey = G32(d, 36);
	memcpy(c->trap_gid, d + 40, 16);
	c->trap_tc_sl_fl = G32(d, 56);
	c->trap_lid = (uint16_t)G16(d, 60);
	c->trap_pkey = (uint16_t)G16(d, 62);
	c->trap_hl_qp = G32(d, 64);
	c->trap_qkey = G32(d, 68);
}

static void cpi_put(uint8_t *d, const struct droce_mad_cpi *c)
{
	P8(d, 0, c->base_version);
	P8(d, 1, c->class_version);
	P16(d, 2, c->capability_mask);
	P32(d, 4, c->cap_mask2_resp_time);
	memcpy(d + 8, c->redirect_gid, 16);
	P32(d, 24, c->redirect_tc_sl_fl);
	P16(d, 28, c->redirect_lid);
	P16(d, 30, c->redirect_pkey);
	fput(d, 32, 4, 0, 24, c->redirect_qp);
	P32(d, 36, c->redirect_qkey);
	memcpy(d + 40, c->trap_gid, 16);
	P32(d, 56, c->trap_tc_sl_fl);
	P16(d, 60, c->trap_lid);
	P16(d, 62, c->trap_pkey);
	P32(d, 64, c->trap_hl_qp);
	P32(d, 68, c->trap_qkey);
}

/* ---- Parse and build ---- */

static bool method_ok(uint16_t attr, uint8_t method)
{
	if (attr == DROCE_CM_ATTR_CLASS_PORT_INFO)
		return method == DROCE_MAD_METHOD_GET || method == DROCE_MAD_METHOD_SET ||
		       method == DROCE_MAD_METHOD_GET_RESP;
	return method == DROCE_MAD_METHOD_SEND;
}

enum droce_mad_err droce_mad_parse(const void *buf, size_t len, struct droce_cm_mad *out)
{
	const uint8_t *m = buf;
	const uint8_t *d = m + DROCE_MAD_HDR_LEN;
	struct droce_mad_hdr *h = &out->hdr;

	if (len < DROCE_MAD_HDR_LEN)
		return DROCE_MAD_TRUNCATED;
	hdr_get(m, h);
	if (len < DROCE_MAD_LEN)
		return DROCE_MAD_TRUNCATED;
	if (h->base_version != DROCE_MAD_BASE_VERSION)
		return DROCE_MAD_BAD_BASE_VERSION;
	if (h->mgmt_class != DROCE_MAD_CLASS_CM)
		return DROCE_MAD_BAD_CLASS;
	if (h->class_version != DROCE_CM_CLASS_VERSION)
		return DROCE_MAD_BAD_CLASS_VERSION;
	if (droce_cm_attr_name(h->attr_id) == NULL || h->attr_id == DROCE_CM_ATTR_LAP ||
	    h->attr_id == DROCE_CM_ATTR_APR)
		return DROCE_MAD_BAD_ATTR;
	if (!method_ok(h->attr_id, h->method))
		return DROCE_MAD_BAD_METHOD;
	switch (h->attr_id) {
	case DROCE_CM_ATTR_CLASS_PORT_INFO:
		cpi_get(d, &out->u.cpi);
		break;
	case DROCE_CM_ATTR_REQ:
		req_get(d, &out->u.req);
		break;
	case DROCE_CM_ATTR_MRA:
		mra_get(d, &out->u.mra);
		if (out->u.mra.message_mraed > DROCE_CM_REF_OTHER)
			return DROCE_MAD_BAD_FIELD;
		break;
	case DROCE_CM_ATTR_REJ:
		rej_get(d, &out->u.rej);
		if (out->u.rej.message_rejected > DROCE_CM_REF_OTHER ||
		    out->u.rej.ari_length > DROCE_CM_ARI_LEN)
			return DROCE_MAD_BAD_FIELD;
		break;
	case DROCE_CM_ATTR_REP:
		rep_get(d, &out->u.rep);
		break;
	case DROCE_CM_ATTR_RTU:
		rtu_get(d, &out->u.rtu);
		break;
	case DROCE_CM_ATTR_DREP:
		rtu_get(d, &out->u.drep);
		break;
	case DROCE_CM_ATTR_DREQ:
		dreq_get(d, &out->u.dreq);
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		sidr_req_get(d, &out->u.sidr_req);
		break;
	default:	/* SIDR_REP: the attributes were checked above */
		sidr_rep_get(d, &out->u.sidr_rep);
		if (out->u.sidr_rep.info_length > DROCE_CM_ARI_LEN)
			return DROCE_MAD_BAD_FIELD;
		break;
	}
	return DROCE_MAD_OK;
}

void droce_mad_build(const struct droce_cm_mad *in, uint8_t out[DROCE_MAD_LEN])
{
	uint8_t *d = out + DROCE_MAD_HDR_LEN;

	memset(out, 0, DROCE_MAD_LEN);
	hdr_put(out, &in->hdr);
	switch (in->hdr.attr_id) {
	case DROCE_CM_ATTR_CLASS_PORT_INFO:
		cpi_put(d, &in->u.cpi);
		break;
	case DROCE_CM_ATTR_REQ:
		req_put(d, &in->u.req);
		break;
	case DROCE_CM_ATTR_MRA:
		mra_put(d, &in->u.mra);
		break;
	case DROCE_CM_ATTR_REJ:
		rej_put(d, &in->u.rej);
		break;
	case DROCE_CM_ATTR_REP:
		rep_put(d, &in->u.rep);
		break;
	case DROCE_CM_ATTR_RTU:
		rtu_put(d, &in->u.rtu);
		break;
	case DROCE_CM_ATTR_DREP:
		rtu_put(d, &in->u.drep);
		break;
	case DROCE_CM_ATTR_DREQ:
		dreq_put(d, &in->u.dreq);
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		sidr_req_put(d, &in->u.sidr_req);
		break;
	case DROCE_CM_ATTR_SIDR_REP:
		sidr_rep_put(d, &in->u.sidr_rep);
		break;
	default:
		break;
	}
}

/* ---- Names ---- */

const char *droce_mad_err_name(enum droce_mad_err err)
{
	static const char *const names[] = {
		[DROCE_MAD_OK] = "OK",
#define DROCE_MAD_ERR_NAME(name, desc) [DROCE_MAD_##name] = #name,
		DROCE_MAD_ERRORS(DROCE_MAD_ERR_NAME)
#undef DROCE_MAD_ERR_NAME
	};

	return (unsigned int)err < DROCE_MAD_ERR_NUM ? names[err] : "unknown";
}

const char *droce_cm_attr_name(uint16_t attr_id)
{
	switch (attr_id) {
#define DROCE_CM_ATTR_CASE(name, id, str) case id: return str;
	DROCE_CM_ATTRS(DROCE_CM_ATTR_CASE)
#undef DROCE_CM_ATTR_CASE
	default:
		return NULL;
	}
}

const char *droce_cm_rej_reason_str(uint16_t reason)
{
	switch (reason) {
#define DROCE_CM_REJ_CASE(name, num, str) case num: return str;
	DROCE_CM_REJ_REASONS(DROCE_CM_REJ_CASE)
#undef DROCE_CM_REJ_CASE
	default:
		return NULL;
	}
}

/* ---- The CMA header (Linux rdma_cm's struct cma_hdr) ---- */

bool droce_cma_hdr_parse(const uint8_t *pdata, struct droce_cma_hdr *out)
{
	out->version = pdata[0];
	out->ip_version = pdata[1] >> 4;
	out->src_port = (uint16_t)G16(pdata, 2);
	memcpy(out->src, pdata + 4, 16);
	memcpy(out->dst, pdata + 20, 16);
	if (out->version != DROCE_CMA_VERSION || (out->ip_version != 4 && out->ip_version != 6))
		return false;
	if (out->ip_version == 4) {
		/* Linux writes the IPv4 address alone in the last 4 bytes: report it mapped. */
		memset(out->src, 0, 10);
		memset(out->src + 10, 0xff, 2);
		memset(out->dst, 0, 10);
		memset(out->dst + 10, 0xff, 2);
	}
	return true;
}

void droce_cma_hdr_build(const struct droce_cma_hdr *in, uint8_t *pdata)
{
	memset(pdata, 0, DROCE_CMA_HDR_LEN);
	pdata[0] = in->version;
	pdata[1] = (uint8_t)(in->ip_version << 4);
	P16(pdata, 2, in->src_port);
	if (in->ip_version == 4) {
		memcpy(pdata + 4 + 12, in->src + 12, 4);
		memcpy(pdata + 20 + 12, in->dst + 12, 4);
	} else {
		memcpy(pdata + 4, in->src, 16);
		memcpy(pdata + 20, in->dst, 16);
	}
}
