"""Every command, flag and HITCURVE_* variable in docker-compose.yml, docker/*.Dockerfile and the
Kubernetes examples under deploy/ is checked against the real programs: the agent's own config
parser (`run ... --check-config`), uvicorn/celery/alembic/memcached/pg_isready `--help`, a real
redis-server started with the compose arguments, the backend's Settings, apt's package index
for the Dockerfiles' packages and `make -n` for their make targets. Docker itself is not needed
(nor present here); a command whose program has no checker fails the test, so a new service
must come with one.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
AGENT = ROOT / "bin" / "hitcurve-agent"
# Files the images put in place, by their path inside the container (docker/agent.Dockerfile).
IMAGE_FILES = {"/etc/hitcurve/agent.conf": ROOT / "profiler-agent/systemd/agent.conf.example"}
# What Kubernetes substitutes for $(VAR) in args (downward API values in the example).
K8S_VARS = {"POD_IP": "10.0.0.7", "POD_NAME": "memcached-7c9d-x2x4"}


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _shell_commands(script: str) -> Iterator[list[str]]:
    for part in re.split(r"&&|;|\|\|", script):
        argv = shlex.split(part)
        if argv:
            yield argv


def compose_commands() -> Iterator[tuple[str, list[str]]]:
    for name, svc in _compose()["services"].items():
        cmd = svc.get("command")
        if cmd:
            argv = shlex.split(cmd) if isinstance(cmd, str) else [str(a) for a in cmd]
            if argv[:2] == ["sh", "-c"]:
                for sub in _shell_commands(argv[2]):
                    yield f"compose {name}", sub
            else:
                yield f"compose {name}", argv
        test = (svc.get("healthcheck") or {}).get("test")
        if test:
            if test[0] == "CMD-SHELL":
                for sub in _shell_commands(test[1]):
                    yield f"compose {name} healthcheck", sub
            else:
                yield f"compose {name} healthcheck", list(test[1:])


def dockerfile_commands() -> Iterator[tuple[str, list[str]]]:
    for df in sorted((ROOT / "docker").glob("*Dockerfile")):
        for line in df.read_text().splitlines():
            m = re.match(r"^(CMD|ENTRYPOINT)\s+(\[.*\])\s*$", line)
            if m and json.loads(m.group(2)):
                yield f"{df.name} {m.group(1)}", json.loads(m.group(2))


def k8s_commands() -> Iterator[tuple[str, list[str]]]:
    for f in sorted((ROOT / "deploy").rglob("*.yaml")):
        for doc in yaml.safe_load_all(f.read_text()):
            if not doc or doc.get("kind") not in ("Deployment", "StatefulSet", "DaemonSet", "Pod"):
                continue
            spec = doc["spec"]["template"]["spec"] if doc["kind"] != "Pod" else doc["spec"]
            for c in spec["containers"]:
                argv = list(c.get("command") or []) + list(c.get("args") or [])
                argv = [re.sub(r"\$\((\w+)\)", lambda m: K8S_VARS[m.group(1)], a) for a in argv]
                if argv:
                    yield f"{f.relative_to(ROOT)} {c['name']}", argv


def systemd_commands() -> Iterator[tuple[str, list[str]]]:
    """ExecStart/ExecStartPre of the units under deploy/systemd (venv programs by their name)."""
    for f in sorted((ROOT / "deploy" / "systemd").glob("*.service")):
        for line in f.read_text().splitlines():
            m = re.match(r"^(ExecStart|ExecStartPre)=(.+)$", line)
            if m:
                argv = shlex.split(m.group(2))
                yield f"{f.relative_to(ROOT)} {m.group(1)}", [os.path.basename(argv[0]), *argv[1:]]


ALL = list(compose_commands()) + list(dockerfile_commands()) + list(k8s_commands()) + list(systemd_commands())


def _flags(args: list[str]) -> list[str]:
    return [a.split("=", 1)[0] for a in args if a.startswith("-")]


def _help(argv: list[str]) -> str:
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"{argv} failed: {out.stderr[-2000:]}"
    return out.stdout + out.stderr


def _assert_flags_in_help(where: str, args: list[str], help_text: str) -> None:
    for flag in _flags(args):
        assert re.search(rf"(^|[\s,\[]){re.escape(flag)}([\s,=\]]|$)", help_text, re.M), (
            f"{where}: {flag} is not an option of the real program"
        )


def check_agent(where: str, argv: list[str]) -> None:
    assert argv[1] == "run", f"{where}: the agent's command is `run`"
    args = [str(IMAGE_FILES.get(a, a)) for a in argv[2:]]
    out = subprocess.run(
        [str(AGENT), "run", *args, "--check-config"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0, f"{where}: the agent rejects its command line: {out.stderr}"
    # The parsed settings carry the values given (the parser did not ignore a flag).
    settings = dict(line.split(" = ", 1) for line in out.stdout.splitlines() if " = " in line)
    i = 0
    while i < len(args):
        if args[i].startswith("--") and args[i] != "--config":
            assert settings.get(args[i][2:]) == args[i + 1] or (
                float(settings[args[i][2:]]) == float(args[i + 1])
            ), (where, args[i], settings)
        i += 2 if args[i].startswith("--") else 1


def check_uvicorn(where: str, argv: list[str]) -> None:
    _assert_flags_in_help(where, argv[1:], _help([str(VENV_BIN / "uvicorn"), "--help"]))
    module, _, attr = [a for a in argv[1:] if ":" in a and not a.startswith("-")][0].partition(":")
    code = (
        f"import importlib; app = getattr(importlib.import_module({module!r}), {attr!r}); "
        "print(type(app).__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "FastAPI", (where, out.stderr[-2000:])


# The modules a compose service or image runs with `python -m`: the API's launcher and the
# compose stack's local mail sink (aiosmtpd, pinned in requirements.lock).
PYTHON_MODULES = ("hitcurve.serve", "aiosmtpd")


def check_python(where: str, argv: list[str]) -> None:
    """`python -m MODULE …`: the module's own --help accepts every flag given."""
    assert argv[1] == "-m" and argv[2] in PYTHON_MODULES, f"{where}: unexpected python command {argv}"
    _assert_flags_in_help(where, argv[3:], _help([sys.executable, "-m", argv[2], "--help"]))


def check_celery(where: str, argv: list[str]) -> None:
    app = argv[argv.index("-A") + 1]
    sub = [a for a in argv[1:] if not a.startswith("-") and a != app][0]
    text = _help([str(VENV_BIN / "celery"), "-A", app, sub, "--help"])
    _assert_flags_in_help(where, [a for a in argv[1:] if a not in ("-A", app)], text)
    lvl = [a.split("=", 1)[1] for a in argv if a.startswith("--loglevel=")]
    assert all(v.upper() in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL") for v in lvl), where


def check_alembic(where: str, argv: list[str]) -> None:
    assert argv[1:] == ["upgrade", "head"], f"{where}: unexpected alembic command {argv}"
    _help([str(VENV_BIN / "alembic"), "upgrade", "--help"])
    heads = _help([str(VENV_BIN / "alembic"), "-c", str(ROOT / "alembic.ini"), "heads"])
    assert len(re.findall(r"\(head\)", heads)) == 1, heads


def check_memcached(where: str, argv: list[str]) -> None:
    _assert_flags_in_help(where, argv[1:], _help([shutil.which("memcached") or "memcached", "--help"]))


def check_pg_isready(where: str, argv: list[str]) -> None:
    _assert_flags_in_help(where, argv[1:], _help([shutil.which("pg_isready") or "pg_isready", "--help"]))


def check_redis(where: str, argv: list[str], tmp: Path) -> None:
    """redis-server has no option list: start it with exactly these arguments (plus a private
    socket and directory) and ask it for its configuration."""
    import redis

    sock = tmp / "redis.sock"
    cmd = [
        shutil.which("redis-server") or "redis-server",
        *argv[1:],
        "--port",
        "0",
        "--unixsocket",
        str(sock),
        "--dir",
        str(tmp),
        "--save",
        "",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while not sock.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None and sock.exists(), f"{where}: redis-server refused {argv[1:]}: " + (
            proc.stdout.read() if proc.stdout and proc.poll() is not None else ""
        )
        r = redis.Redis(unix_socket_path=str(sock))
        args = argv[1:]
        for i in range(0, len(args) - 1, 2):
            name, value = args[i][2:], args[i + 1]
            assert r.config_get(name).get(name) == value, (where, name, r.config_get(name))
        r.close()
    finally:
        proc.terminate()
        proc.wait(30)


CHECKERS = {
    "hitcurve-agent": check_agent,
    "uvicorn": check_uvicorn,
    "python": check_python,
    "celery": check_celery,
    "alembic": check_alembic,
    "memcached": check_memcached,
    "pg_isready": check_pg_isready,
}


def test_files_have_commands() -> None:
    where = {w.split()[0] for w, _ in ALL}
    assert {"compose", "agent.Dockerfile"} <= where and any(w.startswith("deploy/") for w in where)


@pytest.mark.slow  # each case starts its real program: celery, alembic, the API's imports take seconds each
@pytest.mark.parametrize(("where", "argv"), ALL, ids=[f"{w}: {a[0]}" for w, a in ALL])
def test_command_flags_accepted_by_the_real_program(where: str, argv: list[str], tmp_path: Path) -> None:
    program = os.path.basename(argv[0])
    if program == "redis-server":
        check_redis(where, argv, tmp_path)
        return
    assert program in CHECKERS, f"{where}: no checker for program {program!r}: add one here"
    CHECKERS[program](where, argv)


def test_compose_agent_command_was_the_broken_one_before() -> None:
    """The checker would have caught the shipped bug (`--backend`, `--key-file`)."""
    out = subprocess.run(
        [
            str(AGENT),
            "run",
            "--memcached",
            "memcached:11211",
            "--backend",
            "http://backend:8000",
            "--key-file",
            "/k",
            "--check-config",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2 and "unknown option 'backend'" in out.stderr, out


def test_compose_environment_names_real_settings() -> None:
    from hitcurve.core.config import Settings
    from hitcurve.core.mail import SmtpSettings

    known = {f"HITCURVE_{n.upper()}" for n in Settings.model_fields}
    known |= {f.alias or f"HITCURVE_SMTP_{n.upper()}" for n, f in SmtpSettings.model_fields.items()}
    sources = "\n".join(p.read_text() for p in (ROOT / "worker/hitcurve_worker").rglob("*.py"))
    for name, svc in _compose()["services"].items():
        for var in svc.get("environment") or {}:
            if var.startswith("HITCURVE_"):
                assert (
                    var in known or f'"{var}"' in sources or f'"{var.removeprefix("HITCURVE_")}' in sources
                ), f"compose {name}: {var} is read by nothing"
    for df in (ROOT / "docker").glob("*Dockerfile"):
        for var in re.findall(r"^ENV\s+(HITCURVE_\w+)=", df.read_text(), re.M):
            assert var in known, f"{df.name}: {var} is not a backend setting"


def _dockerfile_runs() -> Iterator[tuple[str, str]]:
    for df in sorted((ROOT / "docker").glob("*Dockerfile")):
        text = df.read_text().replace("\\\n", " ")
        for m in re.finditer(r"^RUN\s+(.*)$", text, re.M):
            yield df.name, m.group(1)


@pytest.mark.slow  # reads apt's whole package cache
def test_dockerfile_apt_packages_exist_in_debian() -> None:
    """The images are Debian 12 (bookworm), like this machine: every package they install is
    in apt's index here."""
    if "bookworm" not in Path("/etc/os-release").read_text():
        pytest.skip("the package index of this machine is not Debian 12's")
    wanted: dict[str, str] = {}
    for name, run in _dockerfile_runs():
        for m in re.finditer(r"apt-get install ([^&]*)", run):
            for pkg in (a for a in m.group(1).split() if not a.startswith("-")):
                wanted[pkg] = name
    assert len(wanted) > 10, wanted
    # One apt-cache call (it reads the whole package cache each time).
    out = subprocess.run(
        ["apt-cache", "show", "--no-all-versions", *wanted], capture_output=True, text=True, timeout=120
    )
    found = set(re.findall(r"^Package: (\S+)$", out.stdout, re.M))
    for pkg, name in wanted.items():
        assert pkg in found, f"{name}: no Debian package {pkg} ({out.stderr.strip()})"


def test_dockerfile_make_targets_exist() -> None:
    for name, run in _dockerfile_runs():
        for m in re.finditer(r"make ((?:-C \S+ )?)(\w+)((?: \w+=\S+)*)", run):
            argv = ["make", "-n", *m.group(1).split(), m.group(2), *m.group(3).split()]
            out = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT)
            assert out.returncode == 0, f"{name}: {' '.join(argv)}: {out.stderr}"


@pytest.mark.parametrize(
    "unit", sorted((ROOT / "deploy" / "systemd").glob("*.service")), ids=lambda p: p.name
)
def test_systemd_units_restart_and_run_unprivileged(unit: Path) -> None:
    text = unit.read_text()
    assert re.search(r"^User=hitcurve$", text, re.M), f"{unit.name} must not run as root"
    assert re.search(r"^Restart=always$", text, re.M), f"{unit.name} must be restarted when it dies"


def test_compose_services_restart_and_images_run_unprivileged() -> None:
    services = _compose()["services"]
    for name in ("postgres", "redis", "backend", "worker", "beat", "agent", "mail"):
        assert services[name].get("restart") == "unless-stopped", name
    for df in ("backend.Dockerfile", "agent.Dockerfile"):
        users = re.findall(r"^USER\s+(\S+)", (ROOT / "docker" / df).read_text(), re.M)
        assert users and users[-1] not in ("root", "0"), f"{df} runs as root"
