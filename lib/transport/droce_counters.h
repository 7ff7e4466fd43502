/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * droce's counters (public): what was sent, received, retransmitted, and every frame
 * dropped, by reason. Read them per device with droce_query_counters() and per QP with
 * droce_query_qp_counters() (engine API, droce_engine.h).
 */
#ifndef DROCE_COUNTERS_H
#define DROCE_COUNTERS_H

#include <stdint.h>

#include "droce_wire_err.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Per-device counters, one X-macro list: X(name, description). Named by what they count so
 * that nothing is dropped silently. The engine keeps one struct per device; the transport
 * increments its counters in the device's and the QP's struct together (so a device's are
 * the sum over its QPs) and counts each QP's own frames in rx/tx_packets/bytes and rx_roce.
 */
#define DROCE_COUNTERS(X) \
	X(rx_packets,          "frames received on the port") \
	X(rx_bytes,            "bytes received on the port") \
	X(tx_packets,          "frames transmitted") \
	X(tx_bytes,            "bytes transmitted") \
	X(tx_dropped,          "frames the port did not accept (TX ring full)") \
	X(rx_roce,             "RoCE v2 frames that parsed and verified") \
	X(rx_not_roce,         "frames that are neither RoCE v2, ARP nor ND (dropped)") \
	X(rx_arp,              "ARP frames handled") \
	X(rx_nd,               "IPv6 neighbour discovery frames handled") \
	X(rx_bad_frame,        "RoCE v2 frames rejected by the parser (see the parse counters)") \
	X(rx_not_our_gid,      "RoCE v2 frames for a destination address not in the GID table") \
	X(rx_unknown_qp,       "RoCE v2 frames for a QP number that does not exist") \
	X(rx_qp_state,         "frames for a QP whose state does not accept them") \
	X(rx_bad_pkey,         "frames with a P_Key the QP does not accept") \
	X(rx_bad_addr,         "frames to an RC/UC QP from an address other than its peer's") \
	X(rx_opcode_seq,       "RC requests whose opcode breaks the message sequence (NAK, QP to error)") \
	X(duplicate_request,   "duplicate requests (responder: re-ACKed or replayed)") \
	X(out_of_sequence,     "requests past the expected PSN (responder)") \
	X(seq_nak_sent,        "PSN sequence error NAKs sent") \
	X(rnr_nak_sent,        "RNR NAKs sent (no receive WR)") \
	X(rnr_nak_rcvd,        "RNR NAKs received") \
	X(nak_rcvd,            "NAKs received (sequence, invalid request, access, operational)") \
	X(access_err,          "remote access errors detected as responder (rkey, bounds, flags, PD)") \
	X(inv_req_err,         "invalid requests detected as responder (length, opcode, alignment)") \
	X(retransmits,         "packets retransmitted (completer retries)") \
	X(rto_expired,         "local ACK timeouts (requester: retry, or fail after retry_cnt)") \
	X(implied_nak,         "retries started by an implied NAK: a response past the expected") \
	X(window_cut,          "retries that cut the requester's window (timeout: 1, NAK: half)") \
	X(retry_exceeded,      "QPs failed after retry_cnt transport retries") \
	X(rnr_retry_exceeded,  "QPs failed after rnr_retry RNR retries") \
	X(ack_sent,            "ACKs sent (coalesced)") \
	X(ack_rcvd,            "ACKs received") \
	X(unresolved_dropped,  "frames dropped while the next hop's MAC was unresolved") \
	X(rx_bad_opcode,       "frames whose opcode the QP does not take (other transport, unknown)") \
	X(rx_resp_dropped,     "responses dropped by the completer (duplicate, stale, out of order)") \
	X(rx_bad_resp,         "responses of the wrong kind or size for the PSN (BAD_RESP_ERR, QP to error)") \
	X(rx_dup_dropped,      "duplicate READ/ATOMIC requests: no resource left, or a replay given way to a new request") \
	X(rx_rd_atomic_excess, "READ/ATOMIC requests beyond max_dest_rd_atomic: NAK invalid request") \
	X(resp_out_full,       "responses not queued: responder output queue full") \
	X(neigh_req_sent,      "ARP requests and neighbour solicitations sent") \
	X(neigh_reply_sent,    "ARP replies and neighbour advertisements sent") \
	X(neigh_resolved,      "neighbour MACs learned (replies, requests for us)") \
	X(neigh_failed,        "resolutions given up after neigh_retries requests") \
	X(neigh_bad,           "ARP/ND frames ignored: malformed, bad checksum or hop limit") \
	X(alloc_failed,        "frames the engine could not build (mbuf pool empty)") \
	X(fault_dropped,       "frames dropped by fault injection ([engine] fault_drop)") \
	X(fault_duplicated,    "frames duplicated by fault injection ([engine] fault_dup)") \
	X(fault_reordered,     "frames held back behind later ones by fault injection") \
	X(fault_delayed,       "frames delayed fault_delay_us by fault injection") \
	X(fault_corrupted,     "frames with one bit flipped by fault injection (bad ICRC)") \
	X(rx_bad_qkey,         "UD frames whose DETH Q_Key is not the QP's (dropped)") \
	X(rx_no_recv_wr,       "UC/UD messages dropped: no receive WR (RQ or SRQ empty)") \
	X(rx_ud_too_long,      "UD messages dropped: GRH + payload longer than the receive WR") \
	X(rx_uc_msg_dropped,   "UC messages dropped whole (PSN gap, broken sequence, bad length)") \
	X(rx_uc_pkt_dropped,   "UC packets dropped: rest of a message already dropped") \
	X(rx_mcast_no_member,  "multicast frames for a group no QP of the device is attached to") \
	X(rx_mcast_bad_qpn,    "frames to a multicast GID whose BTH DestQP is not 0xFFFFFF") \
	X(mcast_loopback,      "multicast frames sent and delivered to other QPs of the device") \
	X(mcast_loop_dropped,  "multicast frames not looped back: loopback queue full, no mbuf") \
	X(tx_zero_copy,        "frames sent with the payload attached to registered memory, not copied") \
	X(tx_ud_unreachable,   "UD messages completed unsent: no answer to ARP/ND for the destination") \
	X(tx_link_down,        "frames not sent: the port's link was down (PORT_ERR)") \
	X(rx_link_down,        "frames received while the port's link was down (dropped)") \
	X(rx_ce,               "RoCE v2 frames received marked ECN Congestion Experienced (CE)") \
	X(cnp_sent,            "CNPs sent (DCQCN notification point: CE seen; one per QP per cnp_interval_us)") \
	X(cnp_skipped,         "CE frames answered by no CNP (within cnp_interval_us, UD, notification point off)") \
	X(cnp_rcvd,            "CNPs received (given to the DCQCN reaction point)") \
	X(cc_rate_cut,         "rate cuts by the DCQCN reaction point (a CNP)") \
	X(cc_rate_inc,         "rate increases by the DCQCN reaction point (timer, byte counter)") \
	X(cc_rate_full,        "QPs whose rate recovered to line rate (pacer off)") \
	X(cc_paced,            "times a requester waited for its DCQCN pacer") \
	X(fault_ce_marked,     "frames marked ECN CE by fault injection ([engine] fault_ce)") \
	X(bneck_marked,        "frames marked ECN CE by the test bottleneck (queue above bottleneck_mark_kb)") \
	X(bneck_dropped,       "frames dropped by the test bottleneck (queue full: bottleneck_limit_kb)")

struct droce_counters {
#define DROCE_COUNTER_FIELD(name, desc) uint64_t name;
	DROCE_COUNTERS(DROCE_COUNTER_FIELD)
#undef DROCE_COUNTER_FIELD
	uint64_t parse_err[DROCE_PARSE_ERR_NUM];        /**< rejected frames, by parser reason */
};

/** Name of counter @p i (in DROCE_COUNTERS order), or NULL past the end. */
const char *droce_counter_name(unsigned int i);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_COUNTERS_H */
