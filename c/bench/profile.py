#!/usr/bin/env python3
"""Instruction counts of every bench op, per library, under callgrind: noise-free, unlike time.

    python3 c/bench/profile.py [--full] [--only TEXT] [--data DIR]     (from the repository root)

Builds the bench with -O2 -g into build/c-bench-prof, runs its checked first pass under
`valgrind --tool=callgrind --collect-atstart=no` (the harness switches collection on around each op
alone and dumps it as "row|library|op"), and prints instructions per item for mpk, msgpack-c and
RapidJSON, with msgpack-c's count over mpk's. Sizes are the --quick ones (instructions per item do
not depend on the count) unless --full. The dumps stay in build/c-bench-prof/callgrind/ for
callgrind_annotate, e.g. to see which lines of c/src an op spends its instructions in.

Counts are not times: rows bound by memory (large copies, a cache miss per value) run at the same
speed whatever the instruction counts say. Standard library only (needs valgrind and cmake).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(ROOT, "build", "c-bench-prof")
SIDES = ["mpk", "msgpack-c", "RapidJSON"]


def build():
    subprocess.run(["cmake", "-S", HERE, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_FLAGS=-g",
                    "-DCMAKE_CXX_FLAGS=-g"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", BUILD, "-j2", "--target", "mpk_bench"], check=True, stdout=subprocess.DEVNULL)


def run(args):
    dumps = os.path.join(BUILD, "callgrind")
    shutil.rmtree(dumps, ignore_errors=True)
    os.makedirs(dumps)
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
           f"--callgrind-out-file={dumps}/cg.out", os.path.join(BUILD, "mpk_bench"), "--first-pass-only",
           "--data", args.data]
    if not args.full:
        cmd.append("--quick")
    if args.only:
        cmd += ["--only", args.only]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    counts = {}

    def dump_index(path):
        suffix = path.rsplit(".", 1)[-1]
        return int(suffix) if suffix.isdigit() else 0

    for path in sorted(glob.glob(os.path.join(dumps, "cg.out*")), key=dump_index):
        desc = total = None
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("desc: Trigger: Client Request: "):
                    desc = line.split("Client Request: ", 1)[1].strip()
                elif line.startswith(("totals:", "summary:")):
                    total = int(line.split()[1])
        if desc and total is not None and desc.count("|") == 2:
            counts[tuple(desc.split("|"))] = total
    return counts


def items(row):
    """The item count of a row label (ints / strings / messages), or None for the corpus rows."""
    m = re.match(r"ints 0\.\.(\d+)", row)
    if m:
        return int(m.group(1)) + 1
    m = re.match(r"strings of length 0\.\.(\d+)(?: step (\d+))?", row)
    if m:
        return int(m.group(1)) // int(m.group(2) or 1) + 1
    m = re.match(r"(\d+) ×", row)
    return int(m.group(1)) if m else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--only")
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "bench-data"))
    args = parser.parse_args()
    build()
    counts = run(args)
    if not counts:
        sys.exit("profile: no callgrind dumps (is valgrind installed?)")
    rows = []
    for (row, side, op) in counts:
        if (row, op) not in rows:
            rows.append((row, op))
    print("## Instructions per item (callgrind)\n")
    print(f"`python3 c/bench/profile.py{' --full' if args.full else ''}`: instructions executed by each op alone "
          f"({'full' if args.full else 'quick'} sizes, same build flags plus -g), per int, string or message "
          "(corpus rows: in total). Not times, but immune to the machine's noise.\n")
    print("| row | op | mpk Ir/item | msgpack-c Ir/item | RapidJSON Ir/item | msgpack-c / mpk |")
    print("|---|---|--:|--:|--:|--:|")
    for row, op in rows:
        n = items(row)
        cells = []
        for side in SIDES:
            c = counts.get((row, side, op))
            cells.append("—" if c is None else f"{c / n:.1f}" if n else f"{c:,}")
        a, b = counts.get((row, "mpk", op)), counts.get((row, "msgpack-c", op))
        ratio = f"{b / a:.2f}" if a and b else "—"
        unit = "" if n else " (total)"
        print(f"| {row}{unit} | {op} | {' | '.join(cells)} | {ratio} |")


if __name__ == "__main__":
    main()
