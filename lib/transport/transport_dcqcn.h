/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * Congestion control (internal): ECN marking, the DCQCN notification point (a CE-marked frame
 * received for a QP -> a CNP to the sending QP) and reaction point (a per-QP rate limiter cut
 * by CNPs, recovering by timer and byte counter), after Zhu et al., "Congestion Control for
 * Large-Scale RDMA Deployments", SIGCOMM 2015. doc/congestion.md describes the keys.
 *
 * The engine owns the parameters (one struct per device, from the [dcqcn] section) and gives
 * them to the transport through transport_env.dcqcn; each QP keeps its own state. Timers are
 * lazy: the reaction point's timer events (rate increase every time_reset, alpha decay every
 * alpha_period) are applied when the QP next looks at its limiter, in time order, so a QP
 * needs no wake-up of its own besides the pacer's. With no CNP ever received a QP's limiter is
 * off: the requester pays one predictable branch per packet.
 */
#ifndef DROCE_DCQCN_H
#define DROCE_DCQCN_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ECN field: the low two bits of the IPv4 TOS / IPv6 traffic class (RFC 3168). */
#define DROCE_ECN_MASK 0x3
#define DROCE_ECN_ECT1 0x1
#define DROCE_ECN_ECT0 0x2
#define DROCE_ECN_CE 0x3

/** Fixed point of alpha: 1.0 is 1 << DCQCN_ALPHA_SHIFT. */
#define DCQCN_ALPHA_SHIFT 20
#define DCQCN_ALPHA_ONE (1u << DCQCN_ALPHA_SHIFT)

/** A device's DCQCN parameters ([dcqcn] keys; engine config). */
struct dcqcn_params {
	bool np;			/**< notification point: send CNPs for CE frames */
	bool rp;			/**< reaction point: rate-limit QPs on CNPs */
	uint8_t ecn;			/**< ECN field of frames sent (0 Not-ECT, 1 ECT(1), 2 ECT(0)) */
	int8_t cnp_dscp;		/**< DSCP of the CNPs sent; -1: the QP's */
	int8_t cnp_pcp;			/**< PCP of their 802.1Q tag (a device with a VLAN); -1: the QP's */
	uint32_t alpha_g_shift;		/**< g = 2^-alpha_g_shift */
	uint32_t alpha_init;		/**< alpha at the first CNP, fixed point (DCQCN_ALPHA_ONE) */
	uint32_t stages;		/**< F: fast recovery events before additive increase */
	uint32_t line_rate;		/**< kbit/s: rate of an unlimited QP, where recovery ends */
	uint32_t min_rate;		/**< kbit/s: no cut goes below */
	uint32_t ai_rate;		/**< kbit/s added to the target per additive increase */
	uint32_t hai_rate;		/**< kbit/s (times the stage) per hyper increase */
	uint64_t byte_reset;		/**< B: bytes sent between two byte counter events */
	uint32_t burst;			/**< bytes the pacer lets through at once after idling */
	/* TSC ticks */
	uint64_t hz;
	uint64_t cnp_interval;		/**< NP: at most one CNP per QP per interval */
	uint64_t rate_reduce_period;	/**< RP: at most one cut per period */
	uint64_t alpha_period;		/**< K: alpha decays after a period without CNP */
	uint64_t time_reset;		/**< T: timer events of the rate increase */
};

/** One QP's congestion control state (in struct transport_qp). */
struct dcqcn_qp {
	const struct dcqcn_params *p;	/**< NULL: off (the device's or every device's) */
	bool limited;			/**< a CNP cut the rate, not yet back at line rate */
	bool wait;			/**< the requester waits for the pacer (tx_next) */
	uint32_t rc;			/**< current rate, kbit/s */
	uint32_t rt;			/**< target rate, kbit/s */
	uint32_t alpha;			/**< fixed point DCQCN_ALPHA_ONE */
	uint32_t t_stage;		/**< timer events since the last cut */
	uint32_t b_stage;		/**< byte counter events since the last cut */
	uint64_t bytes;			/**< bytes sent since the last byte counter event */
	uint64_t cut_at;		/**< TSC of the last cut */
	uint64_t next_inc;		/**< TSC of the next timer event */
	uint64_t next_alpha;		/**< TSC of the next alpha decay */
	uint64_t tick_q16;		/**< TSC ticks per byte at rc, << 16 */
	uint64_t burst_ticks;		/**< params' burst at rc, in ticks */
	uint64_t tx_next;		/**< pacer: TSC before which nothing more leaves */
	uint64_t cnp_last;		/**< NP: TSC of the last CNP sent; 0: none yet */
	uint32_t cuts, incs;		/**< for telemetry: rate cuts and increases */
};

/*
 * The algorithm, on plain state and explicit time (unit-tested without an engine). Each
 * returns what it changed in the rate: > 0 increases, < 0 a cut, 0 nothing; callers count.
 */
/** Start @p q with parameters @p p (NULL: off). */
void transport_dcqcn_init(struct dcqcn_qp *q, const struct dcqcn_params *p);
/** A CNP arrived at @p now: maybe cut the rate (at most once per rate_reduce_period).
 *  @return true when the rate was cut. */
bool transport_dcqcn_cnp(struct dcqcn_qp *q, uint64_t now);
/** Apply the timer events due by @p now (rate increases, alpha decay). @return increases. */
unsigned int transport_dcqcn_advance(struct dcqcn_qp *q, uint64_t now);
/** The pacer: may a packet leave at @p now? (Applies the timers first.) */
bool transport_dcqcn_tx_ok(struct dcqcn_qp *q, uint64_t now, unsigned int *incs);
/** @p bytes left (a limited QP): charge the pacer, count toward the byte counter.
 *  @return rate increases by the byte counter. */
unsigned int transport_dcqcn_tx_sent(struct dcqcn_qp *q, uint32_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_DCQCN_H */
