"""A serverless memcached's maximum data storage and bill (hitcurve.cost.serverless) on
hand-computed cases, and the catalogue's serverless rates tied to their sources."""

import json

import pytest

from hitcurve.cost import catalogue, serverless
from hitcurve.cost.model import SECONDS_PER_MONTH

GB = 10**9
P = serverless.ServerlessPrices(
    "svc", "us-east-1", per_gb_hour=0.125, per_million_ecpu=0.0034, minimum_gb=1.0
)


def test_the_bill_by_hand() -> None:
    b = serverless.bill(2.5 * GB, 0.9, 1000.0, P)
    # 2.5 GB -> allow 3 GB; 3 GB x $0.125 x 730 h; 1,000 reads + 100 refills a second
    assert b.maximum_gb == 3 and b.metered_gb == 3.0
    assert b.storage == pytest.approx(3 * 0.125 * 730)
    assert b.ecpu_per_second == pytest.approx(1100.0)
    assert b.requests == pytest.approx(1100.0 * SECONDS_PER_MONTH / 1e6 * 0.0034)
    assert b.total == pytest.approx(273.75 + 1100.0 * 2.628e6 / 1e6 * 0.0034)


def test_whole_gb_and_the_storage_minimum() -> None:
    assert serverless.maximum_gb(GB) == 1 and serverless.maximum_gb(GB + 1) == 2
    assert serverless.maximum_gb(0) == 1
    small = serverless.bill(10 * (1 << 20), 1.0, 0.0, P)
    assert small.maximum_gb == 1 and small.metered_gb == 1.0 and small.requests == 0.0
    # a service metering at least 5 GB bills 5 for a 1 GB maximum
    five = serverless.bill(GB / 2, 0.5, None, serverless.ServerlessPrices("s", "r", 1.0, 1.0, 5.0))
    assert five.maximum_gb == 1 and five.metered_gb == 5.0 and five.storage == pytest.approx(5 * 730)
    assert five.requests is None and five.total is None  # no reads measured: no request bill


def test_without_prices_there_is_a_maximum_and_no_bill() -> None:
    b = serverless.bill(1.5 * GB, 0.9, 100.0, serverless.ServerlessPrices("s", "r", None, None, 1.0))
    assert b.maximum_gb == 2 and b.storage is None and b.requests is None and b.total is None


@pytest.mark.parametrize(
    "args, error",
    [
        ((float("nan"), 0.9, 1.0), "memory_bytes"),
        ((-1.0, 0.9, 1.0), "memory_bytes"),
        ((GB, 1.5, 1.0), "hit_ratio"),
        ((GB, 0.9, -3.0), "reads_per_second"),
        ((GB, 0.9, float("inf")), "reads_per_second"),
    ],
)
def test_bad_input_is_refused(args, error) -> None:
    with pytest.raises(ValueError, match=error):
        serverless.bill(*args, P)


def test_the_catalogues_serverless_rates_are_stated_by_its_sources() -> None:
    doc = json.loads(catalogue.PATH.read_text())
    cat = catalogue.load()
    assert cat.serverless is not None and cat.serverless.region == doc["default_region"]
    entry = doc["serverless"][0]
    said = " ".join(doc["sources"][s]["says"] for s in entry["sources"])
    assert f"${cat.serverless.per_gb_hour:g} per GB-hour" in said
    assert f"${cat.serverless.per_million_ecpu:g} per million ECPUs" in said
    assert f"minimum of {cat.serverless.minimum_gb:g} GB" in said
    assert "Memcached" in said  # the rates are said of memcached, not only of another engine


def test_a_malformed_serverless_entry_is_refused() -> None:
    doc = json.loads(catalogue.PATH.read_text())
    doc["serverless"][0]["per_gb_hour"]["us-east-1"] = -0.1
    with pytest.raises(ValueError, match="per_gb_hour"):
        catalogue.parse(doc)
    doc["serverless"][0]["per_gb_hour"]["us-east-1"] = 0.125
    del doc["serverless"][0]["minimum_gb"]
    with pytest.raises(ValueError, match="minimum_gb"):
        catalogue.parse(doc)
