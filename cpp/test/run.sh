#!/usr/bin/env bash
# Builds cpp/ in BUILD_DIR with the given CMake options, runs every GoogleTest program (C++17 and
# C++20 builds) and the example checks, and prints "NAME: N passed, M failed" for tools/suite.py.
#   cpp/test/run.sh NAME BUILD_DIR [cmake options...]
set -u
name=$1 build=$2
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build"; build=$(cd "$build" && pwd)
cmake -S "$here" -B "$build" "$@" >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; echo "$name: 0 passed, 1 failed"; exit 1; }
cmake --build "$build" -j2 2>&1 | grep -Ev '^\[ *[0-9]+%\]|^-- |^gmake|^make' || true
if [ "${PIPESTATUS[0]}" != 0 ]; then echo "$name: 0 passed, 1 failed"; exit 1; fi
passed=0 failed=0 status=0
cd "$here/.."   # tests read spec/vectors from the repository root
for prog in $(cat "$build/test/programs.txt"); do
  t="$build/test/$prog"
  out=$("$t" --gtest_brief=1 2>&1); rc=$?
  echo "$out" | grep -v '^\[==========\]\|^\[  PASSED  \]\|^Running main' | tail -n 40
  p=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p')
  f=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\?, listed below.*/\1/p')
  p=${p:-0} f=${f:-0}
  if [ $rc != 0 ] && [ "$f" = 0 ]; then f=1; fi
  [ $rc != 0 ] && status=1
  echo "$(basename "$t"): $p passed, $f failed" | sed 's/: /  /'
  passed=$((passed + p)); failed=$((failed + f))
done
for t in "$build"/examples/example_readme "$build"/examples/example_rpc_noexcept ; do
  if "$t"; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; echo "FAILED example $(basename "$t")"; fi
done
# The inline guard (g++ only; cpp/test/inline_guard.cpp says why): with the translation unit's
# inlining budget spent up front, none of the fast path's readers may be emitted out of line at -O2
# or -O3 (they must be inlined into the loops that read messages). Checked with nm; nothing timed.
if command -v g++ >/dev/null && command -v nm >/dev/null; then
  for opt in -O2 -O3; do
    obj="$build/inline_guard$opt.o"
    if g++ -std=c++17 $opt -DNDEBUG --param inline-unit-growth=0 --param large-unit-insns=0 \
         -Wall -Wextra -Wpedantic -Werror -Icpp/include -Ic/include -c cpp/test/inline_guard.cpp -o "$obj"; then
      syms=$(nm -C "$obj")
      out_of_line=$(echo "$syms" | grep -E ' [tTW] ' | grep -E 'mpk::detail::(fast_field<.*>::read\(|fast_struct<.*>::read(_fields)?\(|fast_body\(|fast_decode(_value)?<|struct_codec<[^(]*>::decode\()|mpk::reader::read<')
      loops=$(echo "$syms" | grep -cE ' [TW] .*guard::guard_loop<')
      if [ -z "$out_of_line" ] && [ "$loops" = 6 ]; then
        passed=$((passed + 1)); echo "inline guard g++ $opt: the fast readers are inlined"
      else
        failed=$((failed + 1)); status=1
        echo "FAILED inline guard g++ $opt ($loops of 6 loops; out of line:)"; echo "$out_of_line" | cut -c1-200
      fi
    else
      failed=$((failed + 1)); status=1; echo "FAILED inline guard g++ $opt: did not compile"
    fi
  done
fi
# clang++ (when installed): the largest test file, the driver and the -fno-exceptions example must
# compile warning-free at -Wall -Wextra -Wpedantic -Werror as C++17 and C++20 too.
if [ -z "${MPK_CPP_NO_CLANG:-}" ] && command -v clang++ >/dev/null; then
  for std in 17 20; do
    if clang++ -std=c++$std -fsyntax-only -Wall -Wextra -Wpedantic -Werror -Icpp/include -Ic/include \
         cpp/test/types_test.cpp cpp/driver/driver.cpp \
       && clang++ -std=c++$std -fsyntax-only -fno-exceptions -Wall -Wextra -Wpedantic -Werror -Icpp/include \
         -Ic/include cpp/examples/rpc_noexcept.cpp; then
      passed=$((passed + 1)); echo "clang++ -std=c++$std: warning-free"
    else
      failed=$((failed + 1)); status=1; echo "FAILED clang++ -std=c++$std"
    fi
  done
fi
echo "$name: $passed passed, $failed failed"
exit $status
