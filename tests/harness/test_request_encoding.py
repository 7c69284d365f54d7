"""The bytes a model call sends and hashes: the canonical JSON of the body, whichever way it is built."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.harness.client import _CanonicalEncoder, canonical_request, request_key

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
tool_lists = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.just("function"),
            "function": st.fixed_dictionaries(
                {"name": st.text(max_size=10), "description": st.text(max_size=30), "parameters": json_values}
            ),
        }
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=200, deadline=None)
@given(extra=st.dictionaries(st.text(max_size=12), json_values, max_size=5), tools=tool_lists)
def test_reused_tool_json_gives_the_same_bytes_as_one_dump(extra: dict[str, Any], tools: list[Any]) -> None:
    encode = _CanonicalEncoder()
    body = {**extra, "model": "m", "messages": [{"role": "user", "content": "é ☃ \\u0000"}], "tools": tools}
    for _ in range(2):  # first encodes the tool list, then reuses it
        assert encode(body) == canonical_request(body).encode()


def test_bodies_without_tools_and_a_changed_tool_list() -> None:
    encode = _CanonicalEncoder()
    body: dict[str, Any] = {"model": "m", "messages": [], "temperature": 0.5}
    assert encode(body) == canonical_request(body).encode()
    tools = [{"type": "function", "function": {"name": "a", "parameters": {}}}]
    assert encode({**body, "tools": tools}) == canonical_request({**body, "tools": tools}).encode()
    other = [{"type": "function", "function": {"name": "b", "parameters": {}}}]
    assert encode({**body, "tools": other}) == canonical_request({**body, "tools": other}).encode()
    assert len(request_key({**body, "tools": other})) == 64
