#!/usr/bin/env python3
"""make bench-rpc: runs the Go, Python and Node sides of the RPC bench and writes
bench/results/rpc.md and its sidecar bench/results/rpc.json (bench/rpc/README.md).

Each side is one program that starts its three servers (mpk-RPC, JSON-RPC 2.0, gRPC) in a child
process and runs every cell (library x workload) once a round, in a shuffled order, for --seconds;
this script takes the medians over the rounds. Standard library only.

    python3 bench/rpc/run.py --go BIN --python PY --py-gen DIR --node-modules DIR [--quick] [--only go,python,node]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from machine import describe as machine  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(ROOT, "bench", "results")

WORKLOADS = [  # id, label
    ("rpc_seq_small", "[1, 2], sequential"),
    ("rpc_seq_8k", "8 KiB bin, sequential"),
    ("rpc_64_small", "[1, 2], 64 in flight"),
    ("rpc_64_8k", "8 KiB bin, 64 in flight"),
]
LIBRARIES = ["mpk-rpc", "json-rpc", "grpc"]
LANGS = {"go": "Go", "python": "Python", "node": "Node"}
# The bar: mpk-RPC's calls/s over gRPC's, per workload.
BAR = {"rpc_seq_small": 1.0, "rpc_seq_8k": 1.0, "rpc_64_small": 2.0, "rpc_64_8k": 2.0}




def run_side(lang, cmd, env=None):
    t = time.time()
    print(f"bench-rpc: {lang}: {' '.join(cmd)}", file=sys.stderr, flush=True)
    out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, env=env, cwd=ROOT).stdout
    doc = json.loads(out.decode().strip().splitlines()[-1])
    print(f"bench-rpc: {lang}: {time.time() - t:.1f} s", file=sys.stderr, flush=True)
    return doc


def medians(cell):
    s = cell["samples"]
    return {
        "calls_per_s": statistics.median(x["calls"] / x["wall_ns"] * 1e9 for x in s),
        "cpu_ns_per_call": statistics.median(x["cpu_ns"] / x["calls"] for x in s if x["calls"]),
        "server_cpu_ns_per_call": statistics.median(x.get("server_cpu_ns", 0) / x["calls"] for x in s if x["calls"]),
        "calls": sum(x["calls"] for x in s),
        "rounds": len(s),
    }


def fmt_rate(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def fmt_us(ns):
    return f"{ns / 1000:.1f}" if ns < 100_000 else f"{ns / 1000:.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--go", help="the built bench/rpc/go program")
    ap.add_argument("--python", help="the bench venv's python (mpk, grpcio)")
    ap.add_argument("--py-gen", help="the folder of rpcbench_pb2*.py")
    ap.add_argument("--node-modules", help="where bench/rpc/node's package-lock.json was installed")
    ap.add_argument("--quick", action="store_true", default=os.environ.get("MPK_BENCH_QUICK") == "1")
    ap.add_argument("--only", default="go,python,node")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--seconds", type=float)
    args = ap.parse_args()
    rounds = args.rounds or (3 if args.quick else 7)
    seconds = args.seconds or (0.1 if args.quick else 0.4)
    rs = ["--rounds", str(rounds), "--seconds", str(seconds)]
    load = " ".join(open("/proc/loadavg").read().split()[:3]) if os.path.exists("/proc/loadavg") else "?"
    started = datetime.datetime.now(datetime.timezone.utc)

    docs = {}
    for lang in args.only.split(","):
        if lang == "go":
            docs[lang] = run_side(lang, [args.go, "-rounds", str(rounds), "-seconds", str(seconds)])
        elif lang == "python":
            docs[lang] = run_side(lang, [args.python, os.path.join(HERE, "python", "bench.py"), "--gen", args.py_gen] + rs)
        elif lang == "node":
            docs[lang] = run_side(lang, ["node", "--expose-gc", os.path.join(HERE, "node", "bench.mjs"),
                                         "--modules", args.node_modules] + rs)

    rows, md = [], []
    quick = " QUICK=1: few, short rounds — a first look, not figures to quote." if args.quick else ""
    md += ["## RPC (mpk-RPC vs JSON-RPC 2.0 vs gRPC, loopback TCP)", "",
           f"Run on {started:%Y-%m-%d %H:%M UTC}, {machine()}, load average at start {load}; "
           f"{rounds} rounds of {seconds} s per cell, medians.{quick}",
           "Made by `make bench-rpc` (bench/rpc/run.py; what each side does: bench/rpc/README.md). "
           "Calls: `add(1, 2) -> 3` and `echo(<8 KiB bin>) -> the bin`, one connection per library, "
           "the servers in a child process; sequential = one call at a time, 64 in flight = 64 "
           "callers on the one connection. Calls/s is wall-clock; client CPU is the client "
           "process's user+system CPU time over its calls (its own threads: the runtime, the "
           "event loop, the kernel's work for its sockets); server CPU the server process's, read "
           "from /proc in 10 ms clock ticks.", ""]
    bar_lines = []
    for lang, doc in docs.items():
        cells = {(c["library"], c["workload"]): medians(c) for c in doc["cells"]}
        vers = ", ".join(f"{k} {v}" for k, v in doc.get("versions", {}).items())
        md += [f"### {LANGS[lang]} ({doc.get('runtime', '')}; {vers})", "",
               "| workload | mpk-RPC calls/s | JSON-RPC calls/s | gRPC calls/s | mpk / gRPC | bar | "
               "client CPU µs/call: mpk | JSON | gRPC | server CPU µs/call: mpk | JSON | gRPC |",
               "|---|--:|--:|--:|--:|:-:|--:|--:|--:|--:|--:|--:|"]
        for wid, label in WORKLOADS:
            m, j, g = (cells.get((lib, wid)) for lib in LIBRARIES)
            if not m:
                continue
            ratio = m["calls_per_s"] / g["calls_per_s"] if g else None
            ok = ratio is not None and ratio >= BAR[wid]
            md.append(f"| {label} | {fmt_rate(m['calls_per_s'])} | {fmt_rate(j['calls_per_s']) if j else '—'} | "
                      f"{fmt_rate(g['calls_per_s']) if g else '—'} | {f'{ratio:.2f}×' if ratio else '—'} | "
                      f"{'ok' if ok else 'MISSED'} (≥ {BAR[wid]:g}×) | {fmt_us(m['cpu_ns_per_call'])} | "
                      f"{fmt_us(j['cpu_ns_per_call']) if j else '—'} | {fmt_us(g['cpu_ns_per_call']) if g else '—'} | "
                      f"{fmt_us(m['server_cpu_ns_per_call'])} | {fmt_us(j['server_cpu_ns_per_call']) if j else '—'} | "
                      f"{fmt_us(g['server_cpu_ns_per_call']) if g else '—'} |")
            if not ok:
                bar_lines.append(f"{LANGS[lang]} {label}: {ratio:.2f}× gRPC (bar {BAR[wid]:g}×)" if ratio else f"{LANGS[lang]} {label}: no gRPC figure")
            for lib, kind in zip(LIBRARIES, ("mpk", "json", "protobuf")):
                c = cells.get((lib, wid))
                if c:
                    rows.append({"workload": wid, "label": label, "op": "call", "variant": LANGS[lang],
                                 "library": lib, "kind": kind, "ns_per_op": round(1e9 / c["calls_per_s"]),
                                 "calls_per_s": round(c["calls_per_s"], 1),
                                 "cpu_ns_per_call": round(c["cpu_ns_per_call"]),
                                 "server_cpu_ns_per_call": round(c["server_cpu_ns_per_call"]), "rounds": c["rounds"]})
        md.append("")
    md += ["**Bar** (issue 14: mpk-RPC ≥ 2× gRPC's calls/s with 64 in flight, ≥ 1.0× sequential, both "
           "sizes, every language): " + ("met in every cell of this run." if not bar_lines else
                                         "missed in this run: " + "; ".join(bar_lines) + "."), ""]

    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "rpc.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    versions = {}
    for lang, doc in docs.items():
        versions[f"{LANGS[lang]} runtime"] = doc.get("runtime", "")
        versions.update(doc.get("versions", {}))
    side = {"name": "rpc", "title": "RPC (mpk-RPC vs JSON-RPC 2.0 vs gRPC, loopback TCP)",
            "date": f"{started:%Y-%m-%d %H:%M UTC}", "machine": machine(), "quick": bool(args.quick),
            "versions": versions, "rows": rows}
    with open(os.path.join(RESULTS, "rpc.json"), "w", encoding="utf-8") as f:
        json.dump(side, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("\n".join(md))
    print("bench-rpc: wrote bench/results/rpc.md and bench/results/rpc.json", file=sys.stderr)


if __name__ == "__main__":
    main()
