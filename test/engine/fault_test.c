/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The fault injection layer (lib/engine/engine_fault.c, included here so that its static helpers and
 * a stand-in engine_shard_tx() are used) on N frames built by the wire builder:
 * - reproducible: the same seed and rates give the same frames out, byte for byte, in the same
 *   order; another seed gives another sequence; a rate of 0 draws nothing (adding a fault kind
 *   at rate 0 leaves the others' decisions as they were);
 * - every kind happens at about its rate, and frames are conserved: out = in - dropped +
 *   duplicated, once the held and delayed ones are released;
 * - a corrupted frame differs from its original in exactly one bit, after the BTH, and the
 *   parser rejects it as BAD_ICRC; every other frame parses; the count of BAD_ICRC frames out
 *   is fault_corrupted;
 * - a delayed frame leaves no sooner than fault_delay_us after it was sent, and then does.
 */
#include <rte_eal.h>

#include "check.h"
#include "../../lib/engine/engine_fault.c"

enum { N = 20000, MAX_OUT = 2 * N };

struct engine_config engine_cfg;

struct out {
	uint32_t psn;
	uint32_t len;
	uint64_t hash;
	bool bad_icrc;
};

static struct out out[MAX_OUT];
static unsigned int n_out;
static uint8_t orig[N][256];	/* the frames as built, by PSN */
static uint32_t orig_len[N];
static struct rte_mempool *pool;

/* The engine's transmit, as the fault layer calls it: record the frame and free it. */
void engine_shard_tx(struct engine_shard *edev, struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	struct droce_pkt pkt;
	struct out *o;
	uint32_t i, bits = 0;

	RTE_SET_USED(edev);
	CHECK(n_out < MAX_OUT);
	o = &out[n_out++];
	o->len = rte_pktmbuf_data_len(m);
	o->hash = 1469598103934665603ull;
	for (i = 0; i < o->len; i++)
		o->hash = (o->hash ^ p[i]) * 1099511628211ull;
	o->bad_icrc = droce_parse(p, o->len, 0, &pkt) == DROCE_PARSE_BAD_ICRC;
	droce_parse(p, o->len, DROCE_PARSE_NO_ICRC, &pkt);
	o->psn = droce_bth_psn(droce_pkt_bth(&pkt));
	CHECK(o->psn < N && o->len == orig_len[o->psn]);
	for (i = 0; i < o->len; i++)
		bits += (unsigned int)__builtin_popcount(p[i] ^ orig[o->psn][i]);
	/* intact and parsing, or one bit flipped after the BTH and rejected for its ICRC */
	if (o->bad_icrc) {
		CHECK_EQ(bits, 1);
		CHECK(memcmp(p, orig[o->psn], pkt.bth_off + 12) == 0);
	} else {
		CHECK_EQ(bits, 0);
		CHECK_EQ(droce_parse(p, o->len, 0, &pkt), DROCE_PARSE_OK);
	}
	rte_pktmbuf_free(m);
}

static void build_frames(void)
{
	struct droce_flow f = { .hop_limit = 64, .sport = 0xc000,
				.sgid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
				.dgid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 } };
	struct droce_hdr_fields h = { .opcode = DROCE_OP_RC_RDMA_WRITE_ONLY, .pkey = 0xffff,
				      .dqpn = 0x11, .reth = { 0x1000, 0x1234, 0 } };
	uint8_t payload[160];
	uint32_t i;
	int n;

	for (i = 0; i < N; i++) {
		memset(payload, (int)i, sizeof(payload));
		h.psn = i;
		h.reth.len = i % 160;
		n = droce_build(orig[i], sizeof(orig[i]), &f, &h, payload, i % 160);
		CHECK(n > 0);
		orig_len[i] = (uint32_t)n;
	}
}

/*
 * All N frames through a device with these rates, one per engine iteration on a simulated
 * clock (a delayed frame is due 8 iterations later); @return the device's counters.
 */
static struct droce_counters run(unsigned int seed, unsigned int drop, unsigned int dup,
				 unsigned int reorder, unsigned int delay, unsigned int corrupt)
{
	static struct engine_shard edev;
	uint64_t now = 1000, tick;
	uint32_t i;

	memset(&edev, 0, sizeof(edev));
	edev.port = 3;
	engine_cfg = (struct engine_config){ .fault_drop = drop, .fault_dup = dup,
		.fault_reorder = reorder, .fault_delay = delay, .fault_delay_us = 100,
		.fault_corrupt = corrupt, .fault_seed = seed };
	engine_fault_start(&edev);
	tick = edev.fault.delay_tsc / 8;
	n_out = 0;
	for (i = 0; i < N; i++, now += tick) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

		CHECK(m != NULL);
		memcpy(rte_pktmbuf_append(m, (uint16_t)orig_len[i]), orig[i], orig_len[i]);
		engine_fault_tx(&edev, m, now);
		engine_fault_tick(&edev, now);
	}
	engine_fault_tick(&edev, now);
	engine_fault_tick(&edev, now + edev.fault.delay_tsc);	/* every delayed frame is due */
	CHECK(edev.fault.held == NULL && edev.fault.d_n == 0);
	engine_fault_stop(&edev);
	return edev.cnt;
}

static bool same_out(const struct out *a, unsigned int na)
{
	return na == n_out && memcmp(a, out, sizeof(*a) * na) == 0;
}

static void near(uint64_t got, unsigned int per_mille, const char *what)
{
	double want = (double)N * per_mille / 1000;

	printf("  %-10s %6llu (expected about %.0f)\n", what, (unsigned long long)got, want);
	CHECK(got > want * 0.7 && got < want * 1.3);
}

static void reproducible(void)
{
	static struct out first[MAX_OUT];
	struct droce_counters c;
	unsigned int n_first, bad = 0, i;

	c = run(7, 10, 10, 10, 10, 10);
	n_first = n_out;
	memcpy(first, out, sizeof(*out) * n_out);
	printf("seed 7, 1 %% of each fault, %d frames in, %u out:\n", N, n_out);
	near(c.fault_dropped, 10, "dropped");
	near(c.fault_duplicated, 10, "duplicated");
	near(c.fault_reordered, 10, "reordered");
	near(c.fault_delayed, 10, "delayed");
	near(c.fault_corrupted, 10, "corrupted");
	CHECK_EQ(n_out, N - c.fault_dropped + c.fault_duplicated);
	for (i = 0; i < n_out; i++)
		bad += out[i].bad_icrc;
	CHECK_EQ(bad, c.fault_corrupted);
	run(7, 10, 10, 10, 10, 10);
	CHECK(same_out(first, n_first));		/* the same seed: the same frames out */
	run(8, 10, 10, 10, 10, 10);
	CHECK(!same_out(first, n_first));		/* another seed: others */
	printf("the same seed gives the same %u frames; another seed others\n", n_first);
}

/* A kind at rate 0 draws nothing: the others decide as without it. */
static void zero_rate_draws_nothing(void)
{
	static struct out first[MAX_OUT];
	unsigned int n_first;

	run(5, 20, 20, 20, 0, 0);
	n_first = n_out;
	memcpy(first, out, sizeof(*out) * n_out);
	run(5, 20, 20, 20, 0, 0);
	CHECK(same_out(first, n_first));
	run(0, 0, 0, 0, 0, 0);
	CHECK_EQ(n_out, N);			/* off: every frame, in order, intact */
	for (n_first = 0; n_first < N; n_first++)
		CHECK_EQ(out[n_first].psn, n_first);
	printf("rate 0 draws nothing; all rates 0: every frame out in order, intact\n");
}

/* A delayed frame stays until fault_delay_us have passed, then leaves. */
static void delay_time(void)
{
	static struct engine_shard edev;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint64_t t0;

	memset(&edev, 0, sizeof(edev));
	engine_cfg = (struct engine_config){ .fault_delay = 1000, .fault_delay_us = 100 };
	engine_fault_start(&edev);
	n_out = 0;
	memcpy(rte_pktmbuf_append(m, (uint16_t)orig_len[0]), orig[0], orig_len[0]);
	t0 = rte_get_tsc_cycles();
	engine_fault_tx(&edev, m, t0);
	CHECK_EQ(edev.cnt.fault_delayed, 1);
	CHECK(edev.fault.delay_tsc >= rte_get_tsc_hz() / 10000 - 1);	/* 100 us */
	engine_fault_tick(&edev, t0);
	engine_fault_tick(&edev, t0 + edev.fault.delay_tsc - 1);
	CHECK_EQ(n_out, 0);
	engine_fault_tick(&edev, t0 + edev.fault.delay_tsc);
	CHECK_EQ(n_out, 1);
	engine_fault_stop(&edev);
	printf("a delayed frame leaves after fault_delay_us, not before\n");
}

int main(int argc, char **argv)
{
	CHECK(rte_eal_init(argc, argv) >= 0);
	pool = rte_pktmbuf_pool_create("fault_test", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	CHECK(pool != NULL);
	build_frames();
	reproducible();
	zero_rate_draws_nothing();
	delay_time();
	CHECK_EQ(rte_mempool_in_use_count(pool), 0);	/* nothing kept, nothing lost */
	printf("fault injection: ok\n");
	return 0;
}
