"""What the product's own code raises when it refuses or cannot answer, with no HTTP in it: each
kind has a machine code and a specific message (`detail`: a text, or errors located on the
fields), and the API maps each kind to its status in one handler (hitcurve.api.errors). Other
callers (the weekly report, the cache's background refresh) catch them by kind."""

from typing import Any


class Refused(Exception):
    """A request the product refuses as asked; `detail` says why, specifically. retry_after_s: when
    asking again can succeed (the API sends it as Retry-After)."""

    def __init__(self, code: str, detail: Any, retry_after_s: int | None = None) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.retry_after_s = retry_after_s


class Malformed(Refused):
    """The body cannot be read at all (not gzip, not JSON, empty): the API answers 400."""


class TooLarge(Refused):
    """The body exceeds a stated limit once decompressed: 413."""


class Invalid(Refused):
    """Readable, but not valid: a field out of its range, a time window the answer cannot take: 422."""


class NotFound(Refused):
    """No such row in the caller's organization. Foreign and missing ids answer the same 404, so ids
    of other organizations leak nothing."""

    def __init__(self, what: str) -> None:
        super().__init__("not_found", f"{what} not found")


class Conflict(Refused):
    """Conflicts with what is stored (an id already used for something else): 409."""


class TooMany(Refused):
    """More requests than this key or address may make now: 429, with when to retry."""


class Unavailable(Refused):
    """Cannot be done now, can be later (a decoder process died, every password slot busy): 503,
    retry."""


class NotEnoughDataError(Refused):
    """No answer yet: the subject has no curve (or none usable) to answer from. The message says
    what is missing and what makes it appear; the API answers 409 `not_enough_data` with it."""

    def __init__(self, message: str) -> None:
        super().__init__("not_enough_data", message)
        self.message = message


class QueryRefused(Invalid):
    """A question the answer cannot take as asked, blamed on one query parameter (a prefix without a
    curve, a TTL outside the replayed grid, ...): 422 with `code`, located on `param`."""

    def __init__(self, code: str, param: str, message: str) -> None:
        super().__init__(code, [{"loc": ["query", param], "msg": message, "type": code}])
        self.param = param
        self.message = message
