"""Every route bounded, against the API as the scripts start it (live_api): a body over the limit
is a 413 on every route, with or without Content-Length, before the route or its authentication
runs, and reading it does not grow the process; a header too large is refused while it arrives;
a client that sends its headers or body too slowly is cut off; a NUL in the path is a 400."""

import socket
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

import httpx
import pytest
from live_api import LiveApi, live_api

pytestmark = pytest.mark.live  # an API server of its own (live_api)

BODY_LIMIT = 64 * 1024
UPLOAD_LIMIT = 256 * 1024
# A 300 MiB body must leave the process as it found it, within what a few requests' buffers and
# the allocator's slack take (fixed: not a share of what was sent).
RSS_SLACK = 32 * 2**20


@pytest.fixture(scope="module")
def api(migrated_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    with live_api(
        tmp_path_factory.mktemp("bounds"),
        HITCURVE_MAX_REQUEST_BODY_BYTES=str(BODY_LIMIT),
        HITCURVE_MAX_BODY_BYTES=str(UPLOAD_LIMIT),
        HITCURVE_REQUEST_HEADER_TIMEOUT_S="2",
        HITCURVE_REQUEST_BODY_TIMEOUT_S="2",
    ) as a:
        yield a


def _operations(api: LiveApi) -> list[tuple[str, str]]:
    spec = httpx.get(api.url + "/api/v1/openapi.json", timeout=30).json()
    ops = []
    for path, item in spec["paths"].items():
        concrete = path
        while "{" in concrete:
            a, b = concrete.index("{"), concrete.index("}")
            concrete = concrete[:a] + str(uuid.uuid4()) + concrete[b + 1 :]
        ops += [(m.upper(), concrete) for m in item if m in ("get", "post", "put", "patch", "delete")]
    assert len(ops) > 40
    return ops


def _limit(path: str) -> int:
    return UPLOAD_LIMIT if path.startswith("/api/v1/agent/") else BODY_LIMIT


def test_every_route_refuses_a_declared_body_over_its_limit(api: LiveApi) -> None:
    """Content-Length over the limit: 413 at once, whatever the route, the method or the caller."""
    wrong = []
    with httpx.Client(base_url=api.url, timeout=30) as c:
        for method, path in _operations(api) + [("GET", "/"), ("POST", "/servers")]:
            body = b"x" * (_limit(path) + 1)
            r = c.request(method, path, content=body, headers={"Content-Type": "application/json"})
            if r.status_code != 413 or r.json().get("code") != "body_too_large":
                wrong.append((method, path, r.status_code, r.text[:80]))
            # a body at the limit is the route's to judge (auth, validation): never a 413
            ok = c.request(
                method, path, content=b"x" * _limit(path), headers={"Content-Type": "application/json"}
            )
            if ok.status_code == 413:
                wrong.append((method, path, "at the limit", ok.status_code))
    assert not wrong, wrong


def _raw_exchange(
    api: LiveApi, head: bytes, pieces: Iterable[bytes], pause: float = 0.0
) -> tuple[bytes, int]:
    """Send head then pieces on one connection while reading the answer; stops sending once the
    server answered or closed. Returns (what the server sent, bytes sent)."""
    sock = socket.create_connection((api.host, api.port), timeout=60)
    got = bytearray()
    done = threading.Event()

    def read() -> None:
        try:
            while chunk := sock.recv(65536):
                got.extend(chunk)
        except OSError:
            pass
        done.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    sent = 0
    try:
        sock.sendall(head)
        sent += len(head)
        for piece in pieces:
            if done.is_set() or got:
                break
            sock.sendall(piece)
            sent += len(piece)
            if pause:
                time.sleep(pause)
    except OSError:
        pass  # the server closed the connection while we were still sending
    done.wait(60)
    sock.close()
    return bytes(got), sent


def _status(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    return int(answer[9:12])


def _chunked(total: int, piece: int = 1 << 20) -> Iterator[bytes]:
    data = b" " * piece
    for _ in range(total // piece):
        yield b"%x\r\n" % piece + data + b"\r\n"
    yield b"0\r\n\r\n"


@pytest.mark.parametrize("path", ["/api/v1/auth/login", "/api/v1/agent/snapshots", "/api/v1/health", "/"])
def test_a_streamed_body_over_the_limit_is_refused_without_growing_the_process(
    api: LiveApi, path: str
) -> None:
    """300 MiB in chunks, no Content-Length: 413 once the limit is passed; the process keeps its size."""
    before = api.rss_bytes()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    answer, sent = _raw_exchange(api, head, _chunked(300 << 20))
    assert _status(answer) == 413, answer[:300]
    assert b"body_too_large" in answer
    assert sent < 300 << 20  # refused while the body arrived, not after
    grew = api.rss_bytes() - before
    assert grew < RSS_SLACK, f"the API process grew {grew / 2**20:.0f} MiB"


def test_a_128_mib_header_is_refused_while_it_arrives(api: LiveApi) -> None:
    before = api.rss_bytes()
    head = b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\nX-Big: "
    piece = b"a" * (1 << 20)
    answer, sent = _raw_exchange(api, head, (piece for _ in range(128)))
    assert _status(answer) == 431, answer[:300]
    assert sent < 128 << 20
    grew = api.rss_bytes() - before
    assert grew < RSS_SLACK, f"the API process grew {grew / 2**20:.0f} MiB"
    # the server still answers
    assert httpx.get(api.url + "/api/v1/health", timeout=30).status_code in (200, 503)


def test_a_client_sending_its_headers_too_slowly_is_cut_off(api: LiveApi) -> None:
    """A header line a byte at a time (slowloris): the connection is closed after the header
    timeout (2 s here), long before the 60 bytes are through."""
    head = b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\n"
    started = time.monotonic()
    answer, sent = _raw_exchange(api, head, (b"X" for _ in range(60)), pause=0.5)
    assert time.monotonic() - started < 25
    assert sent < len(head) + 40
    assert answer == b"" or _status(answer) == 408, answer[:300]


def test_a_client_sending_its_body_too_slowly_gets_408(api: LiveApi) -> None:
    head = (
        b"POST /api/v1/auth/login HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n"
    )
    started = time.monotonic()
    answer, sent = _raw_exchange(api, head, (b" " for _ in range(60)), pause=0.5)
    assert time.monotonic() - started < 25
    assert _status(answer) == 408, answer[:300]
    assert b"request_timeout" in answer


@pytest.mark.parametrize("path", ["/%00", "/assets/%00.js", "/api/v1/servers/%00", "/a%00b"])
def test_a_nul_in_the_path_is_a_400(api: LiveApi, path: str) -> None:
    r = httpx.get(api.url + path, timeout=30)
    assert r.status_code == 400, r.text
    assert r.json()["code"] == "bad_path"


def test_the_limits_leave_every_usual_request_alone(api: LiveApi, tmp_path: Path) -> None:
    """Health, the dashboard and the docs answer as before through the same limits."""
    with httpx.Client(base_url=api.url, timeout=30) as c:
        assert c.get("/api/v1/health").status_code in (200, 503)
        assert c.get("/").status_code == 200
        assert c.get("/api/v1/openapi.json").status_code == 200
        r = c.post("/api/v1/auth/login", json={"email": "nobody@example.com", "password": "x" * 20})
        assert r.status_code == 401, r.text


@pytest.mark.parametrize("path", ["/", "/servers", "/api/v1/health", "/api/v1/openapi.json", "/api/v1/nope"])
def test_no_page_or_answer_can_be_framed(api: LiveApi, path: str) -> None:
    r = httpx.get(api.url + path, timeout=30)
    csp = r.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self';" in csp, csp
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["x-content-type-options"] == "nosniff"


def test_the_api_docs_get_a_policy_their_start_up_script_runs_under(api: LiveApi) -> None:
    r = httpx.get(api.url + "/api/v1/docs", timeout=30)
    assert r.status_code == 200 and "<script>" in r.text  # Swagger UI starts from an inline script
    csp = r.headers["content-security-policy"]
    assert "script-src 'self' 'unsafe-inline'" in csp and "frame-ancestors 'none'" in csp
    assert r.headers["x-frame-options"] == "DENY"
