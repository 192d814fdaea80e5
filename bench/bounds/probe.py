"""Bounds and limits probed as an attacker would, against the API as `python -m hitcurve.serve`
starts it (one process, so its resident memory is the process's own), on a fresh database of the
running test instance, with the defaults a fresh install has:

- a 300 MiB log-in body sent in 1 MiB chunks (no Content-Length), alone and four at once: answer,
  what was sent before it, the process's resident memory before, at its peak and after;
- a 128 MiB header; `GET /%00`;
- 16 concurrent wrong guesses at one e-mail, then the right password: how many reached the password
  check (each 401 is one: a refused attempt answers 429 without one) and whether the right one
  logged in;
- 16 concurrent sign-ups from one address: how many were hashed (202) and refused (429);
  `hitcurve2026` and `Hitcurve-2026` as new passwords;
- one API token polled by 8 clients for 5 s: answers per second, 429s and their Retry-After (the
  token's rate set to 5/s, burst 10, where the code has the setting: this loaded machine answers
  fewer than the default 20/s of this route);
- 50 connections logging in for 15 s (random e-mails) while /health is polled: answers by status,
  /health's slowest answer, and how long after the flood the last answer came; from one address,
  then from many (X-Forwarded-For through a trusted proxy);
- the framing headers of the dashboard and the API.

    .venv/bin/python bench/bounds/probe.py [--code DIR]

--code serves another checkout (a `git worktree` of an older commit) with this repository's venv:
its backend on PYTHONPATH, its own migrations. Every loop is bounded in count and time; traffic
goes to 127.0.0.1 only. Prints one line per figure."""

import argparse
import contextlib
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from aiosmtpd.controller import Controller
from sqlalchemy import create_engine, text

from hitcurve_testing.concurrency import all_at_once

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery staple 7"  # noqa: S105 - the bench account's, on a scratch database
MIB = 1 << 20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Sink:
    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd API
        return "250 OK"


SEED = """
import sys
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.security import API_TOKEN_PREFIX, hash_password, new_secret, sha256_hex
from hitcurve.models import ApiToken, Membership, Organization, User
token = new_secret(API_TOKEN_PREFIX)
with get_sessionmaker()() as db:
    org = Organization(name="bounds")
    db.add(org)
    db.flush()
    user = User(email=sys.argv[1], display_name="Bounds", password_hash=hash_password(sys.argv[2]))
    db.add(user)
    db.flush()
    db.add(Membership(org_id=org.id, user_id=user.id, role="owner"))
    db.add(ApiToken(org_id=org.id, name="b", scope="read", prefix=token[:10], token_hash=sha256_hex(token)))
    db.commit()
print(token)
"""


class Api:
    def __init__(self, code: Path, env: dict[str, str]) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hitcurve.serve", "--port", str(self.port), "--log-level", "warning"],
            env=env,
            cwd=code,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(self.url + "/api/v1/health", timeout=2).status_code in (200, 503):
                    return
            except httpx.TransportError:
                pass
            assert self.proc.poll() is None and time.monotonic() < deadline, "the API did not start"
            time.sleep(0.2)

    def rss(self) -> int:
        with open(f"/proc/{self.proc.pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.log.close()


class Peak:
    """The process's largest resident memory while the block runs (sampled every 50 ms)."""

    def __init__(self, api: Api) -> None:
        self.api, self.most, self.stop = api, 0, threading.Event()

    def __enter__(self) -> "Peak":
        def sample() -> None:
            while not self.stop.is_set():
                self.most = max(self.most, self.api.rss())
                time.sleep(0.05)

        self.thread = threading.Thread(target=sample, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def _exchange(
    api: Api, head: bytes, pieces: Iterator[bytes], limit_s: float = 180
) -> tuple[bytes, int, float]:
    """Send head then pieces until the server answers or closes; (answer, bytes sent, seconds)."""
    started = time.monotonic()
    sock = socket.create_connection(("127.0.0.1", api.port), timeout=limit_s)
    got = bytearray()
    done = threading.Event()

    def read() -> None:
        try:
            while chunk := sock.recv(65536):
                got.extend(chunk)
                if b"\r\n\r\n" in got:
                    break
        except OSError:
            pass
        done.set()

    threading.Thread(target=read, daemon=True).start()
    sent = 0
    try:
        sock.sendall(head)
        sent += len(head)
        for piece in pieces:
            if done.is_set() or time.monotonic() - started > limit_s:
                break
            sock.sendall(piece)
            sent += len(piece)
    except OSError:
        pass
    done.wait(max(1.0, limit_s - (time.monotonic() - started)))
    sock.close()
    return bytes(got), sent, time.monotonic() - started


def _status(answer: bytes) -> str:
    return answer[9:12].decode() if answer.startswith(b"HTTP/1.1 ") else "no answer"


def _chunked_login_body(total: int) -> tuple[bytes, Iterator[bytes]]:
    head = (
        b"POST /api/v1/auth/login HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    piece = b" " * MIB

    def pieces() -> Iterator[bytes]:
        yield b"%x\r\n" % (len(piece) + 1) + b"[" + piece + b"\r\n"
        for _ in range(total // MIB - 1):
            yield b"%x\r\n" % len(piece) + piece + b"\r\n"
        yield b"0\r\n\r\n"

    return head, pieces()


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"


def probe_bodies(api: Api) -> None:
    before = api.rss()
    with Peak(api) as peak:
        answer, sent, took = _exchange(api, *_chunked_login_body(300 * MIB))
    time.sleep(1)
    print(
        f"300 MiB log-in body: {_status(answer)} after {took:.2f} s, {sent / MIB:,.0f} MiB sent; "
        f"RSS {_mb(before)} -> peak {_mb(peak.most)} -> {_mb(api.rss())} after"
    )
    before = api.rss()
    with Peak(api) as peak, ThreadPoolExecutor(4) as pool:
        four = list(pool.map(lambda _: _exchange(api, *_chunked_login_body(300 * MIB)), range(4)))
    time.sleep(1)
    print(
        f"4 x 300 MiB at once: {sorted(_status(a) for a, _, _ in four)}, "
        f"slowest {max(t for *_, t in four):.2f} s; "
        f"RSS {_mb(before)} -> peak {_mb(peak.most)} -> {_mb(api.rss())} after"
    )
    before = api.rss()
    head = b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\nX-Big: "
    with Peak(api) as peak:
        answer, sent, took = _exchange(api, head, iter([b"a" * MIB] * 128 + [b"\r\n\r\n"]))
    print(
        f"128 MiB header: {_status(answer)} after {took:.2f} s, {sent / MIB:,.0f} MiB sent; "
        f"RSS {_mb(before)} -> peak {_mb(peak.most)} -> {_mb(api.rss())} after"
    )
    r = httpx.get(api.url + "/%00", timeout=30)
    print(f"GET /%00: {r.status_code}")


def probe_login_race(api: Api, email: str) -> None:
    def guess(i: int) -> int:
        body = {"email": email, "password": f"wrong guess {i}"}
        return httpx.post(api.url + "/api/v1/auth/login", json=body, timeout=120).status_code

    def right() -> int:
        body = {"email": email, "password": PASSWORD}
        return httpx.post(api.url + "/api/v1/auth/login", json=body, timeout=120).status_code

    with ThreadPoolExecutor(1) as waiter:
        wrong = waiter.submit(all_at_once, 16, guess)
        time.sleep(0.3)  # the guesses are in their password check (argon2: 0.1-1 s each here)
        during = right()
        codes = Counter(wrong.result())
    after = right()
    print(
        f"16 concurrent wrong guesses: {codes[401]} reached the password check (401), {codes[429]} refused "
        f"(429), others {dict((k, v) for k, v in codes.items() if k not in (401, 429))}; the right password "
        f"0.3 s after they started: {during}, once they were answered: {after} (200: logged in)"
    )


def probe_signups(api: Api) -> None:
    for weak in ("hitcurve2026", "Hitcurve-2026"):
        body = {"email": f"w-{uuid.uuid4().hex[:8]}@example.com", "password": weak, "org_name": "Org"}
        r = httpx.post(api.url + "/api/v1/auth/signup", json=body, timeout=120)
        print(f"sign-up with the password {weak!r}: {r.status_code}")

    def signup(i: int) -> int:
        body = {"email": f"s{i}-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD, "org_name": "Org"}
        return httpx.post(api.url + "/api/v1/auth/signup", json=body, timeout=120).status_code

    codes = Counter(all_at_once(16, signup))
    print(f"16 concurrent sign-ups from one address: {dict(sorted(codes.items()))} (a 202 hashed one)")


def probe_token_rate(api: Api, token: str, seconds: float = 5.0) -> None:
    codes: Counter[int] = Counter()
    retry: list[str] = []
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def poll(_: int) -> None:
        with httpx.Client(base_url=api.url, timeout=30, headers={"Authorization": f"Bearer {token}"}) as c:
            while time.monotonic() < end:
                r = c.get("/api/v1/servers")
                with lock:
                    codes[r.status_code] += 1
                    if r.status_code == 429:
                        retry.append(r.headers.get("Retry-After", "none"))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(poll, range(8)))
    ok = codes[200]
    print(
        f"one API token, 8 clients for {seconds:g} s: {sum(codes.values()) / seconds:.0f} requests/s, "
        f"{ok} answered 200 ({ok / seconds:.0f}/s), {codes[429]} 429 (Retry-After {sorted(set(retry))[:3]}), "
        f"others {dict((k, v) for k, v in codes.items() if k not in (200, 429))}"
    )


def probe_flood(api: Api, seconds: float = 15.0, clients: int = 50, many: bool = False) -> None:
    """many: each log-in from another client address, as a proxy the API trusts (127.0.0.1 here)
    names it in X-Forwarded-For: the per-address limit then holds none back, every attempt until
    the global limit reaches the password work. The addresses are header values only (198.18/15,
    the benchmarking range): all traffic goes to 127.0.0.1."""
    codes: Counter[str] = Counter()
    health: list[float] = []
    lock = threading.Lock()
    end = time.monotonic() + seconds
    last_answer = [0.0]

    def flood(_: int) -> None:
        with httpx.Client(base_url=api.url, timeout=120) as c:
            while time.monotonic() < end:
                body = {"email": f"f-{random.randrange(10**9)}@example.com", "password": "not the password"}
                ip = f"198.{18 + random.randrange(2)}.{random.randrange(256)}.{random.randrange(1, 255)}"
                headers = {"X-Forwarded-For": ip} if many else {}
                try:
                    code = str(c.post("/api/v1/auth/login", json=body, headers=headers).status_code)
                except httpx.HTTPError as exc:
                    code = type(exc).__name__
                with lock:
                    codes[code] += 1
                    last_answer[0] = time.monotonic()

    def monitor() -> None:
        while time.monotonic() < end + 5:
            t = time.monotonic()
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(api.url + "/api/v1/health", timeout=120)
            health.append(time.monotonic() - t)
            time.sleep(0.25)

    watcher = threading.Thread(target=monitor)
    watcher.start()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(flood, range(clients)))
    watcher.join()
    print(
        f"{clients} connections logging in for {seconds:g} s from "
        f"{'many addresses' if many else 'one address'}: "
        f"{dict(sorted(codes.items()))}; last answer "
        f"{last_answer[0] - end:.1f} s after the flood's end; /health n={len(health)}, "
        f"p50 {sorted(health)[len(health) // 2] * 1000:.0f} ms, max {max(health) * 1000:.0f} ms"
    )


def probe_headers(api: Api) -> None:
    for path in ("/", "/api/v1/health"):
        r = httpx.get(api.url + path, timeout=30)
        csp = r.headers.get("content-security-policy", "none")
        print(f"GET {path}: X-Frame-Options {r.headers.get('x-frame-options', 'none')}, CSP {csp[:60]}...")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--flood-s", type=float, default=15.0)
    args = parser.parse_args()
    code = args.code.resolve()
    base, redis_base = os.environ["HITCURVE_DATABASE_URL"].rsplit("/", 1)[0], os.environ["HITCURVE_REDIS_URL"]
    name = f"hitcurve_bounds_{os.getpid()}"
    engine = create_engine(base + "/postgres", isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    smtp_port = _free_port()
    sink = Controller(Sink(), hostname="127.0.0.1", port=smtp_port)
    sink.start()
    env = {
        **os.environ,
        "PYTHONPATH": str(code / "backend"),
        "HITCURVE_DATABASE_URL": f"{base}/{name}",
        "HITCURVE_REDIS_URL": redis_base.rsplit("/", 1)[0] + "/13",
        "HITCURVE_API_WORKERS": "1",
        "HITCURVE_FRONTEND_DIST": str(ROOT / "frontend" / "dist"),
        "HITCURVE_SMTP_HOST": "127.0.0.1",
        "HITCURVE_SMTP_PORT": str(smtp_port),
        "HITCURVE_API_TOKEN_RATE_PER_S": "5",
        "HITCURVE_API_TOKEN_BURST": "10",
        "HITCURVE_TRUSTED_PROXIES": "127.0.0.1",
    }
    api = None
    try:
        subprocess.run([str(ROOT / ".venv/bin/alembic"), "upgrade", "head"], cwd=code, env=env, check=True,
                       capture_output=True)
        email = f"owner-{uuid.uuid4().hex[:8]}@example.com"
        token = subprocess.run([sys.executable, "-c", SEED, email, PASSWORD], cwd=code, env=env, check=True,
                               capture_output=True, text=True).stdout.strip()
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=code, capture_output=True, text=True
        )
        print(f"== code {head.stdout.strip()} ({code}), load {os.getloadavg()[0]:.1f} at the start")
        api = Api(code, env)
        for _ in range(3):  # the routes built and a log-in's first imports paid before measuring
            httpx.post(api.url + "/api/v1/auth/login", json={"email": "x@example.com", "password": "y" * 12},
                       timeout=60)
        probe_headers(api)
        probe_bodies(api)
        probe_login_race(api, email)
        probe_signups(api)
        probe_token_rate(api, token)
        probe_flood(api, args.flood_s)
        probe_flood(api, args.flood_s, many=True)
        print(f"== load {os.getloadavg()[0]:.1f} at the end")
    finally:
        if api is not None:
            api.stop()
        sink.stop()
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()
        import redis

        redis.Redis.from_url(env["HITCURVE_REDIS_URL"]).flushdb()


if __name__ == "__main__":
    main()
