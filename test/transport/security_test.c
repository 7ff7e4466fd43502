/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * A hostile peer: frames built with the wire builder (droce_build) from droce0's address to a
 * victim QP on droce1, with the PSN the victim expects (the strongest attacker: it saw the
 * traffic), each attack on a fresh connected pair. Every attack is rejected the way IBA and
 * rxe reject it - NAK with the right syndrome and the victim QP in ERR, or a silent drop -
 * and counted, and no byte of the victim's memory changes: three MRs (full access, remote
 * read only, another PD's) and the guard pages around them. doc/security.md lists the table.
 */
#include "tt.h"
#include "tap.h"
#include "transport_private.h"

enum { MR_LEN = 8192, GUARD = 4096, FILL = 0x5a, N_GUESS = 24 };

enum mr_kind { MR_ALL, MR_RO, MR_WO, MR_OTHER_PD, MR_NUM };

static struct tt tt;
static uint8_t *mem[MR_NUM];		/* GUARD | MR_LEN | GUARD */
static struct droce_mr *mr[MR_NUM];
static const int all_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

static void mem_init(void)
{
	static const int access[MR_NUM] = {
		[MR_ALL] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		[MR_RO] = IBV_ACCESS_REMOTE_READ,
		[MR_WO] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		[MR_OTHER_PD] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct droce_pd *pd2 = droce_alloc_pd(tt.ctx[1]);
	int k;

	CHECK(pd2 != NULL);
	for (k = 0; k < MR_NUM; k++) {
		mem[k] = aligned_alloc(4096, MR_LEN + 2 * GUARD);
		CHECK(mem[k] != NULL);
		memset(mem[k], FILL, MR_LEN + 2 * GUARD);
		mr[k] = tt_mr(&tt, 1, mem[k] + GUARD, MR_LEN, access[k]);
		if (k == MR_OTHER_PD) {
			CHECK_EQ(droce_dereg_mr(mr[k]), 0);
			mr[k] = droce_reg_mr(pd2, mem[k] + GUARD, MR_LEN, access[k]);
			CHECK(mr[k] != NULL);
		}
	}
}

static void check_memory(void)
{
	int k;
	size_t i;

	for (k = 0; k < MR_NUM; k++)
		for (i = 0; i < MR_LEN + 2 * GUARD; i++)
			if (mem[k][i] != FILL) {
				fprintf(stderr, "MR %d: byte %zd changed\n", k, (ssize_t)i - GUARD);
				exit(1);
			}
}

static uint64_t mr_va(int k, int64_t off)
{
	return (uintptr_t)mem[k] + GUARD + (uint64_t)off;
}

/* A fresh attacker (droce0) - victim (droce1) pair; the victim's QP access flags @p qp_access. */
static struct tt_qp *victim(int qp_access)
{
	struct tt_opts o;

	tt_opts_default(&o);
	o.access[1] = qp_access;
	memset(&tt.cnt, 0, sizeof(tt.cnt));
	tap_start(&tt);
	return tt_pair(&tt, &o)->peer;
}

static enum transport_verdict verdict;	/* the victim's, of the last attack */

/* tt_hostile() of @p h to @p v (its verdict in verdict), then everything that follows. */
static void inject(struct tt_qp *v, struct droce_hdr_fields *h, const void *payload,
		   uint32_t len, const union ibv_gid *src_gid, bool keep_psn)
{
	verdict = tt_hostile(&tt, v, h, payload, len, src_gid, keep_psn);
	tt_run(&tt, NULL, NULL, 1000000000ull);
}

static const uint8_t junk[256] = { 0xa5, 0xa5, 0xa5 };

static void write_req(struct droce_hdr_fields *h, uint64_t va, uint32_t rkey, uint32_t len)
{
	memset(h, 0, sizeof(*h));
	h->opcode = DROCE_OP_RC_RDMA_WRITE_ONLY;
	h->ackreq = 1;
	h->reth.va = va;
	h->reth.rkey = rkey;
	h->reth.len = len;
}

/* The victim answered with one NAK @p code and nothing else, went to ERR, counted it (and
 * the verdict named it). */
static void expect_nak(struct tt_qp *v, uint8_t code, uint64_t access_err, uint64_t inv_req)
{
	CHECK_EQ(verdict, access_err != 0 ? TRANSPORT_DROP_access_err :
					       TRANSPORT_DROP_inv_req_err);
	CHECK_EQ(tap_count(1, DROCE_OP_RC_ACKNOWLEDGE, DROCE_AETH_NAK | code), 1);
	CHECK_EQ(tap_count(1, -1, -1), 1);
	CHECK_EQ(tt_state(v), IBV_QPS_ERR);
	CHECK_EQ(tt.cnt[1].access_err, access_err);
	CHECK_EQ(tt.cnt[1].inv_req_err, inv_req);
	check_memory();
}

/* The victim said nothing, stayed in @p st, and counted one frame in counter @p name, the
 * verdict's. */
#define EXPECT_DROP(v, st, name) do { \
	CHECK_EQ(verdict, TRANSPORT_DROP_##name); \
	CHECK_EQ(tap_count(1, -1, -1), 0); \
	CHECK_EQ(tt_state(v), st); \
	CHECK_EQ(tt.cnt[1].name, 1); \
	check_memory(); \
} while (0)

/* Random R_Keys (none a live one), and a live key's index with other key bits. */
static void guessed_rkeys(void)
{
	struct droce_hdr_fields h;
	struct tt_qp *v;
	uint32_t key;
	int i, k;

	for (i = 0; i < N_GUESS; i++) {
		key = i == 0 ? mr[MR_ALL]->rkey ^ 0x100 : i == 1 ? mr[MR_ALL]->lkey :
		      (uint32_t)tt_rand(&tt);
		for (k = 0; k < MR_NUM; k++)
			if (key == mr[k]->rkey)
				key ^= 0x80000000u;
		v = victim(all_access);
		write_req(&h, mr_va(MR_ALL, 0), key, 64);
		inject(v, &h, junk, 64, NULL, false);
		expect_nak(v, DROCE_NAK_REM_ACCESS, 1, 0);
	}
	printf("guessed R_Keys (%d, incl. a live index with other key bits and an L_Key): "
	       "NAK remote access, nothing written\n", N_GUESS);
}

/* WRITE, READ and ATOMIC with a valid R_Key outside the MR or without its access flag. */
static void bad_access(const char *what, uint8_t opcode, int k, int64_t off, uint32_t len)
{
	struct tt_qp *v = victim(all_access);
	struct droce_hdr_fields h;

	write_req(&h, mr_va(k, off), mr[k]->rkey, len);
	h.opcode = opcode;
	if (opcode == DROCE_OP_RC_COMPARE_SWAP || opcode == DROCE_OP_RC_FETCH_ADD) {
		h.atomic.va = mr_va(k, off);
		h.atomic.rkey = mr[k]->rkey;
		h.atomic.swap_add = 0x1111;
		len = 0;
	}
	inject(v, &h, junk, opcode == DROCE_OP_RC_RDMA_WRITE_ONLY ? len : 0, NULL, false);
	expect_nak(v, DROCE_NAK_REM_ACCESS, 1, 0);
	printf("%s: NAK remote access, nothing written\n", what);
}

/* The victim QP was not enabled for remote writes/atomics (qp_access_flags). */
static void qp_without_access(void)
{
	struct tt_qp *v = victim(IBV_ACCESS_REMOTE_READ);
	struct droce_hdr_fields h;

	write_req(&h, mr_va(MR_ALL, 0), mr[MR_ALL]->rkey, 64);
	inject(v, &h, junk, 64, NULL, false);
	expect_nak(v, DROCE_NAK_INV_REQ, 0, 1);
	printf("WRITE to a QP without IBV_ACCESS_REMOTE_WRITE: NAK invalid request\n");
}

/* A misaligned atomic is an invalid request (IBA 9.4.5; rxe). */
static void misaligned_atomic(void)
{
	struct tt_qp *v = victim(all_access);
	struct droce_hdr_fields h;

	memset(&h, 0, sizeof(h));
	h.opcode = DROCE_OP_RC_FETCH_ADD;
	h.atomic.va = mr_va(MR_ALL, 4);
	h.atomic.rkey = mr[MR_ALL]->rkey;
	h.atomic.swap_add = 1;
	inject(v, &h, NULL, 0, NULL, false);
	expect_nak(v, DROCE_NAK_INV_REQ, 0, 1);
	printf("misaligned FETCH_ADD: NAK invalid request\n");
}

/* SEND and WRITE to a QP in RESET and in INIT: dropped in silence, counted. */
static void wrong_state(void)
{
	static const enum ibv_qp_state st[] = { IBV_QPS_RESET, IBV_QPS_INIT };
	struct tt_opts o;
	struct droce_hdr_fields h;
	struct ibv_qp_attr a;
	struct tt_qp *v;
	unsigned int i;

	tt_opts_default(&o);
	for (i = 0; i < RTE_DIM(st); i++) {
		memset(&tt.cnt, 0, sizeof(tt.cnt));
		tap_start(&tt);
		v = tt_qp_new(&tt, 1, &o);
		if (st[i] == IBV_QPS_INIT) {
			memset(&a, 0, sizeof(a));
			a.qp_state = IBV_QPS_INIT;
			a.port_num = 1;
			a.qp_access_flags = (unsigned int)all_access;
			tt_modify(&tt, v, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS);
		}
		write_req(&h, mr_va(MR_ALL, 0), mr[MR_ALL]->rkey, 64);
		inject(v, &h, junk, 64, NULL, false);
		EXPECT_DROP(v, st[i], rx_qp_state);
	}
	printf("WRITE to a QP in RESET and in INIT: dropped, rx_qp_state\n");
}

/* A connected QP moved to ERR by its owner: the peer's WRITE is dropped, nothing answers. */
static void qp_in_error(void)
{
	struct tt_qp *v = victim(all_access);
	struct droce_hdr_fields h;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	tt_modify(&tt, v, &a, IBV_QP_STATE);
	tt_run(&tt, NULL, NULL, 1000000000ull);
	tap_start(&tt);
	memset(&tt.cnt, 0, sizeof(tt.cnt));
	write_req(&h, mr_va(MR_ALL, 0), mr[MR_ALL]->rkey, 64);
	inject(v, &h, junk, 64, NULL, false);
	EXPECT_DROP(v, IBV_QPS_ERR, rx_qp_state);
	printf("WRITE to a QP in ERR: dropped, rx_qp_state\n");
}

/* A P_Key other than the default (the only one in the table). */
static void wrong_pkey(void)
{
	struct tt_qp *v = victim(all_access);
	struct droce_hdr_fields h;

	write_req(&h, mr_va(MR_ALL, 0), mr[MR_ALL]->rkey, 64);
	h.pkey = 0x7123;
	inject(v, &h, junk, 64, NULL, false);
	EXPECT_DROP(v, IBV_QPS_RTS, rx_bad_pkey);
	printf("WRITE with a wrong P_Key: dropped, rx_bad_pkey\n");
}

/*
 * Right QPN, PSN and R_Key, but from an address that is not the victim's peer (IBA 9.6.1.1
 * C9-x: a connected QP takes packets from its own path only; rxe's check_addr()).
 */
static void spoofed_source(void)
{
	struct tt_qp *v = victim(all_access);
	struct droce_hdr_fields h;
	union ibv_gid other = tt.gid[0];

	other.raw[15] ^= 0x42;		/* another IPv4 address */
	write_req(&h, mr_va(MR_ALL, 0), mr[MR_ALL]->rkey, 64);
	inject(v, &h, junk, 64, &other, false);
	EXPECT_DROP(v, IBV_QPS_RTS, rx_bad_addr);
	printf("WRITE with a valid R_Key from a spoofed source address: dropped, rx_bad_addr\n");
}

/* A QP of @p type on droce1 (not connected), its transport driven by tt_run(). */
static struct tt_qp *raw_qp(enum ibv_qp_type type)
{
	memset(&tt.cnt, 0, sizeof(tt.cnt));
	tap_start(&tt);
	return tt_qp_raw(&tt, 1, type);
}

/* UC is connected too: the same spoofed WRITE to a UC QP in RTR is dropped. */
static void spoofed_source_uc(void)
{
	struct tt_qp *v = raw_qp(IBV_QPT_UC);
	struct droce_hdr_fields h;
	union ibv_gid other = tt.gid[0];

	tt_uc_rtr(&tt, v, IBV_ACCESS_REMOTE_WRITE);
	other.raw[15] ^= 0x42;
	write_req(&h, mr_va(MR_ALL, 0), mr[MR_ALL]->rkey, 64);
	h.opcode = DROCE_OP_UC_RDMA_WRITE_ONLY;
	h.ackreq = 0;
	inject(v, &h, junk, 64, &other, false);
	EXPECT_DROP(v, IBV_QPS_RTR, rx_bad_addr);
	printf("UC WRITE with a valid R_Key from a spoofed source address: dropped, rx_bad_addr\n");
}

/* A UD QP: a datagram with the wrong Q_Key is dropped (IBA 10.2.4). */
static void wrong_qkey(void)
{
	struct tt_qp *v = raw_qp(IBV_QPT_UD);
	struct ibv_sge sg = { mr_va(MR_ALL, 0), 512, mr[MR_ALL]->lkey };
	struct droce_hdr_fields h;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x1234;
	tt_modify(&tt, v, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	tt_modify(&tt, v, &a, IBV_QP_STATE);
	tt_post_recv(v, 1, &sg, 1);	/* into MR_ALL: must stay untouched */
	memset(&h, 0, sizeof(h));
	h.opcode = DROCE_OP_UD_SEND_ONLY;
	h.deth.qkey = 0x4321;
	h.deth.sqpn = 0x99;
	inject(v, &h, junk, 64, NULL, true);
	EXPECT_DROP(v, IBV_QPS_RTR, rx_bad_qkey);
	printf("UD SEND with a wrong Q_Key: dropped, rx_bad_qkey\n");
}

int main(int argc, char **argv)
{
	tt_init(&tt, argc, argv, 4791);
	mem_init();
	guessed_rkeys();
	bad_access("WRITE past the MR end", DROCE_OP_RC_RDMA_WRITE_ONLY, MR_ALL, MR_LEN - 32, 64);
	bad_access("WRITE before the MR start", DROCE_OP_RC_RDMA_WRITE_ONLY, MR_ALL, -64, 64);
	bad_access("WRITE wrapping around the address space", DROCE_OP_RC_RDMA_WRITE_ONLY,
		   MR_ALL, (int64_t)-mr_va(MR_ALL, 0), 64);
	bad_access("READ past the MR end", DROCE_OP_RC_RDMA_READ_REQUEST, MR_ALL, 64, MR_LEN);
	bad_access("WRITE to an MR of another PD", DROCE_OP_RC_RDMA_WRITE_ONLY, MR_OTHER_PD, 0,
		   64);
	bad_access("ATOMIC on an MR of another PD", DROCE_OP_RC_FETCH_ADD, MR_OTHER_PD, 0, 8);
	bad_access("WRITE to an MR without REMOTE_WRITE", DROCE_OP_RC_RDMA_WRITE_ONLY, MR_RO, 0,
		   64);
	bad_access("ATOMIC on an MR without REMOTE_ATOMIC", DROCE_OP_RC_COMPARE_SWAP, MR_WO, 0,
		   8);
	bad_access("READ of an MR without REMOTE_READ", DROCE_OP_RC_RDMA_READ_REQUEST, MR_WO, 0,
		   64);
	qp_without_access();
	misaligned_atomic();
	wrong_state();
	qp_in_error();
	wrong_pkey();
	spoofed_source();
	spoofed_source_uc();
	wrong_qkey();
	printf("security: every attack rejected, counted, memory untouched\n");
	return 0;
}
