"""The timeline table of a first_minutes.py run: one markdown row per minute and server, with what
the sizing API (server and cluster), the cluster card, /metrics, the alerts and the breakdown said.

    timeline.py [--collapse] RUN.jsonl [CLUSTER=ADDRESS ...]

--collapse: one row per run of minutes in which a cluster's surfaces said the same (the breakdown
column then gives the run's first and last figures).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any


def said(a: Any) -> str:
    if not isinstance(a, dict):
        return f"HTTP {a}" if a is not None else "—"
    if a["status"] in ("warming_up", "unknown"):
        u = a.get("unknown_until") or ""
        seen = re.search(r"seen the curve up to ([\d.]+\s\S+)", u)
        fill = re.search(r"filling: ([\d.]+\s[A-Za-z]+ of [\d.]+\s[A-Za-z]+)", u)
        what = f"seen up to {seen.group(1)}" if seen else f"filling {fill.group(1)}" if fill else "just full"
        return f"{a['status']} ({what})"
    band = a.get("band_m") or [None, None]
    m = f"-m {a['m_to_set']:.0f}" if a.get("m_to_set") is not None else f"more than {a.get('at_least')} MiB"
    hi = f"{band[1]:.0f}" if band[1] is not None else "past the curve"
    b = f" band {band[0]:.0f}–{hi}" if band[0] is not None else ""
    st = f", {a['memory_state']}" if a.get("memory_state") else ""
    return f"{a['status']} {m}{b}{st}"


def metric(m: dict[str, float] | None) -> str:
    if not m:
        return "—"
    if not m.get("target_known"):
        return "known 0"
    rec = m.get("recommended_memory_limit_bytes")
    rec_s = f" -m {rec / 2**20:.0f}" if rec is not None else ""
    return f"known 1{rec_s} short {m.get('memory_short', '—'):.0f} edge {m.get('memory_at_edge', 0):.0f}"


def main(path: str, pairs: list[str], collapse: bool = False) -> None:
    with open(path) as f:
        rows = [json.loads(line) for line in f]
    mapping = dict(p.split("=", 1) for p in pairs)
    print(
        "| min | server | server page / sizing API | cluster card | cluster API | /metrics (server) | "
        "alerts open | breakdown held / stored (MB) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    cells = list(_cells(rows, mapping))
    if not collapse:
        for minute, cluster, said_, bd in cells:
            print(f"| {minute} | {cluster} | " + " | ".join(said_) + f" | {bd} |")
        return
    runs: list[list[Any]] = []  # [first minute, last minute, cluster, said, first bd, last bd]
    for minute, cluster, said_, bd in cells:
        same = next((r for r in reversed(runs) if r[2] == cluster), None)
        if same is not None and same[3] == said_ and same[1] == minute - 1:
            same[1], same[5] = minute, bd
        else:
            runs.append([minute, minute, cluster, said_, bd, bd])
    for first, last, cluster, said_, bd0, bd1 in sorted(runs, key=lambda r: (r[0], r[2])):
        mins = f"{first}" if first == last else f"{first}–{last}"
        bd = bd0 if bd0 == bd1 else f"{bd0} … {bd1}"
        print(f"| {mins} | {cluster} | " + " | ".join(said_) + f" | {bd} |")


def _cells(rows: list[dict[str, Any]], mapping: dict[str, str]) -> Any:
    """(minute, cluster, what each surface said, breakdown) per minute and cluster."""
    for r in rows:
        for cluster, address in mapping.items():
            s = (r.get("servers") or {}).get(address)
            c = (r.get("clusters") or {}).get(cluster)
            if s is None or c is None:
                continue
            alerts = [
                a
                for a in r.get("alerts", [])
                if a["state"] == "open"
                and (a["message"] or "").startswith((f"cluster {cluster}:", f"server {address}"))
            ]
            al = ", ".join(f"{a['kind']} ({a['severity']})" for a in alerts) or "none"
            held, stored = s.get("breakdown_held"), s.get("breakdown_stored")
            bd = f"{held / 1e6:.1f} / {stored / 1e6:.1f}" if held is not None and stored else "—"
            surfaces = (
                said(s["api"]),
                said(c["card"]),
                said(c["api"]),
                metric((r.get("metrics") or {}).get(f"server {address}")),
                al,
            )
            yield r["minute"], cluster, surfaces, bd


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--collapse"]
    if not args:
        sys.exit(__doc__)
    main(args[0], args[1:], collapse="--collapse" in sys.argv[1:])
