"""Builds and runs the C unit tests of the agent's building blocks (test_agent_units.c)."""

from __future__ import annotations

import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
AGENT = HERE.parents[1]


def test_agent_units(tmp_path):
    exe = tmp_path / "test_agent_units"
    srcs = [
        str(AGENT / "src/agent" / f)
        for f in ("costs.c", "spool.c", "stats.c", "trace.c", "ttl.c", "util.c", "log.c", "mcconn.c",
                  "statsmodel.c", "pagemove.c", "writer.c", "lookups.c", "extstats.c", "keys.c", "watch.c",
                  "ring.c")
    ] + [str(AGENT / "src/core/keyprefix.c")] + [
        str(AGENT.parent / "tracereader/src" / f) for f in ("watchline.c", "watchline_fast.c", "hash.c")
    ]
    subprocess.run(
        [
            "gcc",
            "-std=c11",
            "-D_GNU_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O2",
            "-g",
            "-I",
            str(AGENT.parent / "tracereader/include"),
            "-I",
            str(AGENT / "src"),
            "-o",
            str(exe),
            str(HERE / "test_agent_units.c"),
            *srcs,
            "-ljansson",
            "-lxxhash",
            "-lz",
            "-lpthread",
            "-lm",
        ],
        check=True,
    )
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith(" 0 failed")
