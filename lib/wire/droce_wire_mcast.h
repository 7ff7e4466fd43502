/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/**
 * @file
 * RoCE v2 multicast addressing: which GIDs are multicast groups, the Ethernet MAC a group maps
 * to, and the QP number multicast packets carry in the BTH.
 *
 * A group is an IPv6 multicast address (ff00::/8) or, for RoCE v2 over IPv4, an IPv4-mapped
 * class D address (::ffff:224.0.0.0/100), as Linux's rdma_is_multicast_addr(). Its MAC is the
 * IP multicast mapping (RFC 1112 section 6.4, RFC 2464 section 7): 01:00:5e and the low 23 bits
 * of the IPv4 address; 33:33 and the low 32 bits of the IPv6 address.
 */
#ifndef DROCE_WIRE_MCAST_H
#define DROCE_WIRE_MCAST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>

#ifdef __cplusplus
extern "C" {
#endif

/** BTH DestQP of every multicast packet (IBA 10.5.2.6: the multicast QPN). */
#define DROCE_MCAST_QPN 0x00ffffffu

/** True when @p gid (16 bytes) is IPv4-mapped (::ffff:a.b.c.d). */
static inline bool droce_gid_is_v4mapped(const uint8_t gid[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(gid, pfx, sizeof(pfx)) == 0;
}

/** True when @p gid (16 bytes) is a multicast group: ff00::/8 or ::ffff:224.0.0.0/4. */
static inline bool droce_gid_is_mcast(const uint8_t gid[16])
{
	if (gid[0] == 0xff)
		return true;
	return droce_gid_is_v4mapped(gid) && (gid[12] & 0xf0) == 0xe0;
}

/** The Ethernet MAC of multicast group @p gid (droce_gid_is_mcast() must be true). */
static inline void droce_mcast_mac(const uint8_t gid[16], struct rte_ether_addr *mac)
{
	uint8_t *a = mac->addr_bytes;

	if (droce_gid_is_v4mapped(gid)) {
		a[0] = 0x01;
		a[1] = 0x00;
		a[2] = 0x5e;
		a[3] = gid[13] & 0x7f;
		a[4] = gid[14];
		a[5] = gid[15];
		return;
	}
	a[0] = 0x33;
	a[1] = 0x33;
	memcpy(a + 2, gid + 12, 4);
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_MCAST_H */
