"""``must(value)``: a value the test knows is there (a saved row's id, a row it just wrote), typed without None."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def must(value: T | None) -> T:
    assert value is not None
    return value
