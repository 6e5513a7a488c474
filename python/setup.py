"""Builds mpk._mpk from python/ext/*.c and the C core's c/src/*.c (compiled in, not linked).

The core's sources are found beside this file in `core/` (an sdist carries them there) or at
../c (the mpk repository). Build files go to $MPK_BUILD_BASE when it is set (the Makefile gives each
venv its own), else to a fresh temporary directory, so that a build never writes into the source
tree. MPK_PORTABLE=1 builds with every version-specific fast path off (ext/fast_paths.h).
"""
import glob
import os
import shutil
import tempfile

from setuptools import Extension, setup
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))


def find_core():
    for core in (os.path.join(HERE, "core"), os.path.normpath(os.path.join(HERE, "..", "c"))):
        if glob.glob(os.path.join(core, "src", "*.c")) and os.path.isdir(os.path.join(core, "include")):
            return core
    raise SystemExit(f"mpk: the C core's sources are neither in {HERE}/core nor in {HERE}/../c")


CORE = find_core()


def rel(paths):
    # setuptools wants paths relative to this file
    return sorted(os.path.relpath(p, HERE) for p in paths)


class sdist_with_core(sdist):
    """Puts the core's src/ and include/ into the sdist as core/, so that it builds on its own."""

    def make_release_tree(self, base_dir, files):
        # the extension's sources include ../c/src/*.c, which would be copied to base_dir/../c,
        # outside the release tree (and into the work tree): they go in as core/ instead
        files = [f for f in files if not os.path.normpath(f).startswith("..")]
        super().make_release_tree(base_dir, files)
        for sub in ("src", "include"):
            target = os.path.join(base_dir, "core", sub)
            if not os.path.isdir(target):
                shutil.copytree(os.path.join(CORE, sub), target,
                                ignore=shutil.ignore_patterns("*.o", "*.a", "*.so"))


build_base = os.environ.get("MPK_BUILD_BASE") or tempfile.mkdtemp(prefix="mpk-build-")
os.makedirs(build_base, exist_ok=True)
macros = [("MPKPY_PORTABLE", "1")] if os.environ.get("MPK_PORTABLE") == "1" else []

setup(
    cmdclass={"sdist": sdist_with_core},
    options={"build": {"build_base": build_base}, "egg_info": {"egg_base": build_base}},
    ext_modules=[
        Extension(
            "mpk._mpk",
            sources=rel(glob.glob(os.path.join(HERE, "ext", "*.c"))) + rel(glob.glob(os.path.join(CORE, "src", "*.c"))),
            include_dirs=[os.path.relpath(os.path.join(CORE, "include"), HERE), "ext"],
            depends=rel(glob.glob(os.path.join(HERE, "ext", "*.h")) + glob.glob(os.path.join(CORE, "src", "*.h"))
                        + glob.glob(os.path.join(CORE, "include", "mpk", "*.h"))),
            define_macros=macros,
            extra_compile_args=["-O3", "-std=gnu11", "-fvisibility=hidden", "-Wno-unused-parameter"],
        )
    ],
)
