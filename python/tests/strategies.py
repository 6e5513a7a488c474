"""Hypothesis strategies for values both mpk and msgpack-python can pack."""
from hypothesis import strategies as st

ints = st.one_of(
    st.integers(-33, 130),
    st.sampled_from([255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1,
                     -128, -129, -32768, -32769, -2**31, -2**31 - 1, -2**63]),
    st.integers(-2**63, 2**64 - 1),
)
floats = st.floats(allow_nan=True, allow_infinity=True)
texts = st.one_of(st.text(max_size=40), st.text(alphabet="abcxyz_", max_size=300))
binaries = st.binary(max_size=300)
scalars = st.one_of(st.none(), st.booleans(), ints, floats, texts, binaries)
keys = st.one_of(texts, binaries)


def containers(children):
    return st.one_of(
        st.lists(children, max_size=20),
        st.dictionaries(keys, children, max_size=20),
        st.tuples(children, children),
    )


values = st.recursive(scalars, containers, max_leaves=60)
