"""Builds mpk._mpk from python/ext/*.c and the C core's c/src/*.c (compiled in, not linked).

`pip install ./python` builds in place, so the core is found at ../c beside this file.
"""
import glob
import os

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CORE = os.path.normpath(os.path.join(HERE, "..", "c"))


def rel(paths):
    # setuptools wants paths relative to this file
    return sorted(os.path.relpath(p, HERE) for p in paths)


core_sources = glob.glob(os.path.join(CORE, "src", "*.c"))
if not core_sources:
    raise SystemExit(f"mpk: the C core's sources are not at {CORE}/src; build from the mpk repository")

setup(
    ext_modules=[
        Extension(
            "mpk._mpk",
            sources=rel(glob.glob(os.path.join(HERE, "ext", "*.c"))) + rel(core_sources),
            include_dirs=[os.path.relpath(os.path.join(CORE, "include"), HERE), "ext"],
            depends=rel(glob.glob(os.path.join(HERE, "ext", "*.h")) + glob.glob(os.path.join(CORE, "include", "mpk", "*.h"))),
            extra_compile_args=["-O3", "-std=gnu11", "-fvisibility=hidden", "-Wno-unused-parameter"],
        )
    ]
)
