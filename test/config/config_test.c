/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The configuration parser's refusals (lib/verbs/verbs_config.c against the key table): each
 * bad file gives EINVAL and the exact "FILE:LINE: ..." message; the table's defaults are what
 * a missing key means. No EAL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "verbs_config.h"
#include "verbs_private.h"

static char path[64];

/* @p ini parsed; @p want the message, NULL for none. */
static void expect(const char *ini, int rc, const char *want)
{
	char err[512] = "", full[600];
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	fputs(ini, f);
	fclose(f);
	CHECK_EQ(verbs_config_check_file(path, err, sizeof(err)), rc);
	if (want == NULL)
		return;
	snprintf(full, sizeof(full), "%s:%s", path, want);
	if (strcmp(err, full) != 0) {
		fprintf(stderr, "for:\n%s\ngot:  %s\nwant: %s\n", ini, err, full);
		exit(1);
	}
}

#define DEV "[device d0]\nring_pair = p\n"

int main(void)
{
	struct verbs_kv kv[2] = { { "mbufs", "" }, { "rxd", "0x10" } };

	snprintf(path, sizeof(path), "/tmp/droce_config_test_%d.ini", (int)getpid());
	expect("[eal]\nargs = --no-huge\n" DEV "mtu = 9000\n", 0, NULL);
	expect("; c\n[engine]\nmbufz = 10\n", -EINVAL,
	       "3: unknown key 'mbufz' in [engine]; did you mean 'mbufs'?");
	expect("[engin]\n", -EINVAL, "1: unknown section [engin]; did you mean [engine]?");
	expect("[devices d0]\n", -EINVAL,
	       "1: unknown section [devices d0]; did you mean [device d0]?");
	expect("[port0]\nbsiz = 1\n", -EINVAL, "1: unknown section [port0]; the sections are "
	       "[eal], [engine], [cm], [dcqcn] and [device NAME] (doc/configuration.md)");
	expect("[engine]\nmtu = 1500\n", -EINVAL,
	       "2: unknown key 'mtu' in [engine]; 'mtu' belongs in [device NAME]");
	expect("[cm]\nzzz = 1\n", -EINVAL,
	       "2: unknown key 'zzz' in [cm]; the keys of [cm] are in doc/configuration.md");
	expect(DEV "mtu = 70000\n", -EINVAL,
	       "3: bad value for 'mtu' in [device d0]: 70000 is above the maximum 65535");
	expect(DEV "mtu = 500\n", -EINVAL,
	       "3: bad value for 'mtu' in [device d0]: 500 is below the minimum 576");
	expect("[engine]\n\nmbufs = lots\n", -EINVAL,
	       "3: bad value for 'mbufs' in [engine]: 'lots' is not a number");
	expect("[dcqcn]\necn = ect2\n", -EINVAL,
	       "2: bad value for 'ecn' in [dcqcn]: 'ect2' is not one of ect0|ect1|off");
	expect(DEV "mac = 02:00\n", -EINVAL, "3: bad value for 'mac' in [device d0]: '02:00' is "
	       "not a MAC address (02:00:00:00:00:01)");
	expect("[engine]\nlcores = 1;x\nlcores = 2\n", -EINVAL,
	       "3: 'lcores' given twice in [engine] (also line 2)");
	expect("[engine]\nlcores = one\n", -EINVAL, "2: bad value for 'lcores' in [engine]: "
	       "'one' is not empty, auto, or a list of lcore ids (\"1,3\", \"1-2\")");
	expect("[cm]\n[cm]\n", -EINVAL, "2: [cm] given twice (also line 1)");
	expect("mbufs = 1\n", -EINVAL, "1: 'mbufs' comes before any [section]");
	expect("[engine]\nmbufs\n", -EINVAL,
	       "2: 'mbufs' is neither 'key = value' nor a [section]");
	expect("[device d0]\nmtu = 1500\n", -EINVAL, "1: [device d0] needs exactly one of "
	       "devargs (a DPDK port) and ring_pair (an in-process link)");
	expect(DEV "neigh = 10.0.0.1@02:00:00:00:00:01\nneigh = fe80::1@02:00:00:00:00:02\n", 0,
	       NULL);
	CHECK_EQ(verbs_config_check_file("/nonexistent/x.ini", path, sizeof(path)), -EIO);
	unlink(path);

	/* Missing and empty keys are the table's defaults; numbers may be hex. */
	CHECK_EQ(verbs_cfg_uint("engine", kv, 2, "mbufs"), 8191);
	CHECK_EQ(verbs_cfg_uint("engine", kv, 2, "rxd"), 16);
	CHECK_EQ(verbs_cfg_uint("engine", kv, 2, "txd"), 1024);
	CHECK_EQ(verbs_cfg_uint("cm", NULL, 0, "response_timeout"), 20);
	CHECK_EQ(verbs_cfg_uint("dcqcn", NULL, 0, "byte_reset"), 10485760);
	CHECK_EQ(verbs_cfg_check_kv("engine", kv, 2), 0);
	strcpy(kv[1].value, "40000");
	CHECK_EQ(verbs_cfg_check_kv("engine", kv, 2), -EINVAL);
	printf("ok\n");
	return 0;
}
