"""`make -C profiler-agent deb` builds a package that installs on this Debian machine with
`dpkg -i`, and the unit it ships starts the agent against a real memcached and a real receiving
HTTP server.

Without systemd as PID 1 (containers, this CI machine) the unit cannot be started by systemctl;
the test then runs the unit's own ExecStart line as its User=/Group= (setpriv), in the state
directory the package created, which is what systemd would do apart from its sandboxing. With
systemd running, `systemctl start` is used. The package is purged at the end; the `hitcurve`
system user stays, as Debian keeps system users.
"""

from __future__ import annotations

import configparser
import fcntl
import grp
import os
import pwd
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_harness import ROOT, Client, Memcached, Receiver, free_port, kill_leftovers  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="dpkg -i needs root (CI runs as root)")

UNIT = Path("/lib/systemd/system/hitcurve-agent.service")
CONF = Path("/etc/hitcurve/agent.conf")
KEY = Path("/etc/hitcurve/agent.key")
STATE = Path("/var/lib/hitcurve-agent")
LOCK = "/var/lock/hitcurve-agent-deb-test.lock"


def _dpkg(*args: str) -> subprocess.CompletedProcess[str]:
    """dpkg, waiting (up to 5 min) while another dpkg/apt run holds the package database lock."""
    deadline = time.monotonic() + 300
    while True:
        out = subprocess.run(["dpkg", *args], capture_output=True, text=True, timeout=300)
        if out.returncode == 0 or "lock" not in out.stderr or time.monotonic() > deadline:
            return out
        time.sleep(2)


def _installed() -> bool:
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", "hitcurve-agent"], capture_output=True, text=True
    )
    return "installed" in out.stdout and "not-installed" not in out.stdout


@pytest.fixture(scope="module")
def deb() -> Iterator[Path]:
    out = subprocess.run(
        ["make", "-s", "-C", str(ROOT / "profiler-agent"), "deb"], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    path = Path(out.stdout.strip().splitlines()[-1])
    assert path.is_file() and path.suffix == ".deb", out.stdout
    # One test run at a time on a machine: the package and its files are global.
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed():
            _dpkg("--purge", "hitcurve-agent")
        try:
            yield path
        finally:
            kill_leftovers()
            _dpkg("--purge", "hitcurve-agent")


def test_package_metadata(deb: Path) -> None:
    info = subprocess.run(["dpkg-deb", "-f", str(deb)], capture_output=True, text=True, check=True).stdout
    fields = dict(
        line.split(": ", 1) for line in info.splitlines() if ": " in line and not line.startswith(" ")
    )
    assert fields["Package"] == "hitcurve-agent"
    version = subprocess.run(
        [str(ROOT / "bin/hitcurve-agent"), "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    assert fields["Version"] == version
    for lib in ("libjansson4", "libcurl4", "libzstd1", "libxxhash0"):
        assert lib in fields["Depends"], fields["Depends"]
    files = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    for f in (
        "./usr/bin/hitcurve-agent",
        "./lib/systemd/system/hitcurve-agent.service",
        "./etc/hitcurve/agent.conf",
    ):
        assert f in files, files
    conffiles = subprocess.run(
        ["dpkg-deb", "-I", str(deb), "conffiles"], capture_output=True, text=True, check=True
    ).stdout
    assert conffiles.split() == [str(CONF)]


def test_install_start_against_memcached_and_purge(deb: Path, tmp_path: Path) -> None:
    out = _dpkg("-i", str(deb))
    assert out.returncode == 0, out.stdout + out.stderr
    # the first-install note names how to start it on this host
    if Path("/run/systemd/system").is_dir():
        assert "systemctl enable --now hitcurve-agent" in out.stdout, out.stdout
    else:
        assert "(no systemd here) start-stop-daemon --start" in out.stdout, out.stdout

    # What the package put in place.
    user = pwd.getpwnam("hitcurve")
    assert user.pw_uid < 1000 and user.pw_shell.endswith("nologin"), user
    group = grp.getgrnam("hitcurve")
    st = CONF.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, group.gr_gid, 0o640)
    st = (STATE / "spool").stat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (user.pw_uid, 0o750)
    check = subprocess.run(
        ["/usr/bin/hitcurve-agent", "run", "--config", str(CONF), "--check-config"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr  # the shipped config parses

    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(UNIT)
    svc = unit["Service"]
    assert svc["User"] == "hitcurve" and svc["StateDirectory"] == "hitcurve-agent"
    exec_start = shlex.split(svc["ExecStart"])
    if shutil.which("systemd-analyze"):  # the unit as systemd reads it (works without PID 1)
        verify = subprocess.run(["systemd-analyze", "verify", str(UNIT)], capture_output=True, text=True)
        assert verify.returncode == 0, verify.stderr
    assert exec_start[0] == "/usr/bin/hitcurve-agent" and str(CONF) in exec_start

    # Configure it as an operator would: a memcached, a backend, a key.
    mc = Memcached(mem_mb=16)
    port = free_port()
    recv = Receiver(port)
    CONF.write_text(
        CONF.read_text()
        .replace("memcached = 127.0.0.1:11211", f"memcached = {mc.addr}")
        .replace("backend-url = https://hitcurve.example.com", f"backend-url = http://127.0.0.1:{port}")
        .replace("interval = 60", "interval = 2")
        .replace("stats-interval = 5", "stats-interval = 0.5")
    )
    KEY.write_text("hca_debpackagetest\n")
    os.chown(KEY, user.pw_uid, user.pw_gid)
    KEY.chmod(0o600)

    systemd = Path("/run/systemd/system").is_dir()
    log = tmp_path / "agent.log"
    proc = None
    try:
        if systemd:
            subprocess.run(["systemctl", "daemon-reload"], check=True)
            subprocess.run(["systemctl", "start", "hitcurve-agent"], check=True)
        else:
            with open(log, "wb") as f:
                proc = subprocess.Popen(
                    [
                        "setpriv",
                        f"--reuid={svc['User']}",
                        f"--regid={svc['Group']}",
                        "--init-groups",
                        "--",
                        *exec_start,
                    ],
                    stdout=f,
                    stderr=subprocess.STDOUT,
                    cwd=STATE,
                    env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                )
        c = Client(mc.port)
        deadline = time.monotonic() + 120
        i = 0
        while not recv.stored and time.monotonic() < deadline:
            c.set(f"k{i % 500}".encode(), b"v" * 100)
            c.get(f"k{(i * 7) % 700}".encode())
            i += 1
            if i % 200 == 0:
                time.sleep(0.05)
        c.close()
        assert recv.stored, "no snapshot uploaded within 120 s:\n" + (log.read_text() if log.exists() else "")
        doc = next(iter(recv.stored.values()))["doc"]
        assert doc["server"]["address"] == mc.addr
        assert recv.auth == {"Bearer hca_debpackagetest"}
        if proc is not None:
            status = Path(f"/proc/{proc.pid}/status").read_text()
            # setpriv execs the agent in place: the process runs as the packaged user
            uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
            assert uid_line.split()[1] == str(user.pw_uid), uid_line
    finally:
        if systemd:
            subprocess.run(["systemctl", "stop", "hitcurve-agent"], check=False)
        elif proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(60) == 0, log.read_text()
        recv.stop()
        mc.stop()
    if proc is not None:
        assert "agent_start" in log.read_text()

    out = _dpkg("--purge", "hitcurve-agent")
    assert out.returncode == 0, out.stderr
    assert not Path("/usr/bin/hitcurve-agent").exists() and not STATE.exists() and not CONF.exists()
