#!/usr/bin/env bash
# libmpk.so exports exactly the functions the public headers mark MPK_API: no mpk__ helper, no
# internal function of the sources, nothing outside the mpk_ prefix. Prints
# "test_exports: N passed, M failed".
#   exports_test.sh PATH_TO_LIBMPK_SO INCLUDE_DIR
set -u
lib=$1 inc=$2
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAILED: $*"; }
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbRrVvi]$/ {print $3}' | grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' | sort -u)
# declared: every MPK_API function, with the mpk__ names mapped by the headers' #defines
declared=$(grep -hv "^#" "$inc"/mpk/*.h | tr '\n' ' ' | grep -oE 'MPK_API [^;{(]*\(' | grep -oE '[A-Za-z_0-9]+\($' | tr -d '(' | sort -u)
aliases=$(grep -hE '^#define mpk__[a-z_0-9]+ mpk_[a-z_0-9]+$' "$inc"/mpk/*.h)
declared=$(for d in $declared; do a=$(printf '%s\n' "$aliases" | awk -v n="$d" '$2 == n {print $3}'); echo "${a:-$d}"; done | sort -u)
if [ -z "$exported" ]; then bad "nm -D found no symbols in $lib"; else ok; fi
n=$(printf '%s\n' "$declared" | grep -c .)
if [ "$n" -ge 60 ]; then ok; else bad "only $n MPK_API declarations found"; fi
leaked=$(printf '%s\n' "$exported" | grep -E '^mpk__|^[^m]|^m[^p]' || true)
if [ -z "$leaked" ]; then ok; else bad "exported beyond the API: $leaked"; fi
extra=$(comm -23 <(printf '%s\n' "$exported") <(printf '%s\n' "$declared"))
if [ -z "$extra" ]; then ok; else bad "exported but not declared MPK_API: $extra"; fi
missing=$(comm -13 <(printf '%s\n' "$exported") <(printf '%s\n' "$declared"))
if [ -z "$missing" ]; then ok; else bad "declared MPK_API but not exported: $missing"; fi
for sym in mpk_doc_parse mpk_stream_next mpk_inline_writer_make_room mpk_inline_reader_next_slow; do
  if printf '%s\n' "$exported" | grep -qx "$sym"; then ok; else bad "$sym not exported"; fi
done
echo "test_exports: $passed passed, $failed failed"
if [ -n "${MPK_TEST_COUNTS:-}" ]; then echo "$passed $failed" >>"$MPK_TEST_COUNTS"; fi
[ $failed = 0 ]
