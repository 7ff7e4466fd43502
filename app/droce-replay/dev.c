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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

static int eal_and_port(struct replay_dev *d, char *err, size_t len)
{
	char *argv[] = { "droce-replay", "--no-huge", "--no-shconf", "-m", "512", "--no-pci",
			 "--log-level=lib.eal:error", "--log-level=pmd.net.ring:error",
			 "--no-telemetry", NULL };
	int port;

	if (rte_eal_init(RTE_DIM(argv) - 1, argv) < 0)
		return replay_errf(err, len, "rte_eal_init: %s", rte_strerror(rte_errno));
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

static int add_device(struct replay_dev *d, const struct replay_scenario *sc, char *err,
		      size_t len)
{
	struct droce_device_cfg cfg;
	struct droce_device **list;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.name, sizeof(cfg.name), "replay");
	if (rte_eth_dev_get_name_by_port(d->port, cfg.devargs) != 0)
		return replay_errf(err, len, "no name for port %u", d->port);
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

struct replay_dev *replay_dev_open(const struct replay_scenario *sc, char *err, size_t len)
{
	struct replay_dev *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		replay_errf(err, len, "out of memory");
		return NULL;
	}
	d->sc = sc;
	if (engine_config(err, len) != 0 || eal_and_port(d, err, len) != 0 ||
	    add_device(d, sc, err, len) != 0 || replay_dev_objects(d, err, len) != 0) {
		replay_dev_close(d);
		return NULL;
	}
	return d;
}
