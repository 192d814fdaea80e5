"""Limits that hold under concurrency, against real PostgreSQL and Redis: the log-in limit is
taken atomically before the password check (16 concurrent guesses at one e-mail get at most 5
checks), sign-ups are counted per address before any password work, argon2 runs in a bounded
number of slots, and one API token or agent key gets a 429 with Retry-After past its rate. The
password check refuses the product's own name with a year and keyboard patterns."""

import random
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from conftest import PASSWORD, Account, bearer
from hitcurve.api.routes import auth as auth_routes
from hitcurve.core import security
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.crud import accounts as accounts_crud
from hitcurve.models import LoginAttempt
from hitcurve_testing.concurrency import all_at_once

GUESSES = 16


class Counted:
    """A wrapper counting calls, the most running at once, and holding each for `hold` seconds
    (so that the concurrent requests really overlap on this 2-core machine)."""

    def __init__(self, fn: Callable[..., Any], hold: float) -> None:
        self.fn, self.hold = fn, hold
        self.calls = self.running = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, *a: Any, **kw: Any) -> Any:
        with self.lock:
            self.calls += 1
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(self.hold)
            return self.fn(*a, **kw)
        finally:
            with self.lock:
                self.running -= 1


def _address() -> tuple[str, int]:
    return (f"198.51.{random.randrange(256)}.{random.randrange(1, 255)}", 40000)


def test_16_concurrent_guesses_get_at_most_5_password_checks(app, account: Account, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    limit = get_settings().login_max_failures_per_email
    assert limit == 5
    checks = Counted(auth_routes.verify_password, hold=0.3)
    monkeypatch.setattr(auth_routes, "verify_password", checks)

    def guess(i: int) -> int:
        with TestClient(app) as c:
            body = {"email": account.email, "password": f"wrong guess number {i}"}
            return c.post("/api/v1/auth/login", json=body).status_code

    codes = all_at_once(GUESSES, guess)
    assert checks.calls <= limit, (checks.calls, codes)
    assert sorted(codes) == [401] * checks.calls + [429] * (GUESSES - checks.calls), codes
    # the e-mail is locked now, the right password included, and it costs no check
    with TestClient(app) as c:
        r = c.post("/api/v1/auth/login", json={"email": account.email, "password": PASSWORD})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    assert checks.calls <= limit


def test_the_right_password_sent_while_wrong_guesses_are_checked_does_not_log_in(  # type: ignore[no-untyped-def]
    app, account: Account, monkeypatch
) -> None:
    """16 wrong guesses at once, and the right password while the first of them are still in
    their password check: the limit counts the guesses in flight, so the right one is refused
    without a check of its own (the limit counted only finished failures: it logged in)."""
    limit = get_settings().login_max_failures_per_email
    checks = Counted(auth_routes.verify_password, hold=1.5)
    monkeypatch.setattr(auth_routes, "verify_password", checks)

    def guess(i: int) -> int:
        with TestClient(app, client=_address()) as c:
            body = {"email": account.email, "password": f"wrong guess number {i}"}
            return c.post("/api/v1/auth/login", json=body).status_code

    with ThreadPoolExecutor(1) as waiter:
        wrong = waiter.submit(all_at_once, GUESSES, guess)
        deadline = time.monotonic() + 120
        while checks.running < min(limit, 2) and time.monotonic() < deadline:
            time.sleep(0.01)
        in_flight = checks.running
        with TestClient(app, client=_address()) as c:
            right = c.post("/api/v1/auth/login", json={"email": account.email, "password": PASSWORD})
        codes = wrong.result(timeout=180)
    assert in_flight >= 1, "no guess was in its password check when the right password was sent"
    assert right.status_code == 429, right.text
    assert checks.calls <= limit, (checks.calls, codes)
    assert codes.count(401) == checks.calls, codes


def test_password_work_runs_in_a_bounded_number_of_slots(app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(get_settings(), "password_workers", 2)
    security._password_slots.cache_clear()
    hasher = security._hasher()
    verify = Counted(hasher.verify, hold=0.2)

    class Slow:
        def __getattr__(self, name: str) -> Any:
            return verify if name == "verify" else getattr(hasher, name)

    monkeypatch.setattr(security, "_hasher", lambda: Slow())
    try:

        def login(i: int) -> int:
            with TestClient(app, client=_address()) as c:
                body = {"email": f"nobody{i}-{uuid.uuid4().hex[:6]}@example.com", "password": "not this one"}
                return c.post("/api/v1/auth/login", json=body).status_code

        codes = all_at_once(8, login)
    finally:
        security._password_slots.cache_clear()
    assert codes == [401] * 8, codes
    assert verify.calls == 8 and verify.most <= 2, (verify.calls, verify.most)


def test_a_flood_of_password_work_holds_few_request_threads(app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """2 slots and 2 waiting: while the 2 checks running are held, the other 12 of 16 concurrent
    log-ins are answered 503 busy at once instead of each holding a request thread for the wait
    (a 15 s flood of 50 connections held every thread: /health took 13 s); released, the 4
    answer 401."""
    monkeypatch.setattr(get_settings(), "password_workers", 2)
    monkeypatch.setattr(get_settings(), "password_queue", 2)
    monkeypatch.setattr(get_settings(), "password_wait_s", 120.0)
    security._password_slots.cache_clear()
    hasher = security._hasher()
    release = threading.Event()
    verify = Counted(lambda *a: release.wait(120) and hasher.verify(*a), hold=0)

    class Held:
        def __getattr__(self, name: str) -> Any:
            return verify if name == "verify" else getattr(hasher, name)

    monkeypatch.setattr(security, "_hasher", lambda: Held())
    answered: list[Any] = []
    emails = [f"flood{i}-{uuid.uuid4().hex[:6]}@example.com" for i in range(GUESSES)]

    def login(i: int) -> Any:
        with TestClient(app, client=_address()) as c:
            body = {"email": emails[i], "password": "not this one"}
            r = c.post("/api/v1/auth/login", json=body)
        answered.append(r)
        return r

    try:
        with ThreadPoolExecutor(1) as waiter:
            flood = waiter.submit(all_at_once, GUESSES, login)
            deadline = time.monotonic() + 120
            while len(answered) < GUESSES - 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            early = list(answered)
            running = verify.running
            release.set()
            codes = [r.status_code for r in flood.result(timeout=180)]
    finally:
        release.set()
        security._password_slots.cache_clear()
    assert len(early) == GUESSES - 4, f"{len(early)} answered while 2 checks were held"
    assert running == 2 and verify.most == 2, (running, verify.most)
    assert all(r.status_code == 503 and r.json()["code"] == "busy" for r in early), [r.text for r in early]
    assert all(int(r.headers["Retry-After"]) > 0 for r in early)
    assert sorted(codes) == [401] * 4 + [503] * (GUESSES - 4), codes
    # a log-in refused as busy had no guess checked: it counts toward no limit
    with get_sessionmaker()() as db:
        failed = db.execute(
            select(func.count()).where(LoginAttempt.email.in_(emails), LoginAttempt.succeeded.is_(False))
        ).scalar_one()
    assert failed == 4, failed


def test_signups_from_one_address_are_counted_before_any_password_work(app, inbox, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(get_settings(), "signup_max_per_ip_per_hour", 5)
    hashes = Counted(accounts_crud.hash_password, hold=0.2)
    monkeypatch.setattr(accounts_crud, "hash_password", hashes)
    where = _address()

    def signup(i: int) -> Any:
        with TestClient(app, client=where) as c:
            body = {
                "email": f"s{i}-{uuid.uuid4().hex[:8]}@example.com",
                "password": PASSWORD,
                "org_name": "Org",
            }
            return c.post("/api/v1/auth/signup", json=body)

    answers = all_at_once(GUESSES, signup)
    codes = [r.status_code for r in answers]
    assert codes.count(202) == 5 and codes.count(429) == GUESSES - 5, codes
    assert hashes.calls == 5, hashes.calls
    refused = next(r for r in answers if r.status_code == 429)
    assert refused.json()["code"] == "too_many_signups" and int(refused.headers["Retry-After"]) > 0


def test_an_api_token_past_its_rate_gets_429_with_retry_after(account: Account, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    token = account.api_token()
    monkeypatch.setattr(get_settings(), "api_token_rate_per_s", 0.1)
    monkeypatch.setattr(get_settings(), "api_token_burst", 5)
    codes, retry = [], []
    for _ in range(12):
        r = account.client.get("/api/v1/servers", headers=bearer(token))
        codes.append(r.status_code)
        if r.status_code == 429:
            retry.append(int(r.headers["Retry-After"]))
            assert r.json()["code"] == "rate_limited"
    assert codes[:5] == [200] * 5, codes
    assert codes[5:].count(429) >= 6 and min(retry) >= 1, codes
    # another token of the same organization has its own budget
    assert account.client.get("/api/v1/servers", headers=bearer(account.api_token())).status_code == 200


def test_an_agent_key_past_its_rate_gets_429_with_retry_after(account: Account, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    key = account.agent_key()
    monkeypatch.setattr(get_settings(), "agent_key_rate_per_s", 0.1)
    monkeypatch.setattr(get_settings(), "agent_key_burst", 3)
    codes = [
        account.client.post(
            "/api/v1/agent/snapshots",
            content=b"{}",
            headers={**bearer(key), "Content-Type": "application/json"},
        ).status_code
        for _ in range(8)
    ]
    assert codes[:3] == [422] * 3, codes
    assert codes.count(429) >= 4, codes


@pytest.mark.parametrize("password", ["hitcurve2026", "Hitcurve-2026", "qwertyuiop123", "1qaz2wsx3edc4rfv"])
def test_the_product_name_with_a_year_and_keyboard_patterns_are_refused(app, password: str) -> None:  # type: ignore[no-untyped-def]
    with TestClient(app, client=_address()) as c:
        body = {"email": f"p-{uuid.uuid4().hex[:8]}@example.com", "password": password, "org_name": "Org"}
        r = c.post("/api/v1/auth/signup", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "password"]
    assert "too easy to guess" in r.json()["detail"][0]["msg"], r.text
