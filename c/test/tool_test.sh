#!/usr/bin/env bash
# mpk-json end to end: JSON → MessagePack → JSON, several values on one stream, and errors with
# their kind, offset and exit status. Prints "test_tool: N passed, M failed".
#   tool_test.sh PATH_TO_MPK_JSON
set -u
tool=$1
passed=0 failed=0
expect() { # name, expected, actual
  if [ "$2" = "$3" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); printf 'FAILED: %s\n  want: %s\n  got:  %s\n' "$1" "$2" "$3"; fi
}
json='{"a":[1,-2,2.5,"x",null,true,{}],"b":"é","c":18446744073709551615}'
expect "round trip" "$json" "$(printf '%s' "$json" | "$tool" -e | "$tool")"
expect "bytes" "82a161920102a162c3" "$(printf '{"a":[1,2],"b":true}' | "$tool" -e | od -An -tx1 | tr -d ' \n')"
expect "two values" $'1\n"s"' "$(printf '\x01\xa1s' | "$tool")"
expect "bin, timestamp, ext, NaN" '["AAE=","1970-01-01T00:00:01Z",{"ext":5,"data":"/w=="},null]' \
  "$(printf '\x94\xc4\x02\x00\x01\xd6\xff\x00\x00\x00\x01\xd4\x05\xff\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00' | "$tool")"
expect "truncated" "mpk-json: truncated at byte 0|1" "$(printf '\x92\x01' | "$tool" 2>&1 >/dev/null)|$(printf '\x92\x01' | "$tool" >/dev/null 2>&1; echo $?)"
expect "offset after values" "mpk-json: invalid_byte at byte 2" "$(printf '\x01\x02\xc1' | "$tool" 2>&1 >/dev/null)"
expect "strict utf-8" "mpk-json: invalid_utf8 at byte 0" "$(printf '\xa1\xff' | "$tool" --strict-utf8 2>&1 >/dev/null)"
expect "bad json" "mpk-json: json at byte 4" "$(printf '[1, ' | "$tool" -e 2>&1 >/dev/null)"
echo "test_tool: $passed passed, $failed failed"
if [ -n "${MPK_TEST_COUNTS:-}" ]; then echo "$passed $failed" >>"$MPK_TEST_COUNTS"; fi
[ $failed = 0 ]
