/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * EAL: started by droce when the application has not (env.h), and who owns it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "env.h"

#define EAL_MAX_ARGS 64		/**< argv entries: the program name, the args, NULL */
#define EAL_ARGS_LEN 512	/**< longest argument string taken whole */

/* Written by env_eal_start(), under its caller's lock; read with the same lock held. */
static bool own_eal;

int env_eal_start(const char *args)
{
	char buf[EAL_ARGS_LEN];
	char *argv[EAL_MAX_ARGS], *save = NULL, *tok;
	sigset_t sigs;
	int argc = 0, rc;

	if (rte_lcore_count() > 0)
		return 0;	/* the application's EAL */
	snprintf(buf, sizeof(buf), "%s", args);
	argv[argc++] = (char *)(uintptr_t)"droce";
	for (tok = strtok_r(buf, " \t", &save); tok != NULL && argc < EAL_MAX_ARGS - 1;
	     tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	/* EAL's threads (interrupts, telemetry, the lcores the engine runs on) are droce's. */
	env_signals_block(&sigs);
	rc = rte_eal_init(argc, argv);
	env_signals_restore(&sigs);
	if (rc < 0)
		return rte_errno == EALREADY ? 0 : -EIO;
	own_eal = true;
	/* DPDK logs to stdout by default; a library's diagnostics (the drop log among them)
	 * belong on stderr, so that the application's stdout stays its own. An application that
	 * starts EAL itself chooses with rte_openlog_stream(). */
	rte_openlog_stream(stderr);
	return 0;
}

bool env_eal_owned(void)
{
	return own_eal;
}

/* A number from sysfs, 0 when unreadable. */
static unsigned long sysfs_ulong(const char *path)
{
	unsigned long v = 0;
	FILE *f = fopen(path, "r");

	if (f != NULL) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* The MiB that -m N or --socket-mem N[,...] asks for, 0 if neither. */
static unsigned long args_mb(const char *args)
{
	const char *p;

	for (p = args; (p = strstr(p, "-m")) != NULL; p += 2)
		if ((p == args || p[-1] == ' ' || p[-1] == '\t') && (p[2] == ' ' || p[2] == '\t'))
			return strtoul(p + 3, NULL, 10);
	p = strstr(args, "--socket-mem");
	return p != NULL ? strtoul(p + 13, NULL, 10) : 0;
}

#define HUGEPAGES_2M "/sys/kernel/mm/hugepages/hugepages-2048kB/"

/* Whether a hugetlbfs is mounted anywhere. */
static bool hugetlbfs_mounted(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, " hugetlbfs ") != NULL;
	if (f != NULL)
		fclose(f);
	return found;
}

void env_eal_explain(const char *args, int err, char *buf, size_t len)
{
	bool no_huge = strstr(args, "--no-huge") != NULL;
	unsigned long mb = args_mb(args), need = mb != 0 ? (mb + 1) / 2 : 256;
	unsigned long free_pages = sysfs_ulong(HUGEPAGES_2M "free_hugepages");
	char without[96];

	snprintf(without, sizeof(without), "or run without hugepages: add --no-huge -m %lu to "
		 "[eal] args", mb != 0 ? mb : 512);
	if (err == EINVAL)
		snprintf(buf, len, "EAL refused an argument of [eal] args (DPDK's message above "
			 "names it); they are DPDK's EAL options (dpdk-testpmd --help lists them)");
	else if (!no_huge && free_pages < need)
		snprintf(buf, len, "hugepages: %lu free 2 MiB pages, %lu needed for %s%lu MiB: "
			 "reserve them with 'echo %lu | sudo tee %snr_hugepages', %s", free_pages,
			 need, mb != 0 ? "-m " : "about ", 2 * need, need, HUGEPAGES_2M, without);
	else if (!no_huge && !hugetlbfs_mounted())
		snprintf(buf, len, "hugepages: %lu free 2 MiB pages but no hugetlbfs mounted: "
			 "'sudo mount -t hugetlbfs nodev /dev/hugepages', %s", free_pages, without);
	else if (!no_huge)
		snprintf(buf, len, "hugepages: %lu free 2 MiB pages and a hugetlbfs mount, which "
			 "EAL could not use%s: run as root (or with CAP_SYS_ADMIN and CAP_IPC_LOCK, "
			 "write access to the mount and --iova-mode=va), %s", free_pages,
			 strstr(args, "--huge-dir") != NULL ? " (--huge-dir must name a hugetlbfs "
			 "mount)" : "", without);
	else if (err == EACCES || err == EPERM)
		snprintf(buf, len, "permission denied: run as root (or with CAP_SYS_ADMIN, "
			 "CAP_IPC_LOCK and CAP_NET_RAW), or add --no-shconf (or --in-memory) to "
			 "[eal] args so that EAL needs no /var/run/dpdk");
	else if (err == ENOMEM)
		snprintf(buf, len, "not enough memory for EAL's -m %lu MiB: lower -m in [eal] args "
			 "or free memory", mb);
	else
		snprintf(buf, len, "%s (DPDK's message above says where); check [eal] args",
			 rte_strerror(err));
}
