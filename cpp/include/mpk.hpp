// mpk.hpp — typed MessagePack for C++17 on libmpk (the C core). See cpp/README.md.
//
//   mpk/error.hpp     error kinds, mpk::error_info, mpk::error, mpk::result<T>
//   mpk/types.hpp     bytes_view, ext, timestamp, raw, options
//   mpk/stack.hpp     the stack guard of the recursive codecs (mpk::stack_margin)
//   mpk/writer.hpp    mpk::writer
//   mpk/decoder.hpp   mpk::decoder (used by codecs)
//   mpk/codec.hpp     mpk::codec<T> for the standard types
//   mpk/describe.hpp  MPK_FIELDS, MPK_FIELDS_MAP, MPK_DESCRIBE, MPK_DESCRIBE_MAP
//   mpk/aggregate.hpp plain aggregates with no macro (array of their fields)
//   mpk/api.hpp       pack, unpack, mpk::reader
//   mpk/value.hpp     mpk::document and mpk::value, the dynamic view on the core's DOM
//   mpk/stream.hpp    mpk::stream, values from chunks of any size
#ifndef MPK_HPP
#define MPK_HPP

#include "mpk/aggregate.hpp"
#include "mpk/api.hpp"
#include "mpk/codec.hpp"
#include "mpk/decoder.hpp"
#include "mpk/describe.hpp"
#include "mpk/error.hpp"
#include "mpk/stack.hpp"
#include "mpk/stream.hpp"
#include "mpk/types.hpp"
#include "mpk/value.hpp"
#include "mpk/writer.hpp"

#endif
