"""Signed single-purpose tokens for links that work without a session (the weekly report's
unsubscribe link, and its recipient's confirmation link): base64url(purpose-free payload) "."
base64url(HMAC-SHA256(key, purpose|payload)). The purpose is inside the MAC and never in the
token, so a token made for one purpose is refused for any other. No expiry: an unsubscribe link in
an old e-mail keeps working."""

from __future__ import annotations

import base64
import hashlib
import hmac

from hitcurve.core.config import get_settings

UNSUBSCRIBE_REPORT = "report-unsubscribe"
# A report recipient's consent: the subscription and the address it was mailed to, so a link
# mailed to an address the subscription no longer has confirms nothing.
CONFIRM_REPORT = "report-confirm"


def _key() -> bytes:
    s = get_settings()
    if s.secret_key is not None and s.secret_key.get_secret_value():
        return s.secret_key.get_secret_value().encode()
    return hashlib.sha256(b"hitcurve signing key v1\0" + s.database_url.encode()).digest()


def _b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def _unb64(s: str) -> bytes:
    """Strict: only the canonical spelling decodes. base64 leaves spare bits in a final partial
    character, so several spellings decode to the same bytes; accepting them would let an altered
    link (one spare bit flipped) pass the MAC check."""
    b = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    if _b64(b) != s:
        raise ValueError("non-canonical base64")
    return b


def _mac(purpose: str, payload: bytes) -> bytes:
    return hmac.new(_key(), purpose.encode() + b"\0" + payload, hashlib.sha256).digest()


def sign(purpose: str, value: str) -> str:
    payload = value.encode()
    return f"{_b64(payload)}.{_b64(_mac(purpose, payload))}"


def unsign(purpose: str, token: str) -> str | None:
    """The value signed for `purpose`, or None for a token that is malformed, altered or made for
    another purpose (or with another key)."""
    if len(token) > 512 or token.count(".") != 1:
        return None
    head, tail = token.split(".")
    try:
        payload, mac = _unb64(head), _unb64(tail)
    except (ValueError, TypeError):
        return None
    if not hmac.compare_digest(mac, _mac(purpose, payload)):
        return None
    try:
        return payload.decode()
    except UnicodeDecodeError:
        return None
