"""The interop driver of mpk's Python package (spec/README.md, "Drivers"): JSON Lines in, one
answer line out per request, flushed. Run as spec/drivers/python (made by `make driver-python`).
Stream requests go through mpk.Unpacker: feed() chunk by chunk, iteration after each."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import typed_values  # noqa: E402

import mpk  # noqa: E402

# requests nest typed values up to the depth limit and beyond; json and canonical() recurse
sys.setrecursionlimit(50000)


# The spec's limit defaults (Unpacker keeps msgpack-python's, 100 MiB); a request's limits override.
SPEC_STREAM_LIMITS = {"depth": 1024, "str": 2**32 - 1, "bin": 2**32 - 1, "ext": 2**32 - 1,
                      "array": 2**32 - 1, "map": 2**32 - 1}


def stream_answer(request):
    """{"stream": hex, "cuts": [...]}: the bytes fed to an Unpacker in chunks split at the cuts, each
    chunk followed by iteration; then the input ends. The Unpacker has no end-of-input call: bytes
    it still holds (from tell() on) are an incomplete value, whose truncation offset is the one
    unpackb() of those bytes gives, counted from the stream's start (spec/README.md)."""
    data = bytes.fromhex(request["stream"])
    cuts = request.get("cuts", [])
    if not isinstance(cuts, list) or any(isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= len(data)
                                         for c in cuts):
        raise ValueError("cuts")
    limits = dict(SPEC_STREAM_LIMITS, **(request.get("limits") or {}))
    options = typed_values.decode_options(limits, bool(request.get("strict_utf8")))
    unpacker = mpk.Unpacker(max_buffer_size=2**32 - 1, **options)
    values = []
    at = 0
    for end in sorted(cuts) + [len(data)]:
        if end <= at:
            continue
        unpacker.feed(data[at:end])
        at = end
        try:
            for v in unpacker:
                values.append(typed_values.canonical(v))
        except mpk.DecodeError as e:
            return {"values": values, "error": e.kind, "offset": e.offset}
    rest = unpacker.tell()
    if rest < len(data):
        try:
            mpk.unpackb(data[rest:], **options)
        except mpk.DecodeError as e:
            return {"values": values, "error": e.kind, "offset": rest + e.offset}
        return {"values": values, "error": "unpackb_decoded_what_the_stream_held", "offset": rest}
    return {"values": values}


def answer(request):
    if "stream" in request:
        try:
            return stream_answer(request)
        except (ValueError, TypeError, KeyError, AttributeError):
            return {"error": "bad_request"}
    if "encode" in request:
        try:
            return {"hex": typed_values.encode(request["encode"]).hex()}
        except typed_values.ref.EncodeError as e:  # a value MessagePack cannot carry: the spec's kind
            return {"error": e.kind}
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError):
            return {"error": "bad_request"}
    if "decode" in request:
        try:
            data = bytes.fromhex(request["decode"])
        except (TypeError, ValueError):
            return {"error": "bad_request"}
        try:
            value = typed_values.decode(data, request.get("limits"), bool(request.get("strict_utf8")))
        except mpk.DecodeError as e:
            return {"error": e.kind, "offset": e.offset}
        return {"value": value}
    return {"error": "bad_request"}


def main():
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = answer(json.loads(line))
        except (ValueError, RecursionError):
            reply = {"error": "bad_request"}
        out.write(json.dumps(reply, allow_nan=False) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
