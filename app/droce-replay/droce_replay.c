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
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include "replay_dev.h"

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

/* --requester -r ADDR names droce's side, the requester: the responder is the destination
 * of its first request, as text in @p buf. NULL when ADDR sends no request. */
static const char *responder_of(const struct replay_capture *c, const char *addr, char *buf,
				size_t len)
{
	uint8_t gid[16] = { 0 };
	unsigned int i;

	if (inet_pton(AF_INET, addr, gid + 12) == 1)
		gid[10] = gid[11] = 0xff;
	else if (inet_pton(AF_INET6, addr, gid) != 1)
		return NULL;
	for (i = 0; i < c->n; i++) {
		struct droce_pkt p;
		static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

		if (droce_parse(c->f[i].data, c->f[i].len, 0, &p) != DROCE_PARSE_OK ||
		    !(p.mask & DROCE_M_REQ) || memcmp(p.sgid, gid, 16) != 0)
			continue;
		if (memcmp(p.dgid, v4, 12) == 0)
			return inet_ntop(AF_INET, p.dgid + 12, buf, (socklen_t)len);
		return inet_ntop(AF_INET6, p.dgid, buf, (socklen_t)len);
	}
	return NULL;
}

static int get_scenario(const struct replay_opts *o, struct replay_capture *c,
			struct replay_scenario *sc)
{
	char err[REPLAY_ERR_LEN] = "", peer[64];
	const char *responder = o->responder;

	if (o->requester && responder != NULL &&
	    (responder = responder_of(c, o->responder, peer, sizeof(peer))) == NULL) {
		fprintf(stderr, "droce-replay: %s: no RoCE v2 request comes from %s\n", c->path,
			o->responder);
		return REPLAY_EXIT_INPUT;
	}

	if (o->scenario != NULL) {
		if (replay_scenario_load(o->scenario, sc, err, sizeof(err)) != 0) {
			fprintf(stderr, "droce-replay: %s\n", err);	/* it names the file */
			return REPLAY_EXIT_INPUT;
		}
		replay_capture_classify(c, sc);
	} else if (replay_derive(c, sc, responder, err, sizeof(err)) != 0) {
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
	if (o->wire != NULL)	/* its receive completions are its own */
		printf("the device under test sent %u frames\n", r->n_out);
	else
		printf("droce sent %u frames; receive completions: %" PRIu64 " ok, %" PRIu64
		       " error\n", r->n_out, r->recv_ok, r->recv_err);
	if (o->loop > 1)
		printf("looped: %u passes of %u frames\n", o->loop, c->n / o->loop);
	printf("replayed in %.3f ms (%s)\n", r->play_us / 1000.0,
	       o->pace ? "paced" : o->step ? "step" : o->rate_fps > 0 || o->rate_bps > 0 ? "rate" :
	       "fast");
}

/* droce in the requester's place: its work from the capture, the scenario seen from it. */
static int run_requester(const struct replay_opts *o, const struct replay_capture *c,
			 const struct replay_scenario *sc)
{
	static struct replay_scenario rsc;	/* large: not on the stack */
	struct replay_result r = { 0 };
	struct replay_pcap_out *pout = NULL;
	char err[REPLAY_ERR_LEN] = "";
	struct replay_work w;
	struct replay_dev *d;
	int rc = REPLAY_EXIT_PASS;

	if (replay_req_derive(c, sc, &w, err, sizeof(err)) != 0 ||
	    replay_req_scenario(sc, &w, &rsc, err, sizeof(err)) != 0) {
		fprintf(stderr, "droce-replay: %s: cannot play the requester: %s\n", c->path, err);
		replay_work_free(&w);
		return REPLAY_EXIT_INPUT;
	}
	replay_req_ud_note(c, sc);
	if (o->output != NULL && (pout = replay_pcap_open(o->output, err, sizeof(err))) == NULL) {
		fprintf(stderr, "droce-replay: %s\n", err);
		replay_work_free(&w);
		return REPLAY_EXIT_INPUT;
	}
	d = replay_dev_open(&rsc, err, sizeof(err));
	if (d == NULL) {
		fprintf(stderr, "droce-replay: droce set-up: %s\n", err);
		replay_pcap_close(pout);
		replay_work_free(&w);
		return REPLAY_EXIT_SETUP;
	}
	if (replay_req_play(d, c, &w, pout, &r) != 0) {
		fprintf(stderr, "droce-replay: the replay failed (engine, mbufs, memory or a post)\n");
		rc = REPLAY_EXIT_SETUP;
	}
	replay_pcap_close(pout);
	printf("capture %s: %u frames: %" PRIu64 " requests of the capture's requester, %" PRIu64
	       " responses injected, %" PRIu64 " RoCE v2 of the other direction, %" PRIu64
	       " not RoCE v2 (ignored)\n", o->capture, c->n, r.kind[RF_REQUEST], r.injected,
	       r.kind[RF_OTHER_DIR] + r.kind[RF_MALFORMED], r.kind[RF_NOT_ROCE]);
	printf("droce posted %u WRs and sent %u frames; send completions: %u\n", w.n, r.n_out,
	       r.n_swc);
	printf("replayed in %.3f ms (requester)\n", r.play_us / 1000.0);
	if (!o->quiet)
		replay_dev_print_counters(d, stdout);
	if (rc == REPLAY_EXIT_PASS && o->compare &&
	    replay_req_compare(c, sc, &w, &r, replay_req_local(d), stdout) != 0)
		rc = REPLAY_EXIT_DIFF;
	replay_result_free(&r);
	replay_dev_close(d);
	replay_work_free(&w);
	rte_eal_cleanup();
	return rc;
}

/* --serve: the responder on a real port until SIGINT/SIGTERM, its names in the map. */
static int run_serve(const struct replay_opts *o, struct replay_scenario *sc)
{
	char err[REPLAY_ERR_LEN] = "";
	struct replay_dev *d;
	unsigned int i;
	int rc = REPLAY_EXIT_PASS;

	for (i = 0; i < sc->n_qp; i++)	/* the player's pace is not known here */
		if (sc->qp[i].recv_follow) {
			sc->qp[i].recv_follow = false;
			fprintf(stderr, "droce-replay: note: [qp %#x]: recv_post = capture is not "
				"kept by --serve: its receive WRs are all posted at the start\n",
				sc->qp[i].cap_qpn);
		}
	d = replay_dev_serve(sc, o->serve, err, sizeof(err));
	if (d == NULL) {
		fprintf(stderr, "droce-replay: droce set-up: %s\n", err);
		return REPLAY_EXIT_SETUP;
	}
	replay_serve_signals();
	if (replay_map_write(d, o->map, err, sizeof(err)) != 0) {
		fprintf(stderr, "droce-replay: %s\n", err);
		rc = REPLAY_EXIT_SETUP;
	} else {
		printf("droce-replay --serve: %u QPs, %u MRs on %s; map %s\n", sc->n_qp, sc->n_mr,
		       o->serve, o->map);
		fflush(stdout);
		if (replay_serve(d, stdout) != 0)
			rc = REPLAY_EXIT_SETUP;
	}
	if (!o->quiet)
		replay_dev_print_counters(d, stdout);
	fflush(stdout);
	/* No rte_eal_cleanup(), as droce-run: with a net_memif port it unmaps memory DPDK's
	 * interrupt thread may still be reading (a SIGSEGV in rte_intr_fd_get() at exit). */
	replay_dev_close(d);
	return rc;
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
	d = o->wire != NULL ? replay_dev_wire(sc, o->wire, err, sizeof(err)) :
			      replay_dev_open(sc, err, sizeof(err));
	if (d == NULL) {
		fprintf(stderr, "droce-replay: %s set-up: %s\n", o->wire ? "port" : "droce", err);
		replay_pcap_close(pout);
		return REPLAY_EXIT_SETUP;
	}
	if (o->wire != NULL && replay_map_read(d, o->map, err, sizeof(err)) != 0) {
		fprintf(stderr, "droce-replay: %s\n", err);	/* before anything is sent */
		replay_pcap_close(pout);
		replay_dev_close(d);
		rte_eal_cleanup();
		return REPLAY_EXIT_INPUT;
	}
	if (replay_play(d, c, o, pout, &r) != 0) {
		fprintf(stderr, "droce-replay: the replay failed (engine, mbufs or memory)\n");
		rc = REPLAY_EXIT_SETUP;
	}
	replay_pcap_close(pout);
	summary(o, c, &r);
	if (!o->quiet && o->wire == NULL)
		replay_dev_print_counters(d, stdout);
	if (rc == REPLAY_EXIT_PASS && o->compare &&
	    replay_compare(c, &r, o->wire != NULL, stdout) != 0)
		rc = REPLAY_EXIT_DIFF;
	replay_result_free(&r);
	replay_dev_close(d);
	if (o->wire == NULL)	/* a real port: as run_serve() */
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
	if (rc < 0 && o.loop > 1 &&
	    (o.serve != NULL ? replay_loop_scenario(&sc, o.loop, err, sizeof(err)) :
	     replay_loop(&c, &sc, o.loop, err, sizeof(err))) != 0) {
		fprintf(stderr, "droce-replay: %s: --loop %u: %s\n", o.capture, o.loop, err);
		rc = REPLAY_EXIT_INPUT;
	}
	if (rc < 0)
		rc = o.serve != NULL ? run_serve(&o, &sc) : o.requester ?
		     run_requester(&o, &c, &sc) : run(&o, &c, &sc);
	replay_scenario_free(&sc);
	replay_capture_free(&c);
	return rc;
}
