"""Passwords (argon2id), high-entropy secrets for sessions, keys and tokens (stored as SHA-256)."""

import hashlib
import hmac
import secrets
from functools import lru_cache

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from hitcurve.core.config import get_settings

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


def hash_password(password: str) -> str:
    return _hasher().hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    try:
        return _hasher().verify(password_hash or _dummy_hash(), password) and password_hash is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def new_secret(prefix: str = "") -> str:
    """A 256-bit random secret, URL-safe, with an optional type prefix (hca_, hct_)."""
    return prefix + secrets.token_urlsafe(32)


def sha256_hex(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())
