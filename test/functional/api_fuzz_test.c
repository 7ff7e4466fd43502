/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The public verbs API under random use, through the real engine between droce0 and droce1:
 * a seeded sequence of calls on live objects of both devices with arguments that are often
 * wrong (a PD, CQ, SRQ or MR of the other device, zero and huge lengths and depths, SGE lists
 * far over the limit, unknown opcodes, flags and access bits, states and masks at random,
 * destroys in the wrong order, ports and GID indices out of range, lkeys and rkeys of other
 * PDs or of nothing), and now and then an RC pair connected for real so that posted WRs run
 * on the wire and complete with whatever status they earn. Proves:
 * - every call returns success or one of the errnos droce.h names for it (each call's set
 *   below), creates return an object or NULL with such an errno, and a failed post names a
 *   WR of the chain in *bad_wr;
 * - nothing crashes or touches memory it should not (CI runs it under ASan+UBSan);
 * - memory windows too: allocations of any type in any PD, type-1 binds through the verb and
 *   type-2 binds and LOCAL_INVs through posts on any QP with any MR, range, key and access;
 * - the engine still serves: at the end a fresh pair moves a SEND, and every object destroys
 *   (QPs, then windows, SRQs, AHs, MRs, CQs, channels, PDs), the contexts close with 0.
 *
 * Usage: functional_api_fuzz_test {inline|lcore} [STEPS [SEED]]   (prints the seed)
 */
#include "fn.h"
#include "qp_attr.h"

#define MAXO 24			/* live objects of each kind */
#define BUF (1u << 16)

static uint64_t rng;
static struct ibv_device_attr dev;	/* the limits the calls are tried around */
#define MAX_INLINE 512			/* above any QP's max_inline_data */
static unsigned long calls, errors, connected, posted, fatal_walks;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define R(n) ((uint32_t)(rnd() % (n)))

/* A value that is often at an edge: 0, 1, small, the limit, over it, huge, negative. */
static int64_t edge(int64_t limit)
{
	static const int64_t fixed[] = { 0, 1, 2, -1, INT32_MAX, INT32_MIN, UINT32_MAX };

	switch (R(6)) {
	case 0:
		return fixed[R(RTE_DIM(fixed))];
	case 1:
		return limit;
	case 2:
		return limit + 1 + R(4);
	default:
		return R((uint32_t)RTE_MIN(limit, 4096) + 1);
	}
}

/* @p rc (0 or an errno) must be 0 or one of the 0-terminated @p ok. */
static void expect_rc(int rc, const int *ok, const char *call, int line)
{
	calls++;
	if (rc == 0)
		return;
	errors++;
	for (; *ok != 0; ok++)
		if (rc == *ok)
			return;
	fprintf(stderr, "line %d: %s returned %d (%s), not an errno droce.h names for it\n",
		line, call, rc, strerror(rc > 0 ? rc : -rc));
	exit(1);
}
#define OK(...) ((const int[]){ __VA_ARGS__, 0 })
#define EXPECT_RC(rc, call, ...) expect_rc((rc), OK(__VA_ARGS__), call, __LINE__)
/* A create: the object, or NULL with an errno of the set. */
#define EXPECT_OBJ(p, call, ...) expect_rc((p) != NULL ? 0 : errno, OK(__VA_ARGS__), call, \
					   __LINE__)

struct obj {
	void *p;
	int side;
};

static struct {
	struct obj pd[MAXO], mr[MAXO], cq[MAXO], ch[MAXO], qp[MAXO], srq[MAXO], ah[MAXO], mw[MAXO];
} o;
static uint8_t *buf[2];

static int count(const struct obj *a)
{
	int i, n = 0;

	for (i = 0; i < MAXO; i++)
		n += a[i].p != NULL;
	return n;
}

/* A live object of @p a (either side), or NULL now and then. */
static struct obj *pick(struct obj *a)
{
	int i, k;

	if (count(a) == 0 || R(16) == 0)
		return NULL;
	for (k = (int)R(MAXO), i = 0; i < MAXO; i++)
		if (a[(k + i) % MAXO].p != NULL)
			return &a[(k + i) % MAXO];
	return NULL;
}

/* Mostly an object of @p side (a sane call), now and then any. */
static struct obj *pick_side(struct obj *a, int side)
{
	int i, k;

	if (R(8) == 0)
		return pick(a);
	for (k = (int)R(MAXO), i = 0; i < MAXO; i++)
		if (a[(k + i) % MAXO].p != NULL && a[(k + i) % MAXO].side == side)
			return &a[(k + i) % MAXO];
	return NULL;
}

static struct obj *slot(struct obj *a)
{
	int i;

	for (i = 0; i < MAXO; i++)
		if (a[i].p == NULL)
			return &a[i];
	return NULL;
}

static void *p_of(struct obj *x)
{
	return x != NULL ? x->p : NULL;
}

/* SGEs over this program's own memory (with IBV_SEND_INLINE the library reads it when the WR
 * is posted, as every provider does: an address the program does not own is its own bug),
 * with the lkey of a random MR (of either PD), or of none. */
static void sges(struct ibv_sge *s, int n)
{
	struct obj *mr;
	int i;

	for (i = 0; i < n; i++) {
		mr = pick(o.mr);
		s[i].addr = (uintptr_t)(buf[R(2)] + R(BUF / 2));
		s[i].length = (uint32_t)edge(BUF / 2);
		if (s[i].length > BUF / 2)
			s[i].length = R(BUF / 2);
		s[i].lkey = mr != NULL && R(8) != 0 ? ((struct droce_mr *)mr->p)->lkey :
			    (uint32_t)rnd();
	}
}

/* ---- Actions ---- */

static void do_pd(void)
{
	struct obj *s = slot(o.pd), *x;
	int rc;

	if (s != NULL && R(2) == 0) {
		s->side = (int)R(2);
		s->p = droce_alloc_pd(pair_ctx[s->side]);
		EXPECT_OBJ(s->p, "alloc_pd", ENOMEM);
		return;
	}
	x = pick(o.pd);
	rc = droce_dealloc_pd(p_of(x));
	EXPECT_RC(rc, "dealloc_pd", x == NULL ? EINVAL : EBUSY);
	if (rc == 0)
		x->p = NULL;
}

static void do_mr(void)
{
	static const int bits[] = { IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE,
				    IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_ATOMIC,
				    IBV_ACCESS_MW_BIND, IBV_ACCESS_ZERO_BASED,
				    IBV_ACCESS_ON_DEMAND, 1 << 20 };
	struct obj *s = slot(o.mr), *x, *pd;
	int access = 0, i, rc;
	uint32_t off, len;

	if (s != NULL && R(2) == 0) {
		pd = pick(o.pd);
		for (i = 0; i < (int)RTE_DIM(bits); i++)
			access |= R(3) == 0 ? bits[i] : 0;
		if (R(2) == 0)	/* a sane registration */
			access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		off = R(BUF);
		len = R(8) == 0 ? 0 : 1 + R(BUF - off);
		s->side = pd != NULL ? pd->side : 0;
		s->p = droce_reg_mr(p_of(pd), buf[s->side] + off, len, access);
		EXPECT_OBJ(s->p, "reg_mr", EINVAL, EOPNOTSUPP, ENOMEM);
		return;
	}
	x = pick(o.mr);
	rc = droce_dereg_mr(p_of(x));
	EXPECT_RC(rc, "dereg_mr", x == NULL ? EINVAL : EBUSY);
	if (rc == 0)
		x->p = NULL;
}

static struct obj *pick_qp(void);

/* Random window bind info: an MR of either device or none, addresses in or out of it. */
static void bind_info(struct ibv_mw_bind_info *bi)
{
	struct obj *mr = pick(o.mr);
	const struct droce_mr *m = p_of(mr);

	bi->mr = (struct ibv_mr *)p_of(mr);
	bi->addr = m != NULL && R(2) ? (uintptr_t)m->addr + R(64) : rnd();
	bi->length = R(4) == 0 ? 0 : R(2) ? R(BUF) : rnd();
	bi->mw_access_flags = (unsigned int)(R(2) ? rnd() & 0x1f : IBV_ACCESS_REMOTE_WRITE |
					     IBV_ACCESS_REMOTE_READ);
}

static void do_mw(void)
{
	struct ibv_mw_bind mb = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED };
	struct obj *s = slot(o.mw), *x, *pd;
	int rc;

	switch (R(3)) {
	case 0:
		if (s == NULL)
			return;
		pd = pick(o.pd);
		s->side = pd != NULL ? pd->side : 0;
		s->p = droce_alloc_mw(p_of(pd), (enum ibv_mw_type)R(4));
		EXPECT_OBJ(s->p, "alloc_mw", EINVAL, ENOMEM);
		return;
	case 1:		/* type 1 through the verb, on any QP */
		x = pick(o.mw);
		bind_info(&mb.bind_info);
		rc = droce_bind_mw(p_of(pick_qp()), p_of(x), &mb);
		EXPECT_RC(rc, "bind_mw", EINVAL, EPERM, ENOMEM);
		return;
	default:
		x = pick(o.mw);
		rc = droce_dealloc_mw(p_of(x));
		EXPECT_RC(rc, "dealloc_mw", EINVAL);
		if (rc == 0)
			x->p = NULL;
	}
}

static void do_ch(void)
{
	struct obj *s = slot(o.ch), *x;
	int rc;

	if (s != NULL && R(2) == 0) {
		s->side = (int)R(2);
		s->p = droce_create_comp_channel(pair_ctx[s->side]);
		EXPECT_OBJ(s->p, "create_comp_channel", ENOMEM, EMFILE);
		return;
	}
	x = pick(o.ch);
	rc = droce_destroy_comp_channel(p_of(x));
	EXPECT_RC(rc, "destroy_comp_channel", x == NULL ? EINVAL : EBUSY);
	if (rc == 0)
		x->p = NULL;
}

static void do_cq(void)
{
	struct obj *s = slot(o.cq), *x, *ch;
	struct ibv_wc wc[8];
	int rc, n;

	switch (R(6)) {
	case 0:
	case 5:
		if (s == NULL)
			return;
		s->side = (int)R(2);
		ch = pick_side(o.ch, s->side);
		if (R(2) == 0)	/* a sane CQ */
			s->p = droce_create_cq(pair_ctx[s->side], 64 + (int)R(256), NULL,
					       R(2) ? p_of(ch) : NULL, 0);
		else
			s->p = droce_create_cq(pair_ctx[s->side], (int)edge(dev.max_cqe), NULL,
					       p_of(ch), (int)edge(1));
		EXPECT_OBJ(s->p, "create_cq", EINVAL, ENOMEM);
		return;
	case 1:
		x = pick(o.cq);
		rc = droce_destroy_cq(p_of(x));
		EXPECT_RC(rc, "destroy_cq", x == NULL ? EINVAL : EBUSY);
		if (rc == 0)
			x->p = NULL;
		return;
	case 2:
		x = pick(o.cq);
		EXPECT_RC(droce_resize_cq(p_of(x), (int)edge(dev.max_cqe)), "resize_cq", EINVAL,
			  EIO, ENOMEM);
		return;
	case 3:
		x = pick(o.cq);
		n = (int)R(11) - 2;
		rc = droce_poll_cq(p_of(x), n, R(8) == 0 ? NULL : wc);
		EXPECT_RC(rc >= 0 ? 0 : -rc, "poll_cq", EINVAL, EIO);
		CHECK(rc <= RTE_MAX(n, 0));
		return;
	default:
		x = pick(o.cq);
		EXPECT_RC(droce_req_notify_cq(p_of(x), (int)R(3)), "req_notify_cq", EINVAL);
	}
}

static void do_srq(void)
{
	struct obj *s = slot(o.srq), *x, *pd;
	struct ibv_srq_init_attr a;
	struct ibv_srq_attr sa;
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge[6];
	int rc;

	switch (R(4)) {
	case 0:
		if (s == NULL)
			return;
		pd = pick(o.pd);
		memset(&a, 0, sizeof(a));
		a.attr.max_wr = (uint32_t)edge(dev.max_srq_wr);
		a.attr.max_sge = (uint32_t)edge(4);
		a.attr.srq_limit = (uint32_t)edge(a.attr.max_wr);
		s->side = pd != NULL ? pd->side : 0;
		s->p = droce_create_srq(p_of(pd), &a);
		EXPECT_OBJ(s->p, "create_srq", EINVAL, ENOMEM);
		return;
	case 1:
		x = pick(o.srq);
		rc = droce_destroy_srq(p_of(x));
		EXPECT_RC(rc, "destroy_srq", x == NULL ? EINVAL : EBUSY);
		if (rc == 0)
			x->p = NULL;
		return;
	case 2:
		x = pick(o.srq);
		memset(&sa, 0, sizeof(sa));
		sa.srq_limit = (uint32_t)edge(64);
		sa.max_wr = (uint32_t)edge(64);
		EXPECT_RC(droce_modify_srq(p_of(x), &sa, (int)R(8)), "modify_srq", EINVAL);
		return;
	default:
		x = pick(o.srq);
		memset(&wr, 0, sizeof(wr));
		sges(sge, 6);
		wr.sg_list = sge;
		wr.num_sge = (int)R(7);
		bad = NULL;
		rc = droce_post_srq_recv(p_of(x), &wr, &bad);
		EXPECT_RC(rc, "post_srq_recv", EINVAL, ENOMEM);
		CHECK(rc == 0 || x == NULL || bad == &wr);
	}
}

static void do_ah(void)
{
	struct obj *s = slot(o.ah), *x, *pd;
	struct ibv_ah_attr a;
	int rc;

	if (s != NULL && R(2) == 0) {
		pd = pick(o.pd);
		memset(&a, 0, sizeof(a));
		a.is_global = R(4) != 0;
		a.port_num = (uint8_t)R(3);
		a.grh.sgid_index = (uint8_t)R(20);
		a.grh.hop_limit = (uint8_t)rnd();
		a.grh.dgid.raw[10] = a.grh.dgid.raw[11] = 0xff;
		a.grh.dgid.raw[12] = 10;
		a.grh.dgid.raw[13] = 99;
		a.grh.dgid.raw[15] = (uint8_t)(1 + R(2));
		s->side = pd != NULL ? pd->side : 0;
		s->p = droce_create_ah(p_of(pd), &a);
		EXPECT_OBJ(s->p, "create_ah", EINVAL, ENOMEM);
		return;
	}
	x = pick(o.ah);
	rc = droce_destroy_ah(p_of(x));
	EXPECT_RC(rc, "destroy_ah", EINVAL);
	if (rc == 0)
		x->p = NULL;
}

static void qp_create(void)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
						  IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, 77 };
	struct obj *s = slot(o.qp), *pd;
	struct droce_qp_init_attr a;

	if (s == NULL)
		return;
	pd = pick(o.pd);
	s->side = pd != NULL ? pd->side : 0;
	memset(&a, 0, sizeof(a));
	a.qp_type = types[R(RTE_DIM(types))];
	a.send_cq = p_of(pick_side(o.cq, s->side));
	a.recv_cq = R(4) == 0 ? p_of(pick_side(o.cq, s->side)) : a.send_cq;
	a.srq = R(4) == 0 ? p_of(pick_side(o.srq, s->side)) : NULL;
	a.cap.max_send_wr = (uint32_t)edge(dev.max_qp_wr);
	a.cap.max_recv_wr = (uint32_t)edge(dev.max_qp_wr);
	a.cap.max_send_sge = (uint32_t)edge(dev.max_sge);
	a.cap.max_recv_sge = (uint32_t)edge(dev.max_sge);
	a.cap.max_inline_data = (uint32_t)edge(MAX_INLINE);
	if (R(2) == 0) {	/* a sane RC QP */
		a.qp_type = IBV_QPT_RC;
		a.cap.max_send_wr = a.cap.max_recv_wr = 1 + R(64);
		a.cap.max_send_sge = a.cap.max_recv_sge = 1 + R(4);
		a.cap.max_inline_data = R(65);
	}
	a.sq_sig_all = (int)R(2);
	s->p = droce_create_qp(p_of(pd), &a);
	EXPECT_OBJ(s->p, "create_qp", EINVAL, EOPNOTSUPP, ENOMEM);
}

static void qp_modify(void)
{
	struct obj *x = pick(o.qp);
	struct ibv_qp_attr a;
	int mask = 0, i;

	test_qp_attr_fill(&a);
	a.qp_state = (enum ibv_qp_state)R(8);
	a.cur_qp_state = (enum ibv_qp_state)R(8);
	a.path_mtu = (enum ibv_mtu)R(7);
	a.timeout = (uint8_t)R(40);
	a.retry_cnt = (uint8_t)R(10);
	a.max_rd_atomic = (uint8_t)edge(dev.max_qp_rd_atom);
	a.max_dest_rd_atomic = (uint8_t)edge(dev.max_qp_rd_atom);
	a.port_num = (uint8_t)R(3);
	a.pkey_index = (uint16_t)R(3);
	a.ah_attr.grh.sgid_index = (uint8_t)R(20);
	a.qp_access_flags = (unsigned int)rnd() & 0xff;
	for (i = 0; i < 22; i++)
		mask |= R(3) == 0 ? 1 << i : 0;
	EXPECT_RC(droce_modify_qp(p_of(x), &a, mask | (R(4) != 0 ? IBV_QP_STATE : 0)),
		  "modify_qp", EINVAL);
}

/* A QP in RTS (connected by qp_connect()) half of the time, else any. */
static struct obj *pick_qp(void)
{
	int i, k;

	if (R(2) == 0)
		return pick(o.qp);
	for (k = (int)R(MAXO), i = 0; i < MAXO; i++) {
		struct obj *x = &o.qp[(k + i) % MAXO];

		if (x->p != NULL && fn_state(x->p) == IBV_QPS_RTS)
			return x;
	}
	return pick(o.qp);
}

/* A WR that is right (for an RC QP of side @p side): an opcode it takes, a few SGEs over a
 * registered MR of its side, remote memory of an MR of the other side. */
static void sane_wr(struct ibv_send_wr *w, struct ibv_sge *s, int side)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
						  IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
						  IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD,
						  IBV_WR_ATOMIC_CMP_AND_SWP };
	struct obj *lm = pick_side(o.mr, side), *rm = pick_side(o.mr, !side);
	struct droce_mr *l = p_of(lm), *r = p_of(rm);

	w->opcode = ops[R(RTE_DIM(ops))];
	w->send_flags = IBV_SEND_SIGNALED;
	w->num_sge = 1;
	s->addr = l != NULL ? (uintptr_t)l->addr : s->addr;
	s->lkey = l != NULL ? l->lkey : s->lkey;
	s->length = l != NULL ? (uint32_t)RTE_MIN(l->length, 1 + R(8192)) : s->length;
	w->wr.rdma.remote_addr = r != NULL ? (uintptr_t)r->addr : 0;
	w->wr.rdma.rkey = r != NULL ? r->rkey : 0;
	if (w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD || w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		s->length = 8;
		w->wr.atomic.remote_addr = r != NULL ? (uintptr_t)r->addr & ~7ull : 0;
		w->wr.atomic.rkey = r != NULL ? r->rkey : 0;
	}
}

static void qp_post_send(void)
{
	struct obj *x = pick_qp(), *mr, *ah;
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sge[40];
	int k, rc, n = 1 + (int)R(3);

	sges(sge, 40);
	for (k = 0; k < n; k++) {
		memset(&wr[k], 0, sizeof(wr[k]));
		wr[k].wr_id = k;
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
		wr[k].sg_list = sge + R(20);
		wr[k].num_sge = (int)R(21);
		wr[k].opcode = (enum ibv_wr_opcode)R(16);
		wr[k].send_flags = (unsigned int)rnd() & 0x3f;
		mr = pick(o.mr);
		wr[k].wr.rdma.remote_addr = mr != NULL ?
			(uintptr_t)((struct droce_mr *)mr->p)->addr + R(64) : rnd();
		wr[k].wr.rdma.rkey = mr != NULL ? ((struct droce_mr *)mr->p)->rkey : (uint32_t)rnd();
		if (wr[k].opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr[k].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr[k].wr.atomic.remote_addr = wr[k].wr.rdma.remote_addr & ~7ull;
			wr[k].wr.atomic.rkey = wr[k].wr.rdma.rkey;
		}
		if (R(2) == 0) {
			ah = pick(o.ah);
			wr[k].wr.ud.ah = p_of(ah);
			wr[k].wr.ud.remote_qpn = (uint32_t)rnd() & 0xffffff;
			wr[k].wr.ud.remote_qkey = 0x11111111;
		}
		if (x != NULL && R(2) == 0)
			sane_wr(&wr[k], wr[k].sg_list, x->side);
		if (R(8) == 0) {	/* a window bind (type 2 is right), or a LOCAL_INV */
			wr[k].opcode = R(2) ? IBV_WR_BIND_MW : IBV_WR_LOCAL_INV;
			wr[k].bind_mw.mw = (struct ibv_mw *)p_of(pick(o.mw));
			wr[k].bind_mw.rkey = (uint32_t)rnd();
			bind_info(&wr[k].bind_mw.bind_info);
		}
	}
	bad = NULL;
	rc = droce_post_send(p_of(x), wr, &bad);
	EXPECT_RC(rc, "post_send", EINVAL, ENOMEM);
	posted += rc == 0;
	CHECK(rc == 0 || x == NULL || (bad >= wr && bad < wr + n));
}

static void qp_post_recv(void)
{
	struct obj *x = pick_qp();
	struct ibv_recv_wr wr[2], *bad;
	struct ibv_sge sge[40];
	int rc;

	sges(sge, 40);
	memset(wr, 0, sizeof(wr));
	wr[0].next = R(2) ? &wr[1] : NULL;
	wr[0].sg_list = sge;
	wr[0].num_sge = (int)R(40);
	wr[1].sg_list = sge + 1;
	wr[1].num_sge = (int)R(4);
	bad = NULL;
	rc = droce_post_recv(p_of(x), wr, &bad);
	EXPECT_RC(rc, "post_recv", EINVAL, ENOMEM);
	CHECK(rc == 0 || x == NULL || bad == &wr[0] || bad == &wr[1]);
}

/* @p e walked to RTS towards @p peer; false (checked) when a CQ overrun moved it to ERR. */
static bool walked(struct fn_ep *e, const struct fn_ep *peer, const struct fn_attr *at)
{
	int rc = fn_try_rtr(e, peer, at);

	if (rc == 0)
		rc = fn_try_rts(e, at);
	if (rc == 0)
		return true;
	CHECK_EQ(rc, EINVAL);
	CHECK_EQ(fn_state(e->qp), IBV_QPS_ERR);
	fatal_walks++;
	return false;
}

/* Two RC QPs of the two devices connected for real: what is posted on them runs. */
static void qp_connect(void)
{
	struct obj *a = NULL, *b = NULL;
	struct droce_qp *qa, *qb;
	struct fn_ep ea, eb;
	struct fn_attr at = fn_attr_default();
	int i;

	for (i = 0; i < MAXO; i++) {	/* an RC QP in RESET on each side */
		struct droce_qp *q = o.qp[i].p;

		if (q == NULL || q->qp_type != IBV_QPT_RC || fn_state(q) != IBV_QPS_RESET)
			continue;
		if (o.qp[i].side == 0 && a == NULL)
			a = &o.qp[i];
		if (o.qp[i].side == 1 && b == NULL)
			b = &o.qp[i];
	}
	if (a == NULL || b == NULL)
		return;
	qa = a->p;
	qb = b->p;
	memset(&ea, 0, sizeof(ea));
	memset(&eb, 0, sizeof(eb));
	ea.side = a->side;
	ea.qp = qa;
	eb.side = b->side;
	eb.qp = qb;
	at.timeout = 8;		/* 1 ms: a WR that cannot go fails fast */
	at.retry_cnt = 1;
	at.rnr_retry = 1;
	/* A valid walk fails only when the engine has moved the QP to ERR meanwhile: a CQ of
	 * it overran (the fuzz overruns CQs), and such a QP goes to ERR when its engine next
	 * looks at it (doc/api.md, "CQ overrun"), which an lcore engine may do at any time. */
	if (!walked(&ea, &eb, &at) || !walked(&eb, &ea, &at))
		return;
	connected++;
}

static void do_qp(void)
{
	struct obj *x;
	struct ibv_qp_attr attr;
	struct droce_qp_init_attr init;
	int rc;

	switch (R(8)) {
	case 0:
		qp_create();
		return;
	case 1:
		x = pick(o.qp);
		rc = droce_destroy_qp(p_of(x));
		EXPECT_RC(rc, "destroy_qp", x == NULL ? EINVAL : EBUSY);
		if (rc == 0)
			x->p = NULL;
		return;
	case 2:
		qp_modify();
		return;
	case 3:
	case 4:
		qp_post_send();
		return;
	case 5:
		qp_post_recv();
		return;
	case 6:
		x = pick(o.qp);
		EXPECT_RC(droce_query_qp(p_of(x), &attr, (int)rnd(), R(8) ? &init : NULL),
			  "query_qp", EINVAL);
		return;
	default:
		qp_connect();
	}
}

static void do_query(void)
{
	struct ibv_query_device_ex_input dxi = { .comp_mask = (uint32_t)R(2) };
	struct ibv_device_attr_ex dx;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	uint16_t pkey;
	struct droce_context *c = pair_ctx[R(2)];

	EXPECT_RC(droce_query_device(R(8) ? c : NULL, &da), "query_device", EINVAL);
	EXPECT_RC(droce_query_device_ex(R(8) ? c : NULL, R(8) ? NULL : &dxi, &dx,
					R(8) ? sizeof(dx) : R(sizeof(dx))), "query_device_ex", EINVAL);
	EXPECT_RC(droce_query_port(c, (uint8_t)R(4), &pa), "query_port", EINVAL);
	EXPECT_RC(droce_query_gid(c, (uint8_t)R(3), (int)R(24) - 2, &gid) == 0 ? 0 : errno,
		  "query_gid", EINVAL);
	EXPECT_RC(droce_query_pkey(c, (uint8_t)R(3), (int)R(4) - 1, &pkey) == 0 ? 0 : errno,
		  "query_pkey", EINVAL);
}

/* ---- Tear-down in dependency order; every destroy succeeds then. ---- */

static void destroy_all(void)
{
	int i;

	for (i = 0; i < MAXO; i++)
		if (o.qp[i].p != NULL)
			CHECK_EQ(droce_destroy_qp(o.qp[i].p), 0);
	for (i = 0; i < MAXO; i++)	/* before the MRs they may be bound to */
		if (o.mw[i].p != NULL)
			CHECK_EQ(droce_dealloc_mw(o.mw[i].p), 0);
	for (i = 0; i < MAXO; i++) {
		if (o.srq[i].p != NULL)
			CHECK_EQ(droce_destroy_srq(o.srq[i].p), 0);
		if (o.ah[i].p != NULL)
			CHECK_EQ(droce_destroy_ah(o.ah[i].p), 0);
		if (o.mr[i].p != NULL)
			CHECK_EQ(droce_dereg_mr(o.mr[i].p), 0);
	}
	for (i = 0; i < MAXO; i++)
		if (o.cq[i].p != NULL)
			CHECK_EQ(droce_destroy_cq(o.cq[i].p), 0);
	for (i = 0; i < MAXO; i++) {
		if (o.ch[i].p != NULL)
			CHECK_EQ(droce_destroy_comp_channel(o.ch[i].p), 0);
		if (o.pd[i].p != NULL)
			CHECK_EQ(droce_dealloc_pd(o.pd[i].p), 0);
	}
	memset(&o, 0, sizeof(o));
}

int main(int argc, char **argv)
{
	unsigned long steps = argc > 2 ? strtoul(argv[2], NULL, 0) : 20000, i;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 0x64726f6365ull;
	void (*const act[])(void) = { do_pd, do_mr, do_mr, do_ch, do_cq, do_cq, do_srq, do_ah,
				      do_qp, do_qp, do_qp, do_qp, do_query, do_mw };
	struct fn_attr fa = fn_attr_default();
	struct fn_ep ep[2];
	struct fn_mem m[2];
	struct ibv_wc wc;

	CHECK(argc >= 2);
	rng = seed;
	printf("api fuzz: %lu steps, seed %#llx (%s engine)\n", steps, (unsigned long long)seed,
	       argv[1]);
	pair_open();
	CHECK_EQ(droce_query_device(pair_ctx[0], &dev), 0);
	buf[0] = aligned_alloc(4096, BUF);
	buf[1] = aligned_alloc(4096, BUF);
	CHECK(buf[0] != NULL && buf[1] != NULL);
	for (i = 0; i < steps; i++) {
		act[R(RTE_DIM(act))]();
		if (R(4) == 0)
			pair_step();
	}
	for (i = 0; i < 2000; i++)	/* what is in flight ends (1 ms timeouts, 1 retry) */
		pair_step();
	destroy_all();
	/* The engine still serves. */
	fn_pair(ep, &fa);
	fn_mem_reg(&m[0], ep[0].pd, 4096, FN_ACCESS_ALL, 1);
	fn_mem_reg(&m[1], ep[1].pd, 4096, FN_ACCESS_ALL, 0);
	fn_post_recv(ep[1].qp, 9, m[1].buf, 4096, m[1].mr->lkey);
	{
		struct ibv_sge s = { (uintptr_t)m[0].buf, 4096, m[0].mr->lkey };
		struct ibv_send_wr w = { .wr_id = 8, .sg_list = &s, .num_sge = 1,
					 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;

		CHECK_EQ(droce_post_send(ep[0].qp, &w, &bad), 0);
	}
	wc = fn_wait(ep[1].rcq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(memcmp(m[0].buf, m[1].buf, 4096), 0);
	fn_mem_free(&m[0]);
	fn_mem_free(&m[1]);
	fn_pair_destroy(ep);
	for (i = 0; i < 2; i++)
		CHECK_EQ(droce_close_device(pair_ctx[i]), 0);
	free(buf[0]);
	free(buf[1]);
	printf("api fuzz: %lu calls, %lu refused with a documented errno, none other; %lu RC "
	       "pairs connected (%lu walks met a QP its CQ's overrun had ended), %lu send chains "
	       "posted; a fresh pair moved a SEND after them\n",
	       calls, errors, connected, fatal_walks, posted);
	CHECK(connected > 0 && posted > 0);	/* the data path was driven too */
	return 0;
}
