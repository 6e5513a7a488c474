#!/usr/bin/env python3
"""Sizes of every common workload in every format: bytes raw, after gzip and after zstd.

Reads build/bench-workloads/manifest.json (made by bench/workloads/gen.py) and writes
bench/results/sizes.md (the table) and bench/results/sizes.json (the sidecar, see bench/README.md).
gzip is Python's zlib at level 6 (gzip's default); zstd is the zstd command at level 3 (its default).
Sizes are properties of the formats, not of mpk: every MessagePack library that writes shortest forms
gives the same bytes, and the protobuf bytes are protoc's own.

  python3 bench/sizes.py [--workloads build/bench-workloads]
"""
import argparse
import datetime
import gzip
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
FORMATS = [("msgpack", "MessagePack"), ("pb", "protobuf"), ("json", "JSON")]


def gz(data):
    return len(gzip.compress(data, compresslevel=6, mtime=0))


def zstd_size(data, zstd):
    if not zstd:
        return None
    res = subprocess.run([zstd, "-q", "-3", "-c"], input=data, capture_output=True, check=True)
    return len(res.stdout)


def fmt(n):
    return "—" if n is None else f"{n:,}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default=os.path.join(ROOT, "build", "bench-workloads"))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    with open(os.path.join(args.workloads, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)["workloads"]
    zstd = shutil.which("zstd")
    if not zstd:
        print("sizes.py: no zstd command (Debian package zstd): zstd column left blank", file=sys.stderr)
    rows = []
    for w in manifest:
        for key, label in FORMATS:
            name = w["files"].get(key)
            if not name:
                continue
            with open(os.path.join(args.workloads, name), "rb") as f:
                data = f.read()
            rows.append({"workload": w["id"], "title": w["title"], "format": label,
                         "raw": len(data), "gzip": gz(data), "zstd": zstd_size(data, zstd)})
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    zver = "none"
    if zstd:
        words = subprocess.run([zstd, "-V"], capture_output=True, text=True).stdout.split()
        zver = "zstd " + next((x.rstrip(",") for x in words if x.startswith("v") and x[1:2].isdigit()), "?")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "sizes.json"), "w", encoding="utf-8") as f:
        json.dump({"name": "sizes", "date": date, "quick": False,
                   "versions": {"zlib (gzip level 6)": __import__("zlib").ZLIB_VERSION, "zstd (level 3)": zver},
                   "rows": rows}, f, indent=1, ensure_ascii=False)
    by = {}
    for r in rows:
        by.setdefault(r["workload"], {})[r["format"]] = r
    lines = ["## Sizes: MessagePack vs protobuf vs JSON, raw, gzip and zstd", "",
             f"{date}. Made by `bench/sizes.py` from the common workloads (`bench/workloads/gen.py`). "
             "gzip: level 6; zstd: level 3 (" + zver + "). JSON is compact UTF-8, with bin values as base64 strings "
             "(JSON has no binary type). protobuf only where the workload has a message in `bench/workloads/*.proto` "
             "(bytes from `protoc --encode`). The last column is MessagePack's raw size over JSON's and over protobuf's.", "",
             "| workload | from | MessagePack raw / gzip / zstd | protobuf raw / gzip / zstd | JSON raw / gzip / zstd | MP/JSON | MP/pb |",
             "|---|---|--:|--:|--:|--:|--:|"]
    for w in manifest:
        f = by.get(w["id"], {})

        def cell(label):
            r = f.get(label)
            return "—" if not r else f"{fmt(r['raw'])} / {fmt(r['gzip'])} / {fmt(r['zstd'])}"
        mp, pb, js = f.get("MessagePack"), f.get("protobuf"), f.get("JSON")
        rj = f"{mp['raw'] / js['raw']:.2f}" if mp and js else "—"
        rp = f"{mp['raw'] / pb['raw']:.2f}" if mp and pb else "—"
        origin = w["seed"] + ("" if w["origin"] == "generated" else "; " + w["origin"])
        lines.append(f"| {w['title']} | {origin} | {cell('MessagePack')} | {cell('protobuf')} | {cell('JSON')} | {rj} | {rp} |")
    lines.append("")
    notes = [f"- {w['title']}: {w['notes']}" for w in manifest if w["notes"]]
    if notes:
        lines += ["Notes:", ""] + notes + [""]
    with open(os.path.join(args.out, "sizes.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"bench/results/sizes.md: {len(manifest)} workloads, {len(rows)} sizes")


if __name__ == "__main__":
    main()
