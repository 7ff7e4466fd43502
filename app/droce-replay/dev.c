/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce's side of a replay: the tool owns EAL and a net_ring ethdev over two rte_rings (it
 * enqueues on "in" what the port receives, dequeues from "out" what droce transmits), and
 * adds one droce device on that port with the capture responder's MAC and IPv4 and a static
 * neighbour for the requester (no ARP). The engine runs inline ([engine] lcores = empty, in
 * a configuration the tool writes to a memfd and names in DROCE_CONFIG), driven by play.c, so
 * the replay is deterministic. Then one PD, one CQ, a QP per [qp] in RTR with the scenario's
 * PSNs, an MR per [mr] filled with its initial contents, and the receive WRs.
 * --serve: the same device and objects on a real port droce probes (DEVARGS). --wire: that
 * real port alone in this process, no droce device; ready once the device under test answers
 * an ARP request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce.h"
#include "droce_engine.h"
#include "replay_dev.h"

static const char engine_ini[] =
	"[eal]\nargs =\n[engine]\nlcores =\nmbufs = 8191\n";

static int eal(const char *vdev, char *err, size_t len)
{
	char arg[300];
	char *argv[] = { "droce-replay", "--no-huge", "--no-shconf", "-m", "512", "--no-pci",
			 "--log-level=lib.eal:error", "--log-level=pmd.net.ring:error",
			 "--log-level=pmd.net.memif:error", "--no-telemetry", arg, NULL };
	int argc = RTE_DIM(argv) - 1;

	if (vdev != NULL)
		snprintf(arg, sizeof(arg), "--vdev=%s", vdev);
	else
		argc--;
	if (rte_eal_init(argc, argv) < 0)
		return replay_errf(err, len, "rte_eal_init: %s", rte_strerror(rte_errno));
	return 0;
}

static int eal_and_port(struct replay_dev *d, char *err, size_t len)
{
	int port;

	if (eal(NULL, err, len) != 0)
		return -1;
	d->in = rte_ring_create("replay_in", REPLAY_RING, SOCKET_ID_ANY,
				RING_F_SP_ENQ | RING_F_SC_DEQ);
	d->out = rte_ring_create("replay_out", REPLAY_RING, SOCKET_ID_ANY,
				 RING_F_SP_ENQ | RING_F_SC_DEQ);
	d->pool = rte_pktmbuf_pool_create("replay_pool", 4095, 0, 0,
					  RTE_PKTMBUF_HEADROOM + REPLAY_MAX_FRAME, SOCKET_ID_ANY);
	if (d->in == NULL || d->out == NULL || d->pool == NULL)
		return replay_errf(err, len, "rings or mbuf pool: %s", rte_strerror(rte_errno));
	port = rte_eth_from_rings("replay_port", &d->in, 1, &d->out, 1, SOCKET_ID_ANY);
	if (port < 0)
		return replay_errf(err, len, "rte_eth_from_rings: %s", rte_strerror(rte_errno));
	d->port = (uint16_t)port;
	return 0;
}

/* The engine configuration (inline) where droce looks for it. */
static int engine_config(char *err, size_t len)
{
	char path[64];
	int fd = memfd_create("droce-replay.ini", 0);

	if (fd < 0 || write(fd, engine_ini, sizeof(engine_ini) - 1) !=
	    (ssize_t)(sizeof(engine_ini) - 1))
		return replay_errf(err, len, "memfd for the engine configuration: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	setenv("DROCE_CONFIG", path, 1);
	return 0;	/* the fd stays open: droce reads the file on its first call */
}

static int add_device(struct replay_dev *d, const struct replay_scenario *sc,
		      const char *devargs, char *err, size_t len)
{
	struct droce_device_cfg cfg;
	struct droce_device **list;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.name, sizeof(cfg.name), "replay");
	if (devargs != NULL) {		/* --serve: droce probes the port */
		if (strlen(devargs) >= sizeof(cfg.devargs))
			return replay_errf(err, len, "devargs longer than %zu bytes",
					   sizeof(cfg.devargs) - 1);
		strcpy(cfg.devargs, devargs);
	} else if (rte_eth_dev_get_name_by_port(d->port, cfg.devargs) != 0) {
		return replay_errf(err, len, "no name for port %u", d->port);
	}
	memcpy(cfg.mac, sc->mac, 6);
	if (sc->ipv6) {		/* GID 0 fe80::EUI-64, GID 1 this address (REPLAY_SGID_INDEX) */
		cfg.n_ipv6 = 1;
		memcpy(cfg.ipv6[0], sc->gid, 16);
	} else {		/* GID 1 ::ffff:IPv4 */
		cfg.has_ipv4 = true;
		memcpy(cfg.ipv4, sc->gid + 12, 4);
	}
	cfg.mtu = sc->mtu;
	cfg.n_neigh = 1;
	memcpy(cfg.neigh[0].addr, sc->peer_gid, 16);
	memcpy(cfg.neigh[0].mac, sc->peer_mac, 6);
	rc = droce_device_add(&cfg);
	if (rc != 0)
		return replay_errf(err, len, "droce_device_add: %s", strerror(-rc));
	list = droce_get_device_list(NULL);
	if (list == NULL)
		return replay_errf(err, len, "droce_get_device_list: %s", strerror(errno));
	d->ctx = droce_open_device(list[0]);
	droce_free_device_list(list);
	if (d->ctx == NULL)
		return replay_errf(err, len, "droce_open_device: %s", strerror(errno));
	if (!droce_engine_is_inline())
		return replay_errf(err, len, "the engine is not inline");
	return 0;
}

/* --wire: the port alone, one queue each way, started and its link up (a memif client
 * waits for its server). */
static int wire_port(struct replay_dev *d, char *err, size_t len)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_link link;
	unsigned int i;
	int rc;

	if (rte_eth_dev_count_avail() != 1)
		return replay_errf(err, len, "%u ports: --wire takes one (its devargs)",
				   rte_eth_dev_count_avail());
	d->port = (uint16_t)rte_eth_find_next_owned_by(0, RTE_ETH_DEV_NO_OWNER);
	d->pool = rte_pktmbuf_pool_create("replay_pool", 4095, 0, 0,
					  RTE_PKTMBUF_HEADROOM + REPLAY_MAX_FRAME, SOCKET_ID_ANY);
	if (d->pool == NULL)
		return replay_errf(err, len, "mbuf pool: %s", rte_strerror(rte_errno));
	rc = rte_eth_dev_configure(d->port, 1, 1, &conf);
	rc = rc ? rc : rte_eth_rx_queue_setup(d->port, 0, 1024, SOCKET_ID_ANY, NULL, d->pool);
	rc = rc ? rc : rte_eth_tx_queue_setup(d->port, 0, 1024, SOCKET_ID_ANY, NULL);
	rc = rc ? rc : rte_eth_dev_start(d->port);
	if (rc != 0)
		return replay_errf(err, len, "port %u: %s", d->port, rte_strerror(-rc));
	for (i = 0; i < REPLAY_WIRE_LINK_MS; i += 10) {
		if (rte_eth_link_get_nowait(d->port, &link) == 0 && link.link_status)
			return 0;
		rte_delay_ms(10);
	}
	return replay_errf(err, len, "port %u: no link in %u ms (is the device under test "
			   "up?)", d->port, REPLAY_WIRE_LINK_MS);
}

/* An ARP request for the device under test's IPv4 address, from the requester's. */
static int send_arp(struct replay_dev *d)
{
	const struct replay_scenario *sc = d->sc;
	struct rte_mbuf *m = rte_pktmbuf_alloc(d->pool);
	uint8_t *b = m != NULL ? (uint8_t *)rte_pktmbuf_append(m, 60) : NULL;
	static const uint8_t hdr[] = { 0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0, 1 };

	if (b == NULL) {
		rte_pktmbuf_free(m);
		return -1;
	}
	memset(b, 0, 60);
	memset(b, 0xff, 6);
	memcpy(b + 6, sc->peer_mac, 6);
	memcpy(b + 12, hdr, sizeof(hdr));
	memcpy(b + 22, sc->peer_mac, 6);
	memcpy(b + 28, sc->peer_gid + 12, 4);
	memcpy(b + 38, sc->gid + 12, 4);
	if (rte_eth_tx_burst(d->port, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
	return 0;
}

/* The device under test's engine may see its link later than this port does (it polls
 * links): ask it for its MAC until it answers (IPv4), or give it a while (IPv6). */
static int wire_ready(struct replay_dev *d, char *err, size_t len)
{
	struct rte_mbuf *m[32];
	unsigned int t, i, n;
	bool up = false;

	if (d->sc->ipv6) {
		rte_delay_ms(REPLAY_WIRE_V6_WAIT_MS);
		return 0;
	}
	for (t = 0; !up && t < REPLAY_WIRE_LINK_MS; t += 20) {
		if (send_arp(d) != 0)
			return replay_errf(err, len, "no mbuf for an ARP request");
		rte_delay_ms(20);
		n = rte_eth_rx_burst(d->port, 0, m, 32);
		for (i = 0; i < n; i++) {
			const uint8_t *b = rte_pktmbuf_mtod(m[i], const uint8_t *);

			up |= rte_pktmbuf_data_len(m[i]) >= 42 && b[12] == 0x08 && b[13] == 0x06 &&
			      b[21] == 2 && memcmp(b + 28, d->sc->gid + 12, 4) == 0;
			rte_pktmbuf_free(m[i]);
		}
	}
	return up ? 0 : replay_errf(err, len, "no ARP reply from the device under test in %u ms",
				    REPLAY_WIRE_LINK_MS);
}

enum dev_mode { DEV_IN_PROCESS, DEV_SERVE, DEV_WIRE };

/* In-process: EAL, the ring port, droce's device and objects. --serve: EAL, droce's device
 * on the port @p devargs names, the objects. --wire: EAL with that port alone, up. */
static struct replay_dev *dev_start(const struct replay_scenario *sc, enum dev_mode mode,
				    const char *devargs, char *err, size_t len)
{
	struct replay_dev *d = calloc(1, sizeof(*d));
	int rc;

	if (d == NULL) {
		replay_errf(err, len, "out of memory");
		return NULL;
	}
	d->sc = sc;
	d->wire = mode == DEV_WIRE;
	if (mode == DEV_WIRE)
		rc = eal(devargs, err, len) != 0 || wire_port(d, err, len) != 0 ||
		     wire_ready(d, err, len) != 0;
	else
		rc = engine_config(err, len) != 0 ||
		     (mode == DEV_SERVE ? eal(NULL, err, len) : eal_and_port(d, err, len)) != 0 ||
		     add_device(d, sc, mode == DEV_SERVE ? devargs : NULL, err, len) != 0 ||
		     replay_dev_objects(d, err, len) != 0;
	if (rc != 0) {
		replay_dev_close(d);
		return NULL;
	}
	return d;
}

struct replay_dev *replay_dev_open(const struct replay_scenario *sc, char *err, size_t len)
{
	return dev_start(sc, DEV_IN_PROCESS, NULL, err, len);
}

struct replay_dev *replay_dev_serve(const struct replay_scenario *sc, const char *devargs,
				    char *err, size_t len)
{
	return dev_start(sc, DEV_SERVE, devargs, err, len);
}

struct replay_dev *replay_dev_wire(const struct replay_scenario *sc, const char *devargs,
				   char *err, size_t len)
{
	return dev_start(sc, DEV_WIRE, devargs, err, len);
}
