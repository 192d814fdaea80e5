"""Counts in words for people: "1 newer window", "2 newer windows". Messages wrote
"1 newer window(s) left out"."""


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """n and the noun, singular for exactly one: counted(1, "newer window") -> "1 newer window",
    counted(2, "newer window") -> "2 newer windows"; `plural` when it is not the noun plus "s"."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
