/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * droce's counters (public), all in this one header: what was sent, received, retransmitted,
 * and every frame dropped, by reason; the struct that holds them, their names, and the calls
 * that read them per device (droce_query_counters()) and per QP (droce_query_qp_counters()).
 * The engine counts into one struct per device, the transport into the device's and the QP's.
 */
#ifndef DROCE_COUNTERS_H
#define DROCE_COUNTERS_H

#include <stdint.h>

#include "droce_wire_err.h"

#ifdef __cplusplus
extern "C" {
#endif

struct droce_context;
struct droce_qp;

/*
 * The counter lists: X(name, disposition, description), where disposition is DROP (counts
 * received frames dropped for this reason: a reason of the drop log) or COUNT.
 *
 * The engine's: frames on its ports, classification, neighbour resolution, multicast, links,
 * fault injection and the test bottleneck. rx/tx_packets, rx/tx_bytes and rx_roce are the
 * device's here; the transport also counts each QP's own (transport.h).
 */
#define DROCE_ENGINE_COUNTERS(X) \
	X(rx_packets,         COUNT, "frames received on the port") \
	X(rx_bytes,           COUNT, "bytes received on the port") \
	X(tx_packets,         COUNT, "frames transmitted") \
	X(tx_bytes,           COUNT, "bytes transmitted") \
	X(tx_dropped,         COUNT, "frames the port did not accept (TX ring full)") \
	X(rx_roce,            COUNT, "RoCE v2 frames that parsed and verified") \
	X(rx_not_roce,        DROP,  "frames that are neither RoCE v2, ARP nor ND (dropped)") \
	X(rx_arp,             COUNT, "ARP frames handled") \
	X(rx_nd,              COUNT, "IPv6 neighbour discovery frames handled") \
	X(rx_bad_frame,       COUNT, "RoCE v2 frames rejected by the parser (see the parse counters)") \
	X(rx_not_our_gid,     DROP,  "RoCE v2 frames for a destination address not in the GID table") \
	X(rx_unknown_qp,      DROP,  "RoCE v2 frames for a QP number that does not exist") \
	X(unresolved_dropped, COUNT, "frames dropped while the next hop's MAC was unresolved") \
	X(neigh_req_sent,     COUNT, "ARP requests and neighbour solicitations sent") \
	X(neigh_reply_sent,   COUNT, "ARP replies and neighbour advertisements sent") \
	X(neigh_resolved,     COUNT, "neighbour MACs learned (replies, requests for us)") \
	X(neigh_failed,       COUNT, "resolutions given up after neigh_retries requests") \
	X(neigh_bad,          DROP,  "ARP/ND frames ignored: malformed, bad checksum or hop limit") \
	X(alloc_failed,       COUNT, "frames the engine could not build (mbuf pool empty)") \
	X(fault_dropped,      COUNT, "frames dropped by fault injection ([engine] fault_drop)") \
	X(fault_duplicated,   COUNT, "frames duplicated by fault injection ([engine] fault_dup)") \
	X(fault_reordered,    COUNT, "frames held back behind later ones by fault injection") \
	X(fault_delayed,      COUNT, "frames delayed fault_delay_us by fault injection") \
	X(fault_corrupted,    COUNT, "frames with one bit flipped by fault injection (bad ICRC)") \
	X(rx_mcast_no_member, DROP,  "multicast frames for a group no QP of the device is attached to") \
	X(rx_mcast_bad_qpn,   DROP,  "frames to a multicast GID whose BTH DestQP is not 0xFFFFFF") \
	X(mcast_loopback,     COUNT, "multicast frames sent and delivered to other QPs of the device") \
	X(mcast_loop_dropped, COUNT, "multicast frames not looped back: loopback queue full, no mbuf") \
	X(tx_link_down,       COUNT, "frames not sent: the port's link was down (PORT_ERR)") \
	X(rx_link_down,       COUNT, "frames received while the port's link was down (dropped)") \
	X(fault_ce_marked,    COUNT, "frames marked ECN CE by fault injection ([engine] fault_ce)") \
	X(bneck_marked,       COUNT, "frames marked ECN CE by the test bottleneck (queue above bottleneck_mark_kb)") \
	X(bneck_dropped,      COUNT, "frames dropped by the test bottleneck (queue full: bottleneck_limit_kb)") \
	X(rx_handoff,         COUNT, "frames received on one engine lcore's queue and handed to the lcore owning their QP") \
	X(rx_handoff_dropped, DROP,  "frames not handed to their QP's lcore: its handoff ring was full (the receive path holds back before)") \
	X(loopback,           COUNT, "frames the device sent to its own address (a QP of its own), received by it") \
	X(loopback_dropped,   COUNT, "frames to the device's own address not looped back: loopback queue full, no mbuf") \
	X(rx_vlan_other,      DROP,  "frames tagged with a VLAN other than the device's ([device] vlan)") \
	X(rx_vlan_tagged,     DROP,  "frames tagged with a VLAN (id not 0) on a device without one") \
	X(rx_vlan_untagged,   DROP,  "untagged frames on a device on a VLAN (id not 0)") \
	X(tx_ring_kicked,     COUNT, "af_packet: kicks that sent frames a full socket buffer had left in the port's TX ring")

/*
 * The transport's: responder, requester and completer, the receive checks of every QP type,
 * congestion control. Each is counted in the device's block and in the QP's own (TCNT); the
 * drops among them are the reasons transport_rx() returns (transport.h).
 */
#define DROCE_TRANSPORT_COUNTERS(X) \
	X(rx_qp_state,         DROP,  "frames for a QP whose state does not accept them") \
	X(rx_bad_pkey,         DROP,  "frames with a P_Key the QP does not accept") \
	X(rx_bad_addr,         DROP,  "frames to an RC/UC QP from an address other than its peer's") \
	X(rx_opcode_seq,       DROP,  "RC requests whose opcode breaks the message sequence (NAK, QP to error)") \
	X(duplicate_request,   COUNT, "duplicate requests (responder: re-ACKed or replayed)") \
	X(out_of_sequence,     COUNT, "requests past the expected PSN (responder)") \
	X(seq_nak_sent,        COUNT, "PSN sequence error NAKs sent") \
	X(rnr_nak_sent,        COUNT, "RNR NAKs sent (no receive WR)") \
	X(rnr_nak_rcvd,        COUNT, "RNR NAKs received") \
	X(nak_rcvd,            COUNT, "NAKs received (sequence, invalid request, access, operational)") \
	X(access_err,          DROP,  "remote access errors detected as responder (rkey, bounds, flags, PD)") \
	X(inv_req_err,         DROP,  "invalid requests detected as responder (length, opcode, alignment)") \
	X(retransmits,         COUNT, "packets retransmitted (completer retries)") \
	X(rto_expired,         COUNT, "local ACK timeouts (requester: retry, or fail after retry_cnt)") \
	X(implied_nak,         COUNT, "retries started by an implied NAK: a response past the expected") \
	X(window_cut,          COUNT, "retries that cut the requester's window (timeout: 1, NAK: half)") \
	X(retry_exceeded,      COUNT, "QPs failed after retry_cnt transport retries") \
	X(rnr_retry_exceeded,  COUNT, "QPs failed after rnr_retry RNR retries") \
	X(ack_sent,            COUNT, "ACKs sent (coalesced)") \
	X(ack_rcvd,            COUNT, "ACKs received") \
	X(rx_bad_opcode,       DROP,  "frames whose opcode the QP does not take (other transport, unknown)") \
	X(rx_resp_dropped,     DROP,  "responses dropped by the completer (duplicate, stale, out of order)") \
	X(rx_bad_resp,         DROP,  "responses of the wrong kind or size for the PSN (BAD_RESP_ERR, QP to error)") \
	X(rx_dup_dropped,      DROP,  "duplicate READ/ATOMIC requests: no resource left, or a replay given way to a new request") \
	X(rx_rd_atomic_excess, DROP,  "READ/ATOMIC requests beyond max_dest_rd_atomic: NAK invalid request") \
	X(resp_out_full,       COUNT, "responses not queued: responder output queue full") \
	X(rx_bad_qkey,         DROP,  "UD frames whose DETH Q_Key is not the QP's (dropped)") \
	X(rx_no_recv_wr,       DROP,  "UC/UD messages dropped: no receive WR (RQ or SRQ empty)") \
	X(rx_ud_too_long,      DROP,  "UD messages dropped: GRH + payload longer than the receive WR") \
	X(rx_uc_msg_dropped,   DROP,  "UC messages dropped whole (PSN gap, broken sequence, bad length)") \
	X(rx_uc_pkt_dropped,   DROP,  "UC packets dropped: rest of a message already dropped") \
	X(tx_zero_copy,        COUNT, "frames sent with the payload attached to registered memory, not copied") \
	X(tx_ud_unreachable,   COUNT, "UD messages completed unsent: no answer to ARP/ND for the destination") \
	X(rx_ce,               COUNT, "RoCE v2 frames received marked ECN Congestion Experienced (CE)") \
	X(cnp_sent,            COUNT, "CNPs sent (DCQCN notification point: CE seen; one per QP per cnp_interval_us)") \
	X(cnp_skipped,         COUNT, "CE frames answered by no CNP (within cnp_interval_us, UD, notification point off)") \
	X(cnp_rcvd,            COUNT, "CNPs received (given to the DCQCN reaction point)") \
	X(cc_rate_cut,         COUNT, "rate cuts by the DCQCN reaction point (a CNP)") \
	X(cc_rate_inc,         COUNT, "rate increases by the DCQCN reaction point (timer, byte counter)") \
	X(cc_rate_full,        COUNT, "QPs whose rate recovered to line rate (pacer off)") \
	X(cc_paced,            COUNT, "times a requester waited for its DCQCN pacer")

/** Every counter, in struct droce_counters' order: the engine's, then the transport's. */
#define DROCE_COUNTERS(X) DROCE_ENGINE_COUNTERS(X) DROCE_TRANSPORT_COUNTERS(X)

/**
 * Per-device counters, one uint64_t each (DROCE_COUNTERS() in order, then parse_err[]), named
 * by what they count so that nothing is dropped silently. The engine keeps one struct per
 * device; the transport increments its counters in the device's and the QP's struct together
 * (so a device's are the sum over its QPs) and counts each QP's own frames in rx/tx_packets,
 * rx/tx_bytes and rx_roce.
 */
struct droce_counters {
#define DROCE_COUNTER_FIELD(name, disposition, desc) uint64_t name;
	DROCE_COUNTERS(DROCE_COUNTER_FIELD)
#undef DROCE_COUNTER_FIELD
	uint64_t parse_err[DROCE_PARSE_ERR_NUM];        /**< rejected frames, by parser reason */
};

/** Name of counter @p i (the struct's fields in order), or NULL past the end. */
const char *droce_counter_name(unsigned int i);

/**
 * Read the counters of @p ctx's device (summed over the engine instances that served it
 * since the process started). Safe from any thread; waits for at most one engine iteration.
 *
 * @return 0, -EINVAL (NULL argument).
 */
int droce_query_counters(struct droce_context *ctx, struct droce_counters *out);

/**
 * Set the counters of @p ctx's device, and those of every QP of the device, to zero.
 * @return 0, -EINVAL (NULL argument).
 */
int droce_counters_reset(struct droce_context *ctx);

/**
 * Read the counters of one QP: its share of every transport counter of its device (duplicates,
 * out-of-sequence, NAKs sent and received, RNR, retransmits, retry exhaustion, access and
 * invalid-request errors, opcode-sequence and QP-state drops, ACKs, ...), each counted
 * together with the device's, so that over the QPs of a device they add up to the device's;
 * and the frames of the QP: rx_packets/rx_bytes/rx_roce for the RoCE v2 frames the engine
 * delivered to it, tx_packets/tx_bytes for the frames it transmitted (built and handed to the
 * port's TX buffer; the device's count what the port took, plus ARP/ND). Counters that do not
 * concern a QP (port, parser, neighbour, fault injection) stay 0. They count from the QP's
 * creation (droce_counters_reset() of its device zeroes them), whatever its state.
 *
 * Safe from any thread; like droce_query_counters() the read is done by the engine instance
 * that owns the QP (an engine call: waits for at most one iteration), so it never races it.
 *
 * @param qp   A QP of an open context (not destroyed).
 * @param out  Filled on success.
 * @return 0, -EINVAL (@p qp or @p out NULL, or @p qp is not a QP the engine drives),
 *   -ENODEV (the QP's device has no port, so no engine instance serves it).
 */
int droce_query_qp_counters(struct droce_qp *qp, struct droce_counters *out);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_COUNTERS_H */
