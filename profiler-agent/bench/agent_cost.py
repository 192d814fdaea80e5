#!/usr/bin/env python3
"""CPU cost of the live agent per watch line, on a recorded real stream fed at full speed.

  record  run a real memcached under hc-loadgen (zipf, pipelined, TTLs), read its
          `watch fetchers mutations evictions deletions` stream into a file and poll its four
          `stats` commands every 0.25 s, noting the stream offset of each poll. Keys `k<id>` are
          rewritten to `p<id mod 16>:<id>` (16 prefixes for the prefix breakdown; lines are
          otherwise memcached's own).
  run     serve that file from a fake memcached endpoint (the watch connection gets the whole
          stream as fast as the agent reads it; `stats*` answer memcached's recorded replies
          for the stream offset sent so far, so windows see matching counters) to the real
          agent binary with its defaults (breakdown, trace chunks to --snapshot-dir). Reports the
          agent's CPU seconds (/proc/PID/task/*/schedstat, all threads, idle rate subtracted) per line the
          agent counted, per thread, and its peak RSS.

CPU time, not wall time: robust on a shared machine. Instructions per line (stable under load):
`run --callgrind` runs the agent under valgrind on the first --lines lines.

usage: agent_cost.py record OUT.watch [--lines 3000000]
       agent_cost.py run OUT.watch [--repeat 3] [--agent-arg=--breakdown=0 ...]
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "bin" / "hitcurve-agent"
LOADGEN = ROOT / "bin" / "hc-loadgen"
STATS_CMDS = (b"stats", b"stats items", b"stats slabs", b"stats settings")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_until(sock: socket.socket, buf: bytearray, end: bytes) -> bytes:
    while end not in buf:
        d = sock.recv(1 << 16)
        if not d:
            raise ConnectionError("closed")
        buf += d
    i = buf.index(end) + len(end)
    out = bytes(buf[:i])
    del buf[:i]
    return out


def memcached_bin() -> str:
    for p in (ROOT / ".run/memcached/1.6.45/memcached", Path("/work/main/.run/memcached/1.6.45/memcached")):
        if p.exists():
            return str(p)
    sys.exit("no memcached 1.6.45 under .run/memcached (make build)")


def record(args) -> None:
    port = free_port()
    mc = subprocess.Popen(
        [
            memcached_bin(),
            "-p",
            str(port),
            "-U",
            "0",
            "-t",
            "2",
            "-m",
            "64",
            "-o",
            "worker_logbuf_size=262144",
        ]
        + (["-u", "root"] if os.geteuid() == 0 else [])
    )
    for _ in range(200):
        try:
            w = socket.create_connection(("127.0.0.1", port))
            break
        except OSError:
            time.sleep(0.05)
    w.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    w.sendall(b"watch fetchers mutations evictions deletions\r\n")
    buf = bytearray()
    assert read_until(w, buf, b"\r\n") == b"OK\r\n"
    chunks = [bytes(buf)]
    total = [len(buf)]
    stop = threading.Event()
    polls: list[dict] = []

    def poller() -> None:
        s = socket.create_connection(("127.0.0.1", port))
        sb = bytearray()
        while not stop.is_set():
            off = total[0]
            replies = {}
            for c in STATS_CMDS:
                s.sendall(c + b"\r\n")
                replies[c.decode()] = read_until(s, sb, b"END\r\n").decode()
            polls.append({"offset": off, "replies": replies})
            time.sleep(0.25)

    pt = threading.Thread(target=poller, daemon=True)
    pt.start()
    lg = subprocess.Popen(
        [
            str(LOADGEN),
            "--server",
            f"127.0.0.1:{port}",
            "--dist",
            "zipf",
            "--alpha",
            "0.9",
            "--keys",
            "2000000",
            "--pipeline",
            "16",
            "--conns",
            "2",
            "--requests",
            "0",
            "--duration",
            "600",
            "--ttl",
            "3600",
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
    )
    want = args.lines * 95  # ~95 bytes a line
    while total[0] < want:
        d = w.recv(1 << 20)
        if not d:
            break
        chunks.append(d)
        total[0] += len(d)
    lg.terminate()
    lg.wait()
    stop.set()
    pt.join()
    mc.terminate()
    mc.wait()
    data = b"".join(chunks)
    data = data[: data.rindex(b"\n") + 1]
    # Rewrite keys per line-aligned segment so every poll's offset still points between lines.
    pat = re.compile(rb"key=k(\d+)")
    out, index, pos = [], [], 0
    new_off = 0
    for p in polls + [{"offset": len(data), "replies": None}]:
        end = min(p["offset"], len(data))
        if end > pos:
            end = data.rindex(b"\n", pos, end) + 1 if b"\n" in data[pos:end] else pos
        seg = pat.sub(lambda m: b"key=p%d:%s" % (int(m.group(1)) % 16, m.group(1)), data[pos:end])
        out.append(seg)
        new_off += len(seg)
        pos = end
        if p["replies"]:
            index.append({"offset": new_off, "replies": p["replies"]})
    Path(args.out).write_bytes(b"".join(out))
    Path(args.out + ".stats.json").write_text(json.dumps(index))
    lines = sum(s.count(b"\n") for s in out)
    print(f"recorded {lines} lines, {new_off} bytes, {len(index)} stats polls -> {args.out}")


class FakeMemcached:
    """The watch stream from a file; `stats*` from the recorded replies at the offset sent."""

    def __init__(self, data: bytes, index: list[dict], chunk: int = 1 << 20):
        self.data, self.index, self.chunk = data, index, chunk
        self.offsets = [e["offset"] for e in index]
        self.sent = 0
        self.watching = threading.Event()
        self.go = threading.Event()
        self.done = threading.Event()
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        buf = bytearray()
        try:
            while True:
                cmd = read_until(c, buf, b"\r\n")[:-2]
                if cmd.startswith(b"watch"):
                    c.sendall(b"OK\r\n")
                    self.watching.set()
                    self.go.wait()
                    mv = memoryview(self.data)
                    for i in range(0, len(self.data), self.chunk):
                        c.sendall(mv[i : i + self.chunk])
                        self.sent = min(len(self.data), i + self.chunk)
                    self.done.set()
                    while c.recv(1 << 16):  # hold the stream open, quiet, like an idle memcached
                        pass
                    return
                if cmd.decode() in self.index[0]["replies"]:
                    i = max(0, bisect.bisect_right(self.offsets, self.sent) - 1)
                    c.sendall(self.index[i]["replies"][cmd.decode()].encode())
                else:
                    c.sendall(b"ERROR\r\n")
        except (ConnectionError, OSError):
            pass
        finally:
            c.close()


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds per thread: the scheduler's exact run time (schedstat, ns), not tick samples."""
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError, ValueError):  # a thread that just exited
            out[int(t)] = int(Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[0]) / 1e9
    return out


def proc_cpu(pid: int) -> float:
    return sum(thread_cpu(pid).values())


def one_run(agent: str, data: bytes, index: list[dict], agent_args: list[str], callgrind: str | None) -> dict:
    fake = FakeMemcached(data, index)
    snapdir = tempfile.mkdtemp(prefix="hc-cost-")
    cmd = [
        agent,
        "run",
        "--memcached",
        f"127.0.0.1:{fake.port}",
        "--snapshot-dir",
        snapdir,
        "--log-level",
        "info",
        *agent_args,
    ]
    if os.environ.get("AGENT_COST_WRAP"):  # e.g. a `perf record -- "$@"` script
        cmd = [os.environ["AGENT_COST_WRAP"], *cmd]
    if callgrind:
        # the line path only: the reader thread and the main thread's ring and event loop (not
        # start-up allocation nor the window's snapshot, which --interval amortises)
        cmd = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={callgrind}",
            "--toggle-collect=watch_main",
            "--toggle-collect=process_ring",
            "--toggle-collect=drain_events",
            *cmd,
        ]
    log = open(os.path.join(snapdir, "agent.log"), "w+")  # noqa: SIM115 (the agent's whole life)
    ag = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    if not fake.watching.wait(120 if callgrind else 20):
        ag.kill()
        raise RuntimeError("the agent never sent watch")
    time.sleep(3 if callgrind else 1.5)  # first window opened, tables allocated
    c0, t0 = proc_cpu(ag.pid), time.monotonic()
    time.sleep(1.0)
    idle = (proc_cpu(ag.pid) - c0) / (time.monotonic() - t0)
    c0, t0 = proc_cpu(ag.pid), time.monotonic()
    th0 = thread_cpu(ag.pid)
    fake.go.set()
    fake.done.wait()
    # everything is in the agent's socket buffer: wait until it has gone through (CPU goes idle)
    last = proc_cpu(ag.pid)
    while True:
        time.sleep(0.5)
        now = proc_cpu(ag.pid)
        if now - last < 0.5 * max(idle, 0.02):
            break
        last = now
    c1, t1 = proc_cpu(ag.pid), time.monotonic()
    th1 = thread_cpu(ag.pid)
    rss = int(re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{ag.pid}/status").read_text()).group(1))
    ag.send_signal(signal.SIGTERM)
    # the last window's close (curves, snapshot, trace chunk), once per --interval in production
    _, _, ru = os.wait4(ag.pid, 0)
    ag.returncode = 0
    close_cpu = ru.ru_utime + ru.ru_stime - c1
    log.seek(0)
    text = log.read()
    m = re.findall(r"agent_exit windows=(\d+) lines=(\d+) agent_dropped=(\d+)", text)
    windows, lines, dropped = map(int, m[-1]) if m else (0, 0, 0)
    cpu = (c1 - c0) - idle * (t1 - t0)
    threads = {tid: c - th0.get(tid, 0.0) for tid, c in th1.items()}
    main_cpu = threads.pop(ag.pid, 0.0)
    reader_tid = max(threads, key=threads.get)  # the watch reader: the other busy thread
    reader_cpu = threads.pop(reader_tid)
    read = lines + dropped  # the reader parsed every line; the ring took `lines` of them
    fake.srv.close()
    return {
        "lines_read": read,
        "lines_profiled": lines,
        "agent_dropped": dropped,
        "windows": windows,
        "cpu_s": round(cpu, 3),
        "us_per_line": round(cpu / max(read, 1) * 1e6, 3),
        "reader_us_per_line": round(reader_cpu / max(read, 1) * 1e6, 3),
        "main_us_per_line": round(main_cpu / max(lines, 1) * 1e6, 3),
        "other_threads_cpu_s": round(sum(threads.values()), 3),
        "window_close_cpu_s": round(close_cpu, 3),
        "idle_cpu_per_s": round(idle, 4),
        "peak_rss_kib": rss,
        "snapdir": snapdir,
    }


def run(args) -> None:
    data = Path(args.file).read_bytes()
    index = json.loads(Path(args.file + ".stats.json").read_text())
    if args.lines:
        end = 0
        for _ in range(args.lines):
            end = data.index(b"\n", end) + 1
        data = data[:end]
    nl = data.count(b"\n")
    print(f"stream: {nl} lines, {len(data)} bytes; agent args: {args.agent_arg}")
    for _ in range(args.repeat):
        cg = args.callgrind
        res = one_run(args.agent, data, index, args.agent_arg, cg)
        print(json.dumps(res))
        if cg:
            out = subprocess.run(["callgrind_annotate", cg], capture_output=True, text=True).stdout
            ir = int(re.search(r"([\d,]+) \(100.0%\) +PROGRAM TOTALS", out).group(1).replace(",", ""))
            print(f"instructions on the line path: {ir}, per line: {ir / max(res['lines_read'], 1):.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out")
    r.add_argument("--lines", type=int, default=3_000_000)
    u = sub.add_parser("run")
    u.add_argument("file")
    u.add_argument("--repeat", type=int, default=3)
    u.add_argument("--lines", type=int, default=0, help="only the first N lines")
    u.add_argument("--agent-arg", action="append", default=[], help="extra agent flag (repeatable)")
    u.add_argument("--agent", default=str(AGENT), help="agent binary (default bin/hitcurve-agent)")
    u.add_argument("--callgrind", metavar="OUT", help="run the agent under callgrind into OUT")
    args = ap.parse_args()
    record(args) if args.cmd == "record" else run(args)


if __name__ == "__main__":
    main()
