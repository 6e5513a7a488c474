#!/usr/bin/env python3
"""Checks of spec/ itself: the reference codec against hand-written bytes, and the committed vectors
against the generator (a change to gen_vectors.py must come with regenerated files).

    python3 spec/test_spec.py      # ends with `spec-ref: N passed, M failed`
"""
import filecmp
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference as ref  # noqa: E402


class TestReferenceEncode(unittest.TestCase):
    def test_int_families_pick_the_shortest(self):
        cases = {0: "00", 127: "7f", 128: "cc80", 256: "cd0100", 65536: "ce00010000",
                 2**32: "cf0000000100000000", -1: "ff", -32: "e0", -33: "d0df", -129: "d1ff7f",
                 -32769: "d2ffff7fff", -2**31 - 1: "d3ffffffff7fffffff"}
        for n, h in cases.items():
            self.assertEqual(ref.encode({"int": n}).hex(), h, n)

    def test_floats_keep_their_width(self):
        self.assertEqual(ref.encode({"float32": 1.5}).hex(), "ca3fc00000")
        self.assertEqual(ref.encode({"float64": 1.5}).hex(), "cb3ff8000000000000")
        self.assertEqual(ref.encode({"float64": -0.0}).hex(), "cb8000000000000000")
        self.assertEqual(ref.encode({"float32": "NaN"}).hex(), "ca7fc00000")

    def test_timestamp_forms(self):
        self.assertEqual(ref.encode({"timestamp": [1, 0]}).hex(), "d6ff00000001")
        self.assertEqual(ref.encode({"timestamp": [1, 1]}).hex(), "d7ff0000000400000001")
        self.assertEqual(ref.encode({"timestamp": [-1, 0]}).hex(), "c70cff00000000ffffffffffffffff")

    def test_loose_number(self):
        self.assertEqual(ref.encode({"number": 5}).hex(), "05")
        self.assertEqual(ref.encode({"number": 0.5}).hex(), "cb3fe0000000000000")
        self.assertTrue(ref.same({"number": 0}, {"float32": 0.0}))
        self.assertFalse(ref.same({"int": 0}, {"float32": 0.0}))


class TestReferenceDecode(unittest.TestCase):
    def error(self, h, **kw):
        with self.assertRaises(ref.DecodeError) as cm:
            ref.decode(bytes.fromhex(h), **kw)
        return cm.exception.kind, cm.exception.offset

    def test_check_order(self):
        self.assertEqual(self.error("92c1"), ("truncated", 0))
        self.assertEqual(self.error("91c1"), ("invalid_byte", 1))
        self.assertEqual(self.error("dbffffffff"), ("truncated", 0))
        self.assertEqual(self.error("dbffffffff", limits={"str": 10}), ("length_limit", 0))
        self.assertEqual(self.error("db"), ("truncated", 0))
        self.assertEqual(self.error("9292c0c0"), ("truncated", 4))

    def test_timestamps(self):
        self.assertEqual(ref.decode(bytes.fromhex("c704ff00000005")), {"timestamp": [5, 0]})
        self.assertEqual(self.error("d4ff00"), ("invalid_timestamp", 0))
        self.assertEqual(self.error("c70cff3b9aca000000000000000000"), ("invalid_timestamp", 0))

    def test_strings(self):
        self.assertEqual(ref.decode(bytes.fromhex("a1ff")), {"string_hex": "ff"})
        self.assertEqual(self.error("a1ff", strict_utf8=True), ("invalid_utf8", 0))
        self.assertEqual(self.error("c0c0"), ("trailing_bytes", 1))

    def test_depth(self):
        self.assertEqual(self.error("91" * 1025 + "c0"), ("depth_limit", 1024))
        ref.decode(bytes.fromhex("91" * 1024 + "c0"))


class TestReferenceStream(unittest.TestCase):
    """decode_stream: the README's stream statements, and how they differ from one-shot."""

    def stream(self, h, **kw):
        return ref.decode_stream(bytes.fromhex(h), **kw)

    def test_the_readmes_statements(self):
        self.assertEqual(self.stream("92c1"), ([], ("invalid_byte", 1)))
        self.assertEqual(self.stream("9201"), ([], ("truncated", 0)))
        self.assertEqual(self.stream("c9ffffffffff"), ([], ("invalid_timestamp", 0)))
        self.assertEqual(self.stream("c705ff"), ([], ("invalid_timestamp", 0)))
        self.assertEqual(self.stream("dd05000000c1"), ([], ("invalid_byte", 5)))

    def test_values_before_an_error_are_delivered_and_offsets_count_from_the_start(self):
        self.assertEqual(self.stream("c001c1"), ([{"nil": None}, {"int": 1}], ("invalid_byte", 2)))
        self.assertEqual(self.stream("c09292c0c0"), ([{"nil": None}], ("truncated", 5)))
        self.assertEqual(self.stream("07dbffffffff", limits={"str": 10}), ([{"int": 7}], ("length_limit", 1)))
        self.assertEqual(self.stream("c0d4ff00"), ([{"nil": None}], ("invalid_timestamp", 1)))

    def test_clean_ends(self):
        self.assertEqual(self.stream(""), ([], None))
        self.assertEqual(self.stream("c0a3616263"), ([{"nil": None}, {"string": "abc"}], None))

    def test_content_checks_wait_for_the_payload(self):
        self.assertEqual(self.stream("a2ff", strict_utf8=True), ([], ("truncated", 0)))
        self.assertEqual(self.stream("a1ff", strict_utf8=True), ([], ("invalid_utf8", 0)))
        self.assertEqual(self.stream("d7ffffffffff"), ([], ("truncated", 0)))
        self.assertEqual(self.stream("d4ff00"), ([], ("invalid_timestamp", 0)))

    def test_depth_and_limits_before_any_payload(self):
        self.assertEqual(self.stream("91" * 1025), ([], ("depth_limit", 1024)))
        self.assertEqual(self.stream("c4ff", limits={"bin": 4}), ([], ("length_limit", 0)))
        self.assertEqual(self.stream("c4ff"), ([], ("truncated", 0)))


    def test_valid_encodings_concatenated_and_cut(self):
        values = [{"typed_array": [{"int": 1}, {"string": "ab"}, {"typed_map": [[{"nil": None}, {"binary": "00ff"}]]}]},
                  {"timestamp": [-1, 5]}, {"float32": 1.5}, {"ext": [3, "0102"]}, {"int": 2**64 - 1}]
        data = b"".join(ref.encode(v) for v in values)
        got, error = ref.decode_stream(data)
        self.assertIsNone(error)
        self.assertEqual(len(got), len(values))
        for v, g in zip(values, got):
            self.assertTrue(ref.same(v, g), (v, g))
        # every cut inside a value: the values before it, then truncated where one-shot says
        start = 0
        for i, v in enumerate(values):
            one = ref.encode(v)
            for n in range(1, len(one)):
                got, error = ref.decode_stream(data[:start + n])
                with self.assertRaises(ref.DecodeError) as cm:
                    ref.decode(one[:n])
                self.assertEqual(len(got), i)
                self.assertEqual(error, ("truncated", start + cm.exception.offset))
            start += len(one)


class TestRunnerStreamCheck(unittest.TestCase):
    """The runner's comparison of a stream answer with the reference's must catch every difference."""

    def test_stream_agrees(self):
        import importlib.machinery
        import importlib.util
        loader = importlib.machinery.SourceFileLoader("interop", os.path.join(HERE, "interop"))
        spec = importlib.util.spec_from_loader("interop", loader)
        interop = importlib.util.module_from_spec(spec)
        loader.exec_module(interop)
        want = interop.reference_stream_answer({"stream": "c001c1", "cuts": [1]})
        self.assertEqual(want, {"values": [{"nil": None}, {"int": 1}], "error": "invalid_byte", "offset": 2})
        self.assertTrue(interop.stream_agrees(want, {"values": [{"nil": None}, {"int": 1}],
                                                     "error": "invalid_byte", "offset": 2}))
        for wrong in ({"values": [{"nil": None}], "error": "invalid_byte", "offset": 2},
                      {"values": [{"nil": None}, {"int": 2}], "error": "invalid_byte", "offset": 2},
                      {"values": [{"nil": None}, {"int": 1}], "error": "truncated", "offset": 2},
                      {"values": [{"nil": None}, {"int": 1}], "error": "invalid_byte", "offset": 1},
                      {"values": [{"nil": None}, {"int": 1}]}, {"error": "bad_request"}, None):
            self.assertFalse(interop.stream_agrees(want, wrong), wrong)
        req = {"stream": "8ea1de", "strict_utf8": True}
        self.assertEqual(interop.reference_stream_answer(req), {"values": [], "error": "invalid_utf8", "offset": 1})


class TestVectors(unittest.TestCase):
    def test_committed_vectors_match_the_generator(self):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, MPK_VECTORS_OUT=tmp)
            subprocess.run([sys.executable, os.path.join(HERE, "gen_vectors.py")], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            committed = sorted(f for f in os.listdir(os.path.join(HERE, "vectors")) if f.endswith(".json"))
            fresh = sorted(os.listdir(tmp))
            self.assertEqual(committed, fresh)
            _, mismatch, errors = filecmp.cmpfiles(os.path.join(HERE, "vectors"), tmp, fresh, shallow=False)
            self.assertEqual(mismatch + errors, [], "run python3 spec/gen_vectors.py and commit")

    def test_more_than_1000_cases_and_every_kind(self):
        import json
        kinds, total = set(), 0
        for f in os.listdir(os.path.join(HERE, "vectors")):
            with open(os.path.join(HERE, "vectors", f), encoding="utf-8") as fh:
                cases = json.load(fh)
            total += len(cases)
            kinds |= {c["error"] for c in cases if "error" in c}
        self.assertGreater(total, 1000)
        self.assertEqual(kinds, set(ref.KINDS))

    def test_encode_error_cases_name_the_two_encode_kinds(self):
        import json
        with open(os.path.join(HERE, "vectors", "encode_errors.json"), encoding="utf-8") as fh:
            kinds = {c["encode_error"] for c in json.load(fh)}
        self.assertEqual(kinds, {"invalid_timestamp", "bad_request"})


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=1).result
    failed = len(result.failures) + len(result.errors)
    print(f"spec-ref: {result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
