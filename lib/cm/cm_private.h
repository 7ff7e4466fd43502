/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * lib/cm internals (not installed).
 *
 * One CM per process (struct cm_global, @c cm_svc): every id, channel, agent and timer is under
 * cm_svc.lock, which no engine lcore ever takes. The service thread (cm_service.c) waits on the
 * agents' completion channels and a wake-up eventfd, receives MADs (cm_agent.c), hands them to
 * the connection state machines (cm_conn.c for RC, cm_sidr.c for UD), fires the timers (MAD
 * retransmission, timewait, address resolution) and queues events (cm_event.c). API calls take
 * the lock, change state, send MADs and wake the thread when they armed a timer.
 *
 * Lock order: cm_svc.lock > (verbs and engine calls: droce_modify_qp() and friends, which may wait
 * for an engine iteration; no engine lcore waits for cm_svc.lock, so this cannot deadlock).
 */
#ifndef CM_PRIVATE_H
#define CM_PRIVATE_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_log.h>

#include "droce_cm.h"
#include "droce_config.h"
#include "droce_wire_mad.h"

extern int cm_logtype;
#define CM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, cm_logtype, "droce cm: " fmt "\n", ##__VA_ARGS__)

#define container_of_cm(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

/** Receive and send buffers of a device's GSI QP; a slot holds a 40-byte GRH and a MAD. */
#define CM_RECV_SLOTS 256u
#define CM_SEND_SLOTS 128u
#define CM_SLOT 512u
#define CM_GRH_LEN 40u

/** Ids of the process: local communication IDs are slot | (generation << CM_ID_BITS). */
#define CM_ID_BITS 14u
#define CM_MAX_IDS (1u << CM_ID_BITS)

/* ---- Configuration ([cm] section; defaults are Linux rdma_cm's) ---- */
struct cm_config {
	uint8_t response_timeout;	/**< REQ remote/local CM response timeout (20) */
	uint8_t max_retries;		/**< REQ max CM retries (15) */
	uint8_t packet_life_time;	/**< path packet life time (18) */
	unsigned int resolve_poll_ms;	/**< neighbour poll interval during resolve_addr (10) */
	unsigned int inline_tick_ms;	/**< inline engine: drive it at least this often (1) */
};

/* ---- Agents: the GSI QP of a device (cm_agent.c) ---- */

/** What a file descriptor in the service thread's epoll set stands for (its data.ptr; NULL is
 *  the wake-up eventfd). */
struct cm_source {
	enum { CM_SRC_CQ, CM_SRC_ASYNC } kind;	/**< the agent's completion channel, async fd */
	struct cm_agent *agent;
};

struct cm_agent {
	struct droce_device *dev;
	struct droce_context *ctx;
	struct droce_pd *pd;		/**< the GSI QP's */
	struct droce_pd *user_pd;	/**< the ids' default PD (id->pd), as librdmacm's */
	struct droce_comp_channel *chan;
	struct droce_cq *cq;
	struct droce_qp *qp;
	struct droce_mr *mr;
	uint8_t *buf;			/**< CM_RECV_SLOTS + CM_SEND_SLOTS slots */
	uint32_t send_free[CM_SEND_SLOTS];
	uint32_t n_send_free;
	struct droce_ah *send_ah[CM_SEND_SLOTS];	/**< held until the send completes */
	__be64 guid;
	enum ibv_mtu mtu;		/**< the device's active MTU */
	union ibv_gid gid[DROCE_MAX_GID];
	struct droce_cm_counters cnt;
	struct cm_source cq_src, async_src;	/**< its fds' epoll data */
};

/** Where a MAD goes: the peer's GID from our GID, its QP (1 but for GetResp). */
struct cm_dest {
	struct cm_agent *agent;
	union ibv_gid dgid;
	uint8_t sgid_index;
	uint8_t traffic_class;
	uint8_t sl;		/**< the path's: the MADs' 802.1Q priority ([device] pcp = sl) */
	uint32_t flow_label;
	uint32_t qpn;
};

/* ---- Events and channels (cm_event.c) ---- */

struct cm_id;

struct cm_event {
	TAILQ_ENTRY(cm_event) next;
	struct droce_cm_event pub;
	struct cm_id *id;		/**< whose delivered/acked counts it moves */
	uint8_t pdata[DROCE_MAD_DATA_LEN];
};
TAILQ_HEAD(cm_event_list, cm_event);

/**
 * An event channel. Its eventfd is efd, written for each event and read by
 * droce_cm_get_cm_event(); pub.fd, the application's, is a duplicate of it (one open file,
 * so O_NONBLOCK set on either holds for both). Destroying the channel closes pub.fd, as
 * librdmacm closes its fd, but the channel lives on in cm_svc.grave (efd open, nothing ever
 * written): a thread still inside droce_cm_get_cm_event(), or entering it just after, keeps
 * waiting for an event that never comes, as a thread in read() on a closed ucma fd does,
 * instead of touching freed memory. A buried channel is freed when CM_GRAVE later channels
 * have been buried, if no thread is reading it then.
 */
struct cm_chan {
	struct droce_cm_event_channel pub;
	struct cm_event_list events;
	int efd;
	unsigned int n_ids;		/**< ids whose events come here */
	unsigned int readers;		/**< threads in droce_cm_get_cm_event() on it */
	bool priv;			/**< a synchronous id's own channel */
	bool buried;			/**< destroyed by the application */
};

#define CM_GRAVE 16

/* ---- Ids ---- */

/** rdma_cm states of an id (what may be called now). */
enum cm_state {
	CM_IDLE,
	CM_ADDR_QUERY,		/**< resolve_addr under way */
	CM_ADDR_RESOLVED,
	CM_ROUTE_RESOLVED,
	CM_ADDR_BOUND,
	CM_LISTEN,
	CM_CONNECT,		/**< connecting (active) or a request not yet answered (passive) */
	CM_CONNECTED,
	CM_DISCONNECT,		/**< disconnected (DREQ/DREP done, or error) */
};

/** IB CM states of a connection (IBA 12.9.6, Linux's ib_cm_state). */
enum cm_ib_state {
	IB_IDLE,
	IB_REQ_SENT,
	IB_REQ_RCVD,		/**< CONNECT_REQUEST announced (deferred MRA: see cm_conn.c) */
	IB_MRA_REQ_RCVD,
	IB_REP_SENT,
	IB_REP_RCVD,		/**< CONNECT_RESPONSE announced: the application sends the RTU */
	IB_MRA_REP_RCVD,
	IB_ESTABLISHED,
	IB_DREQ_SENT,
	IB_DREQ_RCVD,
	IB_TIMEWAIT,
	IB_SIDR_REQ_SENT,
	IB_SIDR_REQ_RCVD,
};

/** A multicast group a UD id joined (cm_mcast.c). */
struct cm_mc {
	struct cm_mc *next;
	union ibv_gid mgid;
	void *context;
	struct droce_qp *qp;		/**< attached to the group, or NULL */
};

/** What an id's armed timer is for. */
enum cm_timer { CM_T_NONE, CM_T_MAD, CM_T_RESOLVE, CM_T_TIMEWAIT };

struct cm_id {
	struct droce_cm_id pub;
	TAILQ_ENTRY(cm_id) next;	/**< in cm_svc.ids */
	struct cm_chan *chan;
	enum cm_state state;
	enum cm_ib_state ib;
	struct cm_agent *agent;		/**< bound device (NULL: wildcard or unbound) */
	bool bound;
	bool reuseaddr, afonly, afonly_set;
	uint8_t tos;
	bool tos_set;
	uint8_t ack_timeout;		/**< RDMA_OPTION_ID_ACK_TIMEOUT (0: from the path) */
	/* Listening */
	struct cm_id *listener;		/**< passive: the listener it came from */
	int backlog;
	unsigned int pending_reqs;	/**< listener: requests not yet accepted/rejected */
	/* Resolution */
	uint64_t resolve_deadline;	/**< ms */
	struct ibv_sa_path_rec path;
	uint8_t sgid_index;
	/* Connection */
	uint32_t local_id, remote_id;
	uint64_t tid;
	__be64 remote_guid;
	uint64_t service_id;
	uint32_t remote_qpn, remote_qkey;
	uint32_t local_qpn;		/**< ours, as the REQ or REP gave it (Linux's local_qpn) */
	uint32_t sq_psn, rq_psn;
	uint8_t responder_resources, initiator_depth;
	uint8_t retry_count, rnr_retry_count, flow_control, srq;
	uint8_t local_ack_timeout;	/**< our QP's timeout (5 bits) */
	uint8_t remote_cm_timeout, max_cm_retries;	/**< for the REP/DREQ we send */
	enum ibv_mtu mtu;
	struct cm_dest dest;
	uint32_t sidr_request_id;
	bool cq_owned;			/**< ... and the CQs in pub (none given) */
	/* droce_cm_create_ep() of a passive endpoint: each request's QP */
	bool ep_qp;
	struct droce_qp_init_attr ep_attr;
	struct droce_pd *ep_pd;
	/* The outstanding MAD and its timer */
	enum cm_timer timer;
	uint64_t deadline;		/**< ms, CLOCK_MONOTONIC */
	unsigned int timeout_ms;	/**< of the outstanding MAD (an MRA stretches it) */
	unsigned int conn_timeout_ms;	/**< the REQ's (active) or REP's (passive): the DREQ's */
	unsigned int retries;		/**< left */
	bool mad_valid;
	struct droce_cm_mad mad;	/**< the MAD that is retransmitted (or re-answered) */
	struct droce_cm_mad last_reply;	/**< RTU, MRA or DREP sent, re-sent on duplicates */
	bool last_reply_valid;
	struct cm_mc *mc;		/**< groups joined */
	/* Events */
	uint32_t ev_delivered, ev_acked;
	bool destroying;
	pthread_cond_t cond;		/**< an event of it was acked */
};

static inline struct cm_id *to_cid(struct droce_cm_id *id)
{
	return container_of_cm(id, struct cm_id, pub);
}

/* ---- The process's CM (cm_service.c) ---- */

struct cm_timewait;

struct cm_global {
	pthread_mutex_t lock;
	bool running;
	bool stop;
	pthread_t thread;
	int epfd;
	int wakefd;
	bool inline_engine;
	struct cm_config cfg;
	struct cm_agent *agent[DROCE_MAX_DEVICES];
	TAILQ_HEAD(, cm_id) ids;
	struct cm_id *by_local[CM_MAX_IDS];
	uint32_t next_slot;
	uint32_t gen;
	uint32_t sidr_next;
	uint64_t rand_state;	/**< cm_random()'s */
	struct cm_chan *grave[CM_GRAVE];	/**< destroyed channels (struct cm_chan) */
	unsigned int grave_next;
};

extern struct cm_global cm_svc;

/** The end of a public call made under cm_svc.lock: release it and return 0 (@p rc 0) or -1
 *  with errno @p rc. */
static inline int cm_unlock_return(int rc)
{
	pthread_mutex_unlock(&cm_svc.lock);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

/* cm_service.c */
/** Initialise droce and start the CM and its thread, once (they last until exit). Called
 *  without cm_svc.lock. @return 0, -errno. */
int cm_start(void);
/** The CLOCK_MONOTONIC time in ms. */
uint64_t cm_now_ms(void);
/** Wake the service thread (a timer changed). cm_svc.lock held or not. */
void cm_wake(void);
/** 4.096 us * 2^@p t in ms, as Linux's cm_convert_to_ms(): 1 << max(t - 8, 0). */
unsigned int cm_convert_ms(uint8_t t);
/** A pseudo-random 32-bit number (PSNs, ports, comm IDs), from the CM's own generator (the
 *  application's rand() sequence is left alone). Called with cm_svc.lock held. */
uint32_t cm_random(void);
/** Linux's cm_ack_timeout(): the QP timeout from a CA ACK delay and a packet life time. */
uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time);
/** Arm @p id's timer (@p what) for @p ms from now. */
void cm_timer_arm(struct cm_id *id, enum cm_timer what, unsigned int ms);
void cm_timer_stop(struct cm_id *id);

/* cm_agent.c (cm_svc.lock held) */
/** The agent of @p dev, set up on first use. @return it, or NULL with rte_errno-like errno. */
struct cm_agent *cm_agent_get(struct droce_device *dev);
/** Free every agent (the last user is gone). */
void cm_agents_free(void);
/** Poll @p a's CQ: receive MADs (dispatched), complete sends, repost. @return work done. */
unsigned int cm_agent_poll(struct cm_agent *a);
/** A received GSI message: the 40-byte GRH verbs wrote, then the MAD, @p len bytes in all,
 *  from QP @p src_qp. Counted, checked, answered or handed to the state machines. (The
 *  receive path; also the entry of the CM fuzz target.) */
void cm_agent_input(struct cm_agent *a, const uint8_t *grh, uint32_t len, uint32_t src_qp);
/** Send @p mad to @p d. @return 0, -ENOBUFS (no send slot: counted), -errno. */
int cm_mad_send(const struct cm_dest *d, const struct droce_cm_mad *mad);
/** Send id->mad to id->dest and arm its timer to resend it every @p ms, @p retries times
 *  (cm_mad_retry()). */
void cm_mad_send_tracked(struct cm_id *id, unsigned int ms, unsigned int retries);
/** @p id's MAD timer fired. @return true when there is nothing more to do (no MAD tracked,
 *  or id->mad resent with one retry fewer); false when the retries are spent: counted as a
 *  timeout and the MAD dropped from tracking, for the caller to fail the id. */
bool cm_mad_retry(struct cm_id *id);
/** @p a's port came back ACTIVE: send every MAD tracked on it again now, timers restarted,
 *  retries kept (a MAD sent while the link was down was lost: do not wait out its timeout).
 *  @return how many were sent. */
unsigned int cm_mad_resend_port_up(struct cm_agent *a);
/** Read @p a's async events (non-blocking): PORT_ACTIVE resends its MADs. */
void cm_agent_async(struct cm_agent *a);
/** The GID index of @p gid in @p a's table, or -1. */
int cm_agent_gid_index(const struct cm_agent *a, const union ibv_gid *gid);
/** The agent whose device has @p gid, or NULL. */
struct cm_agent *cm_agent_by_gid(const union ibv_gid *gid);
/** Fill a CM MAD header (method SEND, class version 2) for @p attr with @p tid. */
void cm_mad_hdr(struct droce_cm_mad *m, uint16_t attr, uint64_t tid);

/* cm_event.c (cm_svc.lock held) */
/** Queue an event for @p id (on its channel); @p pdata/@p len are copied.
 *  @return the event (param to be filled by the caller), or NULL (no memory: logged). */
struct cm_event *cm_event_queue(struct cm_id *id, enum rdma_cm_event_type type, int status,
				const void *pdata, uint8_t len);
/** Drop @p id's events not yet returned. */
void cm_event_forget(struct cm_id *id);
/** Synchronous ids: wait for the id's next event (acking the previous one) and turn its
 *  status into an errno as librdmacm does. Called without cm_svc.lock. @return 0, -1 + errno. */
int cm_sync_wait(struct cm_id *id);
struct cm_chan *cm_chan_new(bool priv);
/** Free @p c now (a synchronous id's channel, or one never returned). */
void cm_chan_free(struct cm_chan *c);

/* cm_id.c (cm_svc.lock held) */
struct cm_id *cm_id_new(struct cm_chan *chan, void *context, enum rdma_port_space ps);
void cm_id_free(struct cm_id *id);
/** Give @p id a local communication ID (a slot in cm_svc.by_local). @return 0, -ENOMEM. */
int cm_id_set_local(struct cm_id *id);
struct cm_id *cm_id_by_local(uint32_t local_id);
/** The listener for @p ps / @p port on device @p a for destination @p dst (a GID), or NULL. */
struct cm_id *cm_listener_find(uint16_t ps, uint16_t port, const struct cm_agent *a,
			       const uint8_t dst[16]);
/** Fill @p id's address from GIDs and ports (passive side). */
void cm_id_set_addrs(struct cm_id *id, const uint8_t src[16], uint16_t sport,
		     const uint8_t dst[16], uint16_t dport);
/** The GID of a socket address, and back. */
bool cm_sockaddr_gid(const struct sockaddr *sa, union ibv_gid *gid);
/** The port space of @p id (its service ID's middle 16 bits). */
uint16_t cm_id_ps(const struct cm_id *id);
/** Address resolution step (timer): poll the neighbour, deliver ADDR_RESOLVED/ERROR. */
void cm_resolve_poll(struct cm_id *id);
/** Build the path record of @p id (its route) from its addresses and agent. */
/** The service level of a RoCE path at type of service @p tos (Linux's mapping). */
uint8_t cm_tos_to_sl(uint8_t tos);
void cm_path_fill(struct cm_id *id);

/* cm_conn.c (cm_svc.lock held) */
void cm_rx_req(struct cm_agent *a, const struct cm_dest *from, const struct droce_cm_mad *m);
void cm_rx_rep(struct cm_agent *a, const struct cm_dest *from, const struct droce_cm_mad *m);
void cm_rx_rtu(struct cm_agent *a, const struct droce_cm_mad *m);
void cm_rx_mra(struct cm_agent *a, const struct droce_cm_mad *m);
void cm_rx_rej(struct cm_agent *a, const struct droce_cm_mad *m);
void cm_rx_dreq(struct cm_agent *a, const struct cm_dest *from, const struct droce_cm_mad *m);
void cm_rx_drep(struct cm_agent *a, const struct droce_cm_mad *m);
/** @p id's MAD timer fired. */
void cm_conn_timeout(struct cm_id *id);
/** @p id's timewait is over: TIMEWAIT_EXIT, or free it if it was destroyed meanwhile. */
void cm_conn_timewait_end(struct cm_id *id);
/** The id goes away: answer or end what is under way (REJ, DREQ), forget it. */
void cm_conn_abandon(struct cm_id *id);

/** A new id for a request on listener @p l from device @p a: our address @p ours, the peer's
 *  @p theirs and its port. @return it (local ID set), or NULL. */
struct cm_id *cm_child_new(struct cm_id *l, struct cm_agent *a, const uint8_t ours[16],
			   const uint8_t theirs[16], uint16_t their_port);

/* cm_addrinfo.c (without cm_svc.lock) */
/** After droce_cm_get_request(): the QP a passive endpoint's request gets. @return 0, -1. */
int cm_ep_request_qp(struct cm_id *l, struct cm_id *id);

/* cm_sidr.c (cm_svc.lock held) */
void cm_rx_sidr_req(struct cm_agent *a, const struct cm_dest *from, const struct droce_cm_mad *m);
void cm_rx_sidr_rep(struct cm_agent *a, const struct droce_cm_mad *m);
int cm_sidr_connect(struct cm_id *id, const struct rdma_conn_param *p);
int cm_sidr_answer(struct cm_id *id, const struct rdma_conn_param *p, bool accept,
		   const void *pdata, uint8_t len);
void cm_sidr_timeout(struct cm_id *id);

/* cm_mcast.c (cm_svc.lock held) */
/** Leave every group @p id joined (its QP detached). */
void cm_mcast_leave_all(struct cm_id *id);

/* cm_qp.c (cm_svc.lock held) */
/** Where the peer's CM is (id->dest), for an id whose route is set. */
void cm_dest_from_path(struct cm_id *id);
/** The address vector to the peer over @p id's route (GRH, port 1). */
void cm_ah_from_path(const struct cm_id *id, struct ibv_ah_attr *ah);
/** Move the id's QP to @p state with the connection's attributes. @return 0, errno. */
int cm_qp_to(struct cm_id *id, enum ibv_qp_state state);
/** The attributes for @p state (droce_cm_init_qp_attr()). @return 0, EINVAL. */
int cm_qp_attr(struct cm_id *id, enum ibv_qp_state state, struct ibv_qp_attr *attr, int *mask);
/** @p id holds @p qp (id->pub.qp) until it lets go or the QP is destroyed, by whatever call:
 *  then every id that holds it forgets it (verbs_qp_set_release()). */
void cm_qp_hold(struct cm_id *id, struct droce_qp *qp);
/** @p id lets go of its QP (none: nothing), which is destroyed too if @p destroy. */
void cm_qp_drop(struct cm_id *id, bool destroy);

#endif /* CM_PRIVATE_H */
