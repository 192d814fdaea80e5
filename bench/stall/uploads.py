"""The worst uploads we can construct for the stall benchmark (bench/stall/run.sh), as
(name, path, gzip body) triples. Each is refused; each is as expensive to refuse as we could make
it within the size limits.

- trace-all-invalid: the probe that took 12 s to refuse -- 200k records, every key invalid (17 KB of gzip).
- trace-last-invalid: 200k valid records but the last key: a validator that stops at the first
  error still reads everything.
- snapshot-max-classes: 256 classes x 100 points, the last class's curve decreasing.
- deep-nesting: 100k nested arrays in a settings value.

`inflating_uploads` (the third hardening pass): bodies small as gzip whose meaning is small too.
- snapshot-inflating-31MiB: a valid 6-class snapshot with a field the protocol does not read
  holding 31 MiB of zeros (about 38 KB of gzip).

`nan_scan_uploads`: a body for the decoder's look for NaN outside strings.
- snapshot-nan-quotes: a NaN and then 16,000 escaped quotes in an unterminated string (47 KB): a
  scan that retried a string from every quote held a decoder ~23 s on it.
"""

import gzip
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from hitcurve_testing.snapshots import make_snapshot

N = 200_000


def _records(bad_key: str, where: str) -> dict[str, Any]:
    now = int(datetime.now(UTC).timestamp() * 1e6)
    keys = [f"{i:016x}" for i in range(N)]
    if where == "all":
        keys = [bad_key] * N
    else:
        keys[-1] = bad_key
    return {
        "ts_us": [now - N + i for i in range(N)],
        "key": keys,
        "op": [1 + i % 3 for i in range(N)],
        "size": [200] * N,
        "clsid": [5] * N,
        "ttl": [-1] * N,
        "cost_us": [None] * N,
    }


def _chunk(records: dict[str, Any]) -> dict[str, Any]:
    end = datetime.now(UTC)
    return {
        "schema_version": 1,
        "chunk_id": str(uuid.uuid4()),
        "server": {"address": "10.9.9.9:11211", "instance_id": "stall"},
        "sample_rate": 0.01,
        "seq": 1,
        "start": (end - timedelta(seconds=60)).isoformat(),
        "end": end.isoformat(),
        "records": records,
    }


def worst_uploads() -> list[tuple[str, str, bytes]]:
    out = []
    for name, where in (("trace-all-invalid", "all"), ("trace-last-invalid", "last")):
        body = json.dumps(_chunk(_records("not-a-hex-key!!!", where))).encode()
        out.append((name, "/api/v1/agent/traces", gzip.compress(body, 9)))
    snap = make_snapshot("10.9.9.8:11211", n_classes=256)
    last = snap["classes"][-1]["curve"]["points"]
    last[-1] = [last[-1][0], 0.0]  # hit ratio falls at the very end
    out.append(
        ("snapshot-max-classes", "/api/v1/agent/snapshots", gzip.compress(json.dumps(snap).encode(), 9))
    )
    snap = make_snapshot("10.9.9.7:11211", n_classes=1)
    text = json.dumps(snap)
    deep = "[" * 100_000 + "]" * 100_000
    text = text.replace('"settings": {', f'"settings": {{"x": {deep}, ', 1)
    out.append(("deep-nesting", "/api/v1/agent/snapshots", gzip.compress(text.encode(), 9)))
    return out


INFLATED = 31 << 20


def inflating_uploads() -> list[tuple[str, str, bytes]]:
    snap = make_snapshot("10.9.9.6:11211", n_classes=6)
    text = json.dumps(snap)
    zeros = ",".join(["0"] * ((INFLATED - len(text)) // 2))
    text = text[:-1] + f', "ignored": [{zeros}]}}'
    return [("snapshot-inflating-31MiB", "/api/v1/agent/snapshots", gzip.compress(text.encode(), 9))]


def nan_scan_uploads() -> list[tuple[str, str, bytes]]:
    text = json.dumps(make_snapshot("10.9.9.5:11211", n_classes=6))
    text = text[:-1] + ', "ignored": NaN, "x": "' + '\\"' * 16_000 + "}"
    return [("snapshot-nan-quotes", "/api/v1/agent/snapshots", gzip.compress(text.encode(), 9))]
