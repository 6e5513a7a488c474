"""The cyclic garbage collector around a decode: the decoder keeps the containers it is filling
out of the collector's lists (untracked until complete) and never switches the collector off, so
other threads and Python code run during a decode see it as the caller set it; the objects it
returns are tracked so that cycles made from them later are collected."""
import gc
import sys
import threading

import pytest

import mpk

# over 256 bytes, the size from which the decode pauses the collector
BIG = mpk.packb({"rows": [{"id": i, "tags": ["a", "b"], "ts": mpk.Timestamp(i, 5), "x": mpk.ExtType(5, b"e")}
                          for i in range(40)]})
ERRORS = [BIG[:-1], BIG + b"\x00", BIG.replace(b"\xa1a", b"\xa1\xff")]


def test_big_is_big():
    assert len(BIG) > 256


@pytest.mark.parametrize("enabled", [True, False])
def test_collector_state_is_kept(enabled):
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        assert mpk.unpackb(BIG)["rows"][3]["ts"] == mpk.Timestamp(3, 5)
        assert gc.isenabled() is enabled
        for bad in ERRORS:
            with pytest.raises(ValueError):
                mpk.unpackb(bad)
            assert gc.isenabled() is enabled
        unpacker = mpk.Unpacker()
        unpacker.feed(BIG)
        assert next(unpacker) == mpk.unpackb(BIG)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_collector_runs_in_hooks(collector_on):
    seen = []

    def hook(code, data):
        seen.append(gc.isenabled())
        return mpk.ExtType(code, data)

    mpk.unpackb(BIG, ext_hook=hook)
    assert seen and all(seen)
    assert gc.isenabled()


def test_hook_that_disables_the_collector_is_obeyed(collector_on):
    def hook(d):
        gc.disable()
        return d

    mpk.unpackb(BIG, object_hook=hook)
    assert not gc.isenabled()


@pytest.mark.parametrize("use_list", [True, False])
def test_decoded_containers_are_tracked(use_list):
    value = mpk.unpackb(BIG, use_list=use_list)
    rows = value["rows"]
    assert gc.is_tracked(value) and gc.is_tracked(rows) and gc.is_tracked(rows[0]["tags"])


def test_cycles_made_from_decoded_values_are_collected():
    gc.collect()
    value = mpk.unpackb(BIG)
    value["rows"].append(value["rows"])
    value["self"] = value
    del value
    assert gc.collect() >= 2


def test_lists_being_filled_look_empty_to_hooks():
    # a list is filled before it gets its size: a hook that walks every object meanwhile (as the
    # collector does) must find only complete items, and a failed decode must release the ones made
    seen = []

    def hook(d):
        # repr reads every slot of a list: an unset one would crash here. The youngest generation
        # holds the lists of this decode and little else; printing the whole heap would take
        # minutes in a full test run.
        young = [o for o in gc.get_objects(generation=0) if type(o) is list and len(o) < 10]
        seen.append(sum(len(repr(o)) > 0 for o in young))
        return d

    packed = mpk.packb([1, "two", [3, {"k": 4}, 5], {"k": 6}, 7])
    assert mpk.unpackb(packed, object_hook=hook) == [1, "two", [3, {"k": 4}, 5], {"k": 6}, 7]
    assert len(seen) == 2 and min(seen) > 0
    marker = "item of a list that fails " + "x" * 40
    before = len(gc.get_objects())
    for _ in range(100):
        with pytest.raises(ValueError):
            mpk.unpackb(mpk.packb([marker, [marker, 2]])[:-1])
    assert len(gc.get_objects()) - before < 20


def test_containers_being_filled_are_not_tracked():
    # a Python callback runs while the enclosing dict and list (or tuple) are half-built: none may be
    # found among the collector's objects (nor be walked by a collection run then: a tuple being
    # filled has unset slots); once complete, all are
    marker = "marker key of a dict being filled"
    seen = []

    def hook(code, data):
        seen.append([o for o in gc.get_objects()
                     if (type(o) is dict and marker in o) or (type(o) in (list, tuple) and len(o) > 0 and o[0] == marker)])
        return mpk.ExtType(code, data)

    def make():
        return {marker: [1, 2], "rows": [marker, {"k": [3]}, mpk.ExtType(7, b"x"), 4], "last": [5]}

    packed = mpk.packb(make())  # the only such dict and list are the ones the decode makes
    out = mpk.unpackb(packed, ext_hook=hook)
    assert out == make()
    assert seen == [[]]
    assert gc.is_tracked(out) and gc.is_tracked(out["rows"]) and gc.is_tracked(out["rows"][1])
    assert any(o is out for o in gc.get_objects())
    del out
    tup = mpk.unpackb(mpk.packb([[marker, mpk.ExtType(7, b"x")]]), use_list=False, ext_hook=hook)
    assert seen[1] == [] and gc.is_tracked(tup) and gc.is_tracked(tup[0])


def test_collector_stays_on_for_other_threads(collector_on):
    # Another thread polls gc.isenabled() while this one decodes large values that call Python code
    # (the Timestamp and ExtType classes), so that the threads switch many times within a decode.
    big = mpk.packb([{"ts": mpk.Timestamp(i, 1), "x": mpk.ExtType(5, b"e"), "row": list(range(40))}
                     for i in range(3000)])
    states, stop = [], threading.Event()

    def poll():
        while not stop.is_set():
            states.append(gc.isenabled())

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=poll)
    thread.start()
    try:
        for _ in range(3):
            assert len(mpk.unpackb(big)) == 3000
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert states and all(states)


def test_decode_allocations_make_collections_due(collector_on):
    # The containers a large decode makes count toward the collector's thresholds as anywhere else:
    # the collection they make due runs within the unpackb call (3.11: in an allocation; 3.12+: when
    # the call returns to the interpreter), not at some later allocation of the caller's.
    big = mpk.packb([[i, [i]] for i in range(20000)])
    events = []
    inside = [False]

    def callback(phase, info):
        if phase == "start":
            events.append(inside[0])

    gc.collect()
    gc.callbacks.append(callback)
    try:
        inside[0] = True
        value = mpk.unpackb(big)
        inside[0] = False
    finally:
        gc.callbacks.remove(callback)
    assert len(value) == 20000
    assert True in events


@pytest.mark.parametrize("count", [1, 15, 16, 17, 300])
def test_every_container_is_tracked_after_a_large_decode(count):
    # a large decode (over 256 bytes) keeps its completed containers on a list of its own, the
    # first 16 inside the decoder and more in an allocated block, and tracks them all at the end:
    # each one whatever the count, on both sides of the change from one to the other
    blob = b"\x00" * 300
    value = [[i, [blob if i == 0 else b"", {"k": [i]}]] for i in range(count)]
    out = mpk.unpackb(mpk.packb(value))
    assert out == value
    stack = [out]
    seen = 0
    while stack:
        c = stack.pop()
        assert gc.is_tracked(c), c
        seen += 1
        stack.extend(x for x in (c.values() if isinstance(c, dict) else c) if isinstance(x, (list, dict)))
    assert seen == 1 + 4 * count
