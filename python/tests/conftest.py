"""Shared test setup: the typed-value bridge (spec_support/, which loads spec/reference.py by its
path), the repo paths, and a replayable hypothesis."""
import os
import sys

import hypothesis

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
REPO = os.path.dirname(PYTHON_DIR)
sys.path.insert(0, os.path.join(PYTHON_DIR, "spec_support"))

# The corpus nests 1025 levels deep; json and the typed-value helpers recurse through it.
sys.setrecursionlimit(50000)

# No example database in the tree; derandomize so that `make test` is repeatable (a failure prints
# the falsifying example, which replays it).
hypothesis.settings.register_profile("mpk", database=None, derandomize=True, deadline=None,
                                     max_examples=120)
hypothesis.settings.load_profile("mpk")
