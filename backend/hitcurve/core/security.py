"""Passwords (argon2id), high-entropy secrets for sessions, keys and tokens (stored as SHA-256)."""

import hashlib
import hmac
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from zxcvbn import zxcvbn

from hitcurve.core.config import get_settings
from hitcurve.core.domain import Invalid, Unavailable

AGENT_KEY_PREFIX = "hca_"
API_TOKEN_PREFIX = "hct_"  # noqa: S105 - a type prefix, not a secret


@lru_cache
def _hasher() -> PasswordHasher:
    """argon2id; the defaults are RFC 9106's second recommended option (64 MiB, t=3, p=4)."""
    s = get_settings()
    return PasswordHasher(
        time_cost=s.argon2_time_cost,
        memory_cost=s.argon2_memory_kib,
        parallelism=s.argon2_parallelism,
        hash_len=32,
        salt_len=16,
        type=Type.ID,
    )


@lru_cache
def _dummy_hash() -> str:
    """A valid hash of a random password, verified when the e-mail is unknown so timing does not tell."""
    return _hasher().hash(secrets.token_urlsafe(16))


@lru_cache
def _password_slots() -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(get_settings().password_workers)


_waiting_lock = threading.Lock()
_waiting = 0  # password work of this process waiting for a slot


def _busy() -> Unavailable:
    return Unavailable("busy", "too many log-ins and sign-ups at once; retry shortly", retry_after_s=5)


@contextmanager
def password_slot() -> Iterator[None]:
    """One of this process's Settings.password_workers slots for argon2 work (64 MiB and tens of
    milliseconds of a core each). A flood of log-ins or sign-ups never runs dozens at once
    (memory, CPU) nor holds the API's request threads, which every other route (a sizing poll,
    /health) runs in: at most Settings.password_queue wait for a slot, each at most
    Settings.password_wait_s; past either, 503 busy with Retry-After. So password work holds at
    most password_workers + password_queue threads of a process, whatever arrives."""
    global _waiting
    s = get_settings()
    slots = _password_slots()
    if not slots.acquire(blocking=False):
        with _waiting_lock:
            if _waiting >= s.password_queue:
                raise _busy()
            _waiting += 1
        try:
            got = slots.acquire(timeout=s.password_wait_s)
        finally:
            with _waiting_lock:
                _waiting -= 1
        if not got:
            raise _busy()
    try:
        yield
    finally:
        slots.release()


def hash_password(password: str) -> str:
    with password_slot():
        return _hasher().hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    with password_slot():
        try:
            return _hasher().verify(password_hash or _dummy_hash(), password) and password_hash is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False


# The product's own name counts as a known word, as the user's e-mail and name do: zxcvbn then
# scores "hitcurve2026" or "Hitcurve-2026" as a dictionary word plus a year (a few hundred guesses).
PRODUCT_WORDS = ("hitcurve", "hit curve", "memcached")

# zxcvbn looks at this many leading characters (its own limit: its matching is quadratic); a
# longer password is as strong as its start at least.
_STRENGTH_PREFIX = 72


def password_problem(password: str, user_inputs: tuple[str, ...] = ()) -> str | None:
    """Why a new password is refused, or None. zxcvbn (bundled lists, no network): its frequency
    lists hold the common and breached passwords (the top of the leaked-password corpora), plus
    dictionary words, names, keyboard patterns, repeats, sequences and dates; user_inputs (e-mail,
    name) and the product's own name (PRODUCT_WORDS) count as known words too. Refused below
    Settings.password_min_score."""
    if not password.strip():
        return "the password must not be blank"
    words = [w for u in user_inputs for w in (u, u.split("@")[0]) if w] + list(PRODUCT_WORDS)
    result = zxcvbn(password[:_STRENGTH_PREFIX], user_inputs=words)
    if result["score"] >= get_settings().password_min_score:
        return None
    fb = result.get("feedback") or {}
    hint = " ".join(x for x in [fb.get("warning") or "", *(fb.get("suggestions") or [])] if x)
    why = "this password is too easy to guess (a common or breached password, or a simple pattern)."
    return f"{why} {hint}".strip()


def new_secret(prefix: str = "") -> str:
    """A 256-bit random secret, URL-safe, with an optional type prefix (hca_, hct_)."""
    return prefix + secrets.token_urlsafe(32)


def sha256_hex(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def refuse_weak(password: str, field: str, *user_inputs: str) -> None:
    """422 located at the field when the password contains the user's own e-mail or name or is
    otherwise guessable (the schema already refused the generally weak ones)."""
    problem = password_problem(password, tuple(u for u in user_inputs if u))
    if problem:
        raise Invalid("invalid_request", [{"loc": ["body", field], "msg": problem, "type": "weak_password"}]
        )
