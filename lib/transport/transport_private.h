/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * Transport internals shared by the files of lib/transport (not installed).
 *
 * A QP's transport state has three engines, as IBA chapter 9 describes them and Linux rxe
 * implements them:
 * - the requester (transport_req.c): send WQEs -> request packets, PSNs, READ/ATOMIC limits, fences,
 *   go-back-N retransmission rebuilt from the WQE (no copies of sent frames are kept);
 * - the responder (transport_resp.c checks and executes requests, transport_resp_out.c sends ACK/NAK, READ
 *   responses and atomic ACKs in PSN order);
 * - the completer (transport_comp.c): ACKs, NAKs and responses -> send completions, retry decisions.
 * transport_qp.c creates the state, follows modify_qp and dispatches; transport_path.c builds frames (flow, mbuf
 * chains, copies between mbufs and memory); transport_timer.c converts the IBA timer codes.
 * transport_msg.h has what the RC responder and UC (transport_uc.c) share of SEND and WRITE
 * request packets: their checks, the copy into the receive WQE, the WRITE's placement.
 *
 * Everything runs on the QP's owner (transport.h): no locks, no allocation per packet.
 */
#ifndef TRANSPORT_PRIVATE_H
#define TRANSPORT_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_log.h>
#include <rte_mbuf.h>

#include "transport_dcqcn.h"
#include "transport.h"
#include "transport_rec.h"

extern int transport_logtype;
#define TRANSPORT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, transport_logtype, "droce transport: " fmt "\n", ##__VA_ARGS__)

/** PSNs a requester may have in flight beyond the oldest unacknowledged one. */
#define TRANSPORT_MAX_UNACKED 512
/** Request packets between two AckReq bits inside one long message (as rxe does). */
#define TRANSPORT_ACKREQ_EVERY 32
/** A QP whose path waits for its resolution tries again after this long at the latest (the
 *  engine wakes it sooner when the neighbour table changes: transport_path_wake()). */
#define TRANSPORT_PATH_RETRY_US 100
/** Responder output queue entries (ACK/NAK, READ responses, atomic ACKs): every queued
 *  READ/atomic response (at most DROCE_MAX_RD_ATOM) with an ACK after each, and room to spare. */
#define TRANSPORT_OUT_SIZE (2 * DROCE_MAX_RD_ATOM + 64)
/** Bytes an mbuf segment keeps free so that pad and ICRC always fit at the end. */
#define TRANSPORT_TAIL_RESERVE 8
/* Payloads of at least this many bytes leave without a copy where the port allows it
 * (transport_pkt_zcopy()); below, two more mbufs cost more than the copy. */
#define TRANSPORT_ZCOPY_MIN 512

#define NO_DEADLINE UINT64_MAX
/** AETH syndrome of a plain ACK (no credit count). */
#define AETH_ACK_UNLIMITED (DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID)

/** A packet's place in its message. */
enum { OP_FIRST, OP_MIDDLE, OP_LAST, OP_ONLY };

static inline unsigned int transport_msg_pos(bool first, bool last)
{
	return first ? (last ? OP_ONLY : OP_FIRST) : (last ? OP_LAST : OP_MIDDLE);
}

/** RC wire opcodes of the SEND and RDMA WRITE work requests by position (transport_req.c; 0: none);
 *  UC's are the same operations (the low 5 bits) under UC's transport bits (transport_uc.c). */
#define TRANSPORT_WR_OPS (IBV_WR_SEND_WITH_INV + 1)
extern const uint8_t transport_wr_ops[TRANSPORT_WR_OPS][4];

/** What a send WQE turns into on the wire. */
enum req_kind {
	RK_SEND,
	RK_WRITE,
	RK_READ,
	RK_ATOMIC,
	RK_ATOMIC_WRITE,	/**< 8 bytes carried, answered like a READ of 0 bytes */
	RK_FLUSH,		/**< FETH + RETH, no payload, answered like a READ of 0 bytes */
	/** BIND_MW, LOCAL_INV: no packet, no PSN; done by the requester when it reaches it
	 *  (transport_req_local()), completed once every WQE before it completed. Never counted by
	 *  the kind ranges above (nrd, the packet builders). */
	RK_LOCAL,
};

/** Does a request of @p kind hold a responder resource: limited by max_rd_atomic, waited
 *  for by a fence, completed by its own response only? (Named kinds: not a range.) */
static inline bool req_kind_rd_atomic(uint8_t kind)
{
	return kind == RK_READ || kind == RK_ATOMIC || kind == RK_ATOMIC_WRITE || kind == RK_FLUSH;
}

/** The requester's view of one send WQE handed out by verbs_sq_next(). */
struct req_wqe {
	const struct verbs_send_wqe *w;
	uint32_t first_psn;		/**< PSNs are assigned when the WQE is first sent */
	uint32_t last_psn;
	uint32_t npkts;			/**< PSNs it uses (READ: one per response packet) */
	uint8_t kind;			/**< enum req_kind */
	uint8_t started;		/**< has PSNs; counted in nrd when READ/ATOMIC;
					 *   RK_LOCAL: done */
	uint8_t err;			/**< local error found when fetched (enum ibv_wc_status) */
	/** transport_env.now of the engine entry that checked its SGEs (wqe_check()): within
	 *  that entry they need no second check (droce_dereg_mr() waits for it to end). */
	uint64_t checked;
};

/** Requester and completer state. Indices count WQEs handed out (free-running). */
struct transport_req {
	struct req_wqe *ring;
	uint32_t mask;
	uint32_t head;			/**< next slot to fill from verbs_sq_next() */
	uint32_t comp;			/**< oldest WQE not completed */
	uint32_t cur;			/**< WQE being sent */
	uint32_t off;			/**< bytes of cur already sent (READ: already requested) */
	uint32_t psn;			/**< PSN of the next packet */
	uint32_t psn_hwm;		/**< one past the highest PSN ever sent */
	uint32_t comp_psn;		/**< oldest PSN not acknowledged */
	uint32_t nrd;			/**< started READ/ATOMIC WQEs not completed */
	uint32_t nlocal;		/**< RK_LOCAL WQEs done, not completed */
	uint32_t noack;			/**< packets sent since the last AckReq */
	/** PSNs that may be unacknowledged: TRANSPORT_MAX_UNACKED, less while recovering from
	 *  a loss (transport_comp.c, window_cut()). */
	uint32_t cwnd;
	uint8_t retry_left;		/**< transport retries left (retry_cnt) */
	uint8_t rnr_left;		/**< RNR retries left (rnr_retry; 7 = infinite) */
	bool need_retry;		/**< go back to comp_psn before sending anything */
	bool retry_started;		/**< a NAK/implicit retry ran; no other until progress */
	bool rnr_wait;			/**< stopped by an RNR NAK until rnr_deadline */
	uint64_t rto_deadline;		/**< retransmission timer, NO_DEADLINE when idle */
	uint64_t rnr_deadline;
	uint64_t rto_ticks;		/**< 0: timeout 0, the timer never fires (infinite) */
};

/** A responder resource (IBA 9.7.5.1.x): one READ or ATOMIC, kept for replay. */
struct resp_res {
	uint8_t kind;			/**< 0 (free), RK_READ, RK_ATOMIC, RK_ATOMIC_WRITE, RK_FLUSH */
	bool queued;			/**< in the output queue */
	bool answered;			/**< its original response went out whole */
	uint32_t first_psn;
	uint32_t last_psn;
	uint32_t msn;
	/* READ: what is being sent (the request, or a replay starting at psn) */
	uint64_t va;			/**< the request's (replay's) VA */
	uint32_t rkey;			/**< its R_Key, checked again for every packet */
	uint32_t len;			/**< bytes from addr */
	uint32_t off;			/**< bytes already sent */
	uint32_t start_psn;		/**< PSN of the request being answered */
	uint64_t va_org;		/**< the original request's VA and length: a replay */
	uint32_t len_org;		/**< asks for a part of them or is dropped */
	/* ATOMIC */
	uint64_t orig;
};

enum out_type {
	OUT_ACK,			/**< ACK or NAK: syndrome, psn */
	OUT_READ,			/**< READ response packets of res[] */
	OUT_ATOMIC,			/**< atomic ACK of res[] */
};

struct resp_out {
	uint8_t type;			/**< enum out_type */
	uint8_t syndrome;
	uint8_t res;
	uint32_t psn;
	uint32_t msn;
};

/** Responder state. */
struct transport_resp {
	uint32_t epsn;			/**< expected PSN */
	uint32_t msn;			/**< messages completed (IBA 9.7.6.1.1), 24 bits */
	uint32_t prev_mask;		/**< opcode mask of the last accepted request (0: none) */
	bool nak_sent;			/**< a NAK was sent for the current PSN gap */
	bool comm_est_armed;		/**< entered RTR, no request accepted since: the next
				     accepted one raises COMM_EST if still in RTR */
	bool err;			/**< a class A/C error ended the responder */
	/* the SEND in progress */
	const struct verbs_recv_wqe *rwqe;
	bool rwqe_srq;			/**< rwqe is srq_buf (taken from the SRQ) */
	uint32_t recv_off;		/**< bytes received into rwqe */
	/* the RDMA WRITE in progress: where its next packet goes, under which R_Key (checked
	 * again for every packet: the MR may be deregistered in the middle of the message) */
	uint64_t wr_va;
	uint32_t wr_rkey;
	uint32_t wr_resid;
	uint32_t wr_len;
	uint32_t since_ack;		/**< accepted packets since the last ACK queued */
	/* resources and output */
	uint32_t nres;			/**< max_dest_rd_atomic */
	uint32_t res_next;
	struct resp_res res[DROCE_MAX_RD_ATOM];
	uint32_t out_head;		/**< next entry to send */
	uint32_t out_tail;		/**< next free entry */
	struct resp_out out[TRANSPORT_OUT_SIZE];
	struct verbs_recv_wqe_buf srq_buf;
};

/** Per-QP transport state. */
struct transport_qp {
	struct droce_qp *qp;
	struct droce_device *dev;
	/** The device's counter block (TCNT), given at creation: it stays where it is while the
	 *  device has QPs. */
	struct droce_counters *dev_cnt;
	/** The QP's state as verbs has it, without asking verbs per packet: read at creation, by
	 *  transport_qp_modified() (every modify the owner applies) and by transport_state_sync()
	 *  after each of the transport's own verbs calls that may move it and when a CQ overrun
	 *  marked the QP (transport_fatal_check()). Nothing else moves an owned QP
	 *  (verbs_qp_cur_state()); an unowned one that another QP's overrun moved is marked too,
	 *  and the mark is checked before the QP is acted on. */
	enum ibv_qp_state state;
	const uint32_t *fatal;		/**< verbs_qp_fatal_mark() */
	struct trec *rec;		/**< the flight recorder, or NULL (off) */
	enum ibv_qp_type type;
	uint32_t qpn;
	uint32_t dqpn;
	uint32_t mtu;			/**< path MTU in bytes */
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	bool flow_ok;			/**< AV known */
	bool flow_resolved;		/**< MACs filled by env->resolve() */
	/** The path's resolution is under way or failed (env->resolve(): -EAGAIN,
	 *  -EHOSTUNREACH): no TX until path_next or transport_path_wake(). */
	bool path_wait;
	uint64_t path_next;		/**< TSC: when a waiting path is tried again */
	struct droce_flow flow;
	struct transport_req req;
	struct transport_resp resp;
	struct droce_counters cnt;	/**< this QP's share of the device counters (TCNT) */
	struct dcqcn_qp cc;		/**< congestion control (transport_dcqcn.c) */
};

/**
 * Count @p n in counter @p name of the QP's device and of the QP itself: every transport
 * counter goes through here (or TCNT), so the device and the per-QP counters cannot drift.
 */
#define TCNT_ADD(env, t, name, n) do { \
	struct transport_qp *tcnt_t_ = (t); \
	uint64_t tcnt_n_ = (n); \
	RTE_SET_USED(env); \
	tcnt_t_->dev_cnt->name += tcnt_n_; \
	tcnt_t_->cnt.name += tcnt_n_; \
} while (0)
#define TCNT(env, t, name) TCNT_ADD(env, t, name, 1)

static inline uint32_t div_up(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

/** Count drop @p name (a DROP counter, through TCNT) and give the verdict that names it: a
 *  receive path returns what it counted. */
#define TDROP(env, t, name) __extension__ ({ \
	TCNT(env, t, name); \
	TRANSPORT_DROP_##name; \
})

/* transport_qp.c */
/** The QP's state (struct transport_qp.state). */
static inline enum ibv_qp_state transport_state(const struct transport_qp *t)
{
	return t->state;
}
/** Read the QP's state from verbs again after a verbs call of the transport's that may have
 *  moved it (an error completion, verbs_qp_error(), a completion that returned -ENOSPC: its
 *  CQ overran), applying a CQ overrun's mark first (verbs_qp_apply_fatal()). In ERR, drop the
 *  WQE references (verbs flushed the WQEs). */
void transport_state_sync(struct transport_qp *t);
/** transport_apply_fatal() for the transport's own entry points: one load while the QP is not
 *  marked (or already in ERR, which only a modify to RESET leaves). */
static inline void transport_fatal_check(struct transport_qp *t)
{
	if (unlikely(__atomic_load_n(t->fatal, __ATOMIC_ACQUIRE) != 0) &&
	    t->state != IBV_QPS_ERR)
		transport_state_sync(t);
}
/** The QP went to ERR, or to SQE by a send error: drop every WQE reference (verbs flushes
 *  them) and stop the timers. */
void transport_forget_wqes(struct transport_qp *t);

/* transport_path.c */
/** The path is known and its MACs resolved; -EAGAIN while resolving, -ENOTCONN without AV. */
int transport_path_ready(struct transport_env *env, struct transport_qp *t);
/** After env->resolve() answered @p rc for @p t's path: wait (path_wait) on -EAGAIN and
 *  -EHOSTUNREACH. @return @p rc. */
int transport_path_park(struct transport_env *env, struct transport_qp *t, int rc);
void transport_path_set(struct transport_qp *t);
/**
 * Does @p pkt come from the QP's peer and go to the QP's own address (source address = the
 * AV's destination GID, destination = its source GID)? IBA 9.6.1.1: a connected (RC, UC) QP
 * takes packets from its own path only; rxe's check_addr() drops the others.
 */
bool transport_path_matches(const struct transport_qp *t, const struct droce_pkt *pkt);
/** One reset mbuf of env->pool through env->cache (rte_pktmbuf_alloc()), or NULL. */
static inline struct rte_mbuf *transport_mbuf_alloc(const struct transport_env *env)
{
	void *obj;

	if (rte_mempool_generic_get(env->pool, &obj, 1, env->cache) < 0)
		return NULL;
	rte_pktmbuf_reset((struct rte_mbuf *)obj);
	return obj;
}

/** rte_pktmbuf_free() of a chain; segments of env->pool go back through env->cache. */
static inline void transport_mbuf_free(const struct transport_env *env, struct rte_mbuf *m)
{
	while (m != NULL) {
		struct rte_mbuf *next = m->next, *seg = rte_pktmbuf_prefree_seg(m);

		if (seg != NULL) {
			if (likely(seg->pool == env->pool))
				rte_mempool_generic_put(seg->pool, (void **)&seg, 1, env->cache);
			else
				rte_mbuf_raw_free(seg);
		}
		m = next;
	}
}

/** An mbuf chain with room for @p len payload bytes (pkt_len == len), or NULL. */
struct rte_mbuf *transport_pkt_alloc(const struct transport_env *env, uint32_t len);
/** Copy @p len bytes from @p src into the chain at payload offset @p off. */
/**
 * Zero-copy: a frame whose @p len payload bytes, from offset @p off of the scatter list
 * @p sge, are segments attached to the registered memory itself (verbs_mr_extbuf_attach()),
 * between an empty first segment (for the headers) and an empty last one (pad, ICRC).
 * Segments are at most a path MTU long (the caller's @p len).
 * @return NULL when an mbuf is not available (the caller copies instead) or, with *@p gone
 * set, when an MR of the list was deregistered since the WQE started (no byte may be read).
 */
struct rte_mbuf *transport_pkt_zcopy(struct transport_env *env, struct transport_qp *t,
				     const struct ibv_sge *sge, uint32_t num_sge, uint32_t off,
				     uint32_t len, bool *gone);
void transport_pkt_write(struct rte_mbuf *m, uint32_t off, const void *src, uint32_t len);
/** Copy @p len bytes at frame offset @p off of @p m to @p dst. */
void transport_pkt_read(const struct rte_mbuf *m, uint32_t off, void *dst, uint32_t len);
/** Add headers, pad, ICRC and hand the frame to env->tx(). @return 0, or -errno (m freed). */
int transport_pkt_send(struct transport_env *env, struct transport_qp *t, struct rte_mbuf *m,
		       struct droce_hdr_fields *h);
/** Copy @p len bytes into the SGE list @p sge[@p num_sge] at message offset @p off: from frame
 *  offset @p src of @p m, or from @p buf + @p src when @p m is NULL; each SGE written to is
 *  checked against its MR (LOCAL_WRITE) first. The one scatter of the receive WQEs (transport_recv.c)
 *  and of READ responses (transport_comp.c). @return IBV_WC_SUCCESS or IBV_WC_LOC_PROT_ERR. */
enum ibv_wc_status transport_sge_scatter(const struct transport_qp *t, const struct ibv_sge *sge,
					 uint32_t num_sge, uint32_t off, const struct rte_mbuf *m,
					 uint32_t src, const void *buf, uint32_t len);
/** Check an SGE list entry against its MR: lkey, PD, bounds, @p access (0 or LOCAL_WRITE).
 *  @return IBV_WC_SUCCESS or LOC_PROT_ERR. */
enum ibv_wc_status transport_sge_check(const struct transport_qp *t, const struct ibv_sge *s,
				       int access);
/*
 * IBA 9.4.3 / 9.4.4 (C9-88): the memory at @p va if R_Key @p rkey names a live MR of the QP's
 * PD with @p access that covers @p len bytes from @p va (in the MR's iova space), or a window
 * bound in that PD (type 2: through this QP) that does, else NULL.
 * The responder calls it for the first packet of a request and again for each later one (a
 * WRITE's middle and last packets, each READ response): the MR may have been deregistered in
 * between, and droce_dereg_mr() returns once no engine iteration can still use a lookup made
 * before the MR left the table (verbs_engine_ops.mr_quiesce).
 */
static inline uint8_t *transport_rkey_mem(const struct transport_qp *t, uint32_t rkey,
					  uint64_t va, uint32_t len, int access)
{
	return verbs_mr_remote_mem(t->dev, t->qp->pd, t->qp, rkey, va, len, access);
}

/* transport_timer.c */
uint64_t transport_rto_ticks(uint8_t timeout, uint64_t hz);
uint64_t transport_rnr_ticks(uint8_t code, uint64_t hz);

/* transport_req.c */
void transport_req_reset(struct transport_qp *t, uint32_t psn);
enum ibv_wc_status transport_req_local(struct transport_qp *t, const struct verbs_send_wqe *w);
unsigned int transport_req_tx(struct transport_env *env, struct transport_qp *t,
			      unsigned int budget);
bool transport_req_pending(const struct transport_qp *t);
/** Copy @p len bytes of @p w's data at message offset @p off into @p m's payload, checking
 *  each SGE it reads against its MR again first (transport_sge_check()): the MR may have been
 *  deregistered since the WQE started. @return IBV_WC_SUCCESS, or LOC_PROT_ERR (nothing of
 *  that SGE was read; @p m is partly filled and must be freed). */
enum ibv_wc_status transport_req_gather(const struct transport_qp *t,
					const struct verbs_send_wqe *w, uint32_t off,
					struct rte_mbuf *m, uint32_t len, bool recheck);
/** Go back to comp_psn (go-back-N) at the next transport_req_tx(). */
void transport_req_retry(struct transport_qp *t);

/* transport_comp.c */
enum transport_verdict transport_comp_rx(struct transport_env *env, struct transport_qp *t,
					 const struct rte_mbuf *m, const struct droce_pkt *pkt);
void transport_comp_timeout(struct transport_env *env, struct transport_qp *t);
/** Complete the head WQE if it carries a local error and nothing precedes it. */
void transport_comp_local_err(struct transport_env *env, struct transport_qp *t);
/** Complete the done local operations (RK_LOCAL) at the head of the SQ. */
void transport_comp_locals(struct transport_qp *t);

/* transport_resp.c */
void transport_resp_reset(struct transport_qp *t);
/** A READ's memory was deregistered while its responses were being sent: NAK remote access
 *  error for @p psn, and the QP goes to ERR (as for a bad R_Key in a request). */
void transport_resp_access_err(struct transport_env *env, struct transport_qp *t, uint32_t psn);
enum transport_verdict transport_resp_rx(struct transport_env *env, struct transport_qp *t,
					 const struct rte_mbuf *m, const struct droce_pkt *pkt);

/* transport_unreliable_req.c, transport_uc.c, transport_ud.c, transport_unreliable_recv.c:
 * the unreliable transports (UC, UD) */
unsigned int transport_unreliable_tx(struct transport_env *env, struct transport_qp *t,
				     unsigned int budget);
bool transport_unreliable_pending(const struct transport_qp *t);
/** The port's active MTU in bytes (UD's message limit). */
uint32_t transport_port_mtu(struct droce_qp *qp);
/** Send the next packet of @p w; *@p last when it was its last. @return 0, -errno (retry). */
int transport_uc_send_packet(struct transport_env *env, struct transport_qp *t,
			     const struct verbs_send_wqe *w, bool *last);
int transport_ud_send_packet(struct transport_env *env, struct transport_qp *t,
			     const struct verbs_send_wqe *w, bool *last);
enum transport_verdict transport_uc_rx(struct transport_env *env, struct transport_qp *t,
				       const struct rte_mbuf *m, const struct droce_pkt *pkt);
enum transport_verdict transport_ud_rx(struct transport_env *env, struct transport_qp *t,
				       const struct rte_mbuf *m, const struct droce_pkt *pkt);
enum transport_verdict transport_unreliable_rx(struct transport_env *env,
					       struct transport_qp *t, const struct rte_mbuf *m,
					       const struct droce_pkt *pkt);
/** transport_recv_get(); none is counted in rx_no_recv_wr. */
const struct verbs_recv_wqe *transport_unreliable_recv_get(struct transport_env *env,
							   struct transport_qp *t);

/* transport_recv.c: receive WQEs of every transport */
/** The held receive WQE, or the next one of the RQ/SRQ (held from now on); NULL: none. */
const struct verbs_recv_wqe *transport_recv_get(struct transport_qp *t);
/** Copy @p len bytes into the held WQE at message offset @p off, from frame offset @p src of
 *  @p m, or from @p buf + @p src when @p m is NULL. The caller checked that they fit.
 *  @return IBV_WC_SUCCESS, IBV_WC_LOC_PROT_ERR (an SGE that names no writable MR). */
enum ibv_wc_status transport_recv_copy(const struct transport_qp *t, uint32_t off,
				       const struct rte_mbuf *m, uint32_t src, const void *buf,
				       uint32_t len);
/** Complete the held WQE with @p wc (@p se: solicited) and let it go. */
void transport_recv_complete(struct transport_qp *t, struct ibv_wc *wc, bool se);
/** Complete the held WQE of a SEND or WRITE with immediate (RC, UC) with @p st, @p op and
 *  @p byte_len; on success also what its last packet @p pkt carries (immediate, invalidated
 *  R_Key, solicited event). @p pkt may be NULL when @p st is an error. */
void transport_recv_complete_msg(struct transport_qp *t, enum ibv_wc_status st,
				 enum ibv_wc_opcode op,
				 uint32_t byte_len, const struct droce_pkt *pkt);
void transport_recv_fatal(struct transport_qp *t, enum ibv_wc_status st);

/** The 802.1Q tag of @p dev's frames at service level @p sl ([device] vlan, pcp): the
 *  device's VLAN id, the PCP it fixes or else the SL's low 3 bits (as Linux's RoCE drivers,
 *  which put ah_attr.sl in the tag's priority); no tag on a device without a VLAN. */
static inline void transport_flow_vlan(struct droce_flow *f, const struct droce_device *dev,
				       uint8_t sl)
{
	const struct droce_device_cfg *c = verbs_device_cfg(dev);

	f->vlan = c->vlan_on;
	f->vlan_tci = c->vlan_on ? (uint16_t)((c->pcp_fixed ? c->pcp : sl & 7u) << 13 |
					      c->vlan_id) : 0;
}

/* transport_dcqcn.c: congestion control (transport_dcqcn.h) */
/** The traffic class of a connected (RC, UC) QP's frames for @p tc (the AV's): its ECN field
 *  set to the configured ECT when the application left it Not-ECT and congestion control is
 *  on. UD frames stay as the AH says: no CNP answers a UD datagram's CE (transport_dcqcn.c). */
static inline uint8_t transport_tclass(const struct transport_qp *t, uint8_t tc)
{
	return (tc & DROCE_ECN_MASK) == 0 && t->cc.p != NULL && t->type != IBV_QPT_UD ?
	       tc | t->cc.p->ecn : tc;
}
bool transport_cc_tx_ok_slow(struct transport_env *env, struct transport_qp *t);
void transport_cc_sent_slow(struct transport_env *env, struct transport_qp *t, uint32_t bytes);
/** A frame for @p t arrived with ECN CE: the notification point (a CNP, or not). */
void transport_cc_rx_ce(struct transport_env *env, struct transport_qp *t,
			const struct droce_pkt *pkt);
/** A CNP for @p t: counted and given to the reaction point. @return the verdict. */
enum transport_verdict transport_cc_rx_cnp(struct transport_env *env, struct transport_qp *t,
					   const struct droce_pkt *pkt);
/** May the requester send a packet now (the DCQCN pacer)? One branch while unlimited. */
static inline bool transport_cc_tx_ok(struct transport_env *env, struct transport_qp *t)
{
	return likely(!t->cc.limited) || transport_cc_tx_ok_slow(env, t);
}
/** @p bytes of the QP left: charged to its pacer while it is limited. */
static inline void transport_cc_sent(struct transport_env *env, struct transport_qp *t,
				     uint32_t bytes)
{
	if (unlikely(t->cc.limited))
		transport_cc_sent_slow(env, t, bytes);
}

/* transport_resp_out.c */
void transport_resp_out_ack(struct transport_env *env, struct transport_qp *t, uint8_t syndrome,
			    uint32_t psn);
void transport_resp_out_res(struct transport_env *env, struct transport_qp *t, uint32_t res);
unsigned int transport_resp_tx(struct transport_env *env, struct transport_qp *t,
			       unsigned int budget);
static inline bool resp_pending(const struct transport_qp *t)
{
	return t->resp.out_head != t->resp.out_tail;
}

/* transport_rec.c: record @p m (owner, t->rec set); write the recording at ERR, once. */
void transport_rec_frame(struct transport_env *env, struct transport_qp *t,
			 const struct rte_mbuf *m, enum trec_dir dir);
void transport_rec_err(struct transport_qp *t);
/* ... an event that changes its state without a frame (t->rec set). */
void transport_rec_event(struct transport_qp *t, enum trec_event ev);

#endif /* TRANSPORT_PRIVATE_H */
