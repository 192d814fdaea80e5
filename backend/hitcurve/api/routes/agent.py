"""Agent uploads: POST /agent/snapshots and /agent/traces (docs/agent-protocol.md).

The body is read as a stream with a cap on its size; inflating (with a cap on the decompressed
size: a gzip bomb stops there with 413), parsing and validating run in a decoder process
(hitcurve.ingest.uploads), so a costly upload never holds this process's event loop or GIL. Storing
and the hand-off to the worker are hitcurve.crud.ingest (a trace chunk) and
hitcurve.crud.ingest_group (snapshots, stored in groups: one transaction for the uploads that
arrive while others are being stored).
"""

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from hitcurve.api.deps import AgentDep
from hitcurve.core import ratelimit
from hitcurve.core.config import get_settings
from hitcurve.core.domain import TooLarge
from hitcurve.core.errors import ApiError
from hitcurve.core.principal import Principal
from hitcurve.core.tasks import PROCESS_TRACE_CHUNK, enqueue_after_commit
from hitcurve.crud import ingest, ingest_group
from hitcurve.ingest import uploads
from hitcurve.ingest.snapshot_rows import SnapshotRows
from hitcurve.models import TraceChunk
from hitcurve.schemas import agent as proto

router = APIRouter(prefix="/agent", tags=["agent"])


@dataclass(frozen=True)
class Body:
    data: bytes  # the body as received (at most Settings.max_body_bytes)
    gzipped: bool  # Content-Encoding: gzip


async def read_body(request: Request) -> Body:
    """The request body as received; its size is bounded by Settings.max_body_bytes in
    hitcurve.api.bounds, which answers 413 past it. Inflating and parsing happen in
    hitcurve.ingest.uploads, off the event loop."""
    ctype = request.headers.get("content-type", "")
    if ctype.split(";")[0].strip().lower() != "application/json":
        raise ApiError(415, "unsupported_media_type", "Content-Type must be application/json")
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("identity", "gzip"):
        raise ApiError(415, "unsupported_encoding", "Content-Encoding must be gzip or absent")
    received = bytearray()
    async for chunk in request.stream():
        received += chunk
    if not received:
        raise ApiError(400, "empty_body", "request body is empty")
    return Body(bytes(received), encoding == "gzip")


async def decode(kind: str, body: Body, agent: Principal) -> Any:
    """The upload decoded in a decoder process within its kind's budget (a snapshot
    Settings.max_snapshot_bytes, a trace chunk max_decompressed_bytes). A gzip body whose trailer
    declares more than the budget is refused here, before it waits for a decoder; otherwise what
    it declares is reserved from the key's bytes of this minute (else 429), the decoder stops
    inflating at the budget or at the declared size, and what it inflated to is settled against
    the reservation, accepted or refused alike."""
    s = get_settings()
    key = str(agent.key_id)
    # the kind's budget, and the setting that holds it (named in the refusal)
    if kind == "snapshot":
        cap, name = s.max_snapshot_bytes, "HITCURVE_MAX_SNAPSHOT_BYTES"
    else:
        cap, name = s.max_decompressed_bytes, "HITCURVE_MAX_DECOMPRESSED_BYTES"
    declared = uploads.declared_size(body.data) if body.gzipped else None
    if declared is not None and declared > cap:
        raise TooLarge(
            "decompressed_too_large",
            f"the gzip body declares {declared} bytes inflated; a {kind} may inflate to at most {cap} bytes"
            f" ({name})",
        )
    reserved = len(body.data) if not body.gzipped else cap if declared is None else declared
    ratelimit.reserve_decoded(key, reserved)
    try:
        return await uploads.decode_in_pool(
            kind,
            body.data,
            body.gzipped,
            cap,
            s.upload_decoders,
            lambda n: ratelimit.charge_decoded(key, n - reserved),
            declared,
        )
    except TooLarge as exc:
        raise TooLarge(exc.code, f"{exc.detail} ({name})") from None


def _answer(stored: ingest.Stored) -> JSONResponse:
    return JSONResponse(
        {"id": str(stored.id), "status": stored.status}, status_code=202 if stored.accepted else 200
    )


_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"model": proto.Accepted, "description": "already stored (idempotent duplicate)"},
    202: {"model": proto.Accepted, "description": "stored and handed to the worker"},
    400: {"description": "malformed JSON or gzip"},
    401: {"description": "missing, unknown or revoked agent key"},
    403: {"description": "not an agent key"},
    409: {"description": "the id belongs to another organization's upload"},
    413: {"description": "body or decompressed body too large"},
    415: {"description": "not JSON, or an encoding other than gzip"},
    422: {"description": "the JSON breaks the protocol; `detail` says where"},
}


def _body_doc(model: type) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}},
        }
    }


@router.post(
    "/snapshots",
    status_code=202,
    response_model=proto.Accepted,
    responses=_ANSWERS,
    summary="Upload one snapshot (per-class curves, measured hit ratio, loss)",
    openapi_extra=_body_doc(proto.Snapshot),
)
async def upload_snapshot(request: Request, agent: AgentDep) -> JSONResponse:
    body = await read_body(request)
    snap: SnapshotRows = await decode("snapshot", body, agent)
    # stored with the uploads this process receives meanwhile, in one transaction (group commit);
    # answered once committed. A gzip body is stored as received.
    return _answer(await ingest_group.store(agent, snap, body.data, body.data if body.gzipped else None))


@router.post(
    "/traces",
    status_code=202,
    response_model=proto.Accepted,
    responses=_ANSWERS,
    summary="Upload one chunk of sampled requests for the policy simulator",
    openapi_extra=_body_doc(proto.TraceChunk),
)
async def upload_trace(request: Request, agent: AgentDep, background: BackgroundTasks) -> JSONResponse:
    body = await read_body(request)
    chunk = await decode("trace", body, agent)
    stored = await run_in_threadpool(ingest.store_trace, agent, chunk)
    if stored.accepted:
        background.add_task(enqueue_after_commit, PROCESS_TRACE_CHUNK, TraceChunk, chunk.chunk_id)
    return _answer(stored)
