"""Decoding agent uploads, away from the API's event loop: inflate the gzip body within the
decompressed-size cap, parse and validate it against the protocol (hitcurve.schemas.agent), and
for trace chunks pack the records into their storage format (tracecodec).

A snapshot comes back as its column values (hitcurve.snapshot_rows), a trace chunk as its packed
records: never the validated model, whose pickle costs more than building the columns.

This is the CPU-heavy part of an upload (up to ~1 s for 200k trace records), and Pydantic holds
the GIL while it validates: run in a thread of the API process it would stall every other
request of that process. `decode_in_pool` runs it in a separate process instead (one per API
process, Settings.upload_decoders), so the API keeps answering while uploads queue for it.
Validation is linear in the body's size and stops at the first error of each list (fail_fast in
the protocol models), so refusing a flood of invalid records costs no more than reading it.

The functions here touch no database and no settings: everything they need comes as arguments,
so they behave the same in the pool's processes as in the caller's.
"""

import asyncio
import json
import multiprocessing
import os
import select
import threading
import uuid
import zlib
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from hitcurve import tracecodec
from hitcurve.core.errors import ApiError, clean_errors
from hitcurve.schemas import agent as proto
from hitcurve.snapshot_rows import snapshot_rows


@dataclass(frozen=True)
class TraceUpload:
    """A validated trace chunk with its records already in storage form (a few KiB to pickle
    back from the pool, instead of 1.4 million Python objects)."""

    chunk_id: uuid.UUID
    address: str
    instance_id: str
    sample_rate: float
    seq: int
    start: datetime
    end: datetime
    record_count: int
    data: bytes


def inflate(body: bytes, cap: int) -> bytes:
    """A gzip body decompressed as a stream, stopping at cap bytes (a bomb is never inflated)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    buf = body
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
    if not inflater.eof:
        raise ApiError(400, "bad_gzip", "gzip stream is truncated")
    if not out:
        raise ApiError(400, "empty_body", "request body is empty")
    return bytes(out)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed: numbers must be finite")


def parse(raw: bytes, model: type[proto.Snapshot] | type[proto.TraceChunk]) -> Any:
    """The validated model. Malformed JSON (including bytes that are not UTF-8): 400; schema
    violations: 422 with the first errors located. The body is parsed once, by Pydantic (in Rust)."""
    if b"\\u0000" in raw:
        raise ApiError(422, "invalid_payload", "strings must not contain NUL (\\u0000)")
    if model is proto.Snapshot:
        # Cheap guard before parsing: every class carries one "points" key. A body with far more
        # curves than a snapshot may have (a few KiB of gzip can inflate to thousands of classes)
        # is refused before it costs seconds of parsing; up to 4x the limit gets the exact check.
        curves = raw.count(b'"points"')
        if curves > 4 * proto.MAX_CLASSES:
            raise ApiError(
                422,
                "invalid_payload",
                f"classes: at most {proto.MAX_CLASSES} classes per snapshot; this body has {curves} curves",
            )
    if b"NaN" in raw or b"Infinity" in raw:
        # JSON has no NaN or Infinity, though lenient parsers accept them: find out exactly
        # (only bodies that mention these words pay for this second parse).
        try:
            json.loads(raw, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            raise ApiError(400, "malformed_json", f"malformed JSON: {exc}") from None
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        if errors and errors[0]["type"] == "json_invalid":
            raise ApiError(400, "malformed_json", f"malformed JSON: {errors[0]['msg']}") from None
        if errors and errors[0]["type"] == "model_type" and not errors[0]["loc"]:
            raise ApiError(422, "invalid_payload", "the body must be a JSON object") from None
        raise ApiError(422, "invalid_payload", clean_errors(errors)) from None


def decode(kind: str, body: bytes, gzipped: bool, cap: int) -> Any:
    """Body -> a validated snapshot's rows (SnapshotRows: the store statement's column values,
    not the model, so what the pool sends back is small) or TraceUpload. Raises ApiError."""
    raw = inflate(body, cap) if gzipped else body
    if not raw:
        raise ApiError(400, "empty_body", "request body is empty")
    if kind == "snapshot":
        return snapshot_rows(parse(raw, proto.Snapshot))
    chunk: proto.TraceChunk = parse(raw, proto.TraceChunk)
    r = chunk.records
    return TraceUpload(
        chunk_id=chunk.chunk_id,
        address=chunk.server.address,
        instance_id=chunk.server.instance_id,
        sample_rate=chunk.sample_rate,
        seq=chunk.seq,
        start=chunk.start,
        end=chunk.end,
        record_count=len(r.ts_us),
        data=tracecodec.encode_records(r.ts_us, r.key, r.op, r.size, r.clsid, r.ttl, r.cost_us),
    )


def _decode_answer(kind: str, body: bytes, gzipped: bool, cap: int) -> tuple[str, Any]:
    """decode() for the pool: an ApiError comes back as plain values (it is not picklable)."""
    try:
        return "ok", decode(kind, body, gzipped, cap)
    except ApiError as exc:
        return "error", (exc.status, exc.code, exc.detail)
    except RecursionError:
        return "error", (400, "malformed_json", "malformed JSON: nested too deeply")


_pool: ProcessPoolExecutor | None = None
# Decoders run at a lower CPU priority than the API: when uploads and autoscalers compete for the
# cores, the sizing answers come first and the uploads (which agents retry patiently) wait.
DECODER_NICENESS = 10


def _exit_with(api_pid: int) -> None:
    """Block until the API process api_pid is gone, then end this decoder.

    A decoder's parent is the pool's forkserver, and each decoder holds the forkserver's liveness
    pipe and both ends of its own call queue: when the API process dies without shutting the pool
    down (SIGKILL, a crash), nothing ever reaches EOF and decoder and forkserver live on, one pair
    leaked per API restart. Watching the API process directly ends the decoder, and with it the
    forkserver (its last holder of the liveness pipe is gone)."""
    try:
        fd = os.pidfd_open(api_pid)
    except (AttributeError, OSError):  # no pidfd (old kernel): poll instead
        fd = -1
    while True:
        if fd >= 0:
            select.select([fd], [], [])
            os._exit(0)
        try:
            os.kill(api_pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:
            pass
        threading.Event().wait(1.0)


def _decoder_init(api_pid: int) -> None:
    os.nice(DECODER_NICENESS)
    threading.Thread(target=_exit_with, args=(api_pid,), daemon=True, name="exit-with-api").start()


_pool_lock = threading.Lock()


def _ready() -> None:
    """A no-op run in a new pool: it returns once a decoder process is up."""


def _start_pool(workers: int) -> ProcessPoolExecutor:
    """The pool with its decoder process(es) running. Blocking: the forkserver and a decoder
    start in this thread (py-spy under bench/stall: about 0.7 s of a loaded machine's time per
    API process), so never call it on the event loop."""
    global _pool
    with _pool_lock:
        if _pool is None:
            # forkserver: the decoders start from a clean process, not a fork of a threaded server
            pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("forkserver"),
                initializer=_decoder_init,
                initargs=(os.getpid(),),
            )
            pool.submit(_ready).result()
            _pool = pool
        return _pool


def start_decoders_in_background(workers: int) -> None:
    """Start this process's decoder pool in a thread (the API's start-up calls it): the first
    upload then finds its decoder running instead of starting one."""
    if workers > 0:
        threading.Thread(target=_start_pool, args=(workers,), daemon=True, name="start-decoders").start()


async def decode_in_pool(kind: str, body: bytes, gzipped: bool, cap: int, workers: int) -> Any:
    """decode() in this API process's decoder processes; workers=0 decodes in a thread instead."""
    global _pool
    loop = asyncio.get_running_loop()
    if workers <= 0:
        answer = await loop.run_in_executor(None, _decode_answer, kind, body, gzipped, cap)
    else:
        try:
            # The first upload (and the first after a decoder died) starts the pool in a thread:
            # started on the event loop, it held every other request of this process meanwhile.
            pool = _pool or await loop.run_in_executor(None, _start_pool, workers)
            answer = await loop.run_in_executor(pool, _decode_answer, kind, body, gzipped, cap)
        except BrokenProcessPool:  # a decoder died (killed, out of memory): start afresh next time
            _pool = None
            raise ApiError(
                503, "decoder_unavailable", "the upload could not be decoded now; retry later"
            ) from None
    status, value = answer
    if status == "error":
        raise ApiError(*value)
    return value
