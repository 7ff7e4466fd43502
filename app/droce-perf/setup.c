/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The objects of a run. In one process the client (side 0) is the first device, the server
 * (side 1) the second (droce0 and droce1 of the embedded default); in a two-process run only
 * this process's side exists, on the one device of its generated configuration (peer.c). Each
 * side has a PD, one send and one receive CQ shared by its QPs, one MR with a slot per QP;
 * QP i of the client is connected to QP i of the server (connect.c), which each side knows
 * by its view (QPNs, GID, address, R_Key: local, or received over the set-up channel).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_pause.h>

#include "perf.h"

#define PERF_CQ_MAX 65536	/* DROCE_MAX_CQE */
#define PERF_MEM_MAX (1ull << 30)	/* per side */

static unsigned int rx_depth(const struct perf_ctx *c)
{
	unsigned int d = c->o->test == PERF_LAT ? 16 : c->o->tx_depth * 2;

	while (d > 1 && (uint64_t)d * c->o->qps > PERF_CQ_MAX)
		d /= 2;
	return d;
}

static unsigned int tx_depth(const struct perf_ctx *c)
{
	return c->o->test == PERF_LAT ? 16 : c->o->tx_depth;
}

static int cq_size(const struct perf_ctx *c, unsigned int depth)
{
	uint64_t n = (uint64_t)depth * c->o->qps;

	return (int)(n > PERF_CQ_MAX ? PERF_CQ_MAX : n);
}

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

static int open_devices(struct perf_ctx *c)
{
	struct droce_device **list;
	int n, i;

	list = droce_get_device_list(&n);
	if (list == NULL) {
		fprintf(stderr, "droce-perf: no droce devices: %s (configuration or EAL)\n",
			strerror(errno));
		return -1;
	}
	if (n < c->hi - c->lo + 1) {
		fprintf(stderr, "droce-perf: an in-process run needs two devices (client and "
			"server); the configuration has %d\n", n);
		droce_free_device_list(list);
		return -1;
	}
	for (i = c->lo; i <= c->hi; i++) {
		c->side[i].ctx = droce_open_device(list[i - c->lo]);
		if (c->side[i].ctx == NULL) {
			fprintf(stderr, "droce-perf: cannot open %s: %s\n",
				droce_get_device_name(list[i - c->lo]), strerror(errno));
			droce_free_device_list(list);
			return -1;
		}
	}
	droce_free_device_list(list);
	return 0;
}

/* The path MTU: -m, else the smaller active MTU of the local ports. */
static int port_ready(struct perf_ctx *c)
{
	struct ibv_port_attr pa;
	int i;

	for (i = c->lo; i <= c->hi; i++) {
		if (droce_query_port(c->side[i].ctx, 1, &pa) != 0 ||
		    pa.state != IBV_PORT_ACTIVE) {
			fprintf(stderr, "droce-perf: the peer is unreachable: port of side %d "
				"is not active\n", i);
			return -1;
		}
		if (i == c->lo || pa.active_mtu < c->mtu)
			c->mtu = pa.active_mtu;
	}
	if (c->o->mtu != 0) {
		if (c->o->mtu > c->mtu) {
			fprintf(stderr, "droce-perf: MTU %d is above the port's active MTU %d\n",
				128 << c->o->mtu, 128 << c->mtu);
			return -1;
		}
		c->mtu = c->o->mtu;
	}
	return 0;
}

/* UD: one packet per message. */
static int ud_size(const struct perf_ctx *c)
{
	uint32_t pmtu = 128u << c->mtu;

	if (c->o->conn != IBV_QPT_UD || c->o->all_sizes || c->o->size <= pmtu)
		return 0;
	fprintf(stderr, "droce-perf: UD messages are one packet: size %u is above the path MTU "
		"%u\n", c->o->size, pmtu);
	return -1;
}

static int side_objects(struct perf_ctx *c, struct perf_side *s)
{
	s->pd = droce_alloc_pd(s->ctx);
	s->scq = droce_create_cq(s->ctx, cq_size(c, tx_depth(c)), NULL, NULL, 0);
	s->rcq = droce_create_cq(s->ctx, cq_size(c, rx_depth(c)), NULL, NULL, 0);
	s->rx_posted = calloc(c->o->qps, sizeof(*s->rx_posted));
	if (s->pd == NULL || s->scq == NULL || s->rcq == NULL || s->rx_posted == NULL) {
		fprintf(stderr, "droce-perf: cannot create PD/CQ: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The path MTU before the run, in one process: the raw link reference (rawfwd.c) needs the
 * ports free, so the devices are opened for the port query and closed again (the last close
 * stops the engine's lcores and ports; perf_setup_open() starts them again).
 */
int perf_setup_path_mtu(struct perf_ctx *c)
{
	int rc = open_devices(c) == 0 && port_ready(c) == 0 ? 0 : -1;
	int i;

	for (i = c->lo; i <= c->hi; i++) {
		if (c->side[i].ctx != NULL)
			droce_close_device(c->side[i].ctx);
		c->side[i].ctx = NULL;
	}
	return rc;
}

int perf_setup_open(struct perf_ctx *c)
{
	int i;

	if (open_devices(c) != 0 || port_ready(c) != 0 || ud_size(c) != 0)
		return -1;
	c->engine_inline = droce_engine_is_inline();
	for (i = c->lo; i <= c->hi; i++)
		if (side_objects(c, &c->side[i]) != 0)
			return -1;
	return 0;
}

static int create_qp(struct perf_ctx *c, struct perf_side *s, unsigned int q)
{
	struct droce_qp_init_attr ia = {
		.send_cq = s->scq, .recv_cq = s->rcq, .qp_type = c->o->conn,
		.cap = { .max_send_wr = tx_depth(c), .max_recv_wr = rx_depth(c),
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = c->o->inline_size },
	};

	s->qp[q] = droce_create_qp(s->pd, &ia);
	if (s->qp[q] == NULL) {
		fprintf(stderr, "droce-perf: cannot create QP %u: %s\n", q, strerror(errno));
		return -1;
	}
	return 0;
}

static int memory(struct perf_ctx *c, struct perf_side *s)
{
	uint32_t max = c->o->all_sizes ? PERF_MAX_SIZE : c->o->size;
	size_t len;

	s->slot = 2 * (((size_t)(max < 64 ? 64 : max) + 63) & ~(size_t)63);
	len = s->slot * c->o->qps;
	if (len > PERF_MEM_MAX) {
		fprintf(stderr, "droce-perf: %u QPs x %zu bytes is more than %llu MiB per side\n",
			c->o->qps, s->slot, PERF_MEM_MAX >> 20);
		return -1;
	}
	s->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (s->buf == NULL)
		return -1;
	memset(s->buf, 0, len);
	s->mr = droce_reg_mr(s->pd, s->buf, len, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_ATOMIC);
	if (s->mr == NULL) {
		fprintf(stderr, "droce-perf: cannot register %zu bytes: %s\n", len,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* What the peer of @p side needs to know of it. */
static int view(struct perf_ctx *c, int side)
{
	struct perf_side *s = &c->side[side];
	struct perf_view *v = &c->view[side];
	unsigned int q;

	if (droce_query_gid(s->ctx, 1, 1, &v->gid) != 0) {
		fprintf(stderr, "droce-perf: the device has no IPv4 GID\n");
		return -1;
	}
	v->addr = (uintptr_t)s->buf;
	v->slot = s->slot;
	v->rkey = s->mr->rkey;
	for (q = 0; q < c->o->qps; q++)
		v->qpn[q] = s->qp[q]->qp_num;
	return 0;
}

static int create_qps(struct perf_ctx *c)
{
	unsigned int q;
	int i;

	for (i = c->lo; i <= c->hi; i++)
		for (q = 0; q < c->o->qps; q++)
			if (create_qp(c, &c->side[i], q) != 0)
				return -1;
	for (i = c->lo; i <= c->hi; i++)
		if (view(c, i) != 0)
			return -1;
	return c->o->role != PERF_BOTH ? perf_peer_views(c) : 0;
}

int perf_setup_qps(struct perf_ctx *c)
{
	uint64_t rss0, rss1;
	unsigned int q;
	int i, n = c->hi - c->lo + 1;

	for (i = c->lo; i <= c->hi; i++)
		if (memory(c, &c->side[i]) != 0)
			return -1;
	rss0 = rss_bytes();
	if (create_qps(c) != 0)
		return -1;
	for (i = c->lo; i <= c->hi; i++) {
		for (q = 0; q < c->o->qps; q++)
			if (perf_connect_qp(c, i, q) != 0)
				return -1;
		if (perf_ah_create(c, i) != 0)
			return -1;
	}
	rss1 = rss_bytes();
	c->mem_per_qp = rss1 > rss0 ? (rss1 - rss0) / (n * c->o->qps) : 0;
	return 0;
}

int perf_post_recv(struct perf_ctx *c, int side, unsigned int q)
{
	struct perf_side *s = &c->side[side];
	struct ibv_sge sge = { (uintptr_t)(s->buf + s->slot * q), (uint32_t)s->slot,
			       s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = q, .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = droce_post_recv(s->qp[q], &wr, &bad);

	if (rc != 0) {
		fprintf(stderr, "droce-perf: post_recv: %s\n", strerror(rc));
		return -1;
	}
	s->rx_posted[q]++;
	return 0;
}

/* Fill every receive queue (send tests): both sides for latency, the server for bandwidth. */
int perf_fill_recv(struct perf_ctx *c)
{
	unsigned int q, d = rx_depth(c);
	int side;

	for (side = c->o->test == PERF_LAT ? c->lo : 1; side <= c->hi; side++)
		for (q = 0; q < c->o->qps; q++)
			while (c->side[side].rx_posted[q] < d)
				if (perf_post_recv(c, side, q) != 0)
					return -1;
	return 0;
}

/* Where @p side sends from (the upper half of its slot @p q). */
uint8_t *perf_local(const struct perf_ctx *c, int side, unsigned int q)
{
	const struct perf_side *s = &c->side[side];

	return s->buf + s->slot * q + s->slot / 2;
}

/* Where the peer of @p side writes to or reads from (the lower half of its slot @p q). */
uint8_t *perf_target(const struct perf_ctx *c, int side, unsigned int q)
{
	const struct perf_side *s = &c->side[side];

	return s->buf + s->slot * q;
}

/* A WR from @p side's slot @p q to the lower half of the peer's slot @p q. */
void perf_wr_base(const struct perf_ctx *c, int side, unsigned int q, enum ibv_wr_opcode op,
		  struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	const struct perf_view *p = &c->view[1 - side];

	sge->addr = (uintptr_t)perf_local(c, side, q);
	sge->length = c->size;
	sge->lkey = c->side[side].mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = op;
	wr->wr.rdma.remote_addr = p->addr + p->slot * q;
	wr->wr.rdma.rkey = p->rkey;
}

void perf_setup_close(struct perf_ctx *c)
{
	unsigned int q;
	int i;

	for (i = 0; i < 2; i++) {
		struct perf_side *s = &c->side[i];

		if (s->ah != NULL)
			droce_destroy_ah(s->ah);
		for (q = 0; q < c->o->qps; q++)
			if (s->qp[q] != NULL)
				droce_destroy_qp(s->qp[q]);
		if (s->mr != NULL)
			droce_dereg_mr(s->mr);
		if (s->scq != NULL)
			droce_destroy_cq(s->scq);
		if (s->rcq != NULL)
			droce_destroy_cq(s->rcq);
		if (s->pd != NULL)
			droce_dealloc_pd(s->pd);
		if (s->ctx != NULL)
			droce_close_device(s->ctx);
		free(s->buf);
		free(s->rx_posted);
	}
}

void perf_step(const struct perf_ctx *c)
{
	if (c->engine_inline)
		droce_engine_poll(c->side[c->lo].ctx);
	else
		rte_pause();
}

/* The wire size of the first frame of a message: Ethernet, IPv4, UDP, BTH, RETH, payload up
 * to the path MTU, ICRC. */
uint32_t perf_frame_len(uint32_t size, enum ibv_mtu mtu)
{
	uint32_t pmtu = 128u << mtu;

	return 14 + 20 + 8 + 12 + 16 + (size < pmtu ? size : pmtu) + 4;
}
