#!/usr/bin/env bash
# Compiles every library source as plain C99 with -Wall -Wextra at -O2 and -O3 (the warnings that
# need the optimiser's analysis, such as GCC 12's -Wuse-after-free, only appear there) and fails on
# any warning at all. Prints "test_warnings: N passed, M failed".
#   warnings_test.sh CC SOURCE_DIR
set -u
cc=$1 src=$2
passed=0 failed=0
for f in "$src"/src/*.c; do
  for opt in -O2 -O3; do
    if out=$("$cc" -std=c99 -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror $opt -I"$src/include" -c "$f" -o /dev/null 2>&1); then
      passed=$((passed + 1))
    else
      failed=$((failed + 1)); echo "FAILED: $(basename "$f") $opt"; echo "$out"
    fi
  done
done
echo "test_warnings: $passed passed, $failed failed"
if [ -n "${MPK_TEST_COUNTS:-}" ]; then echo "$passed $failed" >>"$MPK_TEST_COUNTS"; fi
[ $failed = 0 ]
