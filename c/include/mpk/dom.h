/* mpk/dom.h — the DOM: a whole value parsed into a compact node tree.
 *
 * Nodes are 16 bytes, stored in pre-order in one array owned by an mpk_doc: a container is followed
 * by its descendants, and knows how many there are, so the next sibling is one add away. The array
 * (and the copy arena) is kept and reused by the next parse on the same doc: parsing a stream of
 * messages allocates only when a message is bigger than any before it.
 *
 * Lifetime: nodes live until the next parse on, or the destruction of, their doc. str/bin/ext
 * nodes point into the input (zero-copy), so the input must outlive them too, unless the doc was
 * given MPK_FLAG_COPY (then they point into the doc). The parser does not recurse; it checks every
 * declared count against the bytes present before reserving nodes for it. */
#ifndef MPK_DOM_H
#define MPK_DOM_H

#include "common.h"
#include "writer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mpk_node {
    uint8_t type;          /**< mpk_type */
    int8_t ext_type;       /**< MPK_EXT: its type */
    uint16_t reserved;
    uint32_t len;          /**< str/bin/ext: bytes; array: elements; map: pairs; timestamp: nsec */
    union {
        int b;
        uint64_t u;
        int64_t i;         /**< MPK_INT, and MPK_TIMESTAMP's seconds */
        float f32;
        double f64;
        const uint8_t *data; /**< str/bin/ext payload */
        uint64_t span;     /**< array/map: number of descendant nodes */
    } v;
} mpk_node;

typedef struct mpk_doc {
    mpk_node *nodes;
    size_t count, cap;
    uint8_t *bytes;        /* copy arena (MPK_FLAG_COPY) and JSON string storage */
    size_t bytes_len, bytes_cap;
    void *stack;           /* parse stack */
    size_t stack_cap;
    mpk_limits limits;
    unsigned flags;
    mpk_error error;
} mpk_doc;

/** An empty doc with default limits; allocates nothing yet. */
MPK_API void mpk_doc_init(mpk_doc *d);
MPK_API void mpk_doc_set_limits(mpk_doc *d, const mpk_limits *limits);
/** MPK_FLAG_STRICT_UTF8, MPK_FLAG_COPY. */
MPK_API void mpk_doc_set_flags(mpk_doc *d, unsigned flags);
/** Frees everything the doc holds. */
MPK_API void mpk_doc_destroy(mpk_doc *d);

/** Parses exactly one value filling `len` bytes (bytes after it are MPK_ERR_TRAILING_BYTES).
 *  Returns the root, or NULL on error (see mpk_doc_error()). Replaces the previous tree. */
MPK_API const mpk_node *mpk_doc_parse(mpk_doc *d, const void *data, size_t len);

/** Parses JSON text (RFC 8259) into the doc; strings are copied into the doc. Mapping: null → nil,
 *  true/false → bool, a number without fraction or exponent → int (uint/int; outside 64 bits →
 *  float64), any other number → float64, string → str, array → array, object → map with str keys
 *  in document order (duplicates kept). Depth counts as for MessagePack. Errors are MPK_ERR_JSON
 *  (or DEPTH_LIMIT) at the byte offset. */
MPK_API const mpk_node *mpk_doc_parse_json(mpk_doc *d, const char *json, size_t len);

MPK__INLINE mpk_error mpk_doc_error(const mpk_doc *d) { return d->error; }
/** The root of the last successful parse, or NULL. */
MPK__INLINE const mpk_node *mpk_doc_root(const mpk_doc *d) {
    return d->error.kind == MPK_OK && d->count ? d->nodes : NULL;
}

/* ------------------------------------------------------------------------------------------------
 * Nodes (Public). Accessors take a non-NULL node of the right type unless they say otherwise.
 * ----------------------------------------------------------------------------------------------*/
MPK__INLINE mpk_type mpk_node_type(const mpk_node *n) { return (mpk_type)n->type; }
/** Elements of an array, pairs of a map, bytes of a str/bin/ext. */
MPK__INLINE uint32_t mpk_node_len(const mpk_node *n) { return n->len; }
MPK__INLINE int mpk_node_is_container(const mpk_node *n) {
    return n->type == MPK_ARRAY || n->type == MPK_MAP;
}
/** The node after this one and all its descendants: the next sibling when there is one. */
MPK__INLINE const mpk_node *mpk_node_next(const mpk_node *n) {
    return n + 1 + (mpk_node_is_container(n) ? n->v.span : 0);
}
/** First element of an array / first key of a map (its value is mpk_node_next(key)); NULL if empty. */
MPK__INLINE const mpk_node *mpk_node_first(const mpk_node *n) { return n->len ? n + 1 : NULL; }
/** Element `i` of an array (walks i siblings), NULL when out of range. */
MPK_API const mpk_node *mpk_node_at(const mpk_node *array, uint32_t i);
/** The value of the pair whose key is the str `key` (len bytes); NULL if none or not a map. With
 *  duplicate keys, the LAST such pair's value (as every mpk implementation; spec/README.md). */
MPK_API const mpk_node *mpk_node_map_get(const mpk_node *map, const char *key, size_t len);
/** The value of the last pair whose key is deep-equal to `key` (mpk_node_equal); NULL if none. */
MPK_API const mpk_node *mpk_node_map_find(const mpk_node *map, const mpk_node *key);
/** Deep equality: same type and value; floats by bits except that every NaN equals every NaN
 *  (so -0.0 != 0.0); float32 never equals float64, nor an int a float; maps pair by pair in order.
 *  Returns 1 when equal. */
MPK_API int mpk_node_equal(const mpk_node *a, const mpk_node *b);
MPK__INLINE mpk_timestamp mpk_node_timestamp(const mpk_node *n) {
    mpk_timestamp t;
    t.sec = n->v.i;
    t.nsec = n->len;
    return t;
}

/** Writes the node (and everything in it) as MessagePack, shortest form. */
MPK_API void mpk_node_write(const mpk_node *n, mpk_writer *w);

/** Writes the node as JSON text into `out` (any writer output; the bytes are raw text). Mapping:
 *  nil → null; bool; ints → numbers; floats → shortest round-trip number, NaN and ±Infinity → null;
 *  str → string (invalid UTF-8 bytes become U+FFFD); bin → base64 string (RFC 4648, padded);
 *  ext → {"ext": type, "data": "<base64>"}; timestamp → RFC 3339 string
 *  "YYYY-MM-DDTHH:MM:SS[.fraction]Z" (nanoseconds trimmed of trailing zeros); a map key that is
 *  not a str → its JSON text as a string (key 1 → "1"). Depth is bounded by the doc that made it.
 *  The writer's MessagePack checks (mpk_writer_set_checks) are turned off: it now holds text. */
MPK_API void mpk_node_to_json(const mpk_node *n, mpk_writer *out);

#ifdef __cplusplus
}
#endif
#endif
