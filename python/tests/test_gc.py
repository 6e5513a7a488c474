"""The cyclic garbage collector around a decode: unpackb switches it off while it builds a large
value (the value holds no cycle) and must leave it exactly as the caller had it, on success and on
error, and the objects it returns must still be tracked so that cycles made from them later are
collected."""
import gc

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
