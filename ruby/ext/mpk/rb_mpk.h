/* rb_mpk.h — what the Ruby extension's files share. The codec itself is the C core (c/src),
 * compiled into the extension; these files only turn Ruby objects into core calls and back. */
#ifndef RB_MPK_H
#define RB_MPK_H

#include <ruby.h>
#include <ruby/encoding.h>

#include <mpk.h>

/* RB_MPK_ASAN_DEAD_STACK(): for the AddressSanitizer build only (`make test-ruby-asan`); nothing
 * otherwise. CRuby raises with __builtin_longjmp, which ASan does not intercept, so when an exception
 * leaves our (instrumented) functions their frames' redzones stay poisoned in the shadow memory
 * (instrumented code poisons redzones on entry and clears them on return, which a longjmp skips). A
 * later call on that thread whose locals land where a stale redzone lies is then reported as an
 * invalid stack store, and ASan aborts while describing it ("CHECK failed: asan_thread.cpp:371
 * ... kCurrentStackFrameMagic"): the abort stream_server_spec hit once the packer's frame sizes
 * changed, on a store into rb_mpk_decode's own local. The macro unpoisons the stack below the
 * caller's frame -- dead memory, as ASan itself does before a noreturn call -- at each place where
 * Ruby enters the codec or gets control back from Ruby code (callbacks, IO). */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define RB_MPK_ASAN_DEAD_STACK() __asan_handle_no_return()
#else
#define RB_MPK_ASAN_DEAD_STACK() ((void)0)
#endif

/* Containers nested deeper than this are refused when packing (the C stack is the packer's
 * recursion stack); the same number as the decoders' default depth limit. */
#define RB_MPK_PACK_DEPTH 1024

extern VALUE mMPK, cPacker, cUnpacker, cExtensionValue, cTimestamp;
extern VALUE eUnpackError, eMalformedFormatError, eStackError, eLengthLimitError, eUnexpectedTypeError,
    eUnknownExtTypeError, eTruncatedError, ePackError, eUnsupportedTypeError, eInvalidTimestampError;
extern ID id_call, id_kind, id_offset, id_to_msgpack, id_sec, id_nsec, id_new, id_write, id_readpartial;

/* Raises `klass` with "<message> at byte <offset>", @kind = :kind, @offset = offset (nil when
 * offset < 0). */
NORETURN(void rb_mpk_raise(VALUE klass, const char *kind, long long offset, const char *fmt, ...));
/* Raises the class for a core decode error kind, at `offset`. */
NORETURN(void rb_mpk_raise_decode(mpk_error_kind kind, unsigned long long offset));

/* Decoding options shared by MPK.unpack and Unpacker. */
typedef struct rb_mpk_uopts {
    mpk_limits limits;
    unsigned flags;           /* MPK_FLAG_STRICT_UTF8 */
    int symbolize_keys;
    int freeze;
    int allow_unknown_ext;
    VALUE pairs_class;        /* private (interop driver): a map becomes a pairs_class (an Array
                                 subclass) of [k, v] pairs, so duplicate keys and order survive */
    VALUE f32_class;          /* private (interop driver): float 32 becomes f32_class.new(value) */
    VALUE ext_types;          /* Hash: Integer type => [class, proc, recursive] (or Qnil) */
} rb_mpk_uopts;

void rb_mpk_uopts_init(rb_mpk_uopts *o);
void rb_mpk_uopts_mark(rb_mpk_uopts *o);
/* Reads the options hash (symbolize_keys, freeze, allow_unknown_ext, limits, strict_utf8, ...). */
void rb_mpk_uopts_parse(rb_mpk_uopts *o, VALUE hash);

/* Decodes exactly one value from data[0..len) (trailing bytes are an error when `whole`);
 * `src` is the Ruby String holding the bytes (frozen), or Qnil when they are in C memory (then
 * nothing is shared with it). Error offsets are shifted by `base`. Sets *used to the bytes read. */
VALUE rb_mpk_decode(const rb_mpk_uopts *o, VALUE src, const uint8_t *data, size_t len, unsigned long long base,
                    int whole, size_t *used);

void rb_mpk_init_packer(void);
void rb_mpk_init_unpacker(void);

#endif
