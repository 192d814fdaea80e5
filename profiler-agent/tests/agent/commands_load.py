"""Seeded client traffic of every memcached command a cache client sends, for the command matrix.

Each scenario is 60 % reads (`get` refilled with `set` on a miss) and 40 % of one other command
(or a mix of them), over Zipf-popular value keys and a small set of counter keys, on one
request/response connection: text protocol, meta protocol (`mg`/`ms`/`md`/`ma`/`mn` and their
flags) and the binary protocol. A scenario returns nothing: what counts is what memcached counts
(`stats`) against what the agent saw.
"""

from __future__ import annotations

import bisect
import random
import socket
import struct
from collections.abc import Callable

VALUE_KEYS = 3000
COUNTERS = 200


class Conn:
    """One connection; every call waits for its whole answer (no pipelining: nothing is lost)."""

    def __init__(self, port: int):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.s.makefile("rb")

    def one(self, data: bytes) -> bytes:
        """Send a command answered by exactly one line (incr/decr: a number or NOT_FOUND)."""
        self.s.sendall(data)
        return self.line()

    def line(self) -> bytes:
        line = self.f.readline()
        if not line:
            raise ConnectionError("memcached closed the connection")
        return line.rstrip(b"\r\n")

    def cmd(self, data: bytes, ends: tuple[bytes, ...]) -> list[bytes]:
        """Send, then read lines (and VALUE/VA payloads) until one starts with an end word."""
        self.s.sendall(data)
        out = []
        while True:
            line = self.line()
            out.append(line)
            head = line.split(b" ", 1)[0]
            if head == b"VALUE":
                self.f.read(int(line.split()[3]) + 2)
                continue
            if head == b"VA":
                self.f.read(int(line.split()[1]) + 2)
                if b"VA" in ends:
                    return out
                continue
            if head in ends or head in (b"ERROR", b"CLIENT_ERROR", b"SERVER_ERROR"):
                if head in (b"ERROR", b"CLIENT_ERROR", b"SERVER_ERROR"):
                    raise RuntimeError(f"memcached refused {data[:60]!r}: {line!r}")
                return out

    def bin(self, opcode: int, key: bytes, extras: bytes = b"", value: bytes = b"", cas: int = 0) -> int:
        """One binary-protocol request; returns the response status."""
        body = extras + key + value
        hdr = struct.pack(">BBHBBHIIQ", 0x80, opcode, len(key), len(extras), 0, 0, len(body), 0, cas)
        self.s.sendall(hdr + body)
        resp = self.f.read(24)
        _magic, _op, _kl, _el, _dt, status, blen, _opq, _cas = struct.unpack(">BBHBBHIIQ", resp)
        if blen:
            self.f.read(blen)
        return status

    def close(self) -> None:
        self.s.close()


class Traffic:
    def __init__(self, port: int, seed: int):
        self.c = Conn(port)
        self.b = Conn(port)  # memcached picks a connection's protocol from its first byte
        self.r = random.Random(seed)
        # Zipf 0.9 over the value keys (a cache's usual skew): a hit ratio well inside (0, 1)
        w = [1 / (i + 1) ** 0.9 for i in range(VALUE_KEYS)]
        self.keys = [b"v:%d" % i for i in range(VALUE_KEYS)]
        self.cum = []
        t = 0.0
        for x in w:
            t += x
            self.cum.append(t)
        self.new = 0
        # meta commands exist from memcached 1.6 (1.5.16 answers ERROR): scenarios leave them out
        self.meta = self._speaks_meta()

    def _speaks_meta(self) -> bool:
        self.c.s.sendall(b"mn\r\n")
        return self.c.line() == b"MN"

    def key(self) -> bytes:
        return self.keys[bisect.bisect_left(self.cum, self.r.random() * self.cum[-1])]

    def value(self) -> bytes:
        return b"x" * self.r.randint(100, 400)

    def counter(self) -> bytes:
        return b"n:%d" % self.r.randrange(COUNTERS)

    def fresh(self) -> bytes:
        self.new += 1
        return b"c:%d:%d" % (self.r.randrange(1 << 30), self.new)

    # ---- reads (memcached's get_hits / get_misses) ----
    def set(self, k: bytes) -> None:
        v = self.value()
        self.c.cmd(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v), (b"STORED",))

    def get(self) -> None:
        k = self.key()
        if len(self.c.cmd(b"get %s\r\n" % k, (b"END",))) == 1:
            self.set(k)

    def gets(self) -> None:
        k = self.key()
        if len(self.c.cmd(b"gets %s\r\n" % k, (b"END",))) == 1:
            self.set(k)

    def multiget(self) -> None:
        ks = list(dict.fromkeys(self.key() for _ in range(8)))
        out = self.c.cmd(b"get " + b" ".join(ks) + b"\r\n", (b"END",))
        got = {ln.split()[1] for ln in out if ln.startswith(b"VALUE")}
        for k in ks:
            if k not in got:
                self.set(k)

    def multigets(self) -> None:
        ks = list(dict.fromkeys(self.key() for _ in range(8)))
        out = self.c.cmd(b"gets " + b" ".join(ks) + b"\r\n", (b"END",))
        got = {ln.split()[1] for ln in out if ln.startswith(b"VALUE")}
        for k in ks:
            if k not in got:
                self.set(k)

    def mg(self) -> None:
        k = self.key()
        if self.c.cmd(b"mg %s v f t\r\n" % k, (b"VA", b"EN", b"HD"))[-1].startswith(b"EN"):
            v = self.value()
            self.c.cmd(b"ms %s %d T0 F3\r\n%s\r\n" % (k, len(v), v), (b"HD",))

    def mg_quiet(self) -> None:
        """mg with q (no EN on a miss) and k, closed by mn."""
        k = self.key()
        out = self.c.cmd(b"mg %s v k q\r\nmn\r\n" % k, (b"MN",))
        if not any(ln.startswith(b"VA") for ln in out):
            self.set(k)

    # ---- lookups that are not reads ----
    def incr_new(self) -> None:
        """A rate limiter's first hit: incr of a counter that does not exist yet, then add."""
        k = self.fresh()
        if self.c.one(b"incr %s 1\r\n" % k) == b"NOT_FOUND":
            self.c.cmd(b"add %s 0 60 1\r\n1\r\n" % k, (b"STORED", b"NOT_STORED"))

    def _arith(self, op: bytes) -> None:
        k = self.counter()
        if self.c.one(b"%s %s 1\r\n" % (op, k)) == b"NOT_FOUND":
            self.c.cmd(b"add %s 0 0 4\r\n1000\r\n" % k, (b"STORED", b"NOT_STORED"))

    def incr(self) -> None:
        self._arith(b"incr")

    def decr(self) -> None:
        self._arith(b"decr")

    def delete(self) -> None:
        self.c.cmd(b"delete %s\r\n" % self.key(), (b"DELETED", b"NOT_FOUND"))

    def touch(self) -> None:
        self.c.cmd(b"touch %s 300\r\n" % self.key(), (b"TOUCHED", b"NOT_FOUND"))

    def gat(self) -> None:
        self.c.cmd(b"gat 300 %s\r\n" % self.key(), (b"END",))

    def gats(self) -> None:
        self.c.cmd(b"gats 300 %s\r\n" % self.key(), (b"END",))

    def mg_touch(self) -> None:
        """mg with T: memcached counts it as a touch, not a read."""
        self.c.cmd(b"mg %s v T300\r\n" % self.key(), (b"VA", b"EN", b"HD"))

    def md(self) -> None:
        self.c.cmd(b"md %s\r\n" % self.key(), (b"HD", b"NF"))

    def md_quiet(self) -> None:
        self.c.cmd(b"md %s q\r\nmn\r\n" % self.key(), (b"MN",))

    def ma(self) -> None:
        k = self.counter()
        if self.c.cmd(b"ma %s\r\n" % k, (b"HD", b"NF"))[-1] == b"NF":
            self.c.cmd(b"ms %s 4 T0\r\n1000\r\n" % k, (b"HD",))

    def ma_decr(self) -> None:
        k = self.counter()
        if self.c.cmd(b"ma %s MD D2\r\n" % k, (b"HD", b"NF"))[-1] == b"NF":
            self.c.cmd(b"ms %s 4 T0\r\n1000\r\n" % k, (b"HD",))

    def mn(self) -> None:
        self.c.cmd(b"mn\r\n", (b"MN",))

    # ---- stores (their lookup pairs with the item_store line) ----
    def add(self) -> None:
        v = self.value()
        self.c.cmd(b"add %s 0 0 %d\r\n%s\r\n" % (self.key(), len(v), v), (b"STORED", b"NOT_STORED"))

    def replace(self) -> None:
        v = self.value()
        self.c.cmd(b"replace %s 0 0 %d\r\n%s\r\n" % (self.key(), len(v), v), (b"STORED", b"NOT_STORED"))

    def append(self) -> None:
        self.c.cmd(b"append %s 0 0 3\r\nabc\r\n" % self.key(), (b"STORED", b"NOT_STORED"))

    def prepend(self) -> None:
        self.c.cmd(b"prepend %s 0 0 3\r\nabc\r\n" % self.key(), (b"STORED", b"NOT_STORED"))

    def cas(self) -> None:
        k = self.key()
        out = self.c.cmd(b"gets %s\r\n" % k, (b"END",))
        cas = int(out[0].split()[4]) if len(out) > 1 else 1
        v = self.value()
        self.c.cmd(b"cas %s 0 0 %d %d\r\n%s\r\n" % (k, len(v), cas, v), (b"STORED", b"EXISTS", b"NOT_FOUND"))

    def ms_flags(self) -> None:
        v = self.value()
        self.c.cmd(b"ms %s %d T600 F7 I\r\n%s\r\n" % (self.key(), len(v), v), (b"HD", b"NS"))

    # ---- binary protocol (opcodes of protocol_binary.h) ----
    def bin_get(self) -> None:
        k = self.key()
        if self.b.bin(0x00, k) == 0x01:  # key not found: refill with a binary set
            v = self.value()
            self.b.bin(0x01, k, struct.pack(">II", 0, 0), v)

    def bin_ops(self) -> None:
        k = self.key()
        op = self.r.randrange(3)
        if op == 0:
            self.b.bin(0x04, k)  # delete
        elif op == 1:
            self.b.bin(0x1C, k, struct.pack(">I", 300))  # touch
        else:
            self.b.bin(0x05, self.counter(), struct.pack(">QQI", 1, 1000, 0))  # incr, created at 1000


def scenario(
    t: Traffic,
    other: list[Callable[[], None]],
    reads: list[Callable[[], None]] | None = None,
    read_share: float = 0.6,
):
    """One operation: a read `read_share` of the time, else one of `other` (uniformly: repeat an
    entry to weigh it)."""
    reads = reads or [t.get]
    if t.r.random() < read_share:
        t.r.choice(reads)()
    else:
        t.r.choice(other)()


META = {"mg", "mg_quiet", "mg_touch", "md", "md_quiet", "ma", "ma_decr", "mn", "ms_flags"}


def scenarios(t: Traffic) -> dict[str, tuple[list[Callable[[], None]], list[Callable[[], None]] | None]]:
    """name -> (other commands, reads): every command and flag of the matrix, alone and mixed
    (without the meta commands where memcached has none)."""

    def keep(fs):
        return None if fs is None else [f for f in fs if t.meta or f.__name__ not in META]

    every = {
        "incr_new": ([t.incr_new], None),
        "incr_decr": ([t.incr, t.decr], None),
        "delete": ([t.delete], None),
        "touch_gat": ([t.touch, t.gat, t.gats, t.mg_touch], None),
        "reads": ([t.gets, t.multiget, t.mg, t.mg_quiet], None),
        "stores": ([t.add, t.replace, t.append, t.prepend, t.cas, t.ms_flags], None),
        "meta": ([t.md, t.md_quiet, t.ma, t.ma_decr, t.mn], [t.get, t.mg]),
        "mixed": (
            [t.gets, t.incr, t.incr_new, t.delete, t.touch, t.gat, t.mg, t.ma, t.append, t.md, t.multiget],
            None,
        ),
    }
    out = {name: (keep(o), keep(r)) for name, (o, r) in every.items()}
    return {name: (o, r) for name, (o, r) in out.items() if o}


def binary_scenario(t: Traffic) -> tuple[list[Callable[[], None]], list[Callable[[], None]]]:
    return [t.bin_ops], [t.bin_get]


Row = tuple[list[Callable[[], None]], list[Callable[[], None]] | None, float]


def field_report_table(t: Traffic) -> dict[str, Row]:
    """The field report's probes on memcached 1.6.18: 60 % get (set on a miss) and 40 % of one
    other command per row, then its realistic mix (45 % get, 10 % gets, 7 % incr, 6 % delete,
    6 % touch, 6 % gat, 4 % mg, 3 % ma, 3 % append, 3 % md, 3 % 8-key gets)."""
    rows: dict[str, Row] = {
        name: ([f], None, 0.6)
        for name, f in (
            ("incr_new", t.incr_new),
            ("delete", t.delete),
            ("gets", t.gets),
            ("touch", t.touch),
            ("gat", t.gat),
            ("mg", t.mg),
            ("ma", t.ma),
            ("append", t.append),
            ("md", t.md),
            ("multiget", t.multiget),
        )
    }
    weights = ((t.gets, 10), (t.incr, 7), (t.delete, 6), (t.touch, 6), (t.gat, 6), (t.mg, 4), (t.ma, 3),
               (t.append, 3), (t.md, 3), (t.multigets, 3))  # fmt: skip
    rows["realistic"] = ([f for f, w in weights for _ in range(w)], None, 45 / 96)
    return rows
