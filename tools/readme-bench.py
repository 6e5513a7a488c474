#!/usr/bin/env python3
"""Copies the figures of the last `make bench` into the top README's "Speed and size" section.

The README carries three generated blocks, each between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`:
  glance  the date of the run and the "At a glance" table of bench/RESULTS.md
  rpc     mpk-RPC against JSON-RPC and gRPC, from bench/results/rpc.json
  sizes   the size sentence, from bench/results/sizes.json
Everything else in the README is left as written. `make bench-report` runs this after a full run (never
after QUICK=1: those numbers are not to be quoted); `--check` exits 1 when the README's blocks differ
from what the committed results give (the `docs` suite of `make test` runs it).

    python3 tools/readme-bench.py [--check] [--readme README.md]
"""
import argparse
import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RESULTS_MD = os.path.join(ROOT, "bench", "RESULTS.md")
RPC_JSON = os.path.join(ROOT, "bench", "results", "rpc.json")
SIZES_JSON = os.path.join(ROOT, "bench", "results", "sizes.json")


def glance_block(results_md):
    text = open(results_md, encoding="utf-8").read()
    if "**QUICK run**" in text:
        raise SystemExit("readme-bench: bench/RESULTS.md is from a QUICK run; the README quotes full runs only")
    m = re.search(r"^Results dated: (.+)\.$", text, re.M)
    if m and "(quick)" in m.group(1):
        raise SystemExit("readme-bench: some folders' results in bench/RESULTS.md are from QUICK runs: " + m.group(1))
    dates = sorted(set(re.findall(r"\d{4}-\d\d-\d\d", m.group(1)))) if m else []
    machine = re.search(r"^Report assembled \S+ \S+ UTC on (.+?); ", text, re.M)
    sec = text.split("## At a glance", 1)
    if len(sec) < 2:
        raise SystemExit("readme-bench: no 'At a glance' section in bench/RESULTS.md")
    table = [ln for ln in sec[1].split("\n## ", 1)[0].splitlines() if ln.startswith("|")]
    when = " to ".join(dict.fromkeys([dates[0], dates[-1]])) if dates else "an unknown date"
    lines = [f"The figures below are from the run of {when} on {machine.group(1) if machine else 'a machine not recorded'}.",
             "At a glance — the other library's time over mpk's, median over the summary's rows (above 1, mpk is",
             "faster; in brackets, the rows mpk wins):", ""]
    return lines + table


def rpc_block(rpc_json):
    side = json.load(open(rpc_json, encoding="utf-8"))
    rows = side["rows"]
    by = {}
    for r in rows:
        by.setdefault((r["variant"], r["workload"]), {})[r["kind"]] = r
    langs = list(dict.fromkeys(r["variant"] for r in rows))
    out = ["| language | workload | mpk-RPC calls/s | vs JSON-RPC | vs gRPC |", "|---|---|--:|--:|--:|"]
    for lang in langs:
        for (v, w), k in by.items():
            if v != lang or "mpk" not in k:
                continue
            mpk = k["mpk"]["calls_per_s"]
            cell = lambda kind: f"{mpk / k[kind]['calls_per_s']:.2f}×" if kind in k and k[kind]["calls_per_s"] else "—"
            out.append(f"| {lang} | {k['mpk']['label']} | {mpk:,.0f} | {cell('json')} | {cell('protobuf')} |")
    if side.get("quick"):
        raise SystemExit("readme-bench: bench/results/rpc.json is from a QUICK run")
    return out


def sizes_block(sizes_json):
    sizes = {}
    for r in json.load(open(sizes_json, encoding="utf-8"))["rows"]:
        sizes.setdefault(r["workload"], {})[r["format"]] = r["raw"]
    mp_js = [s for s in sizes.values() if "JSON" in s and "MessagePack" in s]
    mp_pb = [s for s in sizes.values() if "protobuf" in s and "MessagePack" in s]
    smaller_js = sum(1 for s in mp_js if s["MessagePack"] < s["JSON"])
    larger_pb = sum(1 for s in mp_pb if s["MessagePack"] > s["protobuf"])
    return [f"On size, MessagePack is smaller than JSON on {smaller_js} of the {len(mp_js)} common workloads, and larger than",
            f"Protocol Buffers on {larger_pb} of the {len(mp_pb)} that have a schema (field names travel with every message):"]


def replace(text, name, lines):
    pat = re.compile(rf"(<!-- bench:{name} -->\n).*?(<!-- /bench:{name} -->)", re.S)
    if not pat.search(text):
        raise SystemExit(f"readme-bench: the README has no <!-- bench:{name} --> block")
    return pat.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(2), text, count=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the README is not what the results give")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    args = ap.parse_args()
    old = open(args.readme, encoding="utf-8").read()
    new = replace(old, "glance", glance_block(RESULTS_MD))
    new = replace(new, "rpc", rpc_block(RPC_JSON))
    new = replace(new, "sizes", sizes_block(SIZES_JSON))
    if args.check:
        if new != old:
            print("readme-bench: README.md's bench blocks differ from bench/RESULTS.md and bench/results/ "
                  "(run python3 tools/readme-bench.py)", file=sys.stderr)
            return 1
        print("readme-bench: README.md's bench blocks match the committed results")
        return 0
    if new != old:
        with open(args.readme, "w", encoding="utf-8") as f:
            f.write(new)
    print(f"readme-bench: {os.path.relpath(args.readme, ROOT)} {'updated' if new != old else 'already current'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
