/* rb_packer.c — MPK::Packer: Ruby objects in, MessagePack bytes out through the core's writer.
 *
 * The packer's output buffer is part of the packer: a Ruby String that the core's writer grows
 * through mpk_writer_init_alloc, so appending a value is the writer's inline store, and MPK.pack
 * returns that String itself (no final copy). The String is never handed to Ruby code while the
 * packer owns it, and it is marked with rb_gc_mark (pinned), so GC.compact cannot move it. */
#include "rb_mpk.h"
#include <ruby/ractor.h>
#include <ruby/version.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

typedef struct packer {
    mpk_writer w;
    VALUE buf;        /* the String the writer writes into; its length is its capacity */
    VALUE io;         /* IO output, or nil */
    VALUE ext_types;  /* Hash: class => [type, proc, recursive] (or nil: nothing registered) */
    VALUE ext_list;   /* Array of [class, entry] in registration order (for subclasses) */
    VALUE ext_cache;  /* Hash: class => entry or false (lookups done) */
    VALUE self;
    int cb_depth;     /* nesting of the value whose callback (to_msgpack, ext packer) is running */
    int ext_cb;       /* ext packer procs running (see writable_packer) */
    VALUE cb_thread;  /* the Thread running this packer's callbacks, or Qfalse when none runs */
    int symbol_ext;   /* Symbol is registered */
    VALUE oversized;  /* [type, proc, false]: Integers beyond 64 bits as this ext type, or nil */
    uint8_t *scratch; /* MPK.pack's first buffer, on its C stack (see pack_scratch), or NULL */
    size_t scratch_cap;
    struct body_ref *refs; /* MPK.pack's long str/bin bodies left out of the buffer (see body_refs) */
    size_t nrefs, refs_cap;
    size_t ref_bytes;      /* their total length */
    int refs_on;           /* bodies may be referenced (MPK.pack until Ruby code may run) */
    uint8_t *spill;        /* MPK.pack's buffer once the scratch is outgrown (see warm_spill), or NULL */
    size_t spill_cap;
} packer;

/* A str or bin body that belongs at offset `at` of the writer's output but was not copied there
 * (body_refs): the String it is in, and its bytes and length when referenced. */
typedef struct body_ref {
    size_t at;
    VALUE str;
    const char *ptr;
    size_t len;
} body_ref;

/* One step of the path from the packed object to the value being packed (for error messages). */
typedef struct path {
    const struct path *up;
    VALUE seg; /* an Integer index or a Hash key */
} path;

static void packer_mark(void *p) {
    packer *pk = p;
    rb_gc_mark(pk->buf);
    rb_gc_mark(pk->io);
    rb_gc_mark(pk->ext_types);
    rb_gc_mark(pk->ext_list);
    rb_gc_mark(pk->ext_cache);
    rb_gc_mark(pk->oversized);
    rb_gc_mark(pk->cb_thread); /* pinned: writable_packer compares it by identity */
    /* rb_gc_mark pins: a referenced String stays alive and in place until its bytes are copied */
    for (size_t i = 0; i < pk->nrefs; i++) rb_gc_mark(pk->refs[i].str);
}

static void packer_free(void *p) {
    packer *pk = p;
    mpk_writer_destroy(&pk->w);
    free(pk->spill); /* MPK.pack raised while it held it */
    xfree(pk->refs);
    xfree(pk);
}

static size_t packer_memsize(const void *p) { return sizeof(packer); }

static const rb_data_type_t packer_type = {
    "MPK::Packer", {packer_mark, packer_free, packer_memsize, NULL}, NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY};

/* The writer's grow callback: the buffer is the packer's String, resized.
 *
 * Speed trick (grow_ahead): from 16 KiB on, the String is made twice the size the writer asks for,
 * and the writer's next request (its capacity doubled) then fits without a resize, so the bytes
 * are copied by a resize at every other step: growth by 4 instead of 2, about a third of the
 * copying (a large output's growth copies were about 15 % of its pack instructions: twitter.json
 * 356k of 2.55M a call, callgrind). MPK.pack gives back a large unused tail at the end (mpk_s_pack),
 * so a result holds at most about twice its size. Below 16 KiB (most messages) nothing changes. */
#define GROW_AHEAD_FROM (16 * 1024)

/* Speed trick (warm_spill): once MPK.pack's output outgrows its 4 KiB scratch, it continues in a
 * malloc'd buffer that each Ractor keeps from one pack to the next (up to SPILL_KEEP_MAX bytes),
 * and the result is made at the end, at its exact size, with one copy (assemble_refs), as for
 * the scratch. Growing a new String for each large output wrote into memory touched for the first
 * time (a page fault per 4 KiB: glibc maps large blocks anew, and the GC frees them only later),
 * plus the growth copies; the kept buffer's pages stay mapped. The result's own pages are still
 * new: prefault_result makes them present in one call. The string array above (526 KB): 57-90
 * page faults a call before (/proc/self/stat minflt; its String grew to 2 MiB), 4-18 after.
 * twitter.json (400 KB, no long bodies) stays where it was (1.63-1.81x msgpack-ruby before,
 * 1.63-1.71x after, CPU time): the final copy costs what the growth copies and faults did.
 * The buffer is taken out of the Ractor's cache while a pack uses it, so a pack nested in a
 * callback (an ext type's proc that calls MPK.pack) gets another, and it goes back when the pack
 * returns (a pack that raises leaves it to its packer object, which frees it). A to_msgpack
 * callback, which is handed the packer, first moves the bytes into the packer's String
 * (expose_packer). MPK._warm_spill = false grows a String instead, as Packer objects do. */
#define SPILL_KEEP_MAX ((size_t)4 << 20)
typedef struct spill_cache {
    uint8_t *buf;
    size_t cap;
} spill_cache;
static void spill_cache_free(void *p) {
    spill_cache *c = p;
    if (c) free(c->buf);
    free(c);
}
/* Ractor-local: freed when its Ractor ends (nothing to mark) */
static const struct rb_ractor_local_storage_type spill_storage = {NULL, spill_cache_free};
static rb_ractor_local_key_t spill_slot;
static int spill_enabled = 1;

static spill_cache *get_spill_cache(void) {
    spill_cache *c = rb_ractor_local_storage_ptr(spill_slot);
    if (MPK__UNLIKELY(!c)) {
        c = calloc(1, sizeof *c);
        if (c) rb_ractor_local_storage_ptr_set(spill_slot, c);
    }
    return c;
}

/* The spill for a pack that needs `need` bytes: the Ractor's kept buffer if it is large enough,
 * else a new one. NULL when out of memory. */
static uint8_t *spill_take(packer *pk, size_t need) {
    spill_cache *c = get_spill_cache();
    uint8_t *b = NULL;
    size_t cap = 0;
    if (c && c->buf) {
        b = c->buf;
        cap = c->cap;
        c->buf = NULL;
        c->cap = 0;
    }
    if (cap < need) {
        free(b); /* its bytes are not needed: no realloc copy */
        cap = need < GROW_AHEAD_FROM ? GROW_AHEAD_FROM : need;
        b = malloc(cap);
        if (!b) return NULL;
    }
    pk->spill = b;
    pk->spill_cap = cap;
    return b;
}

/* The pack is done with its spill: the Ractor keeps the larger of it and the one it has. */
static void spill_give_back(packer *pk) {
    uint8_t *b = pk->spill;
    size_t cap = pk->spill_cap;
    pk->spill = NULL;
    pk->spill_cap = 0;
    if (!b) return;
    spill_cache *c = cap <= SPILL_KEEP_MAX ? get_spill_cache() : NULL;
    if (c && cap > c->cap) {
        free(c->buf);
        c->buf = b;
        c->cap = cap;
        return;
    }
    free(b);
}

static void *packer_grow(void *ctx, void *old, size_t new_size) {
    packer *pk = ctx;
    if (pk->spill && old == pk->spill) { /* the spill grows (twice what is asked, as grow_ahead) */
        if (pk->spill_cap >= new_size) return pk->spill;
        size_t cap = new_size <= SIZE_MAX / 2 ? 2 * new_size : new_size;
        uint8_t *b = realloc(pk->spill, cap);
        if (!b) return NULL; /* pk->spill stays valid and owned: freed with the packer */
        pk->spill = b;
        pk->spill_cap = cap;
        return b;
    }
    if (pk->scratch) {
        uint8_t *s = pk->scratch;
        if (!old) return s; /* the first buffer: MPK.pack's scratch (new_size is its size) */
        /* the output outgrows the scratch: its bytes move into the spill (or the packer's String;
         * the writer is pk->w, which still points into the scratch: only the bytes written so far
         * are copied) */
        size_t used = (size_t)(pk->w.pos - s);
        if (used > pk->scratch_cap) used = pk->scratch_cap;
        pk->scratch = NULL;
        if (spill_enabled) {
            uint8_t *b = spill_take(pk, new_size);
            if (b) memcpy(b, s, used);
            return b;
        }
        VALUE str = rb_str_buf_new((long)new_size);
        rb_str_resize(str, (long)new_size);
        memcpy(RSTRING_PTR(str), s, used);
        pk->buf = str;
        return RSTRING_PTR(str);
    }
    if (NIL_P(pk->buf)) pk->buf = rb_str_buf_new((long)new_size);
    if ((size_t)RSTRING_LEN(pk->buf) >= new_size && new_size >= GROW_AHEAD_FROM) return RSTRING_PTR(pk->buf);
    size_t ahead = new_size >= GROW_AHEAD_FROM && new_size <= (size_t)LONG_MAX / 2 ? 2 * new_size : new_size;
    rb_str_resize(pk->buf, (long)ahead);
    return RSTRING_PTR(pk->buf);
}

/* A packer object of class `klass` (0: hidden) whose first buffer is `scratch` (cap bytes) if given. */
static VALUE packer_new(VALUE klass, uint8_t *scratch, size_t cap) {
    packer *pk;
    VALUE self = TypedData_Make_Struct(klass, packer, &packer_type, pk);
    pk->buf = Qnil;
    pk->io = Qnil;
    pk->ext_types = Qnil;
    pk->ext_list = Qnil;
    pk->ext_cache = Qnil;
    pk->oversized = Qnil;
    pk->self = self;
    pk->scratch = scratch;
    pk->scratch_cap = cap;
    /* 256 bytes: above the embedded-String size, so the bytes live in their own heap block */
    mpk_writer_init_alloc(&pk->w, scratch ? cap : 256, packer_grow, pk);
    return self;
}

static VALUE packer_alloc(VALUE klass) { return packer_new(klass, NULL, 0); }

/* Speed trick (body_refs): MPK.pack leaves the bodies of long strs and bins (BODY_REF_MIN bytes
 * or more) out of its buffer and copies them once, straight into the result, which is made at
 * its exact size when the pack ends (assemble_refs); the buffer holds only the rest. Packing them
 * into the buffer copied every byte into a buffer grown by doubling (the growth copies, and fresh
 * pages of a new allocation for each large output), then handed that buffer over. Measured with
 * warm_spill and prefault_result, CPU time a call interleaved with msgpack-ruby in one process
 * (msgpack-ruby / mpk, two runs each): 1024 strings of 0-1023 bytes 0.93-0.96x -> 1.16-1.39x,
 * 16 bins of 64 KiB 1.91-1.95x -> 2.07-2.40x, 100 non-ASCII strings 1.69-2.14x -> 1.90-2.16x,
 * one 1 MiB string 0.38-0.92x -> 0.98-0.99x (one copy into a new String, as msgpack-ruby, which
 * references strings from 512 KiB); callgrind (which counts a `rep movsb` copy by the byte):
 * 844k -> 379k, 1.40M -> 1.07M, 1.07M -> 0.75M instructions a call; without references
 * (MPK._body_refs = false) the spill and the result each take a copy: 802k, 2.11M, 1.62M.
 * The referenced String is marked (and so pinned) by the packer until its bytes are copied, and
 * its pointer and length are checked again before the copy. Only Ruby code could change it
 * meanwhile, and MPK.pack runs none while references are open: before anything that may run Ruby
 * code (pack_other: to_msgpack, registered types, respond_to?, a Hash's or class's own methods;
 * call_back) materialize_refs copies the bodies into the buffer and turns references off for the
 * rest of that pack, so a callback that changes a String packed before it leaves the packed bytes
 * as they were, as without references. References stop, the same way, once the buffered bytes
 * outweigh the referenced ones (take_body_ref). Packer objects never reference (refs_on is set by
 * MPK.pack only). fastpath_spec packs every length around BODY_REF_MIN, mixed with callbacks that change
 * the Strings, and MPK._body_refs = false (the fallback: every body copied) writes the same bytes. */
#define BODY_REF_MIN 256
static int body_refs_enabled = 1;

/* The head is written by the caller; the body is listed to be copied by assemble_refs. */
static void add_body_ref(packer *pk, VALUE str, const char *ptr, size_t len) {
    if (pk->nrefs == pk->refs_cap) {
        size_t cap = pk->refs_cap ? 2 * pk->refs_cap : 16;
        REALLOC_N(pk->refs, body_ref, cap);
        pk->refs_cap = cap;
    }
    body_ref *r = &pk->refs[pk->nrefs++];
    r->at = mpk_writer_size(&pk->w);
    r->str = str;
    r->ptr = ptr;
    r->len = len;
    if (MPK__UNLIKELY(len > (size_t)LONG_MAX - pk->ref_bytes)) rb_raise(rb_eRangeError, "packed output over %ld bytes", LONG_MAX);
    pk->ref_bytes += len;
}

/* Speed trick (prefault_result): a large result's pages are made present with one
 * madvise(MADV_POPULATE_WRITE) before the bytes are copied into it, instead of one page fault per
 * 4 KiB page on the first write. malloc serves large blocks with new mappings (glibc: from 128 KiB,
 * raised to the largest block freed, which an equal request then still meets), so the result of
 * a large pack is usually untouched memory: with the 526 KB of the string-array workload, every
 * page of it faulted on every pack, in mpk and in msgpack-ruby alike (/proc/self/stat minflt:
 * 129-137 faults a call), and on this VM first touches cost more than the copy. Measured in C on
 * this machine: a fresh 526 KB mapping written in full 190-329 us, populated then written 85-91
 * us; populating 1 MiB already present costs 11-25 us, so mincore() first asks whether the first
 * and last pages are present and, if both are, nothing is done. Linux 5.14 and later; elsewhere,
 * or when the call fails (older kernels: EINVAL), the pages fault on first write as before.
 * MPK._prefault = false turns it off (the specs pack with and without). */
#define PREFAULT_MIN (64 * 1024)
#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23 /* <linux/mman.h>; glibc's headers name it from 2.35 */
#endif
static int prefault_enabled = 1;
static long page_size;

static void prefault_result(char *p, size_t len) {
#if defined(__linux__)
    if (!prefault_enabled || len < PREFAULT_MIN || page_size <= 0) return;
    uintptr_t ps = (uintptr_t)page_size;
    uintptr_t a = ((uintptr_t)p + ps - 1) & ~(ps - 1), e = ((uintptr_t)p + len) & ~(ps - 1);
    if (e <= a + ps) return;
    unsigned char first = 0, last = 0;
    if (mincore((void *)a, ps, &first) == 0 && mincore((void *)(e - ps), ps, &last) == 0 && (first & last & 1)) return;
    (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE); /* pages only: the bytes are not changed */
#else
    (void)p;
    (void)len;
#endif
}

/* The whole output, buffer and referenced bodies in order, as a new String of its exact size;
 * the references are then dropped. */
static VALUE assemble_refs(packer *pk) {
    size_t n = mpk_writer_size(&pk->w);
    if (pk->ref_bytes > (size_t)LONG_MAX - n) rb_raise(rb_eArgError, "packed output too large: %zu + %zu bytes", n, pk->ref_bytes);
    VALUE out = rb_str_new(NULL, (long)(n + pk->ref_bytes)); /* may run the GC: the references are marked */
    char *dst = RSTRING_PTR(out);
    prefault_result(dst, n + pk->ref_bytes);
    const uint8_t *src = mpk_writer_data(&pk->w);
    size_t from = 0;
    for (size_t i = 0; i < pk->nrefs; i++) {
        const body_ref *r = &pk->refs[i];
        if (MPK__UNLIKELY(RSTRING_PTR(r->str) != r->ptr || (size_t)RSTRING_LEN(r->str) != r->len))
            rb_raise(rb_eRuntimeError, "String changed while packing"); /* cannot happen: see body_refs */
        memcpy(dst, src + from, r->at - from);
        dst += r->at - from;
        from = r->at;
        memcpy(dst, r->ptr, r->len);
        dst += r->len;
    }
    memcpy(dst, src + from, n - from);
    pk->nrefs = 0;
    pk->ref_bytes = 0;
    return out;
}

/* Before Ruby code may run: the referenced bodies go into the buffer (the writer continues in a
 * String holding the whole output), and no more are referenced in this pack. */
static void materialize_refs(packer *pk) {
    if (MPK__LIKELY(!pk->nrefs)) return;
    pk->refs_on = 0; /* at most one such copy per pack */
    VALUE all = assemble_refs(pk);
    size_t total = (size_t)RSTRING_LEN(all);
    pk->scratch = NULL; /* the scratch's bytes are in `all` */
    pk->buf = Qnil;
    mpk_writer_init_alloc(&pk->w, total * 2 > 256 ? total * 2 : 256, packer_grow, pk);
    mpk_write_bytes(&pk->w, RSTRING_PTR(all), total);
    spill_give_back(pk); /* its bytes are in `all` */
    RB_GC_GUARD(all);
}

/* Whether a body of len bytes is to be referenced (see body_refs). */
static inline int take_body_ref(packer *pk, long len) {
    return MPK__UNLIKELY(len >= BODY_REF_MIN) && pk->refs_on;
}

/* Before Ruby code sees MPK.pack's packer (a to_msgpack callback gets it and may keep it): its
 * bytes leave the scratch for a String, and the hidden object becomes an MPK::Packer. */
static void expose_packer(packer *pk) {
    materialize_refs(pk);
    pk->refs_on = 0; /* a Packer object's bytes are all in its buffer */
    if (pk->scratch) {
        uint8_t *s = pk->scratch;
        size_t used = mpk_writer_size(&pk->w);
        pk->scratch = NULL;
        mpk_writer_init_alloc(&pk->w, used * 2 > 256 ? used * 2 : 256, packer_grow, pk);
        mpk_write_bytes(&pk->w, s, used);
    } else if (pk->spill) { /* the same out of the spill, which then goes back */
        size_t used = mpk_writer_size(&pk->w);
        mpk_writer_init_alloc(&pk->w, used * 2 > 256 ? used * 2 : 256, packer_grow, pk);
        mpk_write_bytes(&pk->w, pk->spill, used);
        spill_give_back(pk);
    }
    if (!RBASIC_CLASS(pk->self)) rb_obj_reveal(pk->self, cPacker);
}

static packer *get_packer(VALUE self) {
    packer *pk;
    TypedData_Get_Struct(self, packer, &packer_type, pk);
    return pk;
}

/* Refuses a write that would land in the middle of a value being packed: one made by an ext packer
 * proc into the packer that called it (the proc's payload is written after it returns, so the
 * write would come out before the ext's head, inside the enclosing container), or one made by
 * another Thread while a callback of this packer's pack runs (the GVL can change hands in Ruby
 * code). A to_msgpack(packer) callback writing its own value, the protocol msgpack-ruby defines,
 * is the one write a callback may make. */
static void refuse_reentry(packer *pk) {
    if (rb_thread_current() != pk->cb_thread)
        rb_raise(rb_eRuntimeError, "MPK::Packer used by another thread while a callback of its pack runs");
    if (pk->ext_cb) rb_raise(rb_eRuntimeError, "MPK::Packer used from inside its own ext type callback");
}

/* The packer of a method that writes, resets or re-creates the buffer (see refuse_reentry). */
static packer *writable_packer(VALUE self) {
    packer *pk = get_packer(self);
    if (MPK__UNLIKELY(pk->cb_thread != Qfalse)) refuse_reentry(pk);
    return pk;
}

static void check_writer(packer *pk) {
    mpk_error_kind k = mpk_writer_error(&pk->w);
    if (k == MPK_OK) return;
    if (k == MPK_ERR_NO_MEMORY) rb_memerror();
    rb_mpk_raise(ePackError, mpk_error_name(k), -1, "packer failed: %s", mpk_error_name(k));
}

/* ------------------------------------------------------------------------------------------------
 * Errors with the path to the value
 * ----------------------------------------------------------------------------------------------*/

static VALUE path_string(const path *p) {
    VALUE segs = rb_ary_new();
    for (; p; p = p->up) rb_ary_unshift(segs, p->seg);
    VALUE s = rb_str_new_cstr("$"); /* the value given to pack, as the other languages write it */
    for (long i = 0; i < RARRAY_LEN(segs); i++) {
        rb_str_cat_cstr(s, "[");
        rb_str_append(s, rb_inspect(RARRAY_AREF(segs, i)));
        rb_str_cat_cstr(s, "]");
    }
    return s;
}

NORETURN(static void raise_at(VALUE klass, const char *kind, const path *p, const char *what, VALUE obj));
static void raise_at(VALUE klass, const char *kind, const path *p, const char *what, VALUE obj) {
    VALUE where = path_string(p);
    VALUE cname = rb_class_name(rb_obj_class(obj));
    int nested = RSTRING_LEN(where) > 1; /* "$" alone: the value itself, no path to name */
    rb_mpk_raise(klass, kind, -1, "%s %s%s%s", what, StringValueCStr(cname), nested ? " at " : "",
                 nested ? StringValueCStr(where) : "");
}

/* ------------------------------------------------------------------------------------------------
 * Values
 * ----------------------------------------------------------------------------------------------*/

static void pack_value(packer *pk, VALUE v, int depth, const path *up);

static int enc_utf8, enc_usascii, enc_binary; /* encoding indexes, looked up once */

/* Speed trick: a fixstr (up to 31 bytes: most keys and many values) written with mpk__copy_short's
 * fixed-size moves (c/include/mpk/common.h). The writer's mpk_write_str copies with a memcpy of variable length, which GCC
 * turns into `rep movsb` here: a slow start on real CPUs, and one counted instruction per byte
 * under callgrind. twitter.json pack 3.66M -> 3.50M instructions a call (callgrind,
 * bench/icount.rb; msgpack-ruby 3.59M). Returns 0
 * (nothing written) for longer strings or when fewer than 32 bytes of room are left; the caller
 * then takes mpk_write_str, which writes the same bytes (fastpath_spec packs every length 0..40). */
static inline int write_fixstr(mpk_writer *w, const char *src, long len) {
    if (len > 31 || w->end - w->pos < 32) return 0;
    uint8_t *p = w->pos;
    p[0] = (uint8_t)(0xa0 | len);
    mpk__copy_short(p + 1, src, (size_t)len);
    w->pos = p + 1 + len;
    return 1;
}

/* The head of a referenced str (head16 0xda) or bin (0xc5) body of 256 bytes up to 2^32-1,
 * stored here when 5 bytes of room are left (else by the writer's head functions). */
static inline void write_long_head(mpk_writer *w, uint8_t head16, size_t len) {
    if (MPK__LIKELY(w->end - w->pos >= 5)) {
        uint8_t *p = w->pos;
        if (len <= 0xffff) {
            p[0] = head16;
            mpk__store16(p + 1, (uint16_t)len);
            w->pos = p + 3;
        } else {
            p[0] = (uint8_t)(head16 + 1); /* str 32 / bin 32 follow str 16 / bin 16 */
            mpk__store32(p + 1, (uint32_t)len);
            w->pos = p + 5;
        }
        return;
    }
    if (head16 == 0xda) mpk_write_str_head(w, (uint32_t)len);
    else mpk_write_bin_head(w, (uint32_t)len);
}

static void pack_string(packer *pk, VALUE v, const path *up) {
    int idx = RB_ENCODING_GET_INLINED(v);
    long len = RSTRING_LEN(v);
    if (MPK__UNLIKELY(len > 4294967295L)) raise_at(rb_eRangeError, "bad_request", up, "String over 2^32-1 bytes:", v);
    if (MPK__LIKELY(idx == enc_utf8 || idx == enc_usascii)) {
        if (take_body_ref(pk, len)) {
            write_long_head(&pk->w, 0xda, (size_t)len);
            add_body_ref(pk, v, RSTRING_PTR(v), (size_t)len);
        } else if (!write_fixstr(&pk->w, RSTRING_PTR(v), len)) {
            mpk_write_str(&pk->w, RSTRING_PTR(v), (size_t)len);
        }
        return;
    }
    if (idx == enc_binary) {
        if (take_body_ref(pk, len)) {
            write_long_head(&pk->w, 0xc5, (size_t)len);
            add_body_ref(pk, v, RSTRING_PTR(v), (size_t)len);
        } else {
            mpk_write_bin(&pk->w, RSTRING_PTR(v), (size_t)len);
        }
        return;
    }
    idx = rb_enc_get_index(v); /* the inlined index may be the "too big to inline" marker */
    rb_encoding *enc = rb_enc_from_index(idx);
    if (!(enc && rb_enc_asciicompat(enc) && rb_enc_str_asciionly_p(v))) {
        /* another encoding: MessagePack's str is UTF-8 */
        v = rb_str_conv_enc(v, enc, rb_utf8_encoding());
        if (rb_enc_get_index(v) != enc_utf8) raise_at(ePackError, "bad_request", up, "String not convertible to UTF-8:", v);
        len = RSTRING_LEN(v);
    }
    mpk_write_str(&pk->w, RSTRING_PTR(v), (size_t)len);
    RB_GC_GUARD(v);
}

/* Speed trick (fixnum_by_width): a Fixnum written with branches on its width only, not on its
 * sign. The core's mpk_write_int branches on the sign first and then on the magnitude against
 * thresholds that differ by sign; an array of integers whose signs are random (the Ruby seed's
 * integer array: 10k values in +-2^31, all int 32 / uint 32) mispredicts that first branch on
 * every other element, in mpk and in msgpack-ruby alike, and the mispredictions were most of what
 * separated the two libraries' times: instructions said 1.74x (bench/icount.rb: 447k against
 * 778k a call) while the times said 1.31-1.35x. Here the sign only selects values (no branch):
 * a negative v is mapped to 2(-v-1)+1, for which int 8/16/32 have the same limits (256, 65536,
 * 2^32) as uint 8/16/32 have for a non-negative v, and a signed head is its unsigned head + 4
 * (0xcc-0xcf -> 0xd0-0xd3). So a run of values of one width takes the same branch every time,
 * whatever their signs. The integer array's pack, CPU time a call interleaved in one process
 * with the switch off and msgpack-ruby (loaded machine): 122 -> 62 us (msgpack-ruby 144 us:
 * 1.17x -> 2.32x); the C seed's ints 0..65535 322 -> 263 us; twitter.json, citm_catalog.json,
 * the seed's Twitter response and 100 Products unchanged (0.99-1.03x). cachegrind's branch
 * simulation: 5.0k fewer mispredicted branches a pack of the 10k integers (one every other
 * element). It costs instructions (callgrind: 463k -> 563k a call, the sign arithmetic), which
 * is why instruction counts did not show the problem. The same shortest form as mpk_write_int; MPK._fixnum_by_width = false (for the specs) takes
 * mpk_write_int, and fastpath_spec packs every width boundary of both signs both ways and against
 * msgpack-ruby. */
static int fixnum_by_width_enabled = 1;

static inline void write_fixnum(mpk_writer *w, long v) {
    if (MPK__UNLIKELY(!fixnum_by_width_enabled)) {
        mpk_write_int(w, v);
        return;
    }
    if (!mpk__writer_room(w, 9)) return;
    uint64_t neg = (uint64_t)v >> 63;          /* 1 if v < 0 */
    uint64_t mag = (uint64_t)v ^ (0 - neg);    /* v, or -v-1 */
    uint64_t key = (mag << neg) | neg;         /* v, or 2(-v-1)+1: the width limits of both signs */
    uint8_t sgn = (uint8_t)(neg << 2);         /* signed heads are 4 above the unsigned ones */
    uint8_t *p = w->pos;
    if (key < (128u >> neg)) { /* positive fixint < 128, negative fixint >= -32 */
        p[0] = (uint8_t)v;
        w->pos = p + 1;
    } else if (key <= 0xff) {
        p[0] = (uint8_t)(0xcc + sgn);
        p[1] = (uint8_t)v;
        w->pos = p + 2;
    } else if (key <= 0xffff) {
        p[0] = (uint8_t)(0xcd + sgn);
        mpk__store16(p + 1, (uint16_t)v);
        w->pos = p + 3;
    } else if (key <= 0xffffffffu) {
        p[0] = (uint8_t)(0xce + sgn);
        mpk__store32(p + 1, (uint32_t)v);
        w->pos = p + 5;
    } else { /* a Fixnum is within +-2^62: key < 2^63 */
        p[0] = (uint8_t)(0xcf + sgn);
        mpk__store64(p + 1, (uint64_t)v);
        w->pos = p + 9;
    }
}

/* A Bignum within int64 (-2^63 .. 2^63-1). */
static int big_fits_int64(VALUE v) {
    int nlz;
    size_t sz = rb_absint_size(v, &nlz);
    if (sz < 8 || (sz == 8 && nlz > 0)) return 1;
    return sz == 8 && nlz == 0 && !rb_big_sign(v) && rb_absint_singlebit_p(v); /* exactly -2^63 */
}

static void pack_registered(packer *pk, VALUE v, VALUE entry, int depth, const path *up);

static void pack_integer(packer *pk, VALUE v, int depth, const path *up) {
    if (FIXNUM_P(v)) {
        write_fixnum(&pk->w, FIX2LONG(v));
        return;
    }
    int fits = rb_big_sign(v) ? rb_absint_size(v, NULL) <= 8 : big_fits_int64(v);
    if (!fits) {
        if (!NIL_P(pk->oversized)) { /* Factory's oversized_integer_extension */
            pack_registered(pk, v, pk->oversized, depth, up);
            return;
        }
        raise_at(rb_eRangeError, "bad_request", up, "Integer beyond 64 bits:", v);
    }
    if (rb_big_sign(v)) mpk_write_uint(&pk->w, rb_big2ull(v));
    else mpk_write_int(&pk->w, rb_big2ll(v));
}

static void pack_timestamp(packer *pk, VALUE v, const path *up) {
    VALUE sec = rb_ivar_get(v, id_sec), nsec = rb_ivar_get(v, id_nsec);
    if (!RB_INTEGER_TYPE_P(sec) || !RB_INTEGER_TYPE_P(nsec))
        raise_at(rb_eTypeError, "bad_request", up, "sec and nsec must be Integers in", v);
    if (!FIXNUM_P(sec) && !big_fits_int64(sec)) raise_at(rb_eRangeError, "bad_request", up, "seconds beyond int64 in", v);
    long long s = NUM2LL(sec);
    if (!FIXNUM_P(nsec) || FIX2LONG(nsec) < 0 || FIX2LONG(nsec) > 999999999L)
        raise_at(eInvalidTimestampError, "invalid_timestamp", up, "nanoseconds outside 0..999999999 in", v);
    mpk_write_timestamp(&pk->w, s, (uint32_t)FIX2LONG(nsec));
}

static void write_ext_checked(packer *pk, VALUE type, VALUE payload, const path *up, VALUE obj) {
    if (!FIXNUM_P(type) || FIX2LONG(type) < -128 || FIX2LONG(type) > 127)
        raise_at(rb_eRangeError, "bad_request", up, "ext type outside -128..127 for", obj);
    StringValue(payload);
    if (RSTRING_LEN(payload) > 4294967295L) raise_at(rb_eRangeError, "bad_request", up, "ext payload over 2^32-1 bytes for", obj);
    mpk_write_ext(&pk->w, (int8_t)FIX2LONG(type), RSTRING_PTR(payload), (size_t)RSTRING_LEN(payload));
    RB_GC_GUARD(payload);
}

/* Calls a user callback with cb_depth set to `depth`, restoring it even if the callback raises. */
typedef struct cb_args {
    VALUE recv;
    ID mid;
    int argc;
    VALUE argv[2];
} cb_args;

static VALUE cb_call(VALUE p) {
    cb_args *a = (cb_args *)p;
    return rb_funcallv(a->recv, a->mid, a->argc, a->argv);
}

static VALUE call_back(packer *pk, int depth, int ext, VALUE recv, ID mid, int argc, VALUE a0, VALUE a1) {
    materialize_refs(pk); /* Ruby code runs: see body_refs */
    cb_args a = {recv, mid, argc, {a0, a1}};
    int saved = pk->cb_depth, state = 0;
    VALUE saved_thread = pk->cb_thread;
    pk->cb_depth = depth;
    pk->cb_thread = rb_thread_current();
    pk->ext_cb += ext;
    VALUE r = rb_protect(cb_call, (VALUE)&a, &state);
    RB_MPK_ASAN_DEAD_STACK(); /* Ruby code ran */
    pk->ext_cb -= ext;
    pk->cb_thread = saved_thread;
    pk->cb_depth = saved;
    if (state) rb_jump_tag(state);
    return r;
}

static VALUE new_sub_packer(packer *pk, int depth);

static void pack_registered(packer *pk, VALUE v, VALUE entry, int depth, const path *up) {
    VALUE type = rb_ary_entry(entry, 0), proc = rb_ary_entry(entry, 1);
    VALUE payload;
    if (RTEST(rb_ary_entry(entry, 2))) {
        if (depth >= RB_MPK_PACK_DEPTH) raise_at(eStackError, "depth_limit", up, "nesting deeper than 1024 at", v);
        /* recursive: the proc packs the payload with a packer of its own, which shares our types */
        VALUE sub = new_sub_packer(pk, depth + 1);
        call_back(pk, depth, 1, proc, id_call, 2, v, sub);
        payload = rb_funcall(sub, rb_intern("to_s"), 0);
        RB_MPK_ASAN_DEAD_STACK(); /* Ruby code ran */
    } else {
        payload = call_back(pk, depth, 1, proc, id_call, 1, v, Qnil);
    }
    if (!RB_TYPE_P(payload, T_STRING)) raise_at(rb_eTypeError, "bad_request", up, "ext packer did not return a String for", v);
    write_ext_checked(pk, type, payload, up, v);
}

/* The registered entry for an object's class (its own or the first registered ancestor), or nil. */
static VALUE lookup_ext(packer *pk, VALUE klass) {
    VALUE e = rb_hash_lookup2(pk->ext_cache, klass, Qundef);
    if (e != Qundef) return RTEST(e) ? e : Qnil;
    e = rb_hash_lookup2(pk->ext_types, klass, Qnil);
    if (NIL_P(e)) {
        for (long i = 0; i < RARRAY_LEN(pk->ext_list); i++) {
            VALUE pair = RARRAY_AREF(pk->ext_list, i);
            if (rb_class_inherited_p(klass, RARRAY_AREF(pair, 0)) == Qtrue) {
                e = RARRAY_AREF(pair, 1);
                break;
            }
        }
    }
    rb_hash_aset(pk->ext_cache, klass, NIL_P(e) ? Qfalse : e);
    return e;
}

typedef struct hash_ctx {
    packer *pk;
    int depth;
    const path *up;
    long count;
} hash_ctx;

/* Speed trick: the double of a flonum (a Float held in the VALUE itself, as most Floats are on
 * 64-bit CRuby) decoded here. RFLOAT_VALUE is an out-of-line call into libruby (rb_float_value,
 * about 16 instructions and a call per Float); the flonum layout (exponent bits rotated, the low
 * two bits the tag, 0x8000000000000002 for 0.0) is CRuby's since 2.0. Instructions a call
 * (callgrind, bench/icount.rb): canada.json pack 13.78M -> 13.12M, 3D model 2.84M -> 2.69M,
 * GeoJSON 357k -> 345k (msgpack-ruby 14.38M, 4.76M, 393k). flonum_inline_ok is set at load time only if the
 * decoding gives back, bit for bit, a set of doubles made into Floats by CRuby itself; otherwise
 * (another layout, a build without flonums) every Float goes through RFLOAT_VALUE, which
 * fastpath_spec also drives (heap Floats: 1e300, tiny numbers). */
static int flonum_inline_ok;

static inline double float_value(VALUE v) {
#if USE_FLONUM && SIZEOF_VALUE == 8
    if (MPK__LIKELY(flonum_inline_ok && RB_FLONUM_P(v))) {
        if (v == (VALUE)0x8000000000000002ull) return 0.0;
        uint64_t b63 = (uint64_t)v >> 63;
        uint64_t x = (2 - b63) | ((uint64_t)v & ~(uint64_t)3);
        uint64_t bits = (x >> 3) | (x << 61);
        double d;
        memcpy(&d, &bits, 8);
        return d;
    }
#endif
    return RFLOAT_VALUE(v);
}

/* Sets flonum_inline_ok: float_value's decoding must agree with CRuby's on these. */
static void check_flonum_inline(void) {
    static const double probes[] = {0.0, 1.0, -1.0, 1.5, -2.75, 0.1, 3.141592653589793, 1e-70, 1e70,
                                    -65.61361699999997, 123456789.125, 2.2250738585072014e-300, 1.7e308};
    flonum_inline_ok = 1;
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        VALUE f = DBL2NUM(probes[i]);
        if (!RB_FLONUM_P(f)) continue; /* a heap Float: never decoded inline */
        double got = float_value(f);
        if (memcmp(&got, &probes[i], 8) != 0) {
            flonum_inline_ok = 0;
            return;
        }
    }
}

/* Speed trick: a Fixnum or flonum array element written without the call into pack_value and
 * the path step (canada.json pack: 17.9M -> 13.7M instructions per call, callgrind; msgpack-ruby
 * 14.2M). They cannot run Ruby code, so the array cannot change under them. Anything else (and
 * a heap Float) returns 0 and takes the general path, which writes the same bytes. */
static inline int pack_number_inline(packer *pk, VALUE e) {
    if (RB_FLONUM_P(e)) {
        mpk_write_float64(&pk->w, float_value(e));
        return 1;
    }
    if (RB_FIXNUM_P(e)) {
        write_fixnum(&pk->w, FIX2LONG(e));
        return 1;
    }
    return 0;
}

/* Speed trick: a plain UTF-8 / US-ASCII String (the usual map key) written without the type
 * dispatch of pack_value (twitter.json pack: 4.3M -> 3.6M instructions per call, callgrind;
 * msgpack-ruby 3.5M; map values too, with pack_number_inline: 3.3M), and Array elements too
 * (pack_child), long ones referenced (body_refs): the string-array workload 378k -> 305k
 * instructions a call, twitter.json 2.36M -> 2.29M.
 * Anything else returns 0 and takes the general path, which writes the same bytes (the specs
 * pack Symbol, Integer, binary and non-UTF-8 keys, and every length around BODY_REF_MIN). */
static MPK__NOINLINE int pack_long_plain_str(packer *pk, VALUE v, long len) {
    if (len > 4294967295L || !pk->refs_on) return 0; /* pack_string raises / copies */
    write_long_head(&pk->w, 0xda, (size_t)len);
    add_body_ref(pk, v, RSTRING_PTR(v), (size_t)len);
    return 1;
}

/* the long case out of line keeps this small enough to be inlined where it is called */
static inline int pack_plain_str(packer *pk, VALUE v) {
    if (RB_SPECIAL_CONST_P(v) || RB_BUILTIN_TYPE(v) != T_STRING || RBASIC_CLASS(v) != rb_cString) return 0;
    int idx = RB_ENCODING_GET_INLINED(v);
    if (idx != enc_utf8 && idx != enc_usascii) return 0;
    long len = RSTRING_LEN(v);
    if (MPK__UNLIKELY(len >= BODY_REF_MIN)) return pack_long_plain_str(pk, v, len);
    if (!write_fixstr(&pk->w, RSTRING_PTR(v), len)) mpk_write_str(&pk->w, RSTRING_PTR(v), (size_t)len);
    return 1;
}

static void pack_array(packer *pk, VALUE v, int depth, const path *up);
static void pack_hash(packer *pk, VALUE v, int depth, const path *up);

/* Speed trick: an element of an Array or a Hash value that is a plain Array or Hash (coordinate
 * lists, records in a list, nested records) goes straight to pack_array / pack_hash, without
 * pack_value's dispatch; anything else goes to pack_value, which would make the same choice (its
 * fast path takes exactly the Arrays and Hashes whose class is Array and Hash; subclasses go to
 * pack_other for registered types and to_msgpack: fastpath_spec checks both). Instructions a call
 * (callgrind, bench/icount.rb): canada.json pack 13.12M -> 11.32M, GeoJSON 345k -> 311k with
 * the Array case alone (msgpack-ruby 14.38M, 393k); with the Hash case and Hash values too:
 * citm_catalog.json 9.62M -> 8.73M, twitter.json 3.49M -> 3.37M, canada.json 11.21M. */
/* Speed trick: a short Array of Fixnums and flonums (a coordinate pair, a vector, a color) written
 * in one go, without pack_array's call, path and per-element checks: canada.json pack 9.6M ->
 * 9.1M instructions a call (callgrind; 56k [lng, lat] pairs a call; bench/icount.rb 9.81M -> 9.28M
 * with pack_scratch; a first version that checked the elements before writing them cost more
 * than it saved). Nothing here runs Ruby code; the only
 * thing that may run the GC (and so move the elements out of CRuby's transient heap) is making
 * room in the output, which comes first, so the elements are read after it. Returns 0, having
 * written nothing, for anything else (longer Arrays, other elements, no room), and at the depth
 * limit, so that pack_array raises it. */
#define NUMBER_TUPLE_MAX 15
static inline int pack_number_tuple(packer *pk, VALUE a, int depth) {
    long n = RARRAY_LEN(a);
    if (n > NUMBER_TUPLE_MAX || depth >= RB_MPK_PACK_DEPTH) return 0;
    if (!mpk__writer_room(&pk->w, 1 + 9 * (size_t)n)) return 0; /* the general path reports the error */
    const VALUE *e = RARRAY_CONST_PTR(a);
    uint8_t *start = pk->w.pos;
    *pk->w.pos++ = (uint8_t)(0x90 | n);
    for (long i = 0; i < n; i++) {
        VALUE x = e[i];
        if (RB_FLONUM_P(x)) mpk_write_float64(&pk->w, float_value(x));
        else if (RB_FIXNUM_P(x)) write_fixnum(&pk->w, FIX2LONG(x));
        else {
            pk->w.pos = start; /* take back what was written: the general path writes it all */
            return 0;
        }
    }
    return 1;
}

static inline void pack_child(packer *pk, VALUE v, int depth, const path *p) {
    if (!RB_SPECIAL_CONST_P(v)) {
        if (RB_BUILTIN_TYPE(v) == T_ARRAY && RBASIC_CLASS(v) == rb_cArray) {
            if (pack_number_tuple(pk, v, depth)) return;
            pack_array(pk, v, depth, p);
            return;
        }
        if (RB_BUILTIN_TYPE(v) == T_HASH && RBASIC_CLASS(v) == rb_cHash) {
            pack_hash(pk, v, depth, p);
            return;
        }
        if (pack_plain_str(pk, v)) return;
    }
    pack_value(pk, v, depth, p);
}

static int pack_pair(VALUE key, VALUE val, VALUE arg) {
    hash_ctx *c = (hash_ctx *)arg;
    path p = {c->up, key};
    if (!pack_plain_str(c->pk, key)) pack_value(c->pk, key, c->depth, &p);
    if (!pack_number_inline(c->pk, val) && !pack_plain_str(c->pk, val)) pack_child(c->pk, val, c->depth, &p);
    c->count++;
    return ST_CONTINUE;
}

static void pack_array(packer *pk, VALUE v, int depth, const path *up) {
    long n = RARRAY_LEN(v);
    if (MPK__UNLIKELY(depth >= RB_MPK_PACK_DEPTH)) raise_at(eStackError, "depth_limit", up, "nesting deeper than 1024 at", v);
    if (MPK__UNLIKELY(n > 4294967295L)) raise_at(rb_eRangeError, "bad_request", up, "Array over 2^32-1 elements:", v);
    mpk_write_array(&pk->w, (uint32_t)n);
    for (long i = 0; i < n; i++) {
        if (MPK__UNLIKELY(i >= RARRAY_LEN(v))) raise_at(rb_eRuntimeError, "bad_request", up, "Array shrank while packing:", v);
        VALUE e = RARRAY_AREF(v, i);
        if (pack_number_inline(pk, e)) continue;
        path p = {up, LONG2FIX(i)};
        pack_child(pk, e, depth + 1, &p);
    }
}

/* Speed trick: a Hash's pairs read straight from CRuby 3.1's tables instead of through
 * rb_hash_foreach, whose rb_ensure, iteration-level bookkeeping, st_foreach_check and callback per
 * pair were 28 % of twitter.json's pack instructions (callgrind: rb_st_foreach_check 7.0M,
 * hash_foreach_iter 4.0M, hash_foreach_call 3.0M, rb_ensure 2.2M, rb_hash_foreach 1.1M of 62.5M for
 * 20 packs).
 *
 * The layouts are CRuby 3.1's private ones (internal/hash.h, st.c): a Hash of up to 8 pairs holds an
 * "ar table" of {key, value} pairs (a deleted pair's key is Qundef; the flags hold its bound), a
 * larger one an st_table (public in ruby/st.h) whose entries are {hash, key, value} (a deleted
 * entry's hash is all ones). hash_direct_ok is set at load time only on CRuby 3.1 and only if
 * reading hashes of 0-40 pairs, with deletions and re-insertions, this way gives exactly
 * rb_hash_foreach's pairs in its order (check_hash_direct); otherwise pack_hash uses
 * rb_hash_foreach, which fastpath_spec also drives (MPK._hash_direct = false).
 *
 * rb_hash_foreach also stops a callback from adding keys to a Hash being iterated; here Ruby code
 * (to_msgpack, ext packers, inside a key or value) may change the Hash, so after every pair the
 * table is looked at again (hash_each_direct): if pairs were added or removed, the pack raises
 * (RuntimeError "Hash changed while packing") before reading another pair, so nothing is read from
 * a table the Hash no longer owns. Measured with that check: twitter.json pack 62.5M -> 50.9M
 * instructions for 20 packs (callgrind). */
#if defined(RUBY_API_VERSION_MAJOR) && RUBY_API_VERSION_MAJOR == 3 && RUBY_API_VERSION_MINOR == 1 && SIZEOF_VALUE == 8
#define MPK_HASH_DIRECT 1
struct mpk_rhash { /* CRuby 3.1's struct RHash */
    struct RBasic basic;
    union {
        st_table *st;
        VALUE *ar; /* 8 {key, value} pairs, or NULL */
    } as;
    VALUE ifnone;
    VALUE ar_hint;
};
struct mpk_st_entry { /* st.c's st_table_entry */
    st_index_t hash;
    VALUE key;
    VALUE record;
};
#define MPK_RHASH_ST_FLAG FL_USER3
#define MPK_RHASH_AR_BOUND(flags) (((flags) >> (FL_USHIFT + 8)) & 0xf)
/* the flag bits that say how the pairs are held (table kind, ar size and bound); the others change
 * for reasons of no concern here (GC age, freezing, iteration level) */
#define MPK_RHASH_LAYOUT_BITS (MPK_RHASH_ST_FLAG | ((VALUE)0xff << (FL_USHIFT + 4)))
#define MPK_ST_DELETED ((st_index_t)~(st_index_t)0)
#else
#define MPK_HASH_DIRECT 0
#endif
static int hash_direct_ok;

NORETURN(static void hash_changed(const path *up, VALUE v));
static void hash_changed(const path *up, VALUE v) {
    raise_at(rb_eRuntimeError, "bad_request", up, "Hash changed while packing:", v);
}

#if MPK_HASH_DIRECT
/* Calls fn(key, value, arg) for every pair of h in order, straight from its table. Packing a pair
 * can run Ruby code (to_msgpack, ext packers) and the GC (growing the output), so after each pair
 * the table is looked at again before the next read: a change of its kind, size or bound, or of
 * an st_table's entries, raises; an ar table's address is read anew for every pair, since the GC
 * moves ar tables out of CRuby 3.1's transient heap without changing anything else. */
static inline void hash_each_direct(VALUE h, int (*fn)(VALUE, VALUE, VALUE), VALUE arg, const path *up) {
    const struct mpk_rhash *rh = (const struct mpk_rhash *)h;
    const VALUE layout = RBASIC(h)->flags & MPK_RHASH_LAYOUT_BITS;
    if (layout & MPK_RHASH_ST_FLAG) {
        st_table *t = rh->as.st;
        const struct mpk_st_entry *e = (const struct mpk_st_entry *)t->entries;
        st_index_t bound = t->entries_bound;
        for (st_index_t i = t->entries_start; i < bound; i++) {
            if (e[i].hash == MPK_ST_DELETED) continue;
            fn(e[i].key, e[i].record, arg);
            if (MPK__UNLIKELY((RBASIC(h)->flags & MPK_RHASH_LAYOUT_BITS) != layout || rh->as.st != t ||
                              (const void *)t->entries != (const void *)e || t->entries_bound != bound))
                hash_changed(up, h);
        }
    } else {
        unsigned bound = (unsigned)MPK_RHASH_AR_BOUND(layout);
        for (unsigned i = 0; i < bound; i++) {
            const VALUE *ar = rh->as.ar; /* NULL only with no pairs: bound is then 0 */
            VALUE key = ar[2 * i];
            if (key == Qundef) continue;
            fn(key, ar[2 * i + 1], arg);
            if (MPK__UNLIKELY((RBASIC(h)->flags & MPK_RHASH_LAYOUT_BITS) != layout)) hash_changed(up, h);
        }
    }
}

static int collect_pair(VALUE key, VALUE val, VALUE ary) {
    rb_ary_push(ary, key);
    rb_ary_push(ary, val);
    return ST_CONTINUE;
}

/* Sets hash_direct_ok: hash_each_direct must give rb_hash_foreach's pairs, in its order. */
static void check_hash_direct(void) {
    hash_direct_ok = 0;
    for (int size = 0; size <= 40; size++) {
        for (int del = -1; del < size; del += 3) {
            VALUE h = rb_hash_new();
            for (int i = 0; i < size; i++)
                rb_hash_aset(h, (i & 1) ? rb_sprintf("k%d", i) : INT2FIX(i * 7), INT2FIX(i));
            if (del >= 0) {
                rb_hash_delete(h, (del & 1) ? rb_sprintf("k%d", del) : INT2FIX(del * 7));
                if (del % 2 == 0) rb_hash_aset(h, rb_str_new_cstr("again"), Qtrue);
            }
            VALUE want = rb_ary_new(), got = rb_ary_new();
            rb_hash_foreach(h, collect_pair, want);
            hash_each_direct(h, collect_pair, got, NULL);
            if (RARRAY_LEN(got) != 2 * (long)RHASH_SIZE(h) || !rb_equal(want, got)) return;
            for (long i = 0; i < RARRAY_LEN(got); i++) /* the very same objects */
                if (RARRAY_AREF(got, i) != RARRAY_AREF(want, i)) return;
        }
    }
    hash_direct_ok = 1;
}
#endif

static void pack_hash(packer *pk, VALUE v, int depth, const path *up) {
    long n = (long)RHASH_SIZE(v);
    if (MPK__UNLIKELY(depth >= RB_MPK_PACK_DEPTH)) raise_at(eStackError, "depth_limit", up, "nesting deeper than 1024 at", v);
    if (MPK__UNLIKELY(n > 4294967295L)) raise_at(rb_eRangeError, "bad_request", up, "Hash over 2^32-1 pairs:", v);
    mpk_write_map(&pk->w, (uint32_t)n);
    if (!n) return;
    hash_ctx c = {pk, depth + 1, up, 0};
#if MPK_HASH_DIRECT
    if (MPK__LIKELY(hash_direct_ok)) hash_each_direct(v, pack_pair, (VALUE)&c, up);
    else
#endif
        rb_hash_foreach(v, pack_pair, (VALUE)&c);
    if (MPK__UNLIKELY(c.count != n)) raise_at(rb_eRuntimeError, "bad_request", up, "Hash changed size while packing:", v);
}

/* Everything but the plain core values of pack_value's fast path: registered types first (for
 * subclasses of core classes too), then by type, ExtensionValue, Timestamp, to_msgpack. */
static void pack_other(packer *pk, VALUE v, int depth, const path *up) {
    materialize_refs(pk); /* what follows may run Ruby code: see body_refs */
    if (!NIL_P(pk->ext_types)) {
        VALUE entry = lookup_ext(pk, rb_obj_class(v));
        if (!NIL_P(entry)) {
            pack_registered(pk, v, entry, depth, up);
            return;
        }
    }
    switch (rb_type(v)) {
    case T_STRING: pack_string(pk, v, up); return;
    case T_SYMBOL: pack_string(pk, rb_sym2str(v), up); return;
    case T_BIGNUM: pack_integer(pk, v, depth, up); return;
    case T_ARRAY: pack_array(pk, v, depth, up); return;
    case T_HASH: pack_hash(pk, v, depth, up); return;
    default: break;
    }
    if (rb_obj_is_kind_of(v, cExtensionValue)) {
        write_ext_checked(pk, rb_struct_aref(v, INT2FIX(0)), rb_struct_aref(v, INT2FIX(1)), up, v);
        return;
    }
    if (rb_obj_is_kind_of(v, cTimestamp)) {
        pack_timestamp(pk, v, up);
        return;
    }
    if (rb_respond_to(v, id_to_msgpack)) {
        if (depth >= RB_MPK_PACK_DEPTH) raise_at(eStackError, "depth_limit", up, "nesting deeper than 1024 at", v);
        expose_packer(pk);
        call_back(pk, depth + 1, 0, v, id_to_msgpack, 1, pk->self, Qnil);
        return;
    }
    raise_at(eUnsupportedTypeError, "unsupported_type", up, "no MessagePack form for", v);
}

static void pack_value(packer *pk, VALUE v, int depth, const path *up) {
    /* the plain core values first: one type switch, one class compare */
    switch (rb_type(v)) {
    case T_NIL: mpk_write_nil(&pk->w); return;
    case T_TRUE: mpk_write_bool(&pk->w, 1); return;
    case T_FALSE: mpk_write_bool(&pk->w, 0); return;
    case T_FIXNUM: write_fixnum(&pk->w, FIX2LONG(v)); return;
    case T_FLOAT: mpk_write_float64(&pk->w, float_value(v)); return;
    case T_STRING:
        if (MPK__LIKELY(RBASIC_CLASS(v) == rb_cString)) {
            pack_string(pk, v, up);
            return;
        }
        break;
    case T_HASH:
        if (MPK__LIKELY(RBASIC_CLASS(v) == rb_cHash)) {
            pack_hash(pk, v, depth, up);
            return;
        }
        break;
    case T_ARRAY:
        if (MPK__LIKELY(RBASIC_CLASS(v) == rb_cArray)) {
            pack_array(pk, v, depth, up);
            return;
        }
        break;
    case T_SYMBOL:
        if (!pk->symbol_ext) {
            pack_string(pk, rb_sym2str(v), up);
            return;
        }
        break;
    case T_BIGNUM: pack_integer(pk, v, depth, up); return;
    default: break;
    }
    pack_other(pk, v, depth, up);
}

/* ------------------------------------------------------------------------------------------------
 * Ruby methods
 * ----------------------------------------------------------------------------------------------*/

static VALUE new_sub_packer(packer *pk, int depth) {
    VALUE sub = packer_alloc(cPacker);
    packer *s = get_packer(sub);
    s->ext_types = pk->ext_types;
    s->ext_list = pk->ext_list;
    s->ext_cache = pk->ext_cache;
    s->symbol_ext = pk->symbol_ext;
    s->oversized = pk->oversized;
    s->cb_depth = depth;
    return sub;
}

static void flush_to_io(packer *pk);
static VALUE packer_reset(VALUE self);

/* Packer.new(io = nil, options = nil) */
static VALUE packer_initialize(int argc, VALUE *argv, VALUE self) {
    packer *pk = writable_packer(self);
    VALUE io = Qnil, opts = Qnil;
    rb_scan_args(argc, argv, "02", &io, &opts);
    if (RB_TYPE_P(io, T_HASH) && NIL_P(opts)) {
        opts = io;
        io = Qnil;
    }
    pk->io = io;
    return self;
}

typedef struct write_args {
    packer *pk;
    VALUE v;
} write_args;

static VALUE write_body(VALUE p) {
    write_args *a = (write_args *)p;
    pack_value(a->pk, a->v, a->pk->cb_depth, NULL);
    check_writer(a->pk);
    return Qnil;
}

/* Packer#write. A value that fails halfway (an unsupported object deep inside, a callback that
 * raises, no memory) leaves nothing of itself behind: the buffer is rewound to where the value
 * began, so the bytes written before stay and the next write does not land after half a value (a
 * corrupt stream: `[1, 2, Object.new]` left `93 01 02`, and a later write became the array's third
 * element). msgpack-ruby keeps the partial bytes. A write from inside a callback (to_msgpack's
 * protocol) belongs to the outer value, which rewinds for it. */
static VALUE packer_write(VALUE self, VALUE v) {
    RB_MPK_ASAN_DEAD_STACK(); /* Ruby enters the codec */
    packer *pk = writable_packer(self);
    write_args a = {pk, v};
    if (pk->cb_depth) {
        write_body((VALUE)&a);
        return self;
    }
    size_t start = mpk_writer_size(&pk->w);
    int state = 0;
    rb_protect(write_body, (VALUE)&a, &state);
    if (state) {
        RB_MPK_ASAN_DEAD_STACK(); /* Ruby code may have run */
        if (mpk_writer_rewind(&pk->w, start) != MPK_OK) packer_reset(self);
        rb_jump_tag(state);
    }
    if (!NIL_P(pk->io) && mpk_writer_size(&pk->w) >= 32 * 1024) flush_to_io(pk);
    return self;
}

static VALUE packer_write_nil(VALUE self) {
    mpk_write_nil(&writable_packer(self)->w);
    return self;
}
static VALUE packer_write_true(VALUE self) {
    mpk_write_bool(&writable_packer(self)->w, 1);
    return self;
}
static VALUE packer_write_false(VALUE self) {
    mpk_write_bool(&writable_packer(self)->w, 0);
    return self;
}
static VALUE packer_write_float32(VALUE self, VALUE f) {
    if (!rb_obj_is_kind_of(f, rb_cNumeric)) rb_raise(rb_eArgError, "expected Numeric, got %s", rb_obj_classname(f));
    mpk_write_float32(&writable_packer(self)->w, (float)NUM2DBL(f));
    return self;
}
static VALUE packer_write_float(VALUE self, VALUE f) {
    if (!rb_obj_is_kind_of(f, rb_cNumeric)) rb_raise(rb_eArgError, "expected Numeric, got %s", rb_obj_classname(f));
    mpk_write_float64(&writable_packer(self)->w, NUM2DBL(f));
    return self;
}
static uint32_t header_count(VALUE n) {
    long long c = NUM2LL(n);
    if (c < 0 || c > 4294967295LL) rb_raise(rb_eRangeError, "count %lld outside 0..2^32-1", c);
    return (uint32_t)c;
}
static VALUE packer_write_array_header(VALUE self, VALUE n) {
    mpk_write_array(&writable_packer(self)->w, header_count(n));
    return self;
}
static VALUE packer_write_map_header(VALUE self, VALUE n) {
    mpk_write_map(&writable_packer(self)->w, header_count(n));
    return self;
}
static VALUE packer_write_bin_header(VALUE self, VALUE n) {
    mpk_write_bin_head(&writable_packer(self)->w, header_count(n));
    return self;
}
static VALUE packer_write_ext(VALUE self, VALUE type, VALUE payload) {
    packer *pk = writable_packer(self);
    write_ext_checked(pk, type, payload, NULL, payload);
    check_writer(pk);
    return self;
}
/* Raw bytes, already MessagePack (private: used by Buffer-free composition and the tests). */
static VALUE packer_write_raw(VALUE self, VALUE s) {
    StringValue(s);
    mpk_write_bytes(&writable_packer(self)->w, RSTRING_PTR(s), (size_t)RSTRING_LEN(s));
    return self;
}

static VALUE packer_size(VALUE self) { return SIZET2NUM(mpk_writer_size(&get_packer(self)->w)); }
static VALUE packer_empty_p(VALUE self) { return mpk_writer_size(&get_packer(self)->w) ? Qfalse : Qtrue; }

static VALUE packer_to_s(VALUE self) {
    packer *pk = get_packer(self);
    return rb_str_new((const char *)mpk_writer_data(&pk->w), (long)mpk_writer_size(&pk->w));
}

static VALUE packer_reset(VALUE self) {
    packer *pk = writable_packer(self);
    mpk_writer_reset(&pk->w);
    if (mpk_writer_error(&pk->w) == MPK_ERR_NO_MEMORY) mpk_writer_init_alloc(&pk->w, 256, packer_grow, pk);
    return self;
}

static void flush_to_io(packer *pk) {
    if (!mpk_writer_size(&pk->w)) return;
    VALUE s = rb_str_new((const char *)mpk_writer_data(&pk->w), (long)mpk_writer_size(&pk->w));
    mpk_writer_reset(&pk->w);
    rb_funcall(pk->io, id_write, 1, s);
}

static VALUE packer_flush(VALUE self) {
    packer *pk = writable_packer(self);
    if (!NIL_P(pk->io)) {
        flush_to_io(pk);
        if (rb_respond_to(pk->io, rb_intern("flush"))) rb_funcall(pk->io, rb_intern("flush"), 0);
    }
    return self;
}

static VALUE packer_write_to(VALUE self, VALUE io) {
    packer *pk = writable_packer(self);
    VALUE s = packer_to_s(self);
    mpk_writer_reset(&pk->w);
    return rb_funcall(io, id_write, 1, s);
}

static VALUE packer_io(VALUE self) { return get_packer(self)->io; }

/* _register_type(type, klass, proc, recursive) — called by Packer#register_type (lib/mpk/packer.rb). */
static VALUE packer_register(VALUE self, VALUE type, VALUE klass, VALUE proc, VALUE recursive) {
    packer *pk = writable_packer(self);
    if (!FIXNUM_P(type) || FIX2LONG(type) < -128 || FIX2LONG(type) > 127) rb_raise(rb_eRangeError, "ext type must be -128..127");
    if (!RB_TYPE_P(klass, T_CLASS) && !RB_TYPE_P(klass, T_MODULE)) rb_raise(rb_eArgError, "expected a Class or Module");
    if (NIL_P(pk->ext_types)) {
        pk->ext_types = rb_hash_new();
        pk->ext_list = rb_ary_new();
    }
    VALUE entry = rb_ary_new_from_args(3, type, proc, RTEST(recursive) ? Qtrue : Qfalse);
    rb_obj_freeze(entry);
    rb_hash_aset(pk->ext_types, klass, entry);
    rb_ary_push(pk->ext_list, rb_assoc_new(klass, entry));
    pk->ext_cache = rb_hash_new();
    if (klass == rb_cSymbol) pk->symbol_ext = 1;
    return self;
}

/* _register_oversized(type, proc): Integers beyond 64 bits become ext `type` with proc's payload. */
static VALUE packer_register_oversized(VALUE self, VALUE type, VALUE proc) {
    packer *pk = writable_packer(self);
    if (!FIXNUM_P(type) || FIX2LONG(type) < -128 || FIX2LONG(type) > 127) rb_raise(rb_eRangeError, "ext type must be -128..127");
    pk->oversized = rb_obj_freeze(rb_ary_new_from_args(3, type, proc, Qfalse));
    return self;
}

/* Registered types as {class => [type, proc, recursive]} (a copy). */
static VALUE packer_ext_types(VALUE self) {
    packer *pk = get_packer(self);
    return NIL_P(pk->ext_types) ? rb_hash_new() : rb_hash_dup(pk->ext_types);
}

/* The memory MPK.pack's hidden packer used besides the result (the reference list, a String the
 * buffer outgrew the scratch into) goes back to malloc now rather than when the GC finds the
 * packer: the next pack reuses it while its pages are still mapped, instead of touching new ones
 * (each first touch of a page is a page fault). */
/* Speed trick (keep_refs): the list of referenced bodies (body_refs) of the packer MPK.pack
 * reuses (reuse_packer) is kept for the next pack when it is small (up to REFS_KEEP_MAX entries,
 * 2 KiB), instead of being freed after every pack and allocated again by the next one that
 * references a body: an xmalloc and an xfree (and the GC's accounting of both) a pack. CPU time
 * a call, interleaved in one process with the switch off (loaded machine, two runs): Test3 (one
 * 8 KiB bin) 1.60 -> 1.47 us and 1.45 -> 1.33 us, the image record 1.47 -> 1.35 us and
 * 1.36 -> 1.25 us; the string array (many bodies, a list of 512) unchanged. MPK._keep_refs = false
 * frees it after every pack; fastpath_spec packs 0-200 bodies in turn both ways. */
#define REFS_KEEP_MAX 64
static int keep_refs_enabled = 1;

static void release_now(packer *pk) {
    pk->nrefs = 0;
    if (!(keep_refs_enabled && pk->refs_cap <= REFS_KEEP_MAX)) {
        xfree(pk->refs);
        pk->refs = NULL;
        pk->refs_cap = 0;
    }
    if (!NIL_P(pk->buf)) {
        rb_str_resize(pk->buf, 0); /* an empty String is embedded: its heap block is freed */
        pk->buf = Qnil;
    }
}

/* MPK._pack(obj, ext_source_packer_or_nil): one object to a new String. */
/* Speed trick (pack_scratch): MPK.pack writes into a 4 KiB buffer on its own C stack, and an
 * output that fits is copied once into a String of its exact size (embedded in the String object
 * up to 23 bytes: no malloc at all). Otherwise the packer's String is made, grown and trimmed, the
 * path Packer objects always take: for Test1 ([1, 2]) that String (rb_str_buf_new, the trimming
 * rb_str_resize, its free) was about 700 of the 1.86k instructions of a pack (callgrind). This is
 * the "4 KiB pool" in the form that measured: no chunk is shared, so there is nothing to
 * lock, fragment or leak. The scratch never outlives the call: the packer object is hidden
 * (ObjectSpace does not list it), a to_msgpack callback that is given it first moves the bytes
 * into a String (expose_packer), and on return the writer forgets the scratch; if the pack
 * raises, the hidden object is garbage that nothing can reach, and freeing it does not touch the
 * buffer (the writer does not own it). */
#define PACK_SCRATCH 4096
/* Speed trick (reuse_packer): the hidden packer object MPK.pack packs with is kept by its Ractor
 * (Ractor-local storage, marked and so pinned) and used again by the next MPK.pack, instead of a
 * new object and its zeroed struct every call, which the GC then frees: 800 of Test3's 4.3k
 * pack instructions (callgrind: rb_data_typed_object_zalloc). It is taken out while a pack uses
 * it (a pack nested in a callback makes its own) and put back only by a pack that ends normally
 * with the object still hidden: one that a to_msgpack callback was handed (and may keep) is never
 * reused, and one whose pack raised is left to the GC. MPK._reuse_packer = false makes a new one
 * every call. */
typedef struct packer_cache {
    VALUE obj; /* a hidden packer, or Qnil */
} packer_cache;
static void packer_cache_mark(void *p) {
    packer_cache *c = p;
    if (c) rb_gc_mark(c->obj);
}
static void packer_cache_free(void *p) { free(p); }
static const struct rb_ractor_local_storage_type packer_cache_storage = {packer_cache_mark, packer_cache_free};
static rb_ractor_local_key_t packer_cache_slot;
static int reuse_packer_enabled = 1;

static packer_cache *get_packer_cache(void) {
    packer_cache *c = rb_ractor_local_storage_ptr(packer_cache_slot);
    if (MPK__UNLIKELY(!c)) {
        c = malloc(sizeof *c);
        if (!c) return NULL;
        c->obj = Qnil;
        rb_ractor_local_storage_ptr_set(packer_cache_slot, c);
    }
    return c;
}

/* A hidden packer for one MPK.pack whose first buffer is `scratch`: the Ractor's kept one, or new.
 * *cache is set to the Ractor's packer cache (or NULL), for keep_packer: one Ractor-local lookup
 * (an st_lookup) a pack instead of two: Test1 pack 1.86k -> 1.81k instructions a call, Test3
 * 3.78k -> 3.72k (callgrind, 2000 calls). The cache struct lives as long as
 * its Ractor, so the pointer stays valid through the pack, callbacks included. */
static VALUE oneshot_packer(uint8_t *scratch, size_t cap, packer_cache **cache) {
    packer_cache *c = reuse_packer_enabled ? get_packer_cache() : NULL;
    *cache = c;
    if (!c || NIL_P(c->obj)) return packer_new(0, scratch, cap);
    VALUE self = c->obj;
    c->obj = Qnil;
    packer *pk = get_packer(self);
    /* keep_packer takes only packers whose writer was last set by mpk_writer_init_buf(NULL, 0),
     * which holds no memory: destroying it again would only reset its fields (it cleared the whole
     * 252-byte writer when this was measured: 14-22 ns, Test1 pack 1.81k -> 1.75k instructions a
     * call, callgrind; the core now stores only the fields it needs). Destroyed if it holds a
     * buffer all the same. */
    if (MPK__UNLIKELY(mpk_writer_data(&pk->w) != NULL)) mpk_writer_destroy(&pk->w);
    pk->buf = pk->io = pk->ext_types = pk->ext_list = pk->ext_cache = pk->oversized = Qnil;
    pk->cb_depth = pk->ext_cb = 0;
    pk->cb_thread = Qfalse;
    pk->symbol_ext = 0;
    pk->scratch = scratch;
    pk->scratch_cap = cap;
    pk->nrefs = pk->ref_bytes = 0;
    mpk_writer_init_alloc(&pk->w, cap, packer_grow, pk);
    return self;
}

/* After a pack that ended normally: a packer no Ruby code was handed goes back for the next.
 * c: what oneshot_packer found (NULL if reuse was off then: a callback may have turned it on). */
static void keep_packer(VALUE self, packer *pk, packer_cache *c) {
    if (RBASIC_CLASS(self) || !reuse_packer_enabled) return;
    if (pk->spill || pk->nrefs) return; /* not expected: every normal end released them */
    pk->ext_types = pk->ext_list = pk->ext_cache = pk->oversized = pk->buf = Qnil; /* hold nothing */
    if (!c) c = get_packer_cache();
    if (c && NIL_P(c->obj)) c->obj = self;
}

static VALUE mpk_s_pack(VALUE mod, VALUE v, VALUE proto) {
    RB_MPK_ASAN_DEAD_STACK(); /* Ruby enters the codec */
    uint8_t scratch[PACK_SCRATCH];
    packer_cache *cache;
    VALUE self = oneshot_packer(scratch, sizeof scratch, &cache);
    packer *pk = get_packer(self);
    pk->refs_on = body_refs_enabled;
    if (!NIL_P(proto)) {
        packer *p = get_packer(proto);
        pk->ext_types = p->ext_types;
        pk->ext_list = p->ext_list;
        pk->ext_cache = p->ext_cache;
        pk->symbol_ext = p->symbol_ext;
        pk->oversized = p->oversized;
    }
    pack_value(pk, v, 0, NULL);
    check_writer(pk);
    if (pk->nrefs || pk->spill) { /* body_refs, warm_spill: the result at its exact size (no Ruby code saw this packer) */
        VALUE out = assemble_refs(pk);
        pk->scratch = NULL;
        mpk_writer_init_buf(&pk->w, NULL, 0); /* the writer forgets the scratch, spill or String */
        spill_give_back(pk);
        release_now(pk);
        keep_packer(self, pk, cache);
        RB_GC_GUARD(self);
        return out;
    }
    size_t n = mpk_writer_size(&pk->w);
    if (pk->scratch) { /* the output fits in the scratch (and no Ruby code saw this packer) */
        pk->scratch = NULL;
        mpk_writer_init_buf(&pk->w, NULL, 0); /* the writer forgets the scratch */
        VALUE small = rb_str_new((const char *)scratch, (long)n);
        keep_packer(self, pk, cache);
        RB_GC_GUARD(self);
        return small;
    }
    /* hand over the packer's own String: no copy */
    VALUE out = pk->buf;
    if (NIL_P(out)) return rb_str_new(NULL, 0);
    pk->buf = Qnil;
    /* the writer forgets the String; a packer that to_msgpack was given (and may have kept) gets a
     * buffer of its own, so that it stays usable */
    if (RBASIC_CLASS(self)) mpk_writer_init_alloc(&pk->w, 256, packer_grow, pk);
    else mpk_writer_init_buf(&pk->w, NULL, 0);
    rb_str_set_len(out, (long)n);
    if (rb_str_capacity(out) > 2 * n + 64) rb_str_resize(out, (long)n); /* give back a large unused tail */
    keep_packer(self, pk, cache);
    RB_GC_GUARD(self);
    return out;
}

/* MPK._flonum_inline? (private, for the specs): whether float_value decodes flonums itself. */
static VALUE mpk_s_flonum_inline_p(VALUE mod) { return flonum_inline_ok ? Qtrue : Qfalse; }

/* MPK._warm_spill / _prefault / _body_refs / _reuse_packer (? and =; private, for the specs): whether
 * MPK.pack uses warm_spill, prefault_result, body_refs, reuse_packer; false takes each one's
 * fallback. Process-wide: set them only while no other thread or Ractor packs. */
static VALUE mpk_s_reuse_packer_p(VALUE mod) { return reuse_packer_enabled ? Qtrue : Qfalse; }
static VALUE mpk_s_set_reuse_packer(VALUE mod, VALUE on) {
    reuse_packer_enabled = RTEST(on);
    return on;
}
static VALUE mpk_s_warm_spill_p(VALUE mod) { return spill_enabled ? Qtrue : Qfalse; }
static VALUE mpk_s_set_warm_spill(VALUE mod, VALUE on) {
    spill_enabled = RTEST(on);
    return on;
}
static VALUE mpk_s_keep_refs_p(VALUE mod) { return keep_refs_enabled ? Qtrue : Qfalse; }
static VALUE mpk_s_set_keep_refs(VALUE mod, VALUE on) {
    keep_refs_enabled = RTEST(on);
    return on;
}
static VALUE mpk_s_fixnum_by_width_p(VALUE mod) { return fixnum_by_width_enabled ? Qtrue : Qfalse; }
static VALUE mpk_s_set_fixnum_by_width(VALUE mod, VALUE on) {
    fixnum_by_width_enabled = RTEST(on);
    return on;
}
static VALUE mpk_s_prefault_p(VALUE mod) { return prefault_enabled ? Qtrue : Qfalse; }
static VALUE mpk_s_set_prefault(VALUE mod, VALUE on) {
    prefault_enabled = RTEST(on);
    return on;
}
static VALUE mpk_s_body_refs_p(VALUE mod) { return body_refs_enabled ? Qtrue : Qfalse; }
static VALUE mpk_s_set_body_refs(VALUE mod, VALUE on) {
    body_refs_enabled = RTEST(on);
    return on;
}

/* MPK._hash_direct? / MPK._hash_direct = bool (private, for the specs): whether pack_hash reads the
 * Hash tables itself (hash_each_direct); false forces rb_hash_foreach. Setting true only restores
 * what the load-time check found. */
static int hash_direct_found;
static VALUE mpk_s_hash_direct_p(VALUE mod) { return hash_direct_ok ? Qtrue : Qfalse; }
static VALUE mpk_s_set_hash_direct(VALUE mod, VALUE on) {
    hash_direct_ok = RTEST(on) ? hash_direct_found : 0;
    return on;
}

VALUE rb_mpk_pack_one(VALUE v) { return mpk_s_pack(mMPK, v, Qnil); }

void rb_mpk_init_packer(void) {
#if defined(__linux__)
    page_size = sysconf(_SC_PAGESIZE);
#endif
    enc_utf8 = rb_utf8_encindex();
    enc_usascii = rb_usascii_encindex();
    enc_binary = rb_ascii8bit_encindex();
    check_flonum_inline();
    cPacker = rb_define_class_under(mMPK, "Packer", rb_cObject);
    rb_gc_register_mark_object(cPacker);
    rb_define_alloc_func(cPacker, packer_alloc);
    rb_define_method(cPacker, "initialize", packer_initialize, -1);
    rb_define_method(cPacker, "write", packer_write, 1);
    rb_define_method(cPacker, "pack", packer_write, 1);
    rb_define_method(cPacker, "write_nil", packer_write_nil, 0);
    rb_define_method(cPacker, "write_true", packer_write_true, 0);
    rb_define_method(cPacker, "write_false", packer_write_false, 0);
    rb_define_method(cPacker, "write_float32", packer_write_float32, 1);
    rb_define_method(cPacker, "write_float", packer_write_float, 1);
    rb_define_method(cPacker, "write_array_header", packer_write_array_header, 1);
    rb_define_method(cPacker, "write_map_header", packer_write_map_header, 1);
    rb_define_method(cPacker, "write_bin_header", packer_write_bin_header, 1);
    rb_define_method(cPacker, "write_ext", packer_write_ext, 2);
    rb_define_method(cPacker, "_write_raw", packer_write_raw, 1);
    rb_define_method(cPacker, "size", packer_size, 0);
    rb_define_method(cPacker, "empty?", packer_empty_p, 0);
    rb_define_method(cPacker, "to_s", packer_to_s, 0);
    rb_define_method(cPacker, "to_str", packer_to_s, 0);
    rb_define_method(cPacker, "reset", packer_reset, 0);
    rb_define_method(cPacker, "clear", packer_reset, 0);
    rb_define_method(cPacker, "flush", packer_flush, 0);
    rb_define_method(cPacker, "write_to", packer_write_to, 1);
    rb_define_method(cPacker, "io", packer_io, 0);
    rb_define_method(cPacker, "_register_type", packer_register, 4);
    rb_define_method(cPacker, "_ext_types", packer_ext_types, 0);
    rb_define_method(cPacker, "_register_oversized", packer_register_oversized, 2);
    rb_define_singleton_method(mMPK, "_pack", mpk_s_pack, 2);
    rb_define_singleton_method(mMPK, "_flonum_inline?", mpk_s_flonum_inline_p, 0);
    rb_define_singleton_method(mMPK, "_reuse_packer?", mpk_s_reuse_packer_p, 0);
    rb_define_singleton_method(mMPK, "_reuse_packer=", mpk_s_set_reuse_packer, 1);
    packer_cache_slot = rb_ractor_local_storage_ptr_newkey(&packer_cache_storage);
    rb_define_singleton_method(mMPK, "_warm_spill?", mpk_s_warm_spill_p, 0);
    rb_define_singleton_method(mMPK, "_warm_spill=", mpk_s_set_warm_spill, 1);
    spill_slot = rb_ractor_local_storage_ptr_newkey(&spill_storage);
    rb_define_singleton_method(mMPK, "_keep_refs?", mpk_s_keep_refs_p, 0);
    rb_define_singleton_method(mMPK, "_keep_refs=", mpk_s_set_keep_refs, 1);
    rb_define_singleton_method(mMPK, "_fixnum_by_width?", mpk_s_fixnum_by_width_p, 0);
    rb_define_singleton_method(mMPK, "_fixnum_by_width=", mpk_s_set_fixnum_by_width, 1);
    rb_define_singleton_method(mMPK, "_prefault?", mpk_s_prefault_p, 0);
    rb_define_singleton_method(mMPK, "_prefault=", mpk_s_set_prefault, 1);
    rb_define_singleton_method(mMPK, "_body_refs?", mpk_s_body_refs_p, 0);
    rb_define_singleton_method(mMPK, "_body_refs=", mpk_s_set_body_refs, 1);
    rb_define_singleton_method(mMPK, "_hash_direct?", mpk_s_hash_direct_p, 0);
    rb_define_singleton_method(mMPK, "_hash_direct=", mpk_s_set_hash_direct, 1);
#if MPK_HASH_DIRECT
    check_hash_direct();
#endif
    hash_direct_found = hash_direct_ok;
}
