#!/usr/bin/env python3
"""Write the fuzz seeds from spec/vectors/*.json.

    python3 c/fuzz/make_seeds.py SPEC_VECTORS_DIR OUT_DIR [JSON_OUT_DIR]

OUT_DIR gets every MessagePack form of every case (encode-error cases have none) as one file, for
fuzz_mpk. JSON_OUT_DIR, if given, gets every case object as compact JSON text, for fuzz_json: small
documents with nested arrays and objects, escapes, big and negative numbers. Seed files are named
<family>-<sha1 prefix> (identical byte strings are written once). Prints the number of MessagePack
seeds written. Standard library only.
"""
import glob
import hashlib
import json
import os
import sys


def forms(case):
    """Every hex string of a case: the list of a positive case, the one string of a negative one,
    none for an encode-error case."""
    m = case.get("msgpack")
    if m is None:
        return []
    return [m] if isinstance(m, str) else m


def write_once(out, family, data, seen):
    digest = hashlib.sha1(data).hexdigest()
    if digest in seen:
        return
    seen.add(digest)
    with open(os.path.join(out, f"{family}-{digest[:12]}"), "wb") as f:
        f.write(data)


def main(vectors, out, json_out=None):
    sys.setrecursionlimit(100000)  # depth.json nests arrays 1025 deep
    os.makedirs(out, exist_ok=True)
    if json_out:
        os.makedirs(json_out, exist_ok=True)
    files = sorted(glob.glob(os.path.join(vectors, "*.json")))
    if not files:
        sys.exit(f"make_seeds: no cases in {vectors}")
    seen, seen_json = set(), set()
    for path in files:
        family = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            cases = json.load(f)
        for case in cases:
            for text in forms(case):
                write_once(out, family, bytes.fromhex(text.replace("-", "")), seen)
            if json_out:
                text = json.dumps(case, separators=(",", ":"), ensure_ascii=len(seen_json) % 2 == 0)
                if len(text) <= 16384:
                    write_once(json_out, family, text.encode(), seen_json)
    print(len(seen))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
