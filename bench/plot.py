#!/usr/bin/env python3
"""The report's plots: SVGs under bench/plots/, from the same rows as the summary of bench/RESULTS.md.

One chart per language, operation (and variant, e.g. Node / Chromium): grouped bars per workload,
mpk / best MessagePack peer / protobuf / JSON, time per op (lower is better), log scale when the
values span more than two decades. One chart of sizes (raw bytes per workload and format). Needs
matplotlib: `make bench` installs it into build/bench-venv and runs this script with that Python,
after `tools/merge-bench.py --sidecars-only` has written bench/results/<name>.json.
"""
import glob
import importlib.util
import json
import os

import matplotlib

matplotlib.use("svg")
matplotlib.rcParams["svg.hashsalt"] = "mpk-bench"  # the same plot gives the same file
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
OUT = os.path.join(HERE, "plots")
SERIES = [("mpk", "mpk", "#1f77b4"), ("peer", "best MessagePack peer", "#ff7f0e"), ("pb", "protobuf", "#2ca02c"), ("json", "JSON", "#7f7f7f")]


def load_merge():
    spec = importlib.util.spec_from_file_location("merge_bench", os.path.join(ROOT, "tools", "merge-bench.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def short(label, n=22):
    return label if len(label) <= n else label[: n - 1] + "…"


def bars(path, title, groups, ylabel, values_of):
    """groups: [(label, {series key: value or None})]"""
    vals = [v for _, d in groups for v in d.values() if v]
    if not vals:
        return False
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(groups) + 2), 4.2))
    present = [s for s in SERIES if any(d.get(s[0]) for _, d in groups)]
    width = 0.8 / max(1, len(present))
    for i, (key, name, color) in enumerate(present):
        xs = [g + (i - (len(present) - 1) / 2) * width for g in range(len(groups))]
        ys = [d.get(key) or 0 for _, d in groups]
        ax.bar(xs, ys, width, label=name, color=color)
    if max(vals) / min(vals) > 100:
        ax.set_yscale("log")
        ylabel += " (log scale)"
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([short(g) for g, _ in groups], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    return True


def main():
    mb = load_merge()
    sides = mb.load_sidecars()
    os.makedirs(OUT, exist_ok=True)
    for old in glob.glob(os.path.join(OUT, "*.svg")):
        os.remove(old)
    manifest_ids = set(mb.WORKLOAD_ORDER)
    if os.path.exists(mb.MANIFEST):
        with open(mb.MANIFEST, encoding="utf-8") as f:
            manifest_ids |= {w["id"] for w in json.load(f)["workloads"]}
    made = []
    rpc = sides.pop("rpc", None)
    if rpc:
        # calls per second (higher is better), one group per language and workload
        by = {}
        for r in rpc["rows"]:
            rate = r.get("calls_per_s") or (1e9 / r["ns_per_op"] if r.get("ns_per_op") else None)
            key = f"{r.get('variant', '')} {r.get('label', r['workload'])}".strip()
            by.setdefault(key, {})[{"mpk": "mpk", "json": "json", "protobuf": "pb"}.get(r["kind"], r["kind"])] = rate
        old = SERIES[:]
        SERIES[:] = [("mpk", "mpk-RPC", "#1f77b4"), ("pb", "gRPC", "#2ca02c"), ("json", "JSON-RPC", "#7f7f7f")]
        if bars(os.path.join(OUT, "rpc.svg"), "MessagePack-RPC vs gRPC vs JSON-RPC — calls per second, higher is better",
                list(by.items()), "calls per second", None):
            made.append("rpc.svg")
        SERIES[:] = old
    for name in [n for n in mb.ORDER if n in sides] + sorted(n for n in sides if n not in mb.ORDER):
        rows = mb.summary_rows(name, sides[name], manifest_ids)
        keys = []
        for s in rows:
            if (s["op"], s["variant"]) not in keys:
                keys.append((s["op"], s["variant"]))
        for op, variant in keys:
            # per-item rows (c/bench) and per-op rows do not share an axis: plot the per-op ones only,
            # unless a folder has nothing else
            sel = [s for s in rows if s["op"] == op and s["variant"] == variant]
            groups = [(s["label"], {k: (s[k]["ns_per_op"] if s[k] else None) for k, _, _ in SERIES}) for s in sel]
            per = "item" if any(s.get("per") == "item" for s in sel) else "op"
            fn = f"{name}-{op}" + ("-" + "-".join(variant.lower().split()) if variant else "") + ".svg"
            title = f"{mb.LANG.get(name, name)}: {op}" + (f" ({variant})" if variant else "") + " — time, lower is better"
            if bars(os.path.join(OUT, fn), title, groups, f"ns per {per}", None):
                made.append(fn)
    sizes_path = os.path.join(HERE, "results", "sizes.json")
    if os.path.exists(sizes_path):
        with open(sizes_path, encoding="utf-8") as f:
            srows = json.load(f)["rows"]
        by = {}
        titles = {}
        for r in srows:
            by.setdefault(r["workload"], {})[{"MessagePack": "mpk", "protobuf": "pb", "JSON": "json"}[r["format"]]] = r["raw"]
            titles[r["workload"]] = r["title"]
        groups = [(titles[w], d) for w, d in by.items()]
        old = SERIES[:]
        SERIES[:] = [("mpk", "MessagePack", "#1f77b4"), ("pb", "protobuf", "#2ca02c"), ("json", "JSON", "#7f7f7f")]
        if bars(os.path.join(OUT, "sizes.svg"), "Encoded size per workload (raw bytes, lower is smaller)", groups, "bytes", None):
            made.append("sizes.svg")
        SERIES[:] = old
    print(f"bench/plots: {len(made)} plots ({', '.join(made)})")


if __name__ == "__main__":
    main()
