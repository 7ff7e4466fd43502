/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-replay: feed a capture's requests into a droce device that plays the capture's
 * responder, record what droce sends, and (--compare) check droce's responses against the
 * responder's own responses in the capture. See doc/droce-replay.md.
 *
 * Pieces: scenario.c (the INI scenario: no EAL, fuzzed), capture.c (pcap in and out, which
 * frame is what), derive.c (a scenario from the capture itself), dev.c (EAL, the ring port,
 * droce's device, QPs and MRs), play.c (rewrite, inject, collect), compare.c (the rules);
 * requester.c, req_play.c, req_compare.c (droce as the requester, -R); wire.c (--serve,
 * --wire: another process on a real port).
 */
#ifndef DROCE_REPLAY_H
#define DROCE_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "droce.h"		/* DROCE_ACCESS_FLUSH_*, DROCE_FLUSH_* (no library call) */
#include "droce_wire.h"

/* Exit status. */
#define REPLAY_EXIT_PASS   0	/* replayed; with --compare every response matched */
#define REPLAY_EXIT_DIFF   1	/* --compare: some response differs */
#define REPLAY_EXIT_INPUT  2	/* usage, bad pcap, bad scenario, unknown QP */
#define REPLAY_EXIT_SETUP  3	/* EAL, port, or a droce verbs call failed */

#define REPLAY_MAX_QP 64
#define REPLAY_MAX_MR 64
#ifndef REPLAY_MAX_MR_LEN	/* the fuzz target sets a smaller one */
#define REPLAY_MAX_MR_LEN (256u << 20)	/* per MR: the tool allocates it */
#endif
#define REPLAY_MAX_MEM (2ull * REPLAY_MAX_MR_LEN)	/* all MRs together */
#define REPLAY_ERR_LEN 512
#define REPLAY_MAX_FRAME 9216	/* bytes: the largest frame injected */
#define REPLAY_MAX_RECV_WRS 16384	/* per QP: DROCE_MAX_QP_WR */
#define REPLAY_MAX_RECV_SIZE (1u << 24)	/* bytes per receive WR */
#define REPLAY_MIN_RNR_TIMER 12	/* default: 0.64 ms, what perftest and the pingpongs set */
#define REPLAY_QP_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			  IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE)	/* default */

enum replay_qp_type { REPLAY_RC, REPLAY_UC, REPLAY_UD };

/* One QP droce plays, named by the QPN the capture's requests carry. */
struct replay_qp {
	uint32_t cap_qpn;	/* DestQP in the capture (rewritten to droce's QPN) */
	enum replay_qp_type type;
	uint32_t peer_qpn;	/* the requester's QPN: droce's dest_qp_num */
	uint32_t rq_psn;	/* the first PSN droce expects */
	uint32_t sq_psn;
	uint32_t qkey;		/* UD */
	uint32_t recv_wrs;	/* receive WRs posted before the replay */
	uint32_t recv_size;	/* bytes each */
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;	/* RC: the timer code droce's RNR NAKs carry */
	int access;		/* RC/UC: the QP's remote access (IBV_ACCESS_REMOTE_*) */
	bool recv_follow;	/* recv_post = capture: a receive WR just before each request
				 * that consumed one at the capture's responder */
	uint16_t max_send_wr;	/* --requester: the WRs droce posts (else 16) */
	uint8_t max_rd_atomic;	/* --requester: READ/atomic requests outstanding (else 1) */
};

/* One MR, named by the R_Key the capture's requests carry. */
struct replay_mr {
	uint32_t cap_rkey;	/* rewritten to droce's R_Key */
	uint64_t cap_va;	/* the capture's VA of byte 0 (rewritten to droce's address) */
	uint32_t length;
	int access;		/* IBV_ACCESS_* */
	uint8_t *init;		/* initial contents, length bytes (malloc) */
};

struct replay_scenario {
	uint8_t mac[6];		/* droce's device: the capture's responder */
	uint8_t peer_mac[6];	/* the requester: droce's static neighbour */
	bool ipv6;		/* RoCE v2 over IPv6 (else IPv4) */
	uint8_t gid[16];	/* droce's address as a GID (IPv4: ::ffff:a.b.c.d) */
	uint8_t peer_gid[16];	/* the requester's */
	uint16_t mtu;		/* Ethernet MTU */
	unsigned int n_qp, n_mr;
	struct replay_qp qp[REPLAY_MAX_QP];
	struct replay_mr mr[REPLAY_MAX_MR];
};

/* scenario.c */
/* A message into @p err (@p len bytes); -1. */
int replay_errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Load and check an INI scenario. 0, or -1 with a message in @p err. */
int replay_scenario_load(const char *path, struct replay_scenario *sc, char *err, size_t len);
void replay_scenario_free(struct replay_scenario *sc);
/* An IPv6 address a scenario may hold: not ::, not multicast, not ::ffff:IPv4. */
bool replay_ipv6_ok(const uint8_t a[16]);
/* @p gid (one of @p sc's) as text: dotted IPv4 or IPv6, as the scenario writes it. */
const char *replay_addr_str(const struct replay_scenario *sc, const uint8_t gid[16], char *buf,
			    size_t len);
/* Write @p sc as an INI scenario that replay_scenario_load() reads back. */
void replay_scenario_print(FILE *o, const struct replay_scenario *sc, const char *origin);
struct replay_qp *replay_scenario_qp(const struct replay_scenario *sc, uint32_t cap_qpn);
struct replay_mr *replay_scenario_mr(const struct replay_scenario *sc, uint32_t cap_rkey);

/* capture.c */
enum replay_frame_kind {
	RF_NOT_ROCE,	/* ARP, the TCP exchange, anything else: ignored, counted */
	RF_REQUEST,	/* a request to droce's side: injected */
	RF_RESPONSE,	/* a response from droce's side (what rxe sent): compared */
	RF_OTHER_DIR,	/* RoCE v2 of the other direction (a pingpong's other half) */
	RF_MALFORMED,	/* RoCE v2 to droce's side that does not parse: injected as is */
	RF_KIND_NUM
};

struct replay_frame {
	uint8_t *data;
	uint32_t len;
	uint64_t ts_us;		/* capture time, microseconds */
	enum replay_frame_kind kind;
	struct droce_pkt pkt;	/* valid for RF_REQUEST and RF_RESPONSE */
};

struct replay_capture {
	const char *path;
	unsigned int n;
	struct replay_frame *f;
};

int replay_capture_load(const char *path, struct replay_capture *c, char *err, size_t len);
void replay_capture_free(struct replay_capture *c);
/* Set each frame's kind for the responder @p sc describes (its address and IP version). */
void replay_capture_classify(struct replay_capture *c, const struct replay_scenario *sc);

struct replay_pcap_out;
struct replay_pcap_out *replay_pcap_open(const char *path, char *err, size_t len);
void replay_pcap_write(struct replay_pcap_out *o, const void *data, uint32_t len);
void replay_pcap_close(struct replay_pcap_out *o);

/* derive.c: the responder's set-up from the capture. 0, or -1 with a message. */
int replay_derive(struct replay_capture *c, struct replay_scenario *sc,
		  const char *responder, char *err, size_t len);
/* @p sc's path MTU in bytes: 4096 when its Ethernet MTU carries it, else 1024. */
uint32_t replay_pmtu(const struct replay_scenario *sc);
/* The PSNs a request takes: a READ's response packets at @p sc's path MTU, else 1. */
uint32_t replay_psn_span(const struct droce_pkt *p, const struct replay_scenario *sc);

/* loop.c, --loop N: @p c becomes N passes of itself, PSNs, MSNs and FETCH_ADD results moved
 * on per pass, and @p sc's receive WRs N times as many. 0, or -1 with the reason (a capture
 * whose passes would not repeat it). */
int replay_loop(struct replay_capture *c, struct replay_scenario *sc, unsigned int n,
		char *err, size_t len);
/* Only the scenario's part (--serve: the receive WRs N passes need). */
int replay_loop_scenario(struct replay_scenario *sc, unsigned int n, char *err, size_t len);
#define REPLAY_MAX_LOOP 100000

/* One frame droce sent. */
struct replay_out {
	uint8_t *data;
	uint32_t len;
	struct droce_pkt pkt;
	bool parsed;
};

struct replay_result {
	unsigned int n_out;
	struct replay_out *out;
	uint64_t kind[RF_KIND_NUM];
	uint64_t injected;
	uint64_t recv_ok, recv_err;	/* receive completions on droce's QPs */
	uint32_t *imm;			/* their immediate data (host order), in order */
	unsigned int n_imm, cap_imm;
	uint64_t play_us;		/* first injection to the last request's settling */
	struct replay_swc {		/* --requester: send completions, in order */
		uint64_t wr_id;
		int status;		/* enum ibv_wc_status */
	} *swc;
	unsigned int n_swc, cap_swc;
	unsigned int stalls;		/* --requester: responses injected before droce had sent
					 * the requests the capture's requester sent before them */
	unsigned int in_error;		/* --requester: responses injected to a QP in ERR */
};

/* dev.c + play.c */
struct replay_opts {
	const char *capture;
	const char *scenario;
	const char *output;
	const char *responder;	/* --responder ADDR: which side droce plays (derive) */
	bool compare;
	bool pace;
	bool step;	/* one request at a time: droce never coalesces ACKs */
	double rate_fps;	/* --rate N[fps]: requests at N frames/s (else 0) */
	double rate_bps;	/* --rate Ngbps / Nmbps: at N bit/s of frame bytes (else 0) */
	bool print_scenario;
	bool no_rd_limit;	/* do not keep max_dest_rd_atomic (a misbehaving requester) */
	bool requester;		/* droce plays the requester (requester.c, req_*.c) */
	const char *serve;	/* --serve DEVARGS: the responder on a real port (wire.c) */
	const char *wire;	/* --wire DEVARGS: play onto a real port (wire.c) */
	const char *map;	/* --map FILE: the live names --serve writes, --wire reads */
	unsigned int loop;	/* --loop N: passes (0 or 1: one) */
	bool quiet;
};

/* opts.c: -1 to go on, else the exit status (help printed: 0; bad usage: 2). */
int replay_parse_args(int argc, char **argv, struct replay_opts *o);

struct replay_dev;
struct replay_dev *replay_dev_open(const struct replay_scenario *sc, char *err, size_t len);
void replay_dev_close(struct replay_dev *d);
int replay_play(struct replay_dev *d, const struct replay_capture *c,
		const struct replay_opts *o, struct replay_pcap_out *pout,
		struct replay_result *r);
void replay_dev_print_counters(struct replay_dev *d, FILE *o);
void replay_result_free(struct replay_result *r);

/* compare.c: print the differences; the number of them. @wire: the answers came from a
 * device under test in another process (--wire), whose receive completions are not seen. */
unsigned int replay_compare(const struct replay_capture *c, const struct replay_result *r,
			    bool wire, FILE *o);

/*
 * --requester: droce in the place of the capture's requester. The work it posts is derived
 * from the requests (requester.c), the capture's responses are fed back as droce's requests
 * call for them (req_play.c), and droce's requests, completions and READ/atomic results are
 * compared with the capture's (req_compare.c).
 */
#define REPLAY_REQ_MAX_WR 16384	/* per QP: droce's DROCE_MAX_QP_WR */
#define REPLAY_SEND_WR_ID (1ull << 63)	/* a send WR's wr_id: this bit | its index */
#define REPLAY_REQ_RD_ATOMIC 128	/* READ/atomic requests droce keeps outstanding: its
					 * maximum, never fewer than the capture's requester */
#define REPLAY_REQ_STALL_US 1000000	/* a response waits this long for droce's requests:
					 * > its retransmission timeout (14: 67 ms), RNR waits */

/* One message of the capture's requester: one send WR of droce's. */
struct replay_wr {
	unsigned int qp;	/* index in the scenario */
	int op;			/* enum ibv_wr_opcode */
	bool solicited;		/* BTH SE on its last packet */
	uint32_t len;		/* bytes: payload, READ's DMA length, 8 for an atomic */
	uint64_t off;		/* its bytes in the local buffer */
	uint8_t *data;		/* its payload while the work is derived (then NULL) */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, cmp;	/* atomics, host order */
	uint32_t imm;		/* ImmDt (network order) or IETH R_Key (host order) */
	uint32_t psn;		/* first PSN */
	uint32_t npsn;		/* PSNs it takes */
	unsigned int frame;	/* capture frame of its first packet (1-based) */
};

struct replay_work {
	struct replay_wr *wr;	/* in capture order */
	unsigned int n, cap;
	uint8_t *buf;		/* the local buffer's initial contents: what the requests carry */
	uint64_t len;
	bool *late;		/* per capture frame: a request the capture's requester resent
				 * after a response had acknowledged it (the ACK was on the wire
				 * when its timer fired): not played, not compared */
	unsigned int n_late;
};

/* The work of @p sc's QPs' requesters. 0, or -1 with a message in @p err. */
int replay_req_derive(const struct replay_capture *c, const struct replay_scenario *sc,
		      struct replay_work *w, char *err, size_t len);
/* droce's side: @p sc seen from the requester (addresses swapped, a QP per requester QP
 * named by the QPN the responses carry, one local MR holding @p w's buffer). */
int replay_req_scenario(const struct replay_scenario *sc, const struct replay_work *w,
			struct replay_scenario *rsc, char *err, size_t len);
void replay_work_free(struct replay_work *w);
/* Is request @p p a resend (a PSN before @p *next, the next new PSN of its QP on that side)?
 * If not, *next moves past it. @p *started: a first request was seen. */
bool replay_req_resend(const struct droce_pkt *p, const struct replay_scenario *sc,
		       uint32_t *next, bool *started);
/* Say on stderr which UD QPs' requests are not played. */
void replay_req_ud_note(const struct replay_capture *c, const struct replay_scenario *sc);
const struct replay_frame *replay_req_resent(const struct replay_capture *c,
					     const struct replay_scenario *sc, unsigned int from,
					     unsigned int k, uint32_t psn);
/* The scenario QP (index) whose requester sent @p f (its DestQP), or -1. */
int replay_req_qp_of(const struct replay_scenario *sc, const struct droce_pkt *p);

int replay_req_play(struct replay_dev *d, const struct replay_capture *c,
		    const struct replay_work *w, struct replay_pcap_out *pout,
		    struct replay_result *r);
/* The local buffer after the replay. */
const uint8_t *replay_req_local(const struct replay_dev *d);
unsigned int replay_req_compare(const struct replay_capture *c, const struct replay_scenario *sc,
				const struct replay_work *w, const struct replay_result *r,
				const uint8_t *local, FILE *o);

#endif /* DROCE_REPLAY_H */
