"""Every tool form opens by arrowing through the palette in "solve blind" at 80×24 (the walk: ``tool_form_walk.py``)."""

from __future__ import annotations

import pytest

from tests.tui.tool_form_walk import walk_every_tool_form

pytestmark = pytest.mark.extended  # the default suite walks every form once (builder, 80×24)


async def test_every_tool_form_opens_by_arrowing(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    await walk_every_tool_form(make_tui, engine, blobs, size=(80, 24), blind=True)
