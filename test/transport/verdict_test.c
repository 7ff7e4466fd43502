/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * transport_rx()'s verdict names what the transport counted: for every drop reason the
 * transport has (each DROP line of DROCE_TRANSPORT_COUNTERS, droce_counters.h) a frame that is dropped for it, its
 * verdict that reason and its counter counted once (tt_rx() checks the counters), and frames
 * that are taken are accepted, a UC FIRST packet that ends an open message included. The
 * frames are built by hand (tt_hostile()) to a QP on droce1 from droce0's address.
 */
#include "tt.h"

enum { MR_LEN = 8192 };

static struct tt tt;
static uint8_t *mem;
static struct droce_mr *mr;
static const uint8_t junk[2048];
static const int all_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC;

#define EXPECT_VERDICT(expr, name) do { \
	CHECK_EQ(expr, TRANSPORT_DROP_##name); \
	printf("%-20s %s\n", #name, what); \
} while (0)

static void hdr(struct droce_hdr_fields *h, uint8_t opcode)
{
	memset(h, 0, sizeof(*h));
	h->opcode = opcode;
}

static void write_hdr(struct droce_hdr_fields *h, uint8_t opcode, uint32_t rkey, uint32_t len)
{
	hdr(h, opcode);
	h->reth.va = (uintptr_t)mem;
	h->reth.rkey = rkey;
	h->reth.len = len;
}

/* A connected RC pair; the victim is droce1's QP, max_dest_rd_atomic @p nres. */
static struct tt_qp *rc_victim(uint8_t nres)
{
	struct tt_opts o;

	tt_opts_default(&o);
	o.max_dest_rd_atomic[1] = nres;
	return tt_pair(&tt, &o)->peer;
}

/* A raw UC or UD QP on droce1 in RTR, with a receive WQE of @p recv_len bytes (0: none). */
static struct tt_qp *unreliable(enum ibv_qp_type type, uint32_t recv_len)
{
	struct tt_qp *v = tt_qp_raw(&tt, 1, type);
	struct ibv_sge sg = { (uintptr_t)mem, recv_len, mr->lkey };
	struct ibv_qp_attr a;

	if (type == IBV_QPT_UC) {
		tt_uc_rtr(&tt, v, IBV_ACCESS_REMOTE_WRITE);
	} else {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qkey = 0x1234;
		tt_modify(&tt, v, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_QKEY);
		a.qp_state = IBV_QPS_RTR;
		tt_modify(&tt, v, &a, IBV_QP_STATE);
	}
	if (recv_len != 0)
		tt_post_recv(v, 1, &sg, 1);
	return v;
}

static void rc_receive_checks(void)
{
	struct droce_hdr_fields h;
	union ibv_gid other = tt.gid[0];
	struct tt_opts o;
	struct tt_qp *v;
	const char *what;

	tt_opts_default(&o);
	what = "WRITE to an RC QP in RESET";
	v = tt_qp_new(&tt, 1, &o);
	write_hdr(&h, DROCE_OP_RC_RDMA_WRITE_ONLY, mr->rkey, 64);
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 64, NULL, false), rx_qp_state);

	what = "WRITE with another P_Key";
	v = rc_victim(16);
	write_hdr(&h, DROCE_OP_RC_RDMA_WRITE_ONLY, mr->rkey, 64);
	h.pkey = 0x7123;
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 64, NULL, false), rx_bad_pkey);

	what = "WRITE from an address not the peer's";
	other.raw[15] ^= 0x42;
	write_hdr(&h, DROCE_OP_RC_RDMA_WRITE_ONLY, mr->rkey, 64);
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 64, &other, false), rx_bad_addr);

	what = "a UD SEND to an RC QP";
	hdr(&h, DROCE_OP_UD_SEND_ONLY);
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 64, NULL, false), rx_bad_opcode);

	what = "SEND MIDDLE, no message open (NAK)";
	hdr(&h, DROCE_OP_RC_SEND_MIDDLE);
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 1024, NULL, false), rx_opcode_seq);

	what = "WRITE with a bad R_Key (NAK)";
	v = rc_victim(16);
	write_hdr(&h, DROCE_OP_RC_RDMA_WRITE_ONLY, mr->rkey ^ 0x100, 64);
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 64, NULL, false), access_err);

	what = "misaligned FETCH_ADD (NAK)";
	v = rc_victim(16);
	hdr(&h, DROCE_OP_RC_FETCH_ADD);
	h.atomic.va = (uintptr_t)mem + 4;
	h.atomic.rkey = mr->rkey;
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, NULL, 0, NULL, false), inv_req_err);
}

/* Duplicates and too many READs; what the responder answers is accepted. */
static void rc_resources(void)
{
	struct droce_hdr_fields h;
	struct tt_qp *v = rc_victim(1);
	struct transport_qp_info qi;
	const char *what;
	uint32_t psn;

	write_hdr(&h, DROCE_OP_RC_RDMA_READ_REQUEST, mr->rkey, 4096);
	CHECK_EQ(tt_hostile(&tt, v, &h, NULL, 0, NULL, false), TRANSPORT_RX_ACCEPTED);
	what = "READ beyond max_dest_rd_atomic (NAK)";
	write_hdr(&h, DROCE_OP_RC_RDMA_READ_REQUEST, mr->rkey, 64);
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, NULL, 0, NULL, false), rx_rd_atomic_excess);

	v = rc_victim(1);
	write_hdr(&h, DROCE_OP_RC_RDMA_READ_REQUEST, mr->rkey, 64);
	CHECK_EQ(tt_hostile(&tt, v, &h, NULL, 0, NULL, false), TRANSPORT_RX_ACCEPTED);
	psn = h.psn;
	tt_run(&tt, NULL, NULL, 1000000000ull);
	what = "duplicate READ, another R_Key";
	write_hdr(&h, DROCE_OP_RC_RDMA_READ_REQUEST, mr->rkey ^ 0x100, 64);
	h.psn = psn;
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, NULL, 0, NULL, true), rx_dup_dropped);
	write_hdr(&h, DROCE_OP_RC_RDMA_READ_REQUEST, mr->rkey, 64);
	h.psn = psn;
	CHECK_EQ(tt_hostile(&tt, v, &h, NULL, 0, NULL, true), TRANSPORT_RX_ACCEPTED);
	write_hdr(&h, DROCE_OP_RC_RDMA_WRITE_ONLY, mr->rkey, 64);
	transport_qp_info(v->t, &qi);
	h.psn = qi.epsn + 5;
	CHECK_EQ(tt_hostile(&tt, v, &h, junk, 64, NULL, true), TRANSPORT_RX_ACCEPTED);
	printf("%-20s duplicate READ replayed, PSN gap NAKed\n", "accepted");
}

/* The completer: a stale ACK, and a READ response to a WRITE. */
static void rc_responses(void)
{
	struct ibv_sge sg = { (uintptr_t)mem, 64, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED };
	struct droce_hdr_fields h;
	struct tt_qp *v = rc_victim(16);
	struct transport_qp_info qi;
	const char *what;

	what = "an ACK of nothing sent";
	hdr(&h, DROCE_OP_RC_ACKNOWLEDGE);
	h.aeth.syndrome = 0x1f;	/* ACK, no credit count */
	transport_qp_info(v->t, &qi);
	h.psn = qi.sq_psn - 10;
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, NULL, 0, NULL, true), rx_resp_dropped);

	what = "READ response to a WRITE";
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0x1234;
	tt.blackhole[0] = true;
	tt_post_send(v, &wr);
	tt_step(&tt);
	hdr(&h, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY);
	h.aeth.syndrome = 0x1f;	/* ACK, no credit count */
	h.psn = qi.sq_psn;
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 64, NULL, true), rx_bad_resp);
	tt.blackhole[0] = false;
}

static void ud_checks(void)
{
	struct droce_hdr_fields h;
	const char *what;

	what = "UD with another Q_Key";
	hdr(&h, DROCE_OP_UD_SEND_ONLY);
	h.deth.qkey = 0x4321;
	EXPECT_VERDICT(tt_hostile(&tt, unreliable(IBV_QPT_UD, 512), &h, junk, 64, NULL, true),
		       rx_bad_qkey);
	what = "UD, no receive WQE";
	h.deth.qkey = 0x1234;
	EXPECT_VERDICT(tt_hostile(&tt, unreliable(IBV_QPT_UD, 0), &h, junk, 64, NULL, true),
		       rx_no_recv_wr);
	what = "UD longer than the WQE";
	EXPECT_VERDICT(tt_hostile(&tt, unreliable(IBV_QPT_UD, 64), &h, junk, 64, NULL, true),
		       rx_ud_too_long);
	CHECK_EQ(tt_hostile(&tt, unreliable(IBV_QPT_UD, 512), &h, junk, 64, NULL, true),
		 TRANSPORT_RX_ACCEPTED);
}

static void uc_checks(void)
{
	struct droce_hdr_fields h;
	struct tt_qp *v;
	const char *what;
	uint32_t psn;

	what = "UC WRITE, bad R_Key";
	v = unreliable(IBV_QPT_UC, 0);
	write_hdr(&h, DROCE_OP_UC_RDMA_WRITE_FIRST, mr->rkey ^ 0x100, 2048);
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 1024, NULL, false), access_err);
	CHECK_EQ(tt.cnt[1].rx_uc_msg_dropped, 1);	/* its message, not its reason */
	what = "UC, rest of a dropped message";
	hdr(&h, DROCE_OP_UC_RDMA_WRITE_LAST);
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 1024, NULL, false), rx_uc_pkt_dropped);

	what = "UC SEND, no receive WQE";
	hdr(&h, DROCE_OP_UC_SEND_ONLY);
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 64, NULL, false), rx_no_recv_wr);

	what = "UC SEND, a PSN gap";
	v = unreliable(IBV_QPT_UC, 4096);
	hdr(&h, DROCE_OP_UC_SEND_FIRST);
	CHECK_EQ(tt_hostile(&tt, v, &h, junk, 1024, NULL, false), TRANSPORT_RX_ACCEPTED);
	psn = h.psn;
	hdr(&h, DROCE_OP_UC_SEND_LAST);
	h.psn = psn + 2;
	EXPECT_VERDICT(tt_hostile(&tt, v, &h, junk, 64, NULL, true), rx_uc_msg_dropped);
	hdr(&h, DROCE_OP_UC_SEND_FIRST);
	CHECK_EQ(tt_hostile(&tt, v, &h, junk, 1024, NULL, true), TRANSPORT_RX_ACCEPTED);
	hdr(&h, DROCE_OP_UC_SEND_ONLY);
	CHECK_EQ(tt_hostile(&tt, v, &h, junk, 64, NULL, true), TRANSPORT_RX_ACCEPTED);
	printf("%-20s a FIRST and an ONLY ending an open UC message\n", "accepted");
}

int main(int argc, char **argv)
{
	unsigned int i;

	tt_init(&tt, argc, argv, 4791);
	mem = aligned_alloc(4096, MR_LEN);
	CHECK(mem != NULL);
	mr = tt_mr(&tt, 1, mem, MR_LEN, IBV_ACCESS_LOCAL_WRITE | all_access);
	rc_receive_checks();
	rc_resources();
	rc_responses();
	ud_checks();
	uc_checks();
	for (i = 1; i < TRANSPORT_VERDICT_NUM; i++)
		if (tt.verdicts[i] == 0) {
			fprintf(stderr, "drop reason %u never given as a verdict\n", i);
			return 1;
		}
	printf("verdict: each of the transport's %u drop reasons named, accepted frames accepted\n",
	       TRANSPORT_VERDICT_NUM - 1);
	return 0;
}
