"""plain_rows' JSON fast path writes exactly what the column's own processor (json.dumps) writes."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import sqlite

from store.plain_rows import _JsonDumps

VALUES = [
    {},
    [],
    {"a": 1, "b": [1, 2.5, None, True, False], "c": {"d": "ünïcødé ✓", "e": 'quote " \\ \u0000'}},
    {"nan": float("nan"), "inf": float("inf"), "tiny": 1e-300, "neg": -0.0, "big": 10**30},
    [{"日本語": "x"}, [[]], {"": ""}],
    {1: "int key", 2.5: "float key", None: "none key", False: "bool key"},
    "a string",
    3,
    None,
]


def test_dicts_and_lists_encode_as_the_column_processor_does() -> None:
    proc = sa.JSON().bind_processor(sqlite.dialect())
    fast = _JsonDumps(proc)
    for value in VALUES:
        assert fast(value) == proc(value)


def test_a_refused_value_raises_as_the_processor_does_and_later_values_still_encode() -> None:
    proc = sa.JSON().bind_processor(sqlite.dialect())
    fast = _JsonDumps(proc)
    circular: dict = {"k": 1}
    circular["self"] = circular
    for bad in (circular, {"x": object()}):
        with pytest.raises((ValueError, TypeError)) as theirs:
            proc(bad)
        with pytest.raises(type(theirs.value)):
            fast(bad)
        assert fast({"after": [1, {"n": 2}]}) == proc({"after": [1, {"n": 2}]})
