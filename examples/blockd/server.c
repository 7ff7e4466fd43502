/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The block server. What a storage daemon does on RDMA, on droce's own API:
 *
 * - memory registered once: the disk (the data source and sink of every RDMA operation), the
 *   pool of request buffers, each worker's response buffers; nothing is registered per I/O;
 * - one shared receive queue (SRQ) for every connection, so that receive buffers scale with
 *   the load, not with the number of clients;
 * - W worker threads, each with its own CQ and the connections the CM thread gave it
 *   (round-robin); a worker busy-polls its CQ, or with -e sleeps on a completion channel;
 * - a READ is answered with an RDMA WRITE into the client's buffer and the response SEND
 *   posted behind it (RC delivers them in order: the data is there when the response is);
 *   a WRITE with an RDMA READ from the client's buffer, and the response once it completed;
 * - graceful disconnect: on DISCONNECTED the CM thread answers, the QP is in ERR and flushes,
 *   and the connection is destroyed once nothing of it is in flight.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockd.h"

#define MAX_CONNS 64u
#define SLOTS (MAX_CONNS * BLK_DEPTH)	/* responses in flight, per worker */
#define SRQ_DEPTH SLOTS		/* every request a client may have outstanding */
#define WR_SEND 0x100000000ull		/* wr_id flags over a slot number */
#define WR_READ 0x200000000ull

struct conn {
	struct droce_cm_id *id;
	struct worker *w;
	uint32_t qpn;
	unsigned int inflight;		/* slots held (worker's lock) */
	bool closing;
};

struct slot {
	struct conn *c;
	uint64_t tag;
};

struct worker {
	struct srv *srv;
	pthread_t thread;
	pthread_mutex_t lock;		/* conns[], slots, inflight; held while posting */
	struct droce_cq *cq;
	struct droce_comp_channel *ch;
	struct conn *conns[MAX_CONNS];
	struct slot slot[SLOTS];
	uint32_t free[SLOTS];
	uint32_t nfree;
	struct blk_rsp *rsp;		/* SLOTS response buffers */
	struct droce_mr *rsp_mr;
	uint64_t ops;
};

struct srv {
	const struct blk_server_opts *o;
	struct droce_cm_event_channel *ch;
	struct droce_cm_id *listen;
	struct droce_context *ctx;
	struct droce_pd *pd;
	uint8_t *disk;
	struct droce_mr *disk_mr;
	struct droce_srq *srq;
	struct blk_req *req;		/* SRQ_DEPTH request buffers */
	struct droce_mr *req_mr;
	struct worker *w;
	unsigned int next_worker;
	unsigned int accepted;		/* connections made (served when reaped) */
	int stop;			/* atomic: the workers end */
};

static int post_req_buf(struct srv *s, uint32_t i)
{
	struct ibv_sge sge = { (uintptr_t)&s->req[i], sizeof(s->req[i]), s->req_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return droce_post_srq_recv(s->srq, &wr, &bad);
}

static struct conn *conn_of(struct worker *w, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < MAX_CONNS; i++)
		if (w->conns[i] != NULL && w->conns[i]->qpn == qpn)
			return w->conns[i];
	return NULL;
}

static void slot_put(struct worker *w, uint32_t k)
{
	w->slot[k].c->inflight--;
	w->slot[k].c = NULL;
	w->free[w->nfree++] = k;
}

/* The response of slot @p k, after @p data (an RDMA WRITE of the data, or nothing). Worker's
 * lock held. */
static void respond(struct worker *w, uint32_t k, uint32_t status, struct ibv_send_wr *data)
{
	struct ibv_sge sge = { (uintptr_t)&w->rsp[k], sizeof(w->rsp[k]), w->rsp_mr->lkey };
	struct ibv_send_wr wr, *bad;

	memset(&w->rsp[k], 0, sizeof(w->rsp[k]));
	w->rsp[k].tag = w->slot[k].tag;
	w->rsp[k].status = status;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = WR_SEND | k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (data != NULL)
		data->next = &wr;
	if (droce_post_send(w->slot[k].c->id->qp, data != NULL ? data : &wr, &bad) != 0)
		slot_put(w, k);	/* the QP is in error: its peer is gone */
}

/* A request arrived in buffer @p i from QP @p qpn. Worker's lock held. */
static void on_request(struct worker *w, uint32_t i, uint32_t qpn, uint32_t byte_len)
{
	struct srv *s = w->srv;
	struct blk_req r = { 0 };
	struct ibv_send_wr data, *bad;
	struct ibv_sge sge;
	struct conn *c;
	uint32_t k;

	memcpy(&r, &s->req[i], byte_len < sizeof(r) ? byte_len : sizeof(r));
	post_req_buf(s, i);	/* copied: the buffer takes the next request */
	c = conn_of(w, qpn);
	if (c == NULL || c->closing || w->nfree == 0)
		return;	/* a request of a connection going away */
	k = w->free[--w->nfree];
	w->slot[k].c = c;
	w->slot[k].tag = r.tag;
	c->inflight++;
	if (byte_len != sizeof(r) || (r.op != BLK_READ && r.op != BLK_WRITE) || r.len == 0 ||
	    r.len > BLK_MAX_IO || r.len % BLK_SECTOR != 0 || r.offset % BLK_SECTOR != 0 ||
	    r.offset > s->o->size || r.len > s->o->size - r.offset) {
		respond(w, k, EINVAL, NULL);
		return;
	}
	sge = (struct ibv_sge){ (uintptr_t)(s->disk + r.offset), r.len, s->disk_mr->lkey };
	memset(&data, 0, sizeof(data));
	data.sg_list = &sge;
	data.num_sge = 1;
	data.wr.rdma.remote_addr = r.addr;
	data.wr.rdma.rkey = r.rkey;
	if (r.op == BLK_READ) {
		data.opcode = IBV_WR_RDMA_WRITE;	/* unsignaled: the SEND behind it completes */
		respond(w, k, 0, &data);
		return;
	}
	data.opcode = IBV_WR_RDMA_READ;
	data.wr_id = WR_READ | k;
	data.send_flags = IBV_SEND_SIGNALED;
	if (droce_post_send(c->id->qp, &data, &bad) != 0)
		slot_put(w, k);
}

static void on_wc(struct worker *w, const struct ibv_wc *wc)
{
	uint32_t k = (uint32_t)wc->wr_id;

	pthread_mutex_lock(&w->lock);
	if (wc->opcode == IBV_WC_RECV && wc->status == IBV_WC_SUCCESS) {
		on_request(w, k, wc->qp_num, wc->byte_len);
		w->ops++;
	} else if (wc->opcode == IBV_WC_RECV || !(wc->wr_id & (WR_SEND | WR_READ))) {
		/* SRQ buffers are not flushed by a QP's error; nothing else is posted. */
	} else if (wc->status != IBV_WC_SUCCESS || (wc->wr_id & WR_SEND)) {
		slot_put(w, k);	/* response sent, or the connection failed under it */
	} else {
		respond(w, k, 0, NULL);	/* the RDMA READ of a WRITE landed in the disk */
	}
	pthread_mutex_unlock(&w->lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct ibv_wc wc[16];
	int i, n;

	while (!__atomic_load_n(&w->srv->stop, __ATOMIC_RELAXED)) {
		n = blk_cq_wait(w->cq, w->ch, w->srv->ctx, wc, 16);
		for (i = 0; i < n; i++)
			on_wc(w, &wc[i]);
	}
	return NULL;
}

/* ---- Set-up: memory registered once, the SRQ, the workers ---- */

static int setup(struct srv *s)
{
	const struct blk_server_opts *o = s->o;
	struct ibv_srq_init_attr sa;
	unsigned int i, k;

	s->ctx = s->listen->verbs;
	s->pd = s->listen->pd;
	s->disk = calloc(1, o->size);
	s->req = calloc(SRQ_DEPTH, sizeof(*s->req));
	s->w = calloc(o->workers, sizeof(*s->w));
	if (s->disk == NULL || s->req == NULL || s->w == NULL)
		return ENOMEM;
	s->disk_mr = droce_reg_mr(s->pd, s->disk, o->size, IBV_ACCESS_LOCAL_WRITE);
	s->req_mr = droce_reg_mr(s->pd, s->req, SRQ_DEPTH * sizeof(*s->req),
				 IBV_ACCESS_LOCAL_WRITE);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = SRQ_DEPTH;
	sa.attr.max_sge = 1;
	s->srq = droce_create_srq(s->pd, &sa);
	if (s->disk_mr == NULL || s->req_mr == NULL || s->srq == NULL)
		return errno;
	for (i = 0; i < SRQ_DEPTH; i++)
		if (post_req_buf(s, i) != 0)
			return EIO;
	for (i = 0; i < o->workers; i++) {
		struct worker *w = &s->w[i];

		w->srv = s;
		pthread_mutex_init(&w->lock, NULL);
		w->rsp = calloc(SLOTS, sizeof(*w->rsp));
		if (w->rsp == NULL)
			return ENOMEM;
		w->rsp_mr = droce_reg_mr(s->pd, w->rsp, SLOTS * sizeof(*w->rsp), 0);
		if (o->events)
			w->ch = droce_create_comp_channel(s->ctx);
		w->cq = droce_create_cq(s->ctx, (int)SLOTS * 2, w, w->ch, 0);
		if (w->rsp_mr == NULL || w->cq == NULL || (o->events && w->ch == NULL))
			return errno;
		for (k = 0; k < SLOTS; k++)
			w->free[w->nfree++] = SLOTS - 1 - k;
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
			return EAGAIN;
	}
	return 0;
}

static void teardown(struct srv *s)
{
	unsigned int i;

	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; s->w != NULL && i < s->o->workers; i++) {
		struct worker *w = &s->w[i];

		if (w->thread != 0)
			pthread_join(w->thread, NULL);
		if (w->cq != NULL)
			droce_destroy_cq(w->cq);
		if (w->ch != NULL)
			droce_destroy_comp_channel(w->ch);
		if (w->rsp_mr != NULL)
			droce_dereg_mr(w->rsp_mr);
		free(w->rsp);
	}
	if (s->srq != NULL)
		droce_destroy_srq(s->srq);
	if (s->req_mr != NULL)
		droce_dereg_mr(s->req_mr);
	if (s->disk_mr != NULL)
		droce_dereg_mr(s->disk_mr);
	free(s->w);
	free(s->req);
	free(s->disk);
}

/* ---- The CM thread: accept, hand out, tear down ---- */

/* The connection goes: its worker takes no more requests of it (under the worker's lock,
 * which its worker holds while it looks at the connection). */
static void conn_close(struct conn *c)
{
	pthread_mutex_lock(&c->w->lock);
	c->closing = true;
	pthread_mutex_unlock(&c->w->lock);
}

static void conn_request(struct srv *s, struct droce_cm_id *id)
{
	struct worker *w = &s->w[s->next_worker++ % s->o->workers];
	struct blk_hello hello = { s->o->size, BLK_MAX_IO, BLK_DEPTH };
	struct droce_qp_init_attr qa;
	struct rdma_conn_param p;
	struct conn *c = calloc(1, sizeof(*c));
	unsigned int i;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = w->cq;
	qa.recv_cq = w->cq;
	qa.srq = s->srq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2 * BLK_DEPTH + 2;	/* a WRITE and a SEND per READ request */
	qa.cap.max_send_sge = 1;
	if (c == NULL || droce_cm_create_qp(id, s->pd, &qa) != 0) {
		droce_cm_reject(id, NULL, 0);
		droce_cm_destroy_id(id);
		free(c);
		return;
	}
	c->id = id;
	c->w = w;
	c->qpn = id->qp->qp_num;
	id->context = c;
	/* In the worker's table before the accept: the first request may arrive before this
	 * thread sees ESTABLISHED. */
	pthread_mutex_lock(&w->lock);
	for (i = 0; i < MAX_CONNS && w->conns[i] != NULL; i++)
		;
	if (i < MAX_CONNS)
		w->conns[i] = c;
	pthread_mutex_unlock(&w->lock);
	if (i == MAX_CONNS) {	/* this worker is full */
		droce_cm_reject(id, NULL, 0);
		droce_cm_destroy_qp(id);
		droce_cm_destroy_id(id);
		free(c);
		return;
	}
	s->accepted++;
	memset(&p, 0, sizeof(p));
	p.initiator_depth = 16;		/* the server RDMA READs the clients' buffers */
	p.responder_resources = 0;	/* and nobody reads the server's memory */
	p.rnr_retry_count = 7;
	p.private_data = &hello;
	p.private_data_len = sizeof(hello);
	if (droce_cm_accept(id, &p) != 0) {
		conn_close(c);	/* reaped with the others that close */
		droce_cm_reject(id, NULL, 0);
	}
}

/* A closing connection whose WRs have all completed goes: @return true when it went. */
static bool conn_reap(struct conn *c)
{
	struct worker *w = c->w;
	unsigned int i;
	bool gone = false;

	pthread_mutex_lock(&w->lock);
	if (c->inflight == 0) {
		for (i = 0; i < MAX_CONNS; i++)
			if (w->conns[i] == c)
				w->conns[i] = NULL;
		gone = true;
	}
	pthread_mutex_unlock(&w->lock);
	if (!gone)
		return false;
	droce_cm_destroy_qp(c->id);
	droce_cm_destroy_id(c->id);
	free(c);
	return true;
}

static void reap_all(struct srv *s, unsigned int *served, bool all)
{
	unsigned int i, j;

	for (i = 0; i < s->o->workers; i++)
		for (j = 0; j < MAX_CONNS; j++) {
			struct conn *c = s->w[i].conns[j];

			if (c == NULL || !(c->closing || all))
				continue;
			if (all && !c->closing) {
				droce_cm_disconnect(c->id);
				conn_close(c);
			}
			if (conn_reap(c))
				(*served)++;
		}
}

int blk_server_run(const struct blk_server_opts *o)
{
	struct srv s = { .o = o };
	struct sockaddr_storage sa;
	struct droce_cm_event *ev;
	unsigned int served = 0;
	struct conn *c;
	int rc;

	if (!blk_parse_addr(o->addr, o->port, &sa) || o->workers == 0 || o->size == 0 ||
	    o->size % BLK_SECTOR != 0)
		return EINVAL;
	s.ch = droce_cm_create_event_channel();
	if (s.ch == NULL)
		return errno;
	if (droce_cm_create_id(s.ch, &s.listen, &s, RDMA_PS_TCP) != 0 ||
	    droce_cm_bind_addr(s.listen, (struct sockaddr *)&sa) != 0 ||
	    s.listen->verbs == NULL) {
		fprintf(stderr, "blockd: bind %s: %s (an address of a droce device)\n", o->addr,
			strerror(errno));
		return errno != 0 ? errno : EADDRNOTAVAIL;
	}
	rc = setup(&s);
	if (rc == 0 && droce_cm_listen(s.listen, 64) != 0)
		rc = errno;
	if (rc != 0) {
		teardown(&s);
		return rc;
	}
	if (o->ready != NULL)
		__atomic_store_n(o->ready, 1, __ATOMIC_RELEASE);
	printf("blockd: serving %llu MiB at %s:%u, %u worker(s), %s\n",
	       (unsigned long long)(o->size >> 20), o->addr, o->port, o->workers,
	       o->events ? "completion channels" : "busy polling");
	fflush(stdout);
	while (!__atomic_load_n(o->stop, __ATOMIC_RELAXED) &&
	       (o->exit_after == 0 || served < o->exit_after)) {
		reap_all(&s, &served, false);
		ev = blk_event(s.ch, s.ctx, 100);
		if (ev == NULL)
			continue;
		c = ev->id->context != &s ? ev->id->context : NULL;
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			conn_request(&s, ev->id);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			droce_cm_disconnect(ev->id);	/* the DREP */
			/* fall through */
		case RDMA_CM_EVENT_REJECTED:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
			if (c != NULL)
				conn_close(c);
			break;
		default:
			break;
		}
		droce_cm_ack_cm_event(ev);
	}
	reap_all(&s, &served, true);
	while (served < s.accepted) {	/* the rest, disconnected above, flushing */
		blk_step(s.ctx);
		reap_all(&s, &served, false);
	}
	droce_cm_destroy_id(s.listen);
	teardown(&s);
	droce_cm_destroy_event_channel(s.ch);
	printf("blockd: served %u client(s)\n", served);
	return 0;
}
