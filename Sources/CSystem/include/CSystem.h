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

#include <stdint.h>

/// A ring of socket sends handed to the kernel many at a time (io_uring, from the kernel's
/// own interface: no liburing). Used by one thread at a time.
struct hearth_send_ring;

/// Sets up a ring of at least `entries` sends. NULL with errno set when the kernel refuses
/// (ENOSYS: no io_uring; EPERM: disabled by sysctl or a seccomp filter; ENOMEM): nothing is
/// left open then.
struct hearth_send_ring *hearth_send_ring_open(unsigned entries);

/// Unmaps the ring and closes its descriptor. Nothing may be in flight.
void hearth_send_ring_close(struct hearth_send_ring *ring);

/// How many sends the ring holds at once.
unsigned hearth_send_ring_capacity(const struct hearth_send_ring *ring);

/// Queues a send of `length` bytes at `bytes` to `fd` (MSG_NOSIGNAL | MSG_DONTWAIT: a full
/// socket completes with -EAGAIN, never waits), tagged `tag`. The bytes must stay put until
/// its completion is reaped. Returns 0, or -1 when the ring is full or `length` is more
/// than one send can carry.
int hearth_send_ring_queue(struct hearth_send_ring *ring, int fd, const void *bytes, size_t length, uint64_t tag);

/// Queued sends the kernel has not taken yet.
unsigned hearth_send_ring_unsubmitted(const struct hearth_send_ring *ring);

/// io_uring_enter(2): submits `submit` queued sends and waits until `wait` completions are
/// ready. Returns what the call returns (-1 with errno on failure: the caller retries EINTR).
int hearth_send_ring_enter(struct hearth_send_ring *ring, unsigned submit, unsigned wait);

/// Takes the oldest completion: 1 with its tag and result (bytes sent, or -errno), or 0
/// when none is ready.
int hearth_send_ring_reap(struct hearth_send_ring *ring, uint64_t *tag, int32_t *result);

#endif
