"""Counts are written singular for exactly one: messages said "1 newer window(s) left out"."""

from hitcurve.rules.words import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "newer window") == "1 newer window"
    assert counted(2, "newer window") == "2 newer windows" and counted(0, "node") == "0 nodes"
    assert counted(3, "class", "classes") == "3 classes"
