"""Storage format of trace chunk records (trace_chunks.data, data_format "npz-v1").

The columns of the protocol's `records` object as numpy arrays, written with
`numpy.savez_compressed` (zip + deflate), read back with `decode_records`:

| column  | dtype   | meaning                                                     |
|---------|---------|-------------------------------------------------------------|
| ts_us   | int64   | microseconds since the epoch                                |
| key     | uint64  | the 64-bit key hash (the protocol's 16 hex digits)          |
| op      | uint8   | 1 hit, 2 miss, 3 set, 4 delete, 5 evict                     |
| size    | int64   | value size in bytes                                         |
| clsid   | uint8   | slab class id                                               |
| ttl     | int64   | seconds, -1 for none                                        |
| cost_us | float64 | recompute cost of a SET that refilled a miss; NaN when null |
"""

import io
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FORMAT = "npz-v1"
COLUMNS = ("ts_us", "key", "op", "size", "clsid", "ttl", "cost_us")


def encode_records(
    ts_us: Sequence[int],
    key_hex: Sequence[str],
    op: Sequence[int],
    size: Sequence[int],
    clsid: Sequence[int],
    ttl: Sequence[int],
    cost_us: Sequence[float | None],
) -> bytes:
    arrays = {
        "ts_us": np.asarray(ts_us, dtype=np.int64),
        "key": np.fromiter((int(k, 16) for k in key_hex), dtype=np.uint64, count=len(key_hex)),
        "op": np.asarray(op, dtype=np.uint8),
        "size": np.asarray(size, dtype=np.int64),
        "clsid": np.asarray(clsid, dtype=np.uint8),
        "ttl": np.asarray(ttl, dtype=np.int64),
        "cost_us": np.asarray([np.nan if c is None else c for c in cost_us], dtype=np.float64),
    }
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


# The dtype of each column as encode_records writes it (the table above).
DTYPES: dict[str, np.dtype[np.generic]] = {
    "ts_us": np.dtype(np.int64),
    "key": np.dtype(np.uint64),
    "op": np.dtype(np.uint8),
    "size": np.dtype(np.int64),
    "clsid": np.dtype(np.uint8),
    "ttl": np.dtype(np.int64),
    "cost_us": np.dtype(np.float64),
}


def decode_records(data: bytes) -> dict[str, npt.NDArray[np.generic]]:
    """The columns as numpy arrays, keyed as in COLUMNS. ValueError for a column that is not the
    one-dimensional array of its dtype this format writes: whatever reads a stored chunk (the
    worker's check, then the simulator) gets the arrays encode_records made, or an error."""
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        cols = {name: npz[name] for name in COLUMNS}
    for name, a in cols.items():
        if a.ndim != 1 or a.dtype != DTYPES[name]:
            raise ValueError(f"column {name} is {a.dtype} of shape {a.shape}, not 1-d {DTYPES[name]}")
    return cols
