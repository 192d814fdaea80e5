"""The agent's install blocks run as written and end with an agent uploading: the API serves the
release `make -C profiler-agent release` built (only the files SHA256SUMS names), and the block of
each kind of host comes from GET /agent-install with the agent key put in for its placeholder.

Run here, as root without sudo, against a real memcached and this backend served by uvicorn on
loopback: the foreground block (unpack the tarball, run in place), and the Debian block without
systemd (apt-get installs the package, start-stop-daemon starts the agent as `hitcurve`), that one
in a mount namespace of its own whose /usr, /etc, /var, /opt, /run and /root are overlays on
scratch folders, so the host's packages, users and files are what they were once it ends. The
systemd block is the same install plus `systemctl enable --now` (the unit itself is tested by
profiler-agent/tests/agent/test_deb_package.py); the container block needs Docker, which this
machine does not have.

The tarball runs the agent on a host that has nothing but the C library: a chroot holding only
the dynamic loader, libc, libm, libresolv and a shell, the tarball unpacked into it, the agent
uploading from there (its binary alone does not start there: the tarball's libraries are what
carry it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from conftest import Account
from hitcurve.agents.install import GLIBC_MIN
from hitcurve.core.config import get_settings
from hitcurve_testing.waiting import DEADLINE_S

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "profiler-agent" / "tests" / "agent"))
from agent_harness import Memcached  # noqa: E402

pytestmark = pytest.mark.live
RELEASE = ROOT / "profiler-agent" / "build" / "release"
# The first upload comes at the end of the agent's first window (60 s by default, as installed).
UPLOAD_WAIT_S = 60 + DEADLINE_S


@pytest.fixture(scope="module")
def release() -> Path:
    """The release `make build` made (built here when pytest runs without it)."""
    if (RELEASE / "SHA256SUMS").is_file():
        return RELEASE
    out = subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT / "profiler-agent"), "release"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return RELEASE


@pytest.fixture
def served(app: Any, release: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """This backend on a free loopback port, as the URL the blocks fetch from and upload to."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    monkeypatch.setattr(get_settings(), "public_url", url)
    monkeypatch.setattr(get_settings(), "agent_release_dir", release)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    yield url
    server.should_exit = True
    thread.join(30)


def _block(account: Account, variant: str, memcached: str) -> str:
    key = account.post("/api/v1/agent-keys", json={"name": f"install-{variant}"})
    assert key.status_code == 201, key.text
    r = account.get("/api/v1/agent-install", params={"variant": variant, "memcached": memcached})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["key_placeholder"] in body["text"]
    return str(body["text"]).replace(body["key_placeholder"], key.json()["key"])


def _servers(account: Account) -> list[str]:
    return [s["address"] for s in account.get("/api/v1/servers").json()]


def _wait_for_server(account: Account, address: str, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + UPLOAD_WAIT_S
    while address not in _servers(account):
        assert proc is None or proc.poll() is None, f"the block ended: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no upload from {address} in {UPLOAD_WAIT_S} s"
        time.sleep(1)


def test_the_release_is_served_and_nothing_else(account: Account, served: str, release: Path) -> None:
    rel = account.get("/api/v1/agent-release").json()
    assert rel["available"] is True
    assert sorted(f["kind"] for f in rel["files"]) == ["deb", "tarball"]
    sums = subprocess.run(["curl", "-fsS", rel["sha256sums_url"]], capture_output=True, text=True, check=True)
    assert sums.stdout == (release / "SHA256SUMS").read_text()
    for f in rel["files"]:
        got = subprocess.run(["curl", "-fsS", f["url"]], capture_output=True, check=True).stdout
        assert len(got) == f["size_bytes"] == (release / f["name"]).stat().st_size
    for bad in ("..%2F..%2FMakefile", "README.md", "%2Fetc%2Fpasswd"):
        assert account.get(f"/api/v1/agent-release/{bad}").status_code == 404
    r = account.get("/api/v1/agent-install", params={"variant": "windows"})
    assert r.status_code == 422 and "systemd, no-systemd, container, foreground" in r.text
    r = account.get("/api/v1/agent-install", params={"memcached": "not an address"})
    assert r.status_code == 422


def test_every_block_gets_curl_and_the_package_lists_a_fresh_debian_lacks(
    account: Account, served: str
) -> None:
    """A fresh Debian 12 (a minimal install, the debian:12 image) has no curl and no package lists:
    each block installs curl before its first download where it is missing, and the Debian blocks
    read the package lists before apt-get installs anything (the package's libraries come from
    them; `debootstrap --variant=minbase bookworm` makes such a root). Here: their order."""
    for variant in ("systemd", "no-systemd", "container", "foreground"):
        lines = _block(account, variant, "127.0.0.1:11211").splitlines()
        first_curl = next(i for i, x in enumerate(lines) if x.startswith("curl "))
        gets_curl = [i for i, x in enumerate(lines) if x.startswith("command -v curl >/dev/null ||")]
        assert gets_curl and gets_curl[0] < first_curl, (variant, lines)
        if variant in ("systemd", "no-systemd"):
            installs = [i for i, x in enumerate(lines) if "apt-get install" in x]
            assert lines.index("apt-get update") < min(installs), (variant, lines)


@pytest.mark.slow
def test_the_foreground_block_runs_as_written(account: Account, served: str, tmp_path: Path) -> None:
    mc = Memcached(mem_mb=16)
    proc = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", _block(account, "foreground", mc.addr)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for_server(account, mc.addr, proc)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
        mc.stop()


NAMESPACE = """
set -euo pipefail
scratch="$1"
for d in /usr /etc /var /opt /run /root; do
    mkdir -p "$scratch$d/up" "$scratch$d/work"
    mount -t overlay overlay -o "lowerdir=$d,upperdir=$scratch$d/up,workdir=$scratch$d/work" "$d"
done
bash -euo pipefail "$scratch/block.sh" > "$scratch/block.log" 2>&1
id -u hitcurve > "$scratch/uid"
cat /run/hitcurve-agent.pid > "$scratch/pid"
"""


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="installs a package and mounts overlays: needs root")
@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")
def test_the_debian_block_without_systemd_runs_as_written(
    account: Account, served: str, tmp_path: Path
) -> None:
    mc = Memcached(mem_mb=16)
    (tmp_path / "block.sh").write_text(_block(account, "no-systemd", mc.addr))
    try:
        out = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "bash", "-c", NAMESPACE, "ns", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        log = (tmp_path / "block.log").read_text() if (tmp_path / "block.log").exists() else ""
        assert out.returncode == 0, out.stdout + out.stderr + log
        pid = int((tmp_path / "pid").read_text())
        # start-stop-daemon --background writes the pid file from its fork, which then changes
        # user and execs the agent: until the exec, /proc/<pid> is still root's start-stop-daemon
        # (whose own command line names the agent too: its executable tells them apart)
        deadline = time.monotonic() + 30
        while not os.readlink(f"/proc/{pid}/exe").endswith("/hitcurve-agent"):
            assert time.monotonic() < deadline, "start-stop-daemon's child never became the agent"
            time.sleep(0.05)
        # the agent runs as the package's unprivileged user, not as root
        # (from its status: /proc/<pid> itself is root's once a process has changed its user)
        uids = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("Uid:"))
        assert int(uids.split()[1]) == int((tmp_path / "uid").read_text()) != 0
        _wait_for_server(account, mc.addr)
        # what the block wrote stayed in the namespace's overlays, not on the host
        assert not Path("/run/hitcurve-agent.pid").exists()
        assert (tmp_path / "run" / "up" / "hitcurve-agent.pid").exists()
    finally:
        if (tmp_path / "pid").exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int((tmp_path / "pid").read_text()), signal.SIGTERM)
        mc.stop()


# A host with the C library alone: the loader, libc, libm, libresolv; the tarball's bin/hitcurve-agent
# is a shell script that needs /bin/sh, readlink and dirname, which need libc only.
C_LIBRARY = (
    "/lib64/ld-linux-x86-64.so.2",
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/x86_64-linux-gnu/libm.so.6",
    "/lib/x86_64-linux-gnu/libresolv.so.2",
)
SHELL_TOOLS = {"/bin/sh": "/bin/dash", "/bin/readlink": "/bin/readlink", "/bin/dirname": "/bin/dirname"}


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
@pytest.mark.skipif(not Path(C_LIBRARY[0]).exists(), reason="an x86_64 glibc host")
def test_the_tarball_runs_the_agent_with_nothing_but_the_c_library(
    account: Account, served: str, tmp_path: Path
) -> None:
    import hashlib

    rel = account.get("/api/v1/agent-release").json()
    tgz = next(f for f in rel["files"] if f["kind"] == "tarball")
    data = subprocess.run(["curl", "-fsS", tgz["url"]], capture_output=True, check=True).stdout
    assert hashlib.sha256(data).hexdigest() == tgz["sha256"]
    root = tmp_path / "root"
    for lib in C_LIBRARY:
        (root / lib.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(lib, root / lib.lstrip("/"))  # follows the symlink: the file itself
    for inside, outside in SHELL_TOOLS.items():
        (root / "bin").mkdir(exist_ok=True)
        shutil.copy(outside, root / inside.lstrip("/"))
    (root / "tmp").mkdir()
    (root / "agent.tar.gz").write_bytes(data)
    subprocess.run(["tar", "-xzf", "agent.tar.gz"], cwd=root, check=True)
    folder = "/" + tgz["name"].removesuffix(".tar.gz")  # the tarball's one top folder
    assert f"Needs the GNU C library {GLIBC_MIN} or later" in (root / folder[1:] / "INSTALL").read_text()

    # the binary on its own: its libraries are not on this host
    bare = subprocess.run(
        ["chroot", str(root), f"{folder}/libexec/hitcurve-agent", "--version"], capture_output=True, text=True
    )
    assert bare.returncode != 0 and "libjansson.so.4" in bare.stderr, bare
    # as the tarball starts it, with the libraries it brought
    version = subprocess.run(
        ["chroot", str(root), f"{folder}/bin/hitcurve-agent", "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0 and tgz["version"] in version.stdout, version

    key = account.post("/api/v1/agent-keys", json={"name": "chroot"})
    assert key.status_code == 201, key.text
    (root / "agent.key").write_text(key.json()["key"] + "\n")
    mc = Memcached(mem_mb=16)
    proc = subprocess.Popen(
        [
            "chroot",
            str(root),
            f"{folder}/bin/hitcurve-agent",
            "run",
            "--memcached",
            mc.addr,
            "--backend-url",
            served,
            "--agent-key-file",
            "/agent.key",
            "--spool-dir",
            "/spool",
            "--interval",
            "5",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_for_server(account, mc.addr, proc)
    finally:
        proc.terminate()
        proc.wait(30)
        mc.stop()
