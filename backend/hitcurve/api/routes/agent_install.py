"""The agent as operators get it: the release this Hitcurve serves (public, like any download
page: the artefacts hold no secret) and the install block for a kind of cache host. HTTP only:
agents/ reads the release and writes the blocks, views/agents.py fills the answers."""

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from hitcurve.agents.install import BY_NAME
from hitcurve.agents.release import SUMS, served_file
from hitcurve.api.deps import ReaderDep
from hitcurve.core.config import get_settings
from hitcurve.core.domain import NotFound
from hitcurve.schemas.api import AgentInstallOut, AgentReleaseOut
from hitcurve.views import agents as views

router = APIRouter(tags=["agent install"])
# host:port (a name, IPv4 or [IPv6]) or a unix socket path, as the agent's --memcached takes it
MEMCACHED_ADDRESS = r"^(/[^\s]+|(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5})$"
Memcached = Annotated[
    str, Query(max_length=300, pattern=MEMCACHED_ADDRESS, description="host:port or a socket")
]


@router.get(
    "/agent-release", response_model=AgentReleaseOut, summary="The agent release this Hitcurve serves"
)
def agent_release() -> AgentReleaseOut:
    return views.release_out()


@router.get(
    "/agent-release/{name}",
    response_class=FileResponse,
    summary="Download one artefact of the agent release, or its SHA256SUMS",
    responses={404: {"description": "the release has no file of that name"}},
)
def agent_release_file(name: str) -> FileResponse:
    path = served_file(get_settings().agent_release_dir, name)
    if path is None:
        raise NotFound(f"agent release file {name!r}")
    return FileResponse(
        path, media_type="text/plain" if name == SUMS else "application/octet-stream", filename=name
    )


@router.get(
    "/agent-install",
    response_model=AgentInstallOut,
    summary="The block that installs and starts the agent on one kind of cache host",
    responses={409: {"description": "this Hitcurve serves no agent release (code no_agent_release)"}},
)
def agent_install(
    me: ReaderDep,
    variant: Annotated[str, Query(description=", ".join(BY_NAME))] = "systemd",
    memcached: Memcached = "127.0.0.1:11211",
) -> AgentInstallOut:
    return views.install_out(variant, memcached)
