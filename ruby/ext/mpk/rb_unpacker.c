/* rb_unpacker.c — MPK::Unpacker: bytes fed in chunks (or read from an IO), values out.
 *
 * The unpacker keeps the bytes not yet consumed in one buffer, buf[head..tail). The core's
 * mpk_stream scans them as they arrive and says where each complete top-level value ends, and
 * reports a bad byte as soon as it arrives; the value is then decoded from the buffer by the core's
 * reader (rb_mpk_decode). Header calls (read_array_header, skip_nil, ...) take bytes off the front
 * themselves; the stream is then restarted at the new front (its state at a value boundary is
 * nothing but an offset).
 *
 * The stream is handed buf[s_fed..tail) as a chunk and keeps a pointer into it until it has
 * returned 0 for it. A value it returns ends the chunk scan early, so before the buffer moves
 * (compaction or growth on feed) a stream still holding a chunk is restarted just after the value
 * it returned: nothing is lost, nothing is scanned twice. */
#include "rb_mpk.h"

#include <stdlib.h>

typedef struct unpacker {
    uint8_t *buf;
    size_t head, tail, cap;
    unsigned long long base;   /* stream offset of buf[0] */
    mpk_stream s;
    unsigned long long s_base; /* stream offset of the mpk_stream's first byte */
    size_t s_fed;              /* buf index up to which bytes went to the mpk_stream */
    int s_chunk;               /* the mpk_stream holds buf[..s_fed) as an unfinished chunk */
    int ready;                 /* a complete value starts at head ... */
    size_t ready_len;          /* ... and is this long */
    mpk_error_kind err;        /* sticky stream error */
    unsigned long long err_at;
    int busy;                  /* a value is being decoded from buf */
    VALUE io;
    long read_size;
    rb_mpk_uopts o;
    VALUE borrowed;            /* Qnil, or the frozen String whose bytes buf is (see feed_borrowed) */
} unpacker;

static void unpacker_mark(void *p) {
    unpacker *u = p;
    rb_gc_mark(u->io);
    rb_gc_mark(u->borrowed); /* pinned: buf points into it */
    rb_mpk_uopts_mark(&u->o);
}

static void unpacker_free(void *p) {
    unpacker *u = p;
    mpk_stream_destroy(&u->s);
    if (NIL_P(u->borrowed)) free(u->buf);
    xfree(u);
}

static size_t unpacker_memsize(const void *p) {
    const unpacker *u = p;
    return sizeof *u + (NIL_P(u->borrowed) ? u->cap : 0) + mpk_stream_buffered(&u->s);
}

static const rb_data_type_t unpacker_type = {
    "MPK::Unpacker", {unpacker_mark, unpacker_free, unpacker_memsize, NULL}, NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY};

static unpacker *get_unpacker(VALUE self) {
    unpacker *u;
    TypedData_Get_Struct(self, unpacker, &unpacker_type, u);
    return u;
}

/* Restarts the mpk_stream at buf index i (a value boundary). */
static void restart_stream(unpacker *u, size_t i) {
    mpk_stream_destroy(&u->s);
    mpk_stream_init(&u->s);
    mpk_stream_set_limits(&u->s, &u->o.limits);
    mpk_stream_set_flags(&u->s, u->o.flags);
    u->s_base = u->base + i;
    u->s_fed = i;
    u->s_chunk = 0;
}

static VALUE unpacker_alloc(VALUE klass) {
    unpacker *u;
    VALUE self = TypedData_Make_Struct(klass, unpacker, &unpacker_type, u);
    rb_mpk_uopts_init(&u->o);
    u->io = Qnil;
    u->borrowed = Qnil;
    u->read_size = 64 * 1024;
    mpk_stream_init(&u->s);
    restart_stream(u, 0);
    return self;
}

static void check_idle(unpacker *u) {
    if (u->busy) rb_raise(rb_eRuntimeError, "MPK::Unpacker used from inside its own ext type callback");
}

/* ------------------------------------------------------------------------------------------------
 * The buffer
 * ----------------------------------------------------------------------------------------------*/

/* The live bytes move to buf[0..): a stream still holding a chunk stopped right after the last
 * value it returned, which is the ready value, or the one just taken off the front. */
static void rebase(unpacker *u) {
    if (u->s_chunk) restart_stream(u, u->ready ? u->head + u->ready_len : u->head);
    u->base += u->head;
    u->s_fed -= u->head;
    u->tail -= u->head;
    u->head = 0;
}

static void append(unpacker *u, const char *data, size_t len) {
    if (!len) return;
    /* a borrowed buffer is never written: the first append after it copies into our own */
    if (u->cap - u->tail < len || !NIL_P(u->borrowed)) {
        size_t live = u->tail - u->head;
        if (live > SIZE_MAX - len) rb_memerror();
        if (live + len <= u->cap && NIL_P(u->borrowed)) {
            memmove(u->buf, u->buf + u->head, live); /* compaction, no growth */
        } else {
            size_t cap = u->cap && NIL_P(u->borrowed) ? u->cap : 4096;
            while (cap < live + len) cap = cap > SIZE_MAX / 2 ? live + len : cap * 2;
            uint8_t *nb = malloc(cap);
            if (!nb) rb_memerror();
            if (live) memcpy(nb, u->buf + u->head, live);
            if (NIL_P(u->borrowed)) free(u->buf);
            u->borrowed = Qnil;
            u->buf = nb;
            u->cap = cap;
        }
        rebase(u);
    }
    memcpy(u->buf + u->tail, data, len);
    u->tail += len;
}

/* Speed trick: a String of at least BORROW_MIN bytes fed to an empty unpacker without an IO is not
 * copied: the unpacker keeps a frozen String sharing its bytes (rb_str_new_frozen: if the caller
 * changes the String later, Ruby gives the caller a copy, not us) and reads from those. Copying a
 * 1 MiB feed meant a 2 MiB malloc (an mmap), its page faults and the copy on every new unpacker:
 * Unpacker.new.feed(1 MiB str).skip took 540-860 us against msgpack-ruby's 50-140 us, which
 * references large feeds (CPU time, same process). The next feed copies the bytes still unread into
 * a buffer of our own (append), and an emptied unpacker lets the String go (consume_value).
 * MPK._borrow_feed = false (private, for the specs) always copies. */
#define BORROW_MIN (64 * 1024)
static int borrow_feed_enabled = 1;

static int feed_borrowed(unpacker *u, VALUE data) {
    long len = RSTRING_LEN(data);
    if (!borrow_feed_enabled || len < BORROW_MIN || u->head != u->tail || !NIL_P(u->io)) return 0;
    VALUE frozen = rb_str_new_frozen(data);
    rebase(u);
    if (NIL_P(u->borrowed)) free(u->buf);
    u->buf = (uint8_t *)RSTRING_PTR(frozen);
    u->cap = u->tail = (size_t)len;
    u->borrowed = frozen;
    return 1;
}

/* Takes n bytes off the front outside of a whole value (header calls): the stream restarts there. */
static void consume_raw(unpacker *u, size_t n) {
    u->head += n;
    u->ready = 0;
    restart_stream(u, u->head);
}

static void consume_value(unpacker *u) {
    u->head += u->ready_len;
    u->ready = 0;
    if (u->head == u->tail && !u->s_chunk) { /* empty: start the buffer over */
        rebase(u);
        if (!NIL_P(u->borrowed)) { /* nothing left to read in the borrowed String: let it go */
            u->borrowed = Qnil;
            u->buf = NULL;
            u->cap = 0;
        }
    }
}

NORETURN(static void raise_sticky(unpacker *u));
static void raise_sticky(unpacker *u) { rb_mpk_raise_decode(u->err, u->err_at); }

/* 1 when a complete value starts at head; 0 when the bytes so far end inside one (or there are
 * none); raises the stream's error once the values before it have been taken. */
static int next_ready(unpacker *u) {
    RB_MPK_ASAN_DEAD_STACK(); /* Ruby entered the codec or Ruby code ran (IO reads, blocks) */
    if (u->ready) return 1;
    if (u->err != MPK_OK) raise_sticky(u);
    for (;;) {
        if (u->s_chunk) {
            const uint8_t *p;
            size_t n;
            int r = mpk_stream_next(&u->s, &p, &n);
            if (r == 1) {
                u->ready = 1;
                u->ready_len = n;
                return 1;
            }
            if (r < 0) {
                mpk_error e = mpk_stream_error(&u->s);
                u->err = e.kind;
                u->err_at = u->s_base + e.offset;
                raise_sticky(u);
            }
            u->s_chunk = 0;
        }
        if (u->s_fed < u->tail) {
            mpk_stream_feed(&u->s, u->buf + u->s_fed, u->tail - u->s_fed);
            u->s_fed = u->tail;
            u->s_chunk = 1;
            continue;
        }
        return 0;
    }
}

static VALUE rescue_eof(VALUE arg, VALUE exc) { return Qnil; }

static VALUE io_read_call(VALUE p) {
    unpacker *u = (unpacker *)p;
    if (rb_respond_to(u->io, id_readpartial)) return rb_funcall(u->io, id_readpartial, 1, LONG2NUM(u->read_size));
    return rb_funcall(u->io, rb_intern("read"), 1, LONG2NUM(u->read_size));
}

/* Reads one chunk from the IO into the buffer; 0 at the end of the input. */
static int read_io(unpacker *u) {
    if (NIL_P(u->io)) return 0;
    VALUE s = rb_rescue2(io_read_call, (VALUE)u, rescue_eof, Qnil, rb_eEOFError, (VALUE)0);
    RB_MPK_ASAN_DEAD_STACK(); /* Ruby code ran (and an EOFError may have unwound io_read_call) */
    if (NIL_P(s)) return 0;
    StringValue(s);
    if (RSTRING_LEN(s) == 0) return read_io(u);
    append(u, RSTRING_PTR(s), (size_t)RSTRING_LEN(s));
    RB_GC_GUARD(s);
    return 1;
}

/* The input has ended (IO at EOF): a value left incomplete is `truncated` at the offset a one-shot
 * decode of the same bytes gives; with nothing pending it is a plain EOFError. */
NORETURN(static void raise_end(unpacker *u));
static void raise_end(unpacker *u) {
    if (u->head == u->tail) rb_raise(rb_eEOFError, "end of input");
    next_ready(u); /* the stream has seen every byte */
    mpk_error e = mpk_stream_end(&u->s);
    u->err = e.kind != MPK_OK ? e.kind : MPK_ERR_TRUNCATED;
    u->err_at = e.kind != MPK_OK ? u->s_base + e.offset : u->base + u->tail;
    raise_sticky(u);
}

/* Waits for a complete value (reading the IO if there is one): 1 when ready, 0 when there is no IO
 * and the fed bytes hold no complete value. */
static int wait_ready(unpacker *u, int raise_at_eof) {
    while (!next_ready(u)) {
        if (NIL_P(u->io)) return 0;
        if (!read_io(u)) {
            if (!raise_at_eof && u->head == u->tail) return 0;
            raise_end(u);
        }
    }
    return 1;
}

/* At least n bytes at head (reading the IO if needed)? */
static int have_bytes(unpacker *u, size_t n) {
    if (u->err != MPK_OK) raise_sticky(u);
    while (u->tail - u->head < n)
        if (!read_io(u)) return 0;
    return 1;
}

typedef struct decode_args {
    unpacker *u;
    VALUE result;
    const uint8_t *data;
    size_t len;
    unsigned long long at;
} decode_args;

static VALUE decode_body(VALUE p) {
    decode_args *a = (decode_args *)p;
    a->result = rb_mpk_decode(&a->u->o, Qnil, a->data, a->len, a->at, 1, NULL);
    return Qnil;
}

static VALUE decode_done(VALUE p) {
    ((decode_args *)p)->u->busy = 0;
    return Qnil;
}

/* Takes the ready value off the front and decodes it (or just drops it when skipping). */
static VALUE take_value(unpacker *u, int skip) {
    RB_MPK_ASAN_DEAD_STACK(); /* Ruby entered the codec or Ruby code ran (IO reads, blocks) */
    decode_args a = {u, Qnil, u->buf + u->head, u->ready_len, u->base + u->head};
    consume_value(u); /* a value whose callback raises is not read again */
    if (skip) return Qnil;
    /* the bytes stay where they are until the next append, which `busy` forbids meanwhile */
    u->busy = 1;
    rb_ensure(decode_body, (VALUE)&a, decode_done, (VALUE)&a);
    return a.result;
}

/* ------------------------------------------------------------------------------------------------
 * Ruby methods
 * ----------------------------------------------------------------------------------------------*/

/* Unpacker.new(io = nil, options = nil) */
static VALUE unpacker_initialize(int argc, VALUE *argv, VALUE self) {
    unpacker *u = get_unpacker(self);
    VALUE io = Qnil, opts = Qnil;
    rb_scan_args(argc, argv, "02", &io, &opts);
    if (RB_TYPE_P(io, T_HASH) && NIL_P(opts)) {
        opts = io;
        io = Qnil;
    }
    rb_mpk_uopts_parse(&u->o, opts);
    if (!NIL_P(opts)) {
        VALUE rs = rb_hash_lookup2(opts, ID2SYM(rb_intern("read_size")), Qnil);
        if (!NIL_P(rs)) {
            long n = NUM2LONG(rs);
            if (n <= 0) rb_raise(rb_eArgError, "read_size must be positive");
            u->read_size = n;
        }
    }
    u->io = io;
    restart_stream(u, u->head);
    return self;
}

static VALUE unpacker_feed(VALUE self, VALUE data) {
    unpacker *u = get_unpacker(self);
    check_idle(u);
    StringValue(data);
    if (!feed_borrowed(u, data)) append(u, RSTRING_PTR(data), (size_t)RSTRING_LEN(data));
    RB_GC_GUARD(data);
    return self;
}

static VALUE unpacker_read(VALUE self) {
    unpacker *u = get_unpacker(self);
    check_idle(u);
    if (!wait_ready(u, 1)) rb_raise(rb_eEOFError, "end of buffer reached");
    return take_value(u, 0);
}

static VALUE unpacker_skip(VALUE self) {
    unpacker *u = get_unpacker(self);
    check_idle(u);
    if (!wait_ready(u, 1)) rb_raise(rb_eEOFError, "end of buffer reached");
    take_value(u, 1);
    return Qnil;
}

static VALUE unpacker_each(VALUE self) {
    RETURN_ENUMERATOR(self, 0, 0);
    unpacker *u = get_unpacker(self);
    for (;;) {
        check_idle(u);
        if (!wait_ready(u, 0)) return self;
        rb_yield(take_value(u, 0));
    }
}

static VALUE unpacker_feed_each(VALUE self, VALUE data) {
    RETURN_ENUMERATOR(self, 1, &data);
    unpacker_feed(self, data);
    return unpacker_each(self);
}

static VALUE unpacker_skip_nil(VALUE self) {
    unpacker *u = get_unpacker(self);
    check_idle(u);
    if (!have_bytes(u, 1)) rb_raise(rb_eEOFError, "end of buffer reached");
    /* msgpack-ruby 1.4's skip_nil only looks: the nil stays for the next read or skip */
    return u->buf[u->head] == 0xc0 ? Qtrue : Qfalse;
}

static VALUE read_header(VALUE self, int want_map) {
    unpacker *u = get_unpacker(self);
    check_idle(u);
    if (!have_bytes(u, 1)) rb_raise(rb_eEOFError, "end of buffer reached");
    uint8_t b = u->buf[u->head];
    unsigned long long at = u->base + u->head;
    size_t hl = 0;
    if (want_map ? (b >= 0x80 && b <= 0x8f) : (b >= 0x90 && b <= 0x9f)) hl = 1;
    else if (b == (want_map ? 0xde : 0xdc)) hl = 3;
    else if (b == (want_map ? 0xdf : 0xdd)) hl = 5;
    else if (b == 0xc1) rb_mpk_raise_decode(MPK_ERR_INVALID_BYTE, at);
    else rb_mpk_raise(eUnexpectedTypeError, "type", (long long)at, "unexpected type: not %s", want_map ? "a map header" : "an array header");
    if (!have_bytes(u, hl)) rb_raise(rb_eEOFError, "end of buffer reached");
    const uint8_t *p = u->buf + u->head;
    uint32_t n = hl == 1 ? (uint32_t)(b & 0x0f) : hl == 3 ? mpk__load16(p + 1) : mpk__load32(p + 1);
    if (n > (want_map ? u->o.limits.map : u->o.limits.array)) rb_mpk_raise_decode(MPK_ERR_LENGTH_LIMIT, at);
    consume_raw(u, hl);
    return UINT2NUM(n);
}

static VALUE unpacker_read_array_header(VALUE self) { return read_header(self, 0); }
static VALUE unpacker_read_map_header(VALUE self) { return read_header(self, 1); }

static VALUE unpacker_reset(VALUE self) {
    unpacker *u = get_unpacker(self);
    check_idle(u);
    u->base = 0; /* a new stream: offsets count from its first byte again */
    u->head = u->tail = 0;
    u->ready = 0;
    u->err = MPK_OK;
    restart_stream(u, 0);
    return self;
}

/* Bytes fed and not consumed yet. */
static VALUE unpacker_buffered(VALUE self) {
    unpacker *u = get_unpacker(self);
    return SIZET2NUM(u->tail - u->head);
}

/* The pending bytes (a copy). */
static VALUE unpacker_pending(VALUE self) {
    unpacker *u = get_unpacker(self);
    return rb_str_new((const char *)u->buf + u->head, (long)(u->tail - u->head));
}

/* _take(n): up to n pending bytes, taken off the front (Unpacker#buffer.read / skip). */
static VALUE unpacker_take(VALUE self, VALUE vn) {
    unpacker *u = get_unpacker(self);
    check_idle(u);
    long n = NUM2LONG(vn);
    if (n < 0) rb_raise(rb_eArgError, "negative length");
    size_t k = (size_t)n < u->tail - u->head ? (size_t)n : u->tail - u->head;
    VALUE s = rb_str_new((const char *)u->buf + u->head, (long)k);
    consume_raw(u, k);
    return s;
}

static VALUE unpacker_io(VALUE self) { return get_unpacker(self)->io; }
static VALUE unpacker_symbolize_keys_p(VALUE self) { return get_unpacker(self)->o.symbolize_keys ? Qtrue : Qfalse; }
static VALUE unpacker_freeze_p(VALUE self) { return get_unpacker(self)->o.freeze ? Qtrue : Qfalse; }
static VALUE unpacker_allow_unknown_ext_p(VALUE self) { return get_unpacker(self)->o.allow_unknown_ext ? Qtrue : Qfalse; }

/* _register_type(type, klass, proc, recursive) — called by Unpacker#register_type. */
static VALUE unpacker_register(VALUE self, VALUE type, VALUE klass, VALUE proc, VALUE recursive) {
    unpacker *u = get_unpacker(self);
    if (!FIXNUM_P(type) || FIX2LONG(type) < -128 || FIX2LONG(type) > 127) rb_raise(rb_eRangeError, "ext type must be -128..127");
    VALUE types = NIL_P(u->o.ext_types) ? rb_hash_new() : rb_hash_dup(u->o.ext_types);
    VALUE entry = rb_ary_new_from_args(3, klass, proc, RTEST(recursive) ? Qtrue : Qfalse);
    rb_obj_freeze(entry);
    rb_hash_aset(types, type, entry);
    rb_obj_freeze(types);
    u->o.ext_types = types;
    return self;
}

static VALUE unpacker_ext_types(VALUE self) {
    unpacker *u = get_unpacker(self);
    return NIL_P(u->o.ext_types) ? rb_hash_new() : rb_hash_dup(u->o.ext_types);
}

/* An Unpacker over an ext payload with the same options and types (recursive ext types). */
VALUE rb_mpk_unpacker_for_payload(const rb_mpk_uopts *o, VALUE payload) {
    VALUE self = unpacker_alloc(cUnpacker);
    unpacker *u = get_unpacker(self);
    u->o = *o;
    restart_stream(u, 0);
    unpacker_feed(self, payload);
    return self;
}

static VALUE mpk_s_borrow_feed_p(VALUE mod) { return borrow_feed_enabled ? Qtrue : Qfalse; }
static VALUE mpk_s_set_borrow_feed(VALUE mod, VALUE on) {
    borrow_feed_enabled = RTEST(on);
    return on;
}

void rb_mpk_init_unpacker(void) {
    rb_define_singleton_method(mMPK, "_borrow_feed?", mpk_s_borrow_feed_p, 0);
    rb_define_singleton_method(mMPK, "_borrow_feed=", mpk_s_set_borrow_feed, 1);
    cUnpacker = rb_define_class_under(mMPK, "Unpacker", rb_cObject);
    rb_gc_register_mark_object(cUnpacker);
    rb_define_alloc_func(cUnpacker, unpacker_alloc);
    rb_define_method(cUnpacker, "initialize", unpacker_initialize, -1);
    rb_define_method(cUnpacker, "feed", unpacker_feed, 1);
    rb_define_method(cUnpacker, "feed_reference", unpacker_feed, 1);
    rb_define_method(cUnpacker, "<<", unpacker_feed, 1);
    rb_define_method(cUnpacker, "read", unpacker_read, 0);
    rb_define_method(cUnpacker, "unpack", unpacker_read, 0);
    rb_define_method(cUnpacker, "skip", unpacker_skip, 0);
    rb_define_method(cUnpacker, "skip_nil", unpacker_skip_nil, 0);
    rb_define_method(cUnpacker, "each", unpacker_each, 0);
    rb_define_method(cUnpacker, "feed_each", unpacker_feed_each, 1);
    rb_define_method(cUnpacker, "read_array_header", unpacker_read_array_header, 0);
    rb_define_method(cUnpacker, "read_map_header", unpacker_read_map_header, 0);
    rb_define_method(cUnpacker, "reset", unpacker_reset, 0);
    rb_define_method(cUnpacker, "buffered_size", unpacker_buffered, 0);
    rb_define_method(cUnpacker, "_pending", unpacker_pending, 0);
    rb_define_method(cUnpacker, "io", unpacker_io, 0);
    rb_define_method(cUnpacker, "_take", unpacker_take, 1);
    rb_define_method(cUnpacker, "symbolize_keys?", unpacker_symbolize_keys_p, 0);
    rb_define_method(cUnpacker, "freeze?", unpacker_freeze_p, 0);
    rb_define_method(cUnpacker, "allow_unknown_ext?", unpacker_allow_unknown_ext_p, 0);
    rb_define_method(cUnpacker, "_register_type", unpacker_register, 4);
    rb_define_method(cUnpacker, "_ext_types", unpacker_ext_types, 0);
}
