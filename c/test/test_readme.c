/* test_readme.c — runs the first example of c/README.md, extracted at configure time into
 * readme_example.c (see CMakeLists.txt), so the README cannot drift from the code. */
#define main readme_main
#include "readme_example.c"
#undef main

#include "check.h"

int main(void) {
    CHECK(readme_main() == 0);
    return check_report("test_readme");
}
