// Thin C shim for CNGHTTP2: includes nghttp2's header and nothing else.
// RPCRuntime's epoll, eventfd and socket helpers live in CEventIO.
#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>
#endif
