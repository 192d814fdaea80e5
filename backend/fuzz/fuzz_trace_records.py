"""libFuzzer (atheris) on the stored trace decoder: hitcurve.ingest.tracecodec.decode_records and
the worker's check of what it decoded (hitcurve_worker.trace_tasks.check_records), the path every
stored trace chunk (trace_chunks.data, "npz-v1") takes before a simulation or a policy correction
reads it.

What must hold for any stored bytes: the decoder returns the columns or raises (the worker parks
the chunk with the error, trace_tasks.process); the check returns the op counts or raises
PoisonInput; and whatever passes the check is what the simulator is handed: every column of
tracecodec.COLUMNS, equally long, with the dtype encode_records writes (a column stored as text or
float would reach the simulator as such). Slow or memory-hungry inputs (a deflate bomb inside the
zip, a header declaring a huge shape) are caught by libFuzzer's -timeout and -rss_limit_mb.

Seeds: chunks written by encode_records itself (a few records, none, all ops); the mutator
re-encodes a decoded chunk with one column changed (dtype, length, dropped, added, shape) most of
the time, libFuzzer's byte mutation otherwise.

    .venv/bin/python backend/fuzz/fuzz_trace_records.py [libFuzzer options] [CORPUS_DIR ...]
    make fuzz   (FUZZ_SECONDS per target)
"""

import contextlib
import io
import os
import random
from pathlib import Path

import atheris
import fuzzrun
import numpy as np

# The worker's modules read their settings on import; nothing here connects to either.
os.environ.setdefault("HITCURVE_DATABASE_URL", "postgresql+psycopg://fuzz@127.0.0.1:1/fuzz")
os.environ.setdefault("HITCURVE_REDIS_URL", "redis://127.0.0.1:1/0")

# Coverage of the decoder and of the worker's check: with the decoder's alone (a few branches)
# libFuzzer would reduce the corpus to inputs that never get past the zip.
with atheris.instrument_imports(include=["hitcurve.ingest.tracecodec", "hitcurve_worker.trace_tasks"]):
    from hitcurve.ingest import tracecodec
    from hitcurve_worker.reliability import PoisonInput
    from hitcurve_worker.trace_tasks import check_records


def _written_dtypes() -> dict[str, np.dtype[np.generic]]:
    """The dtypes encode_records writes, read back with numpy alone: the target checks the decoder
    against the encoder, not against the decoder's own table."""
    blob = tracecodec.encode_records([1], ["0000000000000001"], [1], [1], [1], [-1], [None])
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        return {k: npz[k].dtype for k in npz.files}


DTYPES = _written_dtypes()


def one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    declared = data[0]  # the row's record_count, as the API stored it (small: the seeds' sizes)
    try:
        cols = tracecodec.decode_records(data[1:])
    except Exception:  # noqa: BLE001 - any error parks the chunk (trace_tasks.process)
        return
    try:
        check_records(cols, declared)
    except PoisonInput:
        return
    n = len(cols["ts_us"])
    for name in tracecodec.COLUMNS:
        a = cols[name]
        if a.ndim != 1 or len(a) != n or a.dtype != DTYPES[name]:
            raise AssertionError(f"passed the check: {name} {a.dtype} shape {a.shape}, {n} records")


def _encode(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def _changed(arrays: dict[str, np.ndarray], rng: random.Random) -> dict[str, np.ndarray]:
    """One structural change to a chunk's columns."""
    name = rng.choice(list(arrays) or list(tracecodec.COLUMNS))
    a = np.asarray(arrays.get(name, np.zeros(3, dtype=np.int64)))
    op = rng.randrange(7)
    if op == 0:  # another dtype
        kind = rng.choice([np.int8, np.int32, np.uint64, np.float32, np.float64, np.bool_, "U16", "S8"])
        try:
            arrays[name] = a.astype(kind)
        except (ValueError, OverflowError):
            arrays[name] = np.zeros(a.size, dtype=kind)
    elif op == 1:  # another length
        arrays[name] = np.resize(a, max(0, a.size + rng.choice([-2, -1, 1, 5])))
    elif op == 2:  # dropped
        arrays.pop(name, None)
    elif op == 3:  # an unknown column
        arrays[f"extra{rng.randrange(9)}"] = np.arange(rng.randrange(50))
    elif op == 4:  # another shape
        arrays[name] = a.reshape(1, -1) if a.ndim == 1 else a.ravel()
    elif op == 5:  # values at the edges
        if a.size and a.dtype.kind in "iuf":
            a = a.copy()
            edge = rng.choice([0, -1, 255, 2**31, np.iinfo(np.int64).max])
            # (not representable in this dtype: left as it was)
            with contextlib.suppress(OverflowError, ValueError):
                a.flat[rng.randrange(a.size)] = edge
            arrays[name] = a
    else:  # a 0-d array
        arrays[name] = np.array(rng.randrange(10), dtype=DTYPES.get(name, np.int64))
    return arrays


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    if len(data) > 1 and rng.random() < 0.8:
        try:
            with np.load(io.BytesIO(data[1:]), allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
        except Exception:  # noqa: BLE001 - not a readable npz: byte mutation below
            arrays = None
        if arrays is not None:
            try:
                for _ in range(rng.randrange(1, 3)):
                    arrays = _changed(arrays, rng)
                count = data[0] if rng.random() < 0.7 else rng.randrange(256)
                out = bytes([count]) + _encode(arrays)
            except Exception:  # noqa: BLE001 - a change numpy cannot make or save: byte mutation
                out = b""
            if out and len(out) <= max_size:
                return out
    return bytes(atheris.Mutate(data, max_size))


def _seeds(into: Path) -> None:
    rng = random.Random(7)
    for i, n in enumerate((0, 1, 5, 40)):
        blob = tracecodec.encode_records(
            [1_796_000_000_000_000 + j for j in range(n)],
            [f"{rng.getrandbits(64):016x}" for _ in range(n)],
            [1 + j % 5 for j in range(n)],
            [rng.randint(0, 2000) for _ in range(n)],
            [rng.randint(1, 40) for _ in range(n)],
            [rng.choice([-1, 300]) for _ in range(n)],
            [rng.choice([None, 1500.0]) for _ in range(n)],
        )
        (into / f"seed-{i}.npz").write_bytes(bytes([n]) + blob)


def main() -> None:
    fuzzrun.run("trace-records", _seeds, one_input, custom_mutator)


if __name__ == "__main__":
    main()
