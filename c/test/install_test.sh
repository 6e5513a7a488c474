#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds and runs a consumer three ways: CMake
# find_package (static and shared targets) and pkg-config. Prints "test_install: N passed, M failed".
#   install_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2
prefix=$build/install-test
rm -rf "$prefix" && mkdir -p "$prefix"
passed=0 failed=0
check() { if "$@" >"$prefix/last.log" 2>&1; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $*"; cat "$prefix/last.log"; fi; }
check cmake --install "$build" --prefix "$prefix/usr"
check test -f "$prefix/usr/include/mpk.h"
# the mpk tool is installed with the library and runs from there (it links libmpk statically)
check sh -c "env -u LD_LIBRARY_PATH '$prefix/usr/bin/mpk' --version | grep -q '^mpk '"
check sh -c "printf '\\001' | env -u LD_LIBRARY_PATH '$prefix/usr/bin/mpk' to-json | grep -qx 1"
check test -f "$prefix/usr/include/mpk/dom.h"
check test -f "$prefix/usr/lib/libmpk.a" -o -f "$prefix/usr/lib64/libmpk.a" -o -n "$(ls "$prefix"/usr/lib/*/libmpk.a 2>/dev/null)"
check cmake -S "$src/test/consumer" -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix/usr"
check cmake --build "$prefix/consumer"
check "$prefix/consumer/consumer_static"
check "$prefix/consumer/consumer_shared"
pc=$(dirname "$(find "$prefix/usr" -name mpk.pc | head -1)")
if command -v pkg-config >/dev/null; then
  check sh -c "cc '$src/test/consumer/consumer.c' \$(PKG_CONFIG_PATH='$pc' pkg-config --cflags --libs mpk) -o '$prefix/consumer_pc' && LD_LIBRARY_PATH='$(dirname "$(find "$prefix/usr" -name 'libmpk.so*' | head -1)")' '$prefix/consumer_pc'"
else
  # without pkg-config, read the same two fields it would
  check sh -c "cc '$src/test/consumer/consumer.c' -I'$prefix/usr/include' -L'$(dirname "$pc")' -lmpk -o '$prefix/consumer_pc' && LD_LIBRARY_PATH='$(dirname "$pc")' '$prefix/consumer_pc' && grep -q '^Libs: -L\${libdir} -lmpk' '$pc/mpk.pc'"
fi
# A non-system prefix: the loader does not look there, so a program linked with pkg-config alone
# fails to start (the README's symptom); an rpath, or LD_LIBRARY_PATH, finds it. Static linking
# through pkg-config --static needs no library at run time at all.
if command -v pkg-config >/dev/null; then
  pcenv="PKG_CONFIG_PATH='$pc'"
  check sh -c "cc '$src/test/consumer/consumer.c' \$($pcenv pkg-config --cflags --libs mpk) -o '$prefix/consumer_norpath'"
  check sh -c "env -u LD_LIBRARY_PATH '$prefix/consumer_norpath' 2>&1 | grep -q 'libmpk.so.0: cannot open shared object file'"
  check sh -c "cc '$src/test/consumer/consumer.c' \$($pcenv pkg-config --cflags --libs mpk) -Wl,-rpath,\$($pcenv pkg-config --variable=libdir mpk) -o '$prefix/consumer_rpath' && env -u LD_LIBRARY_PATH '$prefix/consumer_rpath'"
  check sh -c "env LD_LIBRARY_PATH=\$($pcenv pkg-config --variable=libdir mpk) '$prefix/consumer_norpath'"
  check sh -c "cc '$src/test/consumer/consumer.c' \$($pcenv pkg-config --cflags mpk) -Wl,-Bstatic \$($pcenv pkg-config --static --libs mpk) -Wl,-Bdynamic -o '$prefix/consumer_pcstatic' && ! readelf -d '$prefix/consumer_pcstatic' | grep -q libmpk && env -u LD_LIBRARY_PATH '$prefix/consumer_pcstatic'"
  check sh -c "cc '$src/test/consumer/consumer.c' \$($pcenv pkg-config --cflags mpk) \$($pcenv pkg-config --variable=staticlib mpk) -o '$prefix/consumer_archive' && env -u LD_LIBRARY_PATH '$prefix/consumer_archive'"
fi
echo "test_install: $passed passed, $failed failed"
if [ -n "${MPK_TEST_COUNTS:-}" ]; then echo "$passed $failed" >>"$MPK_TEST_COUNTS"; fi
[ $failed = 0 ]
