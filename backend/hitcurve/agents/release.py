"""The agent release this Hitcurve serves (Settings.agent_release_dir, what `make -C
profiler-agent release` writes): the Debian package and the tarball, each with the SHA-256 that
SHA256SUMS gives. Only the files SHA256SUMS names are served, so nothing else of the folder (and
no path outside it) can be downloaded."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SUMS = "SHA256SUMS"
_LINE = re.compile(r"^([0-9a-f]{64})\s+\*?([A-Za-z0-9._+-]+)$")
_DEB = re.compile(r"^hitcurve-agent_(?P<version>[^_]+)_(?P<arch>[a-z0-9]+)\.deb$")
_TGZ = re.compile(r"^(?P<dir>hitcurve-agent-(?P<version>.+)-linux-(?P<arch>[a-z0-9_]+))\.tar\.gz$")


@dataclass(frozen=True)
class Artefact:
    name: str
    kind: str  # deb | tarball
    version: str
    arch: str  # amd64 for the package, x86_64 for the tarball (each system's own word)
    sha256: str
    size_bytes: int
    folder: str | None = None  # the tarball's top folder


@dataclass(frozen=True)
class Release:
    version: str | None
    files: tuple[Artefact, ...]

    def of_kind(self, kind: str) -> Artefact | None:
        return next((f for f in self.files if f.kind == kind), None)


def read_release(folder: Path) -> Release:
    """The artefacts of the release folder; none when it or its SHA256SUMS is missing."""
    try:
        lines = (folder / SUMS).read_text().splitlines()
    except OSError:
        return Release(version=None, files=())
    files = []
    for line in lines:
        m = _LINE.match(line.strip())
        if not m:
            continue
        digest, name = m.groups()
        path = folder / name
        deb, tgz = _DEB.match(name), _TGZ.match(name)
        meta = deb or tgz
        if meta is None or not path.is_file():
            continue
        files.append(
            Artefact(
                name=name,
                kind="deb" if deb else "tarball",
                version=meta["version"],
                arch=meta["arch"],
                sha256=digest,
                size_bytes=path.stat().st_size,
                folder=tgz["dir"] if tgz else None,
            )
        )
    return Release(version=files[0].version if files else None, files=tuple(files))


def served_file(folder: Path, name: str) -> Path | None:
    """The path of a file this release serves by that name (an artefact or SHA256SUMS), else None."""
    if name == SUMS:
        return folder / SUMS if (folder / SUMS).is_file() else None
    return folder / name if any(f.name == name for f in read_release(folder).files) else None
