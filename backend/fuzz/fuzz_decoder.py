"""libFuzzer (atheris) on the upload decoder: hitcurve.ingest.uploads.decode, the function the API's
decoder processes run on every snapshot and trace-chunk body, gzip or not.

The first byte of an input picks the kind (snapshot or trace chunk) and whether the rest is sent
as gzip; the rest is the body. What must hold for any body: decode returns the decoded upload or
raises Malformed (400), TooLarge (413) or Invalid (422) with a detail; any other exception (which
the API would answer with a 500, or which would end a decoder process) is a crash, and libFuzzer
keeps the input.
Slow or memory-hungry inputs are caught by libFuzzer's -timeout and -rss_limit_mb.

Seeds: protocol-correct snapshots (with and without the breakdown, stats-only) and trace chunks
from hitcurve_testing, written fresh at each start (their windows must be recent), plain and gzip.

    .venv/bin/python backend/fuzz/fuzz_decoder.py [libFuzzer options] [CORPUS_DIR ...]
    make fuzz   (FUZZ_SECONDS per target)
"""

import copy
import gzip
import json
import random
from pathlib import Path
from typing import Any

import atheris
import fuzzrun

with atheris.instrument_imports(include=["hitcurve"]):
    from hitcurve.core.domain import Invalid, Malformed, TooLarge
    from hitcurve.ingest import uploads

from hitcurve_testing.snapshots import (
    add_breakdown,
    make_snapshot,
    make_stats_only_snapshot,
    make_trace_chunk,
)

# A small cap keeps each run fast; the real one is Settings.max_decompressed_bytes.
CAP = 1 << 20
KINDS = ("snapshot", "trace")


def one_input(data: bytes) -> None:
    if not data:
        return
    kind = KINDS[data[0] & 1]
    gzipped = bool(data[0] & 2)
    body = data[1:]
    if gzipped and data[0] & 4:
        body = gzip.compress(body, 1)  # a well-formed gzip of the fuzzed JSON: reaches the parser
    try:
        uploads.decode(kind, body, gzipped, CAP)
    except (Malformed, TooLarge, Invalid) as exc:
        if not exc.detail:
            raise
    except RecursionError:
        pass  # the decoder process answers it as a 400 (uploads._decode_answer)


# Values a structural mutation puts in place of one: the edges of every limit in the protocol.
_VALUES: list[object] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2**31,
    2**53,
    2**53 + 1,
    2**63,
    2**64,
    1e308,
    -1e308,
    5e-324,
    0.5,
    "",
    "x" * 300,
    "\u2028",
    "\u0000",
    "NaN",
    "1",
    [],
    {},
    [[1.0, 0.5]],
    {"unknown": [1] * 100},
]


def _value(rng: random.Random) -> object:
    return copy.deepcopy(rng.choice(_VALUES))


def _mutate_doc(doc: Any, rng: random.Random) -> Any:
    """One random change to a JSON document: a value replaced, a key dropped or added, a list
    element duplicated, dropped or swapped (the parser sees valid JSON that breaks the rules)."""
    path: list[tuple[Any, Any]] = []
    node = doc
    while isinstance(node, (dict, list)) and node and (not path or rng.random() < 0.93):
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if not path:
        return doc
    parent, key = path[-1]
    op = rng.randrange(5)
    if op == 0:
        parent[key] = _value(rng)
    elif op == 1 and isinstance(parent, dict):
        del parent[key]
    elif op == 1:
        parent.insert(key, parent[key])
    elif op == 2 and isinstance(parent, dict):
        parent[rng.choice(["extra", "diagnostics", f"k{rng.randrange(99)}"])] = _value(rng)
    elif op == 2:
        del parent[key]
    elif op == 3 and isinstance(node, (int, float)) and not isinstance(node, bool):
        parent[key] = node * rng.choice([-1, 0, 2, 10**6]) + rng.choice([0, 1, -1])
    elif op == 4 and isinstance(parent, list) and len(parent) > 1:
        j = rng.randrange(len(parent))
        parent[key], parent[j] = parent[j], parent[key]
    return doc


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    """Structure-aware mutation when the body is JSON (most of the time), libFuzzer's own
    byte mutation otherwise: byte flips alone almost never get past the JSON parser."""
    rng = random.Random(seed)
    if len(data) > 1 and not data[0] & 2 and rng.random() < 0.8:
        try:
            doc = json.loads(data[1:])
        except (ValueError, RecursionError):
            doc = None
        if doc is not None:
            for _ in range(rng.randrange(1, 4)):
                doc = _mutate_doc(doc, rng)
            out = data[:1] + json.dumps(doc).encode()
            if len(out) <= max_size:
                return out
    return bytes(atheris.Mutate(data, max_size))


def _seeds(into: Path) -> None:
    docs = {
        "snapshot": [
            make_snapshot(n_classes=3),
            add_breakdown(make_snapshot(n_classes=2)),
            make_stats_only_snapshot(),
        ],
        "trace": [make_trace_chunk(records=50)],
    }
    for kind, items in docs.items():
        for i, doc in enumerate(items):
            raw = json.dumps(doc).encode()
            k = KINDS.index(kind)
            (into / f"seed-{kind}-{i}.json").write_bytes(bytes([k]) + raw)
            (into / f"seed-{kind}-{i}.gz").write_bytes(bytes([k | 2]) + gzip.compress(raw))
            (into / f"seed-{kind}-{i}.json.gz").write_bytes(bytes([k | 6]) + raw)


def main() -> None:
    fuzzrun.run("decoder", _seeds, one_input, custom_mutator)


if __name__ == "__main__":
    main()
