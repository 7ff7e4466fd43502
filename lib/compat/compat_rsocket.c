/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * librdmacm's rsockets (rsocket(7)) are not implemented on droce: each call fails with ENOSYS
 * and does nothing. They are exported because Debian's rping, ucmatose, udaddy, mckey and
 * cmtime import rpoll (from rdma-core's examples/common.c, never called) and are linked with
 * immediate binding: without the symbol they would not start. doc/compat.md lists them.
 */
#include <errno.h>

#include "compat_rdmacm_private.h"

#define REFUSE(ret) do { errno = ENOSYS; return (ret); } while (0)

int rsocket(int domain, int type, int protocol)
{
	(void)domain, (void)type, (void)protocol;
	REFUSE(-1);
}

int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	REFUSE(-1);
}

int rlisten(int socket, int backlog)
{
	(void)socket, (void)backlog;
	REFUSE(-1);
}

int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	REFUSE(-1);
}

int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	REFUSE(-1);
}

int rshutdown(int socket, int how)
{
	(void)socket, (void)how;
	REFUSE(-1);
}

int rclose(int socket)
{
	(void)socket;
	REFUSE(-1);
}

ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	REFUSE(-1);
}

ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
		  socklen_t *addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)src_addr, (void)addrlen;
	REFUSE(-1);
}

ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	REFUSE(-1);
}

ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	REFUSE(-1);
}

ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		const struct sockaddr *dest_addr, socklen_t addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)dest_addr, (void)addrlen;
	REFUSE(-1);
}

ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	REFUSE(-1);
}

ssize_t rread(int socket, void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	REFUSE(-1);
}

ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	REFUSE(-1);
}

ssize_t rwrite(int socket, const void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	REFUSE(-1);
}

ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	REFUSE(-1);
}

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	(void)fds, (void)nfds, (void)timeout;
	REFUSE(-1);
}

int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{
	(void)nfds, (void)readfds, (void)writefds, (void)exceptfds, (void)timeout;
	REFUSE(-1);
}

int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	REFUSE(-1);
}

int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	REFUSE(-1);
}

int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	REFUSE(-1);
}

int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	REFUSE(-1);
}

int rfcntl(int socket, int cmd, ...)
{
	(void)socket, (void)cmd;
	REFUSE(-1);
}

off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)socket, (void)buf, (void)len, (void)prot, (void)flags, (void)offset;
	REFUSE(-1);
}

int riounmap(int socket, void *buf, size_t len)
{
	(void)socket, (void)buf, (void)len;
	REFUSE(-1);
}

size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	(void)socket, (void)buf, (void)count, (void)offset, (void)flags;
	REFUSE(0);	/* riowrite returns the bytes written: none */
}
