#!/usr/bin/env python3
"""The common bench workloads, defined once for every language.

Writes, for every workload, into the output folder (default build/bench-workloads/):
  <id>.msgpack  the value as MessagePack (shortest forms, floats as float64, maps in the order given)
  <id>.json     the value as compact UTF-8 JSON (bin values as base64 strings: JSON has no binary)
  <id>.pb       the value as Protocol Buffers, where the workload has a message in workloads.proto or
                seed.proto; made by `protoc --encode` (Debian's protobuf-compiler), so the bytes are
                protoc's own encoding, not ours
and manifest.json, which lists them: {id, title, seed, origin, proto, files, notes}.

A bench in any language loads <id>.msgpack (or .json) with its own decoder, checks it, and times its
libraries on that value; it never has to re-create the value. Everything is seeded, so every run and
every language sees the same bytes. Only the standard library is used (and protoc when present).

  python3 bench/workloads/gen.py [--out DIR] [--data ../shared/bench-data] [--no-pb]
"""
import argparse
import base64
import json
import os
import random
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


# ------------------------------------------------------------------------------------------------
# MessagePack and JSON writers (the values are plain Python: None, bool, int, float, str, bytes,
# list, dict)
# ------------------------------------------------------------------------------------------------

def _len_head(n, fix, fixmax, forms, out):
    if fix is not None and n <= fixmax:
        out.append(fix | n)
        return
    for code, width in forms:
        if n < 1 << (8 * width):
            out.append(code)
            out += n.to_bytes(width, "big")
            return
    raise ValueError(f"length {n} too large for MessagePack")


def _int(n, out):
    if 0 <= n <= 0x7F:
        out.append(n)
    elif -32 <= n < 0:
        out.append(n & 0xFF)
    elif n >= 0:
        for code, width in ((0xCC, 1), (0xCD, 2), (0xCE, 4), (0xCF, 8)):
            if n < 1 << (8 * width):
                out.append(code)
                out += n.to_bytes(width, "big")
                return
        raise ValueError(f"int {n} beyond 64 bits")
    else:
        for code, width in ((0xD0, 1), (0xD1, 2), (0xD2, 4), (0xD3, 8)):
            if n >= -(1 << (8 * width - 1)):
                out.append(code)
                out += n.to_bytes(width, "big", signed=True)
                return
        raise ValueError(f"int {n} beyond 64 bits")


def pack(v, out, path="$"):
    if v is None:
        out.append(0xC0)
    elif v is True:
        out.append(0xC3)
    elif v is False:
        out.append(0xC2)
    elif isinstance(v, int):
        _int(v, out)
    elif isinstance(v, float):
        out.append(0xCB)
        out += struct.pack(">d", v)
    elif isinstance(v, str):
        b = v.encode("utf-8")
        _len_head(len(b), 0xA0, 31, ((0xD9, 1), (0xDA, 2), (0xDB, 4)), out)
        out += b
    elif isinstance(v, (bytes, bytearray)):
        _len_head(len(v), None, 0, ((0xC4, 1), (0xC5, 2), (0xC6, 4)), out)
        out += v
    elif isinstance(v, list):
        _len_head(len(v), 0x90, 15, ((0xDC, 2), (0xDD, 4)), out)
        for i, x in enumerate(v):
            pack(x, out, f"{path}[{i}]")
    elif isinstance(v, dict):
        _len_head(len(v), 0x80, 15, ((0xDE, 2), (0xDF, 4)), out)
        for k, x in v.items():
            pack(k, out, path)
            pack(x, out, f"{path}.{k}")
    else:
        raise TypeError(f"{type(v).__name__} at {path} has no MessagePack form here")
    return out


def to_json(v):
    def default(x):
        if isinstance(x, (bytes, bytearray)):
            return base64.b64encode(x).decode("ascii")
        raise TypeError(f"{type(x).__name__} has no JSON form")
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=default).encode("utf-8")


# ------------------------------------------------------------------------------------------------
# Protocol Buffers text format, for `protoc --encode`
# ------------------------------------------------------------------------------------------------

def _pb_quote(b):
    out = ['"']
    for c in b:
        if c in (0x22, 0x5C):
            out.append("\\" + chr(c))
        elif 0x20 <= c < 0x7F:
            out.append(chr(c))
        else:
            out.append("\\%03o" % c)
    out.append('"')
    return "".join(out)


def pb_text(msg, out):
    for k, v in msg.items():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, dict):
                out.append(f"{k} {{")
                pb_text(x, out)
                out.append("}")
            elif isinstance(x, bool):
                out.append(f"{k}: {'true' if x else 'false'}")
            elif isinstance(x, (int, float)):
                out.append(f"{k}: {x!r}")
            elif isinstance(x, str):
                out.append(f"{k}: {_pb_quote(x.encode('utf-8'))}")
            elif isinstance(x, (bytes, bytearray)):
                out.append(f"{k}: {_pb_quote(x)}")
            else:
                raise TypeError(type(x).__name__)
    return out


# ------------------------------------------------------------------------------------------------
# The workloads
# ------------------------------------------------------------------------------------------------

WORDS = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut "
         "labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris "
         "nisi aliquip ex ea commodo consequat").split()


def words(r, n):
    return " ".join(r.choice(WORDS) for _ in range(n))


def letters(r, n):
    return "".join(r.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(n))


class W:
    """One workload: value, where it comes from, and its protobuf message (a pb-text dict) if any."""

    def __init__(self, wid, title, seed, value, origin="generated", proto=None, pb=None, notes=""):
        self.id, self.title, self.seed, self.value = wid, title, seed, value
        self.origin, self.proto, self.pb, self.notes = origin, proto, pb, notes


def product(i=None):
    """The Go seed's Product (go/bench/values.go SampleProduct); i gives the i-th of a catalogue."""
    if i is None:
        return {"id": 191919191919, "name": "Men's Trail Running Shoe",
                "description": "Lightweight trail running shoe with a breathable mesh upper and a grippy rubber outsole.",
                "price": 18900, "colors": ["Black", "Forest Green", "Slate Blue"]}
    r = random.Random(1000 + i)
    return {"id": 191919191919 + i, "name": words(r, 3).title(), "description": words(r, r.randint(8, 20)).capitalize() + ".",
            "price": r.randint(500, 50000), "colors": [words(r, 1).title() for _ in range(r.randint(1, 4))]}


def tweet_ruby(r, i):
    """A status shaped like the Ruby seed's Twitter API response (ruby/bench/bench.rb)."""
    sid = 505874924095815681 + i
    return {"created_at": "Sun Aug 31 00:29:15 +0000 2014", "id": sid, "id_str": str(sid),
            "text": letters(r, r.randint(20, 140)),
            "source": '<a href="https://mobile.twitter.com" rel="nofollow">Twitter Web App</a>',
            "truncated": False, "in_reply_to_status_id": None,
            "user": {"id": r.randint(1, 2**40), "name": letters(r, 12), "screen_name": letters(r, 10),
                     "location": letters(r, 15), "description": letters(r, r.randint(0, 160)),
                     "followers_count": r.randint(0, 100000), "friends_count": r.randint(0, 5000),
                     "verified": False, "profile_image_url": f"http://pbs.twimg.com/profile_images/{r.randrange(10**9)}/x.jpeg"},
            "entities": {"hashtags": [], "urls": [], "user_mentions": [{"screen_name": letters(r, 8), "id": r.randrange(2**31)}]},
            "retweet_count": r.randint(0, 1000), "favorite_count": r.randint(0, 1000), "favorited": False,
            "retweeted": False, "lang": "en"}


def corpus_lookalike(name):
    """A generated stand-in for a nativejson-benchmark corpus file, used only when the file is absent."""
    r = random.Random(name)
    if name == "twitter":
        return {"statuses": [tweet_ruby(r, i) for i in range(100)],
                "search_metadata": {"completed_in": 0.087, "max_id": 505874924095815681, "query": "%E4%B8%80", "count": 100}}
    if name == "canada":
        rings = [[[r.uniform(-141.0, -52.0), r.uniform(41.0, 83.0)] for _ in range(r.randint(50, 2000))] for _ in range(480)]
        return {"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"name": "Canada"},
                                                           "geometry": {"type": "Polygon", "coordinates": rings}}]}
    # citm_catalog: event and performance maps keyed by numeric strings, ints and nulls
    events = {}
    for i in range(184):
        eid = str(138586341 + i * 7)
        events[eid] = {"description": None, "id": int(eid), "logo": None if r.random() < 0.7 else f"/images/UE0AAAAACEKo{i}QAAAAVDSVRN",
                       "name": words(r, 3), "subTopicIds": [337184262, 337184283][: r.randint(1, 2)],
                       "subjectCode": None, "subtitle": None, "topicIds": [324846099, 107888604][: r.randint(1, 2)]}
    perfs = []
    for i in range(243):
        perfs.append({"eventId": 138586341 + (i % 184) * 7, "id": 339887544 + i, "logo": None, "name": None,
                      "prices": [{"amount": r.choice([28500, 39000, 90250]), "audienceSubCategoryId": 337100890,
                                  "seatCategoryId": 338937295 + k} for k in range(r.randint(1, 5))],
                      "seatCategories": [{"areas": [{"areaId": 205705999 + a, "blockIds": []} for a in range(r.randint(1, 12))],
                                          "seatCategoryId": 338937295 + k} for k in range(r.randint(1, 4))],
                      "seatMapImage": None, "start": 1372701600000 + i * 86400000, "venueCode": "PLEYEL_PLEYEL"})
    return {"areaNames": {str(205705993 + i): words(r, 2) for i in range(17)}, "audienceSubCategoryNames": {"337100890": "Abonné"},
            "blockNames": {}, "events": events, "performances": perfs,
            "seatCategoryNames": {str(338937295 + i): words(r, 2) for i in range(64)}, "subTopicNames": {"337184262": "Musique amplifiée"},
            "subjectNames": {}, "topicNames": {"107888604": "Activité", "324846099": "Pop/Rock"},
            "topicSubTopics": {"107888604": [337184262, 337184283]}, "venueNames": {"PLEYEL_PLEYEL": "Salle Pleyel"}}


def workloads(data_dir):
    out = []
    # --- the C++ seed: Test1-Test4 (the seed's tuples; Test3 a bare 8 KiB bin as in c/bench and js/bench)
    bin8k = random.Random(3).randbytes(8192)
    out.append(W("test1", "Test1 [1, 2]", "C++", [1, 2], proto="seed.Test1", pb={"a": 1, "b": 2}))
    out.append(W("test2", "Test2 [-1, -2]", "C++", [-1, -2], proto="seed.Test2", pb={"a": -1, "b": -2},
                 notes="proto2 int32 -1 takes 10 bytes (sign-extended varint), as in the seed's .proto"))
    out.append(W("test3", "Test3 8 KiB bin", "C++", bin8k, proto="seed.Test3", pb={"data": bin8k}))
    out.append(W("test4", "Test4 [[1, 2], [-1, -2], 8 KiB bin]", "C++", [[1, 2], [-1, -2], bin8k], proto="seed.Test4",
                 pb={"test1": {"a": 1, "b": 2}, "test2": {"a": -1, "b": -2}, "test3": {"data": bin8k}}))
    # --- the Go seed: Product and a list of 100
    p = product()
    out.append(W("product", "Product", "Go", p, proto="mpkbench.Product", pb=dict(p)))
    plist = [product(i) for i in range(100)]
    out.append(W("products100", "100 Products", "Go", plist, proto="mpkbench.ProductList", pb={"products": [dict(x) for x in plist]}))
    # --- the JS seed: the 16-row table
    rows = [["world", 456, False] if i % 2 else ["hello", 123, True] for i in range(16)]
    out.append(W("table16", "table (16 rows)", "JS", rows, proto="mpkbench.Table",
                 pb={"rows": [{"s": s, "n": n, "b": b} for s, n, b in rows]}))
    # --- the Ruby seed's sets (generated look-alikes of the ruby-serializers data)
    r = random.Random(20261122)
    out.append(W("rb_twitter", "Twitter API response (20 statuses)", "Ruby", {"statuses": [tweet_ruby(r, i) for i in range(20)]},
                 notes="schemaless: no protobuf message"))
    img = {"id": 42, "name": "photo.jpg", "width": 640, "height": 480, "tags": ["cat", "sofa"], "created": 1700000000,
           "data": random.Random(6).randbytes(6 * 1024)}
    out.append(W("rb_image", "image record (6 KiB bin)", "Ruby", img, proto="mpkbench.Image", pb=dict(img)))
    ints = [r.randint(-2**31, 2**31) for _ in range(10000)]
    out.append(W("rb_integers", "integer array (10k, ±2^31)", "Ruby", ints, proto="mpkbench.Ints", pb={"values": ints}))
    feats = []
    for i in range(50):
        ring = [[r.random() * 360 - 180, r.random() * 180 - 90] for _ in range(20)]
        feats.append({"type": "Feature", "properties": {"name": f"f{i}", "pop": r.randrange(10**6)},
                      "geometry": {"type": "Polygon", "coordinates": [ring]}})
    geo = {"type": "FeatureCollection", "features": feats}
    out.append(W("rb_geojson", "GeoJSON (50 polygons)", "Ruby", geo, proto="mpkbench.GeoFeatureCollection",
                 pb={"type": geo["type"], "features": [
                     {"type": f["type"], "properties": f["properties"],
                      "geometry": {"type": "Polygon", "coordinates": [{"lnglat": [c for pt in ring for c in pt]}
                                                                      for ring in f["geometry"]["coordinates"]]}}
                     for f in feats]},
                 notes="protobuf: each ring's points flattened into one packed double array"))
    model = {"name": "mesh", "vertices": [r.random() * 100 - 50 for _ in range(15000)],
             "normals": [r.random() * 2 - 1 for _ in range(15000)], "faces": [r.randrange(5000) for _ in range(27000)]}
    out.append(W("rb_model3d", "3D model (30k floats, 27k ints)", "Ruby", model, proto="mpkbench.Model", pb=dict(model)))
    # --- the C seed: an integer array and a string array (c/bench's callgrind sizes)
    cints = list(range(65536))
    out.append(W("c_ints", "ints 0..65535", "C", cints, proto="mpkbench.UInts", pb={"values": cints}))
    r = random.Random(5)
    cstrs = ["".join(r.choice("abcdefghij") for _ in range(n)) for n in range(1024)]
    out.append(W("c_strings", "strings of length 0..1023", "C", cstrs, proto="mpkbench.Strings", pb={"values": cstrs}))
    # --- long strings and large binaries
    r = random.Random(7)
    s = []
    n = 0
    while n < 1 << 20:
        w = r.choice(WORDS) + " "
        s.append(w)
        n += len(w)
    one_mib = "".join(s)[: 1 << 20]
    out.append(W("long_string", "one 1 MiB string", "all", one_mib, proto="mpkbench.LongString", pb={"value": one_mib}))
    pieces = ["Grüße ", "καλημέρα ", "こんにちは ", "東京 ", "😀 ", "naïve "]
    other = []
    for _ in range(100):
        target = r.randint(100, 16384)
        t = []
        size = 0
        while size < target:
            w = r.choice(pieces)
            t.append(w)
            size += len(w.encode("utf-8"))
        other.append("".join(t))
    out.append(W("utf8_strings", "100 non-ASCII strings (100 B-16 KiB)", "all", other, proto="mpkbench.Strings", pb={"values": other}))
    blobs = [random.Random(10 + i).randbytes(65536) for i in range(16)]
    out.append(W("bins64k", "16 × 64 KiB bins", "all", blobs, proto="mpkbench.Blobs", pb={"values": blobs}))
    # --- the real corpora, or labelled look-alikes
    for name in ("twitter", "citm_catalog", "canada"):
        path = os.path.join(data_dir, name + ".json") if data_dir else None
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                value = json.load(f)
            out.append(W(name, f"{name}.json", "all", value, origin=f"file {os.path.basename(path)} ({os.path.getsize(path)} bytes as published)",
                         notes="schemaless: no protobuf message"))
        else:
            out.append(W(name, f"{name}.json (generated look-alike)", "all", corpus_lookalike(name),
                         origin="generated look-alike (the file was not found)", notes="schemaless: no protobuf message"))
    jsdir = os.path.join(data_dir, "js") if data_dir else None
    if jsdir and os.path.isdir(jsdir):
        for fn in sorted(os.listdir(jsdir)):
            if fn.endswith(".json"):
                with open(os.path.join(jsdir, fn), encoding="utf-8") as f:
                    value = json.load(f)
                out.append(W("js_" + fn[:-5].replace("-", "_"), f"js/{fn}", "JS", value, origin=f"file js/{fn}",
                             notes="schemaless here: no protobuf message"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench-workloads"))
    ap.add_argument("--data", default=os.environ.get("BENCH_DATA", os.path.join(ROOT, "..", "shared", "bench-data")))
    ap.add_argument("--no-pb", action="store_true", help="skip the .pb files (no protoc)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    protoc = None if args.no_pb else shutil.which("protoc")
    if not protoc and not args.no_pb:
        print("gen.py: protoc not found (Debian protobuf-compiler): no .pb files", file=sys.stderr)
    manifest = []
    for w in workloads(args.data):
        files = {}
        mp = bytes(pack(w.value, bytearray()))
        with open(os.path.join(args.out, w.id + ".msgpack"), "wb") as f:
            f.write(mp)
        files["msgpack"] = w.id + ".msgpack"
        with open(os.path.join(args.out, w.id + ".json"), "wb") as f:
            f.write(to_json(w.value))
        files["json"] = w.id + ".json"
        if w.proto and protoc:
            proto_file = "seed.proto" if w.proto.startswith("seed.") else "workloads.proto"
            text = "\n".join(pb_text(w.pb, [])) + "\n"
            res = subprocess.run([protoc, f"--encode={w.proto}", f"--proto_path={HERE}", proto_file],
                                 input=text.encode("utf-8"), capture_output=True)
            if res.returncode != 0:
                sys.exit(f"gen.py: protoc --encode={w.proto} failed for {w.id}: {res.stderr.decode(errors='replace')}")
            with open(os.path.join(args.out, w.id + ".pb"), "wb") as f:
                f.write(res.stdout)
            files["pb"] = w.id + ".pb"
        manifest.append({"id": w.id, "title": w.title, "seed": w.seed, "origin": w.origin, "proto": w.proto,
                         "files": files, "notes": w.notes})
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump({"workloads": manifest}, f, indent=1, ensure_ascii=False)
    print(f"bench/workloads: {len(manifest)} workloads into {os.path.relpath(args.out, ROOT)}")


if __name__ == "__main__":
    main()
