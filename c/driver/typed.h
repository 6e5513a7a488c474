/* typed.h — the typed-value notation of spec/README.md over mpk's DOM: encode a typed value,
 * emit a decoded value in canonical form, compare a typed value with a decoded one, and answer
 * one driver request. Shared by the driver and the corpus tests. */
#ifndef MPK_TYPED_H
#define MPK_TYPED_H

#include "mpk.h"

/** Writes the typed value `tv` (a node of a JSON doc) as MessagePack. 1 on success, 0 if `tv` is
 *  not a typed value this notation allows. */
int typed_encode(const mpk_node *tv, mpk_writer *w);

/** The same, with the type key and its member given apart (as in a corpus case). */
int typed_encode_kv(const mpk_node *key, const mpk_node *member, mpk_writer *w);

/** Writes `value` (a node of a MessagePack doc) as a canonical typed value, JSON text, to `out`. */
void typed_emit(const mpk_node *value, mpk_writer *out);

/** 1 when the decoded `value` is the value the typed value `tv` describes (loose `number` and plain
 *  JSON members compare by numeric value; NaNs equal; string and string_hex by bytes). */
int typed_match(const mpk_node *tv, const mpk_node *value);

int typed_match_kv(const mpk_node *key, const mpk_node *member, const mpk_node *value);

/** A request's "limits" object ({"depth": N, "str": N, ...}) into *l, changing only the limits it
 * names; 0 if malformed (not a map, an unknown name, a count that is not 0..2^32-1). */
int typed_limits(const mpk_node *obj, mpk_limits *l);

/** Answers one request line into `out` (no newline). `request` and `decoded` are scratch docs,
 *  `packed` a scratch growable writer. */
void typed_answer(mpk_doc *request, mpk_doc *decoded, const char *line, size_t len,
                  mpk_writer *packed, mpk_writer *out);

/** Hex text (optionally '-'-separated) into bytes; returns the count, or (size_t)-1 if malformed.
 *  `out` needs strlen/2 bytes. */
size_t typed_hex_decode(const uint8_t *hex, size_t len, uint8_t *out);

#endif
