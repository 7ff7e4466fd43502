/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * The interface between the verbs layer and the engine (internal; not installed).
 *
 * Data path. The engine is the single consumer of every SQ and RQ it owns and the producer of
 * CQ entries:
 *   verbs_sq_next()   -> next send WQE to execute (NULL: none, or the QP does not run now)
 *   verbs_sq_complete() / verbs_sq_complete_err() -> retire the oldest WQEs handed out
 *   verbs_rq_next() + verbs_rq_complete()         -> the same for receive WQEs
 *   verbs_srq_take() + verbs_srq_complete()       -> receive WQEs from an SRQ (copied out)
 *   verbs_qp_error(), verbs_qp_event(), verbs_device_event() -> errors and async events
 * None of these blocks on the application: they use the consumer side of the rings
 * (verbs_ring.h) and the CQ producer lock, which only engine-side callers take.
 *
 * Ownership of a QP (who may call the functions above for it, and who applies control
 * operations):
 * - Unowned (qp created, no verbs_qp_attach() yet; the state of things before the engine
 *   exists): droce_modify_qp()/droce_destroy_qp() run directly in the calling thread under the
 *   QP's control lock, flush included. Whoever calls the data-path functions above for an
 *   unowned QP (the test driver) must not do so concurrently with modify/destroy of that QP.
 * - Owned (verbs_qp_attach(qp, owner)): droce_modify_qp() and droce_destroy_qp() send a
 *   control request through the owner's mailbox (verbs_mbox_send(); the owner's idle check
 *   is one atomic load) and wait; the owner applies it between two data-path steps by
 *   calling verbs_owner_poll() from its loop. So control never races the
 *   data path, and the data path never takes a lock for control's sake.
 * Doorbell: the store-release of a queue's head by droce_post_*() publishes the WQEs; an owned
 * QP's droce_post_send() then rings its owner's doorbell (verbs_qp_db_ring()) unless the QP is
 * already armed, i.e. the owner is watching it. The owner collects the rung doorbells with
 * verbs_owner_doorbells() and stops watching a QP that has no work with verbs_qp_db_disarm()
 * followed by a re-check of the queues, so it visits only QPs with work and misses no post.
 * droce_post_recv() rings nothing: a new receive WQE gives the engine TX work only in ERR
 * (the flush), and the engine keeps watching a QP in ERR.
 *
 * Completion rules implemented here (so every engine gets them right):
 * - selective signalling: a successful send WQE makes a CQE only if it was posted with
 *   IBV_SEND_SIGNALED or the QP has sq_sig_all; its slot is given back to the application only
 *   when a later signalled WQE completes (or the queue is flushed or reset);
 * - error completions are always reported; an error on RC moves the QP to ERR, on UC/UD to SQE,
 *   and the rest of the affected queue completes with IBV_WC_WR_FLUSH_ERR, in order;
 * - WQEs posted while the QP is in SQE or ERR are flushed by the next verbs_sq_next() /
 *   verbs_rq_next() call;
 * - a CQ that is full when a completion arrives goes to error (IBV_EVENT_CQ_ERR), and every QP
 *   using it goes to ERR with IBV_EVENT_QP_FATAL (IBA 11.6.3: CQ overrun is a catastrophic local
 *   work queue error for the QPs that feed it): an unowned QP at once, an owned one when its
 *   owner applies the mark (verbs_qp_apply_fatal()). Completions for an errored CQ are counted
 *   and dropped; polling it returns -EIO.
 */
#ifndef VERBS_ENGINE_H
#define VERBS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include <pthread.h>

#include "droce.h"
#include "droce_config.h"

struct rte_mbuf;

#ifdef __cplusplus
extern "C" {
#endif

/** Address vector as the engine needs it (resolved from an ibv_ah_attr). */
struct verbs_av {
	struct ibv_ah_attr attr;
	union ibv_gid sgid;	/**< the source GID named by attr.grh.sgid_index */
	uint8_t ipv4;		/**< 1: both GIDs are IPv4-mapped (RoCE v2 over IPv4) */
};

/** A send WQE as posted (the application may reuse its WR and inline buffers at once). */
struct verbs_send_wqe {
	uint64_t wr_id;
	uint32_t opcode;	/**< enum ibv_wr_opcode */
	uint32_t send_flags;	/**< enum ibv_send_flags */
	__be32 imm_data;
	uint32_t num_sge;	/**< 0 with IBV_SEND_INLINE: the data follows in sge[] */
	uint32_t length;	/**< total payload bytes */
	uint32_t signaled;	/**< completes with a CQE on success */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct verbs_av av;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
		struct {		/**< IBV_WR_BIND_MW (invalidate_rkey: imm_data) */
			uint64_t addr;
			uint64_t length;
			uint32_t mw_index;	/**< in the device's window table */
			uint32_t rkey;		/**< the R_Key after the bind */
			uint32_t mr_lkey;	/**< 0 with length 0 (type 1 unbind) */
			uint32_t access;
		} bind;
	} wr;
	struct ibv_sge sge[];	/**< num_sge entries, or the inline bytes */
};

/** A receive WQE as posted. */
struct verbs_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;	/**< sum of the SGE lengths */
	struct ibv_sge sge[];
};

/** Room for one receive WQE copied out of an SRQ by verbs_srq_take(). */
struct verbs_recv_wqe_buf {
	struct verbs_recv_wqe wqe;
	struct ibv_sge sge[DROCE_MAX_SGE];
};

/* ---- Data path (caller: the QP's owner; for unowned QPs, its single driver) ---- */

/** Next send WQE to execute, or NULL. Returns NULL in every state but RTS (SQD: draining;
 *  SQE/ERR: anything posted is flushed first). The pointer stays valid until the WQE is
 *  completed. */
const struct verbs_send_wqe *verbs_sq_next(struct droce_qp *qp);
/** The @p n oldest WQEs handed out by verbs_sq_next() completed successfully.
 *  @return 0, -EINVAL (more than handed out), -ENOSPC (the send CQ overran). */
int verbs_sq_complete(struct droce_qp *qp, uint32_t n);
/** The oldest WQE handed out failed with @p status (not SUCCESS, not FLUSH): its CQE is
 *  written, the QP goes to ERR (RC) or SQE (UC, UD) and the rest of the SQ is flushed.
 *  @return 0, -EINVAL, -ENOSPC. */
int verbs_sq_complete_err(struct droce_qp *qp, enum ibv_wc_status status, uint32_t vendor_err);

/** Next receive WQE of a QP without SRQ, or NULL (RESET, nothing posted; ERR: flushes). */
const struct verbs_recv_wqe *verbs_rq_next(struct droce_qp *qp);
/** The oldest receive WQE handed out by verbs_rq_next() completed. @p wc gives status,
 *  opcode, byte_len, imm_data, src_qp, wc_flags, pkey_index, slid, sl, dlid_path_bits; verbs
 *  fills wr_id and qp_num. A status other than SUCCESS moves an RC QP to ERR and flushes
 *  (UC/UD: the transport calls verbs_qp_error() when the error is fatal).
 *  @p solicited: the message carried the SE bit (for solicited-only notification).
 *  @return 0, -EINVAL (nothing handed out), -ENOSPC (the receive CQ overran). */
int verbs_rq_complete(struct droce_qp *qp, const struct ibv_wc *wc, bool solicited);

/** Copy the oldest receive WQE out of @p srq into @p out and free its slot (several engine
 *  lcores may call it: they serialise on the SRQ's consumer lock, which the application never
 *  takes). Raises IBV_EVENT_SRQ_LIMIT_REACHED when armed and the SRQ falls below its limit.
 *  @return 0, or -ENOENT (empty). */
int verbs_srq_take(struct droce_srq *srq, struct verbs_recv_wqe_buf *out);
/** Complete a receive WQE that @p qp took from its SRQ (@p wr_id from verbs_srq_take()).
 *  @return 0, -EINVAL (the QP has no SRQ), -ENOSPC. */
int verbs_srq_complete(struct droce_qp *qp, uint64_t wr_id, const struct ibv_wc *wc,
		       bool solicited);

/** The transport moves @p qp to ERR (flushing both queues) and raises @p event on it
 *  (IBV_EVENT_QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR), or no event when @p event < 0. */
void verbs_qp_error(struct droce_qp *qp, int event);
/** Raise an affiliated QP event that needs no state change (COMM_EST, SQ_DRAINED, PATH_MIG,
 *  PATH_MIG_ERR (never raised by droce: no APM on RoCE), QP_LAST_WQE_REACHED). */
void verbs_qp_event(struct droce_qp *qp, enum ibv_event_type event);
/** Raise an SRQ event (IBV_EVENT_SRQ_ERR puts the SRQ in error: posting then fails). */
void verbs_srq_event(struct droce_srq *srq, enum ibv_event_type event);
/** Raise a device event on every open context (element.port_num = 1): PORT_ACTIVE,
 *  PORT_ERR. */
void verbs_device_event(struct droce_device *dev, enum ibv_event_type event);
/**
 * The link of @p dev's port is @p up (the engine samples it when it starts the port and
 * polls it while it serves it): droce_query_port() reports it, and a change raises
 * PORT_ACTIVE (up) or PORT_ERR (down) once on every open context, as rxe on NETDEV_UP/DOWN.
 */
void verbs_device_link(struct droce_device *dev, bool up);

/* ---- QP attributes for the transport (caller: the QP's owner, between control operations;
 *      the values are those the last droce_modify_qp() committed) ---- */

/** The QP's attributes as modify_qp set them (path_mtu, dest_qp_num, PSNs, timers, ...). */
const struct ibv_qp_attr *verbs_qp_attr(const struct droce_qp *qp);
/** The primary path (valid once IBV_QP_AV was set; sgid resolved from the GID table). */
const struct verbs_av *verbs_qp_av(const struct droce_qp *qp);
/** The granted queue capacities. */
const struct ibv_qp_cap *verbs_qp_cap(const struct droce_qp *qp);
/**
 * The QP's current state (a load-acquire; no side effect). Under its owner an owned QP's state
 * changes only by the owner's own calls: a droce_modify_qp() it applies (then the owner's
 * modified callback runs), verbs_sq_complete_err(), an RC verbs_rq_complete() or
 * verbs_srq_complete() with an error status, verbs_qp_error(), verbs_qp_apply_fatal(). An
 * unowned QP also enters ERR when a CQ it uses overruns (whichever thread completes into the
 * CQ), and is marked fatal then too (verbs_qp_fatal_mark()).
 */
enum ibv_qp_state verbs_qp_cur_state(const struct droce_qp *qp);
/**
 * The mark an overrun of one of the QP's CQs sets (non-zero: IBV_EVENT_QP_FATAL raised, the QP's
 * doorbell rung) and a move to RESET clears; stable for the QP's life. Read it with a
 * load-acquire; once it is set the owner calls verbs_qp_apply_fatal().
 */
const uint32_t *verbs_qp_fatal_mark(const struct droce_qp *qp);
/**
 * Caller: the owner (of an unowned QP, its driver). When a CQ overrun marked @p qp fatal, move it
 * to ERR now, flushing its WQEs (nothing when it is in RESET or ERR). Nothing else moves an owned
 * QP there for an overrun: the owner calls this before it acts on the QP (a frame for it, a TX
 * pass, a timer) and after one of its completion calls returned -ENOSPC, so that a QP, idle or
 * not, does not go on serving remote READs and WRITEs.
 */
void verbs_qp_apply_fatal(struct droce_qp *qp);
/** True when the send queue (@p sq) or the receive queue holds WQEs posted but not yet handed
 *  out by verbs_sq_next()/verbs_rq_next() (a peek: nothing is consumed). */
bool verbs_wq_pending(const struct droce_qp *qp, bool sq);

/** How full a queue is, for observability (engine telemetry). */
struct verbs_fill {
	uint32_t depth;		/**< slots */
	uint32_t used;		/**< posted and not yet retired (CQ: completions not polled) */
	uint32_t active;	/**< SQ/RQ: handed out to the engine, not completed (CQ: 0) */
	bool error;		/**< CQ: overrun (polling fails with -EIO); SQ/RQ: false */
};
/** Fill of @p qp's send queue (@p sq) or receive queue (none with an SRQ: depth 0). Reads
 *  the consumer's private indices: the QP's owner only. */
void verbs_wq_fill(const struct droce_qp *qp, bool sq, struct verbs_fill *out);
/** Fill of @p cq. Any thread (atomic loads only). */
void verbs_cq_fill(const struct droce_cq *cq, struct verbs_fill *out);

/* ---- Lookups for the engine ---- */

/**
 * The slot of QP number @p qpn in the per-device QP tables (DROCE_QP_SLOTS entries): qpn -
 * DROCE_QPN_BASE, or DROCE_MAX_QP for the GSI QP; UINT32_MAX for a number no QP can have.
 * The common case costs one subtraction and one comparison.
 */
static inline uint32_t verbs_qpn_slot(uint32_t qpn)
{
	uint32_t idx = qpn - DROCE_QPN_BASE;

	if (idx < DROCE_MAX_QP)
		return idx;
	return qpn == DROCE_GSI_QPN ? DROCE_MAX_QP : UINT32_MAX;
}

/** The live QP numbered @p qpn on @p dev (the GSI QP included), or NULL. */
struct droce_qp *verbs_qp_lookup(struct droce_device *dev, uint32_t qpn);
/** The live MR whose lkey (@p remote false) or rkey (@p remote true) is @p key, or NULL. */
struct droce_mr *verbs_mr_lookup(struct droce_device *dev, uint32_t key, bool remote);
/** Access flags an MR was registered with. */
int verbs_mr_access(const struct droce_mr *mr);
/** The address an MR's keys name its first byte by (droce_reg_mr_iova2()): an R_Key's VA is
 *  translated by it; posted SGEs already were (verbs_sge_iova()). */
uint64_t verbs_mr_iova(const struct droce_mr *mr);
/**
 * The memory [va, va + len) names through @p rkey on @p dev, if the rkey names a live MR of
 * @p pd with every bit of @p access that covers that range of its iova space, or a window
 * bound in @p pd (type 2: through @p qp) with those bits that covers it. @return The process
 * address of va, or NULL.
 */
uint8_t *verbs_mr_remote_mem(struct droce_device *dev, const struct droce_pd *pd,
			     const struct droce_qp *qp, uint32_t rkey, uint64_t va, uint32_t len,
			     int access);
/** As verbs_mr_remote_mem() for the whole MR (RDMA FLUSH of selectivity MR): its memory and
 *  length (*@p len) if @p rkey names a live MR of @p pd with every bit of @p access, else NULL. */
uint8_t *verbs_mr_remote_whole(struct droce_device *dev, const struct droce_pd *pd,
			       uint32_t rkey, int access, size_t *len);

/** Bit 31 of an R_Key: set in a memory window's, clear in an MR's. */
#define VERBS_KEY_MW (1u << 31)
/** The requester reached a BIND_MW WQE of @p qp: bind (or unbind) its window.
 *  @return IBV_WC_SUCCESS or IBV_WC_MW_BIND_ERR (the QP goes to ERR). */
enum ibv_wc_status verbs_local_bind(struct droce_qp *qp, const struct verbs_send_wqe *w);
/** The requester reached a LOCAL_INV WQE: @return IBV_WC_SUCCESS or IBV_WC_LOC_QP_OP_ERR. */
enum ibv_wc_status verbs_local_inv(struct droce_qp *qp, uint32_t rkey);
/** A SEND with invalidate arrived on @p qp naming @p rkey: invalidate that type-2 window if
 *  @p qp bound it. @return true when it did (the receive completes IBV_WC_WITH_INV). */
bool verbs_remote_inv(struct droce_qp *qp, uint32_t rkey);
/**
 * Zero-copy TX: make @p seg (a fresh direct mbuf, not part of a chain yet) carry the @p len
 * bytes at @p addr inside @p mr as an external buffer, without copying them. The segment's
 * own data room holds the buffer's shared info, so the segment must never be cloned (copy
 * it: rte_pktmbuf_copy()). Freeing the segment releases the MR; droce_dereg_mr() waits until
 * every segment of the MR is freed, so the memory is never read after the application got it
 * back.
 * @return true; false when @p mr is being deregistered (send a copy instead).
 */
bool verbs_mr_extbuf_attach(struct rte_mbuf *seg, struct droce_mr *mr, void *addr,
			    uint16_t len);
/** The DPDK port of a device, or -1 while it has none (ring pair waiting for its partner). */
int verbs_device_port(const struct droce_device *dev);
/** Find a device by name, or NULL. */
struct droce_device *verbs_device_find(const char *name);
/**
 * The port's rate, as droce_query_port() reports it: @p mbps the DPDK port's link speed
 * (0: it gives none), @p width and @p speed ibv_port_attr's active_width and active_speed
 * (Linux's mapping of an Ethernet speed; no speed counts as 1 Gb/s: 1X SDR).
 */
void verbs_device_rate(const struct droce_device *dev, uint32_t *mbps, uint8_t *width,
		       uint8_t *speed);

/* ---- Ownership ---- */

/** Doorbell slots of an owner: one per QP number of every device (verbs_qp_db_slot()). */
#define VERBS_DB_SLOTS (DROCE_MAX_DEVICES * DROCE_QP_SLOTS)
#define VERBS_DB_WORDS ((VERBS_DB_SLOTS + 63) / 64)
#define VERBS_DB_SUM_WORDS ((VERBS_DB_WORDS + 63) / 64)

/* ---- The control mailbox (verbs_mbox.c) ----
 * "Run this on the thread that drives the data path, between two of its steps, and wait":
 * any thread sends a message (it lives on the sender's stack), the consumer runs every queued
 * one from its loop with verbs_mbox_poll() (one load-acquire when there is none). A closed
 * mailbox has no consumer: the sender runs its message itself, under @c driver when set
 * (the mutex whoever drives the data path holds for each of its iterations). */

struct verbs_mbox_msg {
	struct verbs_mbox_msg *next;
	void (*fn)(struct verbs_mbox_msg *m);	/**< embed the message to find its arguments */
	uint32_t done;				/**< store-release by the consumer */
};

struct verbs_mbox {
	pthread_mutex_t lock;
	struct verbs_mbox_msg *head;	/**< queued, oldest first (lock) */
	struct verbs_mbox_msg *tail;
	uint32_t pending;		/**< 1 when something is queued: store-release under lock */
	bool open;			/**< a consumer polls (lock) */
	pthread_mutex_t *driver;	/**< taken by a sender that runs its own message */
};

/** An open mailbox, no driver. */
void verbs_mbox_init(struct verbs_mbox *mb);
void verbs_mbox_fini(struct verbs_mbox *mb);
/** Run @p m->fn(m) on the consumer between two of its steps (or here, when the mailbox is
 *  closed) and return once it ran. */
void verbs_mbox_send(struct verbs_mbox *mb, struct verbs_mbox_msg *m);
/** The consumer: run what is queued, oldest first. @return how many. */
unsigned int verbs_mbox_poll(struct verbs_mbox *mb);
/** A consumer starts polling. */
void verbs_mbox_open(struct verbs_mbox *mb);
/** The consumer stops polling: what is queued runs now (here), later messages in their
 *  senders. @return how many ran here. */
unsigned int verbs_mbox_close(struct verbs_mbox *mb);

/** An engine (lcore) that owns QPs. */
struct verbs_owner {
	/* Doorbells (verbs_qp_db_ring()): bit s of db_bits is set when the QP of slot s got SQ
	 * work while the owner was not watching it; bit w of db_sum is set after db_bits[w] went
	 * from 0 to non-zero, and bit i of db_top after db_sum[i] did (so an owner with nothing
	 * rung reads one word per iteration, however many slots). Posting threads fetch-or, the
	 * owner exchanges with 0: wait-free on both sides, and plain C11 atomics, which
	 * ThreadSanitizer sees. */
	uint64_t db_top __attribute__((aligned(64)));
	uint64_t db_sum[VERBS_DB_SUM_WORDS] __attribute__((aligned(64)));
	uint64_t db_bits[VERBS_DB_WORDS] __attribute__((aligned(64)));
	/** Control requests (droce_modify_qp(), droce_destroy_qp() of its QPs) and whatever
	 *  else its driver sends it (the engine's calls): verbs_owner_poll() runs them. Open
	 *  after verbs_owner_init(); an owner driven by application threads (an inline engine)
	 *  closes it and sets mbox.driver, so a request runs at once in the sender. */
	struct verbs_mbox mbox;
	/** Called by verbs_owner_poll() on the owner's thread when a QP is detached (it is about
	 *  to be destroyed): the owner must drop every reference to it before returning. */
	void (*detached)(struct verbs_owner *o, struct droce_qp *qp);
	/** Called on the owner's thread after a droce_modify_qp() was applied successfully
	 *  (@p attr_mask as the caller gave it), so the owner can update its protocol state. */
	void (*modified)(struct verbs_owner *o, struct droce_qp *qp, int attr_mask);
	void *arg;		/**< for the owner's use */
};

/** Initialise an owner (@p name is for logs): detached, modified and arg NULL, its mailbox
 *  open. @return 0, -errno. */
int verbs_owner_init(struct verbs_owner *o, const char *name);
/** Free an owner that owns no QP any more. */
void verbs_owner_fini(struct verbs_owner *o);
/** Hand @p qp to @p o: from now on control operations are applied by @p o's
 *  verbs_owner_poll(). Called from any thread before the owner drives the QP. @return 0,
 *  -EBUSY (already owned). */
int verbs_qp_attach(struct droce_qp *qp, struct verbs_owner *o);
/** Called by the owner from its loop: apply the queued control requests (modify_qp, detach on
 *  destroy). Cheap when none is queued. @return the number applied. */
unsigned int verbs_owner_poll(struct verbs_owner *o);

/** The doorbell slot of @p qp in its owner, stable for the QP's life: device index *
 *  DROCE_QP_SLOTS + verbs_qpn_slot(qp_num). */
uint32_t verbs_qp_db_slot(const struct droce_qp *qp);
/** Posting side (droce_post_send(), after publishing the SQ head): tell @p qp's owner that it
 *  has new work, unless the owner watches it already. No lock, no system call. No-op for an
 *  unowned QP (its driver polls it). */
void verbs_qp_db_ring(struct droce_qp *qp);
/** Owner: call @p fn(@p arg, slot) for every doorbell rung since the last call (a slot may be
 *  stale: its QP destroyed, or replaced by a new one). @return how many. */
unsigned int verbs_owner_doorbells(struct verbs_owner *o, void (*fn)(void *arg, uint32_t slot),
				   void *arg);
/** Owner: stop watching @p qp, so that the next post rings its doorbell again. The owner must
 *  re-check the QP's queues after this call before it forgets the QP: a post whose head the
 *  re-check does not see rings the doorbell. A QP is armed from its first post on until this
 *  call; the owner may watch a QP without arming it. */
void verbs_qp_db_disarm(struct droce_qp *qp);

/* ---- Engine hooks ----
 * The engine is a layer above verbs: it registers these once (at load time) and verbs calls
 * them from the application thread that opens a device or creates a QP. Without an engine
 * (the verbs tests), nothing is called and QPs stay unowned.
 */
struct verbs_engine_ops {
	/** The first context of @p dev is being opened: start its port. @return 0, -errno
	 *  (droce_open_device() then fails with that errno). */
	int (*device_open)(struct droce_device *dev);
	/** The last context of @p dev was closed (no object is left on it): stop its port. */
	void (*device_close)(struct droce_device *dev);
	/** @p qp was created (RESET, in the QP table): take ownership (verbs_qp_attach()).
	 *  @return 0, -errno (droce_create_qp() then fails with that errno). */
	int (*qp_created)(struct droce_qp *qp);
	/** @p qp (UD) joins (@p attach) or leaves multicast group @p gid; verbs checked the
	 *  arguments and the limits (DROCE_MAX_MCAST_*) and serialises the calls per device.
	 *  @return 0, -errno (droce_attach_mcast()/droce_detach_mcast() then fail with it). */
	int (*mcast)(struct droce_qp *qp, const union ibv_gid *gid, bool attach);
	/** droce_dereg_mr() waits for frames that still carry the MR's memory (zero-copy TX)
	 *  on @p dev: make progress (an inline engine runs an iteration; an lcore engine needs
	 *  nothing but time). */
	void (*mr_wait)(struct droce_device *dev);
	/** droce_dereg_mr() removed an MR of @p dev from the table: return once no engine
	 *  work that may have looked it up before can still be running on @p dev (the
	 *  instance serving it passed a point between two iterations; nothing to wait for
	 *  when it does not run). After this, no engine reads or writes the MR's memory by a
	 *  copy and no engine reads the MR itself. */
	void (*mr_quiesce)(struct droce_device *dev);
};

/* ---- The GSI QP (for lib/cm) ---- */

/**
 * Create the GSI QP (QP1) of @p pd's device: a UD QP numbered DROCE_GSI_QPN, otherwise
 * created, modified, posted to and destroyed like any UD QP (droce_modify_qp() with Q_Key
 * DROCE_GSI_QKEY, droce_destroy_qp()). @p a->qp_type must be IBV_QPT_UD.
 * @return the QP in RESET, or NULL with errno EINVAL (as droce_create_qp(), or not UD),
 *   EEXIST (the device has one), ENOMEM.
 */
struct droce_qp *verbs_create_gsi_qp(struct droce_pd *pd, struct droce_qp_init_attr *a);

/* ---- QPs a layer above holds (for lib/cm) ---- */

/** Told that a QP is being destroyed (see verbs_qp_set_release()). */
typedef void verbs_qp_release_fn(struct droce_qp *qp);

/**
 * A layer above that keeps a pointer to @p qp (an RDMA CM id: the application may destroy
 * the QP with droce_destroy_qp() or ibv_destroy_qp() instead of through the id, as with
 * librdmacm) asks to be told first: droce_destroy_qp() calls @p fn(qp) in the destroying
 * thread, holding no droce lock, once the QP is certain to go (after its EBUSY check) and
 * before anything of it is freed. @p fn may take the caller's own lock; so the caller must
 * not destroy the QP under that lock without clearing the release first. NULL clears it.
 */
void verbs_qp_set_release(struct droce_qp *qp, verbs_qp_release_fn *fn);

/** Register the engine (one; a second call replaces the first). */
void verbs_engine_register(const struct verbs_engine_ops *ops);

/** The engine's per-device state (NULL until it sets one). */
void *verbs_device_engine(const struct droce_device *dev);
void verbs_device_set_engine(struct droce_device *dev, void *priv);
/** The device's configuration (MAC resolved from the port when the INI gave none). */
const struct droce_device_cfg *verbs_device_cfg(const struct droce_device *dev);
/** GID table of @p dev (DROCE_MAX_GID entries; unused ones are all zero). */
const union ibv_gid *verbs_device_gids_get(const struct droce_device *dev);
/** Index of @p dev among the devices (0 .. DROCE_MAX_DEVICES - 1). */
unsigned int verbs_device_index(const struct droce_device *dev);

/** One "key = value" of the [engine] or [cm] section of the configuration. */
struct verbs_kv {
	char key[64];
	char value[256];
};
/** Entries a section may have. */
#define VERBS_MAX_KV 32
/** The [engine] section as loaded (the engine interprets it). @return number of entries. */
unsigned int verbs_engine_config(const struct verbs_kv **kv);
/** The [cm] section as loaded (lib/cm interprets it). @return number of entries. */
unsigned int verbs_cm_config(const struct verbs_kv **kv);
/** The [dcqcn] section as loaded (the engine interprets it). @return number of entries. */
unsigned int verbs_dcqcn_config(const struct verbs_kv **kv);

#ifdef __cplusplus
}
#endif

#endif /* VERBS_ENGINE_H */
