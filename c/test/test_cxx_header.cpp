// test_cxx_header.cpp — the public headers compile as C++ (the C++ layer includes them) and the
// inline fast paths behave the same there.
#include <cstdio>
#include <cstdlib>

#include "mpk.h"

int main() {
    unsigned char buf[32];
    mpk_writer w;
    mpk_writer_init_buf(&w, buf, sizeof buf);
    mpk_write_array(&w, 2);
    mpk_write_int(&w, -300);
    mpk_write_str(&w, "c++", 3);
    mpk_reader r;
    mpk_tag t;
    mpk_reader_init(&r, buf, mpk_writer_size(&w));
    int ok = mpk_writer_finish(&w) == MPK_OK;
    ok = ok && mpk_reader_next(&r, &t) && t.type == MPK_ARRAY && t.len == 2;
    ok = ok && mpk_reader_next(&r, &t) && t.type == MPK_INT && t.v.i == -300;
    ok = ok && mpk_reader_next(&r, &t) && t.type == MPK_STR && t.len == 3;
    ok = ok && mpk_reader_finish(&r).kind == MPK_OK;
    std::printf("test_cxx_header: %d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
    if (const char *path = std::getenv("MPK_TEST_COUNTS")) {
        if (std::FILE *f = std::fopen(path, "a")) {
            std::fprintf(f, "%d %d\n", ok ? 1 : 0, ok ? 0 : 1);
            std::fclose(f);
        }
    }
    return ok ? 0 : 1;
}
