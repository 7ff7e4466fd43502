/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * droce connection manager: librdmacm's API on droce. If you know rdma_X, you know
 * droce_cm_X: same arguments, same semantics, same events and return conventions as the
 * librdmacm man pages (rdma_cm(7), rdma_*(3)), with rdma-core's own types from
 * <rdma/rdma_cma.h> (enum rdma_cm_event_type, enum rdma_port_space, struct rdma_conn_param,
 * struct rdma_ud_param, struct rdma_route, struct rdma_addrinfo) and droce's handles where
 * librdmacm has ibverbs ones (struct droce_cm_id names a struct droce_context, droce_qp, ...).
 *
 * Underneath is the InfiniBand CM (IBA chapter 12) over each device's GSI QP, as RoCE v2
 * carries it, with the RDMA CM conventions of Linux's rdma_cm on top (service IDs per port
 * space, the CMA header in the private data): either side of a connection can be Linux
 * (Soft-RoCE or a RoCE NIC) or droce. See doc/cm.md.
 *
 * Threads: every call is thread-safe. A service thread (started by the first channel, id or
 * address query; it lasts until the process exits, as librdmacm's device contexts do)
 * receives the MADs, runs the CM's timers and queues events; with an inline engine ([engine]
 * lcores empty) it also runs engine iterations, at least every [cm] inline_tick_ms. Calls
 * that wait (droce_cm_get_cm_event() on a blocking channel, the calls of a synchronous id)
 * block only the calling thread.
 *
 * Synchronous ids: an id created without a channel (@p channel NULL) gets a channel of its own
 * and works as librdmacm's: droce_cm_resolve_addr(), droce_cm_resolve_route(),
 * droce_cm_connect(), droce_cm_accept() (RC), droce_cm_disconnect() and
 * droce_cm_get_request() return when their event arrives; the event is kept in id->event and
 * acked by the next such call or by droce_cm_destroy_id().
 */
#ifndef DROCE_CM_H
#define DROCE_CM_H

#include <stdint.h>

#include <rdma/rdma_cma.h>

#include "droce.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An event channel (as struct rdma_event_channel): @c fd is readable while an event is
 *  queued; make it O_NONBLOCK for a non-blocking droce_cm_get_cm_event(). */
struct droce_cm_event_channel {
	int fd;
};

struct droce_cm_event;

/** A communication identifier (as struct rdma_cm_id, with droce handles). The application
 *  may read every field and set @c context; the CM writes the others. */
struct droce_cm_id {
	struct droce_context *verbs;	/**< the device's context once bound or resolved */
	struct droce_cm_event_channel *channel;	/**< a synchronous id's is its own */
	void *context;
	struct droce_qp *qp;
	struct rdma_route route;	/**< addresses; path_rec when the route is resolved */
	enum rdma_port_space ps;
	uint8_t port_num;
	struct droce_cm_event *event;	/**< synchronous ids: the last event */
	struct droce_comp_channel *send_cq_channel;
	struct droce_cq *send_cq;
	struct droce_comp_channel *recv_cq_channel;
	struct droce_cq *recv_cq;
	struct droce_srq *srq;
	struct droce_pd *pd;
	enum ibv_qp_type qp_type;
};

/** An event (as struct rdma_cm_event, with droce ids). Valid until acked. */
struct droce_cm_event {
	struct droce_cm_id *id;
	struct droce_cm_id *listen_id;	/**< CONNECT_REQUEST: the listener */
	enum rdma_cm_event_type event;
	int status;
	union {
		struct rdma_conn_param conn;
		struct rdma_ud_param ud;
	} param;
};

/* ---- Event channels ---- */

/**
 * rdma_create_event_channel(3).
 * @return A channel, or NULL with errno ENOMEM, EMFILE (no file descriptor), EIO (droce could
 *   not be initialised: configuration or EAL).
 */
struct droce_cm_event_channel *droce_cm_create_event_channel(void);
/**
 * rdma_destroy_event_channel(3). The ids using it must be destroyed first.
 * @return 0, or -1 with errno EINVAL (NULL), EBUSY (an id still uses it, or it is a
 *   synchronous id's own). librdmacm's function returns nothing: droce's says why it refused.
 */
int droce_cm_destroy_event_channel(struct droce_cm_event_channel *channel);

/**
 * rdma_get_cm_event(3): the next event of @p channel, oldest first. Blocks while there is
 * none, unless channel->fd is O_NONBLOCK. Each event must be acked with droce_cm_ack_cm_event().
 * @return 0, or -1 with errno EINVAL (NULL argument), EAGAIN (non-blocking, no event), EINTR.
 */
int droce_cm_get_cm_event(struct droce_cm_event_channel *channel, struct droce_cm_event **event);
/** rdma_ack_cm_event(3): free @p event. @return 0, or -1 with errno EINVAL (NULL). */
int droce_cm_ack_cm_event(struct droce_cm_event *event);
/** rdma_event_str(3): "RDMA_CM_EVENT_ADDR_RESOLVED"..., "UNKNOWN EVENT" when out of range. */
const char *droce_cm_event_str(enum rdma_cm_event_type event);

/* ---- Identifiers ---- */

/**
 * rdma_create_id(3). RDMA_PS_TCP and RDMA_PS_IB ids are for RC QPs, RDMA_PS_UDP and
 * RDMA_PS_IPOIB ones for UD QPs (id->qp_type).
 * @param channel  The channel its events go to, or NULL for a synchronous id.
 * @return 0, or -1 with errno EINVAL (NULL @p id, unknown port space), ENOMEM, EIO (droce
 *   could not be initialised).
 */
int droce_cm_create_id(struct droce_cm_event_channel *channel, struct droce_cm_id **id,
		       void *context, enum rdma_port_space ps);
/**
 * rdma_destroy_id(3): ends what is under way as Linux does (REJ for a request not answered or
 * a REP not confirmed, REJ "timeout" for a REQ not answered, DREQ for a connection, DREP for a
 * DREQ received), drops the id's events not yet returned (a listener's requests with them),
 * then waits until every event already returned for it is acked. The id's QP is the
 * application's: destroy it with droce_cm_destroy_qp() before, or droce_destroy_qp() after.
 * A connection goes on to timewait inside the CM, answering the peer's repeated DREQs.
 * @return 0, or -1 with errno EINVAL (NULL).
 */
int droce_cm_destroy_id(struct droce_cm_id *id);
/**
 * rdma_migrate_id(3): move @p id's events to @p channel (NULL: make it synchronous).
 * @return 0, or -1 with errno EINVAL, ENOMEM.
 */
int droce_cm_migrate_id(struct droce_cm_id *id, struct droce_cm_event_channel *channel);

/**
 * rdma_bind_addr(3): an IPv4 or IPv6 address of a droce device (or the wildcard: every
 * device), and a port (0: the CM picks a free one).
 * @return 0, or -1 with errno EINVAL (NULL, already bound, not AF_INET/AF_INET6),
 *   EADDRNOTAVAIL (an address neither a droce device nor the host has), ENODEV (an address of
 *   one of the host's interfaces, which are not droce devices: 127.0.0.1, as Linux answers for
 *   an interface without RDMA), EADDRINUSE (the port is bound on an overlapping address in the
 *   port space, and not shared with RDMA_OPTION_ID_REUSEADDR).
 */
int droce_cm_bind_addr(struct droce_cm_id *id, struct sockaddr *addr);
/**
 * rdma_resolve_addr(3): find the device that reaches @p dst_addr (from @p src_addr when
 * given, else the device whose address is on @p dst_addr's side), bind the id to it if it is
 * not bound, and resolve the peer's MAC (ARP, neighbour discovery). Event ADDR_RESOLVED, or
 * ADDR_ERROR (status -EHOSTUNREACH, -ETIMEDOUT after @p timeout_ms).
 * @return 0, or -1 with errno EINVAL (NULL, bad state, families differ), EADDRNOTAVAIL (no
 *   device for the source), ENODEV (no device reaches the destination), and for a synchronous
 *   id the event's error (EHOSTUNREACH, ETIMEDOUT).
 */
int droce_cm_resolve_addr(struct droce_cm_id *id, struct sockaddr *src_addr,
			  struct sockaddr *dst_addr, int timeout_ms);
/**
 * rdma_resolve_route(3): RoCE has no subnet administrator: the route is the resolved
 * addresses (one path record: GIDs, MTU, traffic class, hop limit). Event ROUTE_RESOLVED.
 * @return 0, or -1 with errno EINVAL (NULL, address not resolved).
 */
int droce_cm_resolve_route(struct droce_cm_id *id, int timeout_ms);
/**
 * rdma_listen(3): take connection requests (CONNECT_REQUEST events) for the bound address
 * and port; an unbound id is bound to the wildcard address and a free port first.
 * @param backlog  Requests queued and not yet returned by droce_cm_get_cm_event(); more are
 *   dropped unanswered, as Linux does (the sender retries). 0, less, or above 1024: 1024.
 * @return 0, or -1 with errno EINVAL (NULL, connecting, already listening), EADDRINUSE.
 */
int droce_cm_listen(struct droce_cm_id *id, int backlog);
/**
 * rdma_get_request(3): for a synchronous listener, wait for the next connection request and
 * return its new id; the request event is in (*id)->event (the next call on the new id, or its
 * destroy, acks it).
 * @return 0, or -1 with errno EINVAL (NULL, not a synchronous listener), EINTR.
 */
int droce_cm_get_request(struct droce_cm_id *listen, struct droce_cm_id **id);

/**
 * rdma_connect(3): send a REQ (RC) or SIDR_REQ (UD) to the resolved peer. The id's QP, if it
 * has one, supplies the QPN; otherwise @p conn_param->qp_num does. Events: ESTABLISHED,
 * REJECTED (status: the REJ reason), UNREACHABLE (status -ETIMEDOUT after the retries),
 * CONNECT_RESPONSE (RC without a QP on the id: move the QP yourself, then
 * droce_cm_establish()).
 * @return 0, or -1 with errno EINVAL (NULL, route not resolved, private data too long),
 *   ENOMEM, and for a synchronous id ECONNREFUSED (rejected), ETIMEDOUT.
 */
int droce_cm_connect(struct droce_cm_id *id, struct rdma_conn_param *conn_param);
/** rdma_establish(3): after CONNECT_RESPONSE, send the RTU. @return 0, or -1 with errno
 *  EINVAL (not after a CONNECT_RESPONSE). */
int droce_cm_establish(struct droce_cm_id *id);
/**
 * rdma_accept(3): answer a connection request (REP, or SIDR_REP for UD). The QP moves to
 * RTR and RTS now; ESTABLISHED follows the peer's RTU.
 * @return 0, or -1 with errno EINVAL (NULL, not a request, private data too long), and for
 *   a synchronous id the event's error.
 */
int droce_cm_accept(struct droce_cm_id *id, struct rdma_conn_param *conn_param);
/**
 * rdma_reject(3): answer a connection request with REJ (reason "consumer defined") or a
 * SIDR_REP (status "rejected"), with private data.
 * @return 0, or -1 with errno EINVAL (NULL, not a request, private data too long).
 */
int droce_cm_reject(struct droce_cm_id *id, const void *private_data, uint8_t private_data_len);
/**
 * rdma_disconnect(3): the QP moves to ERR, a DREQ goes to the peer; DISCONNECTED follows
 * its DREP (or the retries). Also rejects a request not yet accepted.
 * @return 0, or -1 with errno EINVAL (NULL, not connected).
 */
int droce_cm_disconnect(struct droce_cm_id *id);
/**
 * rdma_notify(3): IBV_EVENT_COMM_EST on the id's QP (a packet arrived before the RTU): the
 * passive side is established now (ESTABLISHED).
 * @return 0, or -1 with errno EINVAL (NULL, another event, no REP sent), EISCONN (established
 *   already).
 */
int droce_cm_notify(struct droce_cm_id *id, enum ibv_event_type event);

/* ---- Multicast (UD ids) ---- */

/**
 * rdma_join_multicast(3) on RoCE v2: the group's GID is its address (IPv4 ::ffff:a.b.c.d, or
 * the IPv6 group), there is no subnet administrator to ask, so MULTICAST_JOIN follows at once
 * with param.ud: the AH attributes for the group, qp_num 0xFFFFFF, qkey RDMA_UDP_QKEY, and
 * private_data = @p context. The id's QP, if it has one, is attached to the group.
 * @return 0, or -1 with errno EINVAL (NULL, not a UD id, not bound to a device, not a group
 *   address of the id's family), EADDRINUSE (joined already), and droce_attach_mcast()'s
 *   ENOMEM (the device's group limits).
 */
int droce_cm_join_multicast(struct droce_cm_id *id, struct sockaddr *addr, void *context);
/** rdma_leave_multicast(3): the QP is detached. @return 0, or -1 with errno EINVAL (NULL),
 *  EADDRNOTAVAIL (not joined). droce_cm_destroy_qp() and droce_cm_destroy_id() leave every
 *  group of the id. */
int droce_cm_leave_multicast(struct droce_cm_id *id, struct sockaddr *addr);

/* ---- QPs ---- */

/**
 * rdma_create_qp(3): a QP on @p pd (NULL: id->pd, the device's default PD that every id of
 * the device shares) moved to INIT (RC: remote access as the connection allows, see
 * droce_cm_init_qp_attr(); UD: Q_Key RDMA_UDP_QKEY, then RTR and RTS at once). A missing CQ is
 * created with a completion channel of its own (id->send_cq, recv_cq and their channels), as
 * librdmacm does; @p qp_init_attr gets the CQs and the granted capacities.
 * @return 0, or -1 with errno EINVAL (NULL, id not bound to a device, the id has a QP, PD or
 *   CQs of another context or device, QP type not the id's), ENOMEM, and the errors of
 *   droce_create_qp().
 */
int droce_cm_create_qp(struct droce_cm_id *id, struct droce_pd *pd,
		       struct droce_qp_init_attr *qp_init_attr);
/**
 * Give @p id a QP created elsewhere on its device (droce_create_qp(), in RESET): from now on
 * the CM moves it as it moves a QP of droce_cm_create_qp() (INIT now; RTR/RTS at
 * connect/accept; ERR at disconnect). @p qp NULL takes the id's QP away without destroying
 * it. droce's extension (the librdmacm drop-in uses it).
 * @return 0, or -1 with errno EINVAL (NULL id, QP of another device or type, id has a QP).
 */
int droce_cm_set_qp(struct droce_cm_id *id, struct droce_qp *qp);
/** rdma_destroy_qp(3): destroy the id's QP and the CQs and channels droce_cm_create_qp()
 *  created. */
void droce_cm_destroy_qp(struct droce_cm_id *id);
/**
 * rdma_init_qp_attr(3): the attributes for the QP's next transition (INIT, then RTR, then
 * RTS), for an application that moves its QP itself.
 * @return 0, or -1 with errno EINVAL (NULL, nothing to move to in this state).
 */
int droce_cm_init_qp_attr(struct droce_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask);

/* ---- Options and queries ---- */

/**
 * rdma_set_option(3): RDMA_OPTION_ID_TOS (uint8_t), RDMA_OPTION_ID_REUSEADDR (int),
 * RDMA_OPTION_ID_AFONLY (int), RDMA_OPTION_ID_ACK_TIMEOUT (uint8_t).
 * @return 0, or -1 with errno EINVAL (NULL, bad length, already bound for REUSEADDR/AFONLY),
 *   ENOSYS (RDMA_OPTION_IB_PATH and other options: RoCE has no SA path records).
 */
int droce_cm_set_option(struct droce_cm_id *id, int level, int optname, void *optval,
			size_t optlen);
/** rdma_get_src_port(3): the id's local port (network order), 0 when unbound. */
__be16 droce_cm_get_src_port(struct droce_cm_id *id);
/** rdma_get_dst_port(3): the peer's port (network order), 0 when none. */
__be16 droce_cm_get_dst_port(struct droce_cm_id *id);
/** The local address (rdma_get_local_addr()). */
static inline struct sockaddr *droce_cm_get_local_addr(struct droce_cm_id *id)
{
	return &id->route.addr.src_addr;
}
/** The peer address (rdma_get_peer_addr()). */
static inline struct sockaddr *droce_cm_get_peer_addr(struct droce_cm_id *id)
{
	return &id->route.addr.dst_addr;
}
/**
 * rdma_get_devices(3): the CM's context of every droce device, NULL-terminated.
 * @return The list (free with droce_cm_free_devices()), or NULL with errno ENOMEM, EIO.
 */
struct droce_context **droce_cm_get_devices(int *num_devices);
/** rdma_free_devices(3). */
void droce_cm_free_devices(struct droce_context **list);

/* ---- Counters ---- */

/** The CM's counters of a device: X(name, description). Every MAD received on the device's
 *  GSI QP is counted once in rx_mads and, when it is dropped, once by its reason. */
#define DROCE_CM_COUNTERS(X) \
	X(rx_mads,           "MADs received on the GSI QP") \
	X(tx_mads,           "MADs sent") \
	X(tx_retries,        "MADs sent again after their response timeout") \
	X(tx_port_up_resends, "MADs sent again at once when their port came back ACTIVE") \
	X(tx_no_buffer,      "MADs not sent: every send buffer in use (a retry or the peer recovers)") \
	X(timeouts,          "requests (REQ, REP, DREQ, SIDR_REQ) that ran out of retries") \
	X(rx_bad_completion, "receive completions in error or too short for a GRH and a MAD") \
	X(rx_bad_mad,        "MADs the parser rejected (by reason: rx_mad_err[])") \
	X(rx_get_answered,   "Get/Set requests answered with status 'unsupported method/attribute'") \
	X(rx_unmatched,      "CM messages for no connection, or one in a state that does not take them") \
	X(rx_duplicates,     "duplicate CM messages (answered again where the protocol says so)") \
	X(rx_bad_qpn,        "DREQs naming another QP than the connection's") \
	X(rx_bad_path,       "REQs whose addresses are not ours or do not match (REJ invalid GID)") \
	X(rx_bad_cma_hdr,    "REQ/SIDR_REQs of an IP port space with a bad CMA header (REJ consumer defined)") \
	X(rx_no_listener,    "REQ/SIDR_REQs for a service nobody listens on (REJ invalid service ID)") \
	X(rx_backlog_full,   "REQs beyond a listener's backlog (REJ no resources)") \
	X(rx_stale,          "REQ/REPs reusing a live connection's QP (REJ stale connection)")

/** Which CM messages a counter array is indexed by (rx_msg[], tx_msg[]). */
enum droce_cm_msg {
	DROCE_CM_MSG_CLASS_PORT_INFO, DROCE_CM_MSG_REQ, DROCE_CM_MSG_MRA, DROCE_CM_MSG_REJ,
	DROCE_CM_MSG_REP, DROCE_CM_MSG_RTU, DROCE_CM_MSG_DREQ, DROCE_CM_MSG_DREP,
	DROCE_CM_MSG_SIDR_REQ, DROCE_CM_MSG_SIDR_REP, DROCE_CM_MSG_NUM
};

/** Number of MAD rejection reasons (droce_wire_mad.h's enum droce_mad_err, OK included). */
#define DROCE_CM_MAD_ERR_NUM 8

struct droce_cm_counters {
#define DROCE_CM_COUNTER_FIELD(name, desc) uint64_t name;
	DROCE_CM_COUNTERS(DROCE_CM_COUNTER_FIELD)
#undef DROCE_CM_COUNTER_FIELD
	uint64_t rx_msg[DROCE_CM_MSG_NUM];	/**< parsed, by message */
	uint64_t tx_msg[DROCE_CM_MSG_NUM];	/**< sent (retries included), by message */
	uint64_t rx_mad_err[DROCE_CM_MAD_ERR_NUM];	/**< rx_bad_mad by parser reason */
};

/**
 * The CM counters of @p ctx's device (zero while the CM has not used the device).
 * @return 0, -EINVAL (NULL argument).
 */
int droce_cm_query_counters(struct droce_context *ctx, struct droce_cm_counters *out);
/** Name of counter @p i in DROCE_CM_COUNTERS order, or NULL past the end. */
const char *droce_cm_counter_name(unsigned int i);
/** Name of message @p m ("REQ", ...), or NULL. */
const char *droce_cm_msg_name(enum droce_cm_msg m);

/* ---- Address information and endpoints ---- */

/**
 * rdma_getaddrinfo(3): numeric or named hosts and services resolved with getaddrinfo(3),
 * for RDMA_PS_TCP (RC) unless @p hints say otherwise; RAI_PASSIVE gives a source address to
 * listen on. The results are droce's (free with droce_cm_freeaddrinfo()).
 * @return 0; -1 with errno EINVAL (no node, service or hints; an AF_IB family), ENOMEM, EIO;
 *   or getaddrinfo(3)'s EAI_* code, as librdmacm returns it (print it with gai_strerror()).
 */
int droce_cm_getaddrinfo(const char *node, const char *service,
			 const struct rdma_addrinfo *hints, struct rdma_addrinfo **res);
void droce_cm_freeaddrinfo(struct rdma_addrinfo *res);
/**
 * rdma_create_ep(3): a synchronous id for @p res: bound and listening-ready (RAI_PASSIVE) or
 * with its address and route resolved; with @p qp_init_attr, its QP (on @p pd).
 * @return 0, or -1 with errno as the calls it makes.
 */
int droce_cm_create_ep(struct droce_cm_id **id, struct rdma_addrinfo *res, struct droce_pd *pd,
		       struct droce_qp_init_attr *qp_init_attr);
/** rdma_destroy_ep(3): the QP, the CQs droce_cm_create_qp() made, and the id. */
void droce_cm_destroy_ep(struct droce_cm_id *id);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_CM_H */
