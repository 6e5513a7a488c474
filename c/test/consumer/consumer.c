/* Encodes and decodes one value through an installed libmpk; exit status 0 when it round-trips. */
#include <mpk.h>
#include <string.h>

int main(void) {
    unsigned char buf[16];
    mpk_writer w;
    mpk_writer_init_buf(&w, buf, sizeof buf);
    mpk_write_array(&w, 2);
    mpk_write_int(&w, -5);
    mpk_write_cstr(&w, "ok");
    if (mpk_writer_finish(&w) != MPK_OK) return 1;
    mpk_doc d;
    mpk_doc_init(&d);
    const mpk_node *root = mpk_doc_parse(&d, buf, mpk_writer_size(&w));
    int ok = root && mpk_node_at(root, 0)->v.i == -5 && mpk_node_at(root, 1)->len == 2 &&
             strcmp(mpk_version(), MPK_VERSION_STRING) == 0;
    mpk_doc_destroy(&d);
    return ok ? 0 : 1;
}
