#!/usr/bin/env python3
"""The mpk tool end to end: every corpus case through to-json/from-json byte for byte, dump offsets
against an independent walk of the bytes, validate kinds and offsets of every negative case, a
stream of many values, hostile inputs under a memory limit, the notation, usage errors.
Prints "test_tool: N passed, M failed".   tool_test.py PATH_TO_MPK   (run from the repository root)"""
import base64
import glob
import json
import os
import random
import resource
import struct
import subprocess
import sys

sys.setrecursionlimit(100000)
MPK = sys.argv[1]
# under AddressSanitizer an address-space limit cannot hold (it maps terabytes of shadow memory):
# the memory-limited runs then run without the limit
SANITIZED = "--sanitized" in sys.argv[2:]
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        if failed <= 40:
            print("FAILED:", what)
    return ok


def run(args, data=b"", mem=None):
    def limit():
        if mem and not SANITIZED:
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    p = subprocess.run([MPK] + args, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       preexec_fn=limit, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def unhex(h):
    return bytes.fromhex(h.replace("-", ""))


# ---- the corpus ----
positive, negative = [], []
for path in sorted(glob.glob("spec/vectors/*.json")):
    for case in json.load(open(path)):
        name = "%s: %s" % (os.path.basename(path), case.get("name", "?"))
        if "error" in case:
            negative.append((name, case))
        elif "msgpack" in case:
            positive.append((name, [unhex(h) for h in case["msgpack"]], case))

# every case's shortest form, all in one stream: to-json gives one line per value and from-json
# gives back the very same bytes, through every output shape and text encoding
stream = b"".join(forms[0] for _, forms, _ in positive)
rc, out, err = run(["to-json"], stream)
lines = out.splitlines()
check(rc == 0 and len(lines) == len(positive), "to-json of the corpus: rc %d, %d lines for %d cases: %s" % (rc, len(lines), len(positive), err[:200]))
for line in lines[:5] + lines[-5:]:
    check(isinstance(json.loads(line), (dict, list, str, int, float, bool, type(None))), "a JSON line: %r" % line[:80])
rc2, back, err2 = run(["from-json"], out)
check(rc2 == 0 and back == stream, "from-json gives the corpus back byte for byte (%d vs %d bytes) %s" % (len(back), len(stream), err2[:300]))
if back != stream:  # name the first case that differs
    for (name, forms, _), line in zip(positive, lines):
        rc3, b3, e3 = run(["from-json"], line + b"\n")
        if b3 != forms[0]:
            check(False, "round trip of %s: %s -> %s (%s)" % (name, forms[0].hex()[:60], b3.hex()[:60], line[:120]))
            break
for shape in (["--pretty"], ["--array"], ["--array", "--pretty"]):
    rc, out2, err = run(["to-json"] + shape, stream)
    rc2, back2, err2 = run(["from-json"] + (["--array"] if "--array" in shape else []), out2)
    check(rc == 0 and rc2 == 0 and back2 == stream, "round trip through %s: %s" % (shape, err2[:200]))
rc, hexout, _ = run(["from-json", "--hex"], out)
check(rc == 0 and bytes.fromhex(hexout.decode().strip()) == stream, "from-json --hex")
rc, b64out, _ = run(["from-json", "--base64"], out)
check(rc == 0 and base64.b64decode(b64out) == stream, "from-json --base64")
rc, out_hex, _ = run(["to-json", "--hex"], stream.hex().encode())
check(rc == 0 and out_hex == out, "to-json --hex reads hex text")
rc, out_b64, _ = run(["to-json", "--base64"], base64.encodebytes(stream))
check(rc == 0 and out_b64 == out, "to-json --base64 reads wrapped base64")

# every other encoding of a case reads as the same JSON as its shortest form (but the community's
# loose "number" cases, whose forms are ints and floats of one numeric value)
others = [f for name, forms, case in positive if "number" not in case for f in forms[1:]]
rc, out_other, err = run(["to-json"], b"".join(others))
expect_other = [line for (name, forms, case), line in zip(positive, lines) if "number" not in case for _ in forms[1:]]
check(rc == 0 and out_other.splitlines() == expect_other, "every other form gives the shortest form's JSON: %s" % err[:200])


# ---- dump: offsets against an independent walk of the bytes ----
def walk(data):
    """(offset, depth, head byte) of every token, computed here from the format's head sizes."""
    toks, pos, owed = [], 0, []
    while pos < len(data):
        b = data[pos]
        depth = len(owed)
        toks.append((pos, depth, b))
        size, payload, count = 1, 0, None
        if b <= 0x7f or b >= 0xe0 or b in (0xc0, 0xc2, 0xc3):
            pass
        elif b <= 0x8f: count = 2 * (b & 15)
        elif b <= 0x9f: count = b & 15
        elif b <= 0xbf: payload = b & 31
        else:
            fixed = {0xca: 5, 0xcb: 9, 0xcc: 2, 0xcd: 3, 0xce: 5, 0xcf: 9, 0xd0: 2, 0xd1: 3, 0xd2: 5, 0xd3: 9,
                     0xd4: 3, 0xd5: 4, 0xd6: 6, 0xd7: 10, 0xd8: 18}
            if b in fixed: size = fixed[b]
            elif b in (0xc4, 0xd9): size, payload = 2, data[pos + 1]
            elif b in (0xc5, 0xda): size, payload = 3, struct.unpack(">H", data[pos + 1:pos + 3])[0]
            elif b in (0xc6, 0xdb): size, payload = 5, struct.unpack(">I", data[pos + 1:pos + 5])[0]
            elif b == 0xc7: size, payload = 3, data[pos + 1]
            elif b == 0xc8: size, payload = 4, struct.unpack(">H", data[pos + 1:pos + 3])[0]
            elif b == 0xc9: size, payload = 6, struct.unpack(">I", data[pos + 1:pos + 5])[0]
            elif b == 0xdc: size, count = 3, struct.unpack(">H", data[pos + 1:pos + 3])[0]
            elif b == 0xdd: size, count = 5, struct.unpack(">I", data[pos + 1:pos + 5])[0]
            elif b == 0xde: size, count = 3, 2 * struct.unpack(">H", data[pos + 1:pos + 3])[0]
            elif b == 0xdf: size, count = 5, 2 * struct.unpack(">I", data[pos + 1:pos + 5])[0]
        pos += size + payload
        if owed:
            owed[-1] -= 1
        if count:
            owed.append(count)
        while owed and owed[-1] == 0:
            owed.pop()
    return toks


dump_input = b"".join(forms[0] for _, forms, _ in positive if len(forms[0]) < 5000)
rc, out, err = run(["dump", "--json"], dump_input)
got = [json.loads(l) for l in out.splitlines()]
want = walk(dump_input)
check(rc == 0 and len(got) == len(want), "dump --json: %d tokens, the walk %d" % (len(got), len(want)))
bad = [(g, w) for g, w in zip(got, want) if (g["offset"], g["depth"], int(g["head"], 16)) != w]
check(not bad, "dump offsets/depths/heads match the walk: first difference %r" % (bad[:1],))
rc, text, _ = run(["dump"], dump_input)
text_offsets = [int(l.split()[0]) for l in text.decode("utf-8").splitlines()]
check(text_offsets == [w[0] for w in want], "dump's text offsets match the walk")
rc, shallow, _ = run(["dump", "--json", "--depth", "0"], dump_input)
check(all(json.loads(l)["depth"] == 0 for l in shallow.splitlines()) and
      len(shallow.splitlines()) == sum(1 for w in want if w[1] == 0), "dump --depth 0 shows the top level only")
rc, cut, _ = run(["dump", "--json", "--max-bytes", "2"], b"\xc4\x05abcde")
check(json.loads(cut)["hex"] == "6162" and json.loads(cut)["cut"] is True, "dump --max-bytes cuts the excerpt")
rc, one, _ = run(["dump"], b"\x81\xa1k\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00")
check(b"float64" in one and b"1.5" in one and b"fixmap" in one and b"  fixstr" in one, "dump text names formats, indents: %r" % one)


# ---- validate: every negative case, kind and offset (one-shot rules with --one) ----
def limit_args(case):
    args = []
    for k, v in case.get("limits", {}).items():
        args += ["--max-" + k, str(v)]
    if case.get("strict_utf8"):
        args.append("--strict-utf8")
    return args


mismatch = []
for name, case in negative:
    rc, out, err = run(["validate", "--one", "--hex"] + limit_args(case), case["msgpack"].encode())
    first = err.splitlines()[0] if err else ""
    want_line = "mpk: %s at byte %d" % (case["error"], case["offset"])
    if rc != 1 or first != want_line:
        mismatch.append((name, rc, first, want_line))
check(not mismatch, "validate --one on %d negative cases: %d differ, e.g. %r" % (len(negative), len(mismatch), mismatch[:2]))
stream_failures = 0
for name, case in negative:
    if case["error"] == "trailing_bytes" or case["msgpack"] == "":
        continue  # a stream may hold several values, or none
    rc, out, err = run(["validate", "--hex"] + limit_args(case), case["msgpack"].encode())
    if rc != 1 or not err.startswith("mpk: "):
        stream_failures += 1
        if stream_failures < 3:
            print("  streaming validate of %s: rc %d %r %r" % (name, rc, out, err))
check(stream_failures == 0, "validate (streaming) fails every negative case: %d do not" % stream_failures)
for name, forms, case in positive[:200]:
    rc, out, err = run(["validate", "--one", "--hex"] + limit_args(case), forms[0].hex().encode())
    if not check(rc == 0 and out == b"ok: 1 value\n", "validate %s: %s" % (name, err)):
        break
rc, out, err = run(["validate"], b"\x01\x02" + b"\x92\x01")
check(rc == 1 and err.startswith("mpk: truncated at byte 2\n  0: 01 02 [92] 01"), "validate's excerpt points at the head: %r" % err)
rc, out, err = run(["validate"], b"\x01\x02\xc1\x03")
check(rc == 1 and "invalid_byte at byte 2" in err and "[c1]" in err, "validate: invalid_byte: %r" % err)
rc, out, err = run(["validate", "--max-depth", "2"], b"\x91\x91\x91\x01")
check(rc == 1 and "depth_limit at byte 2" in err, "validate --max-depth: %r" % err)
rc, out, err = run(["validate", "--max-len", "3"], b"\xa4abcd")
check(rc == 1 and "length_limit at byte 0" in err, "validate --max-len: %r" % err)
rc, out, err = run(["validate", "--strict-utf8"], b"\xa1\xff")
check(rc == 1 and "invalid_utf8 at byte 0" in err, "validate --strict-utf8: %r" % err)
rc, out, err = run(["validate", "--one"], b"\x01\x02")
check(rc == 1 and "trailing_bytes at byte 1" in err, "validate --one: a second value: %r" % err)
rc, out, err = run(["validate", "--one"], b"")
check(rc == 1 and "truncated at byte 0" in err, "validate --one: no value: %r" % err)
rc, out, err = run(["validate"], b"")
check(rc == 0 and out == b"ok: 0 values\n", "validate: an empty stream is valid")
# a stream proves an ext -1 of a bad length at its head (spec: streams report as soon as proven)
rc, out, err = run(["validate"], bytes.fromhex("c9ffffffffff"))
check(rc == 1 and "invalid_timestamp at byte 0" in err, "validate: c9 ff ff ff ff ff: %r" % err)

# ---- many values, in bounded memory ----
rnd = random.Random(7)
parts = []
for i in range(200000):
    k = i % 4
    if k == 0: parts.append(b"\x92" + bytes([i % 128]) + b"\xa3abc")
    elif k == 1: parts.append(b"\x81\xa1k\xcd" + struct.pack(">H", 256 + i % 65000))
    elif k == 2: parts.append(b"\xcb" + struct.pack(">d", rnd.random()))
    else: parts.append(b"\xd6\xff" + struct.pack(">I", i))
many = b"".join(parts)
MEM = 256 << 20
rc, out, err = run(["to-json"], many, mem=MEM)
check(rc == 0 and out.count(b"\n") == 200000, "to-json of 200000 values under a %d MiB address-space limit: %s" % (MEM >> 20, err[:200]))
rc2, back, err2 = run(["from-json"], out, mem=MEM)
check(rc2 == 0 and back == many, "from-json gives the 200000 values back: %s" % err2[:200])
rc, out, err = run(["validate"], many, mem=MEM)
check(rc == 0 and out == b"ok: 200000 values\n", "validate counts 200000 values")
rc, out, err = run(["stats"], many, mem=MEM)
check(rc == 0 and b"values  200000" in out and b"timestamp         50000" in out.replace(b"  ", b"  "), "stats: %r" % out[:300])
stats_lines = {l.split()[0]: l.split()[1:] for l in out.decode().splitlines() if l.startswith("  ")}
check(stats_lines.get("timestamp", [None])[0] == "50000" and stats_lines.get("float64", [None])[0] == "50000",
      "stats counts by type: %r" % stats_lines)

# ---- hostile inputs: bounded memory, the right error ----
HOSTILE_MEM = 64 << 20
cases = [
    (b"\xdd\xff\xff\xff\xff", "truncated at byte 0"),                      # 2^32-1 elements declared
    (b"\xdb\xff\xff\xff\xff" + b"a" * 100000, "truncated at byte 0"),      # a 4 GiB str, 100 kB present
    (b"\x91" * 100000, "depth_limit at byte 1024"),                        # nesting far past the limit
    (b"\xdf\xff\xff\xff\xff" + b"\x01" * 1000, "truncated at byte 0"),
    (b"\xc9\xff\xff\xff\xff\xff", "invalid_timestamp at byte 0"),
]
for data, want in cases:
    for cmd in ("to-json", "validate", "dump", "stats"):
        rc, out, err = run([cmd], data, mem=HOSTILE_MEM)
        check(rc == 1 and want in err, "%s on hostile %s...: rc %d %r" % (cmd, data[:6].hex(), rc, err[:200]))
rc, out, err = run(["from-json"], b"[" * 1000000, mem=HOSTILE_MEM)
check(rc == 1 and "nesting deeper" in err, "from-json: a million '[': %r" % err[:200])
rc, out, err = run(["from-json"], b'"' + b"a" * 1000000, mem=HOSTILE_MEM)
check(rc == 1 and "line 1" in err, "from-json: an unterminated string: %r" % err[:200])
crashes = 0
for i in range(100):
    data = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 64)))
    for cmd in (["to-json"], ["dump"], ["validate"], ["stats"]):
        rc, out, err = run(cmd, data, mem=HOSTILE_MEM)
        if rc not in (0, 1) or (rc == 1 and not err.startswith("mpk: ")):
            crashes += 1
    text = bytes(rnd.choice(b'[]{}",:0123456789.eE-+ntrufalse\\ $binf32x') for _ in range(rnd.randrange(1, 40)))
    rc, out, err = run(["from-json"], text, mem=HOSTILE_MEM)
    if rc not in (0, 1) or (rc == 1 and " at line " not in err):
        crashes += 1
check(crashes == 0, "random bytes and random JSON-ish text: every run ends 0 or 1 with a message (%d did not)" % crashes)


# ---- the notation ----
def to_json(b, *args):
    rc, out, err = run(["to-json"] + list(args), b)
    return out.decode().strip() if rc == 0 else "rc %d %s" % (rc, err)


def from_json(t, *args):
    rc, out, err = run(["from-json"] + list(args), t.encode())
    return out if rc == 0 else (rc, err)


notation = [
    (b"\xca\x3f\xc0\x00\x00", '{"$f32":1.5}'),
    (b"\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00", "1.5"),
    (b"\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00", "1.0"),
    (b"\xcb\x80\x00\x00\x00\x00\x00\x00\x00", "-0.0"),
    (b"\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00", '{"$f64":"NaN"}'),
    (b"\xcb\x7f\xf0\x00\x00\x00\x00\x00\x01", '{"$f64":"NaN:7ff0000000000001"}'),
    (b"\xca\xff\x80\x00\x00", '{"$f32":"-Infinity"}'),
    (b"\xcb\x7f\xf0\x00\x00\x00\x00\x00\x00", '{"$f64":"Infinity"}'),
    (b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff", "18446744073709551615"),
    (b"\xd3\x80\x00\x00\x00\x00\x00\x00\x00", "-9223372036854775808"),
    (b"\xc4\x02\x00\xff", '{"$bin":"AP8="}'),
    (b"\xd4\x05\x07", '{"$ext":[5,"Bw=="]}'),
    (b"\xd7\xff" + struct.pack(">Q", (123456789 << 34) | 1), '{"$ts":"1970-01-01T00:00:01.123456789Z"}'),
    (b"\xc7\x0c\xff" + struct.pack(">Iq", 0, -62167219201), '{"$ts":[-62167219201,0]}'),
    (b"\xa2\xc3\x28", '{"$strhex":"c328"}'),
    (b"\x81\x01\x02", '{"$map":[[1,2]]}'),
    (b"\x81\xa4$bin\x01", '{"$map":[["$bin",1]]}'),
    (b"\x82\xa4$bin\x01\xa1x\x02", '{"$bin":1,"x":2}'),
    (b"\x81\xa4$foo\x01", '{"$foo":1}'),
    (b"\xa3\xe2\x82\xac", '"\u20ac"'),
]
for data, text in notation:
    check(to_json(data) == text, "to-json %s: %s, want %s" % (data.hex(), to_json(data), text))
    check(from_json(text) == data, "from-json %s: %r, want %s" % (text, from_json(text), data.hex()))
check(to_json(b"\xa3\xe2\x82\xac").encode("utf-8") == '"€"'.encode(), "UTF-8 passes through unescaped")
check(from_json('{"$ts":"2024-02-29T23:59:59.5Z"}') == b"\xd7\xff" + struct.pack(">Q", (500000000 << 34) | 1709251199), "$ts reads RFC 3339")
check(from_json("1.5", "--float32") == b"\xca\x3f\xc0\x00\x00", "--float32")
check(from_json("1 2\n[3]{}") == b"\x01\x02\x91\x03\x80", "concatenated texts and JSON Lines")
check(from_json("100000000000000000000") == b"\xcb" + struct.pack(">d", 1e20), "an integer beyond 64 bits is a float64")
plain = to_json(b"\x83\xd6\xff\x00\x00\x00\x01\xc4\x01\xff\x01\xca\x7f\xc0\x00\x00\xa1k\xa2\xc3\x28", "--plain")
check(plain == '{"1970-01-01T00:00:01Z":"/w==","1":null,"k":"\ufffd("}', "--plain: %s" % plain)
check(to_json(b"\xc4\x01\xff", "--plain", "--bin=hex") == '"ff"', "--plain --bin=hex")

# from-json writes nothing deeper than --max-depth (the decoders' depth rule: 1024 nested arrays pass)
deep_ok = "[" * 1024 + "]" * 1024
check(from_json(deep_ok) == b"\x91" * 1023 + b"\x90", "from-json: 1024 nested arrays")
rc, out, err = run(["from-json"], ("[" * 1025 + "]" * 1025).encode())
check(rc == 1 and out == b"" and "nesting deeper than --max-depth" in err, "from-json: 1025 nested arrays: %r" % err)
rc, out, err = run(["from-json", "--max-depth", "2"], b'{"$map":[[1,{"$map":[[2,{"a":3}]]}]]}')
check(rc == 1 and "nesting deeper than --max-depth" in err, "from-json: $map nesting counts: %r" % err)
check(from_json('{"$map":[[1,{"$map":[[2,3]]}]]}', "--max-depth", "2") == b"\x81\x01\x81\x02\x03", "from-json --max-depth 2 allows 2")

# The deepest input --max-depth allows (10000) goes through to-json (every mode) and from-json with
# the main thread's stack at 256 KiB (`ulimit -s 256`): the JSON writer and reader recurse, and the
# tool runs them on a thread whose stack is sized for the depth (they crashed with SIGSEGV here).
def run_small_stack(args, data):
    def lim():
        resource.setrlimit(resource.RLIMIT_STACK, (256 * 1024, resource.getrlimit(resource.RLIMIT_STACK)[1]))
    p = subprocess.run([MPK] + args, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       preexec_fn=lim, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")
deepest = b"\x91" * 9999 + b"\xc4\x01\x00"
for mode in ([], ["--pretty"], ["--plain"], ["--array"]):
    rc, out, err = run_small_stack(["to-json", "--max-depth", "10000"] + mode, deepest)
    check(rc == 0 and out.count(b"[") == 9999 + (1 if mode == ["--array"] else 0),
          "to-json %s: 10000 levels on a 256 KiB main stack: rc %d %r" % (mode, rc, err[:200]))
rc, out, err = run_small_stack(["to-json", "--max-depth", "10000"], deepest)
rc2, back, err2 = run_small_stack(["from-json", "--max-depth", "10000"], out)
check(rc2 == 0 and back == deepest, "from-json: 10000 levels on a 256 KiB main stack: rc %d %r" % (rc2, err2[:200]))

# ---- JSON errors: what, line and column ----
for text, want in [
    ("[1, ", "unexpected end of input at line 1, column 5"),
    ('{"a" 1}', "unexpected '1' at line 1, column 6"),
    ("1\n2\n[3,,4]", "unexpected ',' at line 3, column 4"),
    ("[1]\n]", "unexpected ']' at line 2, column 1"),
    ('{"$bin": "@@"}', "a malformed $bin value at line 1, column 1"),
    ('\n  {"$ts": [0, 1000000000]}', "a malformed $ts value at line 2, column 3"),
    ('"a\tb"', "control character 0x09"),
]:
    rc, out, err = run(["from-json"], text.encode())
    check(rc == 1 and want in err, "from-json %r: %r, want %r" % (text, err, want))

# ---- files, stdin, I/O ----
tmp = os.environ.get("TMPDIR", "/tmp") + "/mpk_tool_test_%d" % os.getpid()
with open(tmp + ".a", "wb") as f:
    f.write(b"\x01")
with open(tmp + ".b", "wb") as f:
    f.write(b"\x02\xc1")
rc, out, err = run(["to-json", tmp + ".a", "-", tmp + ".a"], b"\x03")
check(rc == 0 and out == b"1\n3\n1\n", "files and '-' for stdin, in order")
rc, out, err = run(["to-json", tmp + ".a", tmp + ".b"])
check(rc == 1 and out == b"1\n2\n" and err.startswith("mpk: %s.b: invalid_byte at byte 1" % tmp), "errors name the file: %r" % err)
rc, out, err = run(["to-json", tmp + ".missing"])
check(rc == 3 and "No such file" in err, "a missing file is exit 3: %r" % err)
os.unlink(tmp + ".a")
os.unlink(tmp + ".b")
rc, out, err = run(["to-json", "--hex"], b"0")
check(rc == 1 and "odd number of hex digits" in err, "--hex: odd digits")
rc, out, err = run(["to-json", "--hex"], b"0g")
check(rc == 1 and "not a hex digit" in err, "--hex: a bad digit")
if os.path.exists("/dev/full"):
    p = subprocess.run([MPK, "to-json"], input=b"\x01" * 10, stdout=open("/dev/full", "wb"), stderr=subprocess.PIPE)
    check(p.returncode == 3 and b"cannot write" in p.stderr, "a full disk is exit 3: %r" % p.stderr)

# ---- the README's example shows what the tool prints ----
readme = open("c/README.md", encoding="utf-8").read()
block = readme[readme.index("$ echo '{\"id\""):]
block = block[:block.index("```")]
cmd_json = block.split("'")[1]
want_dump = block[block.index("$ mpk dump ex.mpk\n") + len("$ mpk dump ex.mpk\n"):block.index("$ printf")]
rc, ex, _ = run(["from-json"], cmd_json.encode())
rc2, dump_text, _ = run(["dump"], ex)
check(rc == 0 and rc2 == 0 and dump_text.decode() == want_dump, "README dump example:\n%s" % dump_text.decode())
want_err = block[block.index("| mpk validate\n") + len("| mpk validate\n"):]
rc, out, err = run(["validate"], b"\x93\x01\x02")
check(rc == 1 and err == want_err, "README validate example: %r vs %r" % (err, want_err))

# ---- the progress line: on a terminal only, then erased ----
try:
    import pty
    master, slave = pty.openpty()
    env = dict(os.environ, MPK_PROGRESS_EVERY="65536")
    p = subprocess.Popen([MPK, "validate"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    out, _ = p.communicate(many)
    tty = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        tty += chunk
    os.close(master)
    check(p.returncode == 0 and b"MiB read" in tty and b"values" in tty and tty.endswith(b"\r\x1b[K"),
          "progress on a terminal: %r" % tty[-120:])
except ImportError:
    pass
rc, out, err = run(["validate"], many)
check(rc == 0 and err == "", "no progress line when stderr is not a terminal: %r" % err[:100])

# ---- usage ----
rc, out, err = run(["--help"])
check(rc == 0 and out.startswith(b"usage: mpk COMMAND") and b"exit status" in out and err == "", "--help on stdout, exit 0")
rc, out, err = run(["dump", "--help"])
check(rc == 0 and out.startswith(b"usage:"), "COMMAND --help")
rc, out, err = run(["--version"])
check(rc == 0 and out.startswith(b"mpk 0.") and b"libmpk" in out, "--version: %r" % out)
for args, want in [([], "usage: mpk"), (["frobnicate"], "unknown command 'frobnicate'"),
                   (["to-json", "--nope"], "unknown option '--nope'"), (["dump", "--pretty"], "--pretty does not apply to dump"),
                   (["validate", "--max-depth", "x"], "--max-depth wants a number"), (["validate", "--max-depth", "10001"], "--max-depth wants a number"),
                   (["dump", "--depth"], "--depth needs a value"), (["to-json", "--plain", "--bin=oct"], "--bin is base64 or hex"),
                   (["from-json", "--one"], "--one does not apply to from-json")]:
    rc, out, err = run(args)
    check(rc == 2 and want in err and out == b"", "usage error %r: rc %d %r" % (args, rc, err[:200]))

print("test_tool: %d passed, %d failed" % (passed, failed))
counts = os.environ.get("MPK_TEST_COUNTS")
if counts:
    with open(counts, "a") as f:
        f.write("%d %d\n" % (passed, failed))
sys.exit(1 if failed else 0)
