"""Field types shared by request bodies: text PostgreSQL can store and people can read."""

import unicodedata
from typing import Annotated

from pydantic import AfterValidator, StringConstraints


def _storable(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text must be valid Unicode (no lone surrogates)") from None
    if any(unicodedata.category(ch) == "Cc" for ch in value):
        raise ValueError("text must not contain control characters (NUL, newlines, tabs, …)")
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
