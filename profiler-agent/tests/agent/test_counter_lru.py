"""The modelled LRU moves where memcached's does: a read (get, touch, gat) bumps an item, an incr
or decr of a counter does not. memcached looks an incr's item up with DONT_UPDATE
(do_add_delta; items.c do_item_get / do_item_bump of 1.5.16 ... 1.6.45): a counter that is only
incremented never turns active and flows HOT -> COLD -> evicted in insertion order, however often
it is incremented. Its lookup prints exactly like a read's. Before this, the agent moved a
counter to the top of its LRU model at every incr, so every counter touched between two reads of
a key sat above that key in the model: below today's memory the curve read the reads' reuse
distances as counters + reads and promised far less than memcached gives.

Lock step, real processes: one seeded driver sends the same requests to two memcached, A
(-m 64: holds everything, the agent beside it) and B (-m 4: 0.62 of A's items), each refilled on
its own misses. Values and counters share one slab class (8-byte values read with Zipf 0.8 over
12,000 keys, half the requests; the other half incr one of 60,000 counters, created by `add` on
their first incr's miss, as a rate limiter does). The agent's curve of A's class at B's item
count, over the measured phase, against B's own get hit ratio: within TOLERANCE_PP. Measured on
a machine at load 26-33: memcached 0.958, this agent 0.982, the previous one 0.786.

What the model still gets wrong: a counter memcached evicts at a smaller size is re-added there
(at the top of its LRU) on its next incr, while the model's counters, never evicted at A's size,
sink below every read. So below today's memory the curve is an upper bound on such workloads:
+2.3 pp at 0.62 of A's items, +6.1 at 0.47, +10.3 at 0.31 (the previous agent -17, -23, -26).
"""

from __future__ import annotations

import bisect
import random
import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_harness import Agent, Memcached, kill_leftovers  # noqa: E402
from test_command_matrix import _ts  # noqa: E402

READ_KEYS = 12000
COUNTERS = 60000
READ_SHARE = 0.5
WARM = 200_000
MEASURED = 200_000
BATCH = 200
# ~10k requests/s: memcached's logger keeps up with that beside a loaded machine (at full speed
# it dropped 20-40 % of the lines beside a load of 38)
PACE_S = 0.02
B_MB = 4
TOLERANCE_PP = 4.0


@pytest.fixture(autouse=True)
def _no_leftover_processes():
    yield
    kill_leftovers()


class Side:
    """One memcached of the lock step: pipelined batches, refilled on its own misses."""

    def __init__(self, port: int):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.s.makefile("rb")

    def line(self) -> bytes:
        ln = self.f.readline()
        if not ln:
            raise ConnectionError("memcached closed the connection")
        return ln.rstrip(b"\r\n")

    def batch(self, ops: list[tuple[bool, bytes]]) -> None:
        out = []
        for read, k in ops:
            out.append(b"get %s\r\n" % k if read else b"incr %s 1\r\n" % k)
        self.s.sendall(b"".join(out))
        refill = []
        for read, k in ops:
            ln = self.line()
            if read:
                if ln.startswith(b"VALUE"):
                    self.f.read(10)
                    ln = self.line()
                else:
                    refill.append(b"set %s 0 0 8\r\nvvvvvvvv\r\n" % k)
                assert ln == b"END", ln
            elif ln == b"NOT_FOUND":
                refill.append(b"add %s 0 0 1\r\n1\r\n" % k)
        if refill:
            self.s.sendall(b"".join(refill))
            for _ in refill:
                self.line()

    def stats(self, arg: bytes = b"") -> dict[str, str]:
        self.s.sendall(b"stats %s\r\n" % arg if arg else b"stats\r\n")
        out = {}
        while (ln := self.line()) != b"END":
            _, k, v = ln.decode().split(" ", 2)
            out[k] = v
        return out


def traffic(seed: int, n: int):
    r = random.Random(seed)
    w = [1 / (i + 1) ** 0.8 for i in range(READ_KEYS)]
    cum, t = [], 0.0
    for x in w:
        t += x
        cum.append(t)
    ops = []
    for _ in range(n):
        if r.random() < READ_SHARE:
            ops.append((True, b"r:%d" % bisect.bisect_left(cum, r.random() * t)))
        else:
            ops.append((False, b"c:%d" % r.randrange(COUNTERS)))
        if len(ops) == BATCH:
            yield ops
            ops = []
    if ops:
        yield ops


def curve_at(points: list[list[float]], x: float) -> float:
    xs = [p[0] for p in points]
    i = bisect.bisect_left(xs, x)
    if i == 0:
        return points[0][1] * x / xs[0]
    if i >= len(xs):
        return points[-1][1]
    (x0, y0), (x1, y1) = points[i - 1], points[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def run(tmp: Path, *agent_args: str, b_mb: int = 2) -> dict:
    a_mc = Memcached(mem_mb=64)
    b_mc = Memcached(mem_mb=b_mb)
    agent = Agent(tmp, a_mc.addr, "--interval", "1", "--breakdown", "0", "--trace-rate", "0", *agent_args)
    try:
        agent.wait_log("watch_connected", timeout=30)
        agent.wait_log("msg=window", timeout=30)
        a, b = Side(a_mc.port), Side(b_mc.port)
        for ops in traffic(1, WARM):
            a.batch(ops)
            b.batch(ops)
            time.sleep(PACE_S)
        agent.wait_log("msg=window", count=agent.log().count("msg=window") + 2, timeout=60)
        b0 = b.stats()
        start = time.time()
        for ops in traffic(2, MEASURED):
            a.batch(ops)
            b.batch(ops)
            time.sleep(PACE_S)
        end = time.time()
        b1 = b.stats()
        items_b = b.stats(b"items")
        agent.wait_log("msg=window", count=agent.log().count("msg=window") + 2, timeout=60)
    finally:
        assert agent.stop() == 0
        a_mc.stop()
        b_mc.stop()
    hits = int(b1["get_hits"]) - int(b0["get_hits"])
    reads = hits + int(b1["get_misses"]) - int(b0["get_misses"])
    classes = {k.split(":")[1] for k in items_b if k.endswith(":number")}
    assert len(classes) == 1, items_b  # values and counters in one class
    cls = int(classes.pop())
    b_items = int(items_b[f"items:{cls}:number"])
    num = den = 0.0
    windows = 0
    for s in agent.snapshots():
        if not (_ts(s["window"]["start"]) >= start - 0.5 and _ts(s["window"]["end"]) <= end + 1.5):
            continue
        if s["loss"]["flagged"]:
            continue
        for c in s["classes"]:
            if c["id"] == cls and c.get("curve") and c["requests"]:
                num += curve_at(c["curve"]["points"], b_items) * c["requests"]
                den += c["requests"]
                windows += 1
    return {
        "memcached_b": hits / reads,
        "agent_at_b": num / den if den else None,
        "b_items": b_items,
        "windows": windows,
        "reads": reads,
        "lookups": [s["diagnostics"]["lookups"].get("told_counters") for s in agent.snapshots()],
    }


def test_counters_do_not_move_in_the_modelled_lru(tmp_path):
    r = run(tmp_path, b_mb=B_MB)
    print(r)
    assert r["windows"] >= 3 and r["agent_at_b"] is not None, r
    assert sum(x or 0 for x in r["lookups"]) > MEASURED / 4, r  # the counters' incrs told apart
    assert abs(r["agent_at_b"] - r["memcached_b"]) * 100 <= TOLERANCE_PP, r


if __name__ == "__main__":  # exploring: python test_counter_lru.py B_MB [agent args]
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        print(run(Path(d), *sys.argv[2:], b_mb=int(sys.argv[1])))
    os._exit(0)
