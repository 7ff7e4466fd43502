/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The drop log: the first frame a device drops for each reason is logged once (NOTICE, rte_log
 * type droce.engine) with its key fields - addresses, opcode, QPN, PSN, length - so that a
 * misconfigured peer shows up in the log without flooding it; later drops of that reason are
 * only counted. With droce.engine at DEBUG every drop is logged.
 *
 * Reasons are the device counters that count a dropped frame (engine_drop_reason) and the
 * parser's rejection reasons (ENGINE_DROP_PARSE(err)). The engine's own drop sites call
 * engine_drop(); the transport's are the verdicts transport_rx() returns, one per DROP
 * counter of DROCE_TRANSPORT_COUNTERS (engine_tdrop()). Only the owner of the device runs any
 * of this.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>

#include "engine_private.h"

/* The counter index of each transport verdict: the reason it names. */
static const uint16_t tdrop_reason[TRANSPORT_VERDICT_NUM] = {
#define TDROP_REASON(name, disposition, desc) \
	TRANSPORT_IF_DROP(disposition, [TRANSPORT_DROP_##name] = ECNT_##name,)
	DROCE_TRANSPORT_COUNTERS(TDROP_REASON)
#undef TDROP_REASON
};

/* ---- Key fields ---- */

static void key_from_pkt(struct engine_drop_key *k, const struct droce_pkt *pkt,
			 uint32_t qpn, uint32_t psn)
{
	memset(k, 0, sizeof(*k));
	k->has_ip = k->has_bth = true;
	k->ipv6 = pkt->ipv6;
	memcpy(k->sgid, pkt->sgid, 16);
	memcpy(k->dgid, pkt->dgid, 16);
	k->opcode = pkt->opcode;
	k->qpn = qpn;
	k->psn = psn;
	k->len = pkt->frame_len;
}

/* What can be read of a frame the parser rejected: never past its first segment. */
void engine_drop_key_mbuf(struct engine_drop_key *k, const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len, off = RTE_ETHER_HDR_LEN, l4 = 0;
	uint16_t type;

	memset(k, 0, sizeof(*k));
	k->len = rte_pktmbuf_pkt_len(m);
	if (len < RTE_ETHER_HDR_LEN)
		return;
	memcpy(k->src.addr_bytes, p + 6, 6);
	memcpy(k->dst.addr_bytes, p, 6);
	k->has_mac = true;
	type = (uint16_t)(p[12] << 8 | p[13]);
	if (type == RTE_ETHER_TYPE_VLAN && len >= off + 4) {
		type = (uint16_t)(p[16] << 8 | p[17]);
		off += 4;
	}
	k->ethertype = type;
	if (type == RTE_ETHER_TYPE_IPV4 && len >= off + 20) {
		k->sgid[10] = k->sgid[11] = k->dgid[10] = k->dgid[11] = 0xff;
		memcpy(&k->sgid[12], p + off + 12, 4);
		memcpy(&k->dgid[12], p + off + 16, 4);
		k->has_ip = true;
		l4 = p[off + 9] == IPPROTO_UDP ? off + (uint32_t)(p[off] & 0xf) * 4 : 0;
	} else if (type == RTE_ETHER_TYPE_IPV6 && len >= off + 40) {
		memcpy(k->sgid, p + off + 8, 16);
		memcpy(k->dgid, p + off + 24, 16);
		k->has_ip = k->ipv6 = true;
		l4 = p[off + 6] == IPPROTO_UDP ? off + 40 : 0;
	}
	if (l4 != 0 && len >= l4 + 8 + 12) {	/* UDP, then BTH */
		const uint8_t *b = p + l4 + 8;

		k->has_bth = true;
		k->opcode = b[0];
		k->qpn = (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
		k->psn = (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
	}
}

/* ---- Logging ---- */

static void addr_str(char *s, size_t n, const uint8_t gid[16], bool v6)
{
	if (v6)
		snprintf(s, n, "%x:%x:%x:%x:%x:%x:%x:%x",
			 gid[0] << 8 | gid[1], gid[2] << 8 | gid[3], gid[4] << 8 | gid[5],
			 gid[6] << 8 | gid[7], gid[8] << 8 | gid[9], gid[10] << 8 | gid[11],
			 gid[12] << 8 | gid[13], gid[14] << 8 | gid[15]);
	else
		snprintf(s, n, "%u.%u.%u.%u", gid[12], gid[13], gid[14], gid[15]);
}

static void key_str(char *s, size_t n, const struct engine_drop_key *k)
{
	char src[48], dst[48];
	int w = 0;

	if (k->has_ip) {
		addr_str(src, sizeof(src), k->sgid, k->ipv6);
		addr_str(dst, sizeof(dst), k->dgid, k->ipv6);
		w = snprintf(s, n, "%s -> %s", src, dst);
	} else if (k->has_mac) {
		rte_ether_format_addr(src, sizeof(src), &k->src);
		rte_ether_format_addr(dst, sizeof(dst), &k->dst);
		w = snprintf(s, n, "%s -> %s ethertype 0x%04x", src, dst, k->ethertype);
	} else {
		w = snprintf(s, n, "(no Ethernet header)");
	}
	if (w >= 0 && (size_t)w < n && k->has_bth)
		w += snprintf(s + w, n - (size_t)w, " opcode 0x%02x QPN 0x%06x PSN %u", k->opcode,
			      k->qpn, k->psn);
	if (w >= 0 && (size_t)w < n)
		snprintf(s + w, n - (size_t)w, ", %u bytes", k->len);
}

const char *engine_drop_reason_name(unsigned int reason, char *s, size_t n)
{
	unsigned int i;
	int w;

	if (reason < ECNT_NUM) {
		snprintf(s, n, "%s", droce_counter_name(reason));
		return transport_counter_desc(reason);
	}
	reason -= ECNT_NUM;
	w = snprintf(s, n, "parse_err_%s", droce_parse_err_name((enum droce_parse_err)reason));
	for (i = sizeof("parse_err_") - 1; w > 0 && i < (unsigned int)w && i < n; i++)
		s[i] = (char)tolower((unsigned char)s[i]);
	return droce_parse_err_str((enum droce_parse_err)reason);
}

void engine_drop_log(struct engine_shard *edev, unsigned int reason,
		     const struct engine_drop_key *k)
{
	const char *name = verbs_device_cfg(edev->dev)->name, *desc;
	char r[64], key[160];
	bool first = !engine_drop_logged(edev, reason);

	desc = engine_drop_reason_name(reason, r, sizeof(r));
	key_str(key, sizeof(key), k);
	if (first) {
		edev->drop_logged[reason / 64] |= 1ull << (reason % 64);
		ENGINE_LOG(NOTICE, "%s: dropped a frame: %s (%s): %s; further drops of this reason "
			   "are counted, not logged", name, r, desc, key);
	} else {
		ENGINE_LOG(DEBUG, "%s: dropped: %s: %s", name, r, key);
	}
}

/* ---- The transport's drops ---- */

void engine_tdrop_log(struct engine_shard *edev, enum transport_verdict v,
		      const struct droce_pkt *pkt, uint32_t qpn, uint32_t psn)
{
	unsigned int reason = tdrop_reason[v];
	struct engine_drop_key k;

	if (!engine_drop_wanted(edev, reason))
		return;
	key_from_pkt(&k, pkt, qpn, psn);
	engine_drop_log(edev, reason, &k);
}

void engine_drop_raw(struct engine_shard *edev, unsigned int reason, const struct rte_mbuf *m)
{
	struct engine_drop_key k;

	engine_drop_key_mbuf(&k, m);
	engine_drop_log(edev, reason, &k);
}
