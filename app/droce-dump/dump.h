/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/* droce-dump: what the pcap loop (droce_dump.c) and the printers (dump_print.c) share. */
#ifndef DUMP_H
#define DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "droce_wire.h"
#include "droce_wire_mad.h"

/** One captured frame and what droce made of it. */
struct dump_frame {
	uint32_t number;             /**< 1-based, as tshark counts */
	uint64_t time_ns;            /**< since the first frame of the file */
	const uint8_t *data;
	uint32_t caplen;             /**< bytes captured */
	uint32_t len;                /**< bytes on the wire */
	int roce;                    /**< sent to UDP port 4791 (or too short to tell) */
	int snapped;                 /**< cut short, its headers whole (a flight recording):
				      *   parsed as if the rest were zeros, the ICRC unchecked */
	enum droce_parse_err err;    /**< RoCE v2: parse result; otherwise why it is not RoCE v2 */
	int family;                  /**< AF_INET, AF_INET6, or 0: @src/@dst are MAC addresses */
	const uint8_t *src;          /**< source address in @data, NULL if not captured */
	const uint8_t *dst;
	int tagged;                  /**< an 802.1Q tag after the MACs: @tci */
	uint16_t tci;                /**< its PCP (3 bits), DEI and VLAN id */
	int tos;                     /**< IPv4 TOS / IPv6 traffic class, -1 if not IP */
	struct droce_pkt pkt;        /**< see dump_frame_parsed() */
	int gsi;                     /**< a UD SEND to QP 1 whose headers parsed: a MAD */
	enum droce_mad_err mad_err;  /**< @gsi: what droce_mad_parse() made of its payload */
	struct droce_cm_mad mad;     /**< @gsi: the MAD (its header once 24 bytes are there) */
};

/** Whether @p f's headers were all parsed (so its pkt is complete): OK or only the ICRC bad. */
static inline int dump_frame_parsed(const struct dump_frame *f)
{
	return f->roce && (f->err == DROCE_PARSE_OK || f->err == DROCE_PARSE_BAD_ICRC);
}

/** Decode the payload of @p f as a MAD if @p f is a UD SEND to QP 1 (dump_cm.c). */
void dump_decode_mad(struct dump_frame *f);

/** The MAD of a UD SEND to QP 1 on its frame's line: header and key fields, or the reason. */
void dump_print_mad(FILE *o, const struct dump_frame *f);

/** What a MAD rejection reason means ("shorter than 256 bytes"...). */
const char *dump_mad_err_str(enum droce_mad_err err);

/** One human-readable line for any frame, tshark-like. */
void dump_print_frame(FILE *o, const struct dump_frame *f);

/** Header line of the --fields output: '#' and the column names, tab-separated. */
void dump_print_fields_header(FILE *o);

/** One --fields line for a RoCE v2 frame (nothing for other frames). */
void dump_print_fields(FILE *o, const struct dump_frame *f);

/** The --fields column names, one per line, indented, for the usage text. */
void dump_print_fields_help(FILE *o);

#endif /* DUMP_H */
