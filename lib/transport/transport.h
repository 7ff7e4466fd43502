/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * The transport layer (internal): per-QP RoCE v2 protocol — requester, responder, completer —
 * for RC, UC and UD. It knows mbufs, not ports: the engine hands it parsed frames and
 * gives it a way to transmit, resolve addresses and read the clock (struct transport_env).
 *
 * Threading: every function here is called by the QP's owner only (one engine lcore, or the
 * application thread driving the engine inline), between two verbs_owner_poll() calls, so it
 * never runs concurrently with itself for one QP nor with a control operation on that QP.
 *
 * Layering: env <- wire <- verbs (objects, queues, verbs_engine.h) <- transport <- engine.
 */
#ifndef DROCE_TRANSPORT_H
#define DROCE_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "droce_counters.h"
#include "transport_dcqcn.h"
#include "droce_wire.h"
#include "verbs_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the engine gives the transport: one per engine lcore. */
struct transport_env {
	struct rte_mempool *pool;       /**< mbufs for frames the transport builds */
	/**
	 * @p pool's cache of the lcore running the engine now, or NULL (no cache, or a thread
	 * that is not an EAL lcore). Set with @p now each time the engine is entered, so that the
	 * per-packet mbuf gets and puts need not look up the lcore (a TLS access from this
	 * shared library, __tls_get_addr()) three times per frame.
	 */
	struct rte_mempool_cache *cache;
	uint64_t now;                   /**< TSC at the start of this engine iteration */
	uint64_t hz;                    /**< TSC ticks per second */
	/**
	 * Queue @p m for transmission on @p dev's port. The engine owns @p m from then on (it
	 * frees it and counts tx_dropped if the port refuses it). Never blocks.
	 */
	void (*tx)(struct transport_env *env, struct droce_device *dev, struct rte_mbuf *m);
	/**
	 * Fill @p flow's src_mac/dst_mac for a path from @p dev to @p dgid (sgid given).
	 * @return 0; -EAGAIN while the MAC is being resolved (ARP/ND under way: try later);
	 *   -EHOSTUNREACH after the last resolution got no answer (for neigh_retry_ms, then a
	 *   new one starts: -EAGAIN).
	 */
	int (*resolve)(struct transport_env *env, struct droce_device *dev,
		       struct droce_flow *flow);
	/** May frames of @p dev carry registered memory as external buffers (zero-copy TX,
	 *  verbs_mr_extbuf_attach())? NULL: no. */
	bool (*extbuf_ok)(struct transport_env *env, struct droce_device *dev);
	void *engine;                   /**< the engine's own */
	/** The congestion control parameters of @p dev's QPs (transport_dcqcn.h), or NULL (off: no ECN
	 *  marking, no CNPs, no rate limit). NULL callback: off for every device. */
	const struct dcqcn_params *(*dcqcn)(struct transport_env *env, struct droce_device *dev);
};

/** Per-QP protocol state (opaque to the engine). */
struct transport_qp;

/** Create the transport state of @p qp (any type droce supports), counting into @p dev_cnt,
 *  its device's counter block, which must stay where it is while the QP lives. NULL +
 *  rte_errno on error. */
struct transport_qp *transport_qp_create(struct droce_qp *qp, struct droce_counters *dev_cnt);
/** Free it; the QP is detached and about to be destroyed. */
void transport_qp_destroy(struct transport_qp *t);
/**
 * Give @p t a flight recorder of @p frames entries (rounded up to a power of two, at most
 * 4096; 0: none) writing to directory @p dir (kept, not copied): its last frames, both ways,
 * with its state as each passed, written as a pcap and a JSON when it enters ERR
 * (transport_rec.c). @return 0, or -ENOMEM.
 */
int transport_rec_enable(struct transport_qp *t, unsigned int frames, const char *dir);
/**
 * Write @p t's recording now (@p why goes into the JSON): @p dir/droce-rec-DEV-qpN-PID-US.pcap
 * and .json, their common path without the suffix into @p path (@p len bytes; may be NULL).
 * Owner only. @return 0, -ENODATA (no recorder), or the file error.
 */
int transport_rec_write(struct transport_qp *t, const char *why, char *path, size_t len);
/**
 * The QP's attributes changed (droce_modify_qp() applied by the owner): re-read state, PSNs,
 * path, timeouts; cancel timers in RESET/ERR. The transport keeps its own copy of the state
 * (read here, and after its own verbs calls that may move it), so every modify applied must
 * be reported here.
 */
void transport_qp_modified(struct transport_env *env, struct transport_qp *t, int attr_mask);

/** In an X() of the counter lists (droce_counters.h): the arguments after @p disposition for
 *  a DROP counter, nothing for a COUNT one. */
#define TRANSPORT_IF_DROP(disposition, ...) TRANSPORT_IF_DROP_##disposition(__VA_ARGS__)
#define TRANSPORT_IF_DROP_DROP(...) __VA_ARGS__
#define TRANSPORT_IF_DROP_COUNT(...)

/**
 * What transport_rx() did with a frame. Accepted: the protocol took it - executed it, or
 * answered it as IBA has an RC responder answer a duplicate (ACKed again, replayed), a PSN gap
 * (NAK sequence error) or a SEND without a receive WQE (RNR NAK), or it failed on the QP's own
 * memory (a bad receive SGE: the WQE completes in error). Otherwise the frame was dropped and
 * the verdict is TRANSPORT_DROP_<counter>: one per DROP counter of DROCE_TRANSPORT_COUNTERS,
 * the one the transport counted for the frame, or, when it counts two, the one that names the
 * reason rather than its consequence: a UC packet whose bad R_Key drops its message is
 * access_err (not rx_uc_msg_dropped), an RC request out of its message's opcode sequence
 * rx_opcode_seq (not the inv_req_err of its NAK).
 */
enum transport_verdict {
	TRANSPORT_RX_ACCEPTED,
#define TRANSPORT_DROP_VERDICT(name, disposition, desc) \
	TRANSPORT_IF_DROP(disposition, TRANSPORT_DROP_##name,)
	DROCE_TRANSPORT_COUNTERS(TRANSPORT_DROP_VERDICT)
#undef TRANSPORT_DROP_VERDICT
	TRANSPORT_VERDICT_NUM
};

/**
 * If an overrun of one of the QP's CQs marked it fatal (verbs_qp_fatal_mark()), it enters ERR
 * now (verbs_qp_apply_fatal(): its WQEs are flushed) and the transport drops its references.
 * transport_rx(), transport_tx() and transport_timeout() do this first; the engine calls it
 * when it stops watching a QP that has no TX work, so that an idle QP, whose doorbell the
 * overrun rang, enters ERR too. The queries (transport_tx_pending(), transport_deadline())
 * change nothing.
 */
void transport_apply_fatal(struct transport_qp *t);

/**
 * One parsed RoCE v2 frame for this QP (the engine found it by BTH DestQP, checked the
 * destination GID and the ICRC). The transport consumes @p m (frees or keeps it).
 * @return the verdict: accepted, or the reason it was dropped (counted).
 */
enum transport_verdict transport_rx(struct transport_env *env, struct transport_qp *t,
				    struct rte_mbuf *m, const struct droce_pkt *pkt);

/**
 * Requester and responder output: build and transmit up to @p budget packets (new requests
 * from the SQ, retransmissions, READ responses, ACKs due). @return packets transmitted.
 */
unsigned int transport_tx(struct transport_env *env, struct transport_qp *t, unsigned int budget);

/**
 * Transmit now what the responder owes the peer for the requests it has executed: the ACK of
 * everything accepted (an ACK still being coalesced included), NAKs, atomic ACKs and READ
 * responses. The engine calls it before it forgets a QP (destroy) and the transport itself on
 * a move to RESET or ERR: a requester whose last request was executed and completed here
 * must get its ACK even if the application tears the QP down right after polling that
 * completion, or it retransmits into a QP that no longer answers until it gives up.
 * @return packets transmitted.
 */
unsigned int transport_flush(struct transport_env *env, struct transport_qp *t);

/** True when transport_tx() has something to do now (SQ work, ACK or response due). */
bool transport_tx_pending(const struct transport_qp *t);

/**
 * The QP's own counters: its share of every transport counter of its device (kept together,
 * see TCNT), plus rx_packets/rx_bytes/rx_roce for the frames delivered to it and
 * tx_packets/tx_bytes for the frames it handed to env->tx(). Owner only.
 */
struct droce_counters *transport_qp_counters(struct transport_qp *t);

/** Description of counter @p i (droce_counter_name()'s order), or NULL past the end. */
const char *transport_counter_desc(unsigned int i);

/** A QP state's name as the verbs man pages write it ("RESET" ... "ERR"), "UNKNOWN" for a
 * value that is no enum ibv_qp_state. */
const char *transport_qp_state_name(unsigned int state);

/** A QP's protocol state as observability shows it (telemetry, lib/engine/engine_telemetry.c). */
struct transport_qp_info {
	uint32_t dqpn;			/**< destination QP (RC/UC; 0 before RTR) */
	uint32_t sq_psn;		/**< requester: PSN of the next packet */
	uint32_t comp_psn;		/**< requester: oldest PSN not acknowledged */
	uint32_t epsn;			/**< responder: expected PSN */
	uint32_t wqe_outstanding;	/**< send WQEs handed to the requester, not completed */
	uint32_t rd_atomic_outstanding;	/**< of those, READ/ATOMIC started and not completed */
	uint32_t resp_out_queued;	/**< ACKs, NAKs, READ responses queued by the responder */
	uint8_t retry_left;		/**< transport retries left */
	uint8_t rnr_left;		/**< RNR retries left (7: infinite) */
	bool rnr_wait;			/**< stopped by an RNR NAK */
	/* congestion control (DCQCN reaction point) */
	bool cc_on;			/**< the device's DCQCN is on for this QP */
	bool cc_limited;		/**< a CNP cut the rate; not back at line rate */
	uint32_t cc_rate_kbps;		/**< current rate (line rate when unlimited) */
	uint32_t cc_target_kbps;	/**< target rate */
	uint32_t cc_alpha;		/**< alpha in 1/1024 */
	uint32_t cc_cuts;		/**< rate cuts since the QP was created or reset */
	uint32_t cc_incs;		/**< rate increases */
};

/** Fill @p out from @p t. Owner only (like every call here). */
void transport_qp_info(const struct transport_qp *t, struct transport_qp_info *out);

/** TSC of the QP's next timer (retransmit, RNR wait, ACK coalescing), or UINT64_MAX. */
uint64_t transport_deadline(const struct transport_qp *t);
/** The neighbour table changed: a QP whose TX waits for its path's resolution tries again.
 *  @return whether it was waiting (the caller then has it visited). */
bool transport_path_wake(struct transport_qp *t);
/** Called by the engine when env->now >= transport_deadline(t). */
void transport_timeout(struct transport_env *env, struct transport_qp *t);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_TRANSPORT_H */
