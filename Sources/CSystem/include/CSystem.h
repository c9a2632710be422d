#ifndef HEARTH_CSYSTEM_H
#define HEARTH_CSYSTEM_H
#include <sys/socket.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/epoll.h>  /* epoll_create1, epoll_ctl, epoll_wait: not in Swift's Glibc module */
#include <sys/eventfd.h>  /* eventfd: not in Swift's Glibc module either */

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC; not visible from Swift's Glibc module.
int hearth_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

/// Fills `out` from an IPv4 or IPv6 address literal ("127.0.0.1", "::1") and a port.
/// Pure (inet_pton, no syscall). Returns the address family, or -1 if `host` is not a literal.
int hearth_sockaddr_make(const char *host, unsigned short port,
                         struct sockaddr_storage *out, socklen_t *len);

/// The port of an AF_INET/AF_INET6 address in host byte order, or -1.
int hearth_sockaddr_port(const struct sockaddr_storage *address);

/// Writes the address as text ("127.0.0.1", "::1") into `buffer`, NUL-terminated.
/// Returns 0, or -1 for an unknown family or a buffer that is too small.
int hearth_sockaddr_format(const struct sockaddr_storage *address, char *buffer, size_t length);

/// Returns freed heap memory at the top of glibc's arenas and whole free pages inside them
/// to the system (malloc_trim(0)). Returns 1 if memory was released, 0 if not or when the
/// C library has no malloc_trim.
int hearth_malloc_trim(void);

#endif
