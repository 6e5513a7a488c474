"""Packaging: the sdist carries the C core and builds a wheel away from the repository, and
building it leaves the work tree as it was. Slow (a full compile): run where MPK_TEST_PACKAGING=1
(`make test-python` sets it for the default version's suite)."""
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

from conftest import PYTHON_DIR, REPO



def tree_state():
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all", "python"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    # the venvs and their builds live in python/build (ignored, the Makefile's)
    return sorted(line for line in out.splitlines() if not line[3:].startswith("python/build/"))


@pytest.mark.skipif(os.environ.get("MPK_TEST_PACKAGING") != "1",
                    reason="a full compile: run in one suite only (MPK_TEST_PACKAGING=1)")
def test_sdist_carries_the_core_and_builds_a_wheel_elsewhere(tmp_path):
    before = tree_state()
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(dist), PYTHON_DIR],
                   check=True, capture_output=True)
    assert tree_state() == before  # nothing left in the work tree
    (sdist,) = dist.glob("mpk[-_]msgpack-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / "unpacked", filter="data")
    root = names[0].split("/")[0]
    for need in ("core/src/reader.c", "core/src/writer.c", "core/src/internal.h", "core/include/mpk/writer.h",
                 "ext/decoder.c", "ext/fast_paths.h", "ext/stack_guard.h", "src/mpk/__init__.pyi",
                 "src/mpk/py.typed", "setup.py", "pyproject.toml"):
        assert f"{root}/{need}" in names, need
    # a clean machine: the unpacked sdist alone, far from the repository's c/
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels),
                    str(tmp_path / "unpacked" / root)], check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = wheels.glob("mpk[-_]msgpack-*.whl")
    with zipfile.ZipFile(wheel) as z:
        files = z.namelist()
    assert any(f.startswith("mpk/_mpk.") and f.endswith(".so") for f in files), files
    assert {"mpk/__init__.pyi", "mpk/exceptions.pyi", "mpk/py.typed"} <= set(files)
    assert tree_state() == before


def test_requires_python_states_the_tested_versions():
    import tomllib
    with open(os.path.join(PYTHON_DIR, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["requires-python"] == ">=3.11"
    assert project["name"] == "mpk-msgpack"
    with open(os.path.join(REPO, "mk", "python.mk"), encoding="utf-8") as f:
        supported = next(line for line in f if line.startswith("PY_SUPPORTED :="))
    assert supported.split(":=")[1].split() == ["3.11", "3.12", "3.13"]


def test_the_build_is_the_one_the_suite_says():
    # python-portable must run the MPK_PORTABLE=1 build, every other suite the fast one
    from mpk import _mpk
    assert _mpk._portable == (1 if os.environ.get("MPK_EXPECT_PORTABLE") == "1" else 0)
