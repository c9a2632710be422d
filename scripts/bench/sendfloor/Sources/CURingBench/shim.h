#include <liburing.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

/* accept4 without the peer's address (Swift cannot pass NULL for glibc's transparent
   union argument). */
static inline int sendfloor_accept(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC); }
