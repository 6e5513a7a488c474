/* rb_mpk.c — the extension's entry point, its errors, the decoding options and the decoder that
 * turns one MessagePack value (read by the core's mpk_reader) into Ruby objects.
 *
 * The decoder does not recurse: open arrays and maps live in a frame stack that grows with the
 * nesting the input actually has (bounded by limits.depth). The decoder is a local of
 * rb_mpk_decode (the GC's scan of the C stack keeps the half-built containers' first values alive;
 * a small Ruby object marks the rest once they outgrow it), and an rb_ensure releases the stacks
 * and the reader's own stack even if a callback (an ext type's unpacker proc) raises. */
#include "rb_mpk.h"

#include <ruby/ractor.h>

#include <ruby/version.h>
#include <stdarg.h>
#include <stdio.h>

VALUE mMPK, cPacker, cUnpacker, cExtensionValue, cTimestamp;
VALUE eUnpackError, eMalformedFormatError, eStackError, eLengthLimitError, eUnexpectedTypeError,
    eUnknownExtTypeError, eTruncatedError, ePackError, eUnsupportedTypeError, eInvalidTimestampError;
ID id_call, id_kind, id_offset, id_to_msgpack, id_sec, id_nsec, id_new, id_write, id_readpartial;
static ID id_iv_kind, id_iv_offset;
static VALUE sym_symbolize_keys, sym_freeze, sym_allow_unknown_ext, sym_strict_utf8, sym_limits, sym_depth,
    sym_str, sym_bin, sym_ext, sym_array, sym_map, sym_pairs, sym_float32, sym_ext_types;

/* ================================================================================================
 * Errors
 * ==============================================================================================*/

void rb_mpk_raise(VALUE klass, const char *kind, long long offset, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    VALUE text = rb_vsprintf(fmt, ap); /* no length cap: a packing error's path can be long */
    va_end(ap);
    if (offset >= 0) rb_str_catf(text, " at byte %lld", offset);
    VALUE exc = rb_exc_new_str(klass, text);
    rb_ivar_set(exc, id_iv_kind, ID2SYM(rb_intern(kind)));
    rb_ivar_set(exc, id_iv_offset, offset >= 0 ? LL2NUM(offset) : Qnil);
    rb_exc_raise(exc);
}

void rb_mpk_raise_decode(mpk_error_kind kind, unsigned long long offset) {
    VALUE klass;
    const char *what;
    switch (kind) {
    case MPK_ERR_TRUNCATED: klass = eTruncatedError; what = "input ends inside a value"; break;
    case MPK_ERR_INVALID_BYTE: klass = eMalformedFormatError; what = "invalid byte 0xc1"; break;
    case MPK_ERR_DEPTH_LIMIT: klass = eStackError; what = "nesting deeper than the depth limit"; break;
    case MPK_ERR_LENGTH_LIMIT: klass = eLengthLimitError; what = "length over its limit"; break;
    case MPK_ERR_INVALID_TIMESTAMP: klass = eMalformedFormatError; what = "invalid timestamp"; break;
    case MPK_ERR_INVALID_UTF8: klass = eMalformedFormatError; what = "str is not valid UTF-8"; break;
    case MPK_ERR_TRAILING_BYTES: klass = eMalformedFormatError; what = "extra bytes after the value"; break;
    case MPK_ERR_NO_MEMORY: rb_memerror();
    default: klass = eMalformedFormatError; what = "malformed input"; break;
    }
    rb_mpk_raise(klass, mpk_error_name(kind), (long long)offset, "%s: %s", mpk_error_name(kind), what);
}

/* ================================================================================================
 * Options
 * ==============================================================================================*/

void rb_mpk_uopts_init(rb_mpk_uopts *o) {
    memset(o, 0, sizeof *o);
    o->limits = mpk_limits_default();
    o->pairs_class = Qnil;
    o->f32_class = Qnil;
    o->ext_types = Qnil;
}

void rb_mpk_uopts_mark(rb_mpk_uopts *o) {
    rb_gc_mark(o->f32_class);
    rb_gc_mark(o->pairs_class);
    rb_gc_mark(o->ext_types);
}

static uint32_t limit_value(VALUE v, const char *name) {
    if (!RB_INTEGER_TYPE_P(v)) rb_raise(rb_eTypeError, "limit %s must be an Integer", name);
    long long n = NUM2LL(v);
    if (n < 0 || n > 4294967295LL) rb_raise(rb_eRangeError, "limit %s must be 0..4294967295", name);
    return (uint32_t)n;
}

void rb_mpk_uopts_parse(rb_mpk_uopts *o, VALUE hash) {
    if (NIL_P(hash)) return;
    Check_Type(hash, T_HASH);
    o->symbolize_keys = RTEST(rb_hash_lookup2(hash, sym_symbolize_keys, Qfalse));
    o->freeze = RTEST(rb_hash_lookup2(hash, sym_freeze, Qfalse));
    o->allow_unknown_ext = RTEST(rb_hash_lookup2(hash, sym_allow_unknown_ext, Qfalse));
    o->flags = RTEST(rb_hash_lookup2(hash, sym_strict_utf8, Qfalse)) ? MPK_FLAG_STRICT_UTF8 : 0;
    VALUE lim = rb_hash_lookup2(hash, sym_limits, Qnil);
    if (!NIL_P(lim)) {
        Check_Type(lim, T_HASH);
        VALUE v;
        if (!NIL_P(v = rb_hash_lookup2(lim, sym_depth, Qnil))) o->limits.depth = limit_value(v, "depth");
        if (!NIL_P(v = rb_hash_lookup2(lim, sym_str, Qnil))) o->limits.str = limit_value(v, "str");
        if (!NIL_P(v = rb_hash_lookup2(lim, sym_bin, Qnil))) o->limits.bin = limit_value(v, "bin");
        if (!NIL_P(v = rb_hash_lookup2(lim, sym_ext, Qnil))) o->limits.ext = limit_value(v, "ext");
        if (!NIL_P(v = rb_hash_lookup2(lim, sym_array, Qnil))) o->limits.array = limit_value(v, "array");
        if (!NIL_P(v = rb_hash_lookup2(lim, sym_map, Qnil))) o->limits.map = limit_value(v, "map");
    }
    o->pairs_class = rb_hash_lookup2(hash, sym_pairs, Qnil);
    o->f32_class = rb_hash_lookup2(hash, sym_float32, Qnil);
    VALUE ext = rb_hash_lookup2(hash, sym_ext_types, Qnil);
    if (!NIL_P(ext)) Check_Type(ext, T_HASH);
    o->ext_types = ext;
}

/* ================================================================================================
 * Decoder
 * ==============================================================================================*/

/* An open array or map: its elements so far sit on the decoder's value stack from `base` on, and
 * the container is built in one go when its last element arrives (rb_ary_new_from_values,
 * rb_hash_bulk_insert), so nothing is reserved for a declared count: memory grows only with the
 * values actually decoded, each of which took at least one input byte. */
typedef struct frame {
    size_t base;     /* where its elements start on the value stack */
    uint64_t want;   /* values it holds when complete (maps: 2 per pair) */
    uint8_t is_map;
} frame;

#define SMALL_FRAMES 16
#define SMALL_VALUES 64
#define KEY_CACHE 256        /* slots; a power of two */
#define KEY_CACHE_MAX_LEN 64

/* The decoder lives on rb_mpk_decode's C stack (decoder_on_stack), where CRuby's conservative
 * stack scan marks the values in small_vals. Once the value stack outgrows small_vals onto the
 * heap, `holder` (a hidden object pointing back at the decoder until the decode ends) marks them. */
typedef struct decoder {
    mpk_reader r;
    int reader_live;
    frame *frames;
    uint32_t n, cap;
    VALUE *vals;             /* the value stack: elements of the open containers */
    size_t nvals, vcap;
    VALUE holder;            /* Qnil until vals is on the heap */
    struct key_cache *keys;  /* this Ractor's key cache (see key_cache) */
    VALUE keys_holder;       /* Qnil, or the object owning a one-decode cache (MPK._key_cache = false) */
    frame small[SMALL_FRAMES];
    VALUE small_vals[SMALL_VALUES];
} decoder;

static void decoder_mark(void *p) {
    decoder *d = p;
    if (!d) return; /* the decode has ended */
    for (size_t i = 0; i < d->nvals; i++) rb_gc_mark(d->vals[i]);
}

static size_t decoder_memsize(const void *p) {
    const decoder *d = p;
    return d ? (d->frames != d->small ? d->cap * sizeof(frame) : 0) + (d->vals != d->small_vals ? d->vcap * sizeof(VALUE) : 0)
             : 0;
}

/* no free function: the decoder is on the C stack and rb_mpk_decode's cleanup frees its arrays */
static const rb_data_type_t decoder_type = {
    "MPK::Decoder", {decoder_mark, NULL, decoder_memsize, NULL}, NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY};

static void *grow_array(void *old, void *small, size_t used, size_t *cap, size_t elem) {
    size_t ncap = *cap * 2;
    void *p = malloc(ncap * elem);
    if (!p) rb_memerror();
    memcpy(p, old, used * elem);
    if (old != small) free(old);
    *cap = ncap;
    return p;
}

/* A new frame; the stack grows only with nesting the input has shown (each level is a head byte). */
static frame *push_frame(decoder *d) {
    if (d->n == d->cap) {
        size_t cap = d->cap;
        d->frames = grow_array(d->frames, d->small, d->n, &cap, sizeof(frame));
        d->cap = (uint32_t)cap;
    }
    return &d->frames[d->n++];
}

static MPK__NOINLINE void grow_vals(decoder *d) {
    /* the holder first (making it may run the GC, which must still find every value) */
    if (NIL_P(d->holder)) d->holder = TypedData_Wrap_Struct(0, &decoder_type, d);
    d->vals = grow_array(d->vals, d->small_vals, d->nvals, &d->vcap, sizeof(VALUE));
}

static void push_value(decoder *d, VALUE v) {
    if (MPK__UNLIKELY(d->nvals == d->vcap)) grow_vals(d);
    d->vals[d->nvals++] = v;
}

/* Speed trick (hash_presize): a map's Hash is made at its final size (the pairs are all on the
 * value stack by then) with CRuby's rb_hash_new_with_size, which `{k => v, ...}` literals use, so
 * rb_hash_bulk_insert finds its table ready. From rb_hash_new, a map of more than 8 pairs got a
 * default st_table first (two mallocs), then a second one at the right size (three more), and
 * four frees. libruby 3.0-3.1 exports the function without declaring it in its public headers,
 * so it is declared here when extconf.rb found it; MPK._hash_presize = false (and Rubies without
 * it) take rb_hash_new. Instructions a decode (callgrind, the same build both ways): twitter.json
 * 15.48M -> 15.23M, the Ruby seed's Twitter response 614k -> 589k, citm_catalog 32.29M -> 32.27M,
 * Product (maps of up to 8 pairs, which were not doubly made) 8.25k -> 8.27k. */
#if defined(HAVE_RB_HASH_NEW_WITH_SIZE)
VALUE rb_hash_new_with_size(st_index_t size);
static int hash_presize_ok = 1;
#else
static int hash_presize_ok = 0;
#endif

static inline VALUE new_hash(long pairs) {
#if defined(HAVE_RB_HASH_NEW_WITH_SIZE)
    if (MPK__LIKELY(hash_presize_ok)) return rb_hash_new_with_size((st_index_t)pairs);
#endif
    return rb_hash_new();
}

/* MPK._hash_presize? / MPK._hash_presize = bool (private, for the specs) */
static VALUE mpk_s_hash_presize_p(VALUE mod) { return hash_presize_ok ? Qtrue : Qfalse; }
static VALUE mpk_s_set_hash_presize(VALUE mod, VALUE on) {
#if defined(HAVE_RB_HASH_NEW_WITH_SIZE)
    hash_presize_ok = RTEST(on);
#endif
    return on;
}

/* The container of frame f, from its values on the stack (which it then pops). */
static VALUE build_container(decoder *d, const rb_mpk_uopts *o, frame *f) {
    const VALUE *items = d->vals + f->base;
    long n = (long)f->want;
    VALUE v;
    if (!f->is_map) {
        v = rb_ary_new_from_values(n, items);
    } else if (NIL_P(o->pairs_class)) {
        v = new_hash(n / 2);
        rb_hash_bulk_insert(n, items, v);
    } else {
        v = rb_class_new_instance(0, NULL, o->pairs_class);
        for (long i = 0; i < n; i += 2) rb_ary_push(v, rb_assoc_new(items[i], items[i + 1]));
    }
    d->nvals = f->base;
    if (o->freeze) rb_obj_freeze(v);
    return v;
}

VALUE rb_mpk_unpacker_for_payload(const rb_mpk_uopts *o, VALUE payload); /* rb_unpacker.c */


/* A map key: a frozen, deduplicated String (or its Symbol with symbolize_keys). Records repeat
 * their keys, and interning hashes the bytes and looks them up in CRuby's table of frozen
 * strings (about 540 instructions a key), which is then done again by the Hash insert; so keys of
 * up to 64 bytes go through a cache that compares the bytes with the key last seen at the same
 * slot. 64 slots of keys up to 32 bytes missed a third of twitter.json's keys (7300 interned a
 * decode); 256 slots, up to 64 bytes, a slot hash over the first and last 8 bytes: twitter.json
 * unpack 16.0M -> 14.1M instructions a call, Test1 6.4k -> 4.3k (callgrind, bench/icount.rb;
 * msgpack-ruby 22.7M and 12.2k). A miss (or a collision) takes the plain path, which the cache then
 * remembers: the result is the same interned String either way.
 *
 * Speed trick (key_cache): the cache outlives the decode, one per Ractor (Ractor-local storage, so
 * Ractors never share it), so small messages, whose keys each appear once, find them from the
 * previous message on. Instructions a call (callgrind, bench/icount.rb --ids), with
 * decoder_on_stack: Product unpack 12.3k -> 7.8k, js/protobufjs-bench 24.2k -> 15.3k,
 * js/msgpack-lite-example 42.1k -> 25.1k, the image record 13.5k -> 9.4k (msgpack-ruby 21.7k,
 * 33.7k, 58.6k, 23.6k): every key of those was interned anew at each decode.
 * It keeps at most 256 interned keys (and their Symbols) alive; they are marked (pinned), so they
 * stay valid under GC.compact.
 *
 * Speed trick (key_probe): a key may sit in any of KEY_WAYS slots from its hashed slot on, not only
 * in that one, and each slot keeps a 32-bit tag of its key's hash, so a probe that finds another key
 * there fails on the tag without reading the String. Direct-mapped, twitter.json's 94 distinct keys
 * took 78 of the 256 slots: 16 slots held two or three keys that alternate in every record ("id",
 * "url" and "in_reply_to_screen_name" share one), so 3984 of its 13345 keys missed at every decode
 * and were interned again. A miss takes a free slot of the KEY_WAYS, else the one `victim` turns
 * to (round the ways). Instructions a decode (callgrind, same process shape, old build vs new):
 * twitter.json 17.91M -> 15.46M (msgpack-ruby 27.1M), citm_catalog 32.15M -> 32.23M (321
 * distinct keys: misses 1084 -> 145 a decode, paid for by the probes), Product 7.89k -> 7.92k,
 * js/protobufjs-bench 15.4k -> 14.3k. CPU time, alternating processes, 7 rounds: twitter.json
 * unpack 1861 -> 1534 us (msgpack-ruby 3140 us). The fallback is KEY_WAYS 1
 * (MPK._key_probe = false): the direct-mapped cache. Misses are counted (MPK._key_cache_misses,
 * for the specs). */
#define KEY_WAYS 4
typedef struct key_cache {
    uint32_t tag[KEY_CACHE]; /* 0: the slot is free; else bits of its key's hash (see key_hash) */
    VALUE str[KEY_CACHE];    /* interned key Strings ... */
    VALUE sym[KEY_CACHE];    /* ... and their Symbols once asked for (else Qfalse) */
    unsigned victim;         /* the way a miss with no free way replaces next */
    unsigned long long misses; /* keys of 1 to KEY_CACHE_MAX_LEN bytes not found */
} key_cache;

static void key_cache_mark(void *p) {
    key_cache *c = p;
    if (!c) return;
    for (int i = 0; i < KEY_CACHE; i++) {
        if (!c->tag[i]) continue;
        rb_gc_mark(c->str[i]); /* pins: the slots are never updated by GC.compact */
        rb_gc_mark(c->sym[i]);
    }
}

static void key_cache_free(void *p) { xfree(p); }

/* Ractor-local: marked while its Ractor lives, freed when it ends */
static const struct rb_ractor_local_storage_type key_cache_storage = {key_cache_mark, key_cache_free};
static rb_ractor_local_key_t key_cache_slot;
static int key_cache_enabled = 1; /* MPK._key_cache = false: a fresh cache for every decode */
static unsigned key_ways = KEY_WAYS; /* MPK._key_probe = false: 1 (direct-mapped) */

static size_t key_cache_memsize(const void *p) { return sizeof(key_cache); }
/* a cache for one decode (MPK._key_cache = false), owned by a hidden object */
static const rb_data_type_t key_cache_type = {
    "MPK::KeyCache", {key_cache_mark, key_cache_free, key_cache_memsize, NULL}, NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY};

/* This Ractor's cache (made on first use); with the cache off, a fresh one whose owner goes in
 * *holder (kept alive by the decoder, on the C stack, until the decode ends). */
static key_cache *get_key_cache(VALUE *holder) {
    *holder = Qnil;
    if (MPK__LIKELY(key_cache_enabled)) {
        key_cache *c = rb_ractor_local_storage_ptr(key_cache_slot);
        if (MPK__LIKELY(c != NULL)) return c;
        c = ZALLOC(key_cache); /* zeroed: no slot in use */
        rb_ractor_local_storage_ptr_set(key_cache_slot, c);
        return c;
    }
    key_cache *c;
    *holder = TypedData_Make_Struct(0, key_cache, &key_cache_type, c);
    return c;
}

/* A hash of a key's first and last 8 bytes and its length: the top 8 bits pick its first slot, the
 * 32 below them (never 0) are its tag, so most slots holding another key fail on the tag alone. */
static inline uint64_t key_hash(const uint8_t *data, uint32_t len) {
    uint64_t a, b;
    if (len >= 8) {
        memcpy(&a, data, 8);
        memcpy(&b, data + len - 8, 8);
    } else {
        a = b = 0;
        memcpy(&a, data, len);
    }
    return (a * 0x9E3779B97F4A7C15ull) ^ (b + len) * 0xC2B2AE3D27D4EB4Full;
}

/* The key at slot `at` if it is the one asked for (its tag matched), else Qundef. */
static inline VALUE key_at(key_cache *c, unsigned at, const rb_mpk_uopts *o, const uint8_t *data, uint32_t len,
                           int encidx) {
    VALUE k = c->str[at];
    if (MPK__UNLIKELY(RSTRING_LEN(k) != (long)len || RB_ENCODING_GET_INLINED(k) != encidx ||
                      memcmp(RSTRING_PTR(k), data, len) != 0))
        return Qundef;
    if (!o->symbolize_keys) return k;
    if (c->sym[at] == Qfalse) c->sym[at] = rb_str_intern(k);
    return c->sym[at];
}

static VALUE make_key(decoder *d, const rb_mpk_uopts *o, const uint8_t *data, uint32_t len, int encidx) {
    key_cache *c = d->keys;
    unsigned slot = KEY_CACHE;
    uint32_t tag = 0;
    if (len && len <= KEY_CACHE_MAX_LEN) {
        uint64_t h = key_hash(data, len);
        unsigned first = (unsigned)(h >> 56) & (KEY_CACHE - 1), free_slot = KEY_CACHE;
        tag = (uint32_t)(h >> 24) | 1;
        VALUE k;
        /* its own slot first, straight-line: most keys are there */
        if (MPK__LIKELY(c->tag[first] == tag) && (k = key_at(c, first, o, data, len, encidx)) != Qundef) return k;
        if (!c->tag[first]) free_slot = first;
        for (unsigned w = 1; w < key_ways; w++) { /* key_probe */
            unsigned at = (first + w) & (KEY_CACHE - 1);
            uint32_t t = c->tag[at];
            if (t == tag) {
                if ((k = key_at(c, at, o, data, len, encidx)) != Qundef) return k;
            } else if (!t && free_slot == KEY_CACHE) {
                free_slot = at;
            }
        }
    c->misses++;
        if (free_slot != KEY_CACHE) {
            slot = free_slot;
        } else {
            slot = (first + c->victim % key_ways) & (KEY_CACHE - 1);
            c->victim++;
        }
    }
    VALUE s = rb_enc_interned_str((const char *)data, len, rb_enc_from_index(encidx));
    VALUE out = o->symbolize_keys ? rb_str_intern(s) : s;
    if (slot < KEY_CACHE) {
        c->str[slot] = s;
        c->sym[slot] = o->symbolize_keys ? out : Qfalse;
        c->tag[slot] = tag;
    }
    return out;
}

static int enc_utf8, enc_binary; /* encoding indexes, looked up once */

/* A new String of len bytes in encoding encidx. rb_utf8_str_new / rb_enc_str_new go through
 * rb_enc_associate_index (about 140 instructions: it looks the encoding up, checks the String's
 * current one and clears its coderange); a String just made by rb_str_new is ASCII-8BIT with an
 * unknown coderange, so setting the index in its flags is all that is needed (5700 Strings a
 * twitter.json decode; see make_key for the measurement). An index too big to sit in the flags (never UTF-8 or binary,
 * which CRuby numbers 0-2) takes the general call. */
static inline VALUE new_string(const uint8_t *data, uint32_t len, int encidx) {
    VALUE s = rb_str_new((const char *)data, len);
    if (encidx == enc_binary) return s;
    if (MPK__LIKELY(encidx < RUBY_ENCODING_INLINE_MAX)) RB_ENCODING_SET_INLINED(s, encidx);
    else rb_enc_associate_index(s, encidx);
    return s;
}

/* A str or bin of 256 bytes or more is handed out without copying its bytes: a copy-on-write
 * String sharing the buffer of MPK.unpack's input (src, a frozen String; Qnil for the Unpacker,
 * whose buffer is its own and is reused, so its values are always copies). Writing to either
 * String later copies first (CRuby un-shares), so neither sees the other's changes; the shared
 * value keeps the whole input buffer alive while it lives, as any substring does. Returns Qundef
 * where it does not apply (the value is then copied by new_string). */
#define SHARE_MIN 256

/* The portable path (share_tail): CRuby 3.1's public API (rb_str_subseq) shares a substring's
 * buffer only when it ends where its String ends (SHARABLE_MIDDLE_SUBSTRING is 0), so only a str
 * or bin that ends the input is shared (the image of a record, a payload last in its message);
 * others are copied. Instructions a call (callgrind): Test3 (an 8 KiB bin) unpack 3.60k -> 3.11k. */
static VALUE share_tail(VALUE src, const uint8_t *data, uint32_t len, int encidx) {
    const char *base = RSTRING_PTR(src);
    long n = RSTRING_LEN(src);
    if ((const char *)data + len != base + n) return Qundef;
    VALUE s = rb_str_subseq(src, (long)((const char *)data - base), (long)len); /* byte offsets */
    rb_enc_associate_index(s, encidx); /* the input's encoding is whatever the caller's String had */
    RB_ENC_CODERANGE_CLEAR(s); /* rb_str_subseq passes on src's, wrong for a piece cut inside a char */
    return s;
}

/* Speed trick (share_body): a str or bin anywhere in the input shared, not only a tail. A String
 * made by rb_str_new_shared(src) is a heap String flagged shared whose pointer and length are
 * those of src's bytes inside src's frozen root buffer; pointing it at the value's bytes instead
 * (RString's as.heap.ptr and as.heap.len, public members in CRuby 3.1's headers) gives the state
 * CRuby itself makes in str_new_frozen_buffer for a frozen copy of a middle substring: the root
 * stays marked through as.heap.aux.shared (updated by GC.compact; the root's buffer is malloc'd
 * and does not move), writes un-share it (str_make_independent copies as.heap.len bytes from
 * as.heap.ptr), and freeing it frees nothing of the root's. The bytes after the value are not a
 * NUL: CRuby's functions that need a terminated C string (StringValueCStr, String#to_f, ...)
 * check for that and copy, and reading that byte stays inside the root buffer. Used only on CRuby
 * 3.1 without variable-width allocation, with a String (not a subclass) input, and only if
 * check_share_direct found at load time that such Strings equal rb_str_subseq's, point into the
 * input, and un-share on write without changing the input; MPK._share_direct = false forces
 * share_tail (fastpath_spec drives both). The coderange is cleared: the input's says nothing
 * about a piece of it. Measured (callgrind, bench/icount.rb): the image record (a 6 KiB bin
 * before the end of its map) unpack 13.4k -> 12.9k instructions a call, and no malloc, 6 KiB copy
 * or 6 KiB of malloc_increase (which paces CRuby's GC) per call. */
#if defined(RUBY_API_VERSION_MAJOR) && RUBY_API_VERSION_MAJOR == 3 && RUBY_API_VERSION_MINOR == 1 && \
    !(defined(USE_RVARGC) && USE_RVARGC)
#define MPK_SHARE_DIRECT 1
#else
#define MPK_SHARE_DIRECT 0
#endif
static int share_direct_ok, share_direct_found;

#if MPK_SHARE_DIRECT
static VALUE share_body(VALUE src, const uint8_t *data, uint32_t len, int encidx) {
    VALUE s = rb_str_new_shared(src); /* src is frozen and 256 bytes or more: a heap String on its root */
    if (MPK__UNLIKELY(FL_TEST_RAW(s, RSTRING_NOEMBED | RUBY_ELTS_SHARED) != (RSTRING_NOEMBED | RUBY_ELTS_SHARED)))
        return Qundef;
    RSTRING(s)->as.heap.ptr = (char *)data;
    RSTRING(s)->as.heap.len = (long)len;
    if (RB_ENCODING_GET_INLINED(s) != encidx) {
        if (MPK__LIKELY(encidx < RUBY_ENCODING_INLINE_MAX)) RB_ENCODING_SET_INLINED(s, encidx);
        else rb_enc_associate_index(s, encidx);
    }
    RB_ENC_CODERANGE_CLEAR(s);
    return s;
}

/* Sets share_direct_ok: share_body must give the String a copy gives (bytes, encoding, class,
 * pointing into the input, which stays as it was when the result is written to. */
static void check_share_direct(void) {
    share_direct_ok = 0;
    VALUE buf = rb_str_buf_new(1500);
    for (int i = 0; i < 1500; i++) rb_str_buf_cat(buf, (const char *)&"mpk!"[i % 4], 1);
    rb_str_cat(buf, "\xc3\xa9", 2); /* ends with a UTF-8 char: a coderange to clear */
    const long offs[] = {0, 1, 7, 300, 1000, 1245, 1246}; /* 1245 + 256 cuts the last char in two */
    const long lens[] = {256, 257, 500};
    for (int enc = 0; enc < 2; enc++) {
        VALUE src = rb_str_dup(buf);
        rb_enc_associate_index(src, enc ? enc_utf8 : enc_binary);
        (void)rb_enc_str_coderange(src); /* known (valid): share_body must not pass it on */
        src = rb_str_new_frozen(src);
        VALUE copy = rb_str_dup(src); /* its own bytes (written below) */
        rb_str_modify(copy);
        for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
            for (size_t j = 0; j < 2 * sizeof lens / sizeof *lens; j++) {
                long off = offs[i], len = lens[j / 2];
                if (off + len > RSTRING_LEN(src)) continue;
                int encidx = j & 1 ? enc_utf8 : enc_binary;
                const uint8_t *at = (const uint8_t *)RSTRING_PTR(src) + off;
                VALUE got = share_body(src, at, (uint32_t)len, encidx);
                if (got == Qundef) return;
                /* the reference: the bytes copied (rb_str_subseq would pass on a coderange made
                 * for src, wrong for a piece cut inside a char) */
                VALUE want = rb_enc_str_new((const char *)at, len, rb_enc_from_index(encidx));
                if (RSTRING_PTR(got) != (const char *)at || RSTRING_LEN(got) != len || rb_obj_class(got) != rb_cString ||
                    OBJ_FROZEN(got) || ENCODING_GET(got) != encidx || !rb_str_equal(got, want) ||
                    rb_enc_str_coderange(got) != rb_enc_str_coderange(want) || rb_str_hash(got) != rb_str_hash(want))
                    return;
                rb_str_cat(got, "+", 1); /* un-shares */
                rb_str_cat(want, "+", 1);
                if (!rb_str_equal(got, want) || RSTRING_PTR(got) == (const char *)at || !rb_str_equal(src, copy)) return;
                RB_GC_GUARD(want);
            }
        }
        RB_GC_GUARD(src);
        RB_GC_GUARD(copy);
    }
    RB_GC_GUARD(buf);
    share_direct_ok = 1;
}
#endif

static VALUE share_string(VALUE src, const uint8_t *data, uint32_t len, int encidx) {
    if (NIL_P(src)) return Qundef;
#if MPK_SHARE_DIRECT
    if (MPK__LIKELY(share_direct_ok) && rb_obj_class(src) == rb_cString) return share_body(src, data, len, encidx);
#endif
    return share_tail(src, data, len, encidx);
}

/* MPK._share_direct? / MPK._share_direct = bool (private, for the specs): whether strs and bins
 * anywhere in the input are shared (share_body); false leaves share_tail. Setting true only
 * restores what the load-time check found. */
static VALUE mpk_s_share_direct_p(VALUE mod) { return share_direct_ok ? Qtrue : Qfalse; }
static VALUE mpk_s_set_share_direct(VALUE mod, VALUE on) {
    share_direct_ok = RTEST(on) ? share_direct_found : 0;
    return on;
}

/* MPK._key_cache? / MPK._key_cache = bool (private, for the specs): whether map keys are looked up
 * in the Ractor's lasting cache (key_cache); false gives every decode a fresh one. Process-wide:
 * set it only while no other thread or Ractor decodes. */
static VALUE mpk_s_key_cache_p(VALUE mod) { return key_cache_enabled ? Qtrue : Qfalse; }
static VALUE mpk_s_set_key_cache(VALUE mod, VALUE on) {
    key_cache_enabled = RTEST(on);
    return on;
}

/* MPK._key_probe? / MPK._key_probe = bool (private, for the specs): whether a key may sit in any of
 * KEY_WAYS slots (key_probe) or only in its own (the direct-mapped fallback). Process-wide. */
static VALUE mpk_s_key_probe_p(VALUE mod) { return key_ways > 1 ? Qtrue : Qfalse; }
static VALUE mpk_s_set_key_probe(VALUE mod, VALUE on) {
    key_ways = RTEST(on) ? KEY_WAYS : 1;
    return on;
}

/* MPK._key_cache_misses (private, for the specs): keys of 1 to KEY_CACHE_MAX_LEN bytes this Ractor's
 * lasting cache did not hold, since it was made. */
static VALUE mpk_s_key_cache_misses(VALUE mod) {
    key_cache *c = rb_ractor_local_storage_ptr(key_cache_slot);
    return ULL2NUM(c ? c->misses : 0);
}

static VALUE make_string(decoder *d, const rb_mpk_uopts *o, VALUE src, const uint8_t *data, uint32_t len,
                         int is_key, int encidx) {
    if (is_key) return make_key(d, o, data, len, encidx);
    if (o->freeze) return rb_enc_interned_str((const char *)data, len, rb_enc_from_index(encidx));
    if (MPK__UNLIKELY(len >= SHARE_MIN)) {
        VALUE s = share_string(src, data, len, encidx);
        if (s != Qundef) return s;
    }
    return new_string(data, len, encidx);
}

static VALUE make_ext(const rb_mpk_uopts *o, int type, const uint8_t *data, uint32_t len, const mpk_tag *t,
                      unsigned long long head) {
    if (!NIL_P(o->ext_types)) {
        VALUE entry = rb_hash_lookup2(o->ext_types, INT2FIX(type), Qnil);
        if (!NIL_P(entry)) {
            VALUE payload = rb_str_new((const char *)data, len);
            VALUE proc = rb_ary_entry(entry, 1);
            if (RTEST(rb_ary_entry(entry, 2))) return rb_funcall(proc, id_call, 1, rb_mpk_unpacker_for_payload(o, payload));
            return rb_funcall(proc, id_call, 1, payload);
        }
    }
    if (t->type == MPK_TIMESTAMP)
        return rb_funcall(cTimestamp, id_new, 2, LL2NUM(t->v.ts.sec), UINT2NUM(t->v.ts.nsec));
    if (o->allow_unknown_ext) return rb_struct_new(cExtensionValue, INT2FIX(type), rb_str_new((const char *)data, len));
    rb_mpk_raise(eUnknownExtTypeError, "unknown_ext_type", (long long)head, "unknown ext type %d", type);
}

/* The value about to be read is a map key: the innermost open container is a map holding an even
 * count of values so far. Asked only for strs and bins (the only keys that are made differently). */
static inline int at_key(const decoder *d) {
    if (!d->n) return 0;
    const frame *top = &d->frames[d->n - 1];
    return top->is_map && !((d->nvals - top->base) & 1);
}

/* Speed trick: float 64 and int/uint 8/16/32 read here rather than by mpk_reader_next, whose
 * inline part decodes only fixints, short strs/bins and fixarrays/fixmaps and sends every other
 * head through the out-of-line path (about 47 instructions a float). Reads the head and its bytes,
 * then closes the enclosing container exactly as the reader does (mpk__reader_value_done, the
 * reader's own inline step). Instructions a call (callgrind, bench/icount.rb): canada.json unpack
 * 44.0M -> 34.1M, 3D model 8.73M -> 3.89M, integer array 1.56M -> 0.66M (msgpack-ruby: 51.7M,
 * 12.6M, 2.08M). Only
 * when 9 bytes are left and the reader has no error (it pulls `end` to `pos` on error), so no check
 * of the reader's is skipped: anything else returns 0 and goes through mpk_reader_next, which
 * decodes the same heads to the same values (corpus_spec covers every form both ways). */
static inline int read_number_inline(mpk_reader *r, VALUE *out) {
    const uint8_t *p = r->pos;
    if (MPK__UNLIKELY((size_t)(r->end - p) < 9)) return 0;
    switch (*p) {
    case 0xcb: {
        uint64_t bits = mpk__load64(p + 1);
        double f;
        memcpy(&f, &bits, 8);
        *out = DBL2NUM(f);
        r->pos = p + 9;
        break;
    }
    case 0xcc: *out = INT2FIX(p[1]); r->pos = p + 2; break;
    case 0xcd: *out = INT2FIX(mpk__load16(p + 1)); r->pos = p + 3; break;
    case 0xce: *out = UINT2NUM(mpk__load32(p + 1)); r->pos = p + 5; break;
    case 0xd0: *out = INT2FIX((int8_t)p[1]); r->pos = p + 2; break;
    case 0xd1: *out = INT2FIX((int16_t)mpk__load16(p + 1)); r->pos = p + 3; break;
    case 0xd2: *out = INT2NUM((int32_t)mpk__load32(p + 1)); r->pos = p + 5; break;
    default: return 0;
    }
    mpk__reader_value_done(r);
    return 1;
}

static VALUE decode_loop(decoder *d, const rb_mpk_uopts *o, VALUE src, unsigned long long base) {
    mpk_reader *r = &d->r;
    mpk_tag t;
    VALUE v;
    for (;;) {
        if (read_number_inline(r, &v)) goto hand_over;
        size_t head = mpk_reader_offset(r);
        if (!mpk_reader_next(r, &t)) {
            mpk_error e = mpk_reader_error(r);
            rb_mpk_raise_decode(e.kind, base + e.offset);
        }
        switch (t.type) {
        case MPK_NIL: v = Qnil; break;
        case MPK_BOOL: v = t.v.b ? Qtrue : Qfalse; break;
        case MPK_UINT: v = t.v.u <= (uint64_t)FIXNUM_MAX ? LONG2FIX((long)t.v.u) : ULL2NUM(t.v.u); break;
        case MPK_INT: v = t.v.i >= FIXNUM_MIN ? LONG2FIX((long)t.v.i) : LL2NUM(t.v.i); break;
        case MPK_FLOAT32:
            v = DBL2NUM((double)t.v.f32);
            if (!NIL_P(o->f32_class)) {
                v = rb_funcall(o->f32_class, id_new, 1, v);
                RB_MPK_ASAN_DEAD_STACK(); /* Ruby code ran */
            }
            break;
        case MPK_FLOAT64: v = DBL2NUM(t.v.f64); break;
        case MPK_STR: v = make_string(d, o, src, t.data, t.len, at_key(d), enc_utf8); break;
        case MPK_BIN: v = make_string(d, o, src, t.data, t.len, at_key(d), enc_binary); break;
        case MPK_EXT:
        case MPK_TIMESTAMP:
            v = make_ext(o, t.type == MPK_TIMESTAMP ? -1 : t.ext_type, t.data, t.len, &t, base + head);
            RB_MPK_ASAN_DEAD_STACK(); /* Ruby code ran */
            break;
        case MPK_ARRAY:
        case MPK_MAP: {
            frame *f = push_frame(d);
            f->base = d->nvals;
            f->is_map = t.type == MPK_MAP;
            f->want = f->is_map ? 2 * (uint64_t)t.len : t.len;
            if (t.len) continue;
            v = build_container(d, o, f);
            d->n--;
            break;
        }
        default: rb_raise(rb_eRuntimeError, "mpk: unknown tag type %d", (int)t.type);
        }
    hand_over:
        /* hand v to its container; a container that completes is handed to its own parent */
        for (;;) {
            if (d->n == 0) return v;
            frame *f = &d->frames[d->n - 1];
            push_value(d, v);
            if (d->nvals - f->base < f->want) break;
            v = build_container(d, o, f);
            d->n--;
        }
    }
}
typedef struct decode_call {
    decoder *d;
    const rb_mpk_uopts *o;
    VALUE src;
    unsigned long long base;
    int whole;
    size_t used;
    VALUE result;
} decode_call;

static VALUE decode_body(VALUE p) {
    decode_call *c = (decode_call *)p;
    decoder *d = c->d;
    c->result = decode_loop(d, c->o, c->src, c->base);
    if (c->whole) {
        mpk_error e = mpk_reader_finish(&d->r);
        if (e.kind != MPK_OK) rb_mpk_raise_decode(e.kind, c->base + e.offset);
    }
    c->used = mpk_reader_offset(&d->r);
    return Qnil;
}

/* Releases what the decode allocated as soon as it ends, raising or not. Left to the decoder's
 * free function, the frame and reader stacks of failed decodes waited for a GC that does not see
 * plain malloc: 3000 failing decodes of 1000-deep input settled 20-47 MB higher, against 4 MB
 * with this (a steady state, not a leak: spec/leak_spec.rb checks that too). */
static VALUE decode_cleanup(VALUE p) {
    decoder *d = ((decode_call *)p)->d;
    if (d->reader_live) mpk_reader_destroy(&d->r);
    d->reader_live = 0;
    if (!NIL_P(d->holder)) DATA_PTR(d->holder) = NULL; /* the decoder's frame is about to go */
    if (d->frames != d->small) free(d->frames);
    if (d->vals != d->small_vals) free(d->vals);
    return Qnil;
}

/* Speed trick (decoder_on_stack): the decoder is a local of rb_mpk_decode, not a malloc'd struct
 * owned by a Ruby object made for every decode; the object is made only when a message has more
 * than SMALL_VALUES pending values (see decoder). Test1 unpack 3.0k -> 2.3k instructions a call
 * (callgrind): a 5.7 KiB malloc (the old per-decode key cache), its free and an object per decode
 * gone. */
VALUE rb_mpk_decode(const rb_mpk_uopts *o, VALUE src, const uint8_t *data, size_t len, unsigned long long base,
                    int whole, size_t *used) {
    RB_MPK_ASAN_DEAD_STACK();
    decoder dec;
    decoder *d = &dec;
    d->reader_live = 0;
    d->n = 0;
    d->nvals = 0;
    d->frames = d->small;
    d->cap = SMALL_FRAMES;
    d->vals = d->small_vals;
    d->vcap = SMALL_VALUES;
    d->holder = Qnil;
    d->keys = get_key_cache(&d->keys_holder);
    mpk_reader_init(&d->r, data, len);
    d->reader_live = 1;
    mpk_reader_set_limits(&d->r, &o->limits);
    mpk_reader_set_flags(&d->r, o->flags);
    decode_call c = {d, o, src, base, whole, 0, Qnil};
    rb_ensure(decode_body, (VALUE)&c, decode_cleanup, (VALUE)&c);
    if (used) *used = c.used;
    RB_GC_GUARD(d->keys_holder);
    RB_GC_GUARD(d->holder);
    return c.result;
}

/* MPK._unpack(string, options) — one value from a String; bytes after it are an error. */
static VALUE mpk_s_unpack(VALUE self, VALUE data, VALUE opts) {
    rb_mpk_uopts o;
    rb_mpk_uopts_init(&o);
    rb_mpk_uopts_parse(&o, opts);
    StringValue(data);
    /* a frozen String sharing the bytes: callbacks cannot change them under the decoder */
    VALUE src = rb_str_new_frozen(data);
    VALUE v = rb_mpk_decode(&o, src, (const uint8_t *)RSTRING_PTR(src), (size_t)RSTRING_LEN(src), 0, 1, NULL);
    RB_GC_GUARD(src);
    RB_GC_GUARD(opts);
    return v;
}

/* Set once DefaultFactory has a registration (MPK._default_types = true, from Factory#register_type):
 * until then MPK.pack / MPK.unpack go straight to the extension, skipping the Ruby wrapper that
 * consults DefaultFactory. A stale true only costs the detour. */
static int default_types;

static VALUE mpk_s_set_default_types(VALUE mod, VALUE on) {
    default_types = RTEST(on);
    return on;
}

VALUE rb_mpk_pack_one(VALUE v); /* rb_packer.c */

/* MPK.pack(obj, io = nil, options = nil) */
static VALUE mpk_s_pack_entry(int argc, VALUE *argv, VALUE mod) {
    if (argc == 1 && !default_types) return rb_mpk_pack_one(argv[0]);
    return rb_funcallv(mod, rb_intern("_pack_general"), argc, argv);
}

/* MPK.unpack(data, options = nil) */
static VALUE mpk_s_unpack_entry(int argc, VALUE *argv, VALUE mod) {
    if ((argc == 1 || argc == 2) && !default_types && RB_TYPE_P(argv[0], T_STRING))
        return mpk_s_unpack(mod, argv[0], argc == 2 ? argv[1] : Qnil);
    return rb_funcallv(mod, rb_intern("_unpack_general"), argc, argv);
}

static VALUE const_get(const char *path) {
    VALUE v = rb_path2class(path);
    rb_gc_register_mark_object(v);
    return v;
}

RUBY_FUNC_EXPORTED void Init_mpk(void) {
#ifdef RB_EXT_RACTOR_SAFE
    rb_ext_ractor_safe(true);
#endif
    enc_utf8 = rb_utf8_encindex();
    enc_binary = rb_ascii8bit_encindex();
    id_call = rb_intern("call");
    id_kind = rb_intern("kind");
    id_offset = rb_intern("offset");
    id_iv_kind = rb_intern("@kind");
    id_iv_offset = rb_intern("@offset");
    id_to_msgpack = rb_intern("to_msgpack");
    id_sec = rb_intern("@sec");
    id_nsec = rb_intern("@nsec");
    id_new = rb_intern("new");
    id_write = rb_intern("write");
    id_readpartial = rb_intern("readpartial");
#define SYM(var, name) (var = ID2SYM(rb_intern(name)), rb_gc_register_mark_object(var))
    SYM(sym_symbolize_keys, "symbolize_keys");
    SYM(sym_freeze, "freeze");
    SYM(sym_allow_unknown_ext, "allow_unknown_ext");
    SYM(sym_strict_utf8, "strict_utf8");
    SYM(sym_limits, "limits");
    SYM(sym_depth, "depth");
    SYM(sym_str, "str");
    SYM(sym_bin, "bin");
    SYM(sym_ext, "ext");
    SYM(sym_array, "array");
    SYM(sym_map, "map");
    SYM(sym_pairs, "_pairs");
    SYM(sym_float32, "_float32");
    SYM(sym_ext_types, "_ext_types");
#undef SYM

    mMPK = rb_define_module("MPK");
    cExtensionValue = const_get("MPK::ExtensionValue");
    cTimestamp = const_get("MPK::Timestamp");
    eUnpackError = const_get("MPK::UnpackError");
    eMalformedFormatError = const_get("MPK::MalformedFormatError");
    eStackError = const_get("MPK::StackError");
    eLengthLimitError = const_get("MPK::LengthLimitError");
    eUnexpectedTypeError = const_get("MPK::UnexpectedTypeError");
    eUnknownExtTypeError = const_get("MPK::UnknownExtTypeError");
    eTruncatedError = const_get("MPK::TruncatedError");
    ePackError = const_get("MPK::PackError");
    eUnsupportedTypeError = const_get("MPK::UnsupportedTypeError");
    eInvalidTimestampError = const_get("MPK::InvalidTimestampError");

    rb_define_singleton_method(mMPK, "_unpack", mpk_s_unpack, 2);
    rb_define_singleton_method(mMPK, "pack", mpk_s_pack_entry, -1);
    rb_define_singleton_method(mMPK, "dump", mpk_s_pack_entry, -1);
    rb_define_singleton_method(mMPK, "unpack", mpk_s_unpack_entry, -1);
    rb_define_singleton_method(mMPK, "load", mpk_s_unpack_entry, -1);
    rb_define_singleton_method(mMPK, "_default_types=", mpk_s_set_default_types, 1);
    rb_define_singleton_method(mMPK, "_share_direct?", mpk_s_share_direct_p, 0);
    rb_define_singleton_method(mMPK, "_share_direct=", mpk_s_set_share_direct, 1);
    rb_define_singleton_method(mMPK, "_key_cache?", mpk_s_key_cache_p, 0);
    rb_define_singleton_method(mMPK, "_key_cache=", mpk_s_set_key_cache, 1);
    rb_define_singleton_method(mMPK, "_hash_presize?", mpk_s_hash_presize_p, 0);
    rb_define_singleton_method(mMPK, "_hash_presize=", mpk_s_set_hash_presize, 1);
    rb_define_singleton_method(mMPK, "_key_probe?", mpk_s_key_probe_p, 0);
    rb_define_singleton_method(mMPK, "_key_probe=", mpk_s_set_key_probe, 1);
    rb_define_singleton_method(mMPK, "_key_cache_misses", mpk_s_key_cache_misses, 0);
    key_cache_slot = rb_ractor_local_storage_ptr_newkey(&key_cache_storage);
    rb_define_const(mMPK, "CORE_VERSION", rb_str_freeze(rb_str_new_cstr(mpk_version())));
    rb_define_const(mMPK, "DEFAULT_DEPTH", UINT2NUM(MPK_DEFAULT_DEPTH));
    rb_define_const(mMPK, "DEFAULT_LENGTH", UINT2NUM(MPK_DEFAULT_LENGTH));
    rb_mpk_init_packer();
    rb_mpk_init_unpacker();
#if MPK_SHARE_DIRECT
    check_share_direct();
#endif
    share_direct_found = share_direct_ok;
}
