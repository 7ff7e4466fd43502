/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-perf: perftest's bandwidth and latency tests on droce. Shared declarations.
 *   droce_perf.c   main: EAL, the runs over the sizes, Ctrl-C
 *   opts.c         command line (perftest's options)
 *   setup.c        devices, PD, MRs, CQs, QPs (the local sides)
 *   connect.c      RC/UC/UD: QP type, INIT -> RTR -> RTS, address handles
 *   peer.c         two processes: the TCP set-up channel, generated vhost-user configuration
 *   serve.c        two processes: the server's loop and the exchange of results
 *   verb_write.c   one file per verb (testpmd style): a struct perf_verb of ops
 *   verb_read.c, verb_send.c, verb_atomic.c
 *   bw.c, lat.c    the bandwidth and latency drivers
 *   rawfwd.c       the raw DPDK forwarding rate of the same ports (testpmd io-forward)
 *   bounds.c       memcpy and ISA-L CRC rates on one core: the physical bound
 *   c2c.c          a cache line's round trip between the benchmark's and the engine's cores
 *   report.c       perftest's lines, droce's ratios, counters, JSON, progress line
 */
#ifndef PERF_H
#define PERF_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <droce.h>
#include <droce_engine.h>

#define PERF_MAX_QP 16384	/* per side, as DROCE_MAX_QP */
#define PERF_MAX_SIZE (1u << 23)

enum perf_test { PERF_BW, PERF_LAT };

/* In-process (both sides here), or one side of a two-process run over vhost-user. */
enum perf_role { PERF_BOTH, PERF_CLIENT, PERF_SERVER };

#define PERF_DEFAULT_PORT 18515	/* perftest's */
#define PERF_GRH 40		/* UD: the GRH ahead of every received message */

struct perf_ctx;

/* One verb (write, read, send, atomic): what differs between them. */
struct perf_verb {
	const char *name;
	bool lat_halved;	/* latency is RTT/2 (write, send) or the full round (read, atomic) */
	bool needs_recv;	/* the server posts receive WRs */
	uint32_t fixed_size;	/* atomic: 8; 0 = any size */
	int access;		/* access the server's MR grants */
	/* Fill a WR from @p side's QP @p q to the peer (wr_id and send_flags are the caller's). */
	void (*wr_init)(const struct perf_ctx *c, int side, unsigned int q,
			struct ibv_send_wr *wr, struct ibv_sge *sge);
	/* One latency iteration on QP 0; returns 0 or -1 (error already printed). */
	int (*lat_once)(struct perf_ctx *c, uint64_t it);
	/* Two processes, latency: the server's part of iteration @p it (NULL: passive);
	 * 0, 1 (the client said stop) or -1. */
	int (*lat_serve)(struct perf_ctx *c, uint64_t it);
};

extern const struct perf_verb perf_verb_write, perf_verb_read, perf_verb_send,
	perf_verb_atomic;

struct perf_opts {
	const struct perf_verb *verb;
	enum perf_test test;
	uint32_t size;
	bool all_sizes;		/* -a: 2 .. 2^23 */
	uint64_t iters;		/* -n */
	double duration;	/* -D seconds; 0 = by iterations */
	unsigned int qps;	/* -q */
	unsigned int tx_depth;	/* -t */
	enum ibv_mtu mtu;	/* -m; 0 = the port's active MTU */
	unsigned int inline_size;	/* -I */
	unsigned int cq_mod;	/* -Q */
	unsigned int outs;	/* -o: READ/atomic outstanding per QP; 0 = the device's maximum */
	bool report_gbits;
	bool ignore_freq;	/* -F: accepted; droce measures with the TSC */
	bool json;
	bool no_raw;		/* --no-raw: skip the raw-link and memcpy/CRC phases */
	double raw_seconds;	/* length of the raw forwarding phase per size */
	const char *eal;	/* --eal: EAL arguments; NULL = droce-perf's default */
	enum ibv_qp_type conn;	/* -c: IBV_QPT_RC, UC or UD */
	enum perf_role role;	/* --server, --client */
	uint16_t port;		/* -p: TCP port of the set-up channel */
};

/* One side's objects. Side 0 is the client (requester), side 1 the server. */
struct perf_side {
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_cq *scq, *rcq;
	struct droce_mr *mr;
	uint8_t *buf;		/* qps slots of slot bytes: the peer writes/reads the lower */
	size_t slot;		/* half, this side sends from the upper half */
	struct droce_qp *qp[PERF_MAX_QP];
	uint64_t *rx_posted;	/* per QP: receives posted (send tests) */
	struct droce_ah *ah;	/* UD: towards the peer's GID */
};

/* What one side's peer needs to know of it (local, or received over the set-up channel). */
struct perf_view {
	union ibv_gid gid;	/* the IPv4 GID (index 1) */
	uint64_t addr;		/* its buffer: slot q at addr + slot * q */
	uint64_t slot;
	uint32_t rkey;
	uint32_t qpn[PERF_MAX_QP];
};

struct perf_ctx {
	const struct perf_opts *o;
	struct perf_side side[2];
	struct perf_view view[2];	/* side i as its peer addresses it */
	int lo, hi;		/* the local sides: 0..1 in-process, 0..0 client, 1..1 server */
	int fd;			/* two processes: the set-up channel; -1 in-process */
	enum ibv_mtu mtu;	/* path MTU in use */
	uint32_t size;		/* message size of the current run */
	bool engine_inline;
	uint64_t mem_per_qp;	/* bytes of RSS per connected QP (both ends), 0 if unknown */
	double c2c_ns[2];	/* in-process: the cores' round trip before and after (0: not) */
	struct droce_counters cnt[2];	/* this run (one size) */
	struct droce_counters tot[2];	/* every run so far */
};

/* The result of one run (one size). */
struct perf_result {
	uint32_t size;
	uint64_t iters;		/* completed */
	double seconds;
	double peak_mps;	/* bw: best slice, messages per second */
	/* lat: per-iteration samples in microseconds, sorted */
	double *lat;
	uint64_t n_lat;
	bool interrupted;
};

/* The references measured by droce-perf on this run's ports and core. */
struct perf_refs {
	double raw_mpps;	/* io-forward packets per second / 1e6 (0: not measured) */
	double raw_hop_us;	/* one hop of a single packet ping-pong, median */
	uint32_t frame_len;	/* frame length used for the raw phase */
	double memcpy_gbs;	/* GB/s (1e9) on the message size */
	double crc_gbs;
	double bound_gbs;	/* 1 / (2/crc + 1/memcpy) */
};

extern volatile sig_atomic_t perf_stop;

/* opts.c */
int perf_opts_parse(int argc, char **argv, struct perf_opts *o);

/* setup.c */
int perf_setup_path_mtu(struct perf_ctx *c);
int perf_setup_open(struct perf_ctx *c);
int perf_setup_qps(struct perf_ctx *c);
void perf_setup_close(struct perf_ctx *c);
void perf_step(const struct perf_ctx *c);
int perf_post_recv(struct perf_ctx *c, int side, unsigned int q);
int perf_fill_recv(struct perf_ctx *c);
void perf_wr_base(const struct perf_ctx *c, int side, unsigned int q, enum ibv_wr_opcode op,
		  struct ibv_send_wr *wr, struct ibv_sge *sge);
uint8_t *perf_local(const struct perf_ctx *c, int side, unsigned int q);
uint8_t *perf_target(const struct perf_ctx *c, int side, unsigned int q);
uint32_t perf_frame_len(uint32_t size, enum ibv_mtu mtu);

/* connect.c */
enum ibv_qp_type perf_conn_parse(const char *s);
int perf_conn_check(const struct perf_opts *o);
int perf_connect_qp(struct perf_ctx *c, int side, unsigned int q);
int perf_ah_create(struct perf_ctx *c, int side);
void perf_wr_ud(const struct perf_ctx *c, int side, unsigned int q, struct ibv_send_wr *wr);

/* peer.c */
int perf_peer_start(struct perf_opts *o, struct perf_ctx *c);
int perf_peer_send(struct perf_ctx *c, const void *p, size_t len);
int perf_peer_recv(struct perf_ctx *c, void *p, size_t len);
int perf_peer_ready(struct perf_ctx *c);
int perf_peer_go(struct perf_ctx *c);
int perf_peer_views(struct perf_ctx *c);
void perf_peer_stop(struct perf_ctx *c);
const char *perf_peer_sock_path(void);

/* serve.c */
int perf_serve(struct perf_ctx *c, struct perf_result *r);
int perf_results_exchange(struct perf_ctx *c, struct perf_result *r);
int perf_peer_size(struct perf_ctx *c, uint32_t size, bool last);
int perf_peer_barrier(struct perf_ctx *c);
int perf_warmup(struct perf_ctx *c);

/* bw.c, lat.c */
/* Never inlined (even under LTO): profiles collect exactly these (doc/performance.md). */
__attribute__((noinline)) int perf_bw_run(struct perf_ctx *c, struct perf_result *r);
__attribute__((noinline)) int perf_lat_run(struct perf_ctx *c, struct perf_result *r);
int perf_wait_wc(struct perf_ctx *c, struct droce_cq *cq, struct ibv_wc *wc);
int perf_lat_post(struct perf_ctx *c, int side, struct ibv_send_wr *wr, bool wait);
int perf_lat_request(struct perf_ctx *c, uint64_t it);
int perf_wait_byte(struct perf_ctx *c, const volatile uint8_t *p, uint8_t v);

/* rawfwd.c: while the devices are not open (the engine does not drive the ports). */
int perf_raw_measure(const struct perf_opts *o, uint32_t frame_len, struct perf_refs *refs);
/* qsort() comparison of two uint64_t (rawfwd.c, c2c.c). */
int perf_cmp_u64(const void *a, const void *b);
/* Two processes, after the QPs are connected: both sides call it for the same frame lengths. */
int perf_raw_measure_peer(struct perf_ctx *c, uint32_t frame_len, struct perf_refs *refs);

/* c2c.c: one cache line's round trip in ns between this lcore and the engine's first lcore
 * (the first worker lcore, unless the engine is inline), median of blocks; 0 when there is
 * none or it is busy. perf_c2c_engine_there(): while devices are open, the engine runs on
 * that lcore (else a measurement was of another core's distance). */
double perf_c2c_measure(void);
bool perf_c2c_engine_there(void);

/* bounds.c: memcpy and CRC rates over @p size bytes in pieces of the path MTU @p mtu (bytes). */
void perf_bounds_measure(uint32_t size, uint32_t mtu, struct perf_refs *refs);

/* report.c */
void perf_report_header(const struct perf_opts *o);
void perf_report_line(const struct perf_ctx *c, const struct perf_result *r,
		      const struct perf_refs *refs);
void perf_report_footer(const struct perf_ctx *c);
int perf_counters_take(struct perf_ctx *c);
void perf_counters_add(struct perf_ctx *c, int side, const struct droce_counters *v);
void perf_report_counters(const struct perf_ctx *c);
void perf_progress(const struct perf_ctx *c, uint64_t done, uint64_t total, double seconds);
void perf_progress_clear(void);
double perf_now(void);

#endif /* PERF_H */
