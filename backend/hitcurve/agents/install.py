"""The block an operator pastes on a cache host to install and start the agent, one per kind of
host (pure: text from the backend's URL, memcached's address and the release). Every block
fetches the artefacts from this Hitcurve with curl (installed first by apt-get where it is missing,
as on a fresh Debian) and checks them against SHA256SUMS, runs as root without sudo where it
installs (a shell as root, as minimal hosts and containers have; put sudo before each command
otherwise), and ends with the agent running. The dashboard shows the block of the
kind the user picks, with the agent key put in place of KEY_PLACEHOLDER."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from hitcurve.agents.release import SUMS, Release

KEY_PLACEHOLDER = "hca_…"
DOWNLOADS = "/api/v1/agent-release"
CONF = "/etc/hitcurve/agent.conf"
KEY = "/etc/hitcurve/agent.key"
SPOOL = "/var/lib/hitcurve-agent/spool"
PIDFILE = "/run/hitcurve-agent.pid"
LOG = "/var/log/hitcurve-agent.log"
# The oldest GNU C library the tarball runs on (packaging/build-tarball.sh brings every other
# library along and writes the version its binaries ask for into the tarball's INSTALL).
GLIBC_MIN = "2.34"


@dataclass(frozen=True)
class Variant:
    name: str
    title: str
    needs: str  # what the host must have
    artefact: str  # deb | tarball


VARIANTS = (
    Variant(
        "systemd", "Debian or Ubuntu with systemd", "Debian 12 / Ubuntu 22.04 or later, root, systemd", "deb"
    ),
    Variant(
        "no-systemd",
        "Debian or Ubuntu without systemd",
        "Debian 12 / Ubuntu 22.04 or later, root; no init system needed (containers, WSL, minimal hosts)",
        "deb",
    ),
    Variant("container", "Container sidecar", "Docker beside a memcached container, and curl", "deb"),
    Variant(
        "foreground",
        "Try it in the foreground",
        f"any Linux x86_64 with the GNU C library {GLIBC_MIN} or later (Debian 12, Ubuntu 22.04 and "
        "later; the tarball brings every other library) and curl; no root",
        "tarball",
    ),
)
BY_NAME = {v.name: v for v in VARIANTS}


class NoRelease(Exception):
    """This Hitcurve has no agent release of the kind the block needs."""


# curl where it is missing (a fresh Debian or Ubuntu has none; apt-get needs root there).
CURL_INSTALL = "apt-get install -y --no-install-recommends curl ca-certificates"
CURL = f"command -v curl >/dev/null || {{ apt-get update && {CURL_INSTALL}; }}"


def _fetch(base: str, name: str, curl: str = CURL) -> list[str]:
    url = base.rstrip("/") + DOWNLOADS
    return [
        curl,
        f"curl -fsSLO {shlex.quote(f'{url}/{name}')} -O {shlex.quote(f'{url}/{SUMS}')}",
        f"sha256sum -c --ignore-missing {SUMS}",
    ]


def _config(backend_url: str, memcached: str, spool: str = SPOOL, key: str = KEY) -> list[str]:
    return [
        f"memcached = {memcached}",
        f"backend-url = {backend_url}",
        f"agent-key-file = {key}",
        f"spool-dir = {spool}",
    ]


def _install_deb(base: str, deb: str, memcached: str) -> list[str]:
    return [
        'cd "$(mktemp -d)"',
        # the package lists first: a fresh host has none, and curl and the package's libraries
        # come from them
        "apt-get update",
        *_fetch(base, deb, f"command -v curl >/dev/null || {CURL_INSTALL}"),
        f"apt-get install -y ./{deb}",
        f"cat > {CONF} <<'EOF'",
        *_config(base, memcached),
        "EOF",
        f"printf '%s\\n' '{KEY_PLACEHOLDER}' | install -m 600 -o hitcurve -g hitcurve /dev/stdin {KEY}",
        f"hitcurve-agent run --config {CONF} --check-config >/dev/null",
    ]


def install_block(variant: str, backend_url: str, memcached: str, release: Release) -> str:
    """The block for one kind of host; raises KeyError for an unknown variant and NoRelease when
    the release lacks the artefact it installs."""
    v = BY_NAME[variant]
    art = release.of_kind(v.artefact)
    if art is None:
        raise NoRelease(f"this Hitcurve serves no agent {v.artefact} ({variant} needs one)")
    head = f"# {v.title}: {v.needs}."
    if variant == "systemd":
        lines = [
            head,
            "# As root (or put sudo before each command):",
            *_install_deb(backend_url, art.name, memcached),
            "systemctl enable --now hitcurve-agent   # logs: journalctl -u hitcurve-agent -f",
        ]
    elif variant == "no-systemd":
        lines = [
            head,
            "# As root (or put sudo before each command):",
            *_install_deb(backend_url, art.name, memcached),
            f"install -m 640 -o hitcurve -g hitcurve /dev/null {LOG}",
            f"start-stop-daemon --start --background --make-pidfile --pidfile {PIDFILE} --chuid hitcurve \\",
            f"  --output {LOG} --exec /usr/bin/hitcurve-agent -- run --config {CONF}",
            f"# logs: {LOG}; stop: start-stop-daemon --stop --pidfile {PIDFILE}",
            "# at boot: the same start-stop-daemon line from your init (e.g. /etc/rc.local)",
        ]
    elif variant == "container":
        lines = [
            head,
            "# Build the image once, from the package this Hitcurve serves:",
            "mkdir -p hitcurve-agent-image && cd hitcurve-agent-image",
            *_fetch(backend_url, art.name),
            "cat > Dockerfile <<'EOF'",
            "FROM debian:bookworm-slim",
            f"COPY {art.name} /tmp/",
            "RUN apt-get update \\",
            f"    && apt-get install -y --no-install-recommends ca-certificates /tmp/{art.name} \\",
            f"    && rm -rf /var/lib/apt/lists/* /tmp/{art.name}",
            "USER hitcurve",
            f'ENTRYPOINT ["hitcurve-agent", "run", "--spool-dir", "{SPOOL}", "--agent-key-file", '
            '"/run/secrets/hitcurve-agent.key"]',
            "EOF",
            f"docker build -t hitcurve-agent:{art.version} .",
            f"printf '%s\\n' '{KEY_PLACEHOLDER}' > agent.key && chmod 644 agent.key",
            "# Beside the memcached container (named memcached here), in its network:",
            "docker run -d --name hitcurve-agent --restart unless-stopped --network container:memcached \\",
            f'  -v "$PWD/agent.key:/run/secrets/hitcurve-agent.key:ro" hitcurve-agent:{art.version} \\',
            f"  --memcached {shlex.quote(memcached)} --backend-url {shlex.quote(backend_url)}",
            "# Kubernetes: the same image as a sidecar container, see deploy/kubernetes/agent-sidecar.yaml",
        ]
    else:  # foreground
        lines = [
            head,
            "# No install: unpack and run here; Ctrl-C stops it.",
            'cd "$(mktemp -d)"',
            *_fetch(backend_url, art.name),
            f"tar -xzf {art.name}",
            f"printf '%s\\n' '{KEY_PLACEHOLDER}' > agent.key && chmod 600 agent.key",
            f"./{art.folder}/bin/hitcurve-agent run --memcached {shlex.quote(memcached)} \\",
            f"  --backend-url {shlex.quote(backend_url)} --agent-key-file agent.key --spool-dir ./spool",
        ]
    return "\n".join(lines) + "\n"
