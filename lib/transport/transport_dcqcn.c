/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * DCQCN (transport_dcqcn.h): the reaction point's algorithm on plain state and explicit time, and the
 * transport's side of it — the notification point (CE received -> CNP), CNPs received, the
 * pacer of the requesters.
 *
 * Reaction point, per QP (Zhu et al. 2015, section 3):
 * - a CNP cuts the rate, at most once per rate_reduce_period: target = current,
 *   current *= 1 - alpha/2 (never below min_rate), alpha = (1 - g) alpha + g;
 * - alpha decays, alpha = (1 - g) alpha, after each alpha_period without a CNP;
 * - the rate increases on timer events (every time_reset after the cut) and byte counter
 *   events (every byte_reset bytes sent): while both counts are below F (stages), fast
 *   recovery (current = (target + current) / 2); once one reaches F, additive increase
 *   (target += ai_rate first); once both exceed F, hyper increase (target += i hai_rate,
 *   i = min(counts) - F); the target never exceeds line_rate. A QP whose current rate is
 *   back at line rate is unlimited again: its pacer is off.
 * The pacer is a token bucket in TSC time: each packet moves the time before which the next
 * one may not leave by its size times the ticks per byte at the current rate (a
 * multiplication; the division is done when the rate changes), and an idle QP keeps at most
 * `burst` bytes of credit.
 */
#include <string.h>

#include "transport_private.h"

/* TSC ticks per byte at @p kbps, << 16. */
static uint64_t ticks_per_byte_q16(uint64_t hz, uint32_t kbps)
{
	return ((hz * 8) << 16) / ((uint64_t)(kbps != 0 ? kbps : 1) * 1000);
}

static void set_rate(struct dcqcn_qp *q)
{
	q->tick_q16 = ticks_per_byte_q16(q->p->hz, q->rc);
	q->burst_ticks = ((uint64_t)q->p->burst * q->tick_q16) >> 16;
}

void transport_dcqcn_init(struct dcqcn_qp *q, const struct dcqcn_params *p)
{
	memset(q, 0, sizeof(*q));
	q->p = p;
	if (p != NULL) {
		q->rc = q->rt = p->line_rate;
		q->alpha = p->alpha_init;
	}
}

/* Back at line rate: the QP is unlimited. */
static void unlimit(struct dcqcn_qp *q)
{
	q->limited = false;
	q->wait = false;
	q->rc = q->rt = q->p->line_rate;
}

/* One timer (@p timer) or byte counter event. */
static void increase(struct dcqcn_qp *q, bool timer)
{
	const struct dcqcn_params *p = q->p;
	uint32_t f = p->stages, lo;
	uint64_t rt = q->rt;

	if (timer)
		q->t_stage++;
	else
		q->b_stage++;
	lo = RTE_MIN(q->t_stage, q->b_stage);
	if (lo > f)
		rt += (uint64_t)(lo - f) * p->hai_rate;		/* hyper increase */
	else if (RTE_MAX(q->t_stage, q->b_stage) >= f)
		rt += p->ai_rate;				/* additive increase */
	q->rt = (uint32_t)RTE_MIN(rt, (uint64_t)p->line_rate);
	if (q->rt > q->rc)
		q->rc += (q->rt - q->rc + 1) / 2;
	else
		q->rc = q->rt;	/* line_rate lowered under the QP (its link's speed) */
	q->incs++;
	if (q->rc >= p->line_rate)
		unlimit(q);
}

/* Timer events a QP catches up with at most, after which it is simply back at line rate
 * (a QP idle that long would have recovered). */
#define CATCH_UP_MAX 8192

unsigned int transport_dcqcn_advance(struct dcqcn_qp *q, uint64_t now)
{
	const struct dcqcn_params *p = q->p;
	unsigned int n = 0;

	if (!q->limited)
		return 0;
	while ((int64_t)(now - q->next_alpha) >= 0) {
		if (now - q->next_alpha > (uint64_t)CATCH_UP_MAX * p->alpha_period) {
			q->alpha = 0;
			q->next_alpha = now + p->alpha_period;
			break;
		}
		q->alpha -= q->alpha >> p->alpha_g_shift;
		if (q->alpha >> p->alpha_g_shift == 0)
			q->alpha = 0;	/* below what one step can take away */
		q->next_alpha += p->alpha_period;
	}
	while (q->limited && (int64_t)(now - q->next_inc) >= 0) {
		if (n == CATCH_UP_MAX) {
			unlimit(q);
			n++;
			break;
		}
		q->next_inc += p->time_reset;
		increase(q, true);
		n++;
	}
	if (n != 0 && q->limited)
		set_rate(q);
	return n;
}

bool transport_dcqcn_cnp(struct dcqcn_qp *q, uint64_t now)
{
	const struct dcqcn_params *p = q->p;
	bool first = false;

	if (p == NULL || !p->rp)
		return false;
	if (!q->limited) {
		q->limited = true;
		first = true;
		q->rc = q->rt = p->line_rate;
		q->alpha = p->alpha_init;
		q->tx_next = now;
	} else {
		transport_dcqcn_advance(q, now);
		if (!q->limited) {	/* recovered by the events up to now: a new episode */
			q->limited = true;
			first = true;
			q->tx_next = now;
		}
	}
	q->next_alpha = now + p->alpha_period;	/* a CNP in this period: no decay */
	if (!first && now - q->cut_at < p->rate_reduce_period)
		return false;
	q->rt = q->rc;
	q->rc -= (uint32_t)(((uint64_t)q->rc * q->alpha) >> (DCQCN_ALPHA_SHIFT + 1));
	if (q->rc < p->min_rate)
		q->rc = p->min_rate;
	q->alpha = q->alpha - (q->alpha >> p->alpha_g_shift) +
		   (DCQCN_ALPHA_ONE >> p->alpha_g_shift);
	q->t_stage = q->b_stage = 0;
	q->bytes = 0;
	q->cut_at = now;
	q->next_inc = now + p->time_reset;
	q->cuts++;
	set_rate(q);
	if (q->rc >= p->line_rate)	/* alpha 0: nothing cut */
		unlimit(q);
	return true;
}

bool transport_dcqcn_tx_ok(struct dcqcn_qp *q, uint64_t now, unsigned int *incs)
{
	*incs = transport_dcqcn_advance(q, now);
	if (!q->limited)
		return true;
	if ((int64_t)(q->tx_next - now) > 0) {
		q->wait = true;
		return false;
	}
	if (now - q->tx_next > q->burst_ticks)
		q->tx_next = now - q->burst_ticks;	/* credit of an idle QP: one burst */
	q->wait = false;
	return true;
}

unsigned int transport_dcqcn_tx_sent(struct dcqcn_qp *q, uint32_t bytes)
{
	const struct dcqcn_params *p = q->p;

	if (!q->limited)
		return 0;
	q->tx_next += ((uint64_t)bytes * q->tick_q16) >> 16;
	q->bytes += bytes;
	if (p->byte_reset == 0 || q->bytes < p->byte_reset)
		return 0;
	q->bytes -= p->byte_reset;
	increase(q, false);
	if (q->limited)
		set_rate(q);
	return 1;
}

/* ---- The transport's side ---- */

bool transport_cc_tx_ok_slow(struct transport_env *env, struct transport_qp *t)
{
	bool waiting = t->cc.wait, ok;
	unsigned int incs;

	ok = transport_dcqcn_tx_ok(&t->cc, env->now, &incs);
	if (incs != 0)
		TCNT_ADD(env, t, cc_rate_inc, incs);
	if (!t->cc.limited && incs != 0)
		TCNT(env, t, cc_rate_full);
	if (!ok && !waiting)
		TCNT(env, t, cc_paced);
	return ok;
}

void transport_cc_sent_slow(struct transport_env *env, struct transport_qp *t, uint32_t bytes)
{
	if (transport_dcqcn_tx_sent(&t->cc, bytes) != 0) {
		TCNT(env, t, cc_rate_inc);
		if (!t->cc.limited)
			TCNT(env, t, cc_rate_full);
	}
}

/* Annex A17.9.2: a CNP to the QP that sent the CE-marked frame, from this QP's address, BECN
 * set (the builder sets it for the opcode), PSN 0, 16 reserved bytes. It goes without ECT:
 * the notification must not itself be marked away; at [dcqcn] cnp_dscp and cnp_pcp when they
 * are set (a class of its own, as switches give CNPs), else at the QP's. */
static void send_cnp(struct transport_env *env, struct transport_qp *t)
{
	const struct dcqcn_params *p = t->cc.p;
	struct droce_hdr_fields h;
	struct rte_mbuf *m;
	uint8_t tclass = t->flow.tclass;
	uint16_t tci = t->flow.vlan_tci;

	if (transport_path_ready(env, t) != 0 || (m = transport_pkt_alloc(env, 0)) == NULL) {
		TCNT(env, t, cnp_skipped);
		return;
	}
	memset(&h, 0, sizeof(h));
	h.opcode = DROCE_OP_CNP;
	t->flow.tclass = p->cnp_dscp >= 0 ? (uint8_t)(p->cnp_dscp << 2) : tclass & ~DROCE_ECN_MASK;
	if (p->cnp_pcp >= 0)
		t->flow.vlan_tci = (uint16_t)((tci & ~RTE_VLAN_PRI_MASK) | p->cnp_pcp << 13);
	if (transport_pkt_send(env, t, m, &h) == 0) {
		TCNT(env, t, cnp_sent);
		t->cc.cnp_last = env->now;
	}
	t->flow.tclass = tclass;
	t->flow.vlan_tci = tci;
}

void transport_cc_rx_ce(struct transport_env *env, struct transport_qp *t,
			const struct droce_pkt *pkt)
{
	const struct dcqcn_params *p = t->cc.p;
	enum ibv_qp_state st = transport_state(t);

	TCNT(env, t, rx_ce);
	/* RC and UC: to the peer, from a QP that takes its frames (UD: not sent). */
	if (p == NULL || !p->np || t->type == IBV_QPT_UD || pkt->opcode == DROCE_OP_CNP ||
	    st < IBV_QPS_RTR || st > IBV_QPS_SQD || !transport_path_matches(t, pkt) ||
	    (t->cc.cnp_last != 0 && env->now - t->cc.cnp_last < p->cnp_interval)) {
		TCNT(env, t, cnp_skipped);
		return;
	}
	send_cnp(env, t);
}

enum transport_verdict transport_cc_rx_cnp(struct transport_env *env, struct transport_qp *t,
					   const struct droce_pkt *pkt)
{
	enum ibv_qp_state st = transport_state(t);
	unsigned int incs;

	if (st == IBV_QPS_RESET || st == IBV_QPS_INIT)
		return TDROP(env, t, rx_qp_state);	/* no peer yet */
	if (t->type != IBV_QPT_UD && !transport_path_matches(t, pkt))
		return TDROP(env, t, rx_bad_addr);	/* not from our peer */
	TCNT(env, t, cnp_rcvd);
	/* The timer events due by now first, counted as the pacer would have counted them. */
	incs = transport_dcqcn_advance(&t->cc, env->now);
	if (incs != 0) {
		TCNT_ADD(env, t, cc_rate_inc, incs);
		if (!t->cc.limited)
			TCNT(env, t, cc_rate_full);
	}
	if (transport_dcqcn_cnp(&t->cc, env->now)) {
		TCNT(env, t, cc_rate_cut);
		if (!t->cc.limited)
			TCNT(env, t, cc_rate_full);
	}
	return TRANSPORT_RX_ACCEPTED;
}
