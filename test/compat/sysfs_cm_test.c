/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The sysfs pair of the drop-in (ibv_get_sysfs_path, ibv_read_sysfs_file) called with
 * rdma-core's prototypes, as librdmacm calls them, then the system's librdmacm itself loaded
 * on the drop-in:
 * - ibv_get_sysfs_path() returns one path, every call the same, without a trailing '/';
 * - the files librdmacm (class/misc/rdma_cm/abi_version, class/infiniband_ucma/abi_version),
 *   libibverbs (class/infiniband_verbs/abi_version) and ibv_devinfo (<ibdev_path>/board_id)
 *   read there cannot be read, and each device's paths lie under it;
 * - ibv_read_sysfs_file() on real files: a final newline is dropped, content that would not
 *   fit with its terminator fails;
 * - rdma_create_event_channel() (librdmacm's ucma_init: ibv_get_sysfs_path, the device list)
 *   returns, a channel or NULL with errno set; it is printed. Before the drop-in had
 *   rdma-core's signature it crashed there (SIGSEGV in snprintf).
 * The drop-in is the only libibverbs.so.1 in the process, so librdmacm's calls reach it.
 */
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "check.h"
#include "compat_rdma_core_private.h"

static int count_libibverbs(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	base = base != NULL ? base + 1 : info->dlpi_name;
	if (strcmp(base, "libibverbs.so.1") == 0) {
		printf("loaded: %s\n", info->dlpi_name);
		++*(int *)arg;
	}
	return 0;
}

static void write_file(const char *dir, const char *name, const char *content)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fputs(content, f);
	CHECK(fclose(f) == 0);
}

/* ibv_read_sysfs_file() on files that exist (libibverbs' semantics). */
static void test_read_file(void)
{
	char dir[] = "/tmp/droce-sysfs-XXXXXX";
	char buf[8], path[256];

	CHECK(mkdtemp(dir) != NULL);
	write_file(dir, "nl", "12\n");
	write_file(dir, "raw", "abcd");
	write_file(dir, "empty", "");
	CHECK_EQ(ibv_read_sysfs_file(dir, "nl", buf, sizeof(buf)), 2);
	CHECK(strcmp(buf, "12") == 0);
	CHECK_EQ(ibv_read_sysfs_file(dir, "raw", buf, sizeof(buf)), 4);
	CHECK(strcmp(buf, "abcd") == 0);
	CHECK_EQ(ibv_read_sysfs_file(dir, "raw", buf, 4), -1);	/* no room for the terminator */
	CHECK_EQ(ibv_read_sysfs_file(dir, "nl", buf, 3), 2);	/* the newline's byte holds it */
	CHECK(strcmp(buf, "12") == 0);
	CHECK_EQ(ibv_read_sysfs_file(dir, "empty", buf, sizeof(buf)), 0);
	CHECK_EQ(ibv_read_sysfs_file(dir, "missing", buf, sizeof(buf)), -1);
	for (const char *n = "nl\0raw\0empty\0"; *n != '\0'; n += strlen(n) + 1) {
		snprintf(path, sizeof(path), "%s/%s", dir, n);
		CHECK(unlink(path) == 0);
	}
	CHECK(rmdir(dir) == 0);
}

static void test_sysfs_path(void)
{
	static const char *const files[] = {
		"class/misc/rdma_cm/abi_version",	/* librdmacm */
		"class/infiniband_ucma/abi_version",	/* librdmacm, older kernels */
		"class/infiniband_verbs/abi_version",	/* libibverbs */
	};
	struct ibv_device **list;
	const char *sysfs = ibv_get_sysfs_path();
	size_t len;
	char buf[64];
	int i, n = 0;

	CHECK(sysfs != NULL);
	printf("ibv_get_sysfs_path() = \"%s\"\n", sysfs);
	CHECK(ibv_get_sysfs_path() == sysfs);
	len = strlen(sysfs);
	CHECK(len > 1 && sysfs[0] == '/' && sysfs[len - 1] != '/');
	for (i = 0; i < (int)(sizeof(files) / sizeof(files[0])); i++)
		CHECK_EQ(ibv_read_sysfs_file(sysfs, files[i], buf, sizeof(buf)), -1);
	list = ibv_get_device_list(&n);
	CHECK(list != NULL && n > 0);
	for (i = 0; i < n; i++) {
		printf("%s: ibdev_path %s, dev_path %s\n", list[i]->name, list[i]->ibdev_path,
		       list[i]->dev_path);
		CHECK(strncmp(list[i]->ibdev_path, sysfs, len) == 0);
		CHECK(strncmp(list[i]->dev_path, sysfs, len) == 0);
		CHECK_EQ(ibv_read_sysfs_file(list[i]->ibdev_path, "board_id", buf, sizeof(buf)), -1);
	}
	ibv_free_device_list(list);
}

static void test_rdmacm(void)
{
	struct rdma_event_channel *ch;
	int n = 0;

	dl_iterate_phdr(count_libibverbs, &n);
	CHECK_EQ(n, 1);
	errno = 0;
	ch = rdma_create_event_channel();
	if (ch == NULL) {
		printf("rdma_create_event_channel() = NULL, errno %d (%s)\n", errno,
		       strerror(errno));
		CHECK(errno != 0);
		return;
	}
	printf("rdma_create_event_channel() = a channel, fd %d\n", ch->fd);
	rdma_destroy_event_channel(ch);
}

int main(void)
{
	test_read_file();
	test_sysfs_path();
	test_rdmacm();
	return 0;
}
