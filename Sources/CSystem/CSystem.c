#define _GNU_SOURCE
#include "CSystem.h"
#include <arpa/inet.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int hearth_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    return accept4(fd, addr, len, flags);
}

int hearth_sockaddr_make(const char *host, unsigned short port,
                         struct sockaddr_storage *out, socklen_t *len) {
    memset(out, 0, sizeof(*out));
    struct sockaddr_in *v4 = (struct sockaddr_in *)out;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        *len = sizeof(struct sockaddr_in);
        return AF_INET;
    }
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)out;
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        *len = sizeof(struct sockaddr_in6);
        return AF_INET6;
    }
    return -1;
}

int hearth_sockaddr_port(const struct sockaddr_storage *address) {
    switch (address->ss_family) {
    case AF_INET: return ntohs(((const struct sockaddr_in *)address)->sin_port);
    case AF_INET6: return ntohs(((const struct sockaddr_in6 *)address)->sin6_port);
    default: return -1;
    }
}

int hearth_sockaddr_format(const struct sockaddr_storage *address, char *buffer, size_t length) {
    const void *raw;
    switch (address->ss_family) {
    case AF_INET: raw = &((const struct sockaddr_in *)address)->sin_addr; break;
    case AF_INET6: raw = &((const struct sockaddr_in6 *)address)->sin6_addr; break;
    default: return -1;
    }
    return inet_ntop(address->ss_family, raw, buffer, (socklen_t)length) ? 0 : -1;
}

int hearth_malloc_trim(void) {
#ifdef __GLIBC__
    return malloc_trim(0);
#else
    return 0;
#endif
}
