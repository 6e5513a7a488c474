"""A value with no MessagePack form: the error names its type and where it is (`$` is the value
given to packb, then one `[index]` or `[key]` per container level)."""

import collections

import pytest

import mpk


class Opaque:
    pass


def refused(value, **options):
    with pytest.raises(Exception) as info:
        mpk.packb(value, **options)
    return info.value


@pytest.mark.parametrize(
    "value, kind, message, path",
    [
        ({"a": [1, {2, 3}]}, TypeError, "can not serialize 'set' object at $['a'][1]", "$['a'][1]"),
        ([1, [2, [Opaque()]]], TypeError, "can not serialize 'Opaque' object at $[1][1][0]", "$[1][1][0]"),
        ({"k": 2**70}, OverflowError, "Integer value out of range at $['k']", "$['k']"),
        ({1: {None: {2.5: {b"b": {True: [set()]}}}}}, TypeError,
         "can not serialize 'set' object at $[1][None][2.5][b'b'][True][0]", "$[1][None][2.5][b'b'][True][0]"),
        ((0, (1, Opaque())), TypeError, "can not serialize 'Opaque' object at $[1][1]", "$[1][1]"),
        (collections.OrderedDict(z=[0, 1j]), TypeError, "can not serialize 'complex' object at $['z'][1]", "$['z'][1]"),
        ({(1, 2): {"x": Opaque()}}, TypeError, "can not serialize 'Opaque' object at $[<tuple key>]['x']",
         "$[<tuple key>]['x']"),
    ],
)
def test_nested_value_names_type_and_path(value, kind, message, path):
    e = refused(value)
    assert type(e) is kind
    assert str(e) == message
    assert e.path == path


def test_value_itself_keeps_msgpack_message():
    e = refused(Opaque())
    assert str(e) == "can not serialize 'Opaque' object"
    assert e.path == "$"


def test_long_key_is_cut():
    key = "k" * 100
    e = refused({key: Opaque()})
    assert e.path == "$['" + "k" * 40 + "'...]"


@pytest.mark.parametrize("value", [{Opaque(): 1}, {"a": {frozenset(): 1}}, {(1, Opaque()): 2}])
def test_refused_key(value):
    e = refused(value)
    assert type(e) is TypeError
    assert " in a map key at $" in str(e)
    assert e.path == ("$['a']" if "a" in value else "$")


def test_sort_keys_and_pairs_paths():
    e = refused({"b": 1, "a": [Opaque()]}, sort_keys=True)
    assert e.path == "$['a'][0]"
    packer = mpk.Packer(autoreset=False)
    packer.pack([1])
    with pytest.raises(TypeError) as info:
        packer.pack_map_pairs([("x", 1), ("y", {"z": Opaque()})])
    assert info.value.path == "$['y']['z']"
    assert packer.bytes() == b"\x91\x01"  # what was packed before stays, as documented


def test_streaming_packer_path():
    packer = mpk.Packer()
    with pytest.raises(TypeError) as info:
        packer.pack({"items": [1, 2, Opaque()]})
    assert str(info.value).endswith("at $['items'][2]")


def test_cycle_shows_both_ends():
    cyclic = []
    cyclic.append(cyclic)
    e = refused(cyclic)
    assert type(e) is ValueError
    assert str(e).startswith("recursion limit exceeded at $[0][0]")
    assert "...[0]" in e.path
    assert e.path.count("[0]") == 24


def test_default_hook_error_gets_a_note_not_a_new_message():
    class Refusal(Exception):
        pass

    def default(o):
        raise Refusal("no")

    with pytest.raises(Refusal) as info:
        mpk.packb({"a": [Opaque()]}, default=default)
    assert str(info.value) == "no"
    assert info.value.__notes__ == ["while packing the value at $['a'][0]"]
    assert not hasattr(info.value, "path")


def test_default_result_refused_is_located():
    # the hook's result has no form either: mpk's own error, at the original value's place
    e = refused({"a": [Opaque()]}, default=lambda o: {1j})
    assert str(e) == "can not serialize 'set' object at $['a'][0]"


def test_unicode_error_gets_a_note():
    with pytest.raises(UnicodeEncodeError) as info:
        mpk.packb({"s": ["ok", "\ud800"]})
    assert info.value.__notes__ == ["while packing the value at $['s'][1]"]
    assert info.value.reason == "surrogates not allowed"


def test_errors_do_not_leak_state_between_calls():
    refused({"a": [Opaque()]})
    refused({Opaque(): 1})
    e = refused([Opaque()])
    assert e.path == "$[0]"
    assert mpk.packb({"a": [1]}) == b"\x81\xa1a\x91\x01"


def test_readme_example(capsys):
    import os
    import re

    readme = os.path.join(os.path.dirname(__file__), "..", "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("### Packing errors say where"):]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(block, "README.md", "exec"), {"mpk": mpk})
    assert capsys.readouterr().out.splitlines() == [
        "can not serialize 'set' object at $['user']['tags'][1]",
        "$['user']['tags'][1]",
    ]
