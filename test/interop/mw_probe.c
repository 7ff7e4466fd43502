/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 *
 * mw_probe: memory windows and remote invalidation over RC, checked step by step between two
 * verbs stacks (rxe <-> rxe, droce <-> rxe). An ordinary libibverbs + librdmacm program: it
 * knows nothing of droce. One binary, two roles:
 *
 *   mw_probe -s [-a BIND_ADDR] [-p PORT] [-t SECS] [-R]      server
 *   mw_probe -c SERVER_ADDR [-p PORT] [-t SECS] [-R]         client
 *
 * -t: how long each wait may take (default 20 s); -R: below.
 *
 * Every step prints "PASS <role>.<step>: ..." or "FAIL <role>.<step>: ..."; lines starting
 * "INFO" record what was seen without judging it. Exit 0 only when every step passed.
 *
 * Connection 0 (the good flow):
 *   server: a data MR (LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|MW_BIND); a type-2 MW bound by an
 *           IBV_WR_BIND_MW WR (rkey ibv_inc_rkey(old), a sub-range, REMOTE_WRITE|REMOTE_READ),
 *           completion IBV_WC_BIND_MW; a type-1 MW bound by ibv_bind_mw() (REMOTE_READ): its
 *           rkey changes, completion IBV_WC_BIND_MW. Both windows go to the client.
 *   client: binds a type-2 MW of its own; RDMA WRITE through the server's type-2 rkey (the
 *           server checks the bytes, and that nothing around the window changed); RDMA READ
 *           through the type-1 rkey (the client checks the bytes); SEND_WITH_INV naming the
 *           type-2 rkey: the server's receive has IBV_WC_WITH_INV and invalidated_rkey.
 *   server: binds the now free type-2 MW again with the next key (rxe binds a type-2 MW only
 *           when it is free, so this also proves the invalidation), IBV_WR_LOCAL_INV of that
 *           key (completion IBV_WC_LOCAL_INV), a third bind (free again); then SEND_WITH_INV
 *           naming the client's MW: the client's receive has IBV_WC_WITH_INV, and the client
 *           binds its MW again (free).
 *
 * Connections 1..5 (bad flows; each can end its QPs, so each has a connection of its own):
 * the server sets up a window and sends it with the status the client's request must end
 * with; the client makes the one request and checks its completion; once the client has
 * disconnected, the server checks how its receive WR ended and its memory.
 *
 * What rxe does (Debian 12's Linux 6.1 rdma_rxe, rdma-core 44's librxe; measured rxe <-> rxe
 * in the rig, mw_interop.py --pair rxe). droce must do the same, except where marked "rxe
 * deviates":
 *   write_after_local_inv  WRITE through a type-2 rkey after IBV_WR_LOCAL_INV: the requester
 *                          completes IBV_WC_REM_ACCESS_ERR, its QP in ERR; the responder's QP
 *                          is in ERR (no async event), its receive WR completes
 *                          IBV_WC_WR_FLUSH_ERR (when: varies, seen before and after the
 *                          client's disconnect, so not judged), its memory unchanged.
 *   read_without_rr        READ through a type-2 MW bound REMOTE_WRITE only: the same.
 *   send_inv_type1         SEND_WITH_INV naming a type-1 MW's rkey (o10-37.2.26: a type-1 MW
 *                          cannot be invalidated by a SEND): rxe ACKs it, so the requester
 *                          completes IBV_WC_SUCCESS and stays in RTS; the responder's receive
 *                          WR completes IBV_WC_REM_INV_REQ_ERR (wc_flags 0), its QP is in ERR
 *                          (no async event), its next receive WR IBV_WC_WR_FLUSH_ERR.
 *   write_below_mw         WRITE of 64 B ending where the window starts, inside the MR.
 *   write_past_mw_end      WRITE of 64 B starting 32 B before the window's end.
 *                          rxe deviates: it checks a request through an MW against the MR's
 *                          range only, so both WRITEs succeed, land in the MR outside the
 *                          window, and both QPs stay in RTS. IBA wants a remote access error
 *                          (the request is outside the window it names), as in
 *                          write_after_local_inv; droce must give that.
 *   good flow              rxe deviates: the receive of a SEND_WITH_INV has wc_flags 0x5: rxe
 *                          writes the kernel's IB_WC_WITH_INVALIDATE (1 << 2), which
 *                          libibverbs calls IBV_WC_IP_CSUM_OK, not IBV_WC_WITH_INV (1 << 3);
 *                          invalidated_rkey is right. droce must set IBV_WC_WITH_INV.
 * -R ("this end is rxe 6.1") makes an end expect rxe's deviations where it is the one that
 * deviates: as responder of the two range flows, as receiver of a SEND_WITH_INV.
 *
 * libibverbs leaves a type-2 MW's rkey to the application after an IBV_WR_BIND_MW (rxe's
 * provider names the MW by mw->rkey in the next bind WR): the probe sets mw->rkey to the new
 * rkey once the bind has completed, as an application must.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define BUF_SIZE	(64 * 1024)
#define NRECV		4
#define MW2_OFF		4096		/* the type-2 window: MR offset and length */
#define MW2_LEN		8192
#define MW1_OFF		16384		/* the type-1 window */
#define MW1_LEN		4096
#define BACKGROUND	0x5a		/* the server's bytes outside the windows */

enum msg_type { MSG_INFO = 1, MSG_RW_DONE, MSG_INV, MSG_BYE };

/* The control messages, SENT on the QP under test itself. Big-endian on the wire. */
struct msg {
	uint32_t type;
	uint32_t flow;
	uint32_t want;		/* bad flows: the status the requester must see */
	uint32_t rkey[2];
	uint32_t len[2];
	uint64_t addr[2];
};

struct conn {
	struct rdma_cm_id *id;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mmr;
	bool connected;
	struct msg slot[NRECV + 1];	/* NRECV receive slots, then the send slot */
};

enum flow { F_MAIN, F_WRITE_AFTER_INV, F_WRITE_BELOW, F_WRITE_PAST_END, F_READ_NO_RR,
	    F_SEND_INV_TYPE1, F_COUNT };
static const char *const flow_name[F_COUNT] = {
	"main", "write_after_local_inv", "write_below_mw", "write_past_mw_end",
	"read_without_rr", "send_inv_type1",
};

static const char *role;
static bool rxe61;		/* -R: this end is rxe (Linux 6.1): expect its deviations */
static int timeout_ms = 20000;
static int passed, failed;
static struct rdma_event_channel *ec;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;

static bool check(bool ok, const char *step, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static bool check(bool ok, const char *step, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s.%s: ", ok ? "PASS" : "FAIL", role, step);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
	return ok;
}

static void info(const char *fmt, ...)
{
	va_list ap;

	printf("INFO %s: ", role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static uint8_t pattern(size_t off, unsigned int seed)
{
	return (uint8_t)(off * 31 + (off >> 8) + seed * 77 + 1);
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(i, seed);
}

/* @return the offset of the first byte of @p that is not the pattern @seed (or @bg when
 * @seed is 0), or -1 when all are. */
static long mismatch(const uint8_t *p, size_t len, unsigned int seed, uint8_t bg)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (seed ? pattern(i, seed) : bg))
			return (long)i;
	return -1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------------ completions */

/* Wait up to @ms for one completion on @cq. @return 0, or -1 on a timeout. */
static int wait_wc_ms(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	double end = now_ms() + ms;

	while (now_ms() < end) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return -1;
		if (n == 1)
			return 0;
		usleep(200);
	}
	return -1;
}

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return wait_wc_ms(cq, wc, timeout_ms);
}

/* Wait for the completion of the send-queue WR just posted and check it: status @want and,
 * for a success, opcode @op (an error completion's opcode is undefined). */
static bool send_done(struct conn *c, const char *step, enum ibv_wc_opcode op,
		      enum ibv_wc_status want, const char *what)
{
	struct ibv_wc wc;

	if (wait_wc(c->scq, &wc))
		return check(false, step, "%s: no completion within %d ms", what, timeout_ms);
	if (wc.status != want)
		return check(false, step, "%s: status %s (%d, vendor_err %#x), want %s", what,
			     ibv_wc_status_str(wc.status), wc.status, wc.vendor_err,
			     ibv_wc_status_str(want));
	if (want == IBV_WC_SUCCESS && wc.opcode != op)
		return check(false, step, "%s: completion opcode %d, want %d", what, wc.opcode, op);
	return check(true, step, "%s: %s", what, ibv_wc_status_str(wc.status));
}

static int post_recv(struct conn *c, int i)
{
	struct ibv_sge sge = { (uintptr_t)&c->slot[i], sizeof(struct msg), c->mmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

/* Wait for one receive; copy its message to @m (host order) and post the slot again.
 * @return 0 (any status: the caller judges @wc), -1 on a timeout. */
static int recv_wc(struct conn *c, struct ibv_wc *wc, struct msg *m)
{
	if (wait_wc(c->rcq, wc))
		return -1;
	if (wc->status == IBV_WC_SUCCESS && wc->wr_id < NRECV) {
		const struct msg *s = &c->slot[wc->wr_id];

		m->type = be32toh(s->type);
		m->flow = be32toh(s->flow);
		m->want = be32toh(s->want);
		for (int i = 0; i < 2; i++) {
			m->rkey[i] = be32toh(s->rkey[i]);
			m->len[i] = be32toh(s->len[i]);
			m->addr[i] = be64toh(s->addr[i]);
		}
		post_recv(c, (int)wc->wr_id);
	}
	return 0;
}

static bool recv_msg(struct conn *c, const char *step, enum msg_type want, struct msg *m)
{
	struct ibv_wc wc;

	if (recv_wc(c, &wc, m))
		return check(false, step, "no message within %d ms", timeout_ms);
	if (wc.status != IBV_WC_SUCCESS || m->type != want)
		return check(false, step, "receive status %s, message type %u (want %u)",
			     ibv_wc_status_str(wc.status), wc.status ? 0 : m->type, want);
	return true;
}

/* rxe writes the kernel's IB_WC_WITH_INVALIDATE (1 << 2) into the user's wc_flags; libibverbs
 * calls that bit IBV_WC_IP_CSUM_OK and has IBV_WC_WITH_INV = 1 << 3. */
#define RXE_WC_WITH_INV		(1u << 2)

/* The receive of a SEND_WITH_INV naming @rkey: IBV_WC_WITH_INV (on rxe, with -R: its bit)
 * and invalidated_rkey. */
static void check_with_inv(const struct ibv_wc *wc, uint32_t rkey)
{
	unsigned int flag = rxe61 ? RXE_WC_WITH_INV : IBV_WC_WITH_INV;

	check((wc->wc_flags & flag) && wc->invalidated_rkey == rkey, "wc_with_inv",
	      "wc_flags %#x (%s %s), invalidated_rkey %#x (want %#x)", wc->wc_flags,
	      rxe61 ? "rxe's 1 << 2" : "IBV_WC_WITH_INV", wc->wc_flags & flag ? "set" : "NOT set",
	      wc->invalidated_rkey, rkey);
}

/* SEND (or SEND_WITH_INV naming @inv_rkey) a message, signaled, and wait for it. */
static bool send_msg(struct conn *c, const char *step, const struct msg *m,
		     enum ibv_wr_opcode op, uint32_t inv_rkey, enum ibv_wc_status want)
{
	struct msg *s = &c->slot[NRECV];
	struct ibv_sge sge = { (uintptr_t)s, sizeof(*s), c->mmr->lkey };
	struct ibv_send_wr wr = { .wr_id = 100, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	char what[96];
	int err;

	s->type = htobe32(m->type);
	s->flow = htobe32(m->flow);
	s->want = htobe32(m->want);
	for (int i = 0; i < 2; i++) {
		s->rkey[i] = htobe32(m->rkey[i]);
		s->len[i] = htobe32(m->len[i]);
		s->addr[i] = htobe64(m->addr[i]);
	}
	if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = inv_rkey;
	snprintf(what, sizeof(what), op == IBV_WR_SEND_WITH_INV ?
		 "SEND_WITH_INV naming rkey %#x" : "SEND (message %u)",
		 op == IBV_WR_SEND_WITH_INV ? inv_rkey : m->type);
	err = ibv_post_send(c->id->qp, &wr, &bad);
	if (err)
		return check(false, step, "%s: ibv_post_send: %s", what, strerror(err));
	return send_done(c, step, IBV_WC_SEND, want, what);
}

static bool rdma_op(struct conn *c, const char *step, enum ibv_wr_opcode op, void *local,
		    uint32_t len, uint64_t raddr, uint32_t rkey, enum ibv_wc_status want)
{
	struct ibv_sge sge = { (uintptr_t)local, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 200, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	char what[96];
	int err;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	snprintf(what, sizeof(what), "RDMA %s of %u B at %#llx rkey %#x",
		 op == IBV_WR_RDMA_READ ? "READ" : "WRITE", len, (unsigned long long)raddr, rkey);
	err = ibv_post_send(c->id->qp, &wr, &bad);
	if (err)
		return check(false, step, "%s: ibv_post_send: %s", what, strerror(err));
	return send_done(c, step, op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE,
			 want, what);
}

/* ------------------------------------------------------------------ memory windows */

/* Bind type-2 @mw to [buf + off, + len) with the rkey ibv_inc_rkey(mw->rkey) by an
 * IBV_WR_BIND_MW WR. On success mw->rkey becomes the new rkey: libibverbs leaves that to the
 * application for a bind WR (rxe's provider names the MW by mw->rkey in the next bind). */
static bool bind_type2(struct conn *c, const char *step, struct ibv_mw *mw, size_t off,
		       size_t len, unsigned int access)
{
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr wr = { .wr_id = 300, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	char what[96];
	int err;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)buf + off;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	snprintf(what, sizeof(what), "IBV_WR_BIND_MW type 2, rkey %#x -> %#x, %zu B at +%zu",
		 mw->rkey, rkey, len, off);
	err = ibv_post_send(c->id->qp, &wr, &bad);
	if (err)
		return check(false, step, "%s: ibv_post_send: %s", what, strerror(err));
	if (!send_done(c, step, IBV_WC_BIND_MW, IBV_WC_SUCCESS, what))
		return false;
	mw->rkey = rkey;
	return true;
}

/* Bind type-1 @mw with ibv_bind_mw(): the verb picks the new rkey. */
static bool bind_type1(struct conn *c, const char *step, struct ibv_mw *mw, size_t off,
		       size_t len, unsigned int access)
{
	struct ibv_mw_bind b = { .wr_id = 400, .send_flags = IBV_SEND_SIGNALED };
	uint32_t old = mw->rkey;
	char what[96];
	int err;

	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)buf + off;
	b.bind_info.length = len;
	b.bind_info.mw_access_flags = access;
	err = ibv_bind_mw(c->id->qp, mw, &b);
	if (err)
		return check(false, step, "ibv_bind_mw: %s", strerror(err));
	snprintf(what, sizeof(what), "ibv_bind_mw type 1, rkey %#x -> %#x, %zu B at +%zu",
		 old, mw->rkey, len, off);
	if (!check(mw->rkey != old, step, "%s: the rkey %s", what,
		   mw->rkey != old ? "changed" : "did not change"))
		return false;
	return send_done(c, step, IBV_WC_BIND_MW, IBV_WC_SUCCESS, what);
}

static bool local_inv(struct conn *c, const char *step, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = 500, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey }, *bad;
	char what[64];
	int err;

	snprintf(what, sizeof(what), "IBV_WR_LOCAL_INV of rkey %#x", rkey);
	err = ibv_post_send(c->id->qp, &wr, &bad);
	if (err)
		return check(false, step, "%s: ibv_post_send: %s", what, strerror(err));
	return send_done(c, step, IBV_WC_LOCAL_INV, IBV_WC_SUCCESS, what);
}

static struct ibv_mw *alloc_mw(const char *step, enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, type);

	check(mw != NULL, step, "ibv_alloc_mw type %d: %s", type, mw ? "ok" : strerror(errno));
	return mw;
}

/* ------------------------------------------------------------------ connections */

static struct rdma_cm_event *cm_event(enum rdma_cm_event_type want, const char *step)
{
	struct pollfd p = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, timeout_ms) != 1 || rdma_get_cm_event(ec, &ev)) {
		check(false, step, "no %s within %d ms", rdma_event_str(want), timeout_ms);
		return NULL;
	}
	if (ev->event != want) {
		check(false, step, "%s (status %d), want %s", rdma_event_str(ev->event),
		      ev->status, rdma_event_str(want));
		rdma_ack_cm_event(ev);
		return NULL;
	}
	return ev;
}

static bool cm_step(enum rdma_cm_event_type want, const char *step)
{
	struct rdma_cm_event *ev = cm_event(want, step);

	if (ev)
		rdma_ack_cm_event(ev);
	return ev != NULL;
}

/* The PD and the data MR on the first connection's device; the CQs, QP and message slots
 * of @c, with every receive slot posted. */
static bool conn_setup(struct conn *c, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = 16, .max_recv_wr = NRECV,
					       .max_send_sge = 1, .max_recv_sge = 1 } };
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND;

	c->id = id;
	if (!pd) {
		pd = ibv_alloc_pd(id->verbs);
		buf = aligned_alloc(4096, BUF_SIZE);
		if (!pd || !buf)
			return check(false, "setup", "ibv_alloc_pd: %s", strerror(errno));
		mr = ibv_reg_mr(pd, buf, BUF_SIZE, access);
		if (!check(mr != NULL, "reg_mr", "ibv_reg_mr %d B, LOCAL_WRITE|REMOTE_WRITE|"
			   "REMOTE_READ|MW_BIND: %s", BUF_SIZE, mr ? "ok" : strerror(errno)))
			return false;
	}
	c->scq = ibv_create_cq(id->verbs, 16, NULL, NULL, 0);
	c->rcq = ibv_create_cq(id->verbs, NRECV * 2, NULL, NULL, 0);
	c->mmr = ibv_reg_mr(pd, c->slot, sizeof(c->slot), IBV_ACCESS_LOCAL_WRITE);
	if (!c->scq || !c->rcq || !c->mmr)
		return check(false, "setup", "CQ or message MR: %s", strerror(errno));
	a.send_cq = c->scq;
	a.recv_cq = c->rcq;
	if (rdma_create_qp(id, pd, &a))
		return check(false, "setup", "rdma_create_qp: %s", strerror(errno));
	for (int i = 0; i < NRECV; i++)
		if (post_recv(c, i))
			return check(false, "setup", "ibv_post_recv failed");
	return true;
}

static void conn_close(struct conn *c, bool disconnect)
{
	if (disconnect) {
		rdma_disconnect(c->id);
		cm_step(RDMA_CM_EVENT_DISCONNECTED, "disconnect");
	}
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->mmr)
		ibv_dereg_mr(c->mmr);
	if (c->scq)
		ibv_destroy_cq(c->scq);
	if (c->rcq)
		ibv_destroy_cq(c->rcq);
	if (c->id)
		rdma_destroy_id(c->id);
	memset(c, 0, sizeof(*c));
}

static struct rdma_conn_param conn_param = { .responder_resources = 1,
					     .initiator_depth = 1, .retry_count = 7,
					     .rnr_retry_count = 7 };

static bool server_accept(struct conn *c, const char *step)
{
	struct rdma_cm_event *ev = cm_event(RDMA_CM_EVENT_CONNECT_REQUEST, step);
	struct rdma_cm_id *id;

	if (!ev)
		return false;
	id = ev->id;
	rdma_ack_cm_event(ev);
	if (!conn_setup(c, id))
		return false;
	if (rdma_accept(id, &conn_param))
		return check(false, step, "rdma_accept: %s", strerror(errno));
	c->connected = cm_step(RDMA_CM_EVENT_ESTABLISHED, step);
	return c->connected;
}

static bool client_connect(struct conn *c, struct addrinfo *dst, const char *step)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(ec, &id, NULL, RDMA_PS_TCP))
		return check(false, step, "rdma_create_id: %s", strerror(errno));
	c->id = id;
	if (rdma_resolve_addr(id, NULL, dst->ai_addr, 5000) ||
	    !cm_step(RDMA_CM_EVENT_ADDR_RESOLVED, step) || rdma_resolve_route(id, 5000) ||
	    !cm_step(RDMA_CM_EVENT_ROUTE_RESOLVED, step))
		return check(false, step, "address or route not resolved");
	if (!conn_setup(c, id))
		return false;
	if (rdma_connect(id, &conn_param))
		return check(false, step, "rdma_connect: %s", strerror(errno));
	c->connected = cm_step(RDMA_CM_EVENT_ESTABLISHED, step);
	return c->connected;
}

/* ------------------------------------------------------------------ the server */

static bool server_main(struct conn *c)
{
	struct ibv_mw *mw2 = alloc_mw("alloc_mw_type2", IBV_MW_TYPE_2);
	struct ibv_mw *mw1 = alloc_mw("alloc_mw_type1", IBV_MW_TYPE_1);
	struct msg m = { .type = MSG_INFO, .flow = F_MAIN }, peer;
	struct ibv_wc wc;
	uint32_t inv_rkey;
	long bad;
	bool ok = false;

	memset(buf, BACKGROUND, BUF_SIZE);
	fill(buf + MW1_OFF, MW1_LEN, 1);
	if (!mw2 || !mw1 ||
	    !bind_type2(c, "bind_type2_wr", mw2, MW2_OFF, MW2_LEN,
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) ||
	    !bind_type1(c, "bind_type1_verb", mw1, MW1_OFF, MW1_LEN, IBV_ACCESS_REMOTE_READ))
		goto out;
	m.rkey[0] = mw2->rkey, m.addr[0] = (uintptr_t)buf + MW2_OFF, m.len[0] = MW2_LEN;
	m.rkey[1] = mw1->rkey, m.addr[1] = (uintptr_t)buf + MW1_OFF, m.len[1] = MW1_LEN;
	if (!send_msg(c, "send_windows", &m, IBV_WR_SEND, 0, IBV_WC_SUCCESS) ||
	    !recv_msg(c, "recv_rw_done", MSG_RW_DONE, &peer))
		goto out;
	bad = mismatch(buf + MW2_OFF, MW2_LEN, 2, 0);
	check(bad < 0, "write_data", "the client's WRITE through the type-2 window: %s (first "
	      "bad byte at +%ld)", bad < 0 ? "every byte" : "wrong", bad);
	bad = mismatch(buf, MW2_OFF, 0, BACKGROUND);
	if (bad < 0)
		bad = mismatch(buf + MW2_OFF + MW2_LEN, MW1_OFF - MW2_OFF - MW2_LEN, 0, BACKGROUND);
	check(bad < 0, "write_bounds", "bytes around the window %s", bad < 0 ? "unchanged" :
	      "changed");
	check(peer.flow == 1, "read_checked_by_client", "the client %s the bytes it READ "
	      "through the type-1 window", peer.flow == 1 ? "verified" : "did NOT verify");

	/* The client's SEND_WITH_INV naming the type-2 rkey. */
	if (recv_wc(c, &wc, &m)) {
		check(false, "recv_send_with_inv", "no receive within %d ms", timeout_ms);
		goto out;
	}
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && m.type == MSG_INV,
	      "recv_send_with_inv", "receive status %s, opcode %d, message %u",
	      ibv_wc_status_str(wc.status), wc.opcode, m.type);
	check_with_inv(&wc, mw2->rkey);

	/* Free again: bind it with the next key, LOCAL_INV, bind once more. */
	if (!bind_type2(c, "rebind_type2_after_remote_inv", mw2, MW2_OFF, MW2_LEN,
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) ||
	    !local_inv(c, "local_inv_type2", mw2->rkey) ||
	    !bind_type2(c, "rebind_type2_after_local_inv", mw2, MW2_OFF, MW2_LEN,
			IBV_ACCESS_REMOTE_WRITE))
		goto out;

	/* The reverse: invalidate the client's type-2 MW. */
	inv_rkey = peer.rkey[0];
	m = (struct msg){ .type = MSG_INV, .flow = F_MAIN };
	if (!send_msg(c, "send_with_inv_to_client", &m, IBV_WR_SEND_WITH_INV, inv_rkey,
		      IBV_WC_SUCCESS) ||
	    !recv_msg(c, "recv_bye", MSG_BYE, &peer))
		goto out;
	ok = true;
out:
	if (mw2)
		check(ibv_dealloc_mw(mw2) == 0, "dealloc_mw_type2", "ibv_dealloc_mw");
	if (mw1)
		check(ibv_dealloc_mw(mw1) == 0, "dealloc_mw_type1", "ibv_dealloc_mw");
	return ok;
}

/* The bad WRITEs of 64 B: where they land (MR offset). */
static size_t bad_write_off(enum flow f)
{
	return f == F_WRITE_BELOW ? MW2_OFF - 64 : f == F_WRITE_PAST_END ? MW2_OFF + MW2_LEN - 32 :
	       MW2_OFF;
}

/* rxe 6.1 checks a request through an MW against the MR's range, not the window's: the WRITEs
 * outside the window but inside the MR succeed there (IBA o10-37.2.x wants a remote access
 * error; droce must give one, so only -R expects rxe's answer). */
static bool lax_bounds(enum flow f)
{
	return rxe61 && (f == F_WRITE_BELOW || f == F_WRITE_PAST_END);
}

static const char *qp_state_str(struct ibv_qp *qp)
{
	static const char *const name[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return "(ibv_query_qp failed)";
	return a.qp_state <= IBV_QPS_ERR ? name[a.qp_state] : "(unknown)";
}

/* Record the asynchronous events waiting on the device (never blocks). */
static void drain_async_events(const char *flow)
{
	struct ibv_context *ctx = pd->context;
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int n = 0;

	while (poll(&p, 1, 0) == 1 && ibv_get_async_event(ctx, &ev) == 0) {
		info("%s: async event %s", flow, ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		n++;
	}
	if (n == 0)
		info("%s: no async event", flow);
}

/* Poll the receive CQ until the client's DISCONNECTED arrives. @return 1 when a receive
 * completed first (into @wc), 0 when the disconnect came first, -1 when neither came. */
static int recv_until_disconnect(struct conn *c, struct ibv_wc *wc, const char *step)
{
	struct pollfd p = { .fd = ec->fd, .events = POLLIN };
	double end = now_ms() + timeout_ms;
	int got = 0;

	while (now_ms() < end && poll(&p, 1, 1) == 0)
		if (!got && ibv_poll_cq(c->rcq, 1, wc) == 1)
			got = 1;
	info("%s: the QP is in %s when the client's disconnect arrives", step,
	     qp_state_str(c->id->qp));
	if (!cm_step(RDMA_CM_EVENT_DISCONNECTED, step))
		return -1;
	return got;
}

/* A bad flow, server side: set the window up and send it with the status the client must
 * see; once the client has disconnected, judge how the receive WR ended and the memory. */
static bool server_bad(struct conn *c, enum flow f)
{
	bool type1 = f == F_SEND_INV_TYPE1, lax = lax_bounds(f);
	struct ibv_mw *mw = alloc_mw("bad_alloc_mw", type1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
	struct msg m = { .type = MSG_INFO, .flow = f };
	enum ibv_wc_status rwant = type1 ? IBV_WC_REM_INV_REQ_ERR : IBV_WC_WR_FLUSH_ERR;
	size_t off = type1 ? MW1_OFF : MW2_OFF, woff = bad_write_off(f);
	char step[64];
	struct ibv_wc wc;
	long bad = -1;
	int first;
	bool ok = false;

	memset(buf, BACKGROUND, BUF_SIZE);
	if (!mw)
		return false;
	if (type1) {
		if (!bind_type1(c, "bad_bind", mw, off, MW1_LEN, IBV_ACCESS_REMOTE_READ))
			goto out;
	} else {
		if (!bind_type2(c, "bad_bind", mw, off, MW2_LEN, IBV_ACCESS_REMOTE_WRITE |
				(f == F_READ_NO_RR ? 0 : IBV_ACCESS_REMOTE_READ)))
			goto out;
		if (f == F_WRITE_AFTER_INV && !local_inv(c, "bad_local_inv", mw->rkey))
			goto out;
	}
	m.rkey[0] = mw->rkey, m.addr[0] = (uintptr_t)buf + off;
	m.len[0] = type1 ? MW1_LEN : MW2_LEN;
	m.want = type1 || lax ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR;
	if (!send_msg(c, "bad_send_window", &m, IBV_WR_SEND, 0, IBV_WC_SUCCESS))
		goto out;
	snprintf(step, sizeof(step), "%s_receiver", flow_name[f]);
	first = recv_until_disconnect(c, &wc, step);
	if (first < 0)
		goto out;
	drain_async_events(flow_name[f]);
	if (first == 0 && wait_wc_ms(c->rcq, &wc, lax ? 1000 : timeout_ms) == 0)
		first = 2;
	if (lax) {
		check(first == 0, step, "rxe took the WRITE: %s", first ? "but a receive WR "
		      "completed" : "no receive WR completed, the QP stays up");
	} else if (first == 0) {
		check(false, step, "no receive completion, not even a flush");
	} else {
		info("%s: the receive WR completed %s the client's disconnect", flow_name[f],
		     first == 1 ? "before" : "after");
		check(wc.status == rwant, step, "the receive WR completed %s (want %s), wc_flags "
		      "%#x", ibv_wc_status_str(wc.status), ibv_wc_status_str(rwant), wc.wc_flags);
		if (type1 && wait_wc_ms(c->rcq, &wc, timeout_ms) == 0)
			check(wc.status == IBV_WC_WR_FLUSH_ERR, step, "the next receive WR "
			      "completed %s (want %s: the QP is in ERR)",
			      ibv_wc_status_str(wc.status), ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
	}
	/* Memory: untouched, or (lax) exactly the client's 64 bytes where it wrote them. */
	for (size_t i = 0; i < BUF_SIZE && bad < 0; i++) {
		bool w = lax && i >= woff && i < woff + 64;

		if (buf[i] != (w ? pattern(i - woff, 3) : BACKGROUND))
			bad = (long)i;
	}
	ok = check(bad < 0, step, "data MR %s (first unexpected byte at +%ld)", bad >= 0 ?
		   "WRONG" : lax ? "holds the client's 64 B outside the window, nothing else" :
		   "unchanged", bad);
out:
	check(ibv_dealloc_mw(mw) == 0, "bad_dealloc_mw", "ibv_dealloc_mw");
	return ok;
}

static int run_server(const char *bind_addr, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_flags = AI_PASSIVE }, *ai;
	struct rdma_cm_id *listen_id;

	if (getaddrinfo(bind_addr, port, &hints, &ai))
		return check(false, "listen", "bad address %s", bind_addr ? bind_addr : "*"), 1;
	if (rdma_create_id(ec, &listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen_id, ai->ai_addr) || rdma_listen(listen_id, 4))
		return check(false, "listen", "rdma_bind_addr/rdma_listen: %s", strerror(errno)), 1;
	freeaddrinfo(ai);
	printf("listening on %s:%s\n", bind_addr ? bind_addr : "*", port);
	fflush(stdout);
	for (int f = 0; f < F_COUNT; f++) {
		struct conn c = { 0 };
		char step[64];
		bool ok;

		snprintf(step, sizeof(step), "accept_%s", flow_name[f]);
		ok = server_accept(&c, step);
		if (ok && f == F_MAIN) {
			ok = server_main(&c);
			ok = ok && cm_step(RDMA_CM_EVENT_DISCONNECTED, "main_disconnected");
			conn_close(&c, false);
		} else if (ok) {
			ok = server_bad(&c, f);
			conn_close(&c, false);
		} else {
			conn_close(&c, false);
		}
		if (!ok) {
			check(false, "flows", "flow %s failed: the later flows are not run",
			      flow_name[f]);
			break;
		}
	}
	rdma_destroy_id(listen_id);
	return 0;
}

/* ------------------------------------------------------------------ the client */

static bool client_main(struct conn *c)
{
	struct ibv_mw *mw = alloc_mw("alloc_mw_type2", IBV_MW_TYPE_2);
	struct msg w, m = { .type = MSG_RW_DONE };
	struct ibv_wc wc;
	long bad;
	bool ok = false;

	memset(buf, 0, BUF_SIZE);
	if (!mw || !recv_msg(c, "recv_windows", MSG_INFO, &w) ||
	    !bind_type2(c, "bind_type2_wr", mw, 8192, 4096, IBV_ACCESS_REMOTE_WRITE))
		goto out;
	fill(buf, w.len[0], 2);
	if (!rdma_op(c, "write_type2", IBV_WR_RDMA_WRITE, buf, w.len[0], w.addr[0], w.rkey[0],
		     IBV_WC_SUCCESS) ||
	    !rdma_op(c, "read_type1", IBV_WR_RDMA_READ, buf + 32768, w.len[1], w.addr[1],
		     w.rkey[1], IBV_WC_SUCCESS))
		goto out;
	bad = mismatch(buf + 32768, w.len[1], 1, 0);
	check(bad < 0, "read_data", "the bytes READ through the type-1 window: %s (first bad "
	      "byte at +%ld)", bad < 0 ? "every byte" : "wrong", bad);
	m.flow = bad < 0;	/* in this message: the client's verdict on its READ */
	m.rkey[0] = mw->rkey, m.addr[0] = (uintptr_t)buf + 8192, m.len[0] = 4096;
	if (!send_msg(c, "send_rw_done", &m, IBV_WR_SEND, 0, IBV_WC_SUCCESS))
		goto out;
	m = (struct msg){ .type = MSG_INV };
	if (!send_msg(c, "send_with_inv_type2", &m, IBV_WR_SEND_WITH_INV, w.rkey[0],
		      IBV_WC_SUCCESS))
		goto out;

	/* The server's SEND_WITH_INV naming our window. */
	if (recv_wc(c, &wc, &m)) {
		check(false, "recv_send_with_inv", "no receive within %d ms", timeout_ms);
		goto out;
	}
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && m.type == MSG_INV,
	      "recv_send_with_inv", "receive status %s, opcode %d, message %u",
	      ibv_wc_status_str(wc.status), wc.opcode, m.type);
	check_with_inv(&wc, mw->rkey);
	if (!bind_type2(c, "rebind_type2_after_remote_inv", mw, 8192, 4096,
			IBV_ACCESS_REMOTE_WRITE))
		goto out;
	m = (struct msg){ .type = MSG_BYE };
	ok = send_msg(c, "send_bye", &m, IBV_WR_SEND, 0, IBV_WC_SUCCESS);
out:
	if (mw)
		check(ibv_dealloc_mw(mw) == 0, "dealloc_mw_type2", "ibv_dealloc_mw");
	return ok;
}

/* A bad flow, client side: the one request, and the status the server said it must end
 * with. */
static bool client_bad(struct conn *c, enum flow f)
{
	struct msg w, m = { .type = MSG_INV };
	enum ibv_wc_status want;
	char step[64];
	bool ok;

	snprintf(step, sizeof(step), "%s_requester", flow_name[f]);
	if (!recv_msg(c, "bad_recv_window", MSG_INFO, &w))
		return false;
	if (!check(w.flow == (uint32_t)f, "bad_flow", "server runs flow %u, want %u", w.flow, f))
		return false;
	want = (enum ibv_wc_status)w.want;
	fill(buf, 64, 3);
	switch (f) {
	case F_WRITE_AFTER_INV:
		ok = rdma_op(c, step, IBV_WR_RDMA_WRITE, buf, 64, w.addr[0], w.rkey[0], want);
		break;
	case F_WRITE_BELOW:
		ok = rdma_op(c, step, IBV_WR_RDMA_WRITE, buf, 64, w.addr[0] - 64, w.rkey[0], want);
		break;
	case F_WRITE_PAST_END:
		ok = rdma_op(c, step, IBV_WR_RDMA_WRITE, buf, 64, w.addr[0] + w.len[0] - 32,
			     w.rkey[0], want);
		break;
	case F_READ_NO_RR:
		ok = rdma_op(c, step, IBV_WR_RDMA_READ, buf, 64, w.addr[0], w.rkey[0], want);
		break;
	case F_SEND_INV_TYPE1:
		ok = send_msg(c, step, &m, IBV_WR_SEND_WITH_INV, w.rkey[0], want);
		break;
	default:
		return false;
	}
	info("%s: the QP is in %s after the request completed", step, qp_state_str(c->id->qp));
	return ok;
}

static int run_client(const char *server, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *ai;

	if (getaddrinfo(server, port, &hints, &ai))
		return check(false, "connect", "bad address %s", server), 1;
	for (int f = 0; f < F_COUNT; f++) {
		struct conn c = { 0 };
		char step[64];
		bool ok;

		snprintf(step, sizeof(step), "connect_%s", flow_name[f]);
		ok = client_connect(&c, ai, step);
		if (ok)
			ok = f == F_MAIN ? client_main(&c) : client_bad(&c, f);
		conn_close(&c, c.connected);
		if (!ok) {
			check(false, "flows", "flow %s failed: the later flows are not run",
			      flow_name[f]);
			break;
		}
	}
	freeaddrinfo(ai);
	return 0;
}

int main(int argc, char **argv)
{
	const char *server = NULL, *bind_addr = NULL, *port = "18600";
	bool is_server = false;
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "sc:a:p:t:Rh")) != -1) {
		switch (opt) {
		case 's': is_server = true; break;
		case 'R': rxe61 = true; break;
		case 'c': server = optarg; break;
		case 'a': bind_addr = optarg; break;
		case 'p': port = optarg; break;
		case 't': timeout_ms = atoi(optarg) * 1000; break;
		default:
			fprintf(stderr, "usage: %s -s [-a BIND_ADDR] [-p PORT] [-t SECS] [-R]\n"
				"       %s -c SERVER_ADDR [-p PORT] [-t SECS] [-R]\n"
				"-R: this end is rxe (Linux 6.1): expect its deviations\n",
				argv[0], argv[0]);
			return 2;
		}
	}
	if (is_server == (server != NULL) || timeout_ms <= 0) {
		fprintf(stderr, "%s: give exactly one of -s and -c ADDR (-h for help)\n", argv[0]);
		return 2;
	}
	role = is_server ? "server" : "client";
	ec = rdma_create_event_channel();
	if (!check(ec != NULL, "event_channel", "rdma_create_event_channel: %s",
		   ec ? "ok" : strerror(errno)))
		return 1;
	if (is_server)
		run_server(bind_addr, port);
	else
		run_client(server, port);
	if (mr)
		ibv_dereg_mr(mr);
	if (pd)
		ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(ec);
	printf("%s: %d passed, %d failed\n", role, passed, failed);
	return failed == 0 && passed > 0 ? 0 : 1;
}
