#!/usr/bin/env python3
"""Assemble bench/RESULTS.md from the per-implementation results in bench/results/.

Each implementation's bench writes only its own bench/results/<name>.md (its tables, in its own
shape) and, when it can, bench/results/<name>.json: the same numbers as rows (the sidecar format of
bench/README.md). For a folder that does not write a sidecar yet, this script derives one from its
.md (the converters below) and writes it with "derived_from": "<name>.md". The report opens with a
summary made from the rows, one sentence per language made from the same numbers, the seeds' own
figures beside today's, the plots (bench/plot.py), then every folder's tables unchanged.

  python3 tools/merge-bench.py [--sidecars-only] [--quick]
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
RESULTS = os.path.join(ROOT, "bench", "results")
PLOTS = os.path.join(ROOT, "bench", "plots")
MANIFEST = os.path.join(ROOT, "build", "bench-workloads", "manifest.json")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from machine import describe as describe_machine  # noqa: E402

ORDER = ["c", "cpp", "python", "ruby", "js", "browser", "go"]
LANG = {"c": "C", "cpp": "C++", "python": "Python", "ruby": "Ruby", "js": "TypeScript", "browser": "Browser page", "go": "Go"}
# Workload ids in report order (bench/workloads/gen.py); folders' own workloads follow these.
WORKLOAD_ORDER = ["test1", "test2", "test3", "test4", "product", "products100", "table16", "rb_twitter", "rb_image",
                  "rb_integers", "rb_geojson", "rb_model3d", "c_ints", "c_strings", "long_string", "utf8_strings",
                  "bins64k", "twitter", "citm_catalog", "canada"]


# ------------------------------------------------------------------------------------------------
# Parsing helpers
# ------------------------------------------------------------------------------------------------

UNITS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9}


def parse_time(cell):
    """'653.9 µs' -> 653900.0 (ns); None when the cell holds no time."""
    m = re.match(r"^\s*([0-9][0-9,]*\.?[0-9]*)\s*(ns|us|µs|μs|ms|s)\b", cell or "")
    if not m:
        return None
    return float(m.group(1).replace(",", "")) * UNITS[m.group(2)]


def num(cell):
    m = re.match(r"^\s*(-?[0-9][0-9,]*\.?[0-9]*)", cell or "")
    return float(m.group(1).replace(",", "")) if m else None


def tables(text):
    """Yield (heading, header cells, rows of cells) for every markdown table, with the last heading above it."""
    heading = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|\s*$", lines[i + 1]):
            header = [c.strip() for c in line.strip().strip("|").split("|")]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            yield heading, header, rows
            continue
        i += 1


def first_match(pattern, text, default=""):
    m = re.search(pattern, text, re.M)
    return m.group(1).strip() if m else default


def map_workload(label):
    """A folder's dataset label -> a common workload id when it is the same value, else the label."""
    low = label.lower()
    for name in ("twitter", "citm_catalog", "canada"):
        if low in (name, name + ".json", "any/" + name):
            return name
    if re.search(r"\[\[1, ?2\], ?\[-1, ?-2\]", low) or "test4" in low:
        return "test4"
    if re.search(r"(^|[^-])\[1, ?2\]", low) or "test1" in low:
        return "test1"
    if "[-1, -2]" in low or "[-1,-2]" in low or "test2" in low:
        return "test2"
    if "8 kib bin" in low or "test3" in low:
        return "test3"
    m = re.match(r"^js/(.+)\.json$", label)
    if m:
        return "js_" + m.group(1).replace("-", "_")
    return label


# ------------------------------------------------------------------------------------------------
# Converters: a folder's .md -> rows (used while the folder writes no sidecar of its own)
# ------------------------------------------------------------------------------------------------

def conv_c(text):
    rows = []
    for heading, header, body in tables(text):
        if not header or header[0] != "row" or "mpk ns/item" not in header:
            continue
        ix = {h: k for k, h in enumerate(header)}
        for r in body:
            label, op = r[0], r[1]
            m = re.match(r"^(pack|unpack)\s*(?:\((.*)\))?$", op)
            if not m:
                continue
            kind_op = "encode" if m.group(1) == "pack" else "decode"
            variant = m.group(2) or ""
            if variant == "one-shot":
                variant = ""
            mpk_ns = num(r[ix["mpk ns/item"]])
            sizes = [num(x) for x in r[ix["bytes mpk / msgpack-c / JSON"]].split("/")]
            per = re.match(r"^(\d+) × ", label)  # "4194304 × [1, 2]": the bytes are for all the messages
            if per:
                sizes = [x / int(per.group(1)) if x else x for x in sizes]
            wl = map_workload(label)
            base = {"workload": wl, "label": label, "op": kind_op, "variant": variant, "per": "item", "run": "c-main"}
            rows.append(dict(base, library="mpk", kind="mpk", ns_per_op=mpk_ns, bytes=sizes[0]))
            for lib, kind, col, size in (("msgpack-c", "msgpack", "× msgpack-c", sizes[1]), ("RapidJSON", "json", "× JSON", sizes[2])):
                ratio = num(r[ix[col]])
                if ratio is not None and mpk_ns is not None:
                    rows.append(dict(base, library=lib, kind=kind, ns_per_op=mpk_ns * ratio, bytes=size))
    return rows + conv_c_pb(text)


def conv_c_pb(text):
    """c/bench's mpk_bench_pb table: Test1-Test4, mpk vs msgpack-c vs protobuf-c (its own run)."""
    rows = []
    for heading, header, body in tables(text):
        if not header or header[0] != "message" or "bytes/msg mpk / msgpack-c / protobuf-c" not in header:
            continue
        ix = {h: k for k, h in enumerate(header)}
        for r in body:
            label, op = r[0], r[1]
            sizes = [num(x) for x in r[ix["bytes/msg mpk / msgpack-c / protobuf-c"]].split("/")]
            base = {"workload": "product" if label == "Product" else map_workload(label), "label": label, "op": "encode" if op == "pack" else "decode",
                    "variant": "", "run": "c-pb"}
            for lib, kind, col, size in (("mpk", "mpk", "mpk ns/msg", sizes[0]), ("msgpack-c", "msgpack", "msgpack-c ns/msg", sizes[1]),
                                         ("protobuf-c", "protobuf", "protobuf-c ns/msg", sizes[2])):
                # mpk and msgpack-c of this run are there as protobuf-c's baseline only: the main
                # table measures them with more care (base_only keeps them out of "best")
                # (Product is measured only here, so there they count in full)
                rows.append(dict(base, library=lib, kind=kind, ns_per_op=num(r[ix[col]]), bytes=size,
                                 base_only=kind != "protobuf" and base["workload"] != "product"))
    return rows


def conv_go(text):
    rows = []
    for heading, header, body in tables(text):
        m = re.match(r"^(.+), (marshal|unmarshal) \(mpk's encoding: (\d+) bytes\)", heading)
        if not m or header[:2] != ["side", "ns/op"]:
            continue
        label, op, size = m.group(1), m.group(2), int(m.group(3))
        wl = map_workload(label)
        for r in body:
            side = r[0]
            kind = "mpk" if side.startswith("mpk") else {"protobuf": "protobuf", "json": "json"}.get(side, "msgpack")
            rows.append({"workload": wl, "label": label, "op": "encode" if op == "marshal" else "decode", "variant": "",
                         "library": side, "kind": kind, "typed": side in ("mpkgen", "msgp"),
                         "ns_per_op": num(r[1]), "mb_per_s": num(r[2]), "bytes": size if kind == "mpk" else None})
    return rows


def conv_js(text):
    rows = []
    for heading, header, body in tables(text):
        m = re.match(r"^(Node|Chromium)[^—]*—\s*(decode|encode)", heading)
        if not m or header[0] != "dataset":
            continue
        env, op = m.group(1), m.group(2)
        libs = []
        for k, h in enumerate(header[2:], start=2):
            if h.startswith("vs ") or " vs " in h:
                break
            libs.append((k, h))
        for r in body:
            # js/bench's own product (154 B) is not the Go seed's; its 16-row table is the common one
            wl = {"product": "js product", "table (16 rows)": "table16"}.get(r[0]) or map_workload(r[0])
            for k, h in libs:
                if h == "JSON.parse(string)":
                    continue  # a ready string: not how a body arrives; kept in the detail
                t = parse_time(r[k])
                if t is None:
                    continue
                kind = "mpk" if h.startswith("mpk") else "json" if h == "JSON" else "protobuf" if "proto" in h else "msgpack"
                rows.append({"workload": wl, "label": r[0], "op": op, "variant": env, "library": h, "kind": kind, "ns_per_op": t})
    return rows


def conv_python(text):
    rows = []
    for heading, header, body in tables(text):
        if header[:3] != ["dataset", "dir", "mpk"]:
            continue
        libs = []
        for k, h in enumerate(header[2:], start=2):
            if h.startswith("x ") or h.startswith("mpk on"):
                break
            libs.append((k, h))
        for r in body:
            label = r[0]
            wl = "product" if label == "Product" else map_workload(label)
            for k, h in libs:
                t = parse_time(r[k])
                if t is None:
                    continue
                kind = "mpk" if h == "mpk" else "json" if h in ("orjson", "json") else "protobuf" if "proto" in h else "msgpack"
                rows.append({"workload": wl, "label": label, "op": "encode" if r[1] == "pack" else "decode", "variant": "",
                             "library": h, "kind": kind, "ns_per_op": t})
    return rows


def conv_cpp(text):
    rows = []
    counts = {"Test1": 1 << 23, "Test2": 1 << 23, "Test3": 1 << 15, "Test4": 1 << 15, "Product": 1 << 20}
    for heading, header, body in tables(text):
        if header[:3] != ["test", "library", "MB"]:
            continue
        for r in body:
            test, lib = r[0], r[1]
            n = counts.get(test)
            if not n:
                continue
            kind = ("mpk" if lib.startswith("mpk") else "protobuf" if lib.startswith("protobuf")
                    else "json" if "json" in lib.lower() else "msgpack")
            mb = num(r[2])
            for op, col in (("encode", 3), ("decode", 5)):
                s = num(r[col])
                if s is None:
                    continue
                rows.append({"workload": test.lower(), "label": test, "op": op, "variant": "", "library": lib, "kind": kind,  # test1..4, product
                             "typed": True, "ns_per_op": s * 1e9 / n, "bytes": round(mb * 1e6 / n) if mb else None})
    return rows


def conv_ruby(text):
    rows = []
    for heading, header, body in tables(text):
        if heading not in ("pack", "unpack") or header[:2] != ["dataset", "bytes (msgpack)"]:
            continue
        for r in body:
            label = r[0]
            wl = map_workload(label)
            for k, h in enumerate(header[2:], start=2):
                t = parse_time(r[k])
                if t is None:
                    continue
                kind = "mpk" if h == "mpk" else "json" if h in ("Oj", "json") else "protobuf" if "proto" in h else "msgpack"
                rows.append({"workload": wl, "label": label, "op": "encode" if heading == "pack" else "decode", "variant": "",
                             "library": h, "kind": kind, "ns_per_op": t, "bytes": num(r[1]) if h == "mpk" else None})
    return rows


CONVERTERS = {"c": conv_c, "go": conv_go, "js": conv_js, "python": conv_python, "cpp": conv_cpp, "ruby": conv_ruby}
# What the converter reads from each .md for date, machine and versions.
DATE_RE = r"(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?Z?(?: UTC)?)"


def manifest_sizes():
    """workload id -> MessagePack size, from build/bench-workloads (empty when not generated)."""
    if not os.path.exists(MANIFEST):
        return {}
    out = {}
    with open(MANIFEST, encoding="utf-8") as f:
        for w in json.load(f)["workloads"]:
            p = os.path.join(os.path.dirname(MANIFEST), w["files"]["msgpack"])
            if os.path.exists(p):
                out[w["id"]] = os.path.getsize(p)
    return out


def check_mapping(rows):
    """Un-map a folder's dataset from a common workload id when its mpk bytes show another value
    (e.g. go/bench's "test3 nested", 24 bytes, is not the common Test3 of 8 KiB)."""
    sizes = manifest_sizes()
    wrong = set()
    for r in rows:
        size = sizes.get(r["workload"])
        if size and r["kind"] == "mpk" and r.get("bytes") and abs(r["bytes"] - size) > 0.02 * size:
            wrong.add((r["workload"], r.get("label")))
    for r in rows:
        if (r["workload"], r.get("label")) in wrong:
            r["workload"] = r.get("label") or r["workload"]
    return rows


def derive(name, md_path):
    with open(md_path, encoding="utf-8") as f:
        text = f.read()
    conv = CONVERTERS.get(name)
    rows = check_mapping(conv(text)) if conv else []
    title = first_match(r"^#+\s*(.+)$", text, name)
    return {"name": name, "title": title, "date": first_match(DATE_RE, text), "quick": bool(re.search(r"QUICK=1|quick run", text)),
            "derived_from": os.path.basename(md_path), "rows": rows}


def load_sidecars():
    """name -> sidecar dict, deriving (and writing) one from the .md where the folder wrote none or an older one."""
    out = {}
    names = {os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(RESULTS, "*.md"))}
    names |= {os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(RESULTS, "*.json"))}
    names.discard("sizes")
    for name in sorted(names):
        md = os.path.join(RESULTS, name + ".md")
        js = os.path.join(RESULTS, name + ".json")
        side = None
        if os.path.exists(js):
            with open(js, encoding="utf-8") as f:
                side = json.load(f)
            stale = side.get("derived_from") and os.path.exists(md) and os.path.getmtime(md) > os.path.getmtime(js)
            if stale or (side.get("derived_from") and name in CONVERTERS):
                side = None  # always re-derive a derived sidecar: the converter may have changed too
        if side is None and os.path.exists(md):
            side = derive(name, md)
            with open(js, "w", encoding="utf-8") as f:
                json.dump(side, f, indent=1, ensure_ascii=False)
        if side is not None:
            out[name] = side
    return out


# ------------------------------------------------------------------------------------------------
# Numbers for the summary
# ------------------------------------------------------------------------------------------------

def fmt_ns(ns):
    if ns is None:
        return "—"
    for unit, f in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= f:
            v = ns / f
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return f"{ns:.3g} ns"


def groups(rows):
    """(workload, op, variant) -> [rows]"""
    g = {}
    for r in rows:
        if r.get("ns_per_op"):
            g.setdefault((r["workload"], r["op"], r.get("variant", "")), []).append(r)
    return g


def best(rs, kind):
    c = [r for r in rs if r["kind"] == kind and r.get("ns_per_op") and not r.get("base_only")]
    return min(c, key=lambda r: r["ns_per_op"]) if c else None


def primary_variant(side):
    """The variant the summary shows per (workload, op): "" if present, else the first one seen."""
    seen = {}
    for r in side["rows"]:
        key = (r["workload"], r["op"])
        v = r.get("variant", "")
        if key not in seen or v == "":
            seen[key] = v
    return seen


# Folders whose rows come in several variants of which the summary shows some: js measures decode
# copying (Node, Chromium) and zero-copy, encode owned (Node) and shared; the summary keeps the
# defaults a user gets, the detail keeps everything.
SUMMARY_VARIANTS = {"js": {"Node", "Chromium"}}


def summary_rows(name, side, manifest_ids):
    g = groups(side["rows"])
    prim = primary_variant(side)
    out = []
    # variant "" where a (workload, op) has one; else every variant (js: Node and Chromium)
    keys = sorted({k for k in g if (k[2] == "" or prim.get(k[:2]) != "")
                   and (name not in SUMMARY_VARIANTS or k[2] in SUMMARY_VARIANTS[name])},
                  key=lambda k: (WORKLOAD_ORDER.index(k[0]) if k[0] in WORKLOAD_ORDER else 99, k[0], k[2], k[1] != "encode"))
    for wl, op, variant in keys:
        rs = g[(wl, op, variant)]
        m, peer, pb, js = best(rs, "mpk"), best(rs, "msgpack"), best(rs, "protobuf"), best(rs, "json")
        if not m:
            continue
        if wl not in manifest_ids and not pb:
            continue
        label = rs[0].get("label", wl)
        out.append({"lang": name, "workload": wl, "label": label, "op": op, "variant": variant, "per": m.get("per"),
                    "mpk": m, "peer": peer, "pb": pb, "json": js,
                    "base": {k: same_run_mpk(x, rs, m) for k, x in (("peer", peer), ("pb", pb), ("json", js))}})
    return out


def same_run_mpk(r, rs, m):
    """The mpk row measured in the same run (table) as r, when the folder has several runs; else m."""
    if r is None or not r.get("run"):
        return m
    c = [x for x in rs if x["kind"] == "mpk" and x.get("run") == r["run"] and x.get("ns_per_op")]
    return min(c, key=lambda x: x["ns_per_op"]) if c else m


def ratio_cell(r, m):
    if not r:
        return "—"
    return f"{r['library']} {r['ns_per_op'] / m['ns_per_op']:.2f}×"


def sentence(name, srows, sizes):
    lang = LANG.get(name, name)
    if not srows:
        return f"- **{lang}**: no results in `bench/results/{name}.*` yet."
    parts = []

    def tally(key, what):
        rs = [s for s in srows if s[key]]
        if not rs:
            return None, []
        ratios = [s[key]["ns_per_op"] / s["base"][key]["ns_per_op"] for s in rs]
        wins = sum(1 for x in ratios if x > 1)
        losses = [(s, x) for s, x in zip(rs, ratios) if x < 1]
        txt = (f"faster than {what} on {wins} of {len(rs)} rows (median {statistics.median(ratios):.2f}×, "
               f"range {min(ratios):.2f}–{max(ratios):.2f}×)")
        return txt, losses

    peer_txt, peer_losses = tally("peer", "the best MessagePack peer")
    pb_txt, pb_losses = tally("pb", "protobuf")
    js_txt, js_losses = tally("json", "JSON")
    if peer_txt:
        parts.append(peer_txt)
    if js_txt:
        parts.append(js_txt)
    if pb_txt:
        parts.append(pb_txt)
    paths = sorted({s["mpk"]["library"] for s in srows})
    path_note = "" if paths == ["mpk"] else f" (mpk's fastest path per row: {', '.join(paths)})"
    text = f"- **{lang}**: mpk{path_note} is " + "; ".join(parts) + "."
    if not pb_txt:
        text += " There is no protobuf column yet, so this bench does not yet answer the seeds' question about protobuf."
    for key, losses, what in (("pb", pb_losses, "protobuf"), ("peer", peer_losses, "the MessagePack peer"), ("json", js_losses, "JSON")):
        if not losses:
            continue
        items = []
        for s, x in losses[:6]:
            why = ""
            sz = sizes.get(s["workload"], {})
            if key == "pb" and "protobuf" in sz and "MessagePack" in sz:
                if sz["protobuf"] < sz["MessagePack"] * 0.99:
                    why = f"; its encoding is {sz['protobuf']:,} B against {sz['MessagePack']:,} B: field numbers, not names"
                elif abs(sz["protobuf"] - sz["MessagePack"]) <= 0.01 * sz["MessagePack"] and sz["MessagePack"] > 1024:
                    why = (f"; both formats take about {sz['MessagePack']:,} bytes here, nearly all of it string or binary payload, "
                           "so the time goes to handling that payload (copying it, or decoding its UTF-8), not to the format")
            v = f" [{s['variant']}]" if s["variant"] else ""
            items.append(f"{s['label']} {s['op']}{v} ({s[key]['library']} at {1 / x:.2f}× mpk's speed{why})")
        more = f" and {len(losses) - 6} more" if len(losses) > 6 else ""
        text += f" {what[0].upper() + what[1:]} wins on " + "; ".join(items) + more + "."
    return text


# ------------------------------------------------------------------------------------------------
# The seeds' own figures (quoted from the issues that started each folder) beside today's numbers
# ------------------------------------------------------------------------------------------------

def seed_tables(sides):
    out = ["## The seeds' figures beside today's", "",
           "Each seed's own numbers, as the issues quote them, with the same comparison from this run "
           "(ratios: the other library's time over the MessagePack library's; above 1, MessagePack is faster).", ""]

    def r(side, wl, op, lib_kind=None, library=None, variant=""):
        if not side:
            return None
        c = [x for x in side["rows"] if x["workload"] == wl and x["op"] == op and x.get("variant", "") == variant
             and (library is None or x["library"] == library) and (lib_kind is None or x["kind"] == lib_kind) and x.get("ns_per_op")]
        return min(c, key=lambda x: x["ns_per_op"]) if c else None

    def ratio(a, b):
        return f"{a['ns_per_op'] / b['ns_per_op']:.2f}×" if a and b else "not measured"

    # C++ 2009
    cpp = sides.get("cpp")
    out += ["### C++ (2009): MessagePack vs Protocol Buffers, Test1–Test4", "",
            "| test | 2009: serialize (protobuf / msgpack) | today: protobuf / mpk | today: protobuf / msgpack-cxx (its faster path) | 2009: deserialize | today: protobuf / mpk | today: protobuf / msgpack-cxx (its faster path) |",
            "|---|---|--:|--:|---|--:|--:|"]
    seed_des = {"test1": "4.9× slower (0.20×)", "test2": "2.7× slower (0.37×)", "test3": "17× faster", "test4": "not given"}
    for t in ("test1", "test2", "test3", "test4"):
        cells = []
        for op in ("encode", "decode"):
            pb = r(cpp, t, op, "protobuf", variant="typed")
            m = r(cpp, t, op, "mpk", variant="typed")
            cx = r(cpp, t, op, "msgpack", variant="typed")
            cells.append((ratio(pb, m), ratio(pb, cx)))
        out.append(f"| {t.title()} | 2–3.7× faster | {cells[0][0]} | {cells[0][1]} | {seed_des[t]} | {cells[1][0]} | {cells[1][1]} |")
    if not cpp:
        out += ["", "No C++ results in `bench/results/cpp.*` yet: run `make bench-cpp`."]
    # Go seed
    go = sides.get("go")
    out += ["", "### Go: a Product over HTTP, protobuf vs MessagePack vs JSON", "",
            "The seed found MessagePack (vmihailenco/msgpack) the slowest and largest of the binary two and concluded "
            "\"just use Protocol Buffers\". Issue 4 measured that Product on this machine before mpk (ns per op):", "",
            "| library | then: marshal | then: unmarshal | today: marshal | today: unmarshal |", "|---|--:|--:|--:|--:|"]
    then = {"vmihailenco": (551, 855), "shamaton": (415, 485), "protobuf": (232, 496), "msgp": (152, 218), "json": (476, 2660),
            "mpk": (None, None), "mpkgen": (None, None)}
    for lib, (a, b) in then.items():
        e, d = r(go, "product", "encode", library=lib), r(go, "product", "decode", library=lib)
        out.append(f"| {lib} | {a or '—'} | {b or '—'} | {round(e['ns_per_op']) if e else '—'} | {round(d['ns_per_op']) if d else '—'} |")
    # JS seed
    js = sides.get("js")
    out += ["", "### JavaScript: decode speed against JSON.parse (and protobuf.js)", "",
            "The seed: \"protobuf.js decodes 4× faster than JSON; MessagePack is sometimes slower than JSON\". Issue 3, "
            "on this machine (Node 20), twitter.json: @msgpack/msgpack decoded at 0.69× the speed of "
            "`JSON.parse(buf.toString())`, msgpackr at 1.2× only with its native addon, about 0.6× in a browser.", "",
            "| twitter.json decode, speed relative to JSON | Node | Chromium |", "|---|--:|--:|"]
    for lib in ("mpk", "msgpackr (addon)", "msgpackr", "msgpackr (pure JS)", "@msgpack/msgpack", "protobufjs (static)", "protobuf.js"):
        cells = []
        for env in ("Node", "Chromium"):
            a, j = r(js, "twitter", "decode", library=lib, variant=env), r(js, "twitter", "decode", library="JSON", variant=env)
            cells.append(ratio(j, a) if a and j else "—")
        if any(c != "—" for c in cells):
            out.append(f"| {lib} | {cells[0]} | {cells[1]} |")
    br = sides.get("browser")
    out += ["", "The seed's own comparison, decode speed relative to `JSON.parse` on the workloads that have a protobuf message "
            "(the browser page, `bench/results/browser.md`; above 1: faster than JSON):", "",
            "| workload | protobuf.js | mpk | msgpackr |", "|---|--:|--:|--:|"]
    wls = [] if not br else [w for w in dict.fromkeys(x["workload"] for x in br["rows"] if x["kind"] == "protobuf")]
    for wl in wls:
        j = r(br, wl, "decode", library="JSON.parse", variant="Chromium page")
        cells = [ratio(j, r(br, wl, "decode", library=lib, variant="Chromium page")) for lib in ("protobuf.js", "mpk", "msgpackr")]
        label = next(x["label"] for x in br["rows"] if x["workload"] == wl)
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    if not wls:
        out.append("| (no browser results yet: `make bench-browser-headless`) | — | — | — |")
    # Python
    py = sides.get("python")
    out += ["", "### Python: MessagePack against orjson", "",
            "Issue 5, before mpk: the fastest peer decoded twitter.json at 0.84× orjson's speed, msgpack-python at 0.45×.", "",
            "| twitter.json decode, speed relative to orjson | today |", "|---|--:|"]
    j = r(py, "twitter", "decode", library="orjson")
    for lib in ("mpk", "msgpack", "ormsgpack", "msgspec"):
        a = r(py, "twitter", "decode", library=lib)
        out.append(f"| {lib} | {ratio(j, a) if a and j else '—'} |")
    # Ruby
    out += ["", "### Ruby", "",
            "The seed (msgpack-ruby v5's release notes): a packer that owns its buffer packed their integer array 5× faster. "
            "Today, integer array pack, msgpack-ruby / mpk: "]
    rb = sides.get("ruby")
    a, b = r(rb, "rb_integers", "encode", library="msgpack-ruby"), r(rb, "rb_integers", "encode", library="mpk")
    out[-1] += (ratio(a, b) if a and b else "not measured (no `bench/results/ruby.*` yet)") + "."
    # C
    c = sides.get("c")
    out += ["", "### C: an integer array and a string array against JSON", "",
            "The seed gives no figures; today's, JSON (RapidJSON) time over mpk's:", "", "| row | pack | unpack |", "|---|--:|--:|"]
    if c:
        for label in sorted({x["label"] for x in c["rows"] if x["label"].startswith(("ints", "strings"))}):
            cells = []
            for op in ("encode", "decode"):
                m = [x for x in c["rows"] if x["label"] == label and x["op"] == op and x["variant"] == "" and x["kind"] == "mpk"]
                jj = [x for x in c["rows"] if x["label"] == label and x["op"] == op and x["variant"] == "" and x["kind"] == "json"]
                cells.append(ratio(jj[0], m[0]) if m and jj else "—")
            out.append(f"| {label} | {cells[0]} | {cells[1]} |")
    return out


# ------------------------------------------------------------------------------------------------
# The report
# ------------------------------------------------------------------------------------------------

def rpc_section(side):
    """MessagePack-RPC against JSON-RPC and gRPC (bench/rpc): calls per second per language and workload."""
    if not side or not side.get("rows"):
        return []
    cells = {}
    for r in side["rows"]:
        rate = r.get("calls_per_s") or (1e9 / r["ns_per_op"] if r.get("ns_per_op") else None)
        cells.setdefault((r.get("variant", ""), r["workload"]), {})[r["kind"]] = (r, rate)
    out = ["## MessagePack-RPC against gRPC and JSON-RPC", "",
           "Calls per second on loopback TCP (`bench/rpc`, one run per language); ratios are mpk-RPC's calls per second over "
           "the other's (above 1: mpk-RPC serves more calls). The issue's bar: at least 2× gRPC with 64 calls in flight and "
           "at least 1× gRPC for sequential calls.", "",
           "| language | workload | mpk-RPC calls/s | vs JSON-RPC | vs gRPC |", "|---|---|--:|--:|--:|"]
    for (lang, wl), c in cells.items():  # in the order bench/rpc wrote them
        if "mpk" not in c:
            continue
        m, mrate = c["mpk"]
        def ratio(kind):
            if kind not in c or not c[kind][1] or not mrate:
                return "—"
            return f"{mrate / c[kind][1]:.2f}×"
        out.append(f"| {lang} | {m.get('label', wl)} | {mrate:,.0f} | {ratio('json')} | {ratio('protobuf')} |")
    return out + [""]


def nest(section, level=3):
    """Shift a section's headings so that its top one is at the given level."""
    levels = [len(line) - len(line.lstrip("#")) for line in section.splitlines() if line.startswith("#")]
    shift = level - min(levels) if levels else 0
    if shift <= 0:
        return section
    return "\n".join("#" * shift + line if line.startswith("#") else line for line in section.splitlines())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sidecars-only", action="store_true", help="write the derived sidecars and stop (before bench/plot.py)")
    ap.add_argument("--quick", action="store_true", help="label the report as a QUICK=1 run")
    args = ap.parse_args()
    sides = load_sidecars()
    if args.sidecars_only:
        print("bench/results sidecars: " + ", ".join(f"{n} ({len(s['rows'])} rows)" for n, s in sides.items()))
        return
    manifest_ids = set(WORKLOAD_ORDER)
    if os.path.exists(MANIFEST):
        with open(MANIFEST, encoding="utf-8") as f:
            manifest_ids |= {w["id"] for w in json.load(f)["workloads"]}
    sizes, zsizes = {}, {}
    sizes_path = os.path.join(RESULTS, "sizes.json")
    if os.path.exists(sizes_path):
        with open(sizes_path, encoding="utf-8") as f:
            for r in json.load(f)["rows"]:
                sizes.setdefault(r["workload"], {})[r["format"]] = r["raw"]
                zsizes.setdefault(r["workload"], {})[r["format"]] = r.get("zstd")
    rpc_side = sides.pop("rpc", None)  # calls per second, not codec rows: a section of its own
    names = [n for n in ORDER if n in sides] + sorted(n for n in sides if n not in ORDER)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = ["# Benchmark results", ""]
    if args.quick:
        out += ["> **QUICK run** (`make bench QUICK=1`): fewer rounds, for a first look only. These numbers are noisier than "
                "a full `make bench` and must not be quoted.", ""]
    out += [f"Report assembled {now} on {platform.machine()}, {describe_machine()}; the machine is shared, "
            "so only ratios within one folder's run mean much. Each folder's section below gives its own date and library versions. "
            "Ratios are the other library's time over mpk's for the same workload and operation (above 1: mpk is faster). "
            "Regenerate everything with `make bench`, one folder with `make bench-<name>` then `python3 tools/merge-bench.py`.", ""]
    all_s = {n: summary_rows(n, sides[n], manifest_ids) for n in names}
    dates = [f"{LANG.get(n, n)} {sides[n].get('date') or '?'}" + (" (quick)" if sides[n].get("quick") else "") for n in names]
    out += ["Results dated: " + "; ".join(dates) + ".", ""]
    all_s = {n: summary_rows(n, sides[n], manifest_ids) for n in names}
    # At a glance: one line per language (the text the top README can carry)
    out += ["## At a glance", "",
            "Per language, over the summary's rows below: the median of the other library's time over mpk's (above 1: mpk is "
            "faster) and how many rows mpk wins.", "",
            "| language | vs best MessagePack peer | vs protobuf | vs JSON |", "|---|--:|--:|--:|"]
    for n in names:
        cells = []
        for key in ("peer", "pb", "json"):
            rs = [s for s in all_s[n] if s[key]]
            if not rs:
                cells.append("not measured")
                continue
            xs = [s[key]["ns_per_op"] / s["base"][key]["ns_per_op"] for s in rs]
            cells.append(f"{statistics.median(xs):.2f}× ({sum(1 for x in xs if x > 1)} of {len(xs)})")
        out.append(f"| {LANG.get(n, n)} | " + " | ".join(cells) + " |")
    out += [""]
    out += ["## Summary", "",
            "Per language and workload: mpk's time, then the best MessagePack peer, protobuf and JSON as library and time ratio "
            "(above 1: mpk is faster); sizes are the workload's encoded bytes (MessagePack / protobuf / JSON, `bench/results/sizes.md`). "
            "mpk is its fastest path in that folder (Go: mpkgen's generated methods where faster than reflection; C++: typed structs); "
            "the peer is likewise the fastest one, generated code included.", "",
            "| language | workload | op | mpk | best MessagePack peer | protobuf | JSON | bytes MP / pb / JSON |",
            "|---|---|---|--:|--:|--:|--:|--:|"]
    for n in names:
        for s in all_s[n]:
            sz = sizes.get(s["workload"], {})
            szc = " / ".join(f"{sz[k]:,}" if k in sz else "—" for k in ("MessagePack", "protobuf", "JSON")) if sz else "—"
            v = f" ({s['variant']})" if s["variant"] else ""
            out.append(f"| {LANG.get(n, n)} | {s['label']} | {s['op']}{v} | {s['mpk']['library']} {fmt_ns(s['mpk']['ns_per_op'])}{'/' + s['per'] if s.get('per') else ''} | "
                       f"{ratio_cell(s['peer'], s['base']['peer'])} | {ratio_cell(s['pb'], s['base']['pb'])} | {ratio_cell(s['json'], s['base']['json'])} | {szc} |")
    out += ["", "## Is MessagePack faster and smaller than Protocol Buffers and JSON?", "",
            "One answer per language, computed from the summary's rows above (not written by hand):", ""]
    for n in names:
        out.append(sentence(n, all_s[n], sizes))
    for n in ORDER:
        if n not in sides:
            target = "bench-browser-headless" if n == "browser" else f"bench-{n}"
            out.append(f"- **{LANG[n]}**: no results in `bench/results/{n}.*` yet (`make {target}`).")
    if sizes:
        mp_pb = [(w, s) for w, s in sizes.items() if "protobuf" in s and "MessagePack" in s]
        smaller = [w for w, s in mp_pb if s["MessagePack"] < s["protobuf"]]
        mp_js = [(w, s) for w, s in sizes.items() if "JSON" in s and "MessagePack" in s]
        larger = [w for w, sz in mp_pb if sz["MessagePack"] > sz["protobuf"]]
        same = len(mp_pb) - len(smaller) - len(larger)
        excess = [f"{w} +{(sizes[w]['MessagePack'] / sizes[w]['protobuf'] - 1) * 100:.1f}%" for w in larger]
        closer = [w for w in larger if zsizes.get(w, {}).get("MessagePack") and zsizes[w].get("protobuf")
                  and zsizes[w]["MessagePack"] / zsizes[w]["protobuf"] < sizes[w]["MessagePack"] / sizes[w]["protobuf"]]
        out.append(f"- **Sizes** (every language alike): MessagePack is smaller than JSON on "
                   f"{sum(1 for w, s in mp_js if s['MessagePack'] < s['JSON'])} of {len(mp_js)} workloads. Against protobuf, on the "
                   f"{len(mp_pb)} with a schema: smaller on {len(smaller)} ({', '.join(smaller) or 'none'}), the same size on {same}, "
                   f"larger on {len(larger)} ({', '.join(excess) or 'none'}; protobuf writes field numbers where MessagePack writes "
                   f"names, and varints), and zstd narrows the gap on {len(closer)} of those {len(larger)} (`bench/results/sizes.md`).")
    # Plots
    plots = sorted(glob.glob(os.path.join(PLOTS, "*.svg")))
    if plots:
        out += ["", "## Plots", "", "Made by `bench/plot.py` from the same rows (time per op, lower is better; log scale where values span decades).", ""]
        for p in plots:
            base = os.path.basename(p)
            out += [f"![{base[:-4]}](plots/{base})", ""]
    out += [""] + rpc_section(rpc_side)
    out += [""] + seed_tables(sides)
    # Detail
    out += ["", "## Detail", "", "Every folder's own tables, unchanged (`bench/results/<name>.md`).", ""]
    sizes_md = os.path.join(RESULTS, "sizes.md")
    for n in names + (["rpc"] if rpc_side else []) + (["sizes"] if os.path.exists(sizes_md) else []):
        md = os.path.join(RESULTS, n + ".md")
        if os.path.exists(md):
            with open(md, encoding="utf-8") as f:
                out += [nest(f.read().strip()), ""]
    with open(os.path.join(ROOT, "bench", "RESULTS.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(f"bench/RESULTS.md: {', '.join(names) or 'no sections yet'}; {sum(len(v) for v in all_s.values())} summary rows, {len(plots)} plots")


if __name__ == "__main__":
    main()
