"""Seeded load driver with known prefixes, value sizes and TTLs (the breakdown's live test and
benchmark). It speaks memcached's text protocol over one request/response connection: a get,
and on a miss a set with the prefix's TTL (the refill), and counts for itself what the agent
must find: per-prefix gets and hits, and per-key requests and sizes.
"""

from __future__ import annotations

import bisect
import random
import socket
import time
from collections import Counter
from dataclasses import dataclass, field

from hitcurve_testing.workloads import zipf_probabilities


@dataclass(frozen=True)
class Prefix:
    name: str
    share: float      # of reads
    keys: int
    size: int         # value bytes
    ttl: int          # seconds, 0 = none
    alpha: float = 0.9


# The default mix: a small hot config set, users without TTL, short-lived sessions, feeds with
# a longer TTL and big values, one-shot temp keys.
MIX = (
    Prefix("user", 0.40, 3000, 300, 0),
    Prefix("sess", 0.25, 4000, 100, 3),
    Prefix("feed", 0.20, 4000, 1500, 30),
    Prefix("cfg", 0.10, 40, 50, 0, 1.2),
    Prefix("tmp", 0.05, 50000, 4000, 5, 0.3),
)


@dataclass
class Counts:
    gets: Counter = field(default_factory=Counter)
    hits: Counter = field(default_factory=Counter)
    sets: Counter = field(default_factory=Counter)
    key_reads: Counter = field(default_factory=Counter)
    key_size: dict = field(default_factory=dict)


def _zipf_cdf(n: int, alpha: float) -> list[float]:
    cdf = zipf_probabilities(n, alpha).cumsum().tolist()
    cdf[-1] = 1.0  # a draw below 1 always finds its rank
    return cdf


class Driver:
    def __init__(self, port: int, mix=MIX, seed: int = 1):
        self.mix = mix
        self.rng = random.Random(seed)
        self.cdf = {p.name: _zipf_cdf(p.keys, p.alpha) for p in mix}
        self.share = []
        acc = 0.0
        for p in mix:
            acc += p.share
            self.share.append(acc)
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.s.makefile("rb")
        self.counts = Counts()
        # each key id maps to a random position so popularity is not in key order
        self.values = {p.name: b"v" * p.size for p in mix}

    def _pick(self) -> tuple[Prefix, bytes]:
        u = self.rng.random() * self.share[-1]
        p = self.mix[bisect.bisect_left(self.share, u)]
        i = bisect.bisect_left(self.cdf[p.name], self.rng.random())
        return p, b"%s:%d" % (p.name.encode(), min(i, p.keys - 1))

    def step(self) -> None:
        p, key = self._pick()
        c = self.counts
        self.s.sendall(b"get " + key + b"\r\n")
        line = self.f.readline()
        hit = line.startswith(b"VALUE")
        if hit:
            n = int(line.split()[3])
            self.f.read(n + 2)
            assert self.f.readline() == b"END\r\n"
        else:
            assert line == b"END\r\n", line
        c.gets[p.name] += 1
        c.hits[p.name] += hit
        c.key_reads[key] += 1
        c.key_size[key] = p.size
        if not hit:
            v = self.values[p.name]
            self.s.sendall(b"set %s 0 %d %d\r\n%s\r\n" % (key, p.ttl, len(v), v))
            r = self.f.readline()
            assert r in (b"STORED\r\n", b"SERVER_ERROR out of memory storing object\r\n"), r
            c.sets[p.name] += 1

    def run(self, seconds: float = 0, requests: int = 0, rate: float = 4000) -> Counts:
        """Until `seconds` pass or `requests` are done, at most `rate` requests/s: memcached's
        logger thread drains each worker's 64 KiB buffer only when it gets the CPU, and on a
        busy machine a faster driver makes it drop lines (log_worker_dropped)."""
        t0 = time.time()
        end = t0 + seconds if seconds else float("inf")
        n = 0
        while (not requests or n < requests):
            self.step()
            n += 1
            if n % 50 == 0:
                now = time.time()
                if now >= end:
                    break
                ahead = n / rate - (now - t0)
                if ahead > 0:
                    time.sleep(ahead)
        return self.counts

    def close(self) -> None:
        self.s.close()
