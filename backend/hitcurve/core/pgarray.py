"""numpy arrays as binary PostgreSQL float8[] query parameters.

psycopg dumps a Python list element by element in Python (about 0.3 us per float); an upload's
4 000 curve points cost over a millisecond that way. PostgreSQL's binary array format is a fixed
header followed by (length, value) pairs, which numpy lays out in one step. The dumper below is
registered through psycopg's documented adaptation API, so a `Float8Array` can be passed wherever
a float8[] parameter is expected.
"""

import struct
from dataclasses import dataclass

import numpy as np
import psycopg
from psycopg.adapt import Dumper
from psycopg.pq import Format

FLOAT8_OID = 701
FLOAT8_ARRAY_OID = 1022
_ELEMENT = np.dtype([("len", ">i4"), ("value", ">f8")])


@dataclass(frozen=True)
class Float8Array:
    """A one-dimensional float8[] parameter (no NULL elements)."""

    values: np.ndarray

    def encode(self) -> bytes:
        v = np.ascontiguousarray(self.values, dtype=np.float64).ravel()
        # ndim, has-nulls flag, element type, then (length, lower bound) of the one dimension
        head = struct.pack(">iiIii", 1, 0, FLOAT8_OID, len(v), 1)
        body = np.empty(len(v), dtype=_ELEMENT)
        body["len"] = 8
        body["value"] = v
        return head + body.tobytes()


class Float8ArrayDumper(Dumper):
    format = Format.BINARY
    oid = FLOAT8_ARRAY_OID

    def dump(self, obj: Float8Array) -> bytes:
        return obj.encode()


psycopg.adapters.register_dumper(Float8Array, Float8ArrayDumper)


def float8_array_sql(column: str) -> str:
    """SQL selecting a float8[] column in PostgreSQL's binary array format (a bytea), for
    decode_float8: one bytes object per array instead of a Python float per element."""
    return f"array_send({column})"


def decode_float8(buf: bytes | None) -> np.ndarray | None:
    """A one-dimensional float8[] from `array_send` (the layout Float8Array.encode writes);
    None for NULL. Raises ValueError for NULL elements or more dimensions."""
    if buf is None:
        return None
    ndim, _flags, oid = struct.unpack_from(">iiI", buf)
    if ndim == 0:
        return np.empty(0, dtype=np.float64)
    if ndim != 1 or oid != FLOAT8_OID:
        raise ValueError(f"not a one-dimensional float8 array (ndim {ndim}, element type {oid})")
    (n,) = struct.unpack_from(">i", buf, 12)
    body = np.frombuffer(buf, dtype=_ELEMENT, count=n, offset=20)
    if n and not (body["len"] == 8).all():
        raise ValueError("a float8 array with NULL elements")
    return body["value"].astype(np.float64)
