/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-replay: play a capture's requests into a droce device that stands where the capture's
 * responder stood, record every frame droce sends, print droce's counters and, with
 * --compare, check droce's responses against the capture's own (doc/droce-replay.md).
 *
 * Exit status: 0 replayed (and, with --compare, every response matched); 1 some response
 * differs; 2 usage error, bad pcap, bad scenario, a request to a QP the scenario lacks;
 * 3 EAL, the port or a droce call failed.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include "replay.h"

/* The R_Keys a request names (RETH, AtomicETH, IETH): @p k[], their number. */
static unsigned int rkeys_of(const struct droce_pkt *p, uint32_t k[2])
{
	const uint8_t *bth = (const uint8_t *)droce_pkt_bth(p);
	const struct droce_opcode_info *oi = &droce_opcode_table[p->opcode];
	unsigned int n = 0;
	uint32_t v;

	if (p->mask & DROCE_M_RETH) {
		memcpy(&v, bth + oi->offset[DROCE_HDR_RETH] + 8, 4);
		k[n++] = rte_be_to_cpu_32(v);
	}
	if (p->mask & DROCE_M_ATMETH) {
		memcpy(&v, bth + oi->offset[DROCE_HDR_ATMETH] + 8, 4);
		k[n++] = rte_be_to_cpu_32(v);
	}
	if ((p->mask & DROCE_M_IETH) && n < 2) {
		memcpy(&v, bth + oi->offset[DROCE_HDR_IETH], 4);
		k[n++] = rte_be_to_cpu_32(v);
	}
	return n;
}

/* Each R_Key the scenario does not map is said once: droce will see it as captured. */
static void note_rkeys(const struct replay_capture *c, const struct replay_frame *f,
		       const struct replay_scenario *sc, unsigned int i)
{
	uint32_t k[2];
	unsigned int n = rkeys_of(&f->pkt, k), j, e;

	for (j = 0; j < n; j++) {
		if (replay_scenario_mr(sc, k[j]) != NULL)
			continue;
		for (e = 0; e < i; e++) {	/* said already? */
			uint32_t ke[2];
			unsigned int ne = c->f[e].kind == RF_REQUEST ? rkeys_of(&c->f[e].pkt, ke) : 0;

			if ((ne > 0 && ke[0] == k[j]) || (ne > 1 && ke[1] == k[j]))
				break;
		}
		if (e == i)
			fprintf(stderr, "droce-replay: note: frame %u: R_Key %#x is not in the "
				"scenario: left as captured\n", i + 1, k[j]);
	}
}

/* Some frame goes to droce; every request to a QP the scenario defines; each fits a jumbo. */
static int check_names(const struct replay_capture *c, struct replay_scenario *sc)
{
	unsigned int i, n = 0;

	for (i = 0; i < c->n; i++)
		n += c->f[i].kind == RF_REQUEST || c->f[i].kind == RF_MALFORMED;
	if (n == 0) {
		char addr[64];

		fprintf(stderr, "droce-replay: %s: no RoCE v2 request goes to %s (the scenario's "
			"[device] %s)\n", c->path, replay_addr_str(sc, sc->gid, addr, sizeof(addr)),
			sc->ipv6 ? "ipv6" : "ipv4");
		return REPLAY_EXIT_INPUT;
	}
	for (i = 0; i < c->n; i++) {
		const struct replay_frame *f = &c->f[i];
		uint32_t qpn = droce_bth_qpn(droce_pkt_bth(&f->pkt));

		if ((f->kind == RF_REQUEST || f->kind == RF_MALFORMED) &&
		    f->len > REPLAY_MAX_FRAME) {
			fprintf(stderr, "droce-replay: %s: frame %u: %u bytes, more than a %u-byte "
				"jumbo frame\n", c->path, i + 1, f->len, REPLAY_MAX_FRAME);
			return REPLAY_EXIT_INPUT;
		}
		if (f->kind != RF_REQUEST)
			continue;
		if (replay_scenario_qp(sc, qpn) == NULL) {
			fprintf(stderr, "droce-replay: %s: frame %u: request to QP %#x, which the "
				"scenario does not define (add a [qp %#x] section)\n", c->path,
				i + 1, qpn, qpn);
			return REPLAY_EXIT_INPUT;
		}
		note_rkeys(c, f, sc, i);
	}
	return -1;
}

static int get_scenario(const struct replay_opts *o, struct replay_capture *c,
			struct replay_scenario *sc)
{
	char err[REPLAY_ERR_LEN] = "";

	if (o->scenario != NULL) {
		if (replay_scenario_load(o->scenario, sc, err, sizeof(err)) != 0) {
			fprintf(stderr, "droce-replay: %s\n", err);	/* it names the file */
			return REPLAY_EXIT_INPUT;
		}
		replay_capture_classify(c, sc);
	} else if (replay_derive(c, sc, o->responder, err, sizeof(err)) != 0) {
		fprintf(stderr, "droce-replay: %s: cannot derive the responder: %s\n", c->path,
			err);
		return REPLAY_EXIT_INPUT;
	}
	return check_names(c, sc);
}

static void summary(const struct replay_opts *o, const struct replay_capture *c,
		    const struct replay_result *r)
{
	printf("capture %s: %u frames: %" PRIu64 " requests injected, %" PRIu64 " malformed "
	       "injected as they are, %" PRIu64 " responses of the capture's responder, %" PRIu64
	       " RoCE v2 of the other direction (not injected), %" PRIu64 " not RoCE v2 "
	       "(ignored)\n", o->capture, c->n, r->kind[RF_REQUEST], r->kind[RF_MALFORMED],
	       r->kind[RF_RESPONSE], r->kind[RF_OTHER_DIR], r->kind[RF_NOT_ROCE]);
	printf("droce sent %u frames; receive completions: %" PRIu64 " ok, %" PRIu64 " error\n",
	       r->n_out, r->recv_ok, r->recv_err);
	printf("replayed in %.3f ms (%s)\n", r->play_us / 1000.0,
	       o->pace ? "paced" : o->step ? "step" : "fast");
}

/* Set up droce, play, report. */
static int run(const struct replay_opts *o, const struct replay_capture *c,
	       const struct replay_scenario *sc)
{
	struct replay_result r = { 0 };
	struct replay_pcap_out *pout = NULL;
	char err[REPLAY_ERR_LEN] = "";
	struct replay_dev *d;
	int rc = REPLAY_EXIT_PASS;

	if (o->output != NULL && (pout = replay_pcap_open(o->output, err, sizeof(err))) == NULL) {
		fprintf(stderr, "droce-replay: %s\n", err);
		return REPLAY_EXIT_INPUT;
	}
	d = replay_dev_open(sc, err, sizeof(err));
	if (d == NULL) {
		fprintf(stderr, "droce-replay: droce set-up: %s\n", err);
		replay_pcap_close(pout);
		return REPLAY_EXIT_SETUP;
	}
	if (replay_play(d, c, o, pout, &r) != 0) {
		fprintf(stderr, "droce-replay: the replay failed (engine, mbufs or memory)\n");
		rc = REPLAY_EXIT_SETUP;
	}
	replay_pcap_close(pout);
	summary(o, c, &r);
	if (!o->quiet)
		replay_dev_print_counters(d, stdout);
	if (rc == REPLAY_EXIT_PASS && o->compare && replay_compare(c, &r, stdout) != 0)
		rc = REPLAY_EXIT_DIFF;
	replay_result_free(&r);
	replay_dev_close(d);
	rte_eal_cleanup();
	return rc;
}

int main(int argc, char **argv)
{
	struct replay_opts o = { 0 };
	static struct replay_scenario sc;	/* large: not on the stack */
	struct replay_capture c;
	char err[REPLAY_ERR_LEN] = "";
	int rc = replay_parse_args(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (replay_capture_load(o.capture, &c, err, sizeof(err)) != 0) {
		fprintf(stderr, "droce-replay: %s: %s\n", o.capture, err);
		return REPLAY_EXIT_INPUT;
	}
	rc = get_scenario(&o, &c, &sc);
	if (rc < 0 && o.print_scenario) {
		replay_scenario_print(stdout, &sc, o.scenario != NULL ? NULL : o.capture);
		rc = REPLAY_EXIT_PASS;
	}
	if (rc < 0)
		rc = run(&o, &c, &sc);
	replay_scenario_free(&sc);
	replay_capture_free(&c);
	return rc;
}
