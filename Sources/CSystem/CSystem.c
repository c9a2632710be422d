#define _GNU_SOURCE
#include "CSystem.h"
int hearth_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    return accept4(fd, addr, len, flags);
}
