"""The README's first example runs as written."""
import os
import re

from conftest import PYTHON_DIR


def test_first_example_runs():
    with open(os.path.join(PYTHON_DIR, "README.md"), encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert "mpk.unpackb" in block and "assert" in block
    exec(compile(block, "README.md", "exec"), {})
