"""The timeline table of a first_minutes.py run: one markdown row per minute and server, with what
the sizing API (server and cluster), the cluster card, /metrics, the alerts and the breakdown said.

    timeline.py RUN.jsonl [CLUSTER=ADDRESS ...]
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
    b = f" band {band[0]:.0f}–{band[1]:.0f}" if band[0] is not None and band[1] is not None else ""
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


def main(path: str, pairs: list[str]) -> None:
    with open(path) as f:
        rows = [json.loads(line) for line in f]
    mapping = dict(p.split("=", 1) for p in pairs)
    print(
        "| min | server | server page / sizing API | cluster card | cluster API | /metrics (server) | "
        "alerts open | breakdown held / stored (MB) |"
    )
    print("|---|---|---|---|---|---|---|---|")
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
            print(
                f"| {r['minute']} | {cluster} | {said(s['api'])} | {said(c['card'])} | {said(c['api'])} | "
                f"{metric((r.get('metrics') or {}).get(f'server {address}'))} | {al} | {bd} |"
            )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
