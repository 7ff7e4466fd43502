/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * N connect/disconnect cycles (argv[2], default 1000) through droce's CM between droce0 and
 * droce1: resolve, connect, accept, ESTABLISHED on both, one SEND, disconnect from alternating
 * sides, destroy everything, most cycles with the ids destroyed while still in timewait.
 * Proves nothing is left behind: after the last cycle and the last timewait, the bytes the
 * process holds from malloc, DPDK's heap and the engine's mbufs in use are what they were after
 * the first cycles, to the byte, and every cycle's CM messages were matched (no duplicate, no
 * unmatched MAD, no retry: each message went once). Under ASan, LeakSanitizer finds nothing at
 * exit.
 *
 * The malloc bytes are counted, not read from glibc's mallinfo2(): its uordblks counts the
 * chunks in each thread's tcache and each arena's own header as in use, so it moves by a few KiB
 * with which thread freed what last (the engine's lcore frees what the application's thread
 * allocated and the other way round) while the live allocations are the same. This file
 * therefore replaces malloc (glibc's documented interposition: malloc, free, calloc, realloc
 * and the aligned forms) with a thin layer over glibc's own that keeps each block's size in a
 * 16-byte header and counts live bytes and blocks. Under ASan or TSan, whose allocators own
 * malloc (a replacement here would free their blocks into glibc), the count is the sanitizer
 * allocator's own (__sanitizer_get_current_allocated_bytes). The INIs start EAL with
 * --no-telemetry: under the default file prefix, any process's telemetry client could reach
 * this one's socket, and each connection runs a DPDK thread whose glibc thread bookkeeping
 * (its DTV, in glibc's stack cache) stays allocated after it ends.
 *
 * Usage: cm_churn_test {inline|lcore} [N]
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>

#include "cm_test.h"
#include "usage.h"

#define WARMUP 20

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHURN_SAN_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CHURN_SAN_ALLOCATOR 1
#endif
#endif

#ifdef CHURN_SAN_ALLOCATOR
size_t __sanitizer_get_current_allocated_bytes(void);

static size_t live_bytes(void)
{
	return __sanitizer_get_current_allocated_bytes();
}

static size_t live_blocks(void)
{
	return 0;	/* the sanitizer allocators count bytes only */
}
#else
/* glibc's allocator under the replacement below */
void *__libc_malloc(size_t size);
void *__libc_memalign(size_t align, size_t size);
void __libc_free(void *p);

struct blk {
	void *base;	/* what glibc returned */
	size_t size;	/* what the caller asked for */
};
_Static_assert(sizeof(struct blk) == 16, "malloc's 16-byte alignment kept");

static size_t c_bytes, c_blocks;

static void *track(void *base, size_t off, size_t size)
{
	struct blk *b;

	if (base == NULL)
		return NULL;
	b = (struct blk *)((char *)base + off) - 1;
	b->base = base;
	b->size = size;
	__atomic_fetch_add(&c_bytes, size, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c_blocks, 1, __ATOMIC_RELAXED);
	return b + 1;
}

void *malloc(size_t size)
{
	if (size > SIZE_MAX - sizeof(struct blk))
		return NULL;
	return track(__libc_malloc(size + sizeof(struct blk)), sizeof(struct blk), size);
}

void free(void *p)
{
	struct blk *b = (struct blk *)p - 1;

	if (p == NULL)
		return;
	__atomic_fetch_sub(&c_bytes, b->size, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&c_blocks, 1, __ATOMIC_RELAXED);
	__libc_free(b->base);
}

void *calloc(size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > (SIZE_MAX - sizeof(struct blk)) / size)
		return NULL;
	/* not malloc(): the compiler may fold malloc + memset into a call to calloc */
	p = track(__libc_malloc(n * size + sizeof(struct blk)), sizeof(struct blk), n * size);
	if (p != NULL)
		memset(p, 0, n * size);
	return p;
}

void *realloc(void *p, size_t size)
{
	size_t old;
	void *q;

	if (p == NULL)
		return malloc(size);
	if (size == 0) {
		free(p);
		return NULL;
	}
	q = malloc(size);
	if (q == NULL)
		return NULL;
	old = ((struct blk *)p - 1)->size;
	memcpy(q, p, old < size ? old : size);
	free(p);
	return q;
}

void *memalign(size_t align, size_t size)
{
	size_t off;

	if (align < sizeof(struct blk))
		align = sizeof(struct blk);
	if ((align & (align - 1)) != 0 || size > SIZE_MAX - 2 * align)
		return NULL;
	off = align;	/* the header sits in the last 16 bytes before the block */
	return track(__libc_memalign(align, size + off), off, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0)
		return EINVAL;
	p = memalign(align, size);
	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

void *valloc(size_t size)
{
	return memalign(4096, size);
}

void *pvalloc(size_t size)
{
	return memalign(4096, (size + 4095) & ~(size_t)4095);
}

size_t malloc_usable_size(void *p)
{
	return p == NULL ? 0 : ((struct blk *)p - 1)->size;
}

static size_t live_bytes(void)
{
	return __atomic_load_n(&c_bytes, __ATOMIC_RELAXED);
}

static size_t live_blocks(void)
{
	return __atomic_load_n(&c_blocks, __ATOMIC_RELAXED);
}
#endif

struct usage {
	struct test_usage dpdk;
	size_t c_bytes, c_blocks;
};

static struct usage usage(void)
{
	struct usage u = { test_usage_now(), live_bytes(), live_blocks() };

	return u;
}

static void cycle(struct droce_cm_event_channel *ch, struct droce_cm_id *lis, int i)
{
	struct sockaddr_in dst = cmt_addr("10.99.0.2", 7500);
	struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7 };
	struct droce_cm_id *a, *b, *first, *second;
	struct droce_cm_event *ev;
	struct droce_cq *acq, *bcq;
	struct droce_mr *amr, *bmr;
	char abuf[32], bbuf[32];
	struct ibv_sge sge;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *bs;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *br;

	CHECK_EQ(droce_cm_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_resolve_addr(a, NULL, (struct sockaddr *)&dst, 2000), 0);
	cmt_drive_ctx = a->verbs;
	CMT_GOT(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	CHECK_EQ(droce_cm_resolve_route(a, 2000), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	acq = cmt_cq(a);
	cmt_qp(a, acq, IBV_QPT_RC);
	amr = droce_reg_mr(a->pd, abuf, sizeof(abuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(amr != NULL);
	CHECK_EQ(droce_cm_connect(a, &p), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	CHECK(ev->listen_id == lis);
	b = ev->id;
	bcq = cmt_cq(b);
	cmt_qp(b, bcq, IBV_QPT_RC);
	bmr = droce_reg_mr(b->pd, bbuf, sizeof(bbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(bmr != NULL);
	sge = (struct ibv_sge){ (uintptr_t)bbuf, sizeof(bbuf), bmr->lkey };
	CHECK_EQ(droce_post_recv(b->qp, &rwr, &br), 0);
	CHECK_EQ(droce_cm_accept(b, &p), 0);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	CMT_GOT(ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	snprintf(abuf, sizeof(abuf), "cycle %d", i);
	sge = (struct ibv_sge){ (uintptr_t)abuf, sizeof(abuf), amr->lkey };
	CHECK_EQ(droce_post_send(a->qp, &swr, &bs), 0);
	CHECK_EQ(cmt_wc(acq).status, IBV_WC_SUCCESS);
	CHECK_EQ(cmt_wc(bcq).status, IBV_WC_SUCCESS);
	CHECK(strcmp(abuf, bbuf) == 0);

	first = i % 2 ? a : b;
	second = i % 2 ? b : a;
	CHECK_EQ(droce_cm_disconnect(first), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK(ev->id == second);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	CHECK_EQ(droce_cm_disconnect(second), 0);
	ev = CMT_EXPECT(ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	CHECK(ev->id == first);
	CHECK_EQ(droce_cm_ack_cm_event(ev), 0);
	if (i % 20 == 0) {	/* every 20th cycle: wait for the timewaits to end */
		CMT_GOT(ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
		CMT_GOT(ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
	}
	droce_cm_destroy_qp(a);
	droce_cm_destroy_qp(b);
	CHECK_EQ(droce_dereg_mr(amr), 0);
	CHECK_EQ(droce_dereg_mr(bmr), 0);
	CHECK_EQ(droce_destroy_cq(acq), 0);
	CHECK_EQ(droce_destroy_cq(bcq), 0);
	CHECK_EQ(droce_cm_destroy_id(a), 0);
	CHECK_EQ(droce_cm_destroy_id(b), 0);
}

int main(int argc, char **argv)
{
	struct sockaddr_in any = cmt_addr("0.0.0.0", 7500);
	struct droce_cm_event_channel *ch;
	struct droce_cm_counters c0;
	struct droce_cm_id *lis;
	struct usage before = { { 0, 0 }, 0, 0 }, after;
	int i, n = argc > 2 ? atoi(argv[2]) : 1000;

	CHECK(argc >= 2 && n > WARMUP);
	cmt_init();
	ch = droce_cm_create_event_channel();
	CHECK(ch != NULL);
	CHECK_EQ(droce_cm_create_id(ch, &lis, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(droce_cm_bind_addr(lis, (struct sockaddr *)&any), 0);
	CHECK_EQ(droce_cm_listen(lis, 8), 0);
	for (i = 0; i < n; i++) {
		cycle(ch, lis, i);
		if (i == WARMUP - 1) {
			cmt_none(ch, 600, __LINE__);	/* timewaits (128 ms) end: nothing to tell */
			before = usage();
		}
	}
	cmt_none(ch, 600, __LINE__);
	after = usage();
	printf("malloc'd bytes %zu -> %zu (blocks %zu -> %zu), DPDK heap %zu -> %zu, "
	       "mbufs in use %zu -> %zu\n", before.c_bytes, after.c_bytes, before.c_blocks,
	       after.c_blocks, before.dpdk.rte_heap, after.dpdk.rte_heap, before.dpdk.mbufs,
	       after.dpdk.mbufs);
	CHECK_EQ(after.dpdk.rte_heap, before.dpdk.rte_heap);
	CHECK_EQ(after.dpdk.mbufs, before.dpdk.mbufs);
	CHECK_EQ(after.c_bytes, before.c_bytes);
	CHECK_EQ(after.c_blocks, before.c_blocks);
	CHECK_EQ(droce_cm_query_counters(cmt_drive_ctx, &c0), 0);	/* droce0: the active side */
	printf("droce0's CM: %lu REQs sent, %lu retries, %lu MRAs received, %lu duplicates, "
	       "%lu unmatched\n", (unsigned long)c0.tx_msg[DROCE_CM_MSG_REQ],
	       (unsigned long)c0.tx_retries, (unsigned long)c0.rx_msg[DROCE_CM_MSG_MRA],
	       (unsigned long)c0.rx_duplicates, (unsigned long)c0.rx_unmatched);
	CHECK_EQ(c0.tx_msg[DROCE_CM_MSG_REQ], (uint64_t)n);
	CHECK_EQ(c0.tx_retries + c0.rx_duplicates + c0.rx_unmatched + c0.rx_bad_mad, 0);
	CHECK_EQ(droce_cm_destroy_id(lis), 0);
	CHECK_EQ(droce_cm_destroy_event_channel(ch), 0);
	printf("cm churn: %d connect/disconnect cycles, nothing left behind (%s engine)\n", n,
	       argv[1]);
	return 0;
}
