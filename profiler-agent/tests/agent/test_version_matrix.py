"""The live agent against every memcached of the version matrix (issue 15): the acceptance
table of profiler-agent/README.md, measured again on every `make test`, every row must pass.
The memcacheds are built once by scripts/memcached-versions.sh (cached under .run/memcached/);
version_matrix.py says what each row measures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import version_matrix  # noqa: E402

REQUIRED = {"1.5.16", "1.6.14", "1.6.18", "1.6.24", "1.6.38", "1.6.45"}


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_every_version_passes_the_acceptance_row(tmp_path):
    out = tmp_path / "rows.json"
    args = ["--jobs", "6", "--stall", "30", "--window", "4", "--json", str(out)]
    rc = version_matrix.main([*args, "--workdir", str(tmp_path / "w")])
    rows = json.loads(out.read_text())
    seen = {r["version"] for r in rows}
    assert seen >= REQUIRED, f"versions missing from the matrix: {sorted(REQUIRED - seen)}"
    failed = [r for r in rows if not r["passed"]]
    assert not failed, json.dumps(failed, indent=1)
    assert rc == 0
    for r in rows:
        # the stall made memcached skip lines for the agent, and the agent counted them
        assert r["watcher_skipped"] > 0 and r["skipped_counted"] > 0, r
