/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * droce-present NDEV PROGRAM [ARGS...]: droce-run -p's helper (doc/compat.md, "Device
 * presence"). Runs PROGRAM in a private mount namespace where droce's devices are where
 * middleware looks for RDMA devices, without touching the host's /dev and /sys:
 *
 * - /dev is a tmpfs holding a bind mount of each entry of the host's /dev (symlinks copied),
 *   plus /dev/infiniband/uverbs0..NDEV-1, each a bind mount of /dev/null: a character device
 *   that every user may read and write, which is what UCX checks (stat(), S_ISCHR(),
 *   access(R_OK | W_OK)); droce's libibverbs never opens it;
 * - /sys/class likewise, plus empty /sys/class/infiniband and /sys/class/infiniband_verbs
 *   that droce's libibverbs fills with the devices' attributes (DROCE_PRESENT=1,
 *   lib/compat/compat_present.c).
 *
 * As root: unshare(CLONE_NEWNS). Otherwise, or where that is refused: a user namespace too,
 * mapping the caller's own uid and gid only, so PROGRAM runs as the caller (its capabilities
 * in the namespace end at exec). Where neither is permitted: a message and exit 2.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEV 64

static void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "droce-run: -p: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die("cannot write %s: %s", path, strerror(errno));
	close(fd);
}

/* A user namespace mapping only the caller's uid and gid (setgroups denied, as an
 * unprivileged writer of gid_map must). */
static int user_namespace(void)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	char map[64];

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
		return -1;
	write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1", (unsigned int)uid, (unsigned int)uid);
	write_file("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "%u %u 1", (unsigned int)gid, (unsigned int)gid);
	write_file("/proc/self/gid_map", map);
	return 0;
}

static void private_namespace(void)
{
	int err;

	if (geteuid() == 0 && unshare(CLONE_NEWNS) == 0)
		goto done;
	if (user_namespace() == 0)
		goto done;
	err = errno;
	die("cannot make a private mount namespace (unshare: %s): here user namespaces are not "
	    "permitted to this user (kernel.unprivileged_userns_clone, user.max_user_namespaces, "
	    "a container's seccomp or AppArmor policy); run as root, or without -p",
	    strerror(err));
done:
	/* Nothing done below propagates to the host's mounts. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		die("cannot make / private: %s", strerror(errno));
}

/* Bind mount @p src (a path under /proc/self/fd/N) onto a new @p dst of the same kind. */
static void bind_entry(const char *src, const char *dst, mode_t type)
{
	int fd;

	if (S_ISDIR(type)) {
		if (mkdir(dst, 0755) != 0)
			die("cannot make %s: %s", dst, strerror(errno));
	} else {
		fd = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			die("cannot make %s: %s", dst, strerror(errno));
		close(fd);
	}
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0)
		die("cannot bind %s onto %s: %s", src, dst, strerror(errno));
}

/*
 * Cover @p dir with a tmpfs that shows the same entries (bind mounts of the originals,
 * reached through a descriptor opened before the cover) and can take new ones; entries
 * starting with @p hide (the host's own RDMA devices, if any) are left out. @return the
 * descriptor of the original directory.
 */
static int cover(const char *dir, const char *hide)
{
	char src[PATH_MAX], dst[PATH_MAX], target[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd;
	ssize_t n;

	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die("cannot open %s: %s", dir, strerror(errno));
	d = opendir(dir);
	if (d == NULL)
		die("cannot list %s: %s", dir, strerror(errno));
	if (mount("droce", dir, "tmpfs", MS_NOSUID, "mode=0755") != 0)
		die("cannot mount a tmpfs on %s: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strncmp(e->d_name, hide, strlen(hide)) == 0)
			continue;
		snprintf(src, sizeof(src), "/proc/self/fd/%d/%s", fd, e->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", dir, e->d_name);
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;	/* gone meanwhile */
		if (S_ISLNK(st.st_mode)) {
			n = readlinkat(fd, e->d_name, target, sizeof(target) - 1);
			if (n < 0)
				die("cannot read the link %s/%s: %s", dir, e->d_name,
				    strerror(errno));
			target[n] = '\0';
			if (symlink(target, dst) != 0)
				die("cannot make %s: %s", dst, strerror(errno));
			continue;
		}
		bind_entry(src, dst, st.st_mode);
	}
	closedir(d);
	return fd;
}

int main(int argc, char **argv)
{
	char src[PATH_MAX], dst[PATH_MAX], *end;
	long ndev;
	int dev_fd, i, err;

	if (argc < 3)
		die("usage: droce-present NDEV PROGRAM [ARGS...]");
	ndev = strtol(argv[1], &end, 10);
	if (*end != '\0' || ndev < 0 || ndev > MAX_DEV)
		die("bad device count '%s'", argv[1]);
	private_namespace();
	dev_fd = cover("/dev", "infiniband");
	if (mkdir("/dev/infiniband", 0755) != 0)
		die("cannot make /dev/infiniband: %s", strerror(errno));
	snprintf(src, sizeof(src), "/proc/self/fd/%d/null", dev_fd);
	for (i = 0; i < ndev; i++) {
		snprintf(dst, sizeof(dst), "/dev/infiniband/uverbs%d", i);
		bind_entry(src, dst, S_IFCHR);
	}
	close(dev_fd);
	close(cover("/sys/class", "infiniband"));
	if (mkdir("/sys/class/infiniband", 0755) != 0 ||
	    mkdir("/sys/class/infiniband_verbs", 0755) != 0)
		die("cannot make /sys/class/infiniband: %s", strerror(errno));
	if (setenv("DROCE_PRESENT", "1", 1) != 0)
		die("setenv: %s", strerror(errno));
	execvp(argv[2], argv + 2);
	err = errno;
	fprintf(stderr, "droce-run: %s: %s\n", argv[2], strerror(err));
	return err == ENOENT ? 127 : 126;
}
