"""Instruction counts of mpk, msgspec, ormsgpack (and orjson on the same value as JSON) on the same calls, under valgrind's callgrind.

    python python/bench/callgrind.py [--calls N] [--only NAME] [--libs mpk,msgspec,ormsgpack,orjson]

On a shared, loaded machine wall-clock medians move by 10-20% between runs; the number of
instructions a call executes does not (it moves by well under 1% between runs), so this is how the
tricks of python/ext were kept or dropped. Each cell is one valgrind process: the library and the
dataset are set up and the call made once outside the count (warm caches, key cache, lazily built
tables), then N calls are made inside `collections.deque(map(fn, repeat(arg, N)), maxlen=0)` and
only what runs inside deque's constructor is counted (--toggle-collect=deque_init): the loop's own
cost is a few dozen instructions per call, the same for every library. The table gives
instructions per call and the ratio peer / mpk (above 1: mpk executes fewer). Instructions are not
time (a cache miss costs more than an add), which is why bench.py's medians are the bar; the
counts say which of two versions of the same code does less work. Not a test.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import collections, itertools, sys
sys.path.insert(0, {here!r})
import bench
lib, name, direction, calls = {lib!r}, {name!r}, {direction!r}, {calls}
value = next(v for n, v, _ in bench.datasets(name) if n == name)
if lib == "mpk":
    import mpk
    pack, unpack = mpk.packb, mpk.unpackb
elif lib == "msgspec":
    import msgspec
    pack, unpack = msgspec.msgpack.Encoder().encode, msgspec.msgpack.Decoder().decode
elif lib == "ormsgpack":
    import ormsgpack
    pack, unpack = ormsgpack.packb, ormsgpack.unpackb
elif lib == "orjson":
    import orjson
    pack, unpack = orjson.dumps, orjson.loads
fn, arg = (pack, value) if direction == "pack" else (unpack, pack(value))
if lib == "orjson" and direction == "unpack":
    # the document's own JSON text when it is a file (as bench.py's orjson column reads it)
    import os
    path = os.path.join(bench.BENCH_DATA, name + ".json")
    if os.path.exists(path):
        with open(path, "rb") as f:
            arg = f.read()
assert unpack(pack(value)) == value
fn(arg)
collections.deque(map(fn, itertools.repeat(arg, calls)), maxlen=0)
"""

DATASETS = ["twitter", "citm_catalog", "int array (10k)", "tweet (one status)", "Product", "[1, 2]",
            "long str array (1k, 100 B-4 KiB)", "Test3: 8 KiB bin", "Test4: [[1,2],[-1,-2],8 KiB bin]",
            "bin array (16 x 64 KiB)"]


def count(lib, name, direction, calls, keep=None):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(keep or tmp, "cg-%s-%s-%s.out" % (lib, re.sub(r"\W+", "_", name), direction))
        code = CHILD.format(here=HERE, lib=lib, name=name, direction=direction, calls=calls)
        subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=deque_init",
                        "--callgrind-out-file=" + out, sys.executable, "-c", code],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            text = f.read()
        total = int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))
        return total / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--only", action="append")
    ap.add_argument("--dir", choices=["pack", "unpack", "both"], default="both")
    ap.add_argument("--libs", default="mpk,msgspec,ormsgpack")
    ap.add_argument("--keep", metavar="DIR", help="keep each cell's callgrind output in DIR (for callgrind_annotate)")
    args = ap.parse_args()
    libs = args.libs.split(",")
    dirs = ["pack", "unpack"] if args.dir == "both" else [args.dir]
    print(f"CPython {sys.version.split()[0]}; instructions per call (callgrind, {args.calls} calls)")
    print("| dataset | dir | " + " | ".join(libs) + " | " + " | ".join(f"x {p}" for p in libs[1:]) + " |")
    print("|---|---|" + "---|" * (2 * len(libs) - 1))
    for name in DATASETS:
        if args.only and not any(o in name for o in args.only):
            continue
        for d in dirs:
            n = {lib: count(lib, name, d, args.calls, args.keep) for lib in libs}
            ratios = [f"{n[p] / n[libs[0]]:.2f}" for p in libs[1:]]
            print(f"| {name} | {d} | " + " | ".join(f"{n[lib]:,.0f}" for lib in libs) + " | " +
                  " | ".join(ratios) + " |", flush=True)


if __name__ == "__main__":
    main()
