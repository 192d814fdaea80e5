"""Decoding agent uploads, away from the API's event loop: inflate the gzip body within the
decompressed-size cap, parse and validate it against the protocol (hitcurve.schemas.agent), and
for trace chunks pack the records into their storage format (tracecodec).

A snapshot comes back as its column values (hitcurve.ingest.snapshot_rows), a trace chunk as its packed
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
import multiprocessing
import os
import re
import select
import threading
import uuid
import zlib
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from hitcurve.core.domain import Invalid, Malformed, Refused, TooLarge, Unavailable
from hitcurve.core.errors import clean_errors
from hitcurve.ingest import tracecodec
from hitcurve.ingest.snapshot_rows import snapshot_rows
from hitcurve.schemas import agent as proto


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


# The refusals a decoder process sends back by name (its answer crosses a process boundary).
_REFUSALS: dict[str, type[Refused]] = {k.__name__: k for k in (Malformed, TooLarge, Invalid)}


# Deflate writes at least one bit per 258 bytes of output in its longest matches: no stream
# inflates to more than ~1,032 times its size.
DEFLATE_MAX_RATIO = 1032


def declared_size(body: bytes) -> int | None:
    """What a gzip body says it inflates to: the ISIZE of its trailer (the last 4 bytes: the size
    modulo 2**32 of the member they end; an upload is one member, see inflate). Read without
    inflating anything, so a body that declares more than its budget is refused before it waits
    for a decoder, and the key's budget is reserved for what the body says. None: too short, not
    gzip, or more than deflate can inflate that many bytes to (the last 4 bytes of a truncated
    stream are no trailer); the decoder then says what is wrong."""
    if len(body) < 18 or body[:2] != b"\x1f\x8b":
        return None
    size = int.from_bytes(body[-4:], "little")
    return size if size <= len(body) * DEFLATE_MAX_RATIO else None


def inflate(body: bytes, cap: int, declared: int | None = None) -> bytes:
    """A gzip body decompressed as a stream, stopping at cap bytes (a bomb is never inflated), or
    at `declared` (its trailer's size, declared_size) when that is smaller: a stream that inflates
    past the size its own trailer states is refused as soon as it does (zlib would refuse it at the
    trailer anyway, after inflating it all)."""
    stop = cap if declared is None else min(cap, declared)
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    buf = body
    try:
        while buf and not inflater.eof:
            out += inflater.decompress(buf, stop + 1 - len(out))
            if len(out) > cap:
                raise TooLarge("decompressed_too_large", f"decompressed body exceeds the limit of {cap} bytes"
                )
            if len(out) > stop:
                raise Malformed(
                    "bad_gzip",
                    f"body is not valid gzip: it inflates past the {declared} bytes its last 4 bytes"
                    " state as its size (a truncated or altered stream)",
                )
            buf = inflater.unconsumed_tail
    except zlib.error as exc:
        raise Malformed("bad_gzip", f"body is not valid gzip: {exc}") from None
    if inflater.eof and (buf or inflater.unused_data):
        raise Malformed("bad_gzip", "data after the end of the gzip stream")
    if not inflater.eof:
        raise Malformed("bad_gzip", "gzip stream is truncated")
    if not out:
        raise Malformed("empty_body", "request body is empty")
    return bytes(out)


# A JSON string (escapes included), and NaN or Infinity as a value outside any string. The string
# pattern matches at every quote it starts from, closed or not (an unterminated one runs to the end
# of the body, a lone backslash ends it), and never gives back what it took (possessive): the scan
# is one pass. A pattern that could fail at an opening quote was retried from every later quote:
# 47 KB of escaped quotes after a NaN held a decoder 23 s, and it grew with the cube of the size.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.?)*+(?:"|\Z)', re.DOTALL)
_BARE_CONSTANT = re.compile(rb"[\[:,]\s*-?(?:NaN|Infinity)\b")


def parse(raw: bytes, model: type[proto.Snapshot] | type[proto.TraceChunk]) -> Any:
    """The validated model. Malformed JSON (including bytes that are not UTF-8): 400; schema
    violations: 422 with the first errors located. The body is parsed once, by Pydantic (in Rust)."""
    if b"\\u0000" in raw:
        raise Invalid("invalid_payload", "strings must not contain NUL (\\u0000)")
    if model is proto.Snapshot:
        # Cheap guard before parsing: every class carries one "points" key. A body with far more
        # curves than a snapshot may have (a few KiB of gzip can inflate to thousands of classes)
        # is refused before it costs seconds of parsing; up to 4x the limit gets the exact check.
        curves = raw.count(b'"points"')
        if curves > 4 * proto.MAX_CLASSES:
            raise Invalid("invalid_payload",
                f"classes: at most {proto.MAX_CLASSES} classes per snapshot; this body has {curves} curves",
            )
    if (b"NaN" in raw or b"Infinity" in raw) and _BARE_CONSTANT.search(_STRING.sub(b'""', raw)):
        # JSON has no NaN or Infinity, though Pydantic's parser accepts them where a field is not
        # read. Found with one scan in C (strings blanked, then the bare words looked for), not a
        # second parse: a body that merely mentions them costs nothing more.
        raise Malformed(
            "malformed_json", "malformed JSON: NaN and Infinity are not allowed: numbers must be finite"
        )
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        if errors and errors[0]["type"] == "json_invalid":
            raise Malformed("malformed_json", f"malformed JSON: {errors[0]['msg']}") from None
        if errors and errors[0]["type"] == "model_type" and not errors[0]["loc"]:
            raise Invalid("invalid_payload", "the body must be a JSON object") from None
        raise Invalid("invalid_payload", clean_errors(errors)) from None


def decode(kind: str, body: bytes, gzipped: bool, cap: int) -> Any:
    """Body -> a validated snapshot's rows (SnapshotRows: the store statement's column values,
    not the model, so what the pool sends back is small) or TraceUpload. cap: the most bytes the
    body may hold once inflated (the kind's budget, Settings.max_snapshot_bytes or
    max_decompressed_bytes), checked while inflating. Raises Malformed, TooLarge or Invalid."""
    return decode_raw(kind, inflate(body, cap) if gzipped else body, cap)


def decode_raw(kind: str, raw: bytes, cap: int) -> Any:
    """decode() of a body already inflated (or sent plain)."""
    if not raw:
        raise Malformed("empty_body", "request body is empty")
    if len(raw) > cap:
        raise TooLarge("decompressed_too_large", f"decompressed body exceeds the limit of {cap} bytes")
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


def _decode_answer(
    kind: str, body: bytes, gzipped: bool, cap: int, declared: int | None = None
) -> tuple[str, Any, int]:
    """decode() for the pool: a refusal comes back as plain values (kind, code, detail); with
    either, the bytes the body inflated to (what it cost to read: one past the limit it stopped
    at, cap or its trailer's declared size, when it went past)."""
    size = len(body)
    try:
        raw = inflate(body, cap, declared) if gzipped else body
        size = len(raw)
        return "ok", decode_raw(kind, raw, cap), size
    except Refused as exc:
        if isinstance(exc, TooLarge):
            size = cap + 1
        elif exc.code == "bad_gzip" and declared is not None and declared < cap:
            size = declared + 1  # at most: it stopped there, or earlier on broken data
        return "error", (type(exc).__name__, exc.code, exc.detail), size
    except RecursionError:
        return "error", ("Malformed", "malformed_json", "malformed JSON: nested too deeply"), size


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


async def decode_in_pool(
    kind: str,
    body: bytes,
    gzipped: bool,
    cap: int,
    workers: int,
    charge: Callable[[int], None] | None = None,
    declared: int | None = None,
) -> Any:
    """decode() in this API process's decoder processes; workers=0 decodes in a thread instead.
    charge(n): told the bytes the body inflated to, whether it was accepted or refused.
    declared: the gzip body's trailer size (declared_size), past which inflating stops."""
    global _pool
    loop = asyncio.get_running_loop()
    if workers <= 0:
        answer = await loop.run_in_executor(None, _decode_answer, kind, body, gzipped, cap, declared)
    else:
        try:
            # The first upload (and the first after a decoder died) starts the pool in a thread:
            # started on the event loop, it held every other request of this process meanwhile.
            pool = _pool or await loop.run_in_executor(None, _start_pool, workers)
            answer = await loop.run_in_executor(pool, _decode_answer, kind, body, gzipped, cap, declared)
        except BrokenProcessPool:  # a decoder died (killed, out of memory): start afresh next time
            _pool = None
            raise Unavailable("decoder_unavailable", "the upload could not be decoded now; retry later"
            ) from None
    status, value, size = answer
    if charge is not None:
        charge(size)
    if status == "error":
        kind, code, detail = value
        raise _REFUSALS[kind](code, detail)
    return value
