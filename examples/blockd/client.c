/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The block client: one thread and one connection per -C, each keeping -q requests in flight
 * over its own part of the disk (so that the connections never touch the same sectors), its
 * buffers registered once. A request's buffer is one of -q slots; slot k only ever addresses
 * the k-th stripe of the connection's part, so two requests in flight never overlap and what
 * a READ returns is known: with -V every sector's generation is kept, a WRITE fills its
 * sectors with a pattern of (sector, generation), a READ must return exactly that. With -V
 * the connection first writes its whole part once, so that the check does not depend on what
 * the disk held before.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockd.h"

struct cslot {
	uint64_t offset;
	uint32_t len;
	uint8_t op;
	bool busy;			/* sent, response not yet in */
	bool send_done;			/* the request's SEND completed (its SQ entry is free) */
	uint32_t gen;			/* of a WRITE */
	uint64_t filled;		/* -V's first pass: bytes of the stripe written */
};

struct cconn {
	const struct blk_client_opts *o;
	unsigned int index;
	pthread_t thread;
	struct droce_cm_event_channel *ch;
	struct droce_cm_id *id;
	struct droce_cq *cq;
	struct droce_comp_channel *cch;
	uint8_t *buf;			/* depth * io */
	struct blk_req *req;		/* depth */
	struct blk_rsp *rsp;		/* depth */
	struct droce_mr *buf_mr, *req_mr, *rsp_mr;
	struct cslot *slot;
	uint64_t base, stripe;		/* this connection's part, each slot's stripe */
	uint32_t *gen;			/* per sector of the part (-V) */
	uint64_t rng;
	uint64_t issued, done;
	struct blk_client_result res;
	int err;
};

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The pattern of the 8-byte word at disk offset @p off written in generation @p gen (0: never
 * written, zeros: the server's disk starts zeroed). */
static uint64_t pattern(uint64_t off, uint32_t gen)
{
	uint64_t s = off ^ ((uint64_t)gen << 44);

	return gen == 0 ? 0 : next_rand(&s);
}

static void fill(uint8_t *p, uint64_t off, uint32_t len, uint32_t gen)
{
	uint32_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t v = pattern(off + i, gen);

		memcpy(p + i, &v, 8);
	}
}

static bool check(const struct cconn *c, const uint8_t *p, uint64_t off, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t sec = (off + i - c->base) / BLK_SECTOR, v = pattern(off + i, c->gen[sec]);

		if (memcmp(p + i, &v, 8) != 0) {
			fprintf(stderr, "blockd client %u: READ at %llu: byte %u differs (generation "
				"%u)\n", c->index, (unsigned long long)off, i, c->gen[sec]);
			return false;
		}
	}
	return true;
}

static int post_rsp_buf(struct cconn *c, uint32_t k)
{
	struct ibv_sge sge = { (uintptr_t)&c->rsp[k], sizeof(c->rsp[k]), c->rsp_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 }, *bad;

	return droce_post_recv(c->id->qp, &wr, &bad);
}

/* Send slot @p k's next request: @p op at @p off (a WRITE gets its data first). */
static int issue(struct cconn *c, uint32_t k, uint8_t op, uint64_t off)
{
	struct cslot *s = &c->slot[k];
	uint8_t *data = c->buf + (uint64_t)k * c->o->io;
	struct ibv_sge sge = { (uintptr_t)&c->req[k], sizeof(c->req[k]), c->req_mr->lkey };
	struct ibv_send_wr wr, *bad;
	uint32_t i;

	s->op = op;
	s->offset = off;
	s->len = c->o->io;
	if (op == BLK_WRITE) {
		s->gen = (uint32_t)(c->issued + 1);
		if (c->o->verify)
			fill(data, off, s->len, s->gen);
	}
	memset(&c->req[k], 0, sizeof(c->req[k]));
	c->req[k].op = op;
	c->req[k].len = s->len;
	c->req[k].tag = k;
	c->req[k].offset = off;
	c->req[k].addr = (uintptr_t)data;
	c->req[k].rkey = c->buf_mr->rkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	s->busy = true;
	s->send_done = false;
	c->issued++;
	if (op == BLK_WRITE && c->o->verify)	/* the sectors hold this generation once done */
		for (i = 0; i < s->len; i += BLK_SECTOR)
			c->gen[(off + i - c->base) / BLK_SECTOR] = s->gen;
	return droce_post_send(c->id->qp, &wr, &bad);
}

/* Slot @p k's next request: during -V's first pass the part in order, then random. */
static int issue_next(struct cconn *c, uint32_t k, bool fill_pass)
{
	uint64_t span = c->stripe - c->o->io, off;
	uint8_t op;

	if (fill_pass) {
		off = c->base + k * c->stripe + c->slot[k].filled;
		c->slot[k].filled += c->o->io;
		return issue(c, k, BLK_WRITE, off);
	}
	off = c->base + k * c->stripe +
	      (span == 0 ? 0 : next_rand(&c->rng) % (span / BLK_SECTOR + 1) * BLK_SECTOR);
	op = next_rand(&c->rng) % 100 < c->o->read_pct ? BLK_READ : BLK_WRITE;
	return issue(c, k, op, off);
}

/* One completion. @return 0, or an error that ends the connection's run. */
static int on_wc(struct cconn *c, const struct ibv_wc *wc)
{
	uint32_t k = (uint32_t)wc->wr_id;
	struct cslot *s = &c->slot[k];

	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "blockd client %u: %s\n", c->index, droce_wc_status_str(wc->status));
		return EIO;
	}
	if (wc->opcode == IBV_WC_SEND) {
		s->send_done = true;
		return 0;
	}
	k = (uint32_t)c->rsp[wc->wr_id].tag;
	s = &c->slot[k];
	if (post_rsp_buf(c, (uint32_t)wc->wr_id) != 0)
		return EIO;
	if (k >= c->o->depth || !s->busy) {
		fprintf(stderr, "blockd client %u: response for no request (tag %u)\n", c->index, k);
		return EPROTO;
	}
	if (c->rsp[wc->wr_id].status != 0) {
		fprintf(stderr, "blockd client %u: request failed: %s\n", c->index,
			strerror((int)c->rsp[wc->wr_id].status));
		return (int)c->rsp[wc->wr_id].status;
	}
	if (s->op == BLK_READ && c->o->verify) {
		if (!check(c, c->buf + (uint64_t)k * c->o->io, s->offset, s->len)) {
			c->res.errors++;
			return EIO;
		}
		c->res.verified += s->len;
	}
	s->busy = false;
	c->done++;
	c->res.ops++;
	c->res.bytes += s->len;
	return 0;
}

/* Run @p total requests, @p fill_pass as -V's first pass. */
static int run_phase(struct cconn *c, uint64_t total, bool fill_pass)
{
	uint64_t first = c->issued, end = c->issued + total;
	struct ibv_wc wc[16];
	uint32_t k;
	int i, n, rc;

	c->done = first;
	while (c->done < end) {
		for (k = 0; k < c->o->depth && c->issued < end; k++)
			if (!c->slot[k].busy && c->slot[k].send_done &&
			    (!fill_pass || c->slot[k].filled < c->stripe) &&
			    (rc = issue_next(c, k, fill_pass)) != 0)
				return rc;
		n = blk_cq_wait(c->cq, c->cch, c->id->verbs, wc, 16);
		if (n < 0)
			return EIO;
		for (i = 0; i < n; i++)
			if ((rc = on_wc(c, &wc[i])) != 0)
				return rc;
	}
	return 0;
}

static int setup(struct cconn *c)
{
	const struct blk_client_opts *o = c->o;
	struct sockaddr_storage dst;
	struct droce_qp_init_attr qa;
	struct rdma_conn_param p;
	struct droce_cm_event *ev;
	struct blk_hello hello;
	struct droce_pd *pd;
	uint64_t part;
	uint32_t k;

	if (!blk_parse_addr(o->addr, o->port, &dst))
		return EINVAL;
	c->ch = droce_cm_create_event_channel();
	if (c->ch == NULL || droce_cm_create_id(c->ch, &c->id, c, RDMA_PS_TCP) != 0 ||
	    droce_cm_resolve_addr(c->id, NULL, (struct sockaddr *)&dst, 2000) != 0)
		return errno;
	ev = blk_event(c->ch, NULL, 5000);
	if (ev == NULL || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
		return EHOSTUNREACH;
	droce_cm_ack_cm_event(ev);
	if (droce_cm_resolve_route(c->id, 2000) != 0)
		return errno;
	ev = blk_event(c->ch, c->id->verbs, 5000);
	if (ev == NULL || ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return EHOSTUNREACH;
	droce_cm_ack_cm_event(ev);
	pd = c->id->pd;
	c->buf = aligned_alloc(4096, (size_t)o->depth * o->io);
	c->req = calloc(o->depth, sizeof(*c->req));
	c->rsp = calloc(o->depth, sizeof(*c->rsp));
	c->slot = calloc(o->depth, sizeof(*c->slot));
	if (c->buf == NULL || c->req == NULL || c->rsp == NULL || c->slot == NULL)
		return ENOMEM;
	memset(c->buf, 0, (size_t)o->depth * o->io);
	c->buf_mr = droce_reg_mr(pd, c->buf, (size_t)o->depth * o->io, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	c->req_mr = droce_reg_mr(pd, c->req, o->depth * sizeof(*c->req), 0);
	c->rsp_mr = droce_reg_mr(pd, c->rsp, o->depth * sizeof(*c->rsp), IBV_ACCESS_LOCAL_WRITE);
	if (o->events)
		c->cch = droce_create_comp_channel(c->id->verbs);
	c->cq = droce_create_cq(c->id->verbs, (int)o->depth * 2, c, c->cch, 0);
	if (c->buf_mr == NULL || c->req_mr == NULL || c->rsp_mr == NULL || c->cq == NULL ||
	    (o->events && c->cch == NULL))
		return errno;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = o->depth;
	qa.cap.max_recv_wr = o->depth;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = sizeof(struct blk_req);
	if (droce_cm_create_qp(c->id, pd, &qa) != 0)
		return errno;
	for (k = 0; k < o->depth; k++) {
		c->slot[k].send_done = true;
		if (post_rsp_buf(c, k) != 0)
			return EIO;
	}
	memset(&p, 0, sizeof(p));
	p.responder_resources = 16;	/* the server READs our buffers */
	p.initiator_depth = 0;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	if (droce_cm_connect(c->id, &p) != 0)
		return errno;
	ev = blk_event(c->ch, c->id->verbs, 10000);
	if (ev == NULL || ev->event != RDMA_CM_EVENT_ESTABLISHED ||
	    ev->param.conn.private_data_len < sizeof(hello)) {
		fprintf(stderr, "blockd client %u: %s (status %d)\n", c->index,
			ev != NULL ? droce_cm_event_str(ev->event) : "no answer",
			ev != NULL ? ev->status : 0);
		return ECONNREFUSED;
	}
	memcpy(&hello, ev->param.conn.private_data, sizeof(hello));
	droce_cm_ack_cm_event(ev);
	if (o->io > hello.max_io || o->depth > hello.depth)
		return EINVAL;
	part = hello.size / o->conns / BLK_SECTOR * BLK_SECTOR;
	c->stripe = part / o->depth / o->io * o->io;
	if (c->stripe < o->io) {
		fprintf(stderr, "blockd client: a %llu-byte disk is too small for %u connections "
			"x %u requests of %u bytes\n", (unsigned long long)hello.size, o->conns,
			o->depth, o->io);
		return EINVAL;
	}
	c->base = part * c->index;
	if (o->verify) {
		c->gen = calloc(part / BLK_SECTOR, sizeof(*c->gen));
		if (c->gen == NULL)
			return ENOMEM;
	}
	c->rng = 0x6d6f7265ull * (c->index + 1);
	return 0;
}

static void finish(struct cconn *c)
{
	struct droce_cm_event *ev;
	int i;

	if (c->id != NULL && c->id->qp != NULL && droce_cm_disconnect(c->id) == 0)
		for (i = 0; i < 50; i++) {
			ev = blk_event(c->ch, c->id->verbs, 100);
			if (ev == NULL)
				continue;
			i = ev->event == RDMA_CM_EVENT_DISCONNECTED ? 50 : i;
			droce_cm_ack_cm_event(ev);
		}
	if (c->id != NULL)
		droce_cm_destroy_qp(c->id);
	if (c->cq != NULL)
		droce_destroy_cq(c->cq);
	if (c->cch != NULL)
		droce_destroy_comp_channel(c->cch);
	if (c->buf_mr != NULL)
		droce_dereg_mr(c->buf_mr);
	if (c->req_mr != NULL)
		droce_dereg_mr(c->req_mr);
	if (c->rsp_mr != NULL)
		droce_dereg_mr(c->rsp_mr);
	if (c->id != NULL)
		droce_cm_destroy_id(c->id);
	if (c->ch != NULL)
		droce_cm_destroy_event_channel(c->ch);
	free(c->buf);
	free(c->req);
	free(c->rsp);
	free(c->slot);
	free(c->gen);
}

static void *conn_main(void *arg)
{
	struct cconn *c = arg;
	uint64_t t0;

	c->err = setup(c);
	if (c->err == 0 && c->o->verify)
		c->err = run_phase(c, c->stripe / c->o->io * c->o->depth, true);
	t0 = blk_now_ns();
	c->res = (struct blk_client_result){ 0 };
	if (c->err == 0)
		c->err = run_phase(c, c->o->ops, false);
	c->res.seconds = (double)(blk_now_ns() - t0) / 1e9;
	finish(c);
	return NULL;
}

int blk_client_run(const struct blk_client_opts *o, struct blk_client_result *res)
{
	struct cconn *c = calloc(o->conns, sizeof(*c));
	unsigned int i;
	int rc = 0;

	if (c == NULL)
		return ENOMEM;
	if (o->conns == 0 || o->depth == 0 || o->depth > BLK_DEPTH || o->io == 0 ||
	    o->io % BLK_SECTOR != 0 || o->io > BLK_MAX_IO || o->read_pct > 100) {
		free(c);
		return EINVAL;
	}
	memset(res, 0, sizeof(*res));
	for (i = 0; i < o->conns; i++) {
		c[i].o = o;
		c[i].index = i;
		if (pthread_create(&c[i].thread, NULL, conn_main, &c[i]) != 0) {
			rc = EAGAIN;
			break;
		}
	}
	while (i-- > 0) {
		pthread_join(c[i].thread, NULL);
		if (c[i].err != 0 && rc == 0)
			rc = c[i].err;
		res->ops += c[i].res.ops;
		res->bytes += c[i].res.bytes;
		res->verified += c[i].res.verified;
		res->errors += c[i].res.errors;
		if (c[i].res.seconds > res->seconds)
			res->seconds = c[i].res.seconds;
	}
	free(c);
	return rc;
}
