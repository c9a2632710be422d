#ifndef HEARTH_CSYSTEM_H
#define HEARTH_CSYSTEM_H
#include <sys/socket.h>
/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC; not visible from Swift's Glibc module.
int hearth_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
#endif
