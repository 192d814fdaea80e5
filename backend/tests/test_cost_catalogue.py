"""The node catalogue (hitcurve.cost.catalogue over node_types.json): dated, every filled figure
tied to a source; N x type for a size by hand; the cheapest priced type; Memorystore's count;
malformed entries refused with the field named."""

import copy
import json
import math

import pytest

from hitcurve.cost import catalogue

GB = 10**9


def test_the_shipped_catalogue_is_dated_and_sourced() -> None:
    doc = json.loads(catalogue.PATH.read_text())
    assert doc["as_of"] == "2026-12-03" and doc["unverified"]
    for t in doc["types"] + doc["shapes"]:
        assert t["sources"] and all(s in doc["sources"] for s in t["sources"]), t["name"]
    for s in doc["sources"].values():
        assert s["url"].startswith("https://") and s["says"]
    # every figure filled in is one its source states
    said = " ".join(s["says"] for s in doc["sources"].values())
    for t in doc["types"]:
        if t["memcached_gb"] is not None:
            assert f"{t['name']} {t['memcached_gb']:g} GB" in said


def test_n_by_type_for_a_size_by_hand() -> None:
    cat = catalogue.load()
    opts = {o.name: o for o in catalogue.options(cat, 20 * GB)}
    # 20 GB over 3.22, 6.42 and 12.3 GB of memcached memory a node
    assert (opts["cache.t2.medium"].count, opts["cache.m4.large"].count, opts["cache.r4.large"].count) == (
        7,
        4,
        2,
    )
    assert opts["cache.m4.large"].memory_bytes == pytest.approx(4 * 6.42 * GB)
    assert "cache.m7g.large" not in opts  # no verified memory figure: no count
    assert catalogue.cheapest(list(opts.values())) is None  # no verified price in the shipped data
    assert catalogue.options(cat, 1)[0].count == 1
    assert catalogue.shape_nodes(cat, 300 * GB) == 2 and catalogue.shape_nodes(cat, 20 * 256 * GB + 1) is None


def test_the_cheapest_priced_type_and_count() -> None:
    doc = json.loads(catalogue.PATH.read_text())
    prices = {"cache.t2.medium": 0.068, "cache.m4.large": 0.156, "cache.r4.large": 0.228}  # test figures
    for t in doc["types"]:
        if t["name"] in prices:
            t["price_per_hour"] = {"us-east-1": prices[t["name"]]}
    cat = catalogue.parse(doc)
    opts = catalogue.options(cat, 20 * GB)
    best = catalogue.cheapest(opts)
    # 7 x 0.068 = 0.476, 4 x 0.156 = 0.624, 2 x 0.228 = 0.456 an hour: two r4.large
    assert best is not None and (best.name, best.count) == ("cache.r4.large", 2)
    assert best.monthly == pytest.approx(2 * 0.228 * 730)
    assert [o.name for o in opts][:3] == ["cache.r4.large", "cache.t2.medium", "cache.m4.large"]


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (
            lambda d: d["types"][0].update(memcached_gb=-1),
            "cache.t2.medium memcached_gb must be a number >= 0",
        ),
        (lambda d: d["types"][0].update(price_per_hour={"us-east-1": math.inf}), "price_per_hour must be"),
        (lambda d: d.pop("as_of"), "missing or malformed field 'as_of'"),
    ],
)
def test_a_malformed_catalogue_is_refused(change, error) -> None:
    doc = copy.deepcopy(json.loads(catalogue.PATH.read_text()))
    change(doc)
    with pytest.raises(ValueError, match=error):
        catalogue.parse(doc)
    with pytest.raises(ValueError, match="memory_bytes must be a finite number"):
        catalogue.options(catalogue.load(), -1.0)
