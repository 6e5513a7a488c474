"""mpk against msgpack-python, ormsgpack, msgspec and orjson, in one process.

    python python/bench/bench.py [--rounds N] [--only NAME] [--out FILE]

Every library packs and unpacks the same values. Each round times every library once per dataset
and direction, in an order that rotates between rounds so that machine noise hits all alike; a
sample repeats the call until it lasts at least --min-time seconds. The table gives the median time
per call and ratios against mpk (peer time / mpk time, so 2.00 means mpk takes half the time).
A library whose result does not round-trip the dataset is left out of that row (shown as "-").
Not a test: nothing here asserts speed.
"""
import argparse
import datetime
import gc
import json
import os
import platform
import random
import statistics
import sys
import time

import msgpack
import msgspec
import orjson
import ormsgpack

import mpk
from mpk import _mpk

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BENCH_DATA = os.path.join(os.path.dirname(REPO), "shared", "bench-data")


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


# ------------------------------------------------------------------------------------------------
# Libraries: (label, pack, unpack, is_json)
# ------------------------------------------------------------------------------------------------

_msgspec_enc = msgspec.msgpack.Encoder()
_msgspec_dec = msgspec.msgpack.Decoder()

LIBS = [
    ("mpk", mpk.packb, mpk.unpackb),
    ("msgpack", msgpack.packb, msgpack.unpackb),
    ("ormsgpack", ormsgpack.packb, ormsgpack.unpackb),
    ("msgspec", _msgspec_enc.encode, _msgspec_dec.decode),
    ("orjson", orjson.dumps, orjson.loads),
    # unpackb's decode built on the C core's mpk_reader instead of mpk's own switch (see README)
]
VERSIONS = {
    "mpk": mpk.__version__ + " (C core " + mpk.core_version + ")",
    "msgpack": msgpack.__version__ if hasattr(msgpack, "__version__") else ".".join(map(str, msgpack.version)),
    "ormsgpack": ormsgpack.__version__,
    "msgspec": msgspec.__version__,
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


def run(rounds, min_time, only):
    rows = []
    for name, value, source in datasets(only):
        cells = {}
        for label, pack, unpack in LIBS:
            packed = pack(value)
            if unpack(packed) != value:
                continue  # does not round-trip this dataset: left out
            cells[label] = {"pack": (pack, value), "unpack": (unpack, packed), "size": len(packed)}
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
        medians = {key: statistics.median(v) for key, v in times.items()}
        medians["samples"] = times
        rows.append((name, source, cells, medians))
        print(f"{name}: " + ", ".join(f"{lib} {medians[(lib, 'pack')] * 1e6:.1f}/{medians[(lib, 'unpack')] * 1e6:.1f} us"
                                      for lib in labels), file=sys.stderr)
    return rows


def fmt_time(t):
    if t >= 1e-3:
        return f"{t * 1e3:.2f} ms"
    return f"{t * 1e6:.2f} us" if t >= 1e-6 else f"{t * 1e9:.0f} ns"


def table(rows, rounds):
    lines = [
        "## python — mpk vs msgpack-python, ormsgpack, msgspec, orjson",
        "",
        f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. Machine: {platform.machine()}, "
        f"{os.cpu_count()} cores, {platform.system()} {platform.release()}; Python {platform.python_version()}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in VERSIONS.items()) + ".",
        f"Medians of {rounds} rounds per cell (rotating order, one process); time per call. "
        "`x` = peer time / mpk time (above 1: mpk is faster), the median over rounds of each round's ratio, "
        "since the machine's load drifts between rounds. orjson is the JSON baseline (its own JSON bytes). "
        "`best MP` = the faster of ormsgpack and msgspec. Reproduce: `make bench-python`.",
        "",
        "| dataset | dir | mpk | msgpack | ormsgpack | msgspec | orjson | x msgpack | x best MP | x orjson |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, source, cells, med in rows:
        for d in ("pack", "unpack"):
            def t(lib):
                return fmt_time(med[(lib, d)]) if (lib, d) in med else "-"

            samples = med["samples"]

            def per_round(peers):
                # the ratio of each round (its samples were taken close together, under the same
                # machine load), then the median over rounds
                peers = [p for p in peers if (p, d) in samples]
                if not peers or ("mpk", d) not in samples:
                    return "-"
                ours = samples[("mpk", d)]
                ratios = [min(samples[(p, d)][r] for p in peers) / ours[r] for r in range(len(ours))]
                return f"{statistics.median(ratios):.2f}"

            def ratio(lib):
                return per_round([lib])
            best_ratio = per_round(["ormsgpack", "msgspec"])
            label = name if source == "file" or source == "generated" else f"{name} ({source})"
            lines.append(f"| {label} | {d} | {t('mpk')} | {t('msgpack')} | {t('ormsgpack')} | {t('msgspec')} | "
                         f"{t('orjson')} | {ratio('msgpack')} | {best_ratio} | {ratio('orjson')} |")
    sizes = ", ".join(f"{name}: {cells['mpk']['size']} B" for name, _, cells, _ in rows if "mpk" in cells)
    lines += ["", f"MessagePack sizes (mpk): {sizes}.", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--min-time", type=float, default=0.02)
    ap.add_argument("--only")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = run(args.rounds, args.min_time, args.only)
    text = table(rows, args.rounds)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
