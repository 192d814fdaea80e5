"""Build the hitcurve_sim extension from the simulator's C sources (../src)."""
import glob
import os

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def rel(path):
    # setuptools wants source paths relative to setup.py
    return os.path.relpath(path, HERE)


CORE = ["cache.c", "heap.c", "table.c", "slab.c", "sim.c", "stackdist.c", "registry.c"]
sources = ["hitcurve_sim.c"] + [rel(os.path.join(ROOT, "src", f)) for f in CORE]
sources += sorted(rel(p) for p in glob.glob(os.path.join(ROOT, "src", "policies", "*.c")))

setup(
    ext_modules=[
        Extension(
            "hitcurve_sim",
            sources=sources,
            include_dirs=[
                rel(os.path.join(ROOT, "include")),
                rel(os.path.join(ROOT, "src")),
                rel(os.path.join(ROOT, "..", "tracereader", "include")),  # trmix.h
            ],
            extra_compile_args=["-std=c11", "-O2", "-D_GNU_SOURCE", "-Wall", "-Wextra"],
            libraries=["m", "pthread"],
        )
    ],
)
