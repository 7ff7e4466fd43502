/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A lossy link (a few per cent of frames dropped, duplicated, reordered; seeded): a mixed
 * stream of SEND, WRITE, READ and FETCH_ADD in both directions must be delivered exactly once,
 * in order, intact: every receive completion in posting order with the right length and
 * bytes, every WRITE/READ region equal, every FETCH_ADD executed once (its original values are
 * the running sums).
 */
#include "tt.h"

#define NMSG 300
#define REGION 20480u
#define NS_LIMIT 600000000000ull	/* 10 simulated minutes */

static struct tt tt;

struct side {
	uint8_t *l, *r;			/* local source/sink; memory the peer targets */
	struct droce_mr *lmr, *rmr;
	uint64_t ctr;			/* FETCH_ADD target (in r's MR? no: own MR below) */
	struct droce_mr *cmr;
	uint64_t orig[NMSG];
	struct droce_mr *omr;
	uint32_t len[NMSG];
	enum ibv_wr_opcode op[NMSG];
};

static struct side sd[2];

static void setup(int s)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC;

	sd[s].l = aligned_alloc(4096, (size_t)NMSG * REGION);
	sd[s].r = aligned_alloc(4096, (size_t)NMSG * REGION);
	CHECK(sd[s].l != NULL && sd[s].r != NULL);
	sd[s].lmr = tt_mr(&tt, s, sd[s].l, (size_t)NMSG * REGION, acc);
	sd[s].rmr = tt_mr(&tt, s, sd[s].r, (size_t)NMSG * REGION, acc);
	sd[s].cmr = tt_mr(&tt, s, &sd[s].ctr, 8, acc);
	sd[s].omr = tt_mr(&tt, s, sd[s].orig, sizeof(sd[s].orig), acc);
}

/* Side @p s posts its NMSG requests to @p q; its peer posts the receives. */
static void post_all(struct tt_qp *q, int s)
{
	struct side *me = &sd[s], *peer = &sd[!s];
	unsigned int i;

	for (i = 0; i < NMSG; i++) {
		uint64_t r = tt_rand(&tt);
		uint32_t len = (uint32_t)(r >> 8) % REGION;
		uint8_t *l = me->l + (size_t)i * REGION, *rr = peer->r + (size_t)i * REGION;
		struct ibv_sge sge = { (uintptr_t)l, len, me->lmr->lkey };
		struct ibv_send_wr wr;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.opcode = (enum ibv_wr_opcode[]){ IBV_WR_SEND, IBV_WR_RDMA_WRITE,
			IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_SEND_WITH_IMM }[r % 5];
		wr.wr.rdma.remote_addr = (uintptr_t)rr;
		wr.wr.rdma.rkey = peer->rmr->rkey;
		if (wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			sge = (struct ibv_sge){ (uintptr_t)&me->orig[i], 8, me->omr->lkey };
			wr.wr.atomic.remote_addr = (uintptr_t)&peer->ctr;
			wr.wr.atomic.rkey = peer->cmr->rkey;
			wr.wr.atomic.compare_add = i + 1;
			len = 8;
		}
		if (wr.opcode == IBV_WR_SEND || wr.opcode == IBV_WR_SEND_WITH_IMM) {
			struct ibv_sge rs = { (uintptr_t)rr, REGION, peer->rmr->lkey };

			wr.imm_data = rte_cpu_to_be_32(i);
			tt_post_recv(q->peer, i, &rs, 1);
		}
		if (wr.opcode == IBV_WR_RDMA_READ)
			tt_fill(rr, len, 1000 * s + i);
		else
			tt_fill(l, len, 1000 * s + i);
		me->len[i] = len;
		me->op[i] = wr.opcode;
		tt_post_send(q, &wr);
	}
}

static void dump(void)
{
	unsigned int i, s;

	for (s = 0; s < 2; s++)
		for (i = 0; droce_counter_name(i) != NULL; i++)
			fprintf(stderr, "side %u %s %llu\n", s, droce_counter_name(i),
				(unsigned long long)((uint64_t *)&tt.cnt[s])[i]);
}

struct done {
	struct tt_qp *q[2];
	int sends[2], recvs[2];
	int want_recvs[2];
	uint32_t next_recv[2];
};

static bool pred_done(struct tt *t, void *arg)
{
	struct done *d = arg;
	struct ibv_wc wc[32];
	int s, n, i;

	RTE_SET_USED(t);
	for (s = 0; s < 2; s++) {
		while ((n = droce_poll_cq(d->q[s]->scq, 32, wc)) > 0)
			for (i = 0; i < n; i++) {
				if (wc[i].status != IBV_WC_SUCCESS) {
					fprintf(stderr, "side %d wr %llu: status %d\n", s,
						(unsigned long long)wc[i].wr_id, wc[i].status);
					dump();
					exit(1);
				}
				CHECK_EQ(wc[i].wr_id, d->sends[s]);	/* in order, once */
				d->sends[s]++;
			}
		while ((n = droce_poll_cq(d->q[s]->peer->rcq, 32, wc)) > 0)
			for (i = 0; i < n; i++) {
				uint32_t k = (uint32_t)wc[i].wr_id;

				CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
				/* receives complete in the order the sends were posted */
				CHECK(k >= d->next_recv[s]);
				while (d->next_recv[s] < k)
					CHECK(sd[s].op[d->next_recv[s]++] != IBV_WR_SEND &&
					      sd[s].op[d->next_recv[s] - 1] != IBV_WR_SEND_WITH_IMM);
				d->next_recv[s] = k + 1;
				CHECK_EQ(wc[i].byte_len, sd[s].len[k]);
				if (sd[s].op[k] == IBV_WR_SEND_WITH_IMM)
					CHECK_EQ(rte_be_to_cpu_32(wc[i].imm_data), k);
				d->recvs[s]++;
			}
	}
	return d->sends[0] == NMSG && d->sends[1] == NMSG && d->recvs[0] == d->want_recvs[0] &&
	       d->recvs[1] == d->want_recvs[1];
}

static void verify(int s)
{
	struct side *me = &sd[s], *peer = &sd[!s];
	uint64_t sum = 0;
	unsigned int i;
	uint8_t *shadow = malloc(REGION);

	CHECK(shadow != NULL);
	for (i = 0; i < NMSG; i++) {
		uint8_t *dst = me->op[i] == IBV_WR_RDMA_READ ? me->l + (size_t)i * REGION :
							       peer->r + (size_t)i * REGION;

		if (me->op[i] == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			CHECK_EQ(me->orig[i], sum);	/* executed exactly once, in order */
			sum += i + 1;
			continue;
		}
		tt_fill(shadow, me->len[i], 1000 * s + i);
		if (memcmp(dst, shadow, me->len[i]) != 0) {
			fprintf(stderr, "side %d msg %u op %d len %u: data differs\n", s, i,
				me->op[i], me->len[i]);
			exit(1);
		}
	}
	CHECK_EQ(peer->ctr, sum);
	free(shadow);
}

static void run(enum ibv_mtu mtu, unsigned int drop, unsigned int dup, unsigned int reorder)
{
	struct tt_opts o;
	struct done d;
	int s;
	unsigned int i;

	tt_opts_default(&o);
	o.mtu = mtu;
	o.timeout = 8;		/* ~1 ms: simulated time anyway */
	o.depth = 512;
	memset(&tt.cnt, 0, sizeof(tt.cnt));
	memset(&d, 0, sizeof(d));
	d.q[0] = tt_pair(&tt, &o);
	d.q[1] = d.q[0]->peer;
	for (s = 0; s < 2; s++) {
		memset(sd[s].r, 0, (size_t)NMSG * REGION);
		sd[s].ctr = 0;
	}
	for (s = 0; s < 2; s++) {
		post_all(d.q[s], s);
		for (i = 0; i < NMSG; i++)
			d.want_recvs[s] += sd[s].op[i] == IBV_WR_SEND ||
					   sd[s].op[i] == IBV_WR_SEND_WITH_IMM;
	}
	tt.drop = drop;
	tt.dup = dup;
	tt.reorder = reorder;
	CHECK(tt_run(&tt, pred_done, &d, NS_LIMIT));
	tt.drop = tt.dup = tt.reorder = 0;
	verify(0);
	verify(1);
	printf("mtu %u drop %u dup %u reorder %u (per mille): %llu frames, retransmits %llu/%llu, "
	       "dup requests %llu/%llu, seq NAKs %llu/%llu: ok\n", 128u << mtu, drop, dup, reorder,
	       (unsigned long long)tt.frames,
	       (unsigned long long)tt.cnt[0].retransmits, (unsigned long long)tt.cnt[1].retransmits,
	       (unsigned long long)tt.cnt[0].duplicate_request,
	       (unsigned long long)tt.cnt[1].duplicate_request,
	       (unsigned long long)tt.cnt[0].seq_nak_sent, (unsigned long long)tt.cnt[1].seq_nak_sent);
	if (drop != 0)
		CHECK(tt.cnt[0].retransmits + tt.cnt[1].retransmits > 0);
	if (dup != 0)
		CHECK(tt.cnt[0].duplicate_request + tt.cnt[1].duplicate_request > 0);
}

int main(int argc, char **argv)
{
	tt_init(&tt, argc, argv, 0x5eed);
	setup(0);
	setup(1);
	run(IBV_MTU_1024, 0, 0, 0);
	run(IBV_MTU_1024, 30, 20, 30);
	run(IBV_MTU_256, 20, 20, 20);
	run(IBV_MTU_4096, 50, 30, 50);
	return 0;
}
