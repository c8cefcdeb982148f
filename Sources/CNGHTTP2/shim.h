// Thin C shim for CNGHTTP2: includes the real header plus prefixed inline
// helpers. RPCRuntime's I/O layer also reaches Linux's epoll/eventfd and
// OpenSSL through this module (COpenSSL's shim belongs to another owner), so
// those headers are included here and macros get `CRPC_` wrappers.
#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <errno.h>

/// Builds an epoll_event (a packed struct on x86-64) for one descriptor.
static inline struct epoll_event CRPC_epoll_event_make(uint32_t events, int fd) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = 0;
    event.data.fd = fd;
    return event;
}

static inline int CRPC_epoll_event_fd(const struct epoll_event *event) { return event->data.fd; }
static inline uint32_t CRPC_epoll_event_events(const struct epoll_event *event) { return event->events; }

_Static_assert(sizeof(struct epoll_event) == 12 || sizeof(struct epoll_event) == 16, "unexpected epoll_event layout");

#endif
