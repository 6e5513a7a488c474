"""The first example of python/README.md's RPC section (the seed's fruit-colour server) runs as
written."""
import os
import re

from conftest import PYTHON_DIR


def test_rpc_section_first_example_runs():
    with open(os.path.join(PYTHON_DIR, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## RPC: `mpk.rpc`"):]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "mpk.rpc.Server" in block and "assert" in block
    exec(compile(block, "README.md (RPC)", "exec"), {"__name__": "readme_rpc"})
