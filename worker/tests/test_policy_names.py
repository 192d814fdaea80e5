"""The API's policy names are exactly the simulator's: a run the API accepts is one the worker
can simulate, every simulator policy can be asked for, and each runs in the worker's byte mode."""

import numpy as np

from hitcurve.schemas.api import POLICIES, TIER_MODELS, SimulationIn
from hitcurve_testing.workloads import key_of_rank, zipf_ranks
from hitcurve_worker.simulation_tasks import simulate
from hitcurve_worker.trace_data import Trace, sim_module


def test_api_policies_are_the_simulators() -> None:
    names = [name for name, _ in sim_module().policies()]
    assert list(POLICIES) == [n for n in names if n not in TIER_MODELS]
    assert set(TIER_MODELS) <= set(names)


def test_api_accepts_every_policy_at_once_and_rejects_unknown() -> None:
    ok = SimulationIn(
        server_id="8e0b1c2e-5d4f-4c36-9d53-4b7f0f0e2a11", policies=list(POLICIES), sizes_bytes=[1 << 20]
    )
    assert ok.policies == list(POLICIES)
    try:
        SimulationIn(
            server_id="8e0b1c2e-5d4f-4c36-9d53-4b7f0f0e2a11",
            policies=["lru", "nosuch"],
            sizes_bytes=[1 << 20],
        )
    except ValueError as exc:
        assert "nosuch" in str(exc)
    else:
        raise AssertionError("an unknown policy was accepted")


def test_every_policy_runs_in_the_worker_and_sizes_drive_the_size_aware_ones() -> None:
    """The worker's run (bytes, value sizes from the trace): every policy answers, and with
    equally popular small (100 B) and large (8000 B) values the size-aware policies keep more
    objects than LRU at the same memory."""
    ranks = zipf_ranks(4000, 60_000, 0.6, seed=3)
    sizes = np.where(ranks % 2 == 0, 100, 8000).astype(np.uint32)
    trace = Trace(
        keys=key_of_rank(ranks),
        ops=np.zeros(len(ranks), dtype=np.uint8),
        sizes=sizes,
        costs=np.ones(len(ranks)),
        sample_rate=1.0,
        chunks=1,
    )
    mem = [2 << 20, 6 << 20]
    hr = {p: [r["hit_ratio"] for r in simulate(trace, p, mem)] for p in POLICIES}
    for p, (small, big) in hr.items():
        assert 0.0 < small <= big < 1.0, (p, small, big)
    for p in ("gdsf", "lhd"):
        assert hr[p][0] > hr["lru"][0] + 0.05, (p, hr[p], hr["lru"])
