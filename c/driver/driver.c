/* driver.c — the interop driver (spec/drivers/c): JSON Lines requests on stdin, one answer line
 * each on stdout, as spec/README.md "Drivers" defines. Requests are read with the DOM's JSON
 * parser; encodes go through mpk_writer, decodes through mpk_doc_parse. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpk.h"

#include "typed.h"

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    mpk_doc request, decoded;
    mpk_writer out, packed;
    mpk_doc_init(&request);
    mpk_doc_init(&decoded);
    /* Typed values nest two JSON levels per MessagePack level (the corpus goes past 1024 of
     * those); typed_encode recurses once per level, so the bound also keeps the C stack small. */
    mpk_limits json_limits = mpk_limits_default();
    json_limits.depth = 20000;
    mpk_doc_set_limits(&request, &json_limits);
    mpk_writer_init_growable(&out, 4096);
    mpk_writer_set_checks(&out, 0); /* it holds the JSON answer: text, not MessagePack */
    mpk_writer_init_growable(&packed, 4096);
    while ((n = getline(&line, &cap, stdin)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) n--;
        if (n == 0) continue;
        mpk_writer_reset(&out);
        mpk_writer_reset(&packed);
        typed_answer(&request, &decoded, line, (size_t)n, &packed, &out);
        fwrite(mpk_writer_data(&out), 1, mpk_writer_size(&out), stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    free(line);
    mpk_doc_destroy(&request);
    mpk_doc_destroy(&decoded);
    mpk_writer_destroy(&out);
    mpk_writer_destroy(&packed);
    return 0;
}
