/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * libFuzzer target for the receive path past the parser: admission (QP type and state, P_Key,
 * Q_Key, opcode sequence), the responder (SEND, WRITE, READ, ATOMIC into registered memory,
 * R_Key and bounds checks, duplicates) and the completer (ACK, NAK, READ response, atomic ACK
 * against outstanding requests) of an RC, UC or UD QP in RESET, INIT, RTR, RTS or ERR.
 *
 * Input: byte 0 chooses the QP (type, state), byte 1 what to aim (bits: 0x80 PSN, 0x40 MR,
 * 0x20 Q_Key, 0x10 addresses, 0x08 duplicate, 0x04 next packet, 0x02 RETH length), the rest is
 * a frame. The frame must pass droce_parse() (ICRC not checked: the engine has verified it
 * before the transport sees a frame); its DestQP is set to the QP's, and "aim" may set its PSN
 * to what the QP expects (the responder's ePSN, or the completer's oldest unacknowledged PSN),
 * point its RETH/AtomicETH at one of the MRs, set its Q_Key, and make its addresses those of
 * the QP's peer and the QP (an RC/UC QP takes frames from its peer only), so that the fuzzer
 * reaches deep states without guessing 24-bit numbers.
 *
 * Per input: a fresh QP on droce1 (with two receives posted, and in RTS a SEND, a WRITE, a
 * READ and an ATOMIC outstanding whose frames vanish), the frame given to transport_rx() -
 * and, as "aim" says, again as a duplicate and again as the next packet - the transport run
 * to quiescence and through two timeouts, its completions drained, the QP destroyed.
 * Afterwards:
 * - every frame the transport sent parses (the test engine checks each, tt.h);
 * - the guard bytes around the MRs, the MR registered without remote write or atomic access
 *   and the MR of another PD are untouched (a write lands only where an R_Key allows it);
 * - no mbuf is left behind once the QP is destroyed;
 * - nothing crashes, leaks or reads out of bounds (ASan, UBSan).
 * DCQCN is on (ECN, CNPs for CE frames, a CNP's rate cut), as by default in the engine.
 */
#include "../transport/tt.h"
#include "transport_private.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	MR_LEN = 16384,
	GUARD = 4096,
	GUARD_BYTE = 0x5a,
	RO_BYTE = 0x3c,
	N_STATES = 5,
	N_TYPES = 3,
};

enum mr_kind { MR_RW, MR_RO, MR_OTHER_PD, MR_NUM };

static struct tt tt;
static struct droce_cq *scq, *rcq;
static struct droce_pd *other_pd;
static uint8_t *mem[MR_NUM];		/* GUARD | MR_LEN | GUARD */
static struct droce_mr *mr[MR_NUM];
/* What must not change, as it was set up: compared with memcmp(), not a byte loop that the
 * fuzzer's comparison tracing slows down many times. */
static uint8_t ref_guard[GUARD], ref_ro[MR_LEN];
static const enum ibv_qp_state states[N_STATES] = {
	IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_ERR,
};
static const enum ibv_qp_type types[N_TYPES] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };

static void mem_init(int k, int access, struct droce_pd *pd, uint8_t fill)
{
	mem[k] = aligned_alloc(4096, MR_LEN + 2 * GUARD);
	CHECK(mem[k] != NULL);
	memset(mem[k], GUARD_BYTE, MR_LEN + 2 * GUARD);
	memset(mem[k] + GUARD, fill, MR_LEN);
	mr[k] = droce_reg_mr(pd, mem[k] + GUARD, MR_LEN, access);
	CHECK(mr[k] != NULL);
}

/* Congestion control on, as the engine's default: CE frames answered by CNPs, CNPs cutting
 * the rate of the QP (a fast one, so that its pacer holds the requester now and then). */
static struct dcqcn_params cc;

static const struct dcqcn_params *fuzz_dcqcn(struct transport_env *env, struct droce_device *dev)
{
	RTE_SET_USED(env);
	RTE_SET_USED(dev);
	return &cc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char *eal[] = { "fuzz_rx", "--no-huge", "--no-shconf", "-m", "512", "--no-pci",
			       "--log-level=*:crit", NULL };

	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	setenv("DROCE_CONFIG", "", 1);	/* the embedded default: droce0, droce1 */
	memset(ref_guard, GUARD_BYTE, GUARD);
	memset(ref_ro, RO_BYTE, MR_LEN);
	tt_init(&tt, 7, eal, 1);
	tt.blackhole[0] = tt.blackhole[1] = true;	/* what the QP sends is checked, then dropped */
	cc = (struct dcqcn_params){ .np = true, .rp = true, .ecn = DROCE_ECN_ECT0,
		.alpha_g_shift = 8, .alpha_init = DCQCN_ALPHA_ONE, .stages = 5,
		.line_rate = 100000, .min_rate = 1000, .ai_rate = 1000, .hai_rate = 10000,
		.byte_reset = 65536, .burst = 4096, .hz = TT_HZ, .cnp_interval = TT_HZ / 20000,
		.rate_reduce_period = TT_HZ / 250000, .alpha_period = TT_HZ / 18000,
		.time_reset = TT_HZ / 18000 };
	tt.env.dcqcn = fuzz_dcqcn;
	scq = droce_create_cq(tt.ctx[1], 4096, NULL, NULL, 0);
	rcq = droce_create_cq(tt.ctx[1], 4096, NULL, NULL, 0);
	other_pd = droce_alloc_pd(tt.ctx[1]);
	CHECK(scq != NULL && rcq != NULL && other_pd != NULL);
	mem_init(MR_RW, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		 IBV_ACCESS_REMOTE_ATOMIC, tt.pd[1], 0);
	mem_init(MR_RO, IBV_ACCESS_REMOTE_READ, tt.pd[1], RO_BYTE);
	mem_init(MR_OTHER_PD, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, other_pd, RO_BYTE);
	return 0;
}

static void modify(struct droce_qp *qp, struct transport_qp *t, struct ibv_qp_attr *a, int mask)
{
	CHECK_EQ(droce_modify_qp(qp, a, mask), 0);
	transport_qp_modified(&tt.env, t, mask);
}

/* Walk @p qp (of type @p type) from RESET to @p st. */
static void walk(struct droce_qp *qp, struct transport_qp *t, enum ibv_qp_type type,
		 enum ibv_qp_state st)
{
	struct ibv_qp_attr a;
	int ud = type == IBV_QPT_UD;

	if (st == IBV_QPS_RESET)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	a.qp_access_flags = type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC :
			    ud ? 0 : IBV_ACCESS_REMOTE_WRITE;
	modify(qp, t, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
	if (st == IBV_QPS_INIT || st == IBV_QPS_ERR)
		goto out;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x11;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	tt_av(&tt, &a.ah_attr, 0);
	modify(qp, t, &a, ud ? IBV_QP_STATE : IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
	       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	       (type == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0));
	if (st == IBV_QPS_RTR)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x200;
	a.timeout = 10;
	a.retry_cnt = 2;
	a.rnr_retry = 2;
	a.max_rd_atomic = 4;
	modify(qp, t, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | (type == IBV_QPT_RC ?
	       IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
	return;
out:
	if (st == IBV_QPS_ERR) {
		a.qp_state = IBV_QPS_ERR;
		modify(qp, t, &a, IBV_QP_STATE);
	}
}

static void post_recvs(struct droce_qp *qp)
{
	struct ibv_sge sg = { (uintptr_t)mem[MR_RW] + GUARD, 4096, mr[MR_RW]->lkey };
	struct ibv_recv_wr w = { .sg_list = &sg, .num_sge = 1 }, *bad;
	int i;

	for (i = 0; i < 2; i++) {
		sg.addr += (uint64_t)i * 4096;
		CHECK_EQ(droce_post_recv(qp, &w, &bad), 0);
	}
}

/* A SEND, a WRITE, a READ and an ATOMIC the peer never answers: the completer waits. */
static void post_sends(struct droce_qp *qp, enum ibv_qp_type type)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_SEND, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD };
	struct ibv_sge sg = { (uintptr_t)mem[MR_RW] + GUARD + 8192, 2000, mr[MR_RW]->lkey };
	struct ibv_send_wr w, *bad;
	struct droce_ah *ah = NULL;
	struct ibv_ah_attr aa;
	unsigned int i, n = type == IBV_QPT_RC ? 4 : type == IBV_QPT_UC ? 2 : 1;

	if (type == IBV_QPT_UD) {
		memset(&aa, 0, sizeof(aa));
		tt_av(&tt, &aa, 0);
		ah = droce_create_ah(tt.pd[1], &aa);
		CHECK(ah != NULL);
	}
	for (i = 0; i < n; i++) {
		memset(&w, 0, sizeof(w));
		w.opcode = ops[i];
		w.sg_list = &sg;
		w.num_sge = 1;
		w.send_flags = IBV_SEND_SIGNALED;
		sg.length = ops[i] == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : ah != NULL ? 256 : 2000;
		w.wr.rdma.remote_addr = 0x10000;
		w.wr.rdma.rkey = 0x1234;
		if (ops[i] == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			w.wr.atomic.remote_addr = 0x10000;
			w.wr.atomic.rkey = 0x1234;
		}
		if (ah != NULL) {
			w.wr.ud.ah = ah;
			w.wr.ud.remote_qpn = 0x11;
			w.wr.ud.remote_qkey = 0x11111111;
		}
		CHECK_EQ(droce_post_send(qp, &w, &bad), 0);
	}
	while (tt_step(&tt) != 0)
		;
	if (ah != NULL)
		CHECK_EQ(droce_destroy_ah(ah), 0);
}

/*
 * A VA in or near MR @p k, from the fuzzed VA @p r: r % 3 picks the MR, r / 3 % 3 where - a
 * byte anywhere from @p slack before the MR to @p slack past its end, within @p slack of its
 * start, or within 4 * @p slack before its end - so that bounds are hit often.
 */
static uint64_t near_mr(uint64_t r, int *k, uint64_t slack)
{
	uint64_t base, d = r / 9;

	*k = (int)(r % MR_NUM);
	base = (uintptr_t)mem[*k] + GUARD;
	switch (r / 3 % 3) {
	case 0:
		return base + d % (MR_LEN + 2 * slack) - slack;
	case 1:
		return base + d % (2 * slack) - slack;
	default:
		return base + MR_LEN - d % (4 * slack);
	}
}

/* Point a RETH or AtomicETH of the frame at one of the MRs; with @p how 0x02 make the RETH
 * length the payload's (a single-packet WRITE that fits its own length). */
static void aim_at_mr(struct droce_pkt *pkt, uint8_t how)
{
	struct droce_reth *reth = (void *)(uintptr_t)droce_pkt_ext(pkt, DROCE_HDR_RETH);
	struct droce_atmeth *atm = (void *)(uintptr_t)droce_pkt_ext(pkt, DROCE_HDR_ATMETH);
	int k;

	if (reth != NULL) {
		reth->va = rte_cpu_to_be_64(near_mr(rte_be_to_cpu_64(reth->va), &k, 64));
		reth->rkey = rte_cpu_to_be_32(mr[k]->rkey);
		if (how & 0x02)
			reth->len = rte_cpu_to_be_32(pkt->payload_len);
	}
	if (atm != NULL) {
		atm->va = rte_cpu_to_be_64(near_mr(rte_be_to_cpu_64(atm->va), &k, 8));
		atm->rkey = rte_cpu_to_be_32(mr[k]->rkey);
	}
}

/* Set DestQP and, when @p aim says so, the PSN the QP expects and the target MR. */
static void aim(struct droce_pkt *pkt, const struct transport_qp *t, uint8_t how)
{
	struct droce_bth *bth = (void *)(uintptr_t)droce_pkt_bth(pkt);
	uint32_t psn = droce_bth_psn(bth);

	bth->qpn = rte_cpu_to_be_32((rte_be_to_cpu_32(bth->qpn) & ~DROCE_QPN_MASK) | t->qpn);
	if (how & 0x80) {
		/* requests: the responder's ePSN; responses: the oldest unacknowledged PSN, plus
		 * a small offset from the fuzzed PSN */
		psn = (pkt->mask & DROCE_M_RESP) ? t->req.comp_psn : t->resp.epsn;
		psn = (psn + (droce_bth_psn(bth) & 3)) & DROCE_PSN_MASK;
		bth->apsn = rte_cpu_to_be_32((rte_be_to_cpu_32(bth->apsn) & ~DROCE_PSN_MASK) | psn);
	}
	if (how & 0x40)
		aim_at_mr(pkt, how);
	if (how & 0x10) {	/* from the QP's peer to the QP: past the address check */
		memcpy(pkt->sgid, tt.gid[0].raw, 16);
		memcpy(pkt->dgid, tt.gid[1].raw, 16);
	}
	if ((how & 0x20) && (pkt->mask & DROCE_M_DETH)) {
		struct droce_deth *d = (void *)(uintptr_t)droce_pkt_ext(pkt, DROCE_HDR_DETH);

		d->qkey = rte_cpu_to_be_32(0x11111111);
	}
}

/* Memory nothing may write: guards, the MR without remote write, the other PD's MR. */
static void check_memory(void)
{
	int k;

	for (k = 0; k < MR_NUM; k++) {
		CHECK(memcmp(mem[k], ref_guard, GUARD) == 0);
		CHECK(memcmp(mem[k] + GUARD + MR_LEN, ref_guard, GUARD) == 0);
	}
	CHECK(memcmp(mem[MR_RO] + GUARD, ref_ro, MR_LEN) == 0);
	CHECK(memcmp(mem[MR_OTHER_PD] + GUARD, ref_ro, MR_LEN) == 0);
}

static void drain(void)
{
	struct ibv_wc wc[16];

	while (droce_poll_cq(scq, 16, wc) > 0 || droce_poll_cq(rcq, 16, wc) > 0)
		;
}

/* Run the test engine until nothing moves. */
static void quiesce(void)
{
	while (tt_step(&tt) != 0)
		;
}

/*
 * The frame @p f (@p len bytes), aimed as @p how says, to @p t; its bytes as delivered into
 * @p copy (when not NULL). @return false when it does not parse (the engine would drop it).
 */
static bool deliver(struct transport_qp *t, const uint8_t *f, size_t len, uint8_t how,
		    uint8_t *copy)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(tt.pool);
	struct droce_pkt pkt;
	uint8_t *d;

	CHECK(m != NULL);
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	CHECK(d != NULL);
	memcpy(d, f, len);
	if (droce_parse_mbuf(m, DROCE_PARSE_NO_ICRC, &pkt) != DROCE_PARSE_OK) {
		rte_pktmbuf_free(m);
		return false;
	}
	aim(&pkt, t, how);
	if (copy != NULL)
		memcpy(copy, d, len);
	transport_rx(&tt.env, t, m, &pkt);
	quiesce();
	return true;
}

/*
 * The frame to @p t; with @p how 0x08 then again as it was delivered (a duplicate), with 0x04
 * again at the next expected PSN (the next packet of a message); then the transport runs to
 * quiescence and through two timeouts.
 */
static void feed(struct transport_qp *t, const uint8_t *f, size_t len, uint8_t how)
{
	uint8_t sent[RTE_MBUF_DEFAULT_DATAROOM];
	int i;

	if (!deliver(t, f, len, how, sent))
		return;
	if (how & 0x08)
		deliver(t, sent, len, how & 0x10, NULL);
	if (how & 0x04)
		deliver(t, sent, len, how & 0x90, NULL);
	for (i = 0; i < 2; i++) {
		if (transport_deadline(t) != UINT64_MAX) {
			tt.env.now = RTE_MAX(tt.env.now, transport_deadline(t));
			transport_timeout(&tt.env, t);
		}
		quiesce();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct droce_qp_init_attr ia;
	enum ibv_qp_type type;
	enum ibv_qp_state st;
	struct transport_qp *t;
	struct droce_qp *qp;
	unsigned int mbufs = rte_mempool_in_use_count(tt.pool);

	if (size < 2 || size - 2 > RTE_MBUF_DEFAULT_DATAROOM)
		return 0;
	type = types[data[0] / N_STATES % N_TYPES];
	st = states[data[0] % N_STATES];
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = scq;
	ia.recv_cq = rcq;
	ia.qp_type = type;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = droce_create_qp(tt.pd[1], &ia);
	CHECK(qp != NULL);
	t = transport_qp_create(qp, &tt.cnt[1]);
	CHECK(t != NULL);
	tt.qps[0].t = t;	/* tt_step() drives it */
	tt.qps[0].qp = qp;
	tt.nqp = 1;
	walk(qp, t, type, st);
	if (st != IBV_QPS_RESET)
		post_recvs(qp);
	if (st == IBV_QPS_RTS)
		post_sends(qp, type);
	feed(t, data + 2, size - 2, data[1]);
	drain();
	tt.nqp = 0;
	transport_qp_destroy(t);
	CHECK_EQ(droce_destroy_qp(qp), 0);
	drain();
	check_memory();
	CHECK_EQ(rte_mempool_in_use_count(tt.pool), mbufs);	/* no frame kept or lost */
	return 0;
}
