/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce_modify_qp() against the rules of ibv_modify_qp(3) / IBA 10.3.1, for every
 * (from-state, to-state, QP type RC/UC/UD): the exact required mask, the required mask minus
 * each required bit, plus each single attribute bit, plus all optional bits, without
 * IBV_QP_STATE, and random masks. Expected: success iff the transition exists, every required
 * bit is present and no bit outside required|optional is (ALT_PATH: never on RoCE). On failure
 * the QP is unchanged (state and every attribute); on success query_qp returns what was set.
 * The expected table below is written from the man page and the Linux verbs core, separately
 * from lib/verbs/verbs_qp_modify.c.
 */
#include "vt.h"

#define NST (IBV_QPS_ERR + 1)

enum {
	PKEY = IBV_QP_PKEY_INDEX, PORT = IBV_QP_PORT, QKEY = IBV_QP_QKEY,
	ACC = IBV_QP_ACCESS_FLAGS, AV = IBV_QP_AV, MTU = IBV_QP_PATH_MTU,
	DQPN = IBV_QP_DEST_QPN, RQPSN = IBV_QP_RQ_PSN, SQPSN = IBV_QP_SQ_PSN,
	DRD = IBV_QP_MAX_DEST_RD_ATOMIC, RD = IBV_QP_MAX_QP_RD_ATOMIC,
	RNRT = IBV_QP_MIN_RNR_TIMER, TMO = IBV_QP_TIMEOUT, RETRY = IBV_QP_RETRY_CNT,
	RNR = IBV_QP_RNR_RETRY, ALT = IBV_QP_ALT_PATH, MIG = IBV_QP_PATH_MIG_STATE,
	CUR = IBV_QP_CUR_STATE, SQDN = IBV_QP_EN_SQD_ASYNC_NOTIFY,
};

/* Every mask bit a caller can pass (IBV_QP_CAP and IBV_QP_RATE_LIMIT included). */
static const int all_bits[] = {
	IBV_QP_CUR_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_ACCESS_FLAGS,
	IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_QKEY, IBV_QP_AV, IBV_QP_PATH_MTU,
	IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_RQ_PSN,
	IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_ALT_PATH, IBV_QP_MIN_RNR_TIMER, IBV_QP_SQ_PSN,
	IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_PATH_MIG_STATE, IBV_QP_CAP, IBV_QP_DEST_QPN,
	IBV_QP_RATE_LIMIT,
};

struct rule {
	enum ibv_qp_state from, to;
	int req[3], opt[3];	/* RC, UC, UD */
};

#define ANY_TO(s) { s, IBV_QPS_RESET, { 0 }, { 0 } }, { s, IBV_QPS_ERR, { 0 }, { 0 } }

static const struct rule rules[] = {
	{ IBV_QPS_RESET, IBV_QPS_RESET, { 0 }, { 0 } },
	{ IBV_QPS_RESET, IBV_QPS_INIT,
	  { PKEY | PORT | ACC, PKEY | PORT | ACC, PKEY | PORT | QKEY }, { 0 } },
	ANY_TO(IBV_QPS_INIT),
	{ IBV_QPS_INIT, IBV_QPS_INIT,
	  { 0 }, { PKEY | PORT | ACC, PKEY | PORT | ACC, PKEY | PORT | QKEY } },
	{ IBV_QPS_INIT, IBV_QPS_RTR,
	  { AV | MTU | DQPN | RQPSN | DRD | RNRT, AV | MTU | DQPN | RQPSN, 0 },
	  { ALT | ACC | PKEY, ALT | ACC | PKEY, PKEY | QKEY } },
	ANY_TO(IBV_QPS_RTR),
	{ IBV_QPS_RTR, IBV_QPS_RTS,
	  { SQPSN | TMO | RETRY | RNR | RD, SQPSN, SQPSN },
	  { CUR | ALT | ACC | RNRT | MIG, CUR | ALT | ACC | MIG, CUR | QKEY } },
	ANY_TO(IBV_QPS_RTS),
	{ IBV_QPS_RTS, IBV_QPS_RTS,
	  { 0 }, { CUR | ACC | ALT | MIG | RNRT, CUR | ACC | ALT | MIG, CUR | QKEY } },
	{ IBV_QPS_RTS, IBV_QPS_SQD, { 0 }, { SQDN, SQDN, SQDN } },
	ANY_TO(IBV_QPS_SQD),
	{ IBV_QPS_SQD, IBV_QPS_RTS,
	  { 0 }, { CUR | ALT | ACC | RNRT | MIG, CUR | ALT | ACC | MIG, CUR | QKEY } },
	{ IBV_QPS_SQD, IBV_QPS_SQD, { 0 },
	  { PORT | AV | TMO | RETRY | RNR | RD | DRD | ALT | ACC | PKEY | RNRT | MIG,
	    AV | ALT | ACC | PKEY | MIG, PKEY | QKEY } },
	ANY_TO(IBV_QPS_SQE),
	{ IBV_QPS_SQE, IBV_QPS_RTS, { 0 }, { 0, CUR | ACC, CUR | QKEY } },
	ANY_TO(IBV_QPS_ERR),
};

static const enum ibv_qp_type types[3] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };

static unsigned long n_checked, n_ok;

static const struct rule *find_rule(enum ibv_qp_state from, enum ibv_qp_state to)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(rules); i++)
		if (rules[i].from == from && rules[i].to == to)
			return &rules[i];
	return NULL;
}

static bool expect_ok(int ti, enum ibv_qp_state from, enum ibv_qp_state to, int mask)
{
	const struct rule *r = find_rule(from, to);
	int req, opt;

	if (r == NULL || (mask & ALT))
		return false;
	req = r->req[ti];
	opt = r->opt[ti];
	return (mask & req) == req && (mask & ~(req | opt | IBV_QP_STATE)) == 0;
}

/* Values that differ per call, so query_qp shows which call set them. */
static void fill(struct ibv_qp_attr *a, enum ibv_qp_state from, enum ibv_qp_state to,
		 unsigned long seq)
{
	vt_fill(a);
	a->qp_state = to;
	a->cur_qp_state = from;
	a->qkey = (uint32_t)seq;
	a->rq_psn = (uint32_t)(seq * 3) & 0xffffff;
	a->sq_psn = (uint32_t)(seq * 5) & 0xffffff;
	a->dest_qp_num = (uint32_t)(seq * 7) & 0xffffff;
	a->timeout = seq % 32;
	a->retry_cnt = seq % 8;
	a->rnr_retry = (seq + 1) % 8;
	a->min_rnr_timer = (seq + 2) % 32;
	a->max_rd_atomic = seq % (DROCE_MAX_RD_ATOM + 1);
	a->max_dest_rd_atomic = (seq + 1) % (DROCE_MAX_RD_ATOM + 1);
	a->path_mtu = (enum ibv_mtu)(1 + seq % 5);
	a->qp_access_flags = (seq & 1 ? IBV_ACCESS_REMOTE_READ : 0) |
			     (seq & 2 ? IBV_ACCESS_REMOTE_WRITE : 0);
	a->ah_attr.grh.hop_limit = (uint8_t)seq;
	a->path_mig_state = IBV_MIG_MIGRATED;
}

static void check_set(const struct ibv_qp_attr *q, const struct ibv_qp_attr *a, int mask)
{
	if (mask & QKEY) CHECK_EQ(q->qkey, a->qkey);
	if (mask & RQPSN) CHECK_EQ(q->rq_psn, a->rq_psn);
	if (mask & SQPSN) CHECK_EQ(q->sq_psn, a->sq_psn);
	if (mask & DQPN) CHECK_EQ(q->dest_qp_num, a->dest_qp_num);
	if (mask & TMO) CHECK_EQ(q->timeout, a->timeout);
	if (mask & RETRY) CHECK_EQ(q->retry_cnt, a->retry_cnt);
	if (mask & RNR) CHECK_EQ(q->rnr_retry, a->rnr_retry);
	if (mask & RNRT) CHECK_EQ(q->min_rnr_timer, a->min_rnr_timer);
	if (mask & RD) CHECK_EQ(q->max_rd_atomic, a->max_rd_atomic);
	if (mask & DRD) CHECK_EQ(q->max_dest_rd_atomic, a->max_dest_rd_atomic);
	if (mask & MTU) CHECK_EQ(q->path_mtu, a->path_mtu);
	if (mask & ACC) CHECK_EQ(q->qp_access_flags, a->qp_access_flags);
	if (mask & PORT) CHECK_EQ(q->port_num, a->port_num);
	if (mask & PKEY) CHECK_EQ(q->pkey_index, a->pkey_index);
	if (mask & AV) CHECK_EQ(q->ah_attr.grh.hop_limit, a->ah_attr.grh.hop_limit);
	if (mask & MIG) CHECK_EQ(q->path_mig_state, a->path_mig_state);
}

static void query(struct droce_qp *qp, struct ibv_qp_attr *a)
{
	struct droce_qp_init_attr ia;

	memset(a, 0, sizeof(*a));
	CHECK_EQ(droce_query_qp(qp, a, 0, &ia), 0);
}

/* Put @p qp in @p st from whatever state it is in. */
static void reach(struct droce_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct droce_cq *cq = qp->send_cq;

	CHECK_EQ(droce_modify_qp(qp, &a, IBV_QP_STATE), 0);
	vt_drain(cq);
	vt_walk(qp, st);
	vt_drain(cq);
	CHECK_EQ(qp->state, st);
}

static void try_one(struct droce_qp *qp, int ti, enum ibv_qp_state from, enum ibv_qp_state to,
		    int mask)
{
	struct ibv_qp_attr a, before, after;
	bool want = expect_ok(ti, from, to, mask);
	int rc;

	if (qp->state != from)
		reach(qp, from);
	fill(&a, from, to, ++n_checked);
	query(qp, &before);
	rc = droce_modify_qp(qp, &a, mask);
	query(qp, &after);
	if (!want) {
		if (rc != EINVAL) {
			fprintf(stderr, "type %d %d->%d mask %#x: rc %d, want EINVAL\n",
				types[ti], from, to, mask, rc);
			exit(1);
		}
		CHECK(memcmp(&before, &after, sizeof(before)) == 0);	/* unchanged */
		return;
	}
	if (rc != 0) {
		fprintf(stderr, "type %d %d->%d mask %#x: rc %d, want 0\n",
			types[ti], from, to, mask, rc);
		exit(1);
	}
	n_ok++;
	CHECK_EQ(after.qp_state, (mask & IBV_QP_STATE) ? to : from);
	check_set(&after, &a, mask);
}

static void one_transition(struct droce_qp *qp, int ti, enum ibv_qp_state from,
			   enum ibv_qp_state to)
{
	const struct rule *r = find_rule(from, to);
	int req = r ? r->req[ti] : 0, opt = r ? r->opt[ti] : 0;
	unsigned int i, k;

	try_one(qp, ti, from, to, IBV_QP_STATE | req);
	try_one(qp, ti, from, to, IBV_QP_STATE | req | opt);
	if (from == to)
		try_one(qp, ti, from, to, req | (opt & ~ALT));	/* no STATE: stays */
	for (i = 0; i < RTE_DIM(all_bits); i++) {
		try_one(qp, ti, from, to, IBV_QP_STATE | req | all_bits[i]);
		if (req & all_bits[i])
			try_one(qp, ti, from, to, IBV_QP_STATE | (req & ~all_bits[i]));
	}
	/* Random masks over the bits that matter here and two that never do. */
	for (k = 0; k < 40; k++) {
		int pool = req | opt | IBV_QP_CAP | IBV_QP_RATE_LIMIT | PORT | QKEY | AV;
		int m = IBV_QP_STATE | (int)(((unsigned int)rand() & (unsigned int)pool) |
					     (rand() & 1 ? (unsigned int)req : 0));

		try_one(qp, ti, from, to, m);
	}
}

static void test_table(struct droce_pd *pd, struct droce_cq *cq)
{
	unsigned long skipped = 0;
	int ti, from, to;

	for (ti = 0; ti < 3; ti++) {
		struct droce_qp *qp = vt_qp(pd, types[ti], cq, cq, 4);

		for (from = 0; from < NST; from++) {
			/* RC never enters SQE: a send error takes it to ERR (IBA 10.8.3.3). */
			if (types[ti] == IBV_QPT_RC && from == IBV_QPS_SQE) {
				skipped += NST;
				continue;
			}
			for (to = 0; to < NST; to++)
				one_transition(qp, ti, (enum ibv_qp_state)from,
					       (enum ibv_qp_state)to);
		}
		CHECK_EQ(droce_destroy_qp(qp), 0);
	}
	printf("modify table: %lu combinations, %lu accepted, %lu RC/SQE rows skipped\n",
	       n_checked, n_ok, skipped);
}

/* Values out of range fail with EINVAL even with a valid mask, and change nothing. */
static void test_values(struct droce_pd *pd, struct droce_cq *cq)
{
	struct droce_qp *qp = vt_qp(pd, IBV_QPT_RC, cq, cq, 4);
	struct ibv_qp_attr a, q;
	int init = IBV_QP_STATE | PKEY | PORT | ACC;
	int rtr = IBV_QP_STATE | vt_req_mask(IBV_QPT_RC, IBV_QPS_RTR);
	int rts = IBV_QP_STATE | vt_req_mask(IBV_QPT_RC, IBV_QPS_RTS);

#define BAD(to, mask, field, val) do { \
	vt_fill(&a); a.qp_state = to; a.field = val; \
	CHECK_EQ(droce_modify_qp(qp, &a, mask), EINVAL); \
} while (0)
	BAD(IBV_QPS_INIT, init, port_num, 2);
	BAD(IBV_QPS_INIT, init, port_num, 0);
	BAD(IBV_QPS_INIT, init, pkey_index, 1);
	BAD(IBV_QPS_INIT, init, qp_access_flags, IBV_ACCESS_MW_BIND);
	BAD(IBV_QPS_INIT, init, qp_state, (enum ibv_qp_state)7);
	CHECK_EQ(qp->state, IBV_QPS_RESET);
	vt_to(qp, IBV_QPS_INIT);
	BAD(IBV_QPS_RTR, rtr, path_mtu, (enum ibv_mtu)6);
	BAD(IBV_QPS_RTR, rtr, path_mtu, (enum ibv_mtu)0);
	BAD(IBV_QPS_RTR, rtr, dest_qp_num, 1u << 24);
	BAD(IBV_QPS_RTR, rtr, max_dest_rd_atomic, DROCE_MAX_RD_ATOM + 1);
	BAD(IBV_QPS_RTR, rtr, min_rnr_timer, 32);
	BAD(IBV_QPS_RTR, rtr, ah_attr.is_global, 0);	/* RoCE needs a GRH */
	BAD(IBV_QPS_RTR, rtr, ah_attr.port_num, 2);
	BAD(IBV_QPS_RTR, rtr, ah_attr.grh.sgid_index, DROCE_MAX_GID);
	BAD(IBV_QPS_RTR, rtr, ah_attr.grh.sgid_index, 5);	/* empty GID entry */
	CHECK_EQ(qp->state, IBV_QPS_INIT);
	/* PSNs are 24 bits: higher bits are dropped, as Linux does. */
	vt_fill(&a);
	a.qp_state = IBV_QPS_RTR;
	a.rq_psn = 0xff123456;
	CHECK_EQ(droce_modify_qp(qp, &a, rtr), 0);
	query(qp, &q);
	CHECK_EQ(q.rq_psn, 0x123456);
	BAD(IBV_QPS_RTS, rts, timeout, 32);
	BAD(IBV_QPS_RTS, rts, retry_cnt, 8);
	BAD(IBV_QPS_RTS, rts, rnr_retry, 8);
	BAD(IBV_QPS_RTS, rts, max_rd_atomic, DROCE_MAX_RD_ATOM + 1);
	BAD(IBV_QPS_RTS, rts | CUR, cur_qp_state, IBV_QPS_RTS);	/* not the current state */
	vt_fill(&a);
	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_RTR;
	CHECK_EQ(droce_modify_qp(qp, &a, rts | CUR), 0);
	CHECK_EQ(droce_modify_qp(NULL, &a, rts), EINVAL);
	CHECK_EQ(droce_modify_qp(qp, NULL, rts), EINVAL);
	CHECK_EQ(droce_query_qp(NULL, &q, 0, NULL), EINVAL);
	CHECK_EQ(droce_destroy_qp(qp), 0);
#undef BAD
}

int main(void)
{
	struct droce_context *ctx = vt_open(0);
	struct droce_pd *pd = droce_alloc_pd(ctx);
	struct droce_cq *cq = droce_create_cq(ctx, 4096, NULL, NULL, 0);

	CHECK(pd != NULL && cq != NULL);
	srand(47);
	test_values(pd, cq);
	test_table(pd, cq);
	CHECK_EQ(droce_destroy_cq(cq), 0);
	CHECK_EQ(droce_dealloc_pd(pd), 0);
	CHECK_EQ(droce_close_device(ctx), 0);
	printf("qp_modify_table_test: OK\n");
	return 0;
}
