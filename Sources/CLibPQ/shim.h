// Thin C shim for CLibPQ: includes the real header plus prefixed inline helpers.
#ifndef CLibPQ_SHIM_H
#define CLibPQ_SHIM_H
#include <libpq-fe.h>
#endif
