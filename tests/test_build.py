"""The built programs exist in bin/ and answer --version; the install step is idempotent."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("program", ["hitcurve-agent", "hitcurve-sim"])
def test_program_prints_its_version(program: str) -> None:
    path = ROOT / "bin" / program
    assert path.is_file(), f"{path} is missing: run `make build` (make test does)"
    out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    assert re.search(rf"^{program} \d+\.\d+\.\d+", out.stdout), out.stdout


def test_second_install_installs_nothing() -> None:
    out = subprocess.run(["bash", str(ROOT / "scripts/install.sh")], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "dependencies are in place" in out.stderr
    assert "installing" not in out.stderr and "creating" not in out.stderr, out.stderr
