#!/usr/bin/env bash
# Builds c/ in BUILD_DIR with the given CMake options, runs CTest, and prints the summed assertion
# counts of every test program as the closing "NAME: N passed, M failed" line.
#   c/test/run.sh NAME BUILD_DIR [cmake options...]
set -u
name=$1 build=$2
mkdir -p "$build"
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$here" -B "$build" "$@" >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; echo "$name: 0 passed, 1 failed"; exit 1; }
cmake --build "$build" -j2 2>&1 | grep -Ev '^\[ *[0-9]+%\]|^-- ' || true
if [ "${PIPESTATUS[0]}" != 0 ]; then echo "$name: 0 passed, 1 failed"; exit 1; fi
mkdir -p "$build"; counts="$(cd "$build" && pwd)/counts.txt"
rm -f "$counts"
(cd "$build" && MPK_TEST_COUNTS="$counts" ctest --output-on-failure)
status=$?
passed=0 failed=0
if [ -f "$counts" ]; then
  while read -r p f; do passed=$((passed + p)); failed=$((failed + f)); done <"$counts"
fi
if [ $status != 0 ] && [ $failed = 0 ]; then failed=1; fi
echo "$name: $passed passed, $failed failed"
exit $status
