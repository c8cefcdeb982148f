// Thin C shim for CLibPQ: includes the real header plus prefixed inline helpers.
#ifndef CLibPQ_SHIM_H
#define CLibPQ_SHIM_H
#include <libpq-fe.h>

/// The error field codes are character macros, which Swift does not import.
static inline int CLibPQ_diagSQLState(void) { return PG_DIAG_SQLSTATE; }
static inline int CLibPQ_diagMessagePrimary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int CLibPQ_diagSeverityNonlocalized(void) { return PG_DIAG_SEVERITY_NONLOCALIZED; }
#endif
