"""The interop driver of mpk's Python package (spec/README.md, "Drivers"): JSON Lines in, one
answer line out per request, flushed. Run as spec/drivers/python (made by `make driver-python`)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import typed_values  # noqa: E402

import mpk  # noqa: E402

# requests nest typed values up to the depth limit and beyond; json and canonical() recurse
sys.setrecursionlimit(50000)


def answer(request):
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
