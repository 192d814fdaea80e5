"""Real processes for the live-agent tests: memcached on free loopback ports, the agent binary,
a receiving HTTP server, and a tiny memcached text-protocol client.

Nothing is mocked: memcached is Debian's /usr/bin/memcached, the agent is bin/hitcurve-agent
(built by `make -C profiler-agent all`; HITCURVE_AGENT_BIN overrides), key hashes come from the
system libxxhash through ctypes (not from the code under test).
"""

from __future__ import annotations

import ctypes
import gzip
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MEMCACHED = shutil.which("memcached") or "/usr/bin/memcached"

_xxh = ctypes.CDLL("libxxhash.so.0")
_xxh.XXH3_64bits.restype = ctypes.c_uint64
_xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]


def key_hash(key: bytes) -> str:
    """XXH3-64 of the key bytes, as the agent prints it (16 hex digits)."""
    return f"{_xxh.XXH3_64bits(key, len(key)):016x}"


# Read by Agent.sync_events as a sentinel; tests that compare events leave it out.
SYNC_KEY = b"__sync__"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_built = False
_build_lock = threading.Lock()  # tests start agents from several threads at once

# Every process started here, so a failing test cannot leave memcached or an agent running.
_started: list[subprocess.Popen] = []


def kill_leftovers() -> None:
    while _started:
        p = _started.pop()
        if p.poll() is None:
            p.kill()
            p.wait(10)


def agent_bin() -> str:
    global _built
    env = os.environ.get("HITCURVE_AGENT_BIN")
    if env:
        return env
    with _build_lock:
        # one make at a time: concurrent ones relinking the same binary left it missing
        if not _built:
            subprocess.run(["make", "-s", "-C", str(ROOT / "profiler-agent"), "all"], check=True)
            _built = True
    return str(ROOT / "bin" / "hitcurve-agent")


def loadgen_bin() -> str:
    subprocess.run(["make", "-s", "-C", str(ROOT / "profiler-agent" / "loadgen")], check=True)
    return str(ROOT / "bin" / "hc-loadgen")


def wait_port(port: int, timeout: float = 5.0) -> None:
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"port {port} did not open")


class Memcached:
    def __init__(
        self,
        port: int | None = None,
        mem_mb: int = 64,
        extra: list[str] | None = None,
        unix: str | None = None,
        binary: str = MEMCACHED,
    ):
        self.port = port or free_port()
        self.unix = unix
        cmd = [binary, "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-m", str(mem_mb)]
        if unix:
            cmd = [binary, "-s", unix, "-U", "0", "-m", str(mem_mb)]
        if os.geteuid() == 0:
            cmd += ["-u", "root"]
        cmd += extra or []
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _started.append(self.proc)
        if unix:
            end = time.time() + 5
            while not os.path.exists(unix) and time.time() < end:
                time.sleep(0.02)
        else:
            wait_port(self.port)

    @property
    def addr(self) -> str:
        return self.unix or f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            # a killed memcached is gone once the kernel has released its memory and files: over
            # 5 s for one with a 256 MiB flash file at load 90 (two test suites and more beside it)
            self.proc.wait(60)


class Client:
    """Request/response memcached text client (TCP port or unix socket path)."""

    def __init__(self, port: int | str):
        if isinstance(port, str):
            self.s = socket.socket(socket.AF_UNIX)
            self.s.connect(port)
        else:
            self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def _until(self, ends: tuple[bytes, ...]) -> list[bytes]:
        out = []
        while True:
            line = self.f.readline()
            if not line:
                raise ConnectionError("closed")
            out.append(line)
            # an answer is named by its first word: memcached explains some ("BUSY currently
            # processing reassign request"), and an exact match would wait for ever on those
            text = line.rstrip(b"\r\n")
            word = text.split(b" ", 1)[0]
            if text in ends or word in ends or word in (b"ERROR", b"CLIENT_ERROR", b"SERVER_ERROR"):
                return out

    def get(self, *keys: bytes) -> dict[bytes, bytes]:
        self.s.sendall(b"get " + b" ".join(keys) + b"\r\n")
        res: dict[bytes, bytes] = {}
        while True:
            line = self.f.readline()
            if line == b"END\r\n":
                return res
            parts = line.split()
            assert parts[0] == b"VALUE", line
            data = self.f.read(int(parts[3]) + 2)
            res[parts[1]] = data[:-2]

    def set(self, key: bytes, value: bytes, ttl: int = 0) -> bytes:
        self.s.sendall(b"set %s 0 %d %d\r\n%s\r\n" % (key, ttl, len(value), value))
        return self._until((b"STORED", b"NOT_STORED"))[-1].strip()

    def raw(self, data: bytes, ends: tuple[bytes, ...]) -> list[bytes]:
        self.s.sendall(data)
        return self._until(ends)

    def stats(self) -> dict[str, str]:
        self.s.sendall(b"stats\r\n")
        out = {}
        for line in self._until((b"END",))[:-1]:
            _, k, v = line.decode().split(" ", 2)
            out[k] = v.strip()
        return out

    def close(self) -> None:
        self.s.close()


class Agent:
    def __init__(
        self, tmp: Path, mc_addr: str, *args: str, name: str = "agent", env: dict[str, str] | None = None
    ):
        self.tmp = tmp
        self.log_path = tmp / f"{name}.log"
        self.snap_dir = tmp / f"{name}-snaps"
        self.events_path = tmp / f"{name}-events.txt"
        cmd = [
            agent_bin(),
            "run",
            "--memcached",
            mc_addr,
            "--snapshot-dir",
            str(self.snap_dir),
            "--events-log",
            str(self.events_path),
            "--stats-interval",
            "0.5",
            "--reorder-ms",
            "300",
            *args,
        ]
        self.logf = open(self.log_path, "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            cmd, stdout=self.logf, stderr=self.logf, env={**os.environ, **env} if env else None
        )
        _started.append(self.proc)

    def wait_log(self, needle: str, timeout: float = 60.0, count: int = 1) -> None:
        """Until the agent has logged `needle` `count` times. The default waits a minute: at
        the suite's load (30-40 on two cores) an agent at --interval 0.3 took 5.5 s to its first
        upload and more than 10 s to its second (test_rejected_uploads_are_moved_and_counted)."""
        end = time.time() + timeout
        while time.time() < end:
            if self.log().count(needle) >= count:
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"agent exited {self.proc.returncode}:\n{self.log()}")
            time.sleep(0.05)
        raise TimeoutError(f"{needle!r} not in agent log:\n{self.log()}")

    def sync_events(self, client: Client, timeout: float = 120.0) -> None:
        """Wait until the agent has fed every event memcached logged before now: read a
        sentinel key (logged after everything sent before it) and wait for it in the events
        log, which the agent flushes after each batch. An event to wait for, not a sleep: a
        busy machine delays memcached's logger by seconds. The sentinel is read again every
        2 s in case memcached skipped its line; callers filter SYNC_KEY out."""
        h = key_hash(SYNC_KEY)
        end = time.time() + timeout
        while time.time() < end:
            client.get(SYNC_KEY)
            resend = time.time() + 2
            while time.time() < min(resend, end):
                if self.events_path.exists() and h in self.events_path.read_text():
                    return
                if self.proc.poll() is not None:
                    raise RuntimeError(f"agent exited {self.proc.returncode}:\n{self.log()}")
                time.sleep(0.05)
        raise TimeoutError(f"the agent never logged the sentinel event:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text()

    def stop(self, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                raise
        self.logf.close()
        return self.proc.returncode

    def snapshots(self) -> list[dict]:
        if not self.snap_dir.exists():
            return []
        return [json.loads(p.read_text()) for p in sorted(self.snap_dir.glob("snapshot-*.json"))]

    def traces(self) -> list[dict]:
        """Trace chunks written to the snapshot dir (the documents the agent uploads)."""
        if not self.snap_dir.exists():
            return []
        return [json.loads(p.read_text()) for p in sorted(self.snap_dir.glob("trace-*.json"))]

    def events(self) -> list[tuple[int, str, int, int, int]]:
        """(op, key hash, size, clsid, ttl) per event, in the agent's order."""
        out = []
        for line in self.events_path.read_text().splitlines():
            op, key, size, cls, ttl, _gid, _cause = line.split()
            out.append((int(op), key, int(size), int(cls), int(ttl)))
        return out


class Receiver:
    """A real HTTP server standing in for the backend's agent endpoints. Stores each id once,
    answers 202 for new ids and 200 "duplicate" for repeats, like the protocol says. It can
    fail requests on purpose: `fail_next` answers 503 without storing; `drop_after_store`
    stores and then closes the connection without answering (the agent must retry and get
    "duplicate")."""

    def __init__(self, port: int, tls: tuple[str, str] | None = None):
        self.port = port
        self.lock = threading.Lock()
        self.stored: dict[str, dict] = {}
        self.order: list[str] = []
        self.requests = 0
        self.duplicates = 0
        self.fail_next = 0
        self.drop_after_store = 0
        self.reject_all = False
        self.auth: set[str] = set()
        recv = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                with recv.lock:
                    recv.requests += 1
                    recv.auth.add(self.headers.get("Authorization", ""))
                    if recv.fail_next > 0:
                        recv.fail_next -= 1
                        self._answer(503, {"detail": "try later"})
                        return
                    if recv.reject_all:
                        self._answer(422, {"detail": "invalid snapshot"})
                        return
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                doc = json.loads(body)
                ident = doc.get("snapshot_id") or doc.get("chunk_id")
                if self.headers.get("Idempotency-Key") != ident:
                    self._answer(400, {"detail": "idempotency key does not match"})
                    return
                with recv.lock:
                    dup = ident in recv.stored
                    if dup:
                        recv.duplicates += 1
                    else:
                        recv.stored[ident] = {"path": self.path, "doc": doc}
                        recv.order.append(ident)
                    if not dup and recv.drop_after_store > 0:
                        recv.drop_after_store -= 1
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                self._answer(200 if dup else 202, {"id": ident, "status": "duplicate" if dup else "accepted"})

            def _answer(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), H)
        if tls:  # (certfile, keyfile): HTTPS like the real backend
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Proxy:
    """A memcached text-protocol proxy on a free port in front of a real memcached: forwards
    every byte both ways and records each command line clients send (one list per client
    connection). refuse_watch=True answers `ERROR` to `watch ...` itself, as memcached built
    or configured without it does (ElastiCache Serverless, `-W`)."""

    def __init__(self, upstream_port: int, refuse_watch: bool = False):
        self.upstream = upstream_port
        self.refuse_watch = refuse_watch
        self.lock = threading.Lock()
        self.connections: list[list[bytes]] = []
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def commands(self) -> list[bytes]:
        with self.lock:
            return [c for conn in self.connections for c in conn]

    def _accept(self) -> None:
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                log: list[bytes] = []
                self.connections.append(log)
            threading.Thread(target=self._serve, args=(c, log), daemon=True).start()

    def _serve(self, c: socket.socket, log: list[bytes]) -> None:
        try:
            u = socket.create_connection(("127.0.0.1", self.upstream))
        except OSError:
            c.close()
            return

        def down() -> None:  # upstream -> client
            try:
                while data := u.recv(65536):
                    c.sendall(data)
            except OSError:
                pass
            c.close()

        threading.Thread(target=down, daemon=True).start()
        buf = b""
        try:
            while data := c.recv(65536):
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    cmd = line.rstrip(b"\r")
                    with self.lock:  # every line (the agent sends no value blocks)
                        log.append(cmd)
                    if self.refuse_watch and cmd.startswith(b"watch"):
                        c.sendall(b"ERROR\r\n")
                        continue
                    u.sendall(line + b"\n")
        except OSError:
            pass
        u.close()

    def stop(self) -> None:
        self.stopped = True
        self.sock.close()
