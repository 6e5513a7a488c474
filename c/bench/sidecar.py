#!/usr/bin/env python3
"""Write the C bench's sidecar, bench/results/c.json (bench/README.md, "The sidecar").

The bench programs write their measurements as rows, one JSON object a line (--rows FILE):
mpk_bench (run "c-main": the synthetic rows and the JSON corpora), mpk_bench_pb (run "c-pb":
Test1-Test4 and the Product as length-delimited streams, protobuf-c against mpk and msgpack-c)
and mpk_bench_workloads (run "c-workloads": every common workload, mpk / msgpack-c / protobuf-c /
RapidJSON). This script checks them and wraps them with the run's date, machine and versions:

  python3 c/bench/sidecar.py --out bench/results/c.json [--quick] [--manifest M]
                             [--version NAME=VERSION]... ROWS...

It fails (exit 1, naming what is missing) when a rows file is empty or malformed, or when a
workload of the manifest that has a protobuf message lacks an encode or decode row for protobuf
or JSON: that is the row the report's summary needs in every language.
"""
import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from machine import describe as machine  # noqa: E402

KINDS = {"mpk", "msgpack", "protobuf", "json"}
OPS = {"encode", "decode"}




def read_rows(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                raise SystemExit(f"sidecar: {path}:{n}: not JSON ({e})")
            missing = [k for k in ("workload", "op", "library", "kind", "ns_per_op") if k not in r]
            if missing:
                raise SystemExit(f"sidecar: {path}:{n}: row without {', '.join(missing)}")
            if r["op"] not in OPS or r["kind"] not in KINDS:
                raise SystemExit(f"sidecar: {path}:{n}: op {r['op']!r} / kind {r['kind']!r} is not one of the sidecar's")
            if not isinstance(r["ns_per_op"], (int, float)) or not r["ns_per_op"] > 0:
                raise SystemExit(f"sidecar: {path}:{n}: ns_per_op {r['ns_per_op']!r} is not a positive time")
            rows.append(r)
    if not rows:
        raise SystemExit(f"sidecar: {path} holds no rows")
    return rows


def missing_columns(rows, manifest_path):
    """Typed workloads of the manifest without an encode or decode row for protobuf or JSON."""
    with open(manifest_path, encoding="utf-8") as f:
        workloads = json.load(f)["workloads"]
    have = {(r["workload"], r["op"], r["kind"]) for r in rows}
    out = []
    for w in workloads:
        if not w.get("proto") or "pb" not in w.get("files", {}):
            continue
        for op in sorted(OPS):
            for kind in ("mpk", "protobuf", "json"):
                if (w["id"], op, kind) not in have:
                    out.append(f"{w['id']} {op} {kind}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--manifest", default="build/bench-workloads/manifest.json")
    ap.add_argument("--version", action="append", default=[], metavar="NAME=VERSION")
    ap.add_argument("rows", nargs="+")
    a = ap.parse_args()
    rows = []
    for p in a.rows:
        rows += read_rows(p)
    gaps = missing_columns(rows, a.manifest)
    if gaps:
        raise SystemExit("sidecar: no rows for " + "; ".join(gaps))
    versions = {}
    for v in a.version:
        name, _, ver = v.partition("=")
        versions[name] = ver
    side = {
        "name": "c",
        "title": "C benchmark: mpk vs msgpack-c vs protobuf-c vs RapidJSON",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "quick": a.quick,
        "versions": versions,
        "rows": rows,
    }
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(side, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, a.out)
    print(f"sidecar: {len(rows)} rows into {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
