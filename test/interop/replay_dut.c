/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 *
 * replay_dut: a verbs device under test set up by a droce-replay scenario, for
 * `droce-replay --wire` against a stack that is not droce (Linux Soft-RoCE in a rig guest).
 * An ordinary libibverbs program: it knows nothing of droce.
 *
 *   replay_dut [-d DEVICE] [-g GID_INDEX] [-t SECS] SCENARIO.ini
 *
 * SCENARIO.ini is what `droce-replay --print-scenario CAPTURE` prints (or any scenario
 * droce-replay -s takes, doc/droce-replay.md): for each [qp] an RC or UC QP connected to the
 * scenario's peer (its peer_qpn, the peer's address as the destination GID, rq_psn, sq_psn,
 * max_dest_rd_atomic, min_rnr_timer, access), recv_wrs receive WRs of recv_size bytes posted
 * at once (recv_post = capture is taken as start: the player is another process); for each
 * [mr] a buffer of length bytes holding fill and the data lines, registered with its access.
 * Then it prints the map droce-replay --wire reads ("droce-replay map 1", "qp CAPTURED LIVE",
 * "mr CAPTURED_RKEY LIVE_RKEY LIVE_VA") and a line "ready", polls its CQ until SIGINT,
 * SIGTERM or -t seconds (default 300), and prints each QP's state and its receive
 * completions. Exit 0 when every QP is still in RTS and no receive completed in error, 1 when
 * not, 2 on a bad scenario or argument, 3 when a verbs call fails.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MAX_QP 64
#define MAX_MR 64
#define MAX_MR_LEN (256u << 20)

struct dut_qp {
	uint32_t cap_qpn, peer_qpn, rq_psn, sq_psn, recv_wrs, recv_size;
	unsigned int max_dest_rd, min_rnr, access;
	enum ibv_qp_type type;
	struct ibv_qp *qp;
	struct ibv_mr *rmr;	/* the receive buffers' MR */
	uint8_t *rbuf;
};

struct dut_mr {
	uint32_t cap_rkey, length;
	unsigned int access;
	int fill;
	uint8_t *buf;
	bool *set;		/* bytes the data lines gave (the fill goes around them) */
	struct ibv_mr *mr;
};

struct dut {
	union ibv_gid peer;
	bool have_peer;
	unsigned int mtu;
	struct dut_qp qp[MAX_QP];
	struct dut_mr mr[MAX_MR];
	unsigned int n_qp, n_mr;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int bad(const char *path, unsigned int line, const char *what, const char *text)
{
	fprintf(stderr, "replay_dut: %s:%u: %s: %s\n", path, line, what, text);
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int number(const char *v, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 0);
	return errno != 0 || end == v || *end != '\0' || *out > max ? -1 : 0;
}

/* "remote_write remote_read remote_atomic" (any of them, spaces between). */
static int access_words(char *v, unsigned int *out)
{
	char *w, *save = NULL;

	*out = 0;
	for (w = strtok_r(v, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save)) {
		if (strcmp(w, "remote_write") == 0)
			*out |= IBV_ACCESS_REMOTE_WRITE;
		else if (strcmp(w, "remote_read") == 0)
			*out |= IBV_ACCESS_REMOTE_READ;
		else if (strcmp(w, "remote_atomic") == 0)
			*out |= IBV_ACCESS_REMOTE_ATOMIC;
		else if (strcmp(w, "none") != 0)
			return -1;
	}
	return 0;
}

/* "OFFSET:HEX" into @m (after its length is known). */
static int mr_data(struct dut_mr *m, const char *v)
{
	char *end;
	unsigned long off = strtoul(v, &end, 10);
	size_t n, i;

	if (end == v || *end != ':' || m->buf == NULL)
		return -1;
	end++;
	n = strlen(end);
	if (n % 2 != 0 || off > m->length || n / 2 > m->length - off)
		return -1;
	for (i = 0; i < n / 2; i++) {
		unsigned int b;

		if (sscanf(end + 2 * i, "%2x", &b) != 1)
			return -1;
		m->buf[off + i] = (uint8_t)b;
		m->set[off + i] = true;
	}
	return 0;
}

static int qp_key(struct dut_qp *q, const char *k, char *v)
{
	uint64_t n;

	if (strcmp(k, "type") == 0) {
		if (strcmp(v, "rc") == 0)
			q->type = IBV_QPT_RC;
		else if (strcmp(v, "uc") == 0)
			q->type = IBV_QPT_UC;
		else
			return -1;
		return 0;
	}
	if (strcmp(k, "access") == 0)
		return access_words(v, &q->access);
	if (strcmp(k, "recv_post") == 0 || strcmp(k, "qkey") == 0)
		return 0;	/* start and capture alike; qkey: UD only */
	if (number(v, UINT32_MAX, &n) != 0)
		return -1;
	if (strcmp(k, "peer_qpn") == 0 && n <= 0xffffff)
		q->peer_qpn = (uint32_t)n;
	else if (strcmp(k, "rq_psn") == 0 && n <= 0xffffff)
		q->rq_psn = (uint32_t)n;
	else if (strcmp(k, "sq_psn") == 0 && n <= 0xffffff)
		q->sq_psn = (uint32_t)n;
	else if (strcmp(k, "recv_wrs") == 0 && n <= 4096)
		q->recv_wrs = (uint32_t)n;
	else if (strcmp(k, "recv_size") == 0 && n <= (1u << 20))
		q->recv_size = (uint32_t)n;
	else if (strcmp(k, "max_dest_rd_atomic") == 0 && n <= 255)
		q->max_dest_rd = (unsigned int)n;
	else if (strcmp(k, "min_rnr_timer") == 0 && n <= 31)
		q->min_rnr = (unsigned int)n;
	else
		return -1;
	return 0;
}

static int mr_key(struct dut_mr *m, const char *k, char *v)
{
	uint64_t n;

	if (strcmp(k, "access") == 0)
		return access_words(v, &m->access);
	if (strcmp(k, "data") == 0)
		return mr_data(m, v);
	if (number(v, UINT64_MAX, &n) != 0)
		return -1;
	if (strcmp(k, "va") == 0)
		return 0;	/* the captured address: the map carries the live one */
	if (strcmp(k, "length") == 0 && n > 0 && n <= MAX_MR_LEN && m->buf == NULL) {
		m->length = (uint32_t)n;
		m->buf = aligned_alloc(4096, (n + 4095) & ~(uint64_t)4095);
		m->set = calloc(n, sizeof(bool));
		return m->buf == NULL || m->set == NULL ? -1 : 0;
	}
	if (strcmp(k, "fill") == 0 && n <= 255) {
		m->fill = (int)n;
		return 0;
	}
	return -1;
}

static int device_key(struct dut *d, const char *k, const char *v)
{
	uint64_t n;

	if (strcmp(k, "peer_ipv4") == 0) {
		memset(&d->peer, 0, sizeof(d->peer));
		d->peer.raw[10] = d->peer.raw[11] = 0xff;
		d->have_peer = inet_pton(AF_INET, v, d->peer.raw + 12) == 1;
		return d->have_peer ? 0 : -1;
	}
	if (strcmp(k, "peer_ipv6") == 0) {
		d->have_peer = inet_pton(AF_INET6, v, d->peer.raw) == 1;
		return d->have_peer ? 0 : -1;
	}
	if (strcmp(k, "mtu") == 0)
		return number(v, 65535, &n) != 0 ? -1 : (d->mtu = (unsigned int)n, 0);
	return 0;	/* this device's own addresses are the guest's */
}

/* The scenario INI: [device], [qp QPN], [mr RKEY]; "key = value"; ";" or "#" comments. */
static int load(struct dut *d, const char *path)
{
	enum { NONE, DEVICE, QP, MR } sec = NONE;
	char line[8192];
	unsigned int no = 0, i;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		fprintf(stderr, "replay_dut: %s: %s\n", path, strerror(errno));
		return -1;
	}
	d->mtu = 1500;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = trim(line), *eq;
		unsigned int id;
		char br;
		int rc = 0;

		no++;
		if (*s == '\0' || *s == ';' || *s == '#')
			continue;
		if (strlen(line) == sizeof(line) - 1) {
			fclose(f);
			return bad(path, no, "line too long", "");
		}
		if (strcmp(s, "[device]") == 0) {
			sec = DEVICE;
		} else if (sscanf(s, "[qp %x%c", &id, &br) == 2 && br == ']' &&
			   d->n_qp < MAX_QP) {
			sec = QP;
			d->qp[d->n_qp++] = (struct dut_qp){ .cap_qpn = id, .type = IBV_QPT_RC,
				.max_dest_rd = 16, .min_rnr = 12, .recv_size = 64,
				.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
					  IBV_ACCESS_REMOTE_ATOMIC };
		} else if (sscanf(s, "[mr %x%c", &id, &br) == 2 && br == ']' &&
			   d->n_mr < MAX_MR) {
			sec = MR;
			d->mr[d->n_mr++] = (struct dut_mr){ .cap_rkey = id };
		} else if (*s == '[') {
			fclose(f);
			return bad(path, no, "unknown section or too many", s);
		} else if ((eq = strchr(s, '=')) != NULL && sec != NONE) {
			*eq = '\0';
			char *k = trim(s), *v = trim(eq + 1);

			rc = sec == DEVICE ? device_key(d, k, v) :
			     sec == QP ? qp_key(&d->qp[d->n_qp - 1], k, v) :
			     mr_key(&d->mr[d->n_mr - 1], k, v);
			if (rc != 0) {
				fclose(f);
				return bad(path, no, "bad key or value (data before length?)", k);
			}
		} else {
			fclose(f);
			return bad(path, no, "not a section or key = value", s);
		}
	}
	fclose(f);
	if (!d->have_peer)
		return bad(path, no, "[device] has no peer_ipv4 or peer_ipv6", "");
	for (i = 0; i < d->n_mr; i++) {
		struct dut_mr *m = &d->mr[i];
		uint32_t k;

		if (m->buf == NULL)
			return bad(path, no, "an [mr] has no length", "");
		for (k = 0; k < m->length; k++)
			if (!m->set[k])
				m->buf[k] = (uint8_t)m->fill;
	}
	return 0;
}

/* The largest IB MTU whose RoCE v2 frame fits an Ethernet MTU of @mtu (IPv4/UDP/BTH and
 * the largest extension headers and ICRC around it, as rxe reckons). */
static enum ibv_mtu ib_mtu(unsigned int mtu)
{
	static const struct { unsigned int bytes; enum ibv_mtu m; } t[] = {
		{ 4096, IBV_MTU_4096 }, { 2048, IBV_MTU_2048 }, { 1024, IBV_MTU_1024 },
		{ 512, IBV_MTU_512 } };
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (mtu >= t[i].bytes + 100)
			return t[i].m;
	return IBV_MTU_256;
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "replay_dut: %s: %s\n", what, strerror(rc != 0 ? rc : errno));
	return -1;
}

static int connect_qp(struct dut *d, struct dut_qp *q, int gid_index)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = q->access;
	rc = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			   IBV_QP_ACCESS_FLAGS);
	if (rc != 0)
		return fail("modify to INIT", rc);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = ib_mtu(d->mtu);
	a.dest_qp_num = q->peer_qpn;
	a.rq_psn = q->rq_psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = d->peer;
	a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = (uint8_t)q->max_dest_rd;
	a.min_rnr_timer = (uint8_t)q->min_rnr;
	rc = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			   (q->type == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER : 0));
	if (rc != 0)
		return fail("modify to RTR", rc);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->sq_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	rc = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			   (q->type == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
	return rc != 0 ? fail("modify to RTS", rc) : 0;
}

static int post_recvs(struct ibv_pd *pd, struct dut_qp *q, unsigned int qi)
{
	size_t size = (size_t)q->recv_wrs * q->recv_size;
	uint32_t i;

	if (q->recv_wrs == 0)
		return 0;
	q->rbuf = calloc(1, size > 0 ? size : 1);
	q->rmr = q->rbuf != NULL ? ibv_reg_mr(pd, q->rbuf, size > 0 ? size : 1,
					      IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (q->rmr == NULL)
		return fail("receive buffers", 0);
	for (i = 0; i < q->recv_wrs; i++) {
		struct ibv_sge sge = { (uintptr_t)(q->rbuf + (size_t)i * q->recv_size),
				       q->recv_size, q->rmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = ((uint64_t)qi << 32) | i, .sg_list = &sge,
					  .num_sge = 1 }, *badwr;
		int rc = ibv_post_recv(q->qp, &wr, &badwr);

		if (rc != 0)
			return fail("ibv_post_recv", rc);
	}
	return 0;
}

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return (unsigned int)s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static int usage(void)
{
	fprintf(stderr, "usage: replay_dut [-d DEVICE] [-g GID_INDEX] [-t SECS] SCENARIO.ini\n");
	return 2;
}

int main(int argc, char **argv)
{
	static struct dut d;
	const char *devname = NULL;
	int gid_index = 1, secs = 300, c, rc = 0;
	unsigned int i, num, not_rts = 0;
	uint64_t ok = 0, errs = 0;
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	time_t end;

	while ((c = getopt(argc, argv, "d:g:t:")) != -1) {
		if (c == 'd')
			devname = optarg;
		else if (c == 'g')
			gid_index = atoi(optarg);
		else if (c == 't')
			secs = atoi(optarg);
		else
			return usage();
	}
	if (optind != argc - 1 || gid_index < 0 || gid_index > 255 || secs <= 0)
		return usage();
	if (load(&d, argv[optind]) != 0)
		return 2;
	list = ibv_get_device_list((int *)&num);
	for (i = 0; list != NULL && i < num && ctx == NULL; i++)
		if (devname == NULL || strcmp(ibv_get_device_name(list[i]), devname) == 0)
			ctx = ibv_open_device(list[i]);
	if (ctx == NULL) {
		fprintf(stderr, "replay_dut: no device %s\n", devname ? devname : "at all");
		return 3;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd != NULL ? ibv_create_cq(ctx, 4096, NULL, NULL, 0) : NULL;
	if (cq == NULL)
		return fail("PD or CQ", 0), 3;
	for (i = 0; i < d.n_mr; i++) {
		struct dut_mr *m = &d.mr[i];

		m->mr = ibv_reg_mr(pd, m->buf, m->length, IBV_ACCESS_LOCAL_WRITE | m->access);
		if (m->mr == NULL)
			return fail("ibv_reg_mr", 0), 3;
	}
	for (i = 0; i < d.n_qp; i++) {
		struct dut_qp *q = &d.qp[i];
		struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = q->type,
			.cap = { .max_send_wr = 16, .max_recv_wr = q->recv_wrs ? q->recv_wrs : 1,
				 .max_send_sge = 1, .max_recv_sge = 1 } };

		q->qp = ibv_create_qp(pd, &ia);
		if (q->qp == NULL)
			return fail("ibv_create_qp", 0), 3;
		if (post_recvs(pd, q, i) != 0 || connect_qp(&d, q, gid_index) != 0)
			return 3;
	}
	printf("droce-replay map 1\n");
	for (i = 0; i < d.n_qp; i++)
		printf("qp %#x %#x\n", d.qp[i].cap_qpn, d.qp[i].qp->qp_num);
	for (i = 0; i < d.n_mr; i++)
		printf("mr %#x %#x %#" PRIx64 "\n", d.mr[i].cap_rkey, d.mr[i].mr->rkey,
		       (uint64_t)(uintptr_t)d.mr[i].buf);
	printf("ready\n");
	fflush(stdout);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	end = time(NULL) + secs;
	while (!stop && time(NULL) < end) {
		struct ibv_wc wc[32];
		int k = ibv_poll_cq(cq, 32, wc);

		if (k < 0)
			return fail("ibv_poll_cq", 0), 3;
		for (c = 0; c < k; c++) {
			if (wc[c].status == IBV_WC_SUCCESS)
				ok++;
			else
				errs++;
		}
		if (k == 0)
			usleep(1000);
	}
	for (i = 0; i < d.n_qp; i++) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		if (ibv_query_qp(d.qp[i].qp, &a, IBV_QP_STATE, &ia) != 0)
			return fail("ibv_query_qp", 0), 3;
		printf("qp %#x (live %#x): %s\n", d.qp[i].cap_qpn, d.qp[i].qp->qp_num,
		       state_name(a.qp_state));
		not_rts += a.qp_state != IBV_QPS_RTS;
	}
	printf("receive completions: %" PRIu64 " ok, %" PRIu64 " error\n", ok, errs);
	rc = not_rts != 0 || errs != 0;
	return rc;
}
