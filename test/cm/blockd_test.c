/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * examples/blockd, the block server that embeds droce, between droce0 and droce1 over the ring
 * pair, through the real engine (inline, and on an lcore):
 *
 * - its client, 3 connections x depth 8, 8 KiB requests, half READs, verifying: the whole disk
 *   written once, then 3 x 2 000 random requests, every byte a READ returns checked against
 *   what was written there (the client's -V); with completion channels as well (-e);
 * - a connection of this test's own sends what the server must refuse, each answered with
 *   EINVAL and its tag: an unknown op, length 0, a length not a multiple of 512, more than
 *   BLK_MAX_IO, an unaligned offset, past the end of the disk, a request cut to 8 bytes (tag
 *   0); the connection survives them: a WRITE then a READ of the last sectors of the disk
 *   move the bytes;
 * - the server returns 0 once its 7 clients came and went.
 *
 * Usage: cm_blockd_test {inline|lcore}
 */
#include <pthread.h>
#include <unistd.h>

#include "../../examples/blockd/blockd.h"
#include "cm_test.h"

#define PORT 7191
#define DISK (16ull << 20)

static int stop_server;		/* never set: the server ends after its clients */

static void *server(void *arg)
{
	struct blk_server_opts *o = arg;

	return (void *)(intptr_t)blk_server_run(o);
}

struct raw {
	struct droce_cm_event_channel *ch;
	struct droce_cm_id *id;
	struct droce_cq *cq;
	struct droce_mr *mr;
	uint8_t *mem;			/* request, response, data */
};

#define RAW_REQ 0
#define RAW_RSP 64
#define RAW_DATA 4096
#define RAW_LEN (RAW_DATA + 8192)

static void raw_connect(struct raw *r)
{
	struct sockaddr_in sa = cmt_addr("10.99.0.2", PORT);
	struct rdma_conn_param p;
	struct droce_cm_event *ev;
	struct blk_hello h;

	r->ch = droce_cm_create_event_channel();
	CHECK(r->ch != NULL);
	CHECK_EQ(droce_cm_create_id(r->ch, &r->id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(r->id, NULL, (struct sockaddr *)&sa, 2000), 0);
	cmt_drive_ctx = r->id->verbs;
	CMT_GOT(r->ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_resolve_route(r->id, 2000), 0);
	CMT_GOT(r->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	r->cq = cmt_cq(r->id);
	cmt_qp(r->id, r->cq, IBV_QPT_RC);
	r->mem = aligned_alloc(4096, RAW_LEN);
	CHECK(r->mem != NULL);
	r->mr = droce_reg_mr(r->id->pd, r->mem, RAW_LEN, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	CHECK(r->mr != NULL);
	memset(&p, 0, sizeof(p));
	p.responder_resources = 1;
	p.rnr_retry_count = 7;
	CHECK_EQ(droce_cm_connect(r->id, &p), 0);
	ev = CMT_EXPECT(r->ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CHECK_EQ(ev->param.conn.private_data_len >= sizeof(h), 1);
	memcpy(&h, ev->param.conn.private_data, sizeof(h));
	CHECK_EQ(h.size, DISK);
	CHECK_EQ(h.max_io, BLK_MAX_IO);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
}

/* Send @p len bytes of @p q; @return the response's status, with its tag in *@p tag. */
static uint32_t raw_request(struct raw *r, const struct blk_req *q, uint32_t len, uint64_t *tag)
{
	struct ibv_sge rs = { (uintptr_t)(r->mem + RAW_RSP), sizeof(struct blk_rsp), r->mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_sge ss = { (uintptr_t)(r->mem + RAW_REQ), len, r->mr->lkey };
	struct ibv_send_wr swr, *sbad;
	struct blk_rsp rsp;
	struct ibv_wc wc;
	int i;

	memcpy(r->mem + RAW_REQ, q, sizeof(*q));
	CHECK_EQ(droce_post_recv(r->id->qp, &rwr, &rbad), 0);
	memset(&swr, 0, sizeof(swr));
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(droce_post_send(r->id->qp, &swr, &sbad), 0);
	for (i = 0; i < 2; i++) {	/* the SEND's completion and the response, in any order */
		wc = cmt_wc(r->cq);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	}
	memcpy(&rsp, r->mem + RAW_RSP, sizeof(rsp));
	*tag = rsp.tag;
	return rsp.status;
}

static void raw_session(void)
{
	struct raw r;
	struct blk_req q;
	uint64_t tag;
	uint32_t i;
	static const struct {
		uint8_t op;
		uint32_t len;
		uint64_t offset;
	} bad[] = {
		{ 7, 4096, 0 },				/* no such op */
		{ BLK_READ, 0, 0 },			/* nothing */
		{ BLK_WRITE, 1000, 0 },			/* not whole sectors */
		{ BLK_READ, BLK_MAX_IO + BLK_SECTOR, 0 },	/* too much at once */
		{ BLK_READ, 4096, 100 },		/* an unaligned offset */
		{ BLK_WRITE, 4096, DISK - 2048 },	/* past the end */
		{ BLK_READ, 512, DISK },		/* at the end */
	};

	raw_connect(&r);
	for (i = 0; i < RTE_DIM(bad); i++) {
		memset(&q, 0, sizeof(q));
		q.op = bad[i].op;
		q.len = bad[i].len;
		q.offset = bad[i].offset;
		q.tag = 100 + i;
		q.addr = (uintptr_t)(r.mem + RAW_DATA);
		q.rkey = r.mr->rkey;
		CHECK_EQ(raw_request(&r, &q, sizeof(q), &tag), EINVAL);
		CHECK_EQ(tag, 100 + i);
	}
	q.tag = 55;
	CHECK_EQ(raw_request(&r, &q, 8, &tag), EINVAL);	/* op and length only */
	CHECK_EQ(tag, 0);
	/* Still connected: the last 8 KiB of the disk written, then read back. */
	for (i = 0; i < 8192; i++)
		r.mem[RAW_DATA + i] = (uint8_t)(i * 13 + 5);
	memset(&q, 0, sizeof(q));
	q.op = BLK_WRITE;
	q.len = 8192;
	q.offset = DISK - 8192;
	q.tag = 1;
	q.addr = (uintptr_t)(r.mem + RAW_DATA);
	q.rkey = r.mr->rkey;
	CHECK_EQ(raw_request(&r, &q, sizeof(q), &tag), 0);
	memset(r.mem + RAW_DATA, 0, 8192);
	q.op = BLK_READ;
	q.tag = 2;
	CHECK_EQ(raw_request(&r, &q, sizeof(q), &tag), 0);
	CHECK_EQ(tag, 2);
	for (i = 0; i < 8192; i++)
		CHECK_EQ(r.mem[RAW_DATA + i], (uint8_t)(i * 13 + 5));
	CHECK_EQ(droce_cm_disconnect(r.id), 0);
	CMT_GOT(r.ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	droce_cm_destroy_qp(r.id);
	CHECK_EQ(droce_dereg_mr(r.mr), 0);
	CHECK_EQ(droce_destroy_cq(r.cq), 0);
	CHECK_EQ(droce_cm_destroy_id(r.id), 0);
	CHECK_EQ(droce_cm_destroy_event_channel(r.ch), 0);
	free(r.mem);
	printf("blockd: 8 bad requests refused with EINVAL, the connection kept; WRITE + READ "
	       "of the last 8 KiB\n");
}

int main(int argc, char **argv)
{
	struct blk_server_opts so = { .addr = "10.99.0.2", .port = PORT, .size = DISK,
				      .workers = 2, .exit_after = 7, .stop = &stop_server };
	struct blk_client_opts co = { .addr = "10.99.0.2", .port = PORT, .conns = 3, .depth = 8,
				      .io = 8192, .read_pct = 50, .ops = 2000, .verify = true };
	struct blk_client_result res;
	int ready = 0;
	pthread_t th;
	void *ret;
	int pass;

	CHECK(argc == 2);
	cmt_init();
	so.ready = &ready;
	CHECK_EQ(pthread_create(&th, NULL, server, &so), 0);
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (pass = 0; pass < 2; pass++) {
		co.events = pass == 1;
		CHECK_EQ(blk_client_run(&co, &res), 0);
		CHECK_EQ(res.ops, co.conns * co.ops);
		CHECK_EQ(res.errors, 0);
		CHECK(res.verified > 0);
		printf("blockd client%s: %llu requests, %llu bytes READ and checked\n",
		       co.events ? " -e" : "", (unsigned long long)res.ops,
		       (unsigned long long)res.verified);
	}
	raw_session();
	CHECK_EQ(pthread_join(th, &ret), 0);
	CHECK_EQ((intptr_t)ret, 0);
	printf("blockd: served 7 clients, server exited (%s engine)\n", argv[1]);
	return 0;
}
