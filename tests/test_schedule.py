"""hitcurve_testing.schedule: the order pytest-xdist's work-stealing scheduler gets the tests in
(scripts/test.sh runs the suite with -n 4 --dist worksteal)."""

from hitcurve_testing.schedule import run_lengths, worksteal_order


def _suite() -> tuple[list[str], dict[str, float]]:
    """60 short modules of 10 tests and, at the end as collected, four long ones."""
    items = [f"short{m:02d}.py::t{k}" for m in range(60) for k in range(10)]
    items += ["agent_live.py::t0", "agent_live.py::t1", "agent_live.py::t2"]
    items += ["page_moves.py::a", "page_moves.py::b"]
    items += ["version_matrix.py::row", "backend_down.py::t"]
    seconds = {"version_matrix.py": 480, "page_moves.py": 390, "agent_live.py": 320, "backend_down.py": 200}
    seconds |= {f"short{m:02d}.py": 3 for m in range(60)}
    return items, seconds


def _module(item: str) -> str:
    return item.split("::")[0]


def _runs(order: list[str], workers: int) -> list[list[str]]:
    out, at = [], 0
    for size in run_lengths(len(order), workers):
        out.append(order[at : at + size])
        at += size
    return out


def test_run_lengths_are_the_schedulers_first_split() -> None:
    assert run_lengths(10, 4) == [2, 2, 3, 3]
    assert sum(run_lengths(2371, 4)) == 2371


def test_each_worker_starts_with_its_share_of_the_long_modules() -> None:
    items, seconds = _suite()
    order = worksteal_order(items, _module, seconds, 4)
    assert sorted(order) == sorted(items)
    firsts = [_module(run[0]) for run in _runs(order, 4)]
    # longest first, each to the worker with the least so far: one long module per worker
    assert firsts == ["version_matrix.py", "page_moves.py", "agent_live.py", "backend_down.py"]
    # modules stay whole (their module fixtures start once) and short ones keep their order
    for module in {_module(i) for i in items}:
        at = [k for k, i in enumerate(order) if _module(i) == module]
        assert at == list(range(at[0], at[0] + len(at))) or module.startswith("short"), module
    shorts = [i for i in order if i.startswith("short")]
    assert shorts == [i for i in items if i.startswith("short")]


def test_two_workers_balance_the_long_modules_by_length() -> None:
    items, seconds = _suite()
    runs = _runs(worksteal_order(items, _module, seconds, 2), 2)
    long = [{_module(i) for i in run if seconds.get(_module(i), 0) >= 15} for run in runs]
    # LPT: 480 + 200 = 680 against 390 + 320 = 710
    assert long == [{"version_matrix.py", "backend_down.py"}, {"page_moves.py", "agent_live.py"}]
