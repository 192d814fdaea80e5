"""Agent uploads: POST /agent/snapshots and /agent/traces (docs/agent-protocol.md).

The body is read as a stream with a cap on its size; inflating (with a cap on the decompressed
size: a gzip bomb stops there with 413), parsing and validating run in a decoder process
(hitcurve.uploads), so a costly upload never holds this process's event loop or GIL. Storing
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
from hitcurve.core.config import get_settings
from hitcurve.core.errors import ApiError
from hitcurve.core.tasks import PROCESS_TRACE_CHUNK, enqueue_after_commit
from hitcurve.crud import ingest, ingest_group
from hitcurve.models import TraceChunk
from hitcurve.schemas import agent as proto
from hitcurve.snapshot_rows import SnapshotRows
from hitcurve.uploads import decode_in_pool

router = APIRouter(prefix="/agent", tags=["agent"])


@dataclass(frozen=True)
class Body:
    data: bytes  # the body as received (at most Settings.max_body_bytes)
    gzipped: bool  # Content-Encoding: gzip


async def read_body(request: Request) -> Body:
    """The request body as received, within the compressed-size limit (else 413). Inflating and
    parsing happen in hitcurve.uploads, off the event loop."""
    s = get_settings()
    ctype = request.headers.get("content-type", "")
    if ctype.split(";")[0].strip().lower() != "application/json":
        raise ApiError(415, "unsupported_media_type", "Content-Type must be application/json")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > s.max_body_bytes:
        raise ApiError(413, "body_too_large", f"body is {declared} bytes; the limit is {s.max_body_bytes}")
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("identity", "gzip"):
        raise ApiError(415, "unsupported_encoding", "Content-Encoding must be gzip or absent")
    received = bytearray()
    async for chunk in request.stream():
        received += chunk
        if len(received) > s.max_body_bytes:
            raise ApiError(413, "body_too_large", f"body exceeds the limit of {s.max_body_bytes} bytes")
    if not received:
        raise ApiError(400, "empty_body", "request body is empty")
    return Body(bytes(received), encoding == "gzip")


async def decode(kind: str, body: Body) -> Any:
    s = get_settings()
    return await decode_in_pool(kind, body.data, body.gzipped, s.max_decompressed_bytes, s.upload_decoders)


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
    snap: SnapshotRows = await decode("snapshot", body)
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
    chunk = await decode("trace", body)
    stored = await run_in_threadpool(ingest.store_trace, agent, chunk)
    if stored.accepted:
        background.add_task(enqueue_after_commit, PROCESS_TRACE_CHUNK, TraceChunk, chunk.chunk_id)
    return _answer(stored)
