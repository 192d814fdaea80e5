"""The agent release and an install block as the API answers them (agents/ reads the release and
writes the blocks; this names the URLs and fills the answer's fields)."""

from hitcurve.agents import install
from hitcurve.agents.release import SUMS, read_release
from hitcurve.core.config import get_settings
from hitcurve.core.domain import Conflict, Invalid
from hitcurve.schemas.api import AgentArtefactOut, AgentInstallOut, AgentReleaseOut

NO_RELEASE = (
    "this Hitcurve serves no agent release: build it with `make -C profiler-agent release` (or "
    "`make build`) where the backend runs, or set HITCURVE_AGENT_RELEASE_DIR to a folder holding one"
)


def _url(name: str) -> str:
    return get_settings().public_url.rstrip("/") + f"{install.DOWNLOADS}/{name}"


def release_out() -> AgentReleaseOut:
    rel = read_release(get_settings().agent_release_dir)
    files = [
        AgentArtefactOut(
            name=f.name,
            kind="deb" if f.kind == "deb" else "tarball",
            version=f.version,
            arch=f.arch,
            sha256=f.sha256,
            size_bytes=f.size_bytes,
            url=_url(f.name),
        )
        for f in rel.files
    ]
    return AgentReleaseOut(
        available=bool(files),
        version=rel.version,
        files=files,
        sha256sums_url=_url(SUMS) if files else None,
        detail=None if files else NO_RELEASE,
    )


def install_out(variant: str, memcached: str) -> AgentInstallOut:
    """The block of one kind of host, from this Hitcurve's URL and release."""
    v = install.BY_NAME.get(variant)
    if v is None:
        raise Invalid("invalid_request", f"variant must be one of: {', '.join(install.BY_NAME)}")
    rel = read_release(get_settings().agent_release_dir)
    try:
        text = install.install_block(variant, get_settings().public_url, memcached, rel)
    except install.NoRelease:
        raise Conflict("no_agent_release", NO_RELEASE) from None
    return AgentInstallOut(
        variant=v.name,
        title=v.title,
        needs=v.needs,
        text=text,
        key_placeholder=install.KEY_PLACEHOLDER,
        variants=list(install.BY_NAME),
    )
