"""The import's shortcuts around JSON and SQLite give what the plain calls give: reused C encoders equal
``json.dumps`` (and recover from a failed encode), and a JSON column's encoder equals its bind processor."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.formats.bulk import JsonText, _column_encoder, make_dumps

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values, extra=st.sampled_from(["", "ü", "\x7f", "\x1f", "中文", "\u2028", "\ud800"]))
def test_reused_encoders_equal_json_dumps(value: Any, extra: str) -> None:
    value = [value, extra]
    assert make_dumps()(value) == json.dumps(value)
    assert make_dumps(ensure_ascii=False)(value) == json.dumps(value, ensure_ascii=False)
    assert make_dumps(ensure_ascii=False, default=str)(value) == json.dumps(value, ensure_ascii=False, default=str)


def test_an_encoder_works_again_after_a_failed_encode() -> None:
    dumps = make_dumps(ensure_ascii=False)
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps({"a": loop})
    with pytest.raises(TypeError):
        dumps([{"b": object()}])
    shared = {"x": 1}
    assert dumps([shared, shared]) == json.dumps([shared, shared], ensure_ascii=False)  # not "circular"
    assert make_dumps(default=str)({"o": object}) == json.dumps({"o": object}, default=str)


def test_a_json_columns_encoder_gives_its_bind_processors_text(engine) -> None:
    column = sa.Column("v", sa.JSON)
    dialect = engine.dialect
    proc = column.type._cached_bind_processor(dialect)
    encode = _column_encoder(column, dialect)
    assert encode is not None and proc is not None
    for value in (None, {}, [], {"a": [1, "ü", None]}, [{"k": 1.5}], "text", 3, 2.5, True):
        assert encode(value) == proc(value), value
    assert encode(JsonText({"a": 1}, '{"a": 1}')) == '{"a": 1}'
