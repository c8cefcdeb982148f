// Thin C shim for CNGHTTP2: includes the real header plus prefixed inline helpers.
#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>
#endif
