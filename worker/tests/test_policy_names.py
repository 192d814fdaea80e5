"""The API's policy names are exactly the simulator's: a run the API accepts is one the worker
can simulate, and every simulator policy can be asked for."""

from hitcurve.schemas.api import POLICIES, SimulationIn
from hitcurve_worker.trace_data import sim_module


def test_api_policies_are_the_simulators() -> None:
    assert list(POLICIES) == [name for name, _ in sim_module().policies()]


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
