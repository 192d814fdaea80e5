"""The first minutes of a Hitcurve install, as an operator reads them: once a minute, what the
sizing API, the cluster list (the cluster card's body), the alerts, /metrics, memcached itself
and the breakdown say for every server and cluster, one JSON line each, plus a one-line summary.

    first_minutes.py own API_URL RUN_DIR MC_ADDRESS CLUSTER
        log in as the demo owner, make a read API token (RUN_DIR/read.token), a cluster CLUSTER
        (target 90 %) and an agent key, and write the Agents page's foreground install block for
        MC_ADDRESS, its key filled in, to RUN_DIR/own-agent.sh (run it to start the agent)
    first_minutes.py assign API_URL MC_ADDRESS CLUSTER
        wait for MC_ADDRESS's server to register, then put it into CLUSTER
    first_minutes.py poll API_URL RUN_DIR OUT.jsonl MINUTES MC_ADDRESS...
        every 60 s for MINUTES minutes, append one JSON line per minute to OUT.jsonl

Reads through the public API only (the demo owner's session; /metrics with the read token), and
memcached's own `stats` for what it stores. Measurement, not a test: the result file interprets it.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from demo_setup import EMAIL, PASSWORD  # noqa: E402  (the demo owner make demo creates)


def session(api: str) -> httpx.Client:
    c = httpx.Client(base_url=api.rstrip("/") + "/api/v1", timeout=60)
    r = c.post("/auth/login", json={"email": EMAIL, "password": PASSWORD})
    r.raise_for_status()
    c.headers["X-CSRF-Token"] = r.json()["csrf_token"]
    return c


def own(api: str, run_dir: Path, address: str, cluster: str) -> None:
    c = session(api)
    tok = c.post("/api-tokens", json={"name": "first-minutes", "scope": "read"}).raise_for_status().json()
    (run_dir / "read.token").write_text(tok["token"] + "\n")
    names = {x["name"] for x in c.get("/clusters").raise_for_status().json()}
    if cluster not in names:
        c.post(
            "/clusters", json={"name": cluster, "target_hit_ratio": 0.9, "price_per_gb_month": 4.0}
        ).raise_for_status()
    key = c.post("/agent-keys", json={"name": f"own {address}"}).raise_for_status().json()["key"]
    block = c.get("/agent-install", params={"variant": "foreground", "memcached": address})
    text = block.raise_for_status().json()
    script, placeholder = text["text"], text["key_placeholder"]
    if placeholder not in script:
        sys.exit(f"no key placeholder in the install block: {json.dumps(text)[:2000]}")
    (run_dir / "own-agent.sh").write_text(script.replace(placeholder, key))
    print(f"wrote {run_dir / 'own-agent.sh'}")


def assign(api: str, address: str, cluster: str) -> None:
    c = session(api)
    cid = next(x["id"] for x in c.get("/clusters").raise_for_status().json() if x["name"] == cluster)
    for _ in range(400):
        for s in c.get("/servers").raise_for_status().json():
            if s["address"] == address:
                c.patch(f"/servers/{s['id']}", json={"cluster_id": cid}).raise_for_status()
                print(f"{address} is in {cluster}")
                return
        time.sleep(3)
    sys.exit(f"{address} did not register")


def mc_stats(address: str) -> dict[str, str]:
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"stats\r\n")
        buf = b""
        while not buf.endswith(b"END\r\n"):
            part = s.recv(65536)
            if not part:
                break
            buf += part
    return dict(re.findall(r"STAT (\S+) (\S+)", buf.decode()))


METRIC = re.compile(r"^(hitcurve_(?:server|cluster)_[a-z_]+)\{([^}]*)\} (\S+)$")
WANTED = (
    "target_known",
    "recommended_memory_limit_bytes",
    "memory_short",
    "memory_at_edge",
    "warming_up",
    "memory_limit_bytes",
    "target_reachable",
)


def metrics(api: str, token: str) -> dict[str, dict[str, float]]:
    r = httpx.get(api.rstrip("/") + "/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=60)
    out: dict[str, dict[str, float]] = {}
    for line in r.text.splitlines():
        m = METRIC.match(line)
        if not m:
            continue
        name, labels, value = m.groups()
        short = name.split("_", 2)[2]
        if short not in WANTED:
            continue
        lab = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        who = lab.get("server") or lab.get("cluster") or "?"
        out.setdefault(f"{name.split('_')[1]} {who}", {})[short] = float(value)
    return out


def answer_view(a: dict[str, Any]) -> dict[str, Any]:
    mib = 1 << 20
    band = a.get("band") or {}

    def m(v: Any) -> float | None:
        return None if v is None else round(v / mib, 1)

    return {
        "status": a["status"],
        "m_to_set": m(a.get("recommended_memory_limit_bytes")),
        "m_window": m(a.get("memory_limit_bytes")),
        "at_least": m(a.get("memory_bytes_at_least")),
        "band_m": [m(band.get("memory_limit_bytes_min")), m(band.get("memory_limit_bytes_max"))],
        "memory_state": a.get("memory_state"),
        "words": a.get("memory_state_words"),
        "unknown_until": a.get("unknown_until"),
        "fill": a.get("fill_ratio"),
        "measured": (a.get("curve") or {}).get("measured_hit_ratio"),
        "message": a.get("message"),
    }


def poll(api: str, run_dir: Path, out: Path, minutes: int, addresses: list[str]) -> None:
    token = (run_dir / "read.token").read_text().strip()
    c = session(api)
    t0 = time.monotonic()
    for minute in range(minutes + 1):
        row: dict[str, Any] = {"minute": minute, "at": time.strftime("%H:%M:%S", time.gmtime())}
        try:
            clusters = c.get("/clusters").raise_for_status().json()
            servers = c.get("/servers").raise_for_status().json()
            targets = {x["id"]: x["target_hit_ratio"] for x in clusters}
            row["clusters"] = {}
            for x in clusters:
                card = x.get("target_answer")
                r = c.get(f"/sizing/clusters/{x['id']}/memory")
                row["clusters"][x["name"]] = {
                    "card": answer_view(card) if card else None,
                    "card_status": x.get("status"),
                    "open_alerts": x.get("open_alerts"),
                    "api": answer_view(r.json()) if r.status_code == 200 else r.status_code,
                }
            row["servers"] = {}
            for s in servers:
                t = targets.get(s.get("cluster_id"), 0.9)
                r = c.get(f"/sizing/servers/{s['id']}/memory", params={"target_hit_ratio": t})
                b = c.get(f"/servers/{s['id']}/breakdown")
                held = stored = None
                if b.status_code == 200:
                    bj = b.json()
                    held, stored = sum(p["bytes"] for p in bj["prefixes"]), bj.get("stored_bytes")
                    none = [p for p in bj["prefixes"] if p["prefix"] in ("", "(none)")]
                else:
                    none = []
                row["servers"][s["address"]] = {
                    "status": s.get("status"),
                    "api": answer_view(r.json()) if r.status_code == 200 else r.status_code,
                    "breakdown_held": held,
                    "breakdown_stored": stored,
                    "breakdown_none_bytes": sum(p["bytes"] for p in none) if none else 0,
                }
            row["alerts"] = [
                {k: a.get(k) for k in ("kind", "severity", "state", "message", "first_seen_at")}
                for a in c.get("/alerts").raise_for_status().json()
            ]
            row["metrics"] = metrics(api, token)
        except (httpx.HTTPError, KeyError, ValueError) as e:
            row["error"] = repr(e)
        row["memcached"] = {}
        for a in addresses:
            try:
                st = mc_stats(a)
                row["memcached"][a] = {
                    k: int(st[k]) for k in ("bytes", "limit_maxbytes", "evictions", "curr_items") if k in st
                }
            except OSError as e:
                row["memcached"][a] = repr(e)
        with out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(summary(row), flush=True)
        if minute < minutes:
            time.sleep(max(0.0, t0 + 60 * (minute + 1) - time.monotonic()))


def summary(row: dict[str, Any]) -> str:
    parts = [f"min {row['minute']:>2} {row['at']}"]
    for name, x in (row.get("servers") or {}).items():
        a = x["api"] if isinstance(x["api"], dict) else {"status": x["api"]}
        parts.append(f"{name}: {a.get('status')} -m {a.get('m_to_set')} {a.get('memory_state')}")
    parts.append(f"open alerts {sum(1 for a in row.get('alerts', []) if a['state'] == 'open')}")
    return " | ".join(parts)


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "own" and len(sys.argv) == 6:
        own(sys.argv[2], Path(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif cmd == "assign" and len(sys.argv) == 5:
        assign(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "poll" and len(sys.argv) >= 7:
        poll(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5]), sys.argv[6:])
    else:
        sys.exit(__doc__)
