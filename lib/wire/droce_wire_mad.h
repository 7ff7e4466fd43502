/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * Management datagrams of the Communication Manager class (IBA 13.4 MADs, IBA 12.6 CM
 * messages), as RoCE v2 carries them: the 256-byte payload of a UD SEND to QP1 (the GSI),
 * Q_Key 0x80010000. And the RDMA CM conventions on top (service IDs per port space, the CMA
 * header at the start of the private data), as Linux's rdma_cm uses them.
 *
 * Messages are decoded into, and encoded from, host-order structures (struct droce_cm_mad):
 * multi-byte numbers in host order, GIDs and private data as bytes in wire order. Sub-byte
 * fields use the bit positions of IBA 12.6 (the most significant bit first).
 *
 * droce_mad_parse() checks the format only (length, versions, class, method, attribute,
 * encodings that leave a message meaningless) and names the reason it rejects a MAD; what a
 * field's value means for a connection is the CM's business (lib/cm). droce_mad_build() writes
 * all 256 bytes, reserved fields zero.
 *
 * No EAL state: works on plain buffers, thread-safe on distinct buffers.
 */
#ifndef DROCE_WIRE_MAD_H
#define DROCE_WIRE_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Every MAD is 256 bytes: a 24-byte common header and 232 bytes of class data. */
#define DROCE_MAD_LEN 256u
#define DROCE_MAD_HDR_LEN 24u
#define DROCE_MAD_DATA_LEN 232u

#define DROCE_MAD_BASE_VERSION 1u
/** Management class of the Communication Manager (IBA 13.4.4). */
#define DROCE_MAD_CLASS_CM 0x07u
/** Class version of the CM messages (IBA 12.11; what Linux's ib_cm sends and accepts). */
#define DROCE_CM_CLASS_VERSION 2u

/** Methods (IBA 13.4.5); responses carry DROCE_MAD_METHOD_RESP. */
enum droce_mad_method {
	DROCE_MAD_METHOD_GET = 0x01,
	DROCE_MAD_METHOD_SET = 0x02,
	DROCE_MAD_METHOD_SEND = 0x03,
	DROCE_MAD_METHOD_TRAP = 0x05,
	DROCE_MAD_METHOD_REPORT = 0x06,
	DROCE_MAD_METHOD_TRAP_REPRESS = 0x07,
	DROCE_MAD_METHOD_GET_RESP = 0x81,
	DROCE_MAD_METHOD_REPORT_RESP = 0x86,
};
#define DROCE_MAD_METHOD_RESP 0x80u

/** MAD status (IBA 13.4.7, Table 147): bit 0 busy, bit 1 redirect, bits 2-4 the code. */
#define DROCE_MAD_STATUS_BUSY 0x0001u
#define DROCE_MAD_STATUS_REDIRECT 0x0002u
#define DROCE_MAD_STATUS_BAD_VERSION (1u << 2)
#define DROCE_MAD_STATUS_UNSUP_METHOD (2u << 2)
#define DROCE_MAD_STATUS_UNSUP_METHOD_ATTR (3u << 2)
#define DROCE_MAD_STATUS_INVALID_FIELD (7u << 2)

/** CM attributes (IBA 12.11, Table 125): X(NAME, id, name as printed). */
#define DROCE_CM_ATTRS(X) \
	X(CLASS_PORT_INFO, 0x0001, "ClassPortInfo") \
	X(REQ,             0x0010, "REQ") \
	X(MRA,             0x0011, "MRA") \
	X(REJ,             0x0012, "REJ") \
	X(REP,             0x0013, "REP") \
	X(RTU,             0x0014, "RTU") \
	X(DREQ,            0x0015, "DREQ") \
	X(DREP,            0x0016, "DREP") \
	X(SIDR_REQ,        0x0017, "SIDR_REQ") \
	X(SIDR_REP,        0x0018, "SIDR_REP") \
	X(LAP,             0x0019, "LAP") \
	X(APR,             0x001A, "APR")

enum droce_cm_attr {
#define DROCE_CM_ATTR_ENUM(name, id, str) DROCE_CM_ATTR_##name = id,
	DROCE_CM_ATTRS(DROCE_CM_ATTR_ENUM)
#undef DROCE_CM_ATTR_ENUM
};

/** Private data bytes each message carries (IBA 12.6, Tables 106-120). */
#define DROCE_CM_REQ_PDATA 92u
#define DROCE_CM_MRA_PDATA 222u
#define DROCE_CM_REJ_PDATA 148u
#define DROCE_CM_REP_PDATA 196u
#define DROCE_CM_RTU_PDATA 224u
#define DROCE_CM_DREQ_PDATA 220u
#define DROCE_CM_DREP_PDATA 224u
#define DROCE_CM_SIDR_REQ_PDATA 216u
#define DROCE_CM_SIDR_REP_PDATA 136u
/** Additional rejection information (REJ ARI) and SIDR_REP additional information. */
#define DROCE_CM_ARI_LEN 72u

/** The common MAD header (IBA 13.4.3), host order. */
struct droce_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;			/**< R bit included (DROCE_MAD_METHOD_RESP) */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;			/**< transaction ID, as the big-endian 64 bits read */
	uint16_t attr_id;
	uint32_t attr_mod;
};

/** A path as REQ carries it (primary or alternate, IBA 12.6.5). */
struct droce_cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label;		/**< 20 bits */
	uint8_t packet_rate;		/**< 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;			/**< 4 bits */
	uint8_t subnet_local;		/**< 1 bit */
	uint8_t local_ack_timeout;	/**< 5 bits */
};

/** Transport service type of REQ (2 bits). */
enum droce_cm_transport { DROCE_CM_TRANSPORT_RC = 0, DROCE_CM_TRANSPORT_UC = 1,
			  DROCE_CM_TRANSPORT_RD = 2 };

struct droce_cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;		/**< the big-endian 64 bits as a number */
	uint32_t local_qkey;
	uint32_t local_qpn;		/**< 24 bits */
	uint8_t responder_resources;
	uint32_t local_eecn;		/**< 24 bits */
	uint8_t initiator_depth;
	uint32_t remote_eecn;		/**< 24 bits */
	uint8_t remote_cm_response_timeout;	/**< 5 bits: 4.096 us * 2^x */
	uint8_t transport_type;		/**< 2 bits, enum droce_cm_transport */
	uint8_t flow_control;		/**< 1 bit */
	uint32_t starting_psn;		/**< 24 bits */
	uint8_t local_cm_response_timeout;	/**< 5 bits */
	uint8_t retry_count;		/**< 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;		/**< 4 bits, enum ibv_mtu values (1 = 256 ... 5 = 4096) */
	uint8_t rdc_exists;		/**< 1 bit */
	uint8_t rnr_retry_count;	/**< 3 bits */
	uint8_t max_cm_retries;		/**< 4 bits */
	uint8_t srq;			/**< 1 bit */
	uint8_t ext_transport_type;	/**< 3 bits */
	struct droce_cm_path primary;
	struct droce_cm_path alternate;
	uint8_t sap_supported;		/**< 1 bit */
	uint8_t private_data[DROCE_CM_REQ_PDATA];
};

/** MRA and REJ: which message they answer (2 bits). */
enum droce_cm_msg_ref { DROCE_CM_REF_REQ = 0, DROCE_CM_REF_REP = 1, DROCE_CM_REF_OTHER = 2 };

struct droce_cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t message_mraed;		/**< 2 bits, enum droce_cm_msg_ref (LAP for OTHER) */
	uint8_t service_timeout;	/**< 5 bits */
	uint8_t private_data[DROCE_CM_MRA_PDATA];
};

struct droce_cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t message_rejected;	/**< 2 bits, enum droce_cm_msg_ref */
	uint8_t ari_length;		/**< 7 bits, at most DROCE_CM_ARI_LEN */
	uint16_t reason;		/**< enum droce_cm_rej_reason */
	uint8_t ari[DROCE_CM_ARI_LEN];
	uint8_t private_data[DROCE_CM_REJ_PDATA];
};

struct droce_cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;		/**< 24 bits */
	uint32_t local_eecn;		/**< 24 bits */
	uint32_t starting_psn;		/**< 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;	/**< 5 bits */
	uint8_t failover_accepted;	/**< 2 bits */
	uint8_t flow_control;		/**< 1 bit */
	uint8_t rnr_retry_count;	/**< 3 bits */
	uint8_t srq;			/**< 1 bit */
	uint64_t local_ca_guid;
	uint8_t private_data[DROCE_CM_REP_PDATA];
};

/** RTU and DREP: the two communication IDs and private data. */
struct droce_cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[DROCE_CM_RTU_PDATA];
};

struct droce_cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;		/**< 24 bits: the receiver's QP (or EEC) */
	uint8_t private_data[DROCE_CM_DREQ_PDATA];
};

struct droce_cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
	uint8_t private_data[DROCE_CM_SIDR_REQ_PDATA];
};

/** SIDR_REP status (IBA 12.11.11, Table 121). */
enum droce_cm_sidr_status {
	DROCE_CM_SIDR_SUCCESS = 0,
	DROCE_CM_SIDR_UNSUPPORTED = 1,	/**< service ID not supported */
	DROCE_CM_SIDR_REJECT = 2,	/**< the service rejected the request */
	DROCE_CM_SIDR_NO_QP = 3,
	DROCE_CM_SIDR_REDIRECT = 4,
	DROCE_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

struct droce_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;			/**< enum droce_cm_sidr_status */
	uint8_t info_length;		/**< at most DROCE_CM_ARI_LEN */
	uint32_t qpn;			/**< 24 bits */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[DROCE_CM_ARI_LEN];	/**< ClassPortInfo on REDIRECT, else additional info */
	uint8_t private_data[DROCE_CM_SIDR_REP_PDATA];
};

/** ClassPortInfo (IBA 13.4.8.1), the fields droce sends and reads. */
struct droce_mad_cpi {
	uint8_t base_version;
	uint8_t class_version;
	uint16_t capability_mask;
	uint32_t cap_mask2_resp_time;	/**< CapabilityMask2:27 RespTimeValue:5 */
	uint8_t redirect_gid[16];
	uint32_t redirect_tc_sl_fl;	/**< TC:8 SL:4 FL:20 */
	uint16_t redirect_lid;
	uint16_t redirect_pkey;
	uint32_t redirect_qp;		/**< 24 bits */
	uint32_t redirect_qkey;
	uint8_t trap_gid[16];
	uint32_t trap_tc_sl_fl;
	uint16_t trap_lid;
	uint16_t trap_pkey;
	uint32_t trap_hl_qp;		/**< HopLimit:8 QP:24 */
	uint32_t trap_qkey;
};

/** A decoded CM-class MAD. */
struct droce_cm_mad {
	struct droce_mad_hdr hdr;
	union {
		struct droce_cm_req req;
		struct droce_cm_mra mra;
		struct droce_cm_rej rej;
		struct droce_cm_rep rep;
		struct droce_cm_rtu rtu;
		struct droce_cm_rtu drep;	/**< same layout as RTU */
		struct droce_cm_dreq dreq;
		struct droce_cm_sidr_req sidr_req;
		struct droce_cm_sidr_rep sidr_rep;
		struct droce_mad_cpi cpi;
	} u;
};

/** REJ reasons (IBA 12.6.7.2, Table 109; the numbers Linux's ib_cm uses). */
#define DROCE_CM_REJ_REASONS(X) \
	X(NO_QP,                 1, "no QP available") \
	X(NO_EEC,                2, "no EEC available") \
	X(NO_RESOURCES,          3, "no resources available") \
	X(TIMEOUT,               4, "timeout") \
	X(UNSUPPORTED,           5, "unsupported request") \
	X(INVALID_COMM_ID,       6, "invalid communication ID") \
	X(INVALID_COMM_INSTANCE, 7, "invalid communication instance") \
	X(INVALID_SERVICE_ID,    8, "invalid service ID") \
	X(INVALID_TRANSPORT,     9, "invalid transport service type") \
	X(STALE_CONN,           10, "stale connection") \
	X(RDC_NOT_EXIST,        11, "RDC does not exist") \
	X(INVALID_GID,          12, "invalid GID") \
	X(INVALID_LID,          13, "invalid LID") \
	X(INVALID_SL,           14, "invalid SL") \
	X(INVALID_TRAFFIC_CLASS, 15, "invalid traffic class") \
	X(INVALID_HOP_LIMIT,    16, "invalid hop limit") \
	X(INVALID_PACKET_RATE,  17, "invalid packet rate") \
	X(INVALID_ALT_GID,      18, "invalid alternate GID") \
	X(INVALID_ALT_LID,      19, "invalid alternate LID") \
	X(INVALID_ALT_SL,       20, "invalid alternate SL") \
	X(INVALID_ALT_TRAFFIC_CLASS, 21, "invalid alternate traffic class") \
	X(INVALID_ALT_HOP_LIMIT, 22, "invalid alternate hop limit") \
	X(INVALID_ALT_PACKET_RATE, 23, "invalid alternate packet rate") \
	X(PORT_CM_REDIRECT,     24, "port CM redirect") \
	X(PORT_REDIRECT,        25, "port redirect") \
	X(INVALID_MTU,          26, "invalid MTU") \
	X(INSUFFICIENT_RESP_RESOURCES, 27, "insufficient responder resources") \
	X(CONSUMER_DEFINED,     28, "consumer defined") \
	X(INVALID_RNR_RETRY,    29, "invalid RNR retry count") \
	X(DUPLICATE_LOCAL_COMM_ID, 30, "duplicate local communication ID") \
	X(INVALID_CLASS_VERSION, 31, "invalid class version") \
	X(INVALID_FLOW_LABEL,   32, "invalid flow label") \
	X(INVALID_ALT_FLOW_LABEL, 33, "invalid alternate flow label") \
	X(VENDOR_OPTION_NOT_SUPPORTED, 35, "vendor option not supported")

enum droce_cm_rej_reason {
#define DROCE_CM_REJ_ENUM(name, num, str) DROCE_CM_REJ_##name = num,
	DROCE_CM_REJ_REASONS(DROCE_CM_REJ_ENUM)
#undef DROCE_CM_REJ_ENUM
};

/** Why droce_mad_parse() rejected a MAD: X(NAME, description). */
#define DROCE_MAD_ERRORS(X) \
	X(TRUNCATED,         "shorter than 256 bytes") \
	X(BAD_BASE_VERSION,  "base version is not 1") \
	X(BAD_CLASS,         "management class is not CM") \
	X(BAD_CLASS_VERSION, "CM class version is not 2") \
	X(BAD_METHOD,        "method not valid for the attribute") \
	X(BAD_ATTR,          "attribute unknown or not supported (LAP, APR)") \
	X(BAD_FIELD,         "a field holds a reserved encoding")

enum droce_mad_err {
	DROCE_MAD_OK = 0,
#define DROCE_MAD_ERR_ENUM(name, desc) DROCE_MAD_##name,
	DROCE_MAD_ERRORS(DROCE_MAD_ERR_ENUM)
#undef DROCE_MAD_ERR_ENUM
	DROCE_MAD_ERR_NUM
};

/**
 * Decode a CM-class MAD.
 *
 * Accepted: base version 1, class CM, class version 2, and either a CM message (attributes
 * REQ ... SIDR_REP) with method SEND, or ClassPortInfo with GET, SET or GET_RESP. Rejected with
 * BAD_FIELD: MRA/REJ naming a message with the reserved code 3, a REJ or SIDR_REP whose
 * information length exceeds 72 bytes. The header is decoded into @p out->hdr whatever the
 * outcome once 24 bytes are there (so that the caller can answer a bad request with a status).
 *
 * @param buf  The MAD: the payload of the UD SEND, after the DETH (in a verbs receive buffer,
 *             after the 40-byte GRH placed in front of it).
 * @param len  Bytes at @p buf; bytes beyond 256 are ignored.
 * @param out  Filled on success (the union member of the attribute; others undefined).
 * @return DROCE_MAD_OK or the reason.
 */
enum droce_mad_err droce_mad_parse(const void *buf, size_t len, struct droce_cm_mad *out);

/**
 * Encode @p in as a 256-byte MAD into @p out: the header as given (fields of the wrong width
 * are truncated to their bits), the attribute's message, reserved bits zero. Attributes this
 * file does not know get a header and 232 zero bytes.
 */
void droce_mad_build(const struct droce_cm_mad *in, uint8_t out[DROCE_MAD_LEN]);

/** Name of a MAD rejection reason ("TRUNCATED"...), "OK", or "unknown". */
const char *droce_mad_err_name(enum droce_mad_err err);
/** Name of a CM attribute ("REQ"...), or NULL when unknown. */
const char *droce_cm_attr_name(uint16_t attr_id);
/** Description of a REJ reason ("invalid service ID"...), or NULL when unknown. */
const char *droce_cm_rej_reason_str(uint16_t reason);

/* ---- RDMA CM conventions (Linux rdma_cm) ---- */

/** RDMA CM port spaces (enum rdma_port_space values). */
#define DROCE_CMA_PS_IPOIB 0x0002u
#define DROCE_CMA_PS_IB 0x013Fu
#define DROCE_CMA_PS_TCP 0x0106u
#define DROCE_CMA_PS_UDP 0x0111u

/**
 * rdma_cm's service IDs: port space << 16 | port, the 32 bits above zero. The IP port spaces
 * (TCP, UDP, IB) start with 0x01, which makes them the IBA Annex A11 IP CM service IDs
 * (0x0000000001 | IP protocol:8 | port:16); RDMA_PS_IPOIB's do not.
 */
#define DROCE_CMA_SID_PREFIX 0x0000000001000000ull
#define DROCE_CMA_SID_PS_MASK 0xFFFFFFFFFFFF0000ull

/** The service ID for @p port (host order) in port space @p ps (a DROCE_CMA_PS_* value). */
static inline uint64_t droce_cma_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

/** The port space (DROCE_CMA_PS_*) of an rdma_cm service ID, or 0 when @p sid is not one. */
static inline uint16_t droce_cma_service_ps(uint64_t sid)
{
	uint16_t ps = (uint16_t)(sid >> 16);

	if ((sid >> 32) != 0)
		return 0;
	switch (ps) {
	case DROCE_CMA_PS_IPOIB:
	case DROCE_CMA_PS_IB:
	case DROCE_CMA_PS_TCP:
	case DROCE_CMA_PS_UDP:
		return ps;
	default:
		return 0;
	}
}

/** The port of an rdma_cm service ID. */
static inline uint16_t droce_cma_service_port(uint64_t sid)
{
	return (uint16_t)sid;
}

/** Size of the CMA header at the start of REQ and SIDR_REQ private data. */
#define DROCE_CMA_HDR_LEN 36u
#define DROCE_CMA_VERSION 0x00u

/** The CMA header (cma_hdr): who connects to what; addresses as GIDs (IPv4-mapped). */
struct droce_cma_hdr {
	uint8_t version;		/**< DROCE_CMA_VERSION */
	uint8_t ip_version;		/**< 4 or 6 (the high nibble on the wire) */
	uint16_t src_port;		/**< the active side's port, host order */
	uint8_t src[16];		/**< IPv6, or IPv4 in the last 4 bytes (::ffff:a.b.c.d) */
	uint8_t dst[16];
};

/**
 * Decode the CMA header at the start of @p pdata (DROCE_CMA_HDR_LEN bytes).
 * @return true, or false when the version is not 0 or the IP version is neither 4 nor 6.
 */
bool droce_cma_hdr_parse(const uint8_t *pdata, struct droce_cma_hdr *out);
/** Encode @p in at @p pdata (DROCE_CMA_HDR_LEN bytes): IPv4 addresses go to the last 4 bytes
 *  of each 16-byte field, the 12 before them zero, as Linux writes them. */
void droce_cma_hdr_build(const struct droce_cma_hdr *in, uint8_t *pdata);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_MAD_H */
