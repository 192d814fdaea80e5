"""What an upload's decoding costs the API, in process: the decoder's inflate and
validation, what it sends back through the pool's pipe (pickled there, unpickled in the API
process), and the statement parameters built from it. `model` is what the decoder returned
before (the protocol model; the parameters were built in the API process from it), `rows` what
it returns now (hitcurve.ingest.snapshot_rows, built in the decoder). The fleet's own snapshots (20-40
classes x 100 points, bench/fleet/bodies.py), alternated in rounds so the machine's load falls on
both alike. Usage: .venv/bin/python bench/fleet/decode_cost.py [--uploads 200] [--rounds 4]"""

import argparse
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bodies import make_templates, snapshot_body  # noqa: E402

from hitcurve.ingest import uploads  # noqa: E402
from hitcurve.ingest.snapshot_rows import snapshot_rows  # noqa: E402
from hitcurve.schemas import agent as proto  # noqa: E402

CAP = 64 << 20


def model_path(body: bytes) -> int:
    """Before: the decoder pickles the model, the API unpickles it and builds the parameters."""
    snap = uploads.parse(uploads.inflate(body, CAP), proto.Snapshot)
    sent = pickle.dumps(snap, protocol=pickle.HIGHEST_PROTOCOL)
    snapshot_rows(pickle.loads(sent))  # noqa: S301 (our own bytes)
    return len(sent)


def rows_path(body: bytes) -> int:
    """Now: the decoder builds the parameters and pickles them, the API unpickles them."""
    sent = pickle.dumps(uploads.decode("snapshot", body, True, CAP), protocol=pickle.HIGHEST_PROTOCOL)
    pickle.loads(sent)  # noqa: S301 (our own bytes)
    return len(sent)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uploads", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=4)
    a = ap.parse_args()
    templates = make_templates(16, 7)
    now = time.time()
    bodies = [
        snapshot_body(templates[i % 16], f"10.0.{i // 250}.{i % 250}:11211", now - 60, now, 0.9)[1]
        for i in range(a.uploads)
    ]
    cpu: dict[str, list[float]] = {"model": [], "rows": []}
    sent: dict[str, int] = {}
    for _ in range(a.rounds):
        for name, path in (("model", model_path), ("rows", rows_path)):
            t0 = time.process_time()
            sizes = [path(b) for b in bodies]
            cpu[name].append((time.process_time() - t0) / len(bodies) * 1e3)
            sent[name] = sum(sizes) // len(sizes)
    for name in cpu:
        rounds = ", ".join(f"{x:.2f}" for x in cpu[name])
        median = sorted(cpu[name])[len(cpu[name]) // 2]
        print(
            f"{name}: {median:.2f} ms CPU per upload (rounds {rounds}),",
            f"{sent[name] / 1e3:.1f} KB through the pipe",
        )
    print(f"ratio rows/model: {min(cpu['rows']) / min(cpu['model']):.2f} (best rounds)")


if __name__ == "__main__":
    main()
