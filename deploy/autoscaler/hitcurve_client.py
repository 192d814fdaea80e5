#!/usr/bin/env python3
"""Reference client for autoscalers: asks Hitcurve's sizing API how much memory and how many
nodes a cluster needs for a hit-rate target, and prints one JSON object. Standard library only,
so it runs in any container with Python 3.9+.

    HITCURVE_TOKEN=hct_... hitcurve_client.py --url https://hitcurve.example.com \
        --cluster 3f0c2a9e-... [--target 0.92] [--node-size-bytes 17179869184]

Output: {"cluster_id", "target_hit_ratio", "status", "memory_bytes", "memory_limit_bytes",
"recommended_memory_limit_bytes", "window_memory_limit_bytes", "memory_limit_note", "stable",
"unknown_until", "memory_state", "memory_state_words", "memory_bytes_at_least", "nodes",
"nodes_at_least", "node_size_bytes", "band", "basis", "curve_age_seconds", "message"}.
"memory_limit_bytes" is the one -m to set per node: the API's recommended_memory_limit_bytes, the
value the dashboard, the e-mail, the alerts and /metrics show ("recommended_memory_limit_bytes"
repeats it); "window_memory_limit_bytes" is the newest curve's own -m, which moves every window
("memory_limit_note" says why the two differ when they do). "memory_state" is today's -m against
the answer: short (even the band's low end is above it: the dashboard's memory alert opens),
at_edge (inside the band, below the -m to set: no alert), enough; null while not known.
Status above_curve: the target lies past what the curve covers; "memory_bytes_at_least" is a
lower bound (the target needs more than that in all) and, with a node size, "nodes_at_least" the
fewest nodes it can need.
"band" is the answer's band:
{"memory_bytes_min", "memory_bytes_max" (integer bytes, null past the curve), "memory_limit_bytes_min",
"memory_limit_bytes_max" (as -m per node; the -m to set lies between), "nodes_min", "nodes_max" (with
a node size), "confidence", "basis" (server_record or benchmark_prior)}. Status warming_up or
unknown: the answer is not known yet (memcached filling, or the agent has not seen out to the
target; "unknown_until" says until what): every memory figure is null. Exit status: 0 answer
(ok, warming_up / unknown / above_curve / unreachable with nulls), 3 no curve yet
(not_enough_data), 4 API error, 2 usage. An error is one JSON object on stderr: {"error" (the API's
code, or "unreachable"), "detail" (the API's detail as it sent it: a sentence, or for a refused
parameter a list of {"loc", "msg", "type"}), "status_code"}. An autoscaler should keep the current
size on anything but status ok, and on a curve older than it trusts (curve_age_seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any


class ApiError(Exception):
    """An answer other than 2xx; detail is the API's JSON detail as it came."""

    def __init__(self, status: int, code: str, detail: Any):
        super().__init__(f"HTTP {status} {code}: {detail}")
        self.status, self.code, self.detail = status, code, detail


def _get(base: str, path: str, params: dict[str, Any], token: str, timeout: float) -> dict[str, Any]:
    if urllib.parse.urlsplit(base).scheme not in ("http", "https"):
        raise ValueError(f"--url must be http:// or https://, got {base!r}")
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    req = urllib.request.Request(  # noqa: S310 (scheme checked above)
        f"{base.rstrip('/')}/api/v1{path}{'?' + query if query else ''}",
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310
            return dict(json.load(r))
    except urllib.error.HTTPError as e:
        try:
            body = json.load(e)
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        raise ApiError(
            e.code, str(body.get("code", "http_error")), body.get("detail", str(e.reason))
        ) from None


def cluster_size(
    base: str,
    token: str,
    cluster_id: str,
    target: float | None = None,
    node_size_bytes: int | None = None,
    timeout: float = 10.0,
) -> dict[str, Any]:
    """Memory and, when a node size is known (given, or the cluster's default), node count."""
    mem = _get(base, f"/sizing/clusters/{cluster_id}/memory", {"target_hit_ratio": target}, token, timeout)
    out = {
        "cluster_id": cluster_id,
        "target_hit_ratio": mem["target_hit_ratio"],
        "status": mem["status"],
        "memory_bytes": mem["memory_bytes"],
        # the one -m to set (the hysteresis-held value every surface shows), and the newest curve's own
        "memory_limit_bytes": mem.get("recommended_memory_limit_bytes"),
        "recommended_memory_limit_bytes": mem.get("recommended_memory_limit_bytes"),
        "window_memory_limit_bytes": mem.get("memory_limit_bytes"),
        "memory_limit_note": mem.get("memory_limit_note"),
        "stable": mem.get("stable"),
        "unknown_until": mem.get("unknown_until"),
        "memory_state": mem.get("memory_state"),
        "memory_state_words": mem.get("memory_state_words"),
        "memory_bytes_at_least": mem.get("memory_bytes_at_least"),
        "nodes": None,
        "nodes_at_least": None,
        "node_size_bytes": node_size_bytes,
        # the answer's uncertainty: memory (and nodes) at the band's confidence, e.g. to size for
        # the pessimistic end
        "band": {
            "memory_bytes_min": mem["band"].get("memory_bytes_min"),
            "memory_bytes_max": mem["band"].get("memory_bytes_max"),
            "memory_limit_bytes_min": mem["band"].get("memory_limit_bytes_min"),
            "memory_limit_bytes_max": mem["band"].get("memory_limit_bytes_max"),
            "nodes_min": None,
            "nodes_max": None,
            "confidence": mem["band"].get("confidence"),
            "basis": mem["band"].get("basis"),
        },
        "basis": mem["basis"],
        "curve_age_seconds": mem["curve"]["age_seconds"],
        "message": mem["message"],
    }
    try:
        nodes = _get(
            base,
            f"/sizing/clusters/{cluster_id}/nodes",
            {"target_hit_ratio": mem["target_hit_ratio"], "node_size_bytes": node_size_bytes},
            token,
            timeout,
        )
    except ApiError as e:
        if e.code != "node_size_required":
            raise
        return out
    out["nodes"], out["node_size_bytes"] = nodes["nodes"], nodes["node_size_bytes"]
    out["nodes_at_least"] = nodes.get("nodes_at_least")
    out["band"]["nodes_min"] = nodes["band"].get("nodes_min")
    out["band"]["nodes_max"] = nodes["band"].get("nodes_max")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True, help="the Hitcurve backend, e.g. https://hitcurve.example.com")
    p.add_argument("--cluster", required=True, help="cluster id (UUID)")
    p.add_argument("--target", type=float, help="hit-rate target in (0, 1]; default: the cluster's")
    p.add_argument("--node-size-bytes", type=int, help="memory per node; default: the cluster's")
    p.add_argument("--token-file", help="file holding the API token (default: $HITCURVE_TOKEN)")
    p.add_argument("--timeout", type=float, default=10.0)
    a = p.parse_args(argv)
    token = Path(a.token_file).read_text().strip() if a.token_file else os.environ.get("HITCURVE_TOKEN", "")
    if not token:
        p.error("give --token-file or set HITCURVE_TOKEN (an API token, scope read)")
    if urllib.parse.urlsplit(a.url).scheme not in ("http", "https"):
        p.error(f"--url must be http:// or https://, got {a.url!r}")
    try:
        answer = cluster_size(a.url, token, a.cluster, a.target, a.node_size_bytes, a.timeout)
    except ApiError as e:
        print(json.dumps({"error": e.code, "detail": e.detail, "status_code": e.status}), file=sys.stderr)
        return 3 if e.code == "not_enough_data" else 4
    except (urllib.error.URLError, TimeoutError) as e:
        print(json.dumps({"error": "unreachable", "detail": str(e)}), file=sys.stderr)
        return 4
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
