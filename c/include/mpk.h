/* mpk.h — MessagePack for C99: writer, pull reader, streaming unpacker, DOM. See c/README.md. */
#ifndef MPK_H
#define MPK_H

#include "mpk/common.h"
#include "mpk/writer.h"
#include "mpk/reader.h"
#include "mpk/stream.h"
#include "mpk/dom.h"

#endif
