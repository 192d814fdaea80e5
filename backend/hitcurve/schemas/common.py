"""Field types shared by requests: text PostgreSQL can store and people can read, hit ratios and
sizes as people write them."""

import re
import unicodedata
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, StringConstraints


def _storable(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text must be valid Unicode (no lone surrogates)") from None
    if any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in value):
        raise ValueError(
            "text must not contain control characters or line breaks (NUL, newlines, tabs, U+2028, …)"
        )
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value.strip()


Name = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200),
    AfterValidator(_storable),
    AfterValidator(_not_blank),
]
Text = Annotated[str, StringConstraints(max_length=200), AfterValidator(_storable)]


# --- hit ratios and sizes as people write them --------------------------------------------------
_PERCENT = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*%\s*$")
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]*)\s*$")
# IEC binary units (memcached's -m is MiB) and SI decimal ones, as operators and clouds write them.
SIZE_UNITS = {
    "": 1,
    "b": 1,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}


def _as_ratio(value: Any) -> Any:
    """A hit ratio: a fraction in [0, 1]; "92%" (with its sign) is 0.92; a bare 92 is refused with
    the hint, since 0.92 is almost certainly what was meant."""
    if isinstance(value, str):
        if m := _PERCENT.match(value):
            return float(m.group(1)) / 100
        try:
            number = float(value)
        except ValueError:
            return value  # the float type's own error
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    else:
        return value
    if 1 < number <= 100:
        raise ValueError(
            f"a hit ratio is a fraction in [0, 1]: did you mean {number / 100:g} ({number:g} %)? "
            f"A percentage is taken with its sign, e.g. {number:g}%"
        )
    return value


def _as_bytes(value: Any) -> Any:
    """A size in bytes: a whole number, or a number with a unit ("64MiB", "1.5 GiB", "500MB")."""
    if not isinstance(value, str):
        return value
    m = _SIZE.match(value)
    unit = SIZE_UNITS.get(m.group(2).lower()) if m else None
    if m is None or unit is None:
        raise ValueError(
            "a size is a whole number of bytes or a number with a unit: B, KiB, MiB, GiB, TiB "
            "(powers of 1024) or kB, MB, GB, TB (powers of 1000), e.g. 64MiB or 1.5GiB"
        )
    return round(float(m.group(1)) * unit)


HitRatio = Annotated[float, BeforeValidator(_as_ratio)]
ByteSize = Annotated[int, BeforeValidator(_as_bytes)]
