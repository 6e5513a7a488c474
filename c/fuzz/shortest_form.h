/* Does a valid MessagePack value use the shortest form for every token (spec/README.md)? */
#ifndef MPK_FUZZ_SHORTEST_FORM_H
#define MPK_FUZZ_SHORTEST_FORM_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the n bytes at p are exactly one value, every token in shortest form; 0 otherwise.
 * The caller has checked that the bytes are one valid value (the DOM parsed them). */
int shortest_form(const uint8_t *p, size_t n);

#endif
