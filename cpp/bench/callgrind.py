#!/usr/bin/env python3
"""Instructions per message (callgrind) for cpp/bench's typed rows and corpora, one library and
one operation at a time: mpk_cpp_bench --profile LIB:OP counts only that library's timed loop of
that operation (CALLGRIND_TOGGLE_COLLECT around it). Instruction counts do not move with the load
of a shared machine, which wall-clock times do; they do not see cache misses (Test3/Test4 decode
is bound by one miss per message, not by instructions).

    python3 cpp/bench/callgrind.py [--bench PATH] [--only test1,test4] [--libs mpk,protobuf] [--count N]
"""
import argparse
import os
import re
import subprocess
import tempfile

COUNTS = {"test1": 4000, "test2": 4000, "test3": 400, "test4": 400, "product": 2000, "products100": 40,
          "table16": 2000, "rb_image": 200, "rb_integers": 20, "rb_geojson": 20, "rb_model3d": 3, "c_ints": 3,
          "c_strings": 3, "long_string": 3, "utf8_strings": 3, "bins64k": 3,
          "twitter": 3, "citm_catalog": 3, "canada": 2, "rb_twitter": 50}
SCHEMALESS = ("twitter", "citm_catalog", "canada", "rb_twitter")
LIBS = ["mpk", "cxxdoc", "cxxfast", "protobuf", "json"]


def run(bench, wl, lib, op, n, data):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out}",
                        bench, "--runs", "1", "--only", wl, "--count", str(n), "--profile", f"{lib}:{op}", "--data", data],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = open(out).read()
    m = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    return int(m.group(1)) / n if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="cpp/build/bench/bench/mpk_cpp_bench")
    ap.add_argument("--data", default="build/bench-workloads")
    ap.add_argument("--only", default="test1,test2,test3,test4,product,products100")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--count", type=int, default=0)
    a = ap.parse_args()
    libs = a.libs.split(",")
    print("Instructions per message (callgrind), cpp/bench; ratio: the library's count over mpk's\n")
    print("| workload | op | " + " | ".join(libs) + " |")
    print("|---|---|" + "---:|" * len(libs))
    for wl in a.only.split(","):
        n = a.count or COUNTS.get(wl, 100)
        for op in ("encode", "decode"):
            counts = {}
            for lib in libs:
                if lib in ("cxxdoc", "protobuf") and (wl in SCHEMALESS or wl.startswith("js_")):
                    continue
                if lib == "cxxdoc" and wl not in ("test1", "test2", "test3", "test4", "product", "products100"):
                    continue
                counts[lib] = run(a.bench, wl, lib, op, n, a.data)
            base = counts.get("mpk")
            cells = []
            for lib in libs:
                c = counts.get(lib)
                if c is None:
                    cells.append("—")
                elif lib == "mpk" or not base:
                    cells.append(f"{c:,.0f}")
                else:
                    cells.append(f"{c:,.0f} ({c / base:.2f}x)")
            print(f"| {wl} | {op} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
