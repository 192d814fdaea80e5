"""A full disk drops the spool's oldest windows, not the newest: past the disk's space each new
entry deletes the oldest ones (never the one being uploaded), counts them as dropped and logs
why. The spool lives on a 256 KiB tmpfs mounted in a mount namespace of the driver's own
(`unshare -m`, so nothing stays mounted); needs root, as `make test` and CI run."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
AGENT = HERE.parents[1]
ENTRIES = 40
ENTRY_BYTES = 16 * 1024
FS_KIB = 256


def _build(tmp_path: Path) -> Path:
    exe = tmp_path / "spool_full_disk"
    srcs = [str(AGENT / "src/agent" / f) for f in ("spool.c", "util.c", "log.c")]
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
            str(HERE / "spool_full_disk.c"),
            *srcs,
            "-lz",
            "-lpthread",
            "-lm",
        ],
        check=True,
    )
    return exe


def _can_mount(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    r = subprocess.run(
        ["unshare", "-m", "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True
    )
    return r.returncode == 0


def test_a_full_disk_drops_the_oldest_entries_first(tmp_path: Path) -> None:
    if not _can_mount(tmp_path):
        pytest.skip("needs root to mount a small tmpfs in a mount namespace")
    exe = _build(tmp_path)
    mnt = tmp_path / "disk"
    mnt.mkdir()
    script = (
        f'mount -t tmpfs -o size={FS_KIB}k tmpfs "{mnt}" && "{exe}" "{mnt}/spool" {ENTRIES} {ENTRY_BYTES}'
    )
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    puts = re.findall(r"^put (\d+) (-?\d+)$", r.stdout, flags=re.M)
    left = re.findall(r"^left \d+-snapshot-id(\d+)\.json\.gz$", r.stdout, flags=re.M)
    counts = dict(re.findall(r"(\w+)=(\S+)", r.stdout.splitlines()[-1]))
    fit = FS_KIB * 1024 // ENTRY_BYTES
    assert len(puts) == ENTRIES
    # every window was stored: the newest ones by deleting the oldest
    assert [int(rc) for _, rc in puts] == [0] * ENTRIES, r.stdout + r.stderr
    kept = [int(i) for i in left]
    assert kept[-1] == ENTRIES - 1, kept  # the newest window is there
    assert 2 <= len(kept) < fit, kept
    # the entry in flight (the oldest, id0000) was never deleted under the uploader; the rest
    # is the newest windows, in order, with no hole
    assert kept[0] == 0 and counts["inflight"].endswith("-snapshot-id0000.json.gz"), kept
    assert kept[1:] == list(range(ENTRIES - len(kept) + 1, ENTRIES)), kept
    assert int(counts["dropped"]) == ENTRIES - len(kept)
    assert int(counts["pending"]) == 0 and int(counts["sent"]) == len(kept)
    # each deletion is logged with its cause
    why = re.findall(
        r"msg=spool_disk_full_dropped_oldest file=\S+-id(\d+)\.json\.gz .*No space left", r.stderr
    )
    assert [int(i) for i in why] == list(range(1, ENTRIES - len(kept) + 1)), r.stderr[-2000:]
