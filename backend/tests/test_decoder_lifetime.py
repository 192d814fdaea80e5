"""The upload decoders end with their API process, even when it is SIGKILLed.

Without this each API restart (a supervisor restarting a crashed process) left a decoder and its
forkserver behind for good: they hold each other's pipes, so neither ever saw EOF."""

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.live

_API = r"""
import asyncio
from hitcurve.ingest import uploads
async def main():
    try:
        await uploads.decode_in_pool("snapshot", b"{}", False, 1 << 20, 1)
    except Exception as exc:
        print("answer", getattr(exc, "code", type(exc).__name__), flush=True)
    print("PIDS", " ".join(str(p) for p in uploads._pool._processes), flush=True)
    await asyncio.sleep(120)
asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_decoders_and_forkserver_end_when_the_api_process_is_killed():
    api = subprocess.Popen(
        [sys.executable, "-c", _API], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert api.stdout is not None
        assert api.stdout.readline().split() == ["answer", "invalid_payload"]
        decoders = [int(p) for p in api.stdout.readline().split()[1:]]
        assert decoders and all(_alive(p) for p in decoders)
        with open(f"/proc/{decoders[0]}/stat") as f:
            forkserver = int(f.read().split()[3])
        assert forkserver != api.pid and _alive(forkserver)
    finally:
        os.kill(api.pid, signal.SIGKILL)
        api.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(_alive(p) for p in decoders + [forkserver]):
        time.sleep(0.2)
    assert [p for p in decoders + [forkserver] if _alive(p)] == []
