/* protobuf-c as a bench side (side_pb.c): the common workloads' rows only. */
#ifndef MPK_BENCH_SIDE_PB_H
#define MPK_BENCH_SIDE_PB_H

#include "side.h"

#include <protobuf-c/protobuf-c.h>

extern const bench_side bench_side_pb;
/* The message the next decodes unpack (the row's workload's), set before each row. */
void bench_pb_set_message(const ProtobufCMessageDescriptor *d);

#endif
