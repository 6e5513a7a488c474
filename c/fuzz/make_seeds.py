#!/usr/bin/env python3
"""Write every MessagePack form of every case in spec/vectors/*.json as one seed file.

    python3 c/fuzz/make_seeds.py SPEC_VECTORS_DIR OUT_DIR

Seed files are named <family>-<sha1 prefix> (identical byte strings are written once). Prints the
number of seeds written. Standard library only.
"""
import glob
import hashlib
import json
import os
import sys


def forms(case):
    """Every hex string of a case: the list of a positive case, the one string of a negative one."""
    m = case["msgpack"]
    return [m] if isinstance(m, str) else m


def main(vectors, out):
    sys.setrecursionlimit(100000)  # depth.json nests arrays 1025 deep
    os.makedirs(out, exist_ok=True)
    files = sorted(glob.glob(os.path.join(vectors, "*.json")))
    if not files:
        sys.exit(f"make_seeds: no cases in {vectors}")
    seen = set()
    for path in files:
        family = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            cases = json.load(f)
        for case in cases:
            for text in forms(case):
                data = bytes.fromhex(text.replace("-", ""))
                digest = hashlib.sha1(data).hexdigest()
                if digest in seen:
                    continue
                seen.add(digest)
                with open(os.path.join(out, f"{family}-{digest[:12]}"), "wb") as f:
                    f.write(data)
    print(len(seen))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
