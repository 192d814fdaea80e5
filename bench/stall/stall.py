"""Stall benchmark driver: 8 processes send the worst uploads (uploads.py) in a loop while one
autoscaler polls the sizing API and a monitor polls /health, and four viewers read the breakdown of
a server whose stored uploads are poisoned (stored.py); one more process posts 300 MiB bodies to
the log-in route. Prints latency percentiles next to the targets (sizing p99 < 100 ms,
/health < 1 s) and the API processes' resident memory before and after.

    stall.py BASE_URL DURATION_S    (environment: BENCH_TOKEN, BENCH_AGENT_KEY, BENCH_SERVER_ID,
                                     BENCH_API_PID: the server's pid, for its processes' memory)
"""

import multiprocessing as mp
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator

import httpx

CLIENTS = 8


def _uploader(
    base: str, key: str, until: float, bodies: list[tuple[str, str, bytes]], q: "mp.Queue[object]"
) -> None:
    codes: Counter[str] = Counter()
    slowest: dict[str, float] = {}
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
    }
    with httpx.Client(base_url=base, timeout=30) as c:
        i = 0
        while time.monotonic() < until:
            name, path, body = bodies[i % len(bodies)]
            i += 1
            t = time.monotonic()
            try:
                r = c.post(path, content=body, headers=headers)
                codes[f"{name} {r.status_code}"] += 1
            except httpx.HTTPError as exc:
                codes[f"{name} {type(exc).__name__}"] += 1
            slowest[name] = max(slowest.get(name, 0.0), time.monotonic() - t)
    q.put((dict(codes), slowest))


LOGIN_BODY = 300 << 20


def _login_bodies(base: str, until: float, q: "mp.Queue[object]") -> None:
    """POSTs of a 300 MiB JSON body to /auth/login, streamed in 1 MiB pieces, one after another."""
    codes: Counter[str] = Counter()
    slowest = 0.0
    piece = b" " * (1 << 20)

    def body() -> Iterator[bytes]:
        yield b'{"email": "a@example.com", "password": "'
        for _ in range(LOGIN_BODY >> 20):
            yield piece
        yield b'"}'

    with httpx.Client(base_url=base, timeout=60) as c:
        while time.monotonic() < until:
            t = time.monotonic()
            try:
                r = c.post("/api/v1/auth/login", content=body(), headers={"Content-Type": "application/json"})
                codes[f"login-300MiB {r.status_code}"] += 1
            except httpx.HTTPError as exc:
                codes[f"login-300MiB {type(exc).__name__}"] += 1
            slowest = max(slowest, time.monotonic() - t)
    q.put((dict(codes), {"login-300MiB": slowest}))


def api_rss_mb() -> float | None:
    """Resident memory of the API server and every process under it (uvicorn workers, decoders)."""
    root = os.environ.get("BENCH_API_PID")
    if not root:
        return None
    children: dict[str, list[str]] = {}
    rss: dict[str, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{d}/statm") as f:
                rss[d] = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(d)
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, []))
    return total / 2**20


def _poll(
    url: str,
    headers: dict[str, str],
    until: float,
    out: list[float],
    pause: float,
    when: list[float] | None = None,
) -> None:
    with httpx.Client(timeout=30, headers=headers) as c:
        while time.monotonic() < until:
            t = time.monotonic()
            try:
                r = c.get(url)
                assert r.status_code in (200, 503), r.text
            except httpx.TimeoutException:
                pass  # counted with its full wait: the client gave up after the timeout
            out.append(time.monotonic() - t)
            if when is not None:
                when.append(t)
            time.sleep(pause)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs) or [float("nan")]
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] * 1000


def main() -> None:
    base, duration = sys.argv[1], float(sys.argv[2])
    sys.path.insert(0, os.path.dirname(__file__))
    from stored import poison, viewers
    from uploads import inflating_uploads, nan_scan_uploads, worst_uploads

    bodies = worst_uploads() + inflating_uploads() + nan_scan_uploads()
    token_s = os.environ["BENCH_TOKEN"]
    poisoned = poison(base, os.environ["BENCH_AGENT_KEY"], token_s, os.environ["HITCURVE_DATABASE_URL"])
    print(f"  stored: a server with poisoned stored uploads ({poisoned}), its breakdown viewed meanwhile")
    for name, _, body in bodies:
        print(f"  upload {name}: {len(body)} bytes gzip")
    sizing_url = f"{base}/api/v1/sizing/servers/{os.environ['BENCH_SERVER_ID']}/memory?target_hit_ratio=0.9"
    token = {"Authorization": f"Bearer {os.environ['BENCH_TOKEN']}"}
    # quiet baseline first: the same polls with no uploads
    quiet: list[float] = []
    _poll(sizing_url, token, time.monotonic() + 5, quiet, 0.02)
    until = time.monotonic() + duration
    q: mp.Queue[object] = mp.Queue()
    procs = [
        mp.Process(
            target=_uploader,
            args=(
                base,
                os.environ["BENCH_AGENT_KEY"],
                until,
                bodies[i % len(bodies) :] + bodies[: i % len(bodies)],
                q,
            ),
        )
        for i in range(CLIENTS)
    ]
    procs.append(mp.Process(target=_login_bodies, args=(base, until, q)))
    rss_before = api_rss_mb()
    for p in procs:
        p.start()
    view_threads, views = viewers(base, token_s, poisoned, until)
    sizing: list[float] = []
    sizing_at: list[float] = []
    health: list[float] = []
    began = time.monotonic()
    threads = [
        threading.Thread(target=_poll, args=(sizing_url, token, until, sizing, 0.02, sizing_at)),
        threading.Thread(target=_poll, args=(f"{base}/api/v1/health", {}, until, health, 0.25)),
    ]
    for t in threads:
        t.start()
    for t in threads + view_threads:
        t.join()
    codes: Counter[str] = Counter()
    slowest: dict[str, float] = {}
    for _ in procs:
        c, s = q.get(timeout=300)
        codes.update(c)
        for k, v in s.items():
            slowest[k] = max(slowest.get(k, 0.0), v)
    for p in procs:
        p.join()
    rss_after = api_rss_mb()
    print(
        f"== {CLIENTS} clients sending the worst uploads and one the 300 MiB log-in bodies for {duration:g} s"
    )
    for k, v in sorted(codes.items()):
        print(f"  {k}: {v} answers (slowest {slowest[k.rsplit(' ', 1)[0]]:.2f} s)")
    print(f"== sizing poll, quiet: n={len(quiet)} p50={pct(quiet, 50):.1f} ms p99={pct(quiet, 99):.1f} ms")
    print(
        f"== sizing poll under the uploads: n={len(sizing)} p50={pct(sizing, 50):.1f} ms "
        f"p99={pct(sizing, 99):.1f} ms max={pct(sizing, 100):.1f} ms   (target p99 < 100 ms; "
        f"{sum(x >= 30 for x in sizing)} gave up after 30 s)"
    )
    slowest = sorted(zip(sizing, sizing_at, strict=True), reverse=True)[:5]
    print(
        "   slowest sizing answers (ms @ s after the uploads began): "
        + ", ".join(f"{d * 1000:.0f} @ {t - began:.1f}" for d, t in slowest)
    )
    print(
        f"== /health under the uploads: n={len(health)} p50={pct(health, 50):.1f} ms "
        f"p99={pct(health, 99):.1f} ms max={pct(health, 100):.1f} ms   (target < 1000 ms)"
    )
    print(
        f"== breakdown views of the poisoned server: n={len(views)} p50={pct(views, 50):.1f} ms "
        f"max={pct(views, 100):.1f} ms"
    )
    if rss_before is not None and rss_after is not None:
        print(f"== API processes' resident memory: {rss_before:.0f} MB before, {rss_after:.0f} MB after")


if __name__ == "__main__":
    main()
