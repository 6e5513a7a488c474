"""A Packer refuses calls made while one of its packs runs - from its `default` hook, or from another
thread while the hook has let the GIL go - instead of writing into the middle of the value being
packed, emptying or re-creating the buffer under it, or exporting memory it is about to move
(python/README.md, "Re-entrant calls")."""
import threading
import time

import pytest

import mpk


class Thing:
    pass


REENTRANT = {
    "pack": lambda p: p.pack("inner" * 1000),
    "pack_array_header": lambda p: p.pack_array_header(3),
    "pack_map_header": lambda p: p.pack_map_header(1),
    "pack_map_pairs": lambda p: p.pack_map_pairs([("k", 1)]),
    "pack_ext_type": lambda p: p.pack_ext_type(3, b"abc"),
    "reset": lambda p: p.reset(),
    "__init__": lambda p: p.__init__(),
    "getbuffer": lambda p: p.getbuffer(),
    "memoryview": lambda p: memoryview(p),
}


@pytest.mark.parametrize("autoreset", [True, False])
@pytest.mark.parametrize("call", sorted(REENTRANT))
def test_a_call_from_the_default_hook_raises_and_the_pack_goes_on(call, autoreset):
    caught = []

    def default(obj):
        try:
            REENTRANT[call](p)
        except RuntimeError as e:
            caught.append(str(e))
        return "z" * 70000  # makes the running pack grow its buffer after the refused call

    p = mpk.Packer(default=default, autoreset=autoreset)
    value = ["a" * 5000, Thing(), {"b": [1, 2]}]
    out = p.pack(value)
    if not autoreset:
        out = p.bytes()
    assert out == mpk.packb(["a" * 5000, "z" * 70000, {"b": [1, 2]}])
    assert len(caught) == 1 and "already running a call" in caught[0]


def test_the_map_pairs_path_is_guarded_too():
    caught = []

    def default(obj):
        try:
            p.pack(1)
        except RuntimeError as e:
            caught.append(e)
        return 2

    p = mpk.Packer(default=default)
    assert p.pack_map_pairs([("k", Thing())]) == mpk.packb({"k": 2})
    assert len(caught) == 1


def test_a_reentrant_error_let_out_of_the_hook_keeps_earlier_values():
    def default(obj):
        p.pack(1)  # raises RuntimeError out of the outer pack
        return None

    p = mpk.Packer(default=default, autoreset=False)
    p.pack([1, 2, 3])
    with pytest.raises(RuntimeError, match="already running a call"):
        p.pack(["x" * 100, Thing()])
    assert p.bytes() == mpk.packb([1, 2, 3])
    p.pack("next")  # the packer is usable again
    assert p.bytes() == mpk.packb([1, 2, 3]) + mpk.packb("next")


def test_bytes_from_the_hook_is_a_copy_of_what_is_written_so_far():
    seen = []

    def default(obj):
        seen.append(p.bytes())
        return 0

    p = mpk.Packer(default=default, autoreset=False)
    p.pack("before")
    p.pack([7, Thing()])
    assert seen == [mpk.packb("before") + b"\x92\x07"]
    assert p.bytes() == mpk.packb("before") + mpk.packb([7, 0])


def test_threads_sharing_a_packer_get_whole_outputs_or_an_error():
    # The hook lets the GIL go, so another thread's call arrives while a pack runs: each call must
    # return exactly its own value's bytes or raise RuntimeError, never a mix of two values.
    def default(obj):
        time.sleep(0)
        return "x" * 3000

    p = mpk.Packer(default=default)
    want = mpk.packb([["x" * 3000, "y" * 100]])
    wrong, refused = [], []

    def work():
        for _ in range(300):
            try:
                out = p.pack([[Thing(), "y" * 100]])
            except RuntimeError:
                refused.append(1)
                continue
            if out != want:
                wrong.append(out[:40])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
