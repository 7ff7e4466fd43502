/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Every section and key of droce's configuration (verbs_config.h): the parser checks each
 * entry against this table, the engine and lib/cm take their defaults from it, and
 * verbs_config_reference() prints it as doc/configuration.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>

#include "verbs_config.h"
#include "verbs_private.h"

#define U(sec, k, d, lo, hi, m) { sec, k, VERBS_CFG_UINT, d, lo, hi, NULL, m }
#define B(sec, k, d, m) U(sec, k, d, 0, 1, m)

static const struct verbs_cfg_key keys[] = {
	{ "eal", "args", VERBS_CFG_TEXT, "", 0, 511, NULL,
	  "EAL arguments used when droce starts EAL itself (the application has not): "
	  "blank-separated, as on a DPDK command line" },

	{ "engine", "lcores", VERBS_CFG_LCORES, "", 0, 0, NULL,
	  "engine lcores: empty = inline (droce_engine_poll()); auto = the first EAL worker "
	  "lcore, inline if there is none; a list = those worker lcores (\"1,3\", \"1-2\")" },
	{ "engine", "lcores_per_device", VERBS_CFG_COUNT_ALL, "1", 1, 8, NULL,
	  "engine lcores serving each device, each polling a queue pair of its own (all: every "
	  "engine lcore); dedicated lcores only" },
	U("engine", "mbufs", "8191", 1024, 1u << 24,
	  "packet buffers (mbufs) in each engine instance's pool"),
	U("engine", "mbuf_size", "0", 0, UINT16_MAX,
	  "mbuf data room in bytes (0: the largest device frame in one segment; MTU 9000 "
	  "makes 9 KiB mbufs)"),
	U("engine", "rxd", "1024", 0, 32768, "receive descriptors per port queue"),
	U("engine", "txd", "1024", 0, 32768, "transmit descriptors per port queue"),
	U("engine", "idle_sleep_us", "0", 0, 1000000,
	  "a dedicated lcore idle for 1024 iterations sleeps this long (0: it spins)"),
	U("engine", "idle_sleep_max_us", "0", 0, 1000000,
	  "while it stays idle each sleep doubles up to this (0: every sleep is idle_sleep_us); "
	  "at least idle_sleep_us"),
	U("engine", "neigh_retry_ms", "1000", 1, 60000, "ARP/NS retransmission interval"),
	U("engine", "neigh_retries", "3", 0, 100,
	  "requests sent before a neighbour resolution is given up"),
	U("engine", "neigh_reachable_s", "30", 0, 86400,
	  "a learned neighbour is resolved again after this many seconds"),
	U("engine", "link_poll_ms", "10", 0, 60000,
	  "poll the ports' links this often (0: links are not followed, ports are always ACTIVE)"),
	U("engine", "start_wait_ms", "0", 0, 600000,
	  "a device open waits this long for the port's peer: a start that fails (EIO: a memif "
	  "client with no server) or gets no link within 250 ms is tried again every 50 ms (0: fails "
	  "at once); with link_poll_ms too, a port whose link goes down is started again every "
	  "50 ms (a memif client whose server went away reconnects when it is back)"),
	U("engine", "link_wait_ms", "0", 0, 60000,
	  "a device open waits up to this long for its port's link after starting it, the port "
	  "left as it is (a PCI NIC negotiating its link: the port is ACTIVE when the program "
	  "queries it); 0: no wait, the port is DOWN until its link comes"),
	B("engine", "tx_zero_copy", "1",
	  "send payloads of 512 bytes and more straight from registered memory on in-process "
	  "(net_ring) ports"),
	B("engine", "tx_checksum_offload", "1",
	  "let a port that reports it (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM: e1000, ixgbe, i40e, ice, "
	  "mlx5, net_tap) fill the IPv4 header checksums; 0: droce's own, as on ports without"),
	U("engine", "recorder", "0", 0, 4096,
	  "each QP keeps its last this many frames (the first 128 bytes of each) and its "
	  "transport state with each, written to recorder_dir as a pcap and a JSON when the QP "
	  "enters ERR (doc/observability.md); 0: off"),
	{ "engine", "recorder_dir", VERBS_CFG_TEXT, "/tmp", 0, 200, NULL,
	  "the directory the flight recorder writes to" },
	B("engine", "pdump", "1", "let dpdk-dumpcap capture the ports (rte_pdump_init(); it "
	  "needs shared config and hugepages: doc/observability.md)"),
	U("engine", "fault_drop", "0", 0, 1000, "drop this many per mille of the RoCE frames sent "
	  "(fault injection, for tests)"),
	U("engine", "fault_dup", "0", 0, 1000, "duplicate this many per mille of the frames sent"),
	U("engine", "fault_reorder", "0", 0, 1000, "reorder this many per mille of the frames sent"),
	U("engine", "fault_delay", "0", 0, 1000, "delay this many per mille of the frames sent"),
	U("engine", "fault_corrupt", "0", 0, 1000,
	  "corrupt this many per mille of the frames sent"),
	U("engine", "fault_delay_us", "100", 0, 1000000, "how long a delayed frame is held"),
	U("engine", "fault_seed", "0", 0, UINT32_MAX, "seed of the fault injection's PRNG"),
	U("engine", "fault_ce", "0", 0, 1000,
	  "mark this many per mille of the ECN-capable frames sent CE (a congested switch)"),
	U("engine", "fault_ce_frames", "0", 0, UINT32_MAX - 1,
	  "mark at most this many frames per device (0: no limit)"),
	U("engine", "bottleneck_mbps", "0", 0, 4000000,
	  "RoCE frames leave through a FIFO draining at this rate (0: off; a congested link)"),
	U("engine", "bottleneck_mark_kb", "64", 0, 1u << 20,
	  "the FIFO marks CE from this many KiB queued, as RED does"),
	U("engine", "bottleneck_mark_max_kb", "0", 0, 1u << 20,
	  "marking probability reaches bottleneck_mark_pmax here, always above (0: a step)"),
	U("engine", "bottleneck_mark_pmax", "1000", 0, 1000,
	  "marking probability at bottleneck_mark_max_kb, per mille"),
	U("engine", "bottleneck_limit_kb", "1024", 0, 1u << 20,
	  "the FIFO drops frames above this many KiB queued"),
	B("engine", "log_counters", "0",
	  "when a device closes, log one line of its counters that are not 0 (what a "
	  "short-lived program did on the wire, without telemetry)"),

	U("cm", "response_timeout", "20", 0, 31,
	  "CM response timeout sent in REQ, 4.096 us * 2^N (Linux rdma_cm's)"),
	U("cm", "max_retries", "15", 0, 15, "CM MAD retransmissions before giving up"),
	U("cm", "packet_life_time", "18", 0, 30,
	  "packet life time, 4.096 us * 2^N, from which the QP's ACK timeout is made"),
	U("cm", "resolve_poll_ms", "10", 1, 1000,
	  "how often address and route resolution look for an answer"),
	U("cm", "inline_tick_ms", "1", 1, 1000,
	  "how often the CM thread drives an inline engine"),

	B("dcqcn", "enable", "1",
	  "ECN marking, notification and reaction point on every device"),
	{ "dcqcn", "off_devices", VERBS_CFG_TEXT, "", 0, 255, NULL,
	  "devices where DCQCN is off, comma-separated names" },
	{ "dcqcn", "ecn", VERBS_CFG_WORD, "ect0", 0, 0, "ect0|ect1|off",
	  "ECN field of the frames sent" },
	B("dcqcn", "np", "1", "notification point: send CNPs for CE-marked frames"),
	B("dcqcn", "rp", "1", "reaction point: limit a QP's rate on CNPs"),
	U("dcqcn", "cnp_interval_us", "50", 0, 1000000, "at most one CNP per QP per this time"),
	U("dcqcn", "cnp_dscp", "", 0, 63,
	  "DSCP of the CNPs sent, which carry no ECT (none: the QP's traffic class)"),
	U("dcqcn", "cnp_pcp", "", 0, 7,
	  "PCP in the 802.1Q tag of the CNPs sent on a device with a vlan (none: the QP's)"),
	U("dcqcn", "rate_reduce_period_us", "4", 0, 1000000,
	  "at most one rate cut per QP per this time"),
	U("dcqcn", "alpha_g_shift", "8", 1, 16, "g = 1/2^N"),
	U("dcqcn", "alpha_init", "1024", 0, 1024, "alpha at a QP's first CNP, in 1/1024"),
	U("dcqcn", "alpha_period_us", "55", 1, 1000000,
	  "K: alpha decays after this long without a CNP"),
	U("dcqcn", "time_reset_us", "55", 1, 1000000, "T: rate increase timer"),
	U("dcqcn", "byte_reset", "10485760", 0, 1u << 30,
	  "B: rate increase byte counter (0: the timer only)"),
	U("dcqcn", "stages", "5", 0, 100, "F: fast recovery events before additive increase"),
	U("dcqcn", "line_rate_mbps", "0", 0, 4000000,
	  "rate of an unlimited QP (0: the port's link speed, 100000 when it does not say)"),
	U("dcqcn", "min_rate_mbps", "10", 1, 4000000, "lowest rate a QP is cut to"),
	U("dcqcn", "ai_rate_mbps", "40", 0, 4000000, "additive increase step"),
	U("dcqcn", "hai_rate_mbps", "400", 0, 4000000, "hyper additive increase step"),
	U("dcqcn", "burst", "16384", 64, 1u << 24,
	  "bytes a rate-limited QP may send at once after idling"),

	{ "device", "devargs", VERBS_CFG_TEXT, "", 0, 255, NULL,
	  "DPDK devargs of the port (\"net_af_packet0,iface=eth1\", a PCI address); "
	  "this or ring_pair" },
	{ "device", "ring_pair", VERBS_CFG_TEXT, "", 0, 31, NULL,
	  "the name of an in-process link joining the two devices that give it; this or devargs" },
	{ "device", "mac", VERBS_CFG_MAC, "", 0, 0, NULL,
	  "the device's MAC address (none: the port's own)" },
	{ "device", "ipv4", VERBS_CFG_IPV4, "", 0, 0, NULL, "the device's IPv4 address (a GID)" },
	{ "device", "ipv6", VERBS_CFG_IPV6, "", 0, 4, NULL,
	  "the device's IPv6 addresses (GIDs), comma-separated" },
	U("device", "mtu", "1500", 576, 65535,
	  "Ethernet MTU; the active IB MTU is the largest that fits with RoCE's headers"),
	{ "device", "neigh", VERBS_CFG_NEIGH, "", 0, 16, NULL,
	  "static neighbours ADDR@MAC (IPv4 or IPv6 ADDR), comma-separated: no ARP/NS for them" },
	{ "device", "lcores_per_device", VERBS_CFG_COUNT_ALL, "", 1, 65534, NULL,
	  "engine lcores serving this device (none: [engine] lcores_per_device); the two "
	  "devices of a ring pair say the same" },
	U("device", "vlan", "", 0, 4094,
	  "802.1Q VLAN id: the device's frames carry the tag, and only frames of this VLAN are "
	  "received (none: untagged; 0: priority tagged, no VLAN)"),
	{ "device", "pcp", VERBS_CFG_WORD, "sl", 0, 0, "sl|0|1|2|3|4|5|6|7",
	  "priority (PCP) in the tag of a device with a vlan: sl, each QP's service level "
	  "(ah_attr.sl, as Linux's RoCE drivers), or this one on every frame" },
};

static const char *const sections[] = { "eal", "engine", "cm", "dcqcn", "device" };

const struct verbs_cfg_key *verbs_cfg_key_find(const char *section, const char *key)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(keys); i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].key, key) == 0)
			return &keys[i];
	return NULL;
}

bool verbs_cfg_section_known(const char *section)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(sections); i++)
		if (strcmp(sections[i], section) == 0)
			return true;
	return false;
}

/* Levenshtein distance, capped: names are short. */
static unsigned int distance(const char *a, const char *b)
{
	unsigned int row[65], i, j, la = strlen(a), lb = strlen(b);

	if (la > 64 || lb > 64)
		return UINT32_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		unsigned int diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			unsigned int up = row[j];
			unsigned int best = diag + (a[i - 1] != b[j - 1]);

			best = RTE_MIN(best, up + 1);
			best = RTE_MIN(best, row[j - 1] + 1);
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* Near: at most 2 edits, and fewer than half of the longer name. */
static bool near(const char *a, const char *b, unsigned int d)
{
	size_t l = RTE_MAX(strlen(a), strlen(b));

	return d <= 2 && 2 * d < l;
}

const char *verbs_cfg_suggest_key(const char *section, const char *key,
				  const char **other_section)
{
	const char *best = NULL;
	unsigned int i, d, best_d = UINT32_MAX;

	*other_section = NULL;
	for (i = 0; i < RTE_DIM(keys); i++) {
		if (strcmp(keys[i].section, section) != 0)
			continue;
		d = distance(key, keys[i].key);
		if (d < best_d && near(key, keys[i].key, d)) {
			best = keys[i].key;
			best_d = d;
		}
	}
	if (best != NULL)
		return best;
	for (i = 0; i < RTE_DIM(keys); i++) {
		if (strcmp(keys[i].key, key) == 0) {
			*other_section = keys[i].section;
			return keys[i].key;
		}
	}
	return NULL;
}

const char *verbs_cfg_suggest_section(const char *word)
{
	const char *best = NULL;
	unsigned int i, d, best_d = UINT32_MAX;

	for (i = 0; i < RTE_DIM(sections); i++) {
		d = distance(word, sections[i]);
		if (d < best_d && near(word, sections[i], d)) {
			best = sections[i];
			best_d = d;
		}
	}
	return best;
}

static int why(char *buf, size_t len, const char *fmt, ...) __rte_format_printf(3, 4);
static int why(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int check_number(const struct verbs_cfg_key *k, const char *v, char *buf, size_t len)
{
	unsigned long long x;
	char *end;

	if (v[0] == '-')
		return why(buf, len, "'%s' is below the minimum %lu", v, k->min);
	errno = 0;
	x = strtoull(v, &end, 0);
	if (end == v || *end != '\0')
		return why(buf, len, "'%s' is not a number", v);
	if (errno != 0 || x > k->max)
		return why(buf, len, "%s is above the maximum %lu", v, k->max);
	if (x < k->min)
		return why(buf, len, "%s is below the minimum %lu", v, k->min);
	return 0;
}

/* "1,3" or "1-2, 4". */
static int check_lcores(const char *v, char *buf, size_t len)
{
	const char *p = v;
	char *end;
	unsigned long a, b;

	if (v[0] == '\0' || strcmp(v, "auto") == 0)
		return 0;
	while (*p != '\0') {
		if (*p < '0' || *p > '9')
			break;
		a = strtoul(p, &end, 10);
		p = end;
		if (*p == '-') {
			if (p[1] < '0' || p[1] > '9')
				break;
			b = strtoul(p + 1, &end, 10);
			if (b < a)
				return why(buf, len, "'%s': range %lu-%lu is backwards", v, a, b);
			p = end;
		}
		while (*p == ',' || *p == ' ')
			p++;
	}
	if (*p != '\0')
		return why(buf, len, "'%s' is not empty, auto, or a list of lcore ids (\"1,3\", "
			   "\"1-2\")", v);
	return 0;
}

static int check_list(const struct verbs_cfg_key *k, const char *v, char *buf, size_t len)
{
	char copy[256];
	char *save = NULL, *tok;
	unsigned int n = 0;
	uint8_t a[16];
	struct rte_ether_addr ea;

	if (strlen(v) >= sizeof(copy))
		return why(buf, len, "longer than %zu characters", sizeof(copy) - 1);
	strcpy(copy, v);
	for (tok = strtok_r(copy, ", \t", &save); tok != NULL; tok = strtok_r(NULL, ", \t", &save)) {
		char *at = strchr(tok, '@');

		if (++n > k->max)
			return why(buf, len, "more than %lu entries", k->max);
		if (k->type == VERBS_CFG_IPV6 && inet_pton(AF_INET6, tok, a) != 1)
			return why(buf, len, "'%s' is not an IPv6 address", tok);
		if (k->type != VERBS_CFG_NEIGH)
			continue;
		if (at == NULL)
			return why(buf, len, "'%s' is not ADDR@MAC", tok);
		*at = '\0';
		if (inet_pton(AF_INET, tok, a) != 1 && inet_pton(AF_INET6, tok, a) != 1)
			return why(buf, len, "'%s' is not an IPv4 or IPv6 address", tok);
		if (rte_ether_unformat_addr(at + 1, &ea) != 0)
			return why(buf, len, "'%s' is not a MAC address", at + 1);
	}
	return 0;
}

int verbs_cfg_check(const struct verbs_cfg_key *k, const char *v, char *buf, size_t len)
{
	struct rte_ether_addr ea;
	uint8_t a[4];

	switch (k->type) {
	case VERBS_CFG_UINT:
		return v[0] == '\0' ? 0 : check_number(k, v, buf, len);
	case VERBS_CFG_COUNT_ALL:
		return strcmp(v, "all") == 0 ? 0 : check_number(k, v, buf, len);
	case VERBS_CFG_WORD: {
		size_t n = strlen(v);
		const char *w = strstr(k->words, v);

		if (n > 0 && w != NULL && (w == k->words || w[-1] == '|') &&
		    (w[n] == '\0' || w[n] == '|'))
			return 0;
		return why(buf, len, "'%s' is not one of %s", v, k->words);
	}
	case VERBS_CFG_TEXT:
		return strlen(v) <= k->max ? 0 :
		       why(buf, len, "longer than %lu characters", k->max);
	case VERBS_CFG_LCORES:
		return check_lcores(v, buf, len);
	case VERBS_CFG_MAC:
		return rte_ether_unformat_addr(v, &ea) == 0 ? 0 :
		       why(buf, len, "'%s' is not a MAC address (02:00:00:00:00:01)", v);
	case VERBS_CFG_IPV4:
		return inet_pton(AF_INET, v, a) == 1 ? 0 :
		       why(buf, len, "'%s' is not an IPv4 address", v);
	case VERBS_CFG_IPV6:
	case VERBS_CFG_NEIGH:
		return check_list(k, v, buf, len);
	}
	return why(buf, len, "unknown type");
}

unsigned int verbs_cfg_uint(const char *section, const struct verbs_kv *kv, unsigned int n,
			    const char *key)
{
	const struct verbs_cfg_key *k = verbs_cfg_key_find(section, key);
	const char *v;
	unsigned int i;

	RTE_VERIFY(k != NULL && (k->type == VERBS_CFG_UINT || k->type == VERBS_CFG_COUNT_ALL));
	v = k->def;
	for (i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0 && kv[i].value[0] != '\0')
			v = kv[i].value;
	return (unsigned int)strtoul(v, NULL, 0);
}

int verbs_cfg_check_kv(const char *section, const struct verbs_kv *kv, unsigned int n)
{
	const struct verbs_cfg_key *k;
	char buf[160];
	unsigned int i;

	for (i = 0; i < n; i++) {
		k = verbs_cfg_key_find(section, kv[i].key);
		if (k == NULL) {
			VERBS_LOG(ERR, "unknown key '%s' in [%s]", kv[i].key, section);
			return -EINVAL;
		}
		if (verbs_cfg_check(k, kv[i].value, buf, sizeof(buf)) < 0) {
			VERBS_LOG(ERR, "[%s] %s: %s", section, kv[i].key, buf);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- doc/configuration.md ---- */

static void type_text(const struct verbs_cfg_key *k, char *buf, size_t len)
{
	switch (k->type) {
	case VERBS_CFG_UINT:
		if (k->min == 0 && k->max == 1)
			snprintf(buf, len, "0 or 1");
		else
			snprintf(buf, len, "integer, %lu to %lu", k->min, k->max);
		return;
	case VERBS_CFG_COUNT_ALL:
		snprintf(buf, len, "integer %lu to %lu, or `all`", k->min, k->max);
		return;
	case VERBS_CFG_WORD: {	/* "one of `a`, `b`": a '|' would split the table's cell */
		const char *w;
		size_t n = (size_t)snprintf(buf, len, "one of `");

		for (w = k->words; *w != '\0' && n + 4 < len; w++)
			n += (size_t)snprintf(buf + n, len - n, *w == '|' ? "`, `" : "%c", *w);
		snprintf(buf + n, len - n, "`");
		return;
	}
	case VERBS_CFG_TEXT:
		snprintf(buf, len, "text, up to %lu characters", k->max);
		return;
	case VERBS_CFG_LCORES:
		snprintf(buf, len, "empty, `auto`, or lcore list");
		return;
	case VERBS_CFG_MAC:
		snprintf(buf, len, "MAC address");
		return;
	case VERBS_CFG_IPV4:
		snprintf(buf, len, "IPv4 address");
		return;
	case VERBS_CFG_IPV6:
		snprintf(buf, len, "IPv6 addresses, up to %lu", k->max);
		return;
	case VERBS_CFG_NEIGH:
		snprintf(buf, len, "`ADDR@MAC` list, up to %lu", k->max);
		return;
	}
	buf[0] = '\0';
}

static const char *const section_intro[] = {
	"How droce starts DPDK's EAL when the application has not.",
	"The engine's lcores, packet buffers, neighbour resolution, and the fault injection and "
	"bottleneck used by tests ([engine.md](engine.md)).",
	"The connection manager's timeouts ([cm.md](cm.md)).",
	"Congestion control: ECN and DCQCN ([congestion.md](congestion.md)).",
	"One RDMA device on one DPDK port, named NAME; up to 8 such sections, in the order the "
	"device list gives them. Exactly one of `devargs` and `ring_pair`.",
};

void verbs_config_reference(FILE *f)
{
	unsigned int s, i;
	char type[64];

	fprintf(f, "# Configuration reference\n\n"
		"<!-- Generated by `droce-run --config-reference` from droce's key table "
		"(lib/verbs/verbs_config_keys.c); a test fails when this file differs. -->\n\n"
		"droce reads one INI file: the one `DROCE_CONFIG` names (`droce-run -c`), else "
		"the embedded default (config/default.ini). `;` starts a comment. A section or key "
		"not listed here, a value of the wrong type or out of range, a key or section "
		"given twice (`ipv6` and `neigh` excepted: their lines add up) is an error naming "
		"the file, the line and the key: opening a device fails with `EINVAL`. "
		"`droce-run --check-config FILE` checks a file without starting anything. A "
		"number is decimal or `0x` hex; an empty number means its default.\n");
	for (s = 0; s < RTE_DIM(sections); s++) {
		fprintf(f, "\n## [%s%s]\n\n%s\n\n", sections[s],
			strcmp(sections[s], "device") == 0 ? " NAME" : "", section_intro[s]);
		fprintf(f, "| Key | Type | Default | Meaning |\n|---|---|---|---|\n");
		for (i = 0; i < RTE_DIM(keys); i++) {
			if (strcmp(keys[i].section, sections[s]) != 0)
				continue;
			type_text(&keys[i], type, sizeof(type));
			fprintf(f, "| `%s` | %s | %s%s%s | %s |\n", keys[i].key, type,
				keys[i].def[0] != '\0' ? "`" : "",
				keys[i].def[0] != '\0' ? keys[i].def :
				keys[i].type == VERBS_CFG_LCORES ? "empty" : "none",
				keys[i].def[0] != '\0' ? "`" : "", keys[i].meaning);
		}
	}
}
