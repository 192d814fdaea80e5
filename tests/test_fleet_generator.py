"""bench/fleet/fleet.py's verdict on its own generator: a run whose offered rate was not sent
fails, and says whether the simulator itself ran late (the machine) or the uploads waited for a
connection (the stack), so a slow machine does not pass for a slow stack, nor the reverse."""

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench" / "fleet"))

import fleet  # noqa: E402 - the benchmark's folder is not a package


def _result(**over: Any) -> dict[str, Any]:
    """A run of 10,000 agents every 60 s that sent what it offered, on time."""
    out = {
        "offered_uploads_per_s": 166.7,
        "sent_uploads_per_s": 166.5,
        "interval_s": 60.0,
        "generator_late_p95_s": 0.4,
        "generator_own_late_p95_s": 0.1,
        "connection_wait_p95_s": 0.3,
        "connections": 64,
        "windows_left_in_agent_spools": 0,
    }
    return out | over


def test_a_run_that_sent_the_offered_rate_on_time_passes() -> None:
    assert fleet.generator_shortfall(_result()) == []


def test_a_simulator_that_ran_late_is_named_as_the_machine_not_the_stack() -> None:
    why = fleet.generator_shortfall(
        _result(sent_uploads_per_s=120.0, generator_late_p95_s=30.0, generator_own_late_p95_s=29.0)
    )
    text = "; ".join(why)
    assert "sent 120.0 uploads/s of the 166.7 offered" in text
    assert "the simulator itself ran 29.0 s late" in text
    assert "connections" not in text


def test_uploads_waiting_for_a_connection_are_named_as_the_stack() -> None:
    why = fleet.generator_shortfall(
        _result(generator_late_p95_s=25.0, connection_wait_p95_s=24.9, windows_left_in_agent_spools=156)
    )
    text = "; ".join(why)
    assert "waited 24.9 s at p95 for one of the 64 connections" in text
    assert "156 windows were left" in text
    assert "simulator itself" not in text
