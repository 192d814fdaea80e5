"""API errors: every 4xx answers {"detail": "<specific message>", "code": "<machine code>"}; the
handlers that write them are hitcurve.api.errors."""

from typing import Any

from hitcurve.core.domain import Refused


class ApiError(Refused):
    """A refusal the API itself words, with its HTTP status (and headers): built only in api/ (what
    the code below it refuses is a kind of hitcurve.core.domain.Refused, mapped to its status
    there)."""

    def __init__(self, status: int, code: str, detail: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(code, detail)
        self.status = status
        self.headers = headers


def clean_errors(errors: Any) -> list[dict[str, Any]]:
    """Pydantic errors without the offending input (may be huge) or non-JSON context objects."""
    out = []
    for e in errors:
        out.append(
            {
                "loc": [p if isinstance(p, int | str) else str(p) for p in e.get("loc", ())],
                "msg": str(e.get("msg", "")).removeprefix("Value error, "),
                "type": str(e.get("type", "")),
            }
        )
    return out[:50]
