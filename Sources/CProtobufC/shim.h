// Thin C shim for CProtobufC: includes the real header plus prefixed inline helpers.
#ifndef CProtobufC_SHIM_H
#define CProtobufC_SHIM_H
#include <protobuf-c/protobuf-c.h>
#endif
