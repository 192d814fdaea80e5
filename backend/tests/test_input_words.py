"""Hit ratios and sizes as people write them: "92%" is 0.92 and a bare 92 is refused with the
hint; sizes take units ("64MiB", "1.5GiB", "500MB") and are stored and answered in bytes; an
unknown unit gets the list of units. The sizing queries and the cluster bodies read the same
types (schemas.common), so every route answers alike."""

import uuid

import pytest

from conftest import Account
from hitcurve.schemas.common import _as_bytes

NOBODY = uuid.uuid4()  # no such server: a request that passes validation answers 404


@pytest.mark.parametrize(
    ("text", "bytes_"),
    [
        ("0", 0),
        ("123", 123),
        ("64MiB", 64 << 20),
        ("64 MiB", 64 << 20),
        ("1.5GiB", 3 << 29),
        ("1.5 gib", 3 << 29),
        ("500MB", 500_000_000),
        ("2 TB", 2 * 10**12),
        ("7 B", 7),
    ],
)
def test_sizes_with_units(text: str, bytes_: int) -> None:
    assert _as_bytes(text) == bytes_


@pytest.mark.parametrize("text", ["64XB", "MiB", "-5MiB", "1e9", "64 M iB"])
def test_sizes_without_a_known_unit_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="a size is a whole number of bytes or a number with a unit"):
        _as_bytes(text)


def test_sizing_queries(account: Account) -> None:
    base = f"/api/v1/sizing/servers/{NOBODY}"
    r = account.get(f"{base}/memory", params={"target_hit_ratio": "92"})
    assert r.status_code == 422, r.text
    assert "did you mean 0.92 (92 %)?" in r.text and "92%" in r.text
    assert account.get(f"{base}/memory", params={"target_hit_ratio": "92%"}).status_code == 404
    assert account.get(f"{base}/memory", params={"target_hit_ratio": "0.92"}).status_code == 404
    r = account.get(f"{base}/memory", params={"target_hit_ratio": "120%"})
    assert r.status_code == 422 and "less than or equal to 1" in r.text
    assert account.get(f"{base}/hit-ratio", params={"memory_bytes": "64MiB"}).status_code == 404
    r = account.get(f"{base}/hit-ratio", params={"memory_bytes": "64XB"})
    assert r.status_code == 422 and "KiB, MiB, GiB" in r.text


def test_cluster_bodies_take_the_same_words(account: Account) -> None:
    r = account.post("/api/v1/clusters", json={"name": "words", "target_hit_ratio": 92})
    assert r.status_code == 422 and "did you mean 0.92" in r.text
    r = account.post(
        "/api/v1/clusters", json={"name": "words", "target_hit_ratio": "92%", "node_size_bytes": "2GiB"}
    )
    assert r.status_code == 201, r.text
    assert (r.json()["target_hit_ratio"], r.json()["node_size_bytes"]) == (0.92, 2 << 30)
    r = account.patch(f"/api/v1/clusters/{r.json()['id']}", json={"node_size_bytes": "1.5 GiB"})
    assert r.status_code == 200 and r.json()["node_size_bytes"] == 3 << 29
