// Thin C shim for RPCRuntime's I/O layer: Linux's epoll and eventfd and the
// BSD socket headers, plus prefixed inline helpers for what Swift cannot
// reach directly. epoll_event is a packed struct on x86-64 whose `data` is a
// union, so it is built and read here. MSG_NOSIGNAL and TCP_NODELAY are
// visible through this module even in whole-module builds without Foundation.
// Used by RPCRuntime's IO/ and by PostgresClient's socket reactor.
// No library to link: all of it is libc.
#ifndef CEVENTIO_SHIM_H
#define CEVENTIO_SHIM_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <errno.h>
#include <stdint.h>

/// Builds an epoll_event for one descriptor (data.fd; the rest zeroed).
static inline struct epoll_event CEventIO_epoll_event_make(uint32_t events, int fd) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = 0;
    event.data.fd = fd;
    return event;
}

/// Builds an epoll_event carrying a 64-bit token (data.u64) instead of a descriptor.
static inline struct epoll_event CEventIO_epoll_event_make_token(uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return event;
}

/// Arms `fd` in `epfd` with `event`: added the first time (`registered` 0),
/// modified afterwards, and retried the other way when the kernel dropped a
/// closed descriptor (ENOENT) or already holds a reused one (EEXIST).
/// Returns 0, or -1 with errno set.
static inline int CEventIO_epoll_arm(int epfd, int fd, struct epoll_event *event, int registered) {
    int status = epoll_ctl(epfd, registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, event);
    if (status != 0 && (errno == ENOENT || errno == EEXIST)) {
        status = epoll_ctl(epfd, errno == ENOENT ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, event);
    }
    return status;
}

/// The token of an event armed with CEventIO_epoll_event_make_token.
static inline uint64_t CEventIO_epoll_event_token(const struct epoll_event *event) { return event->data.u64; }

/// The descriptor an event returned by epoll_wait belongs to.
static inline int CEventIO_epoll_event_fd(const struct epoll_event *event) { return event->data.fd; }

/// The readiness bits of an event returned by epoll_wait.
static inline uint32_t CEventIO_epoll_event_events(const struct epoll_event *event) { return event->events; }

_Static_assert(sizeof(struct epoll_event) == 12 || sizeof(struct epoll_event) == 16, "unexpected epoll_event layout");

#endif
