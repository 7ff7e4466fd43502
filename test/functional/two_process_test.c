/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce <-> droce between two processes over vhost-user: a server process (net_vhost,
 * config/vhost-server.ini) and a client process (net_virtio_user, config/vhost-client.ini),
 * each this program started with its own DROCE_CONFIG, public API only. They exchange QPN,
 * PSN, GID, address and R_Key over a socketpair; the client sends SENDs, WRITEs and READs
 * (several packets each at MTU 1024) to the server, every byte is checked on the side that
 * received it, and both close everything and exit 0. The engine runs inline (polled from here)
 * or on the INI's dedicated lcores, several per device (shards, doc/engine.md): then QPS pairs
 * of QPs, all on one CQ per side, do this each, the client's created after one more QP so that
 * every QP's peer has another slot modulo the shards: the frames of every pair are handed from
 * the lcore of the queue they arrive on to their QP's (checked: rx_handoff on the client).
 *
 *   two_process_test CONFIG_DIR LSAN_SUPP [QPS]  run both (reserves hugepages; 77 if it
 *                                                cannot); QPS 1 (default) to 16
 *   two_process_test server|client FD QPS        one side (DROCE_CONFIG set by the first form)
 *
 * The socket path of the INI files is replaced by one of this run's own (temporary copies of
 * the INI files), so that a stale socket or a concurrent run cannot interfere.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "check.h"
#include "droce.h"
#include "droce_engine.h"

enum { NSEND = 4, SEND_LEN = 3000, WR_LEN = 5000, RD_LEN = 6000, BUF = 32768,
       TIMEOUT_S = 30, HUGEPAGES = 512, MAX_QP = 16 };
#define SOCK_IN_INI "/tmp/droce-vhost.sock"
#define NR_HUGE "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
#define FREE_HUGE "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"

/* What one side tells the other. */
struct info {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

struct side {
	int fd;				/* socketpair end */
	bool server;
	bool inline_engine;		/* droce_engine_poll() here; else the engine lcores run */
	unsigned int nqp;		/* QP pairs under test */
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_cq *cq;		/* every QP's send and receive queue */
	struct droce_qp *extra;		/* client, nqp > 1: created first (slots offset by one) */
	struct droce_qp *qp[MAX_QP];
	uint8_t *buf[MAX_QP];		/* BUF bytes: SEND/WRITE target (server), source (client) */
	struct droce_mr *mr[MAX_QP];
	int next[MAX_QP];		/* server: the next SEND expected on each QP */
};

/* ---- Both sides ---- */

static uint64_t deadline(void)
{
	return rte_get_tsc_cycles() + TIMEOUT_S * rte_get_tsc_hz();
}

/* Let the engine work: poll it inline, or yield to its lcores. */
static void drive(struct side *s)
{
	if (s->inline_engine)
		CHECK(droce_engine_poll(s->ctx) >= 0);
	else
		sched_yield();
}

/* Read @p len bytes from the peer, driving the engine (if open) meanwhile. */
static void recv_msg(struct side *s, void *p, size_t len)
{
	struct pollfd pf = { .fd = s->fd, .events = POLLIN };
	uint64_t end = s->ctx != NULL ? deadline() : 0;

	while (s->ctx != NULL && poll(&pf, 1, 0) == 0) {
		CHECK(rte_get_tsc_cycles() < end);
		drive(s);
	}
	CHECK_EQ(read(s->fd, p, len), (ssize_t)len);
}

static void send_msg(struct side *s, const void *p, size_t len)
{
	CHECK_EQ(write(s->fd, p, len), (ssize_t)len);
}

static struct ibv_wc wait_wc(struct side *s)
{
	uint64_t end = deadline();
	struct ibv_wc wc;
	int n;

	while ((n = droce_poll_cq(s->cq, 1, &wc)) == 0) {
		CHECK(rte_get_tsc_cycles() < end);
		drive(s);
	}
	CHECK_EQ(n, 1);
	if (wc.status != IBV_WC_SUCCESS)
		fprintf(stderr, "%s: wr %llu: %s\n", s->server ? "server" : "client",
			(unsigned long long)wc.wr_id, droce_wc_status_str(wc.status));
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	return wc;
}

static uint8_t pattern(size_t i, uint32_t seed)
{
	return (uint8_t)(i * 131 + seed * 7 + (i >> 8));
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(i, seed);
}

static bool same(const uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(i, seed))
			return false;
	return true;
}

/* The data seeds of QP @p q: its SENDs, its WRITE, its READ. */
static uint32_t seed(unsigned int q, uint32_t what)
{
	return what + 100 * q;
}

static void open_side(struct side *s)
{
	struct droce_device **list;
	struct droce_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	unsigned int q;
	int n;

	list = droce_get_device_list(&n);
	CHECK(list != NULL && n == 1);
	s->ctx = droce_open_device(list[0]);
	CHECK(s->ctx != NULL);
	droce_free_device_list(list);
	s->inline_engine = droce_engine_is_inline();
	s->pd = droce_alloc_pd(s->ctx);
	s->cq = droce_create_cq(s->ctx, 64 * (int)s->nqp, NULL, NULL, 0);
	CHECK(s->pd != NULL && s->cq != NULL);
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	if (!s->server && s->nqp > 1) {
		s->extra = droce_create_qp(s->pd, &ia);
		CHECK(s->extra != NULL);
	}
	for (q = 0; q < s->nqp; q++) {
		s->qp[q] = droce_create_qp(s->pd, &ia);
		s->buf[q] = aligned_alloc(4096, BUF);
		CHECK(s->qp[q] != NULL && s->buf[q] != NULL);
		s->mr[q] = droce_reg_mr(s->pd, s->buf[q], BUF, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		CHECK(s->mr[q] != NULL);
	}
}

static void close_side(struct side *s)
{
	unsigned int q;

	for (q = 0; q < s->nqp; q++) {
		CHECK_EQ(droce_destroy_qp(s->qp[q]), 0);
		CHECK_EQ(droce_dereg_mr(s->mr[q]), 0);
		free(s->buf[q]);
	}
	if (s->extra != NULL)
		CHECK_EQ(droce_destroy_qp(s->extra), 0);
	CHECK_EQ(droce_destroy_cq(s->cq), 0);
	CHECK_EQ(droce_dealloc_pd(s->pd), 0);
	CHECK_EQ(droce_close_device(s->ctx), 0);
}

static struct info my_info(struct side *s, unsigned int q)
{
	struct info i = { .qpn = s->qp[q]->qp_num, .psn = (s->qp[q]->qp_num * 7919u) & 0xffffff,
			  .rkey = s->mr[q]->rkey, .addr = (uintptr_t)s->buf[q] };

	CHECK_EQ(droce_query_gid(s->ctx, 1, 1, &i.gid), 0);	/* the IPv4 GID */
	return i;
}

/* INIT -> RTR -> RTS, connected to @p peer. */
static void connect_qp(struct droce_qp *qp, const struct info *me, const struct info *peer)
{
	struct ibv_qp_attr q = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };

	CHECK_EQ(droce_modify_qp(qp, &q, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS), 0);
	memset(&q, 0, sizeof(q));
	q.qp_state = IBV_QPS_RTR;
	q.path_mtu = IBV_MTU_1024;
	q.dest_qp_num = peer->qpn;
	q.rq_psn = peer->psn;
	q.max_dest_rd_atomic = 4;
	q.min_rnr_timer = 12;
	q.ah_attr.is_global = 1;
	q.ah_attr.port_num = 1;
	q.ah_attr.grh.sgid_index = 1;
	q.ah_attr.grh.hop_limit = 64;
	q.ah_attr.grh.dgid = peer->gid;
	CHECK_EQ(droce_modify_qp(qp, &q, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER), 0);
	memset(&q, 0, sizeof(q));
	q.qp_state = IBV_QPS_RTS;
	q.sq_psn = me->psn;
	q.timeout = 14;
	q.retry_cnt = 7;
	q.rnr_retry = 7;
	q.max_rd_atomic = 4;
	CHECK_EQ(droce_modify_qp(qp, &q, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

static void connect_all(struct side *s, const struct info *me, const struct info *peer)
{
	unsigned int q;

	for (q = 0; q < s->nqp; q++)
		connect_qp(s->qp[q], &me[q], &peer[q]);
}

/* ---- Server: receives the SENDs, is the WRITE target and the READ source ---- */

static void server_recvs(struct side *s, unsigned int q)
{
	struct ibv_sge sg = { 0, SEND_LEN, s->mr[q]->lkey };
	struct ibv_recv_wr r = { .sg_list = &sg, .num_sge = 1 }, *bad;
	int i;

	for (i = 0; i < NSEND; i++) {
		r.wr_id = i;
		sg.addr = (uintptr_t)s->buf[q] + (uint64_t)i * SEND_LEN;
		CHECK_EQ(droce_post_recv(s->qp[q], &r, &bad), 0);
	}
}

static unsigned int qp_index(struct side *s, uint32_t qpn)
{
	unsigned int q;

	for (q = 0; q < s->nqp; q++)
		if (s->qp[q]->qp_num == qpn)
			return q;
	CHECK(!"completion of an unknown QP");
	return 0;
}

static int server(struct side *s)
{
	struct info me[MAX_QP], peer[MAX_QP];
	struct ibv_wc wc;
	unsigned int q;
	char c;
	int i;

	open_side(s);
	for (q = 0; q < s->nqp; q++) {
		memset(s->buf[q], 0, BUF);
		fill(s->buf[q] + BUF - RD_LEN, RD_LEN, seed(q, 3));	/* what the client READs */
		me[q] = my_info(s, q);
	}
	send_msg(s, me, sizeof(me[0]) * s->nqp);	/* the socket exists: client may start */
	recv_msg(s, peer, sizeof(peer[0]) * s->nqp);
	connect_all(s, me, peer);
	for (q = 0; q < s->nqp; q++)
		server_recvs(s, q);
	send_msg(s, "R", 1);
	/* Every QP's SENDs in order (the QPs' among each other in any order). */
	for (i = 0; i < NSEND * (int)s->nqp; i++) {
		wc = wait_wc(s);
		q = qp_index(s, wc.qp_num);
		CHECK_EQ(wc.opcode, IBV_WC_RECV);
		CHECK_EQ(wc.wr_id, s->next[q]);
		CHECK_EQ(wc.byte_len, SEND_LEN);
		CHECK(same(s->buf[q] + (size_t)s->next[q] * SEND_LEN, SEND_LEN,
			   seed(q, 10 + (uint32_t)s->next[q])));
		s->next[q]++;
	}
	recv_msg(s, &c, 1);				/* client: WRITE and READ done */
	CHECK_EQ(c, 'D');
	for (q = 0; q < s->nqp; q++) {
		struct droce_counters qc;

		/* On engine lcores, a call to the QP's lcore first: the WRITE it placed happens
		 * before its answer (the client's word came through another process, where a
		 * race detector cannot follow). */
		CHECK_EQ(droce_query_qp_counters(s->qp[q], &qc), 0);
		CHECK(same(s->buf[q] + NSEND * SEND_LEN, WR_LEN, seed(q, 2)));
	}
	send_msg(s, "V", 1);
	recv_msg(s, &c, 1);				/* client closed its QP */
	close_side(s);
	return 0;
}

/* ---- Client: the requester ---- */

static void post(struct side *s, unsigned int q, enum ibv_wr_opcode op, uint64_t wr_id,
		 uint32_t len, const struct info *peer, uint64_t roff)
{
	struct ibv_sge sg = { (uintptr_t)s->buf[q], len, s->mr[q]->lkey };
	struct ibv_send_wr w = { .wr_id = wr_id, .sg_list = &sg, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	w.wr.rdma.remote_addr = peer->addr + roff;
	w.wr.rdma.rkey = peer->rkey;
	CHECK_EQ(droce_post_send(s->qp[q], &w, &bad), 0);
}

/* On QP @p q: SENDs of 3 packets, a WRITE of 5, a READ of 6 responses. */
static void client_traffic(struct side *s, unsigned int q, const struct info *peer)
{
	uint8_t *b = s->buf[q];
	int i;

	for (i = 0; i < NSEND; i++) {
		fill(b, SEND_LEN, seed(q, 10 + (uint32_t)i));
		post(s, q, IBV_WR_SEND, i, SEND_LEN, peer, 0);
		CHECK_EQ(wait_wc(s).opcode, IBV_WC_SEND);
	}
	fill(b, WR_LEN, seed(q, 2));
	post(s, q, IBV_WR_RDMA_WRITE, 10, WR_LEN, peer, NSEND * SEND_LEN);
	CHECK_EQ(wait_wc(s).opcode, IBV_WC_RDMA_WRITE);
	memset(b, 0, BUF);
	post(s, q, IBV_WR_RDMA_READ, 11, RD_LEN, peer, BUF - RD_LEN);
	CHECK_EQ(wait_wc(s).opcode, IBV_WC_RDMA_READ);
	CHECK(same(b, RD_LEN, seed(q, 3)));
}

/* The QPs' frames went through the vhost-user link: their requests, the READ responses. With
 * several QPs (the client's offset by one slot), the device handed frames between shards. */
static void client_counters(struct side *s)
{
	struct droce_counters c, d;
	uint64_t rx_roce = 0;
	unsigned int q;

	for (q = 0; q < s->nqp; q++) {
		CHECK_EQ(droce_query_qp_counters(s->qp[q], &c), 0);
		CHECK_EQ(c.tx_packets, NSEND * 3 + 5 + 1 + c.retransmits);
		CHECK(c.rx_packets >= 6);
		rx_roce += c.rx_roce;
	}
	CHECK_EQ(droce_query_counters(s->ctx, &d), 0);
	CHECK_EQ(d.rx_roce, rx_roce);
	CHECK(d.rx_arp >= 1);
	if (s->nqp > 1) {
		printf("client: rx_handoff %llu\n", (unsigned long long)d.rx_handoff);
		CHECK(d.rx_handoff > 0);
		CHECK_EQ(d.rx_handoff_dropped, 0);
	}
}

static int client(struct side *s)
{
	struct info me[MAX_QP], peer[MAX_QP];
	unsigned int q;
	char c;

	recv_msg(s, peer, sizeof(peer[0]) * s->nqp);	/* the server's socket exists now */
	open_side(s);
	for (q = 0; q < s->nqp; q++)
		me[q] = my_info(s, q);
	send_msg(s, me, sizeof(me[0]) * s->nqp);
	connect_all(s, me, peer);
	recv_msg(s, &c, 1);
	CHECK_EQ(c, 'R');
	for (q = 0; q < s->nqp; q++)
		client_traffic(s, q, &peer[q]);
	client_counters(s);
	send_msg(s, "D", 1);
	recv_msg(s, &c, 1);
	CHECK_EQ(c, 'V');
	close_side(s);
	send_msg(s, "C", 1);
	return 0;
}

/* ---- The runner ---- */

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f != NULL) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* At least HUGEPAGES free 2 MiB pages (reserving more if needed). @return false if not. */
static bool hugepages(void)
{
	long nr = read_long(NR_HUGE), avail = read_long(FREE_HUGE);
	FILE *f;

	if (nr < 0 || avail < 0)
		return false;
	if (avail >= HUGEPAGES)
		return true;
	f = fopen(NR_HUGE, "w");
	if (f == NULL)
		return false;
	fprintf(f, "%ld\n", nr + HUGEPAGES - avail);
	fclose(f);
	return read_long(FREE_HUGE) >= HUGEPAGES;
}

/* Copy @p dir/@p name to @p out with the socket path replaced by @p sock. */
static void ini_copy(const char *dir, const char *name, const char *out, const char *sock)
{
	char path[512], line[1024], *p;
	FILE *in, *o;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	in = fopen(path, "r");
	o = fopen(out, "w");
	CHECK(in != NULL && o != NULL);
	while (fgets(line, sizeof(line), in) != NULL) {
		p = strstr(line, SOCK_IN_INI);
		if (p == NULL || line[0] == ';') {
			fputs(line, o);
			continue;
		}
		fprintf(o, "%.*s%s%s", (int)(p - line), line, sock, p + strlen(SOCK_IN_INI));
	}
	fclose(in);
	CHECK_EQ(fclose(o), 0);
}

static pid_t spawn(const char *role, const char *ini, int fd, int other, const char *qps)
{
	char fds[16];
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid != 0)
		return pid;
	close(other);
	snprintf(fds, sizeof(fds), "%d", fd);
	setenv("DROCE_CONFIG", ini, 1);
	execl("/proc/self/exe", "two_process_test", role, fds, qps, (char *)NULL);
	_exit(127);
}

/* Wait for both; a failure (or a hang past the deadline) kills the other. */
static int reap(pid_t pid[2])
{
	int st, i, left = 2, rc = 0, ms = 0;
	pid_t p;

	while (left > 0) {
		p = waitpid(-1, &st, WNOHANG);
		if (p == 0) {
			usleep(10000);
			if ((ms += 10) < (TIMEOUT_S + 15) * 1000)
				continue;
			fprintf(stderr, "timeout\n");
			st = 1 << 8;
			p = pid[0];
			kill(pid[0], SIGKILL);
			waitpid(pid[0], NULL, 0);
		}
		CHECK(p > 0);
		i = p == pid[0] ? 0 : 1;
		left--;
		pid[i] = 0;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			continue;
		fprintf(stderr, "%s: status 0x%x\n", i == 0 ? "server" : "client", st);
		rc = 1;
		if (pid[1 - i] != 0)
			kill(pid[1 - i], SIGKILL);
	}
	return rc;
}

/* LeakSanitizer (sanitizer builds): ignore what DPDK's own PMDs keep (@p supp). */
static void lsan_suppress(const char *supp)
{
	const char *old = getenv("LSAN_OPTIONS");
	char v[1024];

	snprintf(v, sizeof(v), "%s%ssuppressions=%s", old != NULL ? old : "",
		 old != NULL && old[0] != '\0' ? ":" : "", supp);
	setenv("LSAN_OPTIONS", v, 1);
}

static int run(const char *cfg_dir, const char *supp, const char *qps)
{
	char sock[64], ini[2][80];
	pid_t pid[2];
	int sv[2], rc;

	if (!hugepages()) {
		fprintf(stderr, "cannot reserve %d hugepages: skipped\n", HUGEPAGES);
		return 77;
	}
	snprintf(sock, sizeof(sock), "/tmp/droce-vhost-%d.sock", (int)getpid());
	snprintf(ini[0], sizeof(ini[0]), "/tmp/droce-vhost-%d-server.ini", (int)getpid());
	snprintf(ini[1], sizeof(ini[1]), "/tmp/droce-vhost-%d-client.ini", (int)getpid());
	ini_copy(cfg_dir, "vhost-server.ini", ini[0], sock);
	ini_copy(cfg_dir, "vhost-client.ini", ini[1], sock);
	lsan_suppress(supp);
	unlink(sock);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid[0] = spawn("server", ini[0], sv[0], sv[1], qps);
	pid[1] = spawn("client", ini[1], sv[1], sv[0], qps);
	close(sv[0]);
	close(sv[1]);
	rc = reap(pid);
	unlink(sock);
	unlink(ini[0]);
	unlink(ini[1]);
	return rc;
}

int main(int argc, char **argv)
{
	struct side s = { .fd = -1 };

	CHECK(argc == 3 || argc == 4);
	s.nqp = argc == 4 ? (unsigned int)atoi(argv[3]) : 1;
	CHECK(s.nqp >= 1 && s.nqp <= MAX_QP);
	if (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)
		return run(argv[1], argv[2], argc == 4 ? argv[3] : "1");
	s.fd = atoi(argv[2]);
	s.server = strcmp(argv[1], "server") == 0;
	alarm(TIMEOUT_S + 10);
	return s.server ? server(&s) : client(&s);
}
