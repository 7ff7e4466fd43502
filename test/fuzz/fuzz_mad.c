/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * libFuzzer target for the CM MAD codec (droce_wire_mad.h): any byte string, as a MAD in
 * libFuzzer's exact-size buffer, is rejected with a named reason (TRUNCATED exactly when it is
 * shorter than 256 bytes) or decoded; the header is decoded from its bytes whenever 24 are
 * there. A decoded MAD builds to 256 bytes that decode to the same struct and build again to
 * the same bytes, with the header's bytes kept. The CMA header of a REQ or SIDR_REQ parses or
 * is refused, and one that parses builds to bytes that parse the same.
 */

#include <stdlib.h>
#include <string.h>

#include "droce_wire_mad.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n-- != 0)
		v = v << 8 | *p++;
	return v;
}

/* The header as decoded is the header's bytes (IBA 13.4.3). */
static void check_header(const struct droce_mad_hdr *h, const uint8_t *m)
{
	if (h->base_version != m[0] || h->mgmt_class != m[1] || h->class_version != m[2] ||
	    h->method != m[3] || h->status != be(m + 4, 2) || h->class_specific != be(m + 6, 2) ||
	    h->tid != be(m + 8, 8) || h->attr_id != be(m + 16, 2) || h->attr_mod != be(m + 20, 4))
		abort();
}

static void check_cma(const uint8_t *pdata)
{
	struct droce_cma_hdr h, h2;
	uint8_t out[DROCE_CMA_HDR_LEN];

	if (!droce_cma_hdr_parse(pdata, &h))
		return;
	if (h.version != DROCE_CMA_VERSION || (h.ip_version != 4 && h.ip_version != 6))
		abort();
	droce_cma_hdr_build(&h, out);
	if (!droce_cma_hdr_parse(out, &h2) || memcmp(&h, &h2, sizeof(h)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct droce_cm_mad a, b;
	uint8_t out[DROCE_MAD_LEN], again[DROCE_MAD_LEN];
	enum droce_mad_err e;

	memset(&a, 0, sizeof(a));
	e = droce_mad_parse(data, size, &a);
	if ((unsigned int)e >= DROCE_MAD_ERR_NUM ||
	    (size < DROCE_MAD_LEN) != (e == DROCE_MAD_TRUNCATED))
		abort();
	if (size >= DROCE_MAD_HDR_LEN)
		check_header(&a.hdr, data);
	if (e != DROCE_MAD_OK)
		return 0;
	if (droce_cm_attr_name(a.hdr.attr_id) == NULL)
		abort();
	droce_mad_build(&a, out);
	/* the header's bytes are kept, but for the reserved 16 bits at byte 18 */
	if (memcmp(out, data, 18) != 0 || memcmp(out + 20, data + 20, 4) != 0)
		abort();
	memset(&b, 0, sizeof(b));
	if (droce_mad_parse(out, sizeof(out), &b) != DROCE_MAD_OK || memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	droce_mad_build(&b, again);
	if (memcmp(out, again, sizeof(out)) != 0)
		abort();
	if (a.hdr.attr_id == DROCE_CM_ATTR_REQ)
		check_cma(a.u.req.private_data);
	else if (a.hdr.attr_id == DROCE_CM_ATTR_SIDR_REQ)
		check_cma(a.u.sidr_req.private_data);
	return 0;
}
