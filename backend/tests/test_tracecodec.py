"""The stored trace format (hitcurve.ingest.tracecodec): what decode_records returns is what
encode_records wrote, and a stored chunk whose column is another dtype or shape is refused with
the column's name (the worker parks it) instead of reaching the simulator. The fuzz target
backend/fuzz/fuzz_trace_records.py found the second case."""

import io

import numpy as np
import pytest

from hitcurve.ingest import tracecodec


def _chunk() -> bytes:
    return tracecodec.encode_records(
        [1, 2, 3], ["00000000000000ff", "ffffffffffffffff", "0000000000000001"], [1, 2, 3],
        [10, 0, 30], [5, 5, 6], [-1, 300, -1], [None, None, 1500.0],
    )


def _with(data: bytes, name: str, value: np.ndarray) -> bytes:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays[name] = value
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def test_decoded_columns_are_the_encoded_ones() -> None:
    cols = tracecodec.decode_records(_chunk())
    assert list(cols) == list(tracecodec.COLUMNS)
    assert {k: v.dtype for k, v in cols.items()} == tracecodec.DTYPES
    assert cols["key"].tolist() == [255, 2**64 - 1, 1] and np.isnan(cols["cost_us"][0])


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("clsid", np.array([5, 5, 6], dtype=np.int8)),
        ("key", np.array(["a", "b", "c"])),
        ("op", np.array([1.0, 2.0, 3.0])),
        ("ts_us", np.array([[1, 2, 3]], dtype=np.int64)),
        ("size", np.array(7, dtype=np.int64)),
    ],
)
def test_a_column_of_another_dtype_or_shape_is_refused(name: str, value: np.ndarray) -> None:
    with pytest.raises(ValueError, match=f"column {name} is"):
        tracecodec.decode_records(_with(_chunk(), name, value))
