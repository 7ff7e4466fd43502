/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The flight recorder ([engine] recorder, doc/observability.md): a QP's last frames, both
 * directions, each with the first TREC_SNAP bytes and the QP's transport state as the frame
 * passed, and the events that change that state without a frame (a retry begun, retries
 * exhausted, the RNR wait over, the entry into ERR), in a ring the QP's owner writes; written
 * out as a pcap (the frames) and a JSON (all) when the QP enters ERR (once), or when asked.
 * Owner only, like the rest of the transport.
 */
#ifndef DROCE_TRANSPORT_REC_H
#define DROCE_TRANSPORT_REC_H

#include <stdint.h>

#define TREC_SNAP 128		/**< bytes of each frame kept: headers and the first payload */
#define TREC_MAX 4096		/**< frames a QP keeps at most */

enum trec_dir { TREC_RX, TREC_TX, TREC_EVENT };

/** What a TREC_EVENT entry records (its name in the JSON: transport_rec.c). */
enum trec_event {
	TREC_EV_RETRY_TIMEOUT,		/**< the local ACK timeout began a retry */
	TREC_EV_RETRY_NAK,		/**< a sequence NAK began a retry */
	TREC_EV_RETRY_IMPLIED_NAK,	/**< a response past a gap began a retry */
	TREC_EV_RETRY_EXCEEDED,		/**< a retry was due and none was left */
	TREC_EV_RNR_NAK,		/**< an RNR NAK: the requester waits */
	TREC_EV_RNR_RETRY_EXCEEDED,	/**< an RNR NAK and no RNR retry left */
	TREC_EV_RNR_WAIT_OVER,		/**< the RNR timer ran out: the request goes again */
	TREC_EV_ERR,			/**< the QP entered ERR */
};

/** One frame as it passed, and the QP's state then. */
struct trec_entry {
	uint64_t tsc;
	uint32_t len;			/**< the frame's length; an event: its enum trec_event */
	uint16_t caplen;		/**< bytes kept: at most TREC_SNAP */
	uint8_t dir;			/**< enum trec_dir (an event: caplen 0) */
	uint8_t state;			/**< enum ibv_qp_state */
	uint32_t req_psn;		/**< requester: next PSN */
	uint32_t comp_psn;		/**< requester: oldest PSN not acknowledged */
	uint32_t epsn;			/**< responder: expected PSN */
	uint32_t cwnd;			/**< requester: PSNs that may be outstanding */
	uint32_t rate_kbps;		/**< DCQCN's current rate (0: off) */
	uint8_t retry_left, rnr_left;
	uint8_t bytes[TREC_SNAP];
};

struct trec {
	uint32_t mask;			/**< entries - 1 (a power of two) */
	uint64_t n;			/**< entries recorded; the oldest n - mask - 1 are gone */
	bool written;			/**< written at ERR already */
	const char *dir;		/**< where recordings go */
	char dev[64];
	struct trec_entry e[];
};

#endif
