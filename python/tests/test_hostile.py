"""No crash, ever: input nested deeper than the C stack allows, small thread stacks, nested heads
that together declare far more than the input holds (run under a memory cap), duplicate keys.

The cases that crashed or exhausted memory before their fix run in a child process, so that a
regression fails one test instead of killing the run."""
import os
import subprocess
import sys
import textwrap
import tracemalloc

import pytest

import mpk

UNDER_ASAN = "asan" in os.environ.get("LD_PRELOAD", "")


def run_child(code, memory_cap_mb=None, timeout=120):
    """Runs `code` in a fresh interpreter; returns its stdout. With memory_cap_mb, the child's
    address space is capped at what it has after start-up plus that many MiB."""
    prologue = ""
    if memory_cap_mb is not None:
        prologue = textwrap.dedent(f"""
            import resource
            def _vm_bytes():
                with open("/proc/self/status") as f:
                    for line in f:
                        if line.startswith("VmSize:"):
                            return int(line.split()[1]) * 1024
            _cap = _vm_bytes() + {memory_cap_mb} * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (_cap, _cap))
            """)
    proc = subprocess.run([sys.executable, "-c", prologue + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"child died (status {proc.returncode}): {proc.stderr[-2000:]}"
    return proc.stdout


# ---- the C stack ---------------------------------------------------------------------------------

def test_nesting_deeper_than_the_stack_raises_stack_error():
    out = run_child("""
        import mpk
        for data, kw in [
            (b"\\x91" * 100000 + b"\\xc0", {}),
            (b"\\x81\\xa0" * 100000 + b"\\xc0", {}),
            (b"\\x81\\x91" * 100000 + b"\\xc0", {"strict_map_key": False, "use_list": False}),
            (b"\\x91" * 100000 + b"\\xc0", {"list_hook": list}),
            (b"\\x81\\xa0" * 100000 + b"\\xc0", {"object_pairs_hook": dict}),
            (b"\\xdc\\x00\\x01" * 100000 + b"\\xc0", {}),
        ]:
            try:
                mpk.unpackb(data, max_depth=10**8, **kw)
            except mpk.StackError as e:
                assert e.kind == "depth_limit", e.kind
                assert 16 <= e.offset < len(data) and data[e.offset] in (0x91, 0x81, 0xdc), e.offset
                assert "C stack" in str(e)
                print("ok")
        """)
    assert out.split() == ["ok"] * 6


@pytest.mark.parametrize("stack_kib", [64, 96])
def test_default_depth_in_a_thread_with_a_small_stack(stack_kib):
    # 1,024 levels (the default max_depth) do not fit in a 64 KiB stack: a StackError, never a crash;
    # what fits decodes (a hook at every level runs Python code there)
    out = run_child(f"""
        import threading, mpk
        threading.stack_size({stack_kib} * 1024)
        results = []
        def work():
            for data, kw in [
                (b"\\x91" * 1024 + b"\\xc0", {{}}),
                (b"\\x81\\xa0" * 1024 + b"\\xc0", {{}}),
                (b"\\x91" * 1024 + b"\\xc0", {{"list_hook": lambda v: v, "use_list": False}}),
                (b"\\x81\\xa0" * 1024 + b"\\xc0", {{"object_hook": lambda v: v}}),
                (b"\\x91" * 1024 + b"\\xc0", {{"max_depth": 10**6}}),
            ]:
                try:
                    mpk.unpackb(data, **kw)
                    results.append("value")
                except mpk.StackError as e:
                    assert e.kind == "depth_limit" and 16 <= e.offset < 2048
                    results.append("stack")
            v = None
            for _ in range(1000):
                v = [v]
            try:
                mpk.packb(v)
                results.append("packed")
            except ValueError as e:
                assert "C stack" in str(e)
                results.append("pack-stack")
            results.append(len(mpk.packb([[[1]]] * 3)))  # still usable after the errors
        t = threading.Thread(target=work)
        t.start()
        t.join()
        print(" ".join(map(str, results)))
        """)
    words = out.split()
    assert len(words) == 7 and words[-1] == "10", out
    if stack_kib == 64:
        assert words[:6] == ["stack"] * 5 + ["pack-stack"]


def test_stream_nesting_deeper_than_the_stack():
    out = run_child("""
        import mpk
        u = mpk.Unpacker(max_depth=10**8)
        u.feed(b"\\x91" * 100000 + b"\\xc0" + b"\\x07")
        try:
            u.unpack()
        except mpk.StackError as e:
            assert e.kind == "depth_limit"
        u.skip()  # the walk is not recursive: skip() passes over the value
        print(u.unpack())
        """)
    assert out.split() == ["7"]


# ---- memory amplification ------------------------------------------------------------------------

def nested_heads(head, levels, filler, total):
    data = head * levels
    return data + filler * (total - len(data))


MAP_BOMB = nested_heads(b"\xdf\x00\x01\x55\x56\xa0", 1000, b"\xa0", 180764)  # 87,382 pairs each
ARRAY_BOMB = nested_heads(b"\xdd\x00\x10\x00\x00", 1000, b"\xc0", 5000 + 2**20)  # 2^20 elements each


@pytest.mark.skipif(UNDER_ASAN, reason="ASan reserves terabytes of address space: no RLIMIT_AS cap")
@pytest.mark.parametrize("use_list", [True, False])
@pytest.mark.parametrize("bomb", ["MAP_BOMB", "ARRAY_BOMB"])
def test_nested_heads_stay_within_a_memory_cap(bomb, use_list, tmp_path):
    # each head declares as many elements as there are bytes left; all together they claim
    # 1000 times the input. Before the fix: 2.5 GB (maps) and 8 GB (tuples).
    data = globals()[bomb]
    assert len(data) < 1.1 * 2**20
    path = tmp_path / "bomb.bin"
    path.write_bytes(data)
    out = run_child(f"""
        import resource
        import mpk
        with open({str(path)!r}, "rb") as f:
            data = f.read()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            mpk.unpackb(data, use_list={use_list})
        except mpk.TruncatedError as e:
            print(e.kind, e.offset)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) // 1024)
        """, memory_cap_mb=256)
    kind, offset, grown_mb = out.split()
    assert kind == "truncated" and int(offset) == len(data)
    assert int(grown_mb) < 64  # the input is 1 MiB at most


@pytest.mark.parametrize("use_list", [True, False])
def test_nested_heads_presize_within_the_input(use_list):
    # the same inputs, smaller, measured in process: what is allocated is bounded by the input
    for head, filler in [(b"\xdf\x00\x00\x20\x00\xa0", b"\xa0"), (b"\xdd\x00\x00\x40\x00", b"\xc0")]:
        data = nested_heads(head, 200, filler, 200 * len(head) + 0x4000)
        tracemalloc.start()
        try:
            with pytest.raises(mpk.TruncatedError):
                mpk.unpackb(data, use_list=use_list)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 40 * len(data), (head, peak)


def test_a_value_the_open_containers_cannot_hold_still_decodes_alike():
    # a container whose count fits the bytes left but not with what its parents still owe is built
    # without presizing; its value, its hooks and the error that follows are the same
    seen = []
    with pytest.raises(mpk.TruncatedError) as info:
        mpk.unpackb(b"\x92\x92\x01\x02", list_hook=lambda v: seen.append(list(v)) or v)
    assert info.value.offset == 4 and seen == [[1, 2]]
    with pytest.raises(mpk.FormatError) as info:
        mpk.unpackb(b"\x92\x92\x01\xc1")
    assert info.value.offset == 3
    with pytest.raises(TypeError):  # an unhashable key in a map that is not presized
        mpk.unpackb(b"\x92\x82\x91\x01\x02\x03", strict_map_key=False)
    for use_list in (True, False):
        for hook in (None, lambda pairs: pairs):
            with pytest.raises(mpk.TruncatedError) as info:
                mpk.unpackb(b"\x93\x82\xa1a\x01\xa1b\x92\x01\x02", use_list=use_list,
                            object_pairs_hook=hook)
            assert info.value.offset == 10


def test_duplicate_keys_do_not_keep_presized_tables():
    # 15 pairs of one key per map: one entry each, so each dict must be sized for one entry
    one_map = b"\x8f" + b"\xa1k\xc0" * 15
    data = b"\xdd" + (20000).to_bytes(4, "big") + one_map * 20000
    plain = b"\xdd" + (20000).to_bytes(4, "big") + (b"\x81\xa1k\xc0") * 20000
    sizes = []
    for d in (data, plain):
        tracemalloc.start()
        try:
            value = mpk.unpackb(d)
            size, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert value == [{"k": None}] * 20000
        sizes.append(size)
    assert sizes[0] < 1.5 * sizes[1], sizes
    # one large map of duplicates
    big = b"\xde\xff\xff" + b"\xa0\xc0" * 0xffff
    tracemalloc.start()
    try:
        value = mpk.unpackb(big)
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert value == {"": None} and size < 16 * 1024, size
    # insertion order and values survive the resizing: the last value of a key wins
    data = b"\x88" + b"".join(bytes([0xa1, ord(k), v]) for k, v in zip("abababab", range(8)))
    assert list(mpk.unpackb(data).items()) == [("a", 6), ("b", 7)]
    assert mpk.unpackb(data, object_hook=lambda d: sorted(d.items())) == [("a", 6), ("b", 7)]
