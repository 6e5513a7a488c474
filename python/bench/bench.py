"""mpk against msgpack-python, ormsgpack, msgspec, protobuf and orjson, in one process.

    python python/bench/bench.py [--quick] [--rounds N] [--only NAME] [--pb DIR] [--part FILE] [--out FILE]
    python python/bench/bench.py --combine PART... --out python.md --json python.json

Every library packs and unpacks the same values: the common workloads of build/bench-workloads
(`make bench-workloads`; each loaded from its .msgpack, its .json for orjson, its .pb for protobuf)
and this folder's own datasets (one tweet, int and str arrays, long strs). protobuf (the upb runtime)
runs the workloads that have a message, with the code `protoc --python_out` made into --pb; msgspec
also runs Product and 100 Products typed, decoding into and encoding from Structs. Each round times
every library once per dataset and direction, in an order that rotates between rounds so that
machine noise hits all alike; a sample repeats the call until it lasts at least --min-time seconds.
The table gives the median time per call and ratios against mpk (peer time / mpk time per round, then
the median over rounds: 2.00 means mpk takes half the time). A library whose result does not
round-trip the dataset is left out of that row (shown as "-"). `--quick` (or MPK_BENCH_QUICK=1 in
the environment) runs 3 short rounds. `--part` writes one interpreter's results as JSON; `--combine`
turns the parts of several interpreters into the Markdown tables and the sidecar
(bench/README.md, "The sidecar"). Not a test: nothing here asserts speed.
"""
import argparse
import datetime
import gc
import importlib
import json
import os
import platform
import random
import statistics
import sys
import time

try:  # the bench's peers; --combine needs none of them
    import msgpack
    import msgspec
    import orjson
    import ormsgpack

    import mpk
except ImportError:
    if "--combine" not in sys.argv:
        raise

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BENCH_DATA = os.path.join(os.path.dirname(REPO), "shared", "bench-data")
WORKLOADS = os.path.join(REPO, "build", "bench-workloads")


# ------------------------------------------------------------------------------------------------
# Datasets
# ------------------------------------------------------------------------------------------------

def load_or_generate(name, generate):
    path = os.path.join(BENCH_DATA, name + ".json")
    if os.path.exists(path):
        with open(path, "rb") as f:
            return json.loads(f.read()), "file"
    return generate(random.Random(name)), "generated look-alike"


def fake_twitter(rng):
    return {"statuses": [tweet(rng, i) for i in range(100)],
            "search_metadata": {"completed_in": 0.087, "max_id": 505874924095815681, "count": 100}}


def fake_canada(rng):
    rings = [[[rng.uniform(-141, -52), rng.uniform(41, 83)] for _ in range(rng.randint(50, 2000))]
             for _ in range(480)]
    return {"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"name": "Canada"},
            "geometry": {"type": "Polygon", "coordinates": rings}}]}


def fake_citm(rng):
    events = {str(138586341 + i): {"description": None, "id": 138586341 + i, "logo": None,
                                   "name": "Event %d" % i, "subTopicIds": [337184269, 337184283],
                                   "subjectCode": None, "subtitle": None, "topicIds": [324846099, 107888604]}
              for i in range(184)}
    performances = [{"eventId": 138586341 + i % 184, "id": 339887544 + i, "logo": None, "name": None,
                     "prices": [{"amount": 90250, "audienceSubCategoryId": 337100890, "seatCategoryId": 338937295}],
                     "seatCategories": [{"areas": [{"areaId": 205705999 + j, "blockIds": []} for j in range(10)],
                                         "seatCategoryId": 338937295}],
                     "seatMapImage": None, "start": 1372701600000, "venueCode": "PLEYEL_PLEYEL"}
                    for i in range(243)]
    return {"areaNames": {str(205705993 + i): "Area %d" % i for i in range(17)}, "events": events,
            "performances": performances, "venueNames": {"PLEYEL_PLEYEL": "Salle Pleyel"}}


def tweet(rng, i):
    return {
        "created_at": "Sun Nov 22 21:14:07 +0000 2026",
        "id": 1862651926283452416 + i,
        "id_str": str(1862651926283452416 + i),
        "text": "Trail season is here: new shoes, same mud. Who's running the ridge loop on Saturday? "
                "#trailrunning #weekend https://t.co/x7Qm2LrA9b",
        "source": "<a href=\"https://mobile.twitter.com\" rel=\"nofollow\">Twitter Web App</a>",
        "truncated": False,
        "in_reply_to_status_id": None,
        "user": {"id": 783214, "id_str": "783214", "name": "Ridge Runners Club", "screen_name": "ridgerunners",
                 "location": "Boulder, CO",
                 "description": "Weekly group runs, race reports and the occasional muddy selfie. Everyone welcome.",
                 "url": "https://t.co/abc123XYZ", "protected": False, "followers_count": 48213,
                 "friends_count": 612, "listed_count": 301, "created_at": "Tue Feb 20 14:35:54 +0000 2007",
                 "favourites_count": 15322, "verified": False, "statuses_count": 20871, "lang": "en"},
        "retweet_count": 27 + rng.randint(0, 100),
        "favorite_count": 214,
        "favorited": False,
        "retweeted": False,
        "lang": "en",
        "entities": {"hashtags": [{"text": "trailrunning", "indices": [86, 99]}, {"text": "weekend", "indices": [100, 108]}],
                     "user_mentions": [{"screen_name": "bouldertrails", "name": "Boulder Trails", "id": 1423567, "indices": [0, 14]}],
                     "urls": [{"url": "https://t.co/x7Qm2LrA9b", "expanded_url": "https://ridgerunners.example/loop",
                               "display_url": "ridgerunners.example/loop", "indices": [109, 132]}]},
    }


PRODUCT = {
    "id": 191919191919,
    "name": "Men's Trail Running Shoe",
    "description": "Lightweight trail running shoe with a breathable mesh upper and a grippy rubber outsole.",
    "price": 18900,
    "colors": ["Black", "Forest Green", "Slate Blue"],
}


def table16(rng):
    return [{"id": 1000 + i, "name": "user%02d" % i, "email": "user%02d@example.com" % i,
             "score": round(rng.uniform(0, 100), 3), "active": i % 3 != 0, "visits": rng.randint(0, 100000)}
            for i in range(16)]


def int_array(rng):
    # every width a document carries: fixints, 8/16/32/64-bit, negatives
    return [rng.choice([rng.randint(0, 127), rng.randint(-32, -1), rng.randint(128, 65535),
                        rng.randint(-2**31, 2**31), rng.randint(0, 2**63)]) for _ in range(10000)]


def str_array(rng):
    alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return ["".join(rng.choice(alphabet) for _ in range(rng.choice([0, 3, 8, 12, 20, 40, 80])))
            for _ in range(10000)]


def long_str_array(rng):
    # 1000 strs of 100 B to 4 KiB: text fields, log lines, descriptions (mostly ASCII, a few not)
    words = ["trail", "ridge", "loop", "shoes", "mud", "saturday", "weather", "report", "caf\u00e9", "group"]
    out = []
    for _ in range(1000):
        n = rng.randint(100, 4096)
        text = []
        size = 0
        while size < n:
            w = rng.choice(words)
            text.append(w)
            size += len(w) + 1
        out.append(" ".join(text)[:n])
    return out


def dataset_makers():
    """(name, make) pairs: make() returns (value, source). Built one at a time, so that a run
    limited to one dataset (--only, callgrind.py) makes only that one."""
    def fixed(value):
        return lambda: (value, "generated")

    def with_rng(gen, seed):
        return lambda: (gen(random.Random(seed)), "generated")

    bin8k = lambda: random.Random(8192).randbytes(8192)
    return [
        ("twitter", lambda: load_or_generate("twitter", fake_twitter)),
        ("canada", lambda: load_or_generate("canada", fake_canada)),
        ("citm_catalog", lambda: load_or_generate("citm_catalog", fake_citm)),
        ("tweet (one status)", with_rng(lambda rng: tweet(rng, 0), 1)),
        ("int array (10k)", with_rng(int_array, 2)),
        ("str array (10k)", with_rng(str_array, 3)),
        ("Product", fixed(PRODUCT)),
        ("table (16 rows)", with_rng(table16, 4)),
        # Test1 and Test2 of the Protocol Buffers comparison
        ("[1, 2]", fixed([1, 2])),
        ("[-1, -2]", fixed([-1, -2])),
        # long strings and large binaries (issue 9, item 3), and Test3 (one 8 KiB bin alone) and
        # Test4 ([[1, 2], [-1, -2], <8 KiB bin>]) of the Protocol Buffers comparison
        ("long str array (1k, 100 B-4 KiB)", with_rng(long_str_array, 5)),
        ("Test3: 8 KiB bin", lambda: (bin8k(), "generated")),
        ("Test4: [[1,2],[-1,-2],8 KiB bin]", lambda: ([[1, 2], [-1, -2], bin8k()], "generated")),
        ("bin array (16 x 64 KiB)", lambda: ([random.Random(i).randbytes(65536) for i in range(16)], "generated")),
    ]


def datasets(only=None):
    return [(name, *make()) for name, make in dataset_makers() if not only or only in name]


# The datasets of the table: every common workload, then this folder's own ones that no workload
# covers (callgrind.py uses dataset_makers above, whose names are the earlier table's).
OWN = ["tweet (one status)", "int array (10k)", "str array (10k)", "long str array (1k, 100 B-4 KiB)"]
OWN_IDS = {"tweet (one status)": "py_tweet", "int array (10k)": "py_int_array", "str array (10k)": "py_str_array",
           "long str array (1k, 100 B-4 KiB)": "py_long_str_array"}


class Dataset:
    def __init__(self, wid, label, value, json_bytes=None, pb=None, typed=None):
        self.id, self.label, self.value = wid, label, value
        self.json_bytes = json_bytes  # the workload's own JSON text (bins as base64), else None
        self.pb = pb                  # (message class, protoc's bytes) or None
        self.typed = typed            # the msgspec type to decode into, or None


def pb_class(pb_dir, full_name):
    if not pb_dir or not full_name:
        return None
    package, name = full_name.split(".")
    if pb_dir not in sys.path:
        sys.path.insert(0, pb_dir)
    module = importlib.import_module({"seed": "seed_pb2", "mpkbench": "workloads_pb2"}[package])
    return getattr(module, name)


def typed_product():
    class Product(msgspec.Struct, array_like=False):
        id: int
        name: str
        description: str
        price: int
        colors: list[str]
    return Product


def bench_datasets(only, pb_dir):
    """Yields the datasets one at a time (only one is in memory: see run's gc.freeze)."""
    manifest = os.path.join(WORKLOADS, "manifest.json")
    if not os.path.exists(manifest):
        sys.exit(f"bench.py: {manifest} is missing: run `make bench-workloads` first")
    with open(manifest) as f:
        workloads = json.load(f)["workloads"]
    Product = typed_product()
    for w in workloads:
        if only and only not in w["id"] and only not in w["title"]:
            continue
        files = w["files"]

        def read(kind):
            with open(os.path.join(WORKLOADS, files[kind]), "rb") as f:
                return f.read()
        value = mpk.unpackb(read("msgpack"))
        if msgpack.unpackb(read("msgpack"), strict_map_key=False) != value:
            sys.exit(f"bench.py: mpk and msgpack-python read {w['id']}.msgpack differently")
        cls = pb_class(pb_dir, w.get("proto")) if "pb" in files else None
        typed = {"product": Product, "products100": list[Product]}.get(w["id"])
        yield Dataset(w["id"], w["title"], value, read("json") if "json" in files else None,
                      (cls, read("pb")) if cls else None, typed)
    for name, make in dataset_makers():
        if name in OWN and (not only or only in name or only in OWN_IDS[name]):
            yield Dataset(OWN_IDS[name], name, make()[0])


# ------------------------------------------------------------------------------------------------
# Libraries: each gives (pack fn, pack arg, unpack fn, unpack arg, encoded size) for a dataset, or
# None when it cannot carry the dataset (no round trip, no message)
# ------------------------------------------------------------------------------------------------

COLUMNS = ["mpk", "msgpack", "ormsgpack", "msgspec", "msgspec Struct", "protobuf", "orjson"]
KIND = {"mpk": "mpk", "msgpack": "msgpack", "ormsgpack": "msgpack", "msgspec": "msgpack",
        "msgspec Struct": "msgpack", "protobuf": "protobuf", "orjson": "json"}
_msgspec_enc = None


def schemaless(pack, unpack):
    def cell(ds):
        try:
            packed = pack(ds.value)
            if unpack(packed) != ds.value:
                return None
        except (TypeError, ValueError, OverflowError):
            return None
        return pack, ds.value, unpack, packed, len(packed)
    return cell


def msgspec_cell(ds):
    enc, dec = msgspec.msgpack.Encoder(), msgspec.msgpack.Decoder()
    return schemaless(enc.encode, dec.decode)(ds)


def msgspec_typed_cell(ds):
    if ds.typed is None:
        return None
    enc, dec = msgspec.msgpack.Encoder(), msgspec.msgpack.Decoder(ds.typed)
    packed = mpk.packb(ds.value)
    obj = dec.decode(packed)
    if enc.encode(obj) != packed or dec.decode(enc.encode(obj)) != obj:
        return None
    return enc.encode, obj, dec.decode, packed, len(packed)


def protobuf_cell(ds):
    if ds.pb is None:
        return None
    cls, data = ds.pb
    msg = cls.FromString(data)
    if cls.FromString(msg.SerializeToString()) != msg:
        return None
    return cls.SerializeToString, msg, cls.FromString, data, len(data)


def orjson_cell(ds):
    if ds.json_bytes is not None:
        value = orjson.loads(ds.json_bytes)
        if orjson.loads(orjson.dumps(value)) != value:
            return None
        return orjson.dumps, value, orjson.loads, ds.json_bytes, len(orjson.dumps(value))
    return schemaless(orjson.dumps, orjson.loads)(ds)


CELLS = {
    "mpk": lambda ds: schemaless(mpk.packb, mpk.unpackb)(ds),
    "msgpack": lambda ds: schemaless(msgpack.packb, lambda b: msgpack.unpackb(b, strict_map_key=False))(ds),
    "ormsgpack": lambda ds: schemaless(ormsgpack.packb, ormsgpack.unpackb)(ds),
    "msgspec": msgspec_cell,
    "msgspec Struct": msgspec_typed_cell,
    "protobuf": protobuf_cell,
    "orjson": orjson_cell,
}


def versions():
    from google.protobuf import __version__ as pb_version
    from google.protobuf.internal import api_implementation
    return {
        "CPython": platform.python_version(),
        "mpk": mpk.__version__ + " (C core " + mpk.core_version + ")",
        "msgpack": msgpack.__version__ if hasattr(msgpack, "__version__") else ".".join(map(str, msgpack.version)),
        "ormsgpack": ormsgpack.__version__,
        "msgspec": msgspec.__version__,
        "protobuf": f"{pb_version} ({api_implementation.Type()})",
        "orjson": orjson.__version__,
    }


# ------------------------------------------------------------------------------------------------
# Timing
# ------------------------------------------------------------------------------------------------

def sample(fn, arg, number):
    start = time.perf_counter()
    for _ in range(number):
        fn(arg)
    return (time.perf_counter() - start) / number


def calibrate(fn, arg, min_time):
    number = 1
    while True:
        t = sample(fn, arg, number)
        if t * number >= min_time / 4 or number >= 1 << 20:
            return max(1, int(min_time / max(t, 1e-9)))
        number *= 4


def run(rounds, min_time, only, pb_dir):
    results = []
    for ds in bench_datasets(only, pb_dir):
        started = time.process_time()
        cells = {}
        for lib in COLUMNS:
            c = CELLS[lib](ds)
            if c is not None:
                cells[lib] = {"pack": (c[0], c[1]), "unpack": (c[2], c[3]), "size": c[4]}
        if "mpk" not in cells:
            print(f"{ds.id}: mpk does not round-trip it, skipped", file=sys.stderr)
            continue
        # the dataset's objects (values, packed bytes, decoded samples) are set aside from the
        # collector, so that the gc.collect() before every sample clears only what the previous
        # sample left, in about the same short time whatever the dataset's size
        gc.collect()
        gc.freeze()
        numbers = {(lib, d): calibrate(*cells[lib][d], min_time) for lib in cells for d in ("pack", "unpack")}
        times = {key: [] for key in numbers}
        labels = list(cells)
        for r in range(rounds):
            order = labels[r % len(labels):] + labels[:r % len(labels)]
            for direction in ("pack", "unpack"):
                for lib in order:
                    gc.collect()
                    fn, arg = cells[lib][direction]
                    times[(lib, direction)].append(sample(fn, arg, numbers[(lib, direction)]))
        gc.unfreeze()
        results.append({"id": ds.id, "label": ds.label,
                        "sizes": {lib: cells[lib]["size"] for lib in labels},
                        "samples": {f"{lib}/{d}": v for (lib, d), v in times.items()}})
        print(f"{ds.id} ({time.process_time() - started:.1f} s cpu): " + ", ".join(f"{lib} {statistics.median(times[(lib, 'pack')]) * 1e6:.1f}/"
                                       f"{statistics.median(times[(lib, 'unpack')]) * 1e6:.1f} us"
                                       for lib in labels), file=sys.stderr, flush=True)
    return results


# ------------------------------------------------------------------------------------------------
# Output: the parts of every interpreter -> Markdown tables and the sidecar
# ------------------------------------------------------------------------------------------------

def fmt_time(t):
    if t >= 1e-3:
        return f"{t * 1e3:.2f} ms"
    return f"{t * 1e6:.2f} us" if t >= 1e-6 else f"{t * 1e9:.0f} ns"


def per_round(samples, peers, d):
    """The median over rounds of (fastest of peers in that round) / mpk in that round: each round's
    samples were taken close together, under the same machine load."""
    peers = [p for p in peers if f"{p}/{d}" in samples]
    if not peers:
        return None
    ours = samples[f"mpk/{d}"]
    return statistics.median(min(samples[f"{p}/{d}"][r] for p in peers) / ours[r] for r in range(len(ours)))


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}"


def version_table(part):
    v = part["versions"]
    lines = [
        f"### CPython {v['CPython']}",
        "",
        "Versions: " + ", ".join(f"{k} {x}" for k, x in v.items() if k != "CPython") + ".",
        "",
        "| dataset | dir | " + " | ".join(COLUMNS) + " | x msgpack | x best MP | x protobuf | x orjson |",
        "|---|---|" + "---|" * (len(COLUMNS) + 4),
    ]
    for res in part["results"]:
        s = res["samples"]
        for d in ("pack", "unpack"):
            cells = [fmt_time(statistics.median(s[f"{lib}/{d}"])) if f"{lib}/{d}" in s else "-" for lib in COLUMNS]
            ratios = [per_round(s, ["msgpack"], d), per_round(s, ["ormsgpack", "msgspec"], d),
                      per_round(s, ["protobuf"], d), per_round(s, ["orjson"], d)]
            lines.append(f"| {res['label']} | {d} | " + " | ".join(cells) + " | " +
                         " | ".join(fmt_ratio(x) for x in ratios) + " |")
    return lines


def bars(parts):
    """The issue's bar: pack and unpack >= 1.2x the faster of ormsgpack and msgspec on every dataset,
    on every version. Lists the cells below it."""
    below = []
    for part in parts:
        for res in part["results"]:
            for d in ("pack", "unpack"):
                x = per_round(res["samples"], ["ormsgpack", "msgspec"], d)
                if x is not None and x < 1.2:
                    below.append(f"{part['versions']['CPython']} {res['label']} {d} {x:.2f}")
    return below


def combine(paths, out_md, out_json):
    parts = []
    for p in paths:
        with open(p) as f:
            parts.append(json.load(f))
    if not parts:
        sys.exit("bench.py --combine: no parts")
    # the newest interpreter's rows are the summary's (variant ""); the others carry their version
    newest = max(parts, key=lambda p: tuple(int(x) for x in p["versions"]["CPython"].split(".")[:2]))
    quick = any(p["quick"] for p in parts)
    date = max(p["date"] for p in parts)
    rows = []
    for part in parts:
        version = "CPython " + part["versions"]["CPython"].rsplit(".", 1)[0]
        base = "" if part is newest else version
        for res in part["results"]:
            for key, samples in res["samples"].items():
                lib, d = key.split("/")
                variant = base
                if lib == "msgspec Struct":
                    variant = "typed" + (", " + version if base else "")
                rows.append({"workload": res["id"], "label": res["label"], "op": "encode" if d == "pack" else "decode",
                             "variant": variant, "library": "msgspec" if lib == "msgspec Struct" else lib,
                             "kind": KIND[lib], "ns_per_op": round(statistics.median(samples) * 1e9, 1),
                             "bytes": res["sizes"][lib]})
    all_versions = {}
    for part in parts:
        for k, x in part["versions"].items():
            if k != "CPython":
                all_versions.setdefault(k, x)
    side = {"name": "python", "title": "Python (mpk, CPython " + ", ".join(p["versions"]["CPython"] for p in parts) + ")",
            "date": date, "machine": parts[0]["machine"], "quick": quick,
            "versions": dict(all_versions, CPython=", ".join(p["versions"]["CPython"] for p in parts)),
            "rows": rows}
    below = bars(parts)
    lines = [
        "## python — mpk vs msgpack-python, ormsgpack, msgspec, protobuf, orjson",
        "",
        f"Date: {date}. Machine: {parts[0]['machine']}." + (" QUICK run: few short rounds, not to be quoted." if quick else ""),
        f"One table per interpreter ({', '.join('CPython ' + p['versions']['CPython'] for p in parts)}), each "
        f"from its own process: medians of {parts[0]['rounds']} rounds per cell (rotating order); time per call. "
        "`x` = peer time / mpk time (above 1: mpk is faster), the median over rounds of each round's ratio. "
        "`best MP` = the faster of ormsgpack and msgspec. `msgspec Struct` decodes into / encodes from "
        "msgspec Structs (typed); `protobuf` is the upb runtime on protoc's own bytes (`.pb`) and its "
        "message objects; orjson runs each workload's own JSON text (bins as base64). "
        "Workload ids: build/bench-workloads/manifest.json; py_* are python/bench's own. "
        "Reproduce: `make bench-python`.",
        "",
    ]
    for part in parts:
        lines += version_table(part) + [""]
    lines += ["Below the issue's bar (1.2x the faster of ormsgpack and msgspec): " +
              ("; ".join(below) if below else "none") + ".", ""]
    with open(out_md, "w") as f:
        f.write("\n".join(lines))
    with open(out_json, "w") as f:
        json.dump(side, f, indent=1)
        f.write("\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="3 short rounds (also MPK_BENCH_QUICK=1)")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--min-time", type=float)
    ap.add_argument("--only")
    ap.add_argument("--pb", help="the folder of protoc's seed_pb2.py and workloads_pb2.py")
    ap.add_argument("--part", help="write this interpreter's results as JSON here")
    ap.add_argument("--combine", nargs="+", metavar="PART")
    ap.add_argument("--out", help="the Markdown tables (with --combine, or for this interpreter alone)")
    ap.add_argument("--json", help="the sidecar (with --combine)")
    args = ap.parse_args()
    if args.combine:
        combine(args.combine, args.out, args.json or os.devnull)
        return
    quick = args.quick or os.environ.get("MPK_BENCH_QUICK") == "1"
    rounds = args.rounds or (3 if quick else 9)
    min_time = args.min_time or (0.002 if quick else 0.02)
    results = run(rounds, min_time, args.only, os.path.abspath(args.pb) if args.pb else None)
    part = {"versions": versions(), "quick": quick, "rounds": rounds,
            "date": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
            "results": results}
    if args.part:
        with open(args.part, "w") as f:
            json.dump(part, f)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(version_table(part)) + "\n")
    print("\n".join(version_table(part)))


if __name__ == "__main__":
    main()
