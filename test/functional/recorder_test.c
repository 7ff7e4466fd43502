/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The flight recorder ([engine] recorder = 16, recorder_dir = /tmp: pair_rec_*.ini) through
 * the real engine. droce0's QP A moves WRITEs to droce1's QP B until more than 16 frames
 * passed, then B is destroyed and A posts 3 more WRITEs, which end in RETRY_EXC_ERR after
 * retry_cnt (3) retries. Proves:
 * - A's entry into ERR wrote droce-rec-droce0-qpA-PID-*.pcap and .json to recorder_dir (the
 *   JSON appears whole, the pcap before it);
 * - the JSON names the device, the QP and why, counts every entry recorded (each frame A sent
 *   or took, an event per local ACK timeout, and err) and those overwritten (all but 16), its
 *   entries are in time order, and its last 11 are the story: the 3 WRITEs sent (retry_left
 *   3), then 3 times a retry_timeout event and the oldest sent again (retry_left 2, 1, 0;
 *   window 1), retry_exceeded, and err with the QP in ERR;
 * - the pcap is libpcap's format (snaplen 128, Ethernet) with the frames among those 16
 *   entries (no events), each cut at 128 bytes with its real length; the last 6 are the lost
 *   frames: WRITE_ONLY to B's QPN at PSNs p, p+1, p+2, then p three times;
 * - B, destroyed without entering ERR, wrote nothing.
 * With "nodir" (pair_rec_nodir_inline.ini: a recorder_dir that does not exist) the recording
 * cannot be written: A still ends in RETRY_EXC_ERR and ERR as always, nothing is written, the
 * engine goes on (a new pair moves data).
 */
#include <dirent.h>
#include <inttypes.h>
#include <unistd.h>

#include "droce_wire.h"
#include "fn.h"

enum {
	RETRY_CNT = 3,
	TIMEOUT = 10,		/* 4.096 us * 2^10 = 4.2 ms */
	N_OK = 12,		/* WRITEs acknowledged before B goes */
	N_LOST = 3,
	KEPT = 16,		/* recorder = 16 */
	STORY = N_LOST + 2 * RETRY_CNT + 2,	/* the last entries: the lost WRITEs' story */
	SNAP = 128,
	BTH_OFF = 14 + 20 + 8,	/* Ethernet, IPv4, UDP */
};

/* The recording of droce0's QP @p qpn by this process in /tmp: @p path gets its path without
 * the suffix. @return whether there is one. */
static bool find_recording(uint32_t qpn, char *path, size_t len)
{
	char prefix[96];
	struct dirent *d;
	DIR *dir = opendir("/tmp");
	bool found = false;
	size_t n;

	CHECK(dir != NULL);
	snprintf(prefix, sizeof(prefix), "droce-rec-droce0-qp%u-%d-", qpn, (int)getpid());
	while (!found && (d = readdir(dir)) != NULL) {
		n = strlen(d->d_name);
		if (strncmp(d->d_name, prefix, strlen(prefix)) == 0 && n > 5 &&
		    strcmp(d->d_name + n - 5, ".json") == 0) {
			snprintf(path, len, "/tmp/%.*s", (int)(n - 5), d->d_name);
			found = true;
		}
	}
	closedir(dir);
	return found;
}

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* The pcap: @p frames records (the kept entries that are frames), the last N_LOST +
 * RETRY_CNT the lost WRITEs to @p dqpn: PSNs p, p + 1, p + 2, then p at each retry. */
static void check_pcap(const char *path, uint32_t dqpn, unsigned int frames)
{
	static const uint32_t off[] = { 0, 1, 2, 0, 0, 0 };
	uint32_t fh[6], rh[4];
	uint8_t frame[SNAP];
	unsigned int n = 0, lost;
	uint32_t psn = 0;
	FILE *f = fopen(path, "r");

	CHECK(f != NULL);
	CHECK_EQ(fread(fh, sizeof(fh), 1, f), 1);
	CHECK_EQ(fh[0], 0xa1b2c3d4u);
	CHECK_EQ(fh[4], (uint32_t)SNAP);
	CHECK_EQ(fh[5], 1u);		/* Ethernet */
	while (fread(rh, sizeof(rh), 1, f) == 1) {
		CHECK(rh[2] <= SNAP && rh[2] == RTE_MIN(rh[3], (uint32_t)SNAP));
		CHECK_EQ(fread(frame, rh[2], 1, f), 1);
		lost = n - (frames - (N_LOST + RETRY_CNT));
		if (n >= frames - (N_LOST + RETRY_CNT)) {
			CHECK_EQ(rh[3], 14u + 20 + 8 + 12 + 16 + 64 + 4);	/* WRITE_ONLY, 64 B */
			CHECK_EQ(frame[BTH_OFF], DROCE_OP_RC_RDMA_WRITE_ONLY);
			CHECK_EQ(be24(frame + BTH_OFF + 5), dqpn);
			if (lost == 0)
				psn = be24(frame + BTH_OFF + 9);
			CHECK_EQ(be24(frame + BTH_OFF + 9), (psn + off[lost]) & DROCE_PSN_MAX);
		}
		n++;
	}
	fclose(f);
	CHECK_EQ(n, frames);
}

/* The JSON: what it says of the QP, the counts, and the last STORY entries. @return how
 * many of the kept entries are frames. */
static unsigned int check_json(const char *path, uint32_t qpn, uint64_t recorded)
{
	static const struct { const char *what; unsigned int left; } story[STORY] = {
		{ "tx", 3 }, { "tx", 3 }, { "tx", 3 },
		{ "retry_timeout", 2 }, { "tx", 2 }, { "retry_timeout", 1 }, { "tx", 1 },
		{ "retry_timeout", 0 }, { "tx", 0 }, { "retry_exceeded", 0 }, { "err", 0 },
	};
	char buf[1 << 16], key[64], what[KEPT][24], state[KEPT][8];
	unsigned int left[KEPT], n = 0, i, frames = 0;
	uint64_t us, prev_us = 0;
	const char *p;
	size_t len;
	FILE *f = fopen(path, "r");

	CHECK(f != NULL);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	printf("%s", buf);
	snprintf(key, sizeof(key), "\"qpn\": %u,", qpn);
	CHECK(strstr(buf, "{\"device\": \"droce0\"") == buf);
	CHECK(strstr(buf, key) != NULL);
	CHECK(strstr(buf, "\"why\": \"entered ERR\", \"state\": \"ERR\"") != NULL);
	snprintf(key, sizeof(key), "\"recorded\": %" PRIu64 ", \"overwritten\": %" PRIu64,
		 recorded, recorded - KEPT);
	CHECK(strstr(buf, key) != NULL);
	for (p = buf; (p = strstr(p, "\n  {\"time_us\": ")) != NULL; p++) {
		const char *d = strstr(p, "\"dir\": \""), *e = strstr(p, "\"event\": \""),
			   *nl = strchr(p + 1, '\n');

		CHECK(n < KEPT && nl != NULL);
		CHECK(sscanf(p, "\n  {\"time_us\": %" SCNu64, &us) == 1 && us >= prev_us);
		prev_us = us;	/* in order, frames and events alike */
		if (d != NULL && d < nl) {
			CHECK(sscanf(d, "\"dir\": \"%2[rtx]\"", what[n]) == 1);
			frames++;
		} else
			CHECK(e != NULL && e < nl &&
			      sscanf(e, "\"event\": \"%23[a-z_]\"", what[n]) == 1);
		CHECK(sscanf(strstr(p, "\"state\": "), "\"state\": \"%7[A-Z]\"", state[n]) == 1);
		CHECK(sscanf(strstr(p, "\"retry_left\": "), "\"retry_left\": %u", &left[n]) == 1);
		n++;
	}
	CHECK_EQ(n, (unsigned int)KEPT);
	for (i = 0; i < STORY; i++) {
		unsigned int k = KEPT - STORY + i;

		CHECK(strcmp(what[k], story[i].what) == 0);
		CHECK_EQ(left[k], story[i].left);
		CHECK(strcmp(state[k], i == STORY - 1 ? "ERR" : "RTS") == 0);
	}
	return frames;
}

static void remove_recording(const char *base)
{
	char file[PATH_MAX + 8];

	snprintf(file, sizeof(file), "%s.pcap", base);
	CHECK_EQ(unlink(file), 0);
	snprintf(file, sizeof(file), "%s.json", base);
	CHECK_EQ(unlink(file), 0);
}

static void recorded_retry_exc(bool nodir)
{
	struct fn_attr a = fn_attr_default();
	struct droce_counters c;
	struct fn_ep ep[2];
	struct fn_mem m[2];
	struct ibv_wc wc;
	char base[PATH_MAX], file[PATH_MAX + 8];
	uint32_t a_qpn, b_qpn;
	unsigned int frames;
	uint64_t i, end;

	a.timeout = TIMEOUT;
	a.retry_cnt = RETRY_CNT;
	fn_pair(ep, &a);
	for (i = 0; i < 2; i++)
		fn_mem_reg(&m[i], ep[i].pd, 4096, FN_ACCESS_ALL, 0);
	for (i = 0; i < N_OK; i++) {
		fn_post_write(&ep[0], &m[0], 64, i, (uintptr_t)m[1].buf, m[1].mr->rkey);
		fn_wait_ok(ep[0].scq, i);
	}
	c = fn_qp_counters(ep[0].qp);
	CHECK(c.tx_packets + c.rx_packets > KEPT);	/* the ring wrapped */
	a_qpn = ep[0].qp->qp_num;
	b_qpn = ep[1].qp->qp_num;
	CHECK_EQ(droce_destroy_qp(ep[1].qp), 0);
	ep[1].qp = NULL;
	for (i = 1; i <= N_LOST; i++)
		fn_post_write(&ep[0], &m[0], 64, 100 + i, (uintptr_t)m[1].buf, m[1].mr->rkey);
	wc = fn_wait(ep[0].scq);
	CHECK_EQ(wc.wr_id, 101);
	CHECK_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
	for (i = 2; i <= N_LOST; i++)
		CHECK_EQ(fn_wait(ep[0].scq).status, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(fn_state(ep[0].qp), IBV_QPS_ERR);
	c = fn_qp_counters(ep[0].qp);
	CHECK_EQ(c.retry_exceeded, 1);
	if (nodir) {
		fn_run(0.2);
		CHECK(!find_recording(a_qpn, base, sizeof(base)));
	} else {
		/* The owner writes it after the completion: wait for it (the JSON comes last). */
		end = pair_deadline(FN_TIMEOUT_S);
		while (!find_recording(ep[0].qp->qp_num, base, sizeof(base))) {
			CHECK(rte_get_tsc_cycles() < end);
			pair_step();
		}
		printf("recording %s\n", base);
		snprintf(file, sizeof(file), "%s.json", base);
		/* Events: one per timeout (a retry or, the last, retry_exceeded) and err. Counted,
		 * not assumed: a WRITE of the first 12 resent after a scheduling stall longer
		 * than the timeout is a retry too. */
		frames = check_json(file, a_qpn, c.tx_packets + c.rx_packets + c.rto_expired + 1);
		snprintf(file, sizeof(file), "%s.pcap", base);
		check_pcap(file, b_qpn, frames);
		if (getenv("RECORDER_TEST_KEEP") == NULL)
			remove_recording(base);
	}
	for (i = 0; i < 2; i++)
		fn_mem_free(&m[i]);
	fn_pair_destroy(ep);
	/* B went without ERR, A's destruction is no ERR either: nothing more. */
	CHECK(!find_recording(b_qpn, base, sizeof(base)));
	CHECK(!find_recording(a_qpn, base, sizeof(base)));
}

/* The engine goes on: a new pair moves a WRITE. */
static void healthy(void)
{
	struct fn_attr a = fn_attr_default();
	struct fn_ep ep[2];
	struct fn_mem m[2];
	int i;

	fn_pair(ep, &a);
	for (i = 0; i < 2; i++)
		fn_mem_reg(&m[i], ep[i].pd, 4096, FN_ACCESS_ALL, 0);
	fn_post_write(&ep[0], &m[0], 64, 1, (uintptr_t)m[1].buf, m[1].mr->rkey);
	fn_wait_ok(ep[0].scq, 1);
	for (i = 0; i < 2; i++)
		fn_mem_free(&m[i]);
	fn_pair_destroy(ep);
}

int main(int argc, char **argv)
{
	bool nodir = argc > 2 && strcmp(argv[2], "nodir") == 0;

	fn_open(argc, argv);
	recorded_retry_exc(nodir);
	healthy();
	fn_close();
	printf("flight recorder (%s%s): ok\n", argv[1], nodir ? ", no directory" : "");
	return 0;
}
