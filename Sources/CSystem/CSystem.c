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

/* The send ring: io_uring's submission and completion queues, mapped from the kernel.
 * The submission array maps slot i to entry i once, so queueing is: fill the entry at
 * the tail, publish the tail (release). Completions: read at the head up to the tail
 * (acquire), then publish the head (release). One thread at a time, so no lock. */
#ifdef __linux__
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/io_uring.h>

struct hearth_send_ring {
    int fd;
    unsigned entries;
    unsigned local_tail;
    unsigned *sq_head, *sq_tail, *sq_mask;
    struct io_uring_sqe *sqes;
    unsigned *cq_head, *cq_tail, *cq_mask;
    struct io_uring_cqe *cqes;
    void *sq_map, *cq_map;
    size_t sq_map_size, cq_map_size, sqes_size;
};

struct hearth_send_ring *hearth_send_ring_open(unsigned entries) {
    struct io_uring_params params;
    memset(&params, 0, sizeof(params));
    int fd = (int)syscall(__NR_io_uring_setup, entries, &params);
    if (fd < 0) return NULL;
    struct hearth_send_ring *ring = calloc(1, sizeof(*ring));
    if (!ring) { close(fd); errno = ENOMEM; return NULL; }
    ring->fd = fd;
    ring->entries = params.sq_entries;
    ring->sq_map_size = params.sq_off.array + params.sq_entries * sizeof(unsigned);
    ring->cq_map_size = params.cq_off.cqes + params.cq_entries * sizeof(struct io_uring_cqe);
    int single = (params.features & IORING_FEAT_SINGLE_MMAP) != 0;
    if (single) {
        if (ring->cq_map_size > ring->sq_map_size) ring->sq_map_size = ring->cq_map_size;
        ring->cq_map_size = ring->sq_map_size;
    }
    ring->sq_map = mmap(NULL, ring->sq_map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                        IORING_OFF_SQ_RING);
    if (ring->sq_map == MAP_FAILED) goto fail;
    if (single) {
        ring->cq_map = ring->sq_map;
    } else {
        ring->cq_map = mmap(NULL, ring->cq_map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                            IORING_OFF_CQ_RING);
        if (ring->cq_map == MAP_FAILED) { ring->cq_map = NULL; goto fail; }
    }
    ring->sqes_size = params.sq_entries * sizeof(struct io_uring_sqe);
    ring->sqes = mmap(NULL, ring->sqes_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                      IORING_OFF_SQES);
    if (ring->sqes == MAP_FAILED) { ring->sqes = NULL; goto fail; }
    char *sq = ring->sq_map, *cq = ring->cq_map;
    ring->sq_head = (unsigned *)(sq + params.sq_off.head);
    ring->sq_tail = (unsigned *)(sq + params.sq_off.tail);
    ring->sq_mask = (unsigned *)(sq + params.sq_off.ring_mask);
    unsigned *array = (unsigned *)(sq + params.sq_off.array);
    for (unsigned index = 0; index < params.sq_entries; index++) array[index] = index;
    ring->cq_head = (unsigned *)(cq + params.cq_off.head);
    ring->cq_tail = (unsigned *)(cq + params.cq_off.tail);
    ring->cq_mask = (unsigned *)(cq + params.cq_off.ring_mask);
    ring->cqes = (struct io_uring_cqe *)(cq + params.cq_off.cqes);
    ring->local_tail = *ring->sq_tail;
    return ring;
fail: {
        int saved = errno;
        hearth_send_ring_close(ring);
        errno = saved;
        return NULL;
    }
}

void hearth_send_ring_close(struct hearth_send_ring *ring) {
    if (!ring) return;
    if (ring->sqes) munmap(ring->sqes, ring->sqes_size);
    if (ring->cq_map && ring->cq_map != MAP_FAILED && ring->cq_map != ring->sq_map) munmap(ring->cq_map, ring->cq_map_size);
    if (ring->sq_map && ring->sq_map != MAP_FAILED) munmap(ring->sq_map, ring->sq_map_size);
    close(ring->fd);
    free(ring);
}

unsigned hearth_send_ring_capacity(const struct hearth_send_ring *ring) { return ring->entries; }

int hearth_send_ring_queue(struct hearth_send_ring *ring, int fd, const void *bytes, size_t length, uint64_t tag) {
    unsigned head = __atomic_load_n(ring->sq_head, __ATOMIC_ACQUIRE);
    if (ring->local_tail - head >= ring->entries || length > 0x7fffffffu) return -1;
    struct io_uring_sqe *sqe = &ring->sqes[ring->local_tail & *ring->sq_mask];
    memset(sqe, 0, sizeof(*sqe));
    sqe->opcode = IORING_OP_SEND;
    sqe->fd = fd;
    sqe->addr = (uint64_t)(uintptr_t)bytes;
    sqe->len = (uint32_t)length;
    sqe->msg_flags = MSG_NOSIGNAL | MSG_DONTWAIT;
    sqe->user_data = tag;
    ring->local_tail++;
    __atomic_store_n(ring->sq_tail, ring->local_tail, __ATOMIC_RELEASE);
    return 0;
}

unsigned hearth_send_ring_unsubmitted(const struct hearth_send_ring *ring) {
    return ring->local_tail - __atomic_load_n(ring->sq_head, __ATOMIC_ACQUIRE);
}

int hearth_send_ring_enter(struct hearth_send_ring *ring, unsigned submit, unsigned wait) {
    return (int)syscall(__NR_io_uring_enter, ring->fd, submit, wait, wait > 0 ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
}

int hearth_send_ring_reap(struct hearth_send_ring *ring, uint64_t *tag, int32_t *result) {
    unsigned head = *ring->cq_head;
    if (head == __atomic_load_n(ring->cq_tail, __ATOMIC_ACQUIRE)) return 0;
    const struct io_uring_cqe *cqe = &ring->cqes[head & *ring->cq_mask];
    *tag = cqe->user_data;
    *result = cqe->res;
    __atomic_store_n(ring->cq_head, head + 1, __ATOMIC_RELEASE);
    return 1;
}
#endif
