/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-dump: the Communication Manager MADs that UD SENDs to QP 1 carry, decoded with droce's
 * codec (droce_wire_mad.h) and printed after the frame's ICRC verdict: the MAD header, then the
 * key fields of the message, each as "name value" with the name of the codec's struct member;
 * or the reason the codec rejected the MAD.
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>
#include <sys/socket.h>

#include "droce_config.h"
#include "dump.h"

static const char *const mad_err_desc[DROCE_MAD_ERR_NUM] = {
	[DROCE_MAD_OK] = "decoded",
#define MAD_ERR_DESC(name, desc) [DROCE_MAD_##name] = desc,
	DROCE_MAD_ERRORS(MAD_ERR_DESC)
#undef MAD_ERR_DESC
};

const char *dump_mad_err_str(enum droce_mad_err err)
{
	return (unsigned int)err < DROCE_MAD_ERR_NUM ? mad_err_desc[err] : "unknown";
}

void dump_decode_mad(struct dump_frame *f)
{
	const struct droce_pkt *p = &f->pkt;

	/* A snapped MAD's missing bytes are not zeros: not decoded. */
	f->gsi = dump_frame_parsed(f) && !f->snapped && p->opcode == DROCE_OP_UD_SEND_ONLY &&
		 droce_bth_qpn(droce_pkt_bth(p)) == DROCE_GSI_QPN;
	if (f->gsi)
		f->mad_err = droce_mad_parse(p->hdr + p->payload_off, p->payload_len, &f->mad);
}

static const char *method_name(uint8_t method)
{
	switch (method) {
	case DROCE_MAD_METHOD_GET: return "GET";
	case DROCE_MAD_METHOD_SET: return "SET";
	case DROCE_MAD_METHOD_SEND: return "SEND";
	case DROCE_MAD_METHOD_TRAP: return "TRAP";
	case DROCE_MAD_METHOD_REPORT: return "REPORT";
	case DROCE_MAD_METHOD_TRAP_REPRESS: return "TRAP_REPRESS";
	case DROCE_MAD_METHOD_GET_RESP: return "GET_RESP";
	case DROCE_MAD_METHOD_REPORT_RESP: return "REPORT_RESP";
	default: return NULL;
	}
}

static const char *ps_name(uint16_t ps)
{
	switch (ps) {
	case DROCE_CMA_PS_IPOIB: return "IPOIB";
	case DROCE_CMA_PS_IB: return "IB";
	case DROCE_CMA_PS_TCP: return "TCP";
	case DROCE_CMA_PS_UDP: return "UDP";
	default: return NULL;
	}
}

static const char *msg_ref_name(uint8_t ref)
{
	static const char *const names[] = { "REQ", "REP", "OTHER" };

	return ref < 3 ? names[ref] : "reserved";
}

static void print_gid(FILE *o, const char *name, const uint8_t *gid)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, gid, buf, sizeof(buf));
	fprintf(o, " %s %s", name, buf);
}

/* An address and port of the CMA header: a.b.c.d:port or [v6]:port. */
static void print_ip_port(FILE *o, int ip_version, const uint8_t *gid, uint16_t port)
{
	char buf[INET6_ADDRSTRLEN];

	if (ip_version == 4) {
		inet_ntop(AF_INET, gid + 12, buf, sizeof(buf));
		fprintf(o, "%s:%u", buf, port);
	} else {
		inet_ntop(AF_INET6, gid, buf, sizeof(buf));
		fprintf(o, "[%s]:%u", buf, port);
	}
}

/* The service ID, and its port space and port when it is one of rdma_cm's. */
static void print_service(FILE *o, uint64_t sid)
{
	uint16_t ps = droce_cma_service_ps(sid);

	fprintf(o, " service_id 0x%016" PRIx64, sid);
	if (ps != 0)
		fprintf(o, " ps %s port %u", ps_name(ps), droce_cma_service_port(sid));
}

/* The CMA header at the start of the private data of an rdma_cm REQ or SIDR_REQ: who
 * connects from where to the service ID's port. */
static void print_cma(FILE *o, uint64_t sid, const uint8_t *pdata)
{
	struct droce_cma_hdr h;

	if (droce_cma_service_ps(sid) == 0)
		return;
	if (!droce_cma_hdr_parse(pdata, &h)) {
		fprintf(o, " cma bad (version %u, ip version %u)", pdata[0], pdata[1] >> 4);
		return;
	}
	fputs(" cma ", o);
	print_ip_port(o, h.ip_version, h.src, h.src_port);
	fputs(" -> ", o);
	print_ip_port(o, h.ip_version, h.dst, droce_cma_service_port(sid));
}

static void print_path(FILE *o, const char *prefix, const struct droce_cm_path *p)
{
	char name[32];

	fprintf(o, " %slocal_lid 0x%04x %sremote_lid 0x%04x", prefix, p->local_lid, prefix,
		p->remote_lid);
	snprintf(name, sizeof(name), "%slocal_gid", prefix);
	print_gid(o, name, p->local_gid);
	snprintf(name, sizeof(name), "%sremote_gid", prefix);
	print_gid(o, name, p->remote_gid);
	fprintf(o, " %sflow_label 0x%05" PRIx32 " %straffic_class %u %shop_limit %u %ssl %u"
		" %slocal_ack_timeout %u", prefix, p->flow_label, prefix, p->traffic_class, prefix,
		p->hop_limit, prefix, p->sl, prefix, p->local_ack_timeout);
}

static bool path_present(const struct droce_cm_path *p)
{
	static const uint8_t zero[16];

	return p->local_lid != 0 || p->remote_lid != 0 || memcmp(p->local_gid, zero, 16) != 0 ||
	       memcmp(p->remote_gid, zero, 16) != 0;
}

static void print_req(FILE *o, const struct droce_cm_req *r)
{
	static const char *const transports[] = { "RC", "UC", "RD", "reserved" };

	fprintf(o, " local_comm_id 0x%08" PRIx32, r->local_comm_id);
	print_service(o, r->service_id);
	fprintf(o, " local_qpn 0x%06" PRIx32 " starting_psn %" PRIu32 " transport_type %s"
		" pkey 0x%04x path_mtu %u", r->local_qpn, r->starting_psn,
		transports[r->transport_type & 3], r->pkey,
		r->path_mtu >= 1 && r->path_mtu <= 5 ? 128u << r->path_mtu : 0u);
	fprintf(o, " remote_cm_response_timeout %u local_cm_response_timeout %u retry_count %u"
		" rnr_retry_count %u max_cm_retries %u responder_resources %u initiator_depth %u",
		r->remote_cm_response_timeout, r->local_cm_response_timeout, r->retry_count,
		r->rnr_retry_count, r->max_cm_retries, r->responder_resources, r->initiator_depth);
	fprintf(o, " srq %u", r->srq);
	print_path(o, "", &r->primary);
	if (path_present(&r->alternate))
		print_path(o, "alt_", &r->alternate);
	print_cma(o, r->service_id, r->private_data);
}

static void print_rep(FILE *o, const struct droce_cm_rep *r)
{
	fprintf(o, " local_comm_id 0x%08" PRIx32 " remote_comm_id 0x%08" PRIx32
		" local_qpn 0x%06" PRIx32 " starting_psn %" PRIu32 " responder_resources %u"
		" initiator_depth %u target_ack_delay %u failover_accepted %u rnr_retry_count %u",
		r->local_comm_id, r->remote_comm_id, r->local_qpn, r->starting_psn,
		r->responder_resources, r->initiator_depth, r->target_ack_delay,
		r->failover_accepted, r->rnr_retry_count);
	fprintf(o, " srq %u", r->srq);
}

static void print_rej(FILE *o, const struct droce_cm_rej *r)
{
	const char *why = droce_cm_rej_reason_str(r->reason);

	fprintf(o, " local_comm_id 0x%08" PRIx32 " remote_comm_id 0x%08" PRIx32
		" message_rejected %s reason %u (%s) ari_length %u", r->local_comm_id,
		r->remote_comm_id, msg_ref_name(r->message_rejected), r->reason,
		why != NULL ? why : "unknown", r->ari_length);
}

static void print_sidr_rep(FILE *o, const struct droce_cm_sidr_rep *r)
{
	static const char *const status[] = { "success", "service ID not supported", "rejected",
		"no QP", "redirect", "unsupported version" };

	fprintf(o, " request_id 0x%08" PRIx32 " sidr_status %u (%s) qpn 0x%06" PRIx32 " qkey 0x%08"
		PRIx32, r->request_id, r->status, r->status < 6 ? status[r->status] : "unknown",
		r->qpn, r->qkey);
	print_service(o, r->service_id);
}

static void print_message(FILE *o, const struct droce_cm_mad *m)
{
	switch (m->hdr.attr_id) {
	case DROCE_CM_ATTR_CLASS_PORT_INFO:
		fprintf(o, " base_version %u class_version %u capability_mask 0x%04x resp_time %u",
			m->u.cpi.base_version, m->u.cpi.class_version, m->u.cpi.capability_mask,
			m->u.cpi.cap_mask2_resp_time & 0x1f);
		break;
	case DROCE_CM_ATTR_REQ:
		print_req(o, &m->u.req);
		break;
	case DROCE_CM_ATTR_MRA:
		fprintf(o, " local_comm_id 0x%08" PRIx32 " remote_comm_id 0x%08" PRIx32
			" message_mraed %s service_timeout %u", m->u.mra.local_comm_id,
			m->u.mra.remote_comm_id, msg_ref_name(m->u.mra.message_mraed),
			m->u.mra.service_timeout);
		break;
	case DROCE_CM_ATTR_REJ:
		print_rej(o, &m->u.rej);
		break;
	case DROCE_CM_ATTR_REP:
		print_rep(o, &m->u.rep);
		break;
	case DROCE_CM_ATTR_DREQ:
		fprintf(o, " local_comm_id 0x%08" PRIx32 " remote_comm_id 0x%08" PRIx32
			" remote_qpn 0x%06" PRIx32, m->u.dreq.local_comm_id,
			m->u.dreq.remote_comm_id, m->u.dreq.remote_qpn);
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		fprintf(o, " request_id 0x%08" PRIx32 " pkey 0x%04x", m->u.sidr_req.request_id,
			m->u.sidr_req.pkey);
		print_service(o, m->u.sidr_req.service_id);
		print_cma(o, m->u.sidr_req.service_id, m->u.sidr_req.private_data);
		break;
	case DROCE_CM_ATTR_SIDR_REP:
		print_sidr_rep(o, &m->u.sidr_rep);
		break;
	default:        /* RTU, DREP */
		fprintf(o, " local_comm_id 0x%08" PRIx32 " remote_comm_id 0x%08" PRIx32,
			m->u.rtu.local_comm_id, m->u.rtu.remote_comm_id);
		break;
	}
}

/* The header as it is, for a MAD the codec rejected: what was there and where it went wrong. */
static void print_raw_header(FILE *o, const struct droce_mad_hdr *h)
{
	fprintf(o, ": base_version %u mgmt_class 0x%02x class_version %u method 0x%02x"
		" attr_id 0x%04x tid 0x%016" PRIx64, h->base_version, h->mgmt_class,
		h->class_version, h->method, h->attr_id, h->tid);
}

void dump_print_mad(FILE *o, const struct dump_frame *f)
{
	const struct droce_mad_hdr *h = &f->mad.hdr;
	const char *meth;

	if (!f->gsi)
		return;
	if (f->mad_err != DROCE_MAD_OK) {
		fprintf(o, " mad rejected: %s (%s), %" PRIu32 " bytes",
			droce_mad_err_name(f->mad_err), dump_mad_err_str(f->mad_err),
			f->pkt.payload_len);
		if (f->pkt.payload_len >= DROCE_MAD_HDR_LEN)
			print_raw_header(o, h);
		return;
	}
	meth = method_name(h->method);
	if (meth != NULL)
		fprintf(o, " mad %s %s", meth, droce_cm_attr_name(h->attr_id));
	else
		fprintf(o, " mad 0x%02x %s", h->method, droce_cm_attr_name(h->attr_id));
	fprintf(o, " tid 0x%016" PRIx64 " status 0x%04x", h->tid, h->status);
	if (h->class_specific != 0)
		fprintf(o, " class_specific 0x%04x", h->class_specific);
	if (h->attr_mod != 0)
		fprintf(o, " attr_mod 0x%08" PRIx32, h->attr_mod);
	print_message(o, &f->mad);
}
