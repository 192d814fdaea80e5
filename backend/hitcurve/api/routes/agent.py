"""Agent uploads: POST /agent/snapshots and /agent/traces (docs/agent-protocol.md).

The body is read as a stream with a cap on its compressed size and, for gzip, decompressed as a
stream with a cap on its decompressed size (a gzip bomb stops at the cap with 413, it is never
inflated in memory). Parsing, storing and the hand-off to the worker are hitcurve.crud.ingest.
"""

import zlib
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from hitcurve.api.deps import AgentDep, Principal
from hitcurve.core.config import get_settings
from hitcurve.core.errors import ApiError
from hitcurve.core.tasks import PROCESS_TRACE_CHUNK, enqueue_after_commit
from hitcurve.crud import ingest
from hitcurve.models import TraceChunk
from hitcurve.schemas import agent as proto

router = APIRouter(prefix="/agent", tags=["agent"])


@dataclass(frozen=True)
class Body:
    data: bytes  # the JSON document (decompressed)
    gzipped: bytes | None  # the body as received when it was gzip-compressed


async def read_body(request: Request) -> Body:
    """The request body, decompressed when gzip, within the configured limits (else 413)."""
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
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None
    cap = s.max_decompressed_bytes
    received = 0
    out = bytearray()
    compressed = bytearray() if inflater is not None else None
    async for chunk in request.stream():
        received += len(chunk)
        if received > s.max_body_bytes:
            raise ApiError(413, "body_too_large", f"body exceeds the limit of {s.max_body_bytes} bytes")
        if inflater is None or compressed is None:
            out += chunk
            continue
        compressed += chunk
        buf = chunk
        try:
            while buf and not inflater.eof:
                out += inflater.decompress(buf, cap + 1 - len(out))
                if len(out) > cap:
                    raise ApiError(
                        413, "decompressed_too_large", f"decompressed body exceeds the limit of {cap} bytes"
                    )
                buf = inflater.unconsumed_tail
        except zlib.error as exc:
            raise ApiError(400, "bad_gzip", f"body is not valid gzip: {exc}") from None
        if inflater.eof and (buf or inflater.unused_data):
            raise ApiError(400, "bad_gzip", "data after the end of the gzip stream")
    if inflater is not None and not inflater.eof:
        raise ApiError(400, "bad_gzip", "gzip stream is truncated")
    if not out:
        raise ApiError(400, "empty_body", "request body is empty")
    return Body(bytes(out), bytes(compressed) if compressed is not None else None)


def _answer(stored: ingest.Stored) -> JSONResponse:
    return JSONResponse(
        {"id": str(stored.id), "status": stored.status}, status_code=202 if stored.accepted else 200
    )


def ingest_snapshot(agent: Principal, body: Body) -> JSONResponse:
    """Parse, validate, store and enqueue in one worker-thread hop."""
    snap = ingest.parse(body.data, proto.Snapshot)
    return _answer(ingest.store_snapshot(agent, snap, body.data, enqueue=True, gzipped=body.gzipped))


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
    return await run_in_threadpool(ingest_snapshot, agent, body)


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
    chunk = await run_in_threadpool(ingest.parse, body.data, proto.TraceChunk)
    stored = await run_in_threadpool(ingest.store_trace, agent, chunk)
    if stored.accepted:
        background.add_task(enqueue_after_commit, PROCESS_TRACE_CHUNK, TraceChunk, chunk.chunk_id)
    return _answer(stored)
