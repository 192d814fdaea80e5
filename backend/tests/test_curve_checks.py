"""The protocol's curve rules checked for all curves of a snapshot at once (schemas.agent._to_check,
numpy) must flag every curve the per-curve check (_check_curve) refuses, or a bad curve would be
stored; the error a bad snapshot gets is still the per-curve check's, for the first bad class."""

import json
import random

import pytest

from hitcurve.core.domain import Invalid
from hitcurve.ingest.uploads import parse
from hitcurve.schemas import agent as proto
from hitcurve_testing.snapshots import make_snapshot


def _refused(pts: list[tuple[float, float]], n: int) -> bool:
    try:
        proto._check_curve("c", pts, n)  # noqa: SLF001 - the rule the fast path must agree with
    except ValueError:
        return True
    return False


def test_every_curve_the_rules_refuse_is_flagged() -> None:
    rng = random.Random(19)
    n = 8
    for _ in range(300):
        curves = []
        for _ in range(rng.randint(1, 6)):
            xs = sorted(rng.sample(range(1, 60), n))
            ys = sorted(rng.random() for _ in range(n))
            pts = [(float(x), y) for x, y in zip(xs, ys, strict=True)]
            defect = rng.randrange(6)
            i = rng.randrange(1, n)
            if defect == 0:
                pts[i] = (pts[i - 1][0], pts[i][1])  # equal sizes
            elif defect == 1:
                pts[i] = (pts[i][0], pts[i - 1][1] - 1e-12)  # hit ratio falls by a hair
            elif defect == 2:
                pts[i] = (pts[i][0], pts[i - 1][1])  # flat hit ratio: allowed
            elif defect == 3 and rng.random() < 0.2:
                pts = pts[:-1]  # a curve of another length
            curves.append(pts)
        flagged = proto._to_check(curves, n)  # noqa: SLF001
        for pts, suspect in zip(curves, flagged, strict=True):
            assert suspect or not _refused(pts, n), pts


def test_the_first_bad_class_is_named() -> None:
    snap = make_snapshot(n_classes=4)
    for c in (1, 3):  # two bad classes: the error names the first
        p = snap["classes"][c]["curve"]["points"]
        p[5][1], p[6][1] = p[6][1] + 0.01, p[5][1]
    with pytest.raises(Invalid) as err:
        parse(json.dumps(snap).encode(), proto.Snapshot)
    first = snap["classes"][1]["id"]
    assert f"class {first}: curve hit ratios must be non-decreasing (point 6)" in str(err.value.detail)
