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


@pytest.mark.slow  # the whole install script: apt, the venv and node_modules checked
def test_second_install_installs_nothing() -> None:
    out = subprocess.run(
        ["bash", str(ROOT / "scripts/install.sh")], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "dependencies are in place" in out.stderr
    assert "installing" not in out.stderr and "creating" not in out.stderr, out.stderr


def _component(tmp_path: Path, name: str, fails: bool) -> Path:
    """A C component whose build prints 40 compiler lines, and an error at the end if it fails."""
    d = tmp_path / name
    d.mkdir()
    recipe = "".join(f"\tcc -c -o build/f{i}.o src/f{i}.c\n" for i in range(40))
    if fails:
        recipe += '\t@echo "src/f40.c:3:1: error: expected declaration" >&2; exit 1\n'
    (d / "Makefile").write_text("all:\n" + recipe.replace("\tcc", "\t@echo cc"))
    return d


def _build_c(*components: Path) -> subprocess.CompletedProcess[str]:
    names = " ".join(str(c) for c in components)
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), "build-c", f"C_COMPONENTS={names}"],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # make itself, recursing into four made-up components
def test_c_builds_print_one_line_per_component_unless_one_fails(tmp_path: Path) -> None:
    ok = _build_c(_component(tmp_path, "quiet-a", False), _component(tmp_path, "quiet-b", False))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines() == [
        "built quiet-a (log: .run/build-logs/quiet-a.log)",
        "built quiet-b (log: .run/build-logs/quiet-b.log)",
    ]
    assert ok.stderr == ""
    # a failing build shows its whole log and the error, and stops the build
    bad = _build_c(_component(tmp_path, "loud-c", True), _component(tmp_path, "never-d", False))
    assert bad.returncode != 0
    assert bad.stderr.count("cc -c -o build/") == 40
    assert "src/f40.c:3:1: error: expected declaration" in bad.stderr
    assert "building loud-c failed (log: .run/build-logs/loud-c.log)" in bad.stderr
    assert "never-d" not in bad.stdout + bad.stderr
