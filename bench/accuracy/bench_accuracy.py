#!/usr/bin/env python3
"""Live accuracy benchmark of what the product answers, on its own defaults (issues 4 and 14).

For each seeded workload: memcached 1.6.18 (Debian's, the version the brief names) at M with
`hitcurve-agent run` attached on its DEFAULTS (ghost factor, trace rate, buckets, estimator, key
limit; only the window is shortened, `--interval`, so that a run of minutes has tens of windows,
and the snapshots go to a directory instead of a backend). hc-loadgen drives a warm-up and a
measured phase (the same seeded streams every run). Then the product path, window by window, as
the backend and the worker run it:

  worker   every snapshot through hitcurve_worker.pipeline.compute (merge, the policy correction
           from the agent's trace chunks -- recomputed when the correction task would be, from
           the chunks received by then --, calibration, grading against the previous curve:
           the accuracy record the band's drift comes from);
  API      after each window, the answer an autoscaler polling then would get:
           hitcurve.sizing.recent_windows.use_windows (recent windows weighted by reads, quiet/lossy ones left
           out), set_band (the band at its stated confidence from the accuracy record and the
           stream loss), ratio_answer / memory_answer (PCHIP, the -m model, the hysteresis of the
           recommended limit).

References: real memcached 1.6.18 started at M/4, M/2, 2M and 4M replaying the same seeded
phases (hit ratio of the measured phase from `stats`), and M itself (the agent's run).
Rows printed per workload: predicted vs measured at each size with the target, whether the
measured point lies inside the band; then the recommended -m check (the -m the product gives for
the hit rate real memcached reached at 2M, run and measured), the band coverage, the number of
changes of the recommended limit over 30 polls after windows of stationary traffic (the workload
continues after the measured phase until the agent has closed 30 windows since the measured phase
began, stationary_phase; and what those polls answered), and the agent's peak memory.
Phase-matched row: the last answer rests on the newest windows, real memcached's figure on the
whole measured phase; on a workload whose hit rate above today's memory moves over spans longer
than those windows (the scan mix: a 200k-key loop back every ~1M requests) the two see different
phases, so the run also replays memcached's own policy (the simulator's
mcslru, checked against the real runs over the measured phase) over exactly the reads the answer
rests on (from the windows' read counts) and prints the product's error against that.

Run with the repository's virtual env: .venv/bin/python bench/accuracy/bench_accuracy.py (or
`make bench`, name `agent`). About 12 minutes per workload on the loaded 2-core machine (most of it
real memcached replaying 3.6M requests at each size); `--measured-cache` reuses those figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cost_terms
import memory_terms

ROOT = Path(__file__).resolve().parents[2]  # bench/accuracy/ -> repository
AGENT = ROOT / "bin" / "hitcurve-agent"
LOADGEN = ROOT / "bin" / "hc-loadgen"
for _p in ("worker", "backend", "simulator/python"):
    if str(ROOT / _p) not in sys.path:
        sys.path.insert(0, str(ROOT / _p))
# hitcurve_worker.correction_tasks (its recompute rule) builds the Celery app on import, which
# reads the settings; nothing here connects to either (the benchmark stores nothing).
os.environ.setdefault("HITCURVE_DATABASE_URL", "postgresql+psycopg://bench@127.0.0.1:9/unused")
os.environ.setdefault("HITCURVE_REDIS_URL", "redis://127.0.0.1:9/0")
MIB = 1 << 20
MEMCACHED_VERSION = "1.6.18"
# |error| targets in pp per size factor (the accuracy targets)
TARGET_PP = {0.25: 3.0, 0.5: 2.0, 1.0: 1.0, 2.0: 2.0, 4.0: 3.0}
M_CHECK_PP = 1.0
STABLE_POLLS = 30
# --agent-arg: flags added to the agent's command (an A/B against a default turned off); empty on
# the product's defaults
AGENT_ARGS: list[str] = []
MAX_CHANGES = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stats(port: int, what: str = "stats") -> dict[str, str]:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(what.encode() + b"\r\n")
        buf = b""
        while not buf.endswith(b"END\r\n"):
            buf += s.recv(65536)
    out = {}
    for line in buf.decode().splitlines():
        if line.startswith("STAT "):
            _, k, v = line.split(" ", 2)
            out[k] = v
    return out


def memcached_binary() -> str:
    """memcached 1.6.18: the binary the version matrix lists for it (scripts/memcached-versions.sh
    --list names Debian's /usr/bin/memcached for 1.6.18), else HITCURVE_BENCH_MEMCACHED."""
    env = os.environ.get("HITCURVE_BENCH_MEMCACHED")
    if env:
        return env
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "memcached-versions.sh"), "--list"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    for line in out.splitlines():
        ver, _, path = line.partition(" ")
        if ver == MEMCACHED_VERSION:
            return path
    raise SystemExit(f"no memcached {MEMCACHED_VERSION} (apt-get install memcached on Debian 12)")


class Memcached:
    def __init__(self, binary: str, mem_mb: int, *extra: str):
        """extra: more memcached options (bench_stats_only.py: -W, watch refused)."""
        self.port = free_port()
        cmd = [binary, "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-m", str(mem_mb), *extra]
        if os.geteuid() == 0:
            cmd += ["-u", "root"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(500):
            try:
                v = stats(self.port)["version"]
                break
            except OSError:
                time.sleep(0.02)
        else:
            raise RuntimeError("memcached did not start")
        if v != MEMCACHED_VERSION:
            raise RuntimeError(f"{binary} is memcached {v}, not {MEMCACHED_VERSION}")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def loadgen(port: int, wl: dict, requests: int, seed: int, *extra: str) -> dict:
    cmd = [
        str(LOADGEN),
        "--server",
        f"127.0.0.1:{port}",
        "--requests",
        str(requests),
        "--seed",
        str(seed),
        "--pipeline",
        str(wl.get("pipeline", 8)),
        "--quiet",
        *wl["args"],
        *extra,
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def run_phases(port: int, wl: dict, warm: int, measured: int) -> tuple[float, float, float, int | None]:
    """Warm-up (seed 1) then the measured phase (seed 2: it continues the workload rather than
    replaying the warm-up; a scan continues where the warm-up's stopped, --scan-start); the
    measured phase's hit ratio from memcached's own counters.

    Why the scan continues: hc-loadgen started every run's scan at key 0, so the measured phase
    re-read first the keys the warm-up had scanned last, ~400k requests earlier. On the scan mix
    memcached's policy (the simulator's mcslru on the seeded reads) then hit 0.77 at 2M over the
    measured phase's first 400k requests and 0.56-0.58 over each later 200k (4M: 0.82, then
    0.63): a restart transient, not the workload, and a third of the phase real memcached's figure
    averaged over; the answer, resting on the newest windows, saw only the steady part (2026-11-26,
    bench README). Also returns where the measured phase's scan stopped (None without a scan)."""
    first = loadgen(port, wl, warm, seed=1)
    t0 = time.time()
    s0 = stats(port)
    second = loadgen(port, wl, measured, 2, *continue_scan(wl, first["scan_end"]))
    s1 = stats(port)
    t1 = time.time()
    h = int(s1["get_hits"]) - int(s0["get_hits"])
    m = int(s1["get_misses"]) - int(s0["get_misses"])
    return h / (h + m), t0, t1, second.get("scan_end")


def windows_since(snapdir: Path, t0: float, seen: dict[str, float]) -> int:
    """The agent's windows written so far that started at or after t0 (`seen`: start per file,
    filled as files appear)."""
    for f in snapdir.glob("snapshot-*.json"):
        if f.name not in seen:
            try:
                seen[f.name] = _ts(json.loads(f.read_text())["window"]["start"])
            except (OSError, ValueError, KeyError):
                continue  # still being written
    return sum(1 for start in seen.values() if start >= t0)


def stationary_phase(
    port: int, wl: dict, scan_end: int | None, snapdir: Path, t0: float, windows: int, chunk: int
) -> tuple[float, int]:
    """The stability check (the recommended limit held steady over the polls) needs STABLE_POLLS windows of
    stationary traffic; the measured phase alone gave 7-9 of the agent's 1 s windows on the loaded machine
    (they stretch to ~2.5 s), and the last 30 polls of a run then reached back into the warm-up. So the
    workload continues (same distribution, new seeds, the scan carried on) in chunks of `chunk` requests until
    the agent has closed `windows` windows that started at or after t0 (the measured phase's start: memcached
    full, the warm-up behind it): counted in windows, not in wall time. Returns the time the traffic stopped
    and the requests sent."""
    seed, sent = 3, 0
    seen: dict[str, float] = {}
    while windows_since(snapdir, t0, seen) < windows:
        out = loadgen(port, wl, chunk, seed, *continue_scan(wl, scan_end) if scan_end is not None else ())
        scan_end = out.get("scan_end", scan_end)
        seed += 1
        sent += chunk
    return time.time(), sent


def continue_scan(wl: dict, scan_end: int) -> list[str]:
    """The measured phase's options that continue the warm-up's scan (none for other workloads)."""
    return ["--scan-start", str(scan_end)] if "scan" in wl["args"] else []


class MeasuredCache:
    """Real memcached's hit ratio per (workload, -m, phases): the replay is seeded, so a figure can
    be reused between runs with --measured-cache (development); make bench measures afresh."""

    def __init__(self, path: str | None, binary: str):
        self.path = Path(path) if path else None
        self.binary = binary
        self.data: dict[str, float] = {}
        if self.path and self.path.exists():
            self.data = json.loads(self.path.read_text())

    def get(self, wl: dict, mem_mb: int, warm: int, measured: int) -> float:
        # "scan continued": figures measured before the measured phase continued the warm-up's scan
        # are not reused
        key = json.dumps([MEMCACHED_VERSION, wl["args"], mem_mb, warm, measured, "scan continued"])
        if key not in self.data:
            mc = Memcached(self.binary, mem_mb)
            try:
                self.data[key] = run_phases(mc.port, wl, warm, measured)[0]
            finally:
                mc.stop()
            if self.path:
                self.path.write_text(json.dumps(self.data, indent=1))
        return self.data[key]


def _ts(s: str) -> float:
    """ISO (ms, Z) -> epoch seconds"""
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def _dt(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def peak_rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def agent_command(port: int, snapdir: Path, interval: float) -> list[str]:
    """The agent on its defaults, only the window shortened; snapshots and trace chunks to snapdir."""
    return [
        str(AGENT),
        "run",
        "--memcached",
        f"127.0.0.1:{port}",
        "--snapshot-dir",
        str(snapdir),
        "--spool-dir",
        str(snapdir / "spool"),
        "--interval",
        f"{interval:g}",
        "--stats-interval",
        "1",
        *AGENT_ARGS,
    ]


def live_run(
    binary: str, wl: dict, mem: int, warm: int, measured: int, interval: float, snapdir: Path, chunk: int
) -> dict:
    """memcached at M with the agent on its defaults; the snapshots and trace chunks it writes:
    warm-up, measured phase, then the stationary phase (stationary_phase) for the stability check."""
    mc = Memcached(binary, mem)
    shutil.rmtree(snapdir, ignore_errors=True)
    snapdir.mkdir(parents=True)
    log = open(snapdir / "agent.log", "w")  # noqa: SIM115
    agent = subprocess.Popen(agent_command(mc.port, snapdir, interval), stdout=log, stderr=log)
    try:
        time.sleep(0.5)
        hr, t0, t1, scan_end = run_phases(mc.port, wl, warm, measured)
        # the stationary phase's windows start from the measured phase's (+1: a window straddling
        # t0 is not counted, and one more closes while the last chunk runs)
        t2, stationary = stationary_phase(mc.port, wl, scan_end, snapdir, t0, STABLE_POLLS + 1, chunk)
        time.sleep(interval + 2)  # the window holding the end of the traffic closes
        rss = peak_rss_kib(agent.pid)
        agent.send_signal(signal.SIGTERM)
        agent.wait(120)
    finally:
        if agent.poll() is None:
            agent.kill()
        log.close()
        items = int(stats(mc.port)["curr_items"])
        mc.stop()
    meta = {
        "measured_at_M": hr,
        "t0": t0,
        "t1": t1,
        "t2": t2,
        "stationary_requests": stationary,
        "agent_peak_rss_kib": rss,
        "items_at_M": items,
    }
    (snapdir / "run.json").write_text(json.dumps(meta))
    return meta


# ---- the product path -------------------------------------------------------------------------


@dataclass
class Poll:
    """What an autoscaler polling after one window got."""

    window_end: float
    window_start: float
    ratios: list[Any]  # SizingAnswer per size (ratio_answer)
    memory: Any  # SizingAnswer for the target (memory_answer)
    correction: bool
    # the requests the answer rests on: reads counted before its oldest window, through its newest
    reads_span: tuple[int, int] = (0, 0)
    basis: Any = None  # the answer's Basis (memory_terms asks it for other targets)


@dataclass
class Product:
    polls: list[Poll] = field(default_factory=list)
    errors_pp: list[float] = field(default_factory=list)  # accuracy records, newest first
    correction_info: str = ""
    records: list[dict] = field(default_factory=list)  # the windows as the API weighs them (--record-windows)


def _correction(chunks: list[dict], snaps_so_far: list[dict], snap: dict):
    """What hitcurve.compute_policy_correction computes from the chunks received so far, for the
    server as in `snap`: the newest chunks up to MAX_RECORDS, the sample-size adjustment from the
    snapshot windows' reads."""
    from hitcurve_worker import correction_tasks as ct
    from hitcurve_worker import trace_chunks
    from hitcurve_worker.merge import class_from_protocol, merge
    from hitcurve_worker.policy_correction import InsufficientTrace, compute, read_ratio
    from hitcurve_worker.trace_data import assemble, columns_from_protocol

    take = trace_chunks.newest_within([len(d["records"]["op"]) for d in reversed(chunks)], ct.MAX_RECORDS)
    chosen = chunks[len(chunks) - take :]
    trace = assemble(
        [columns_from_protocol(d["records"]) for d in chosen], [float(d["sample_rate"]) for d in chosen]
    )
    wins = [
        (
            _ts(s["window"]["start"]),
            _ts(s["window"]["end"]),
            s["measured"]["cmd_get"] * (1 - s["loss"]["loss_ratio"]),
        )
        for s in snaps_so_far
    ]
    reads = [
        (
            _ts(d["start"]),
            _ts(d["end"]),
            float(d["sample_rate"]),
            sum(1 for o in d["records"]["op"] if o in trace_chunks.READS),
        )
        for d in chosen
        if float(d["sample_rate"]) == trace.sample_rate
    ]
    ratio, _ = read_ratio(reads, wins)
    classes = [class_from_protocol(c) for c in snap["classes"]]
    items = sum(c.current_items for c in classes)
    try:
        c = compute(trace, merge(classes).current_bytes, items, sample_adjust=ratio)
    except InsufficientTrace as exc:
        return None, str(exc)
    # as the worker applies it: what the task stores, read back as usable_correction reads the row
    # (the gap and the ghost view's lift); the warm-up share is not stored, kept for the report
    stored = ct.from_stored(SimpleNamespace(**ct.stored_values(c)))
    if stored is None:
        return None, "the stored policy correction is unusable"
    stored.warmup = c.warmup
    return stored, ""


def product_path(snapdir: Path, sizes: list[int], target: float | None, until: float) -> Product:
    """Every window through the worker's pipeline, then after each window the API's answers."""
    from hitcurve.rules import hysteresis, warmup
    from hitcurve.rules import windows as win
    from hitcurve.rules.curves import clean
    from hitcurve.rules.memlimit import ClassNow
    from hitcurve.schemas.sizing import Subject
    from hitcurve.sizing.answers import memory_answer, ratio_answer
    from hitcurve.sizing.recent_windows import basis_from_windows
    from hitcurve_worker import correction_tasks as ct
    from hitcurve_worker import policy_correction as pc
    from hitcurve_worker.merge import MergeInputError, class_from_protocol
    from hitcurve_worker.pipeline import Inputs, Previous, Window, compute

    snaps = sorted(
        (json.loads(p.read_text()) for p in snapdir.glob("snapshot-*.json")),
        key=lambda s: _ts(s["window"]["end"]),
    )
    chunks = sorted(
        (json.loads(p.read_text()) for p in snapdir.glob("trace-*.json")), key=lambda d: _ts(d["end"])
    )
    org, server = uuid.uuid4(), uuid.uuid4()
    subject = Subject(type="server", id=server)
    out = Product()
    correction, why_not = None, "no policy correction for this server yet (it needs sampled trace chunks)"
    corr_status: str | None = None
    corr_used = 0
    corr_through = 0.0
    previous: Previous | None = None
    wins: list[win.WindowCurve] = []
    facts: dict[datetime, list[ClassNow]] = {}
    band_errors: list[float] = []  # the accuracy records the API's band reads, newest first
    fills: list[warmup.FillSample] = []
    for i, s in enumerate(snaps):
        end = _ts(s["window"]["end"])
        if end > until:
            break
        # the correction task: due when enough new trace arrived (correction_tasks.needs_update)
        arrived = [d for d in chunks if _ts(d["end"]) <= end]
        new = sum(len(d["records"]["op"]) for d in arrived if _ts(d["end"]) > corr_through)
        due = (
            new >= pc.MIN_SAMPLED_GETS
            if corr_status is None
            else new >= max(ct.RECOMPUTE_MIN_RECORDS, ct.RECOMPUTE_SHARE * corr_used)
            if corr_status == "ok"
            else new >= ct.RECOMPUTE_MIN_RECORDS
        )
        if due and arrived and snaps[:i]:
            c, why = _correction(arrived, snaps[: i + 1], snaps[i - 1])
            corr_through = max(_ts(d["end"]) for d in arrived)
            if c is not None:
                correction, corr_status, corr_used = c, "ok", c.sampled_requests
                out.correction_info = (
                    f"policy correction from {c.sampled_gets} sampled reads (rate {c.sample_rate:g}, "
                    f"warm-up {c.warmup:.2f}, sample adjust {c.sample_adjust or 1:.3f})"
                )
            else:
                corr_status, why_not = "insufficient", f"no policy correction: {why}"
                if correction is None:
                    out.correction_info = why_not
        try:
            classes = [class_from_protocol(c) for c in s["classes"]]
        except (KeyError, ValueError):
            continue
        w = Window(
            org,
            server,
            uuid.uuid4(),
            _dt(s["window"]["start"]),
            _dt(s["window"]["end"]),
            s["measured"]["hit_ratio"],
        )
        try:
            rows = compute(
                Inputs(
                    w,
                    classes,
                    correction=correction,
                    why_not=why_not,
                    previous=previous,
                    history_pp=out.errors_pp,
                ),
                w.window_end,
            )
        except MergeInputError:
            continue
        sc = rows.server_curve
        if rows.accuracy is not None:
            out.errors_pp.insert(0, float(rows.accuracy["error_pp"]))
            if (s.get("memory") or {}).get("full", True):
                # the API's band counts records graded on full memcached only (recent_errors_pp)
                band_errors.insert(0, float(rows.accuracy["error_pp"]))
        ys = sc["hit_ratio_calibrated"] or sc["hit_ratio_proportional"]
        if sc["hit_ratio_calibrated"]:
            previous = Previous(w.snapshot_id, sc["sizes_bytes"], sc["hit_ratio_calibrated"])
        cx, cy = clean(list(sc["sizes_bytes"]), list(ys))
        if not cx:
            continue
        wins.append(
            win.WindowCurve(
                w.window_end,
                cx,
                cy,
                int(s["measured"]["cmd_get"]),
                float(s["loss"]["loss_ratio"]),
                bool(s["loss"]["flagged"]),
                int(sc["current_bytes"]),
                s["measured"]["hit_ratio"],
                (sc.get("calibration") or {}).get("ghost_reach_bytes"),
                (sc.get("calibration") or {}).get("ghost_filters"),
            )
        )
        facts[w.window_end] = [
            ClassNow(int(c["chunk_size"]), int(c["items"]), int(c["pages"])) for c in s["classes"]
        ]
        mem = s.get("memory")
        if mem:
            fills.append(
                warmup.FillSample(
                    w.window_end, int(mem["total_malloced"]), int(mem["limit_maxbytes"]), mem["full"]
                )
            )
        # the API after this window (server_basis + _server_facts, without the database)
        b = basis_from_windows(
            wins[-hysteresis.HISTORY_WINDOWS :],
            basis="calibrated" if sc["hit_ratio_calibrated"] else "estimate",
            classes=facts,
            fill=warmup.fill_state(fills[-10:]) if fills else None,
            limit_bytes=int(mem["limit_maxbytes"]) if mem else None,
            errors_pp=band_errors[:60],
        )
        assert b is not None
        out.records.append(
            {
                "window_end": w.window_end.isoformat(),
                "sizes_bytes": [round(x) for x in cx],
                "hit_ratios": [round(y, 6) for y in cy],
                "reads": int(s["measured"]["cmd_get"]),
                "loss_ratio": round(float(s["loss"]["loss_ratio"]), 6),
                "flagged": bool(s["loss"]["flagged"]),
                "current_bytes": int(sc["current_bytes"]),
                "measured_hit_ratio": s["measured"]["hit_ratio"],
                "classes": [[c.chunk_size, c.items, c.pages] for c in facts[w.window_end]],
                "memory": mem,
                "error_pp": rows.accuracy["error_pp"] if rows.accuracy is not None else None,
            }
        )
        out.records[-1]["ghost_reach_bytes"] = b.ghost_reach_bytes
        ratios = [ratio_answer(subject, b, float(x)) for x in sizes]
        memory = memory_answer(subject, b, target) if target is not None else None
        comb = win.combine(wins[-hysteresis.HISTORY_WINDOWS :])
        span = (0, 0)
        if comb is not None:
            used = [j for j, wc in enumerate(wins) if wc.window_end in comb.used]
            cum = [0]
            for wc in wins:
                cum.append(cum[-1] + wc.reads)
            span = (cum[used[0]], cum[used[-1] + 1])
        out.polls.append(
            Poll(end, _ts(s["window"]["start"]), ratios, memory, correction is not None, span, b)
        )
    return out


# ---- the benchmark ----------------------------------------------------------------------------


WORKLOADS = {
    "zipf0.9": {"args": ["--dist", "zipf", "--alpha", "0.9", "--keys", "1000000", "--value-size", "200"]},
    "zipf1.1": {"args": ["--dist", "zipf", "--alpha", "1.1", "--keys", "1000000", "--value-size", "200"]},
    "scan-mix": {
        "args": [
            "--dist",
            "scan",
            "--alpha",
            "0.9",
            "--keys",
            "1000000",
            "--value-size",
            "200",
            "--scan-frac",
            "0.2",
            "--scan-len",
            "200000",
        ]
    },
    "etc": {"args": ["--dist", "etc", "--alpha", "0.9", "--keys", "1000000", "--max-value", "4096"]},
}
# Op mixes of Twitter's 2020 per-cluster statistics (twitter/cache-trace, stat/2020Mar.md; Yang,
# Yue, Rashmi, "A large scale analysis of hundreds of in-memory cache clusters at Twitter",
# OSDI'20): shares of requests that are gets (refilled by a set on a miss), blind sets, deletes and
# incrs (a counter created by add on its first incr). tw-incr is cluster 22's mix (72 % get, 18 %
# incr, 10 % set, Zipf 0.76), tw-delete an invalidating look-aside cluster (65 % get, 22 %
# delete, 13 % set, Zipf 1.3), tw-set a write-heavy one (52 % get, 48 % set); 200-630 B values.
# No phase-matched reference (--no-phase: the simulator replays reads and sets only).
_TW = ["--dist", "zipf", "--keys", "1000000", "--min-value", "200", "--value-size", "630"]
WORKLOADS.update(
    {
        "tw-delete": {"args": [*_TW, "--alpha", "1.3", "--delete-frac", "0.22", "--update-frac", "0.13"]},
        "tw-incr": {"args": [*_TW, "--alpha", "0.76", "--incr-frac", "0.18", "--update-frac", "0.10"]},
        "tw-set": {"args": [*_TW, "--alpha", "1.1", "--update-frac", "0.48"]},
    }
)
FACTORS = [0.25, 0.5, 1.0, 2.0, 4.0]


def seeded_reads(wl: dict, warm: int, measured: int) -> Any:
    """The key ids the run read, in order (hc-loadgen --print-keys: the read sequence does not
    depend on hits), warm-up then measured phase."""
    import numpy as np

    if any(f in wl["args"] for f in ("--delete-frac", "--incr-frac")):
        raise SystemExit("phase-matched reference: the simulator has no deletes or incrs (--no-phase)")
    parts: list[Any] = []
    extra: list[str] = []
    for n, seed in ((warm, 1), (measured, 2)):
        r = subprocess.run(
            [str(LOADGEN), "--requests", str(n), "--seed", str(seed), "--print-keys", *wl["args"], *extra],
            capture_output=True,
            check=True,
        )
        parts.append(np.array(r.stdout.split(), dtype=np.uint64))
        if "scan" in wl["args"]:
            # where the warm-up's scan stopped, as run_phases continues it (scan ids follow --keys)
            keys = int(wl["args"][wl["args"].index("--keys") + 1])
            scan_len = int(wl["args"][wl["args"].index("--scan-len") + 1])
            last = int(parts[-1][parts[-1] >= keys][-1]) - keys
            extra = continue_scan(wl, (last + 1) % scan_len)
    return np.concatenate(parts)


def phase_matched(wl: dict, a: argparse.Namespace, items_at_m: int, span: tuple[int, int]) -> dict:
    """memcached's own policy (the simulator's mcslru: HOT/WARM/COLD, 2 hits to activate) on the
    full seeded read sequence at each size (items at M x factor), over the requests the last answer
    rests on (`span`, from the windows' read counts), and over the measured phase for comparison
    with the real memcached runs. Why: the answer rests on the newest windows; on a workload whose
    hit rate above today's memory moves over longer spans than those windows (the scan mix's loop
    of 200k keys comes back every ~1M requests), the measured phase of real memcached and the
    answer's windows see different phases of it."""
    hs = None
    try:
        from hitcurve_worker.trace_data import sim_module

        hs = sim_module()
    except ImportError:
        return {}
    keys = seeded_reads(wl, a.warm, a.measured)
    sizes = [max(1, round(f * items_at_m)) for f in FACTORS]

    def run(lo: int, hi: int) -> list[float]:
        hi = min(hi, len(keys))
        out = hs.simulate(keys[:hi], ["mcslru"], sizes, unit="items", warmup=lo / hi, threads=2)
        by = {int(r["size"]): float(r["hit_ratio"]) for r in out}
        return [by[k] for k in sizes]

    return {"span": list(span), "answer_span": run(*span), "measured_phase": run(a.warm, a.warm + a.measured)}


def bench_workload(name: str, a: argparse.Namespace, binary: str, cache: MeasuredCache, base: Path) -> dict:
    wl = WORKLOADS[name]
    mem = a.mem
    snapdir = base / f"snaps-{name}"
    run_file = snapdir / "run.json"
    if a.reuse_snapshots and run_file.exists():
        meta = json.loads(run_file.read_text())
    else:
        meta = live_run(binary, wl, mem, a.warm, a.measured, a.interval, snapdir, a.stationary_chunk)
    measured = {}
    for f in FACTORS:
        if f == 1.0:
            measured[f] = meta["measured_at_M"]
        else:
            measured[f] = cache.get(wl, int(mem * f), a.warm, a.measured)
    sizes = [int(f * mem * MIB) for f in FACTORS]
    target = measured[2.0]
    # the accuracy figures: the answer polled right after the measured phase (real memcached's
    # figures are over that phase); the stability figures: the polls of the stationary windows
    accuracy_until = meta["t1"] + a.interval + 1.5
    prod = product_path(snapdir, sizes, target, until=meta.get("t2", meta["t1"]) + a.interval + 1.5)
    inside = [p for p in prod.polls if meta["t0"] < p.window_end <= accuracy_until]
    last = [p for p in prod.polls if p.window_end <= accuracy_until][-1]
    rows = []
    for f, x, ans in zip(FACTORS, sizes, last.ratios, strict=True):
        m = measured[f]
        lo, hi = ans.band.hit_rate_min, ans.band.hit_rate_max
        rows.append(
            {
                "factor": f,
                "mem_mb": x // MIB,
                "measured": m,
                "predicted": ans.hit_ratio,
                "error_pp": (ans.hit_ratio - m) * 100,
                "status": ans.status,
                "band_min": lo,
                "band_max": hi,
                # a bound (above_curve: no high side, hit_rate_max null) holds m when m is above its low
                "inside": lo is not None and lo <= m and (hi is None or m <= hi),
            }
        )
    # the -m check: the -m the product gives for the hit rate real memcached reached at 2M
    ma = last.memory
    m_check: dict[str, Any] = {"target": target, "status": ma.status if ma else None}
    if ma is not None and ma.memory_limit_bytes:
        limit_mb = ma.memory_limit_bytes // MIB
        m_check |= {"limit_mb": limit_mb, "measured": cache.get(wl, limit_mb, a.warm, a.measured)}
        m_check["error_pp"] = (m_check["measured"] - target) * 100
    # stability: the recommended limit an autoscaler saw over STABLE_POLLS polls, one after each
    # window of stationary traffic (windows that started at or after the measured phase's start,
    # stationary_phase); runs kept from before the stationary phase: their last STABLE_POLLS polls
    polls = [p for p in prod.polls if p.memory is not None]
    if "t2" in meta:
        polls = [p for p in polls if p.window_start >= meta["t0"]][:STABLE_POLLS]
    else:
        polls = polls[-STABLE_POLLS:]
    recs = [p.memory.recommended_memory_limit_bytes for p in polls]
    raws = [p.memory.memory_limit_bytes for p in polls]

    # a change: two consecutive polls recommending different limits (a poll without a
    # recommendation, e.g. a target past the curve, is counted apart)
    def moves(vals: list) -> int:
        have = [v for v in vals if v is not None]
        return sum(1 for u, v in zip(have, have[1:], strict=False) if u != v)

    changes, raw_changes = moves(recs), moves(raws)
    return {
        "workload": name,
        "mem": mem,
        "rows": rows,
        "memory_terms": memory_terms.score(last.basis, measured, mem),
        "cost_terms": cost_terms.score(
            last.basis,
            measured,
            mem,
            # real memcached past the grid, where an answer past the curve's end is a bound to check
            {f: cache.get(wl, int(mem * f), a.warm, a.measured) for f in cost_terms.PAST_FACTORS},
        ),
        "m_check": m_check,
        "stability": {
            "polls": len(recs),
            "without": sum(1 for r in recs if r is None),
            # what those polls answered for the target ("unreachable" while the ghost
            # was still filling, where the answer is a lower bound)
            "statuses": dict(sorted(Counter(p.memory.status for p in polls).items())),
            "since_s": round(polls[0].window_end - meta["t0"], 1) if polls else None,
            "through_s": round(polls[-1].window_end - meta["t0"], 1) if polls else None,
            "changes": changes,
            "raw_changes": raw_changes,
            "recommended_mib": sorted({r // MIB for r in recs if r}),
            "raw_mib": sorted({r // MIB for r in raws if r}),
        },
        "windows": len(inside),
        "correction": prod.correction_info,
        "correction_applied_last": last.correction,
        "agent_peak_rss_kib": meta["agent_peak_rss_kib"],
        "items_at_M": meta["items_at_M"],
        "confidence": last.ratios[0].band.confidence,
        "phase": phase_matched(wl, a, meta["items_at_M"], last.reads_span) if not a.no_phase else {},
        # memcached's own -m and hit rate at each size with the windows: the memory-terms fixture
        "recorded": {
            "target_hit_ratio": target,
            "mem_mb": mem,
            "measured": {f"{f:g}": measured[f] for f in FACTORS},
            "windows": prod.records,
        },
    }


def print_result(r: dict) -> None:
    print(
        f"\n== {r['workload']}: M = {r['mem']} MiB, {r['items_at_M']} items at M, "
        f"{r['windows']} windows in the "
        f"measured phase; agent peak RSS {r['agent_peak_rss_kib'] / 1024:.1f} MiB; {r['seconds']} s\n"
        f"   {r['correction']} (applied to the last answer: {r['correction_applied_last']})"
    )
    print(
        f"{'size':>6} {'-m MiB':>6} {'memcached':>9} {'product':>8} {'error pp':>8} {'target':>7} "
        f"{'status':>11} "
        f"{'band (' + format(r['confidence'] or 0, '.0%') + ')':>16} inside  {memory_terms.HEADER}"
    )
    terms = {t["factor"]: t for t in r.get("memory_terms", [])}
    for row in r["rows"]:
        ok = abs(row["error_pp"]) <= TARGET_PP[row["factor"]] and row["status"] == "ok"
        band = (
            f"{row['band_min']:.4f}-{row['band_max']:.4f}"
            if row["band_min"] is not None and row["band_max"] is not None
            else f"{row['band_min'] or 0:.4f}-?"
        )
        print(
            f"{row['factor']:>5}M {row['mem_mb']:>6} {row['measured']:>9.4f} {row['predicted']:>8.4f} "
            f"{row['error_pp']:>+8.2f} {'<=' + format(TARGET_PP[row['factor']], 'g') + ' pp':>7} "
            f"{row['status']:>11} {band:>16} {'yes' if row['inside'] else 'NO':>6}  "
            + f"{'' if ok else 'MISSED':6} "
            + (f"| {memory_terms.cell(terms[row['factor']])}" if row["factor"] in terms else "")
        )
    ph = r.get("phase")
    if ph:
        lo, hi = ph["span"]
        sim_err = max(
            abs(x - row["measured"]) for x, row in zip(ph["measured_phase"], r["rows"], strict=True)
        )
        print(
            f"   phase-matched: the last answer rests on reads {lo}..{hi}; memcached's policy (mcslru) "
            "on the seeded reads agrees with real memcached over the measured phase within "
            f"{sim_err * 100:.2f} pp"
        )
        print(
            "   "
            + "  ".join(
                f"{row['factor']:g}M {x:.4f} ({(row['predicted'] - x) * 100:+.2f} pp)"
                for x, row in zip(ph["answer_span"], r["rows"], strict=True)
            )
            + "  (mcslru over the answer's reads; product - it)"
        )
    c = r["m_check"]
    if "limit_mb" in c:
        print(
            f"   recommended -m check: 2M measured {c['target']:.4f} -> product says -m {c['limit_mb']} "
            f"-> memcached -m {c['limit_mb']} measured {c['measured']:.4f}: {c['error_pp']:+.2f} pp "
            f"(target <= {M_CHECK_PP:g} pp)" + ("" if abs(c["error_pp"]) <= M_CHECK_PP else "  MISSED")
        )
    else:
        print(f"   recommended -m check: no -m for {c['target']:.4f} (status {c['status']})  MISSED")
    st = r["stability"]
    print(
        f"   stability: {st['changes']} change(s) of recommended_memory_limit_bytes over {st['polls']} polls "
        f"(windows ending {st['since_s']:+} .. {st['through_s']:+} s from the measured phase's start; "
        f"target <= {MAX_CHANGES} over {STABLE_POLLS})"
        + ("" if st["changes"] <= MAX_CHANGES and st["polls"] >= STABLE_POLLS else "  MISSED")
        + f"\n     {st['without']} poll(s) without one (answers {st['statuses']}); "
        f"the raw -m changed {st['raw_changes']} times "
        f"(recommended {st['recommended_mib']} MiB, raw {st['raw_mib']} MiB)"
    )
    if r.get("cost_terms"):
        print(
            f"   cost-optimal -m against real memcached's grid (memory {cost_terms.PRICE_PER_GIB_MONTH:g} a "
            f"GiB-month, {cost_terms.READS_PER_SECOND:g} reads/s, a whole miss ratio priced as lambda MiB):"
        )
        print("     " + cost_terms.HEADER)
        for line in cost_terms.lines(r["cost_terms"]):
            print("     " + line)
    sys.stdout.flush()


def summary(results: list[dict]) -> None:
    rows = [row for r in results for row in r["rows"]]
    inside = sum(1 for row in rows if row["inside"])
    conf = results[0]["confidence"] or 0
    print(f"\n== summary over {len(results)} workloads x {len(FACTORS)} sizes")
    print(f"{'size':>6} " + " ".join(f"{r['workload']:>10}" for r in results) + "   target")
    for i, f in enumerate(FACTORS):
        print(
            f"{f:>5}M "
            + " ".join(f"{r['rows'][i]['error_pp']:>+10.2f}" for r in results)
            + f"   <= {TARGET_PP[f]:g} pp"
        )
    print(
        f"band coverage: {inside}/{len(rows)} = {inside / len(rows):.0%} of measured hit rates inside "
        f"the band "
        f"(stated confidence {conf:.0%})" + ("" if inside / len(rows) >= conf else "  MISSED")
    )
    print(memory_terms.summary(results))
    print(cost_terms.summary(results))
    beyond = [r["workload"] for r in results if r["rows"][-1]["status"] != "ok"]
    print(f"4M answered inside the curve: {'all' if not beyond else 'NOT for ' + ', '.join(beyond)}")
    rss = [r["agent_peak_rss_kib"] for r in results if r["agent_peak_rss_kib"]]
    if rss:
        print(f"agent peak RSS on its defaults: {max(rss) / 1024:.1f} MiB (max over the workloads)")


def main() -> int:
    global MEMCACHED_VERSION
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mem", type=int, default=32, help="M in MiB (default 32)")
    # The warm-up makes every size stationary before the measured phase: at 600k requests memcached
    # at 4M (128 MiB) was still filling and its hit ratio rose from 0.78 to 0.85 across the measured
    # phase, and the agent's ghost needs (K - 1) x N evictions before it sees out to K x N.
    ap.add_argument("--warm", type=int, default=2400000, help="warm-up requests (seed 1)")
    ap.add_argument("--measured", type=int, default=1200000, help="measured requests (seed 2)")
    ap.add_argument("--interval", type=float, default=1, help="agent --interval (s): windows per run")
    ap.add_argument("--workloads", default="zipf0.9,zipf1.1,scan-mix")
    ap.add_argument(
        "--stationary-chunk",
        type=int,
        default=100000,
        help="requests per load generator call of the stationary phase (until 30 windows are closed)",
    )
    ap.add_argument("--keep", help="keep the agent's snapshots and trace chunks under this directory")
    ap.add_argument("--reuse-snapshots", action="store_true", help="with --keep: reuse a kept agent run")
    ap.add_argument("--measured-cache", help="reuse real memcached figures from this JSON file (seeded)")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument(
        "--no-phase", action="store_true", help="skip the phase-matched mcslru reference (no simulator)"
    )
    ap.add_argument(
        "--record-windows",
        help="write each workload's windows as the API weighs them here (the stability test's fixture)",
    )
    ap.add_argument(
        "--agent-arg",
        action="append",
        default=[],
        help="a flag for the agent beyond its defaults, e.g. --agent-arg=--invalidations=0 (repeatable)",
    )
    ap.add_argument(
        "--memcached-version",
        default=MEMCACHED_VERSION,
        help="a version of the matrix (scripts/memcached-versions.sh; default 1.6.18, Debian 12's)",
    )
    a = ap.parse_args()
    MEMCACHED_VERSION = a.memcached_version
    AGENT_ARGS[:] = [x for arg in a.agent_arg for x in arg.split("=", 1)]
    for b in (AGENT, LOADGEN):
        if not b.exists():
            print(f"missing {b}: make build", file=sys.stderr)
            return 2
    binary = memcached_binary()
    cache = MeasuredCache(a.measured_cache, binary)
    print(
        f"memcached {MEMCACHED_VERSION} ({binary}); agent on its defaults except --interval {a.interval:g}"
        f"{' ' + ' '.join(AGENT_ARGS) if AGENT_ARGS else ''}; "
        f"M = {a.mem} MiB; {a.warm} warm-up + {a.measured} measured requests per run"
    )
    results = []
    with tempfile.TemporaryDirectory() as td:
        base = Path(a.keep) if a.keep else Path(td)
        base.mkdir(parents=True, exist_ok=True)
        for name in a.workloads.split(","):
            t = time.time()
            r = bench_workload(name, a, binary, cache, base)
            r["seconds"] = round(time.time() - t, 1)
            results.append(r)
            print_result(r)
    summary(results)
    recorded = {r["workload"]: r.pop("recorded") for r in results}
    if a.record_windows:
        Path(a.record_windows).write_text(json.dumps(recorded, separators=(",", ":")))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
