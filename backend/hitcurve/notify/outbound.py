"""Outbound HTTP to addresses a customer typed in (notification channels): which targets are
allowed, and one POST that never follows a redirect.

A URL is refused unless it is http(s) with a host whose every resolved address is a public
unicast address: loopback, private (RFC 1918, fc00::/7), link-local (169.254/16, fe80::/10, the
cloud metadata address among them), multicast, unspecified, reserved and shared (100.64/10)
addresses would let a tenant make the service talk to its own network. The check runs when a
channel is saved and again before each send (a name may resolve elsewhere later). A self-hosted
install whose receivers live on the private network allows them in its install settings
(hitcurve.crud.install: an administrator, or the host's command, no restart) or with
HITCURVE_ALLOW_PRIVATE_WEBHOOKS=true.
Remaining gap: the client resolves the name once more when it connects, so a DNS answer that
changes between the check and the connection (rebinding within milliseconds) is not caught.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

MAX_URL_LENGTH = 2048
ERROR_BODY_CHARS = 300  # how much of a refusing receiver's answer the delivery log keeps


class BlockedTarget(ValueError):
    """The URL may not be called; the message says why, for the 422 answer."""


def _bad_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return _bad_address(ip.ipv4_mapped)
    for test, what in (
        (ip.is_loopback, "a loopback"),
        (ip.is_link_local, "a link-local"),
        (ip.is_multicast, "a multicast"),
        (ip.is_unspecified, "an unspecified"),
        (ip.is_private, "a private"),
        (ip.is_reserved, "a reserved"),
        (not ip.is_global, "a non-public"),
    ):
        if test:
            return what
    return None


def resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise BlockedTarget(f"the host {host!r} does not resolve ({exc})") from None
    return sorted({str(i[4][0]) for i in infos})


def check_url(url: str, *, allow_private: bool) -> str:
    """The URL as given when it may be called; BlockedTarget with the reason otherwise."""
    if len(url) > MAX_URL_LENGTH:
        raise BlockedTarget(f"the URL is longer than {MAX_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise BlockedTarget(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise BlockedTarget("the URL must start with https:// or http://")
    host = parts.hostname
    if not host:
        raise BlockedTarget("the URL has no host")
    if parts.username or parts.password:
        raise BlockedTarget("credentials in the URL are not accepted; use the channel's secret")
    if allow_private:
        return url
    addresses = resolve(host, port or (443 if parts.scheme == "https" else 80))
    for a in addresses:
        why = _bad_address(ipaddress.ip_address(a.split("%", 1)[0]))
        if why is not None:
            raise BlockedTarget(
                f"{host} resolves to {a}, {why} address: notifications may only go to public "
                "addresses (a self-hosted install's administrator can allow private ones on the "
                "alerts page, at once, or with HITCURVE_ALLOW_PRIVATE_WEBHOOKS=true)"
            )
    return url


@dataclass(frozen=True)
class Sent:
    ok: bool
    status_code: int | None
    error: str | None
    retryable: bool  # worth another attempt (5xx, 408, 429, network errors)


def post(url: str, body: bytes, headers: dict[str, str], *, timeout_s: float, allow_private: bool) -> Sent:
    """One POST; never raises, never follows redirects (a 3xx is a failure that names the target)."""
    try:
        check_url(url, allow_private=allow_private)
    except BlockedTarget as exc:
        return Sent(False, None, f"refused: {exc}", False)
    try:
        with httpx.Client(timeout=timeout_s, follow_redirects=False, trust_env=False) as client:
            r = client.post(url, content=body, headers={"Content-Type": "application/json", **headers})
    except httpx.HTTPError as exc:
        return Sent(False, None, f"{type(exc).__name__}: {exc}"[:ERROR_BODY_CHARS], True)
    if 200 <= r.status_code < 300:
        return Sent(True, r.status_code, None, False)
    text = r.text[:ERROR_BODY_CHARS].strip()
    where = f" to {r.headers.get('location')}" if 300 <= r.status_code < 400 else ""
    error = f"HTTP {r.status_code}{where}" + (f": {text}" if text else "")
    return Sent(False, r.status_code, error, r.status_code >= 500 or r.status_code in (408, 429))
