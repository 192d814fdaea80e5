"""Signed link tokens: only the exact token that was issued is accepted. base64 spells the same
bytes several ways (spare bits in the last character), so every altered spelling of an issued
token, including one that only flips a spare bit, must be refused."""

import base64
import string

from hitcurve.core.signing import UNSUBSCRIBE_REPORT, sign, unsign

ALPHABET = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"


def test_issued_token_round_trips() -> None:
    token = sign(UNSUBSCRIBE_REPORT, "0b9d7a1e-5f55-4bb4-9d7e-2f0f1c3b6a10")
    assert unsign(UNSUBSCRIBE_REPORT, token) == "0b9d7a1e-5f55-4bb4-9d7e-2f0f1c3b6a10"
    assert unsign("another-purpose", token) is None


def test_every_other_last_character_is_refused() -> None:
    # the MAC (32 bytes) ends in a character with 2 spare bits and the payload usually does too:
    # changing the final character of either part to any other letter must not pass
    token = sign(UNSUBSCRIBE_REPORT, "subscription-42")
    head, tail = token.split(".")
    assert len(base64.urlsafe_b64decode(tail + "=")) == 32 and len(tail) % 4 != 0
    for c in ALPHABET:
        if c != tail[-1]:
            assert unsign(UNSUBSCRIBE_REPORT, f"{head}.{tail[:-1]}{c}") is None, c
        if c != head[-1]:
            assert unsign(UNSUBSCRIBE_REPORT, f"{head[:-1]}{c}.{tail}") is None, c


def test_malformed_tokens_are_refused() -> None:
    token = sign(UNSUBSCRIBE_REPORT, "x")
    for bad in ["", ".", token + ".", token.replace(".", ""), token + "=", "a" * 600, "!!.??"]:
        assert unsign(UNSUBSCRIBE_REPORT, bad) is None, bad
