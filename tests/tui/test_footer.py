"""The key footer (`keyed_footer`, store/speedups.py): walking the focus through the task editor shows
the same keys in the footer, step by step, with the mechanism on and off; it rebuilds only when they
change, and a changed set of keys is shown at once."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets._footer import FooterKey

from annotation import tasks as authoring
from store import session_scope
from tests.support.must import must
from tests.tui.conftest import settle
from tui.widgets.footer import KeyFooter

MOVES = 14


def _task(engine: Any) -> int:
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        return must(authoring.create_task(s, "mme", "How many cups?", answer_spec={"kind": "none"}).id)


def _shown(app: Any) -> tuple[tuple[str, str, bool, bool], ...]:
    """What the footer shows: each key with its description, greyed or not, compact or not."""
    footer = app.screen.query_one(KeyFooter)
    return tuple(
        (key.key_display, key.description, key.disabled, key.has_class("-compact")) for key in footer.query(FooterKey)
    )


async def _walk(make_tui: Any, engine: Any, monkeypatch: pytest.MonkeyPatch, plain: bool) -> tuple[list[Any], int]:
    """The footer after each tab press through the editor, and how many times it was rebuilt."""
    monkeypatch.setenv("CHAINMARK_PLAIN", "keyed_footer" if plain else "")
    rebuilds = 0
    original = Widget.recompose

    async def counted(self: Widget) -> None:
        nonlocal rebuilds
        if isinstance(self, KeyFooter) and self.children:
            rebuilds += 1
        await original(self)

    monkeypatch.setattr(Widget, "recompose", counted)
    app = make_tui(start_task=_task(engine))
    steps = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        rebuilds = 0
        for _ in range(MOVES):
            await pilot.press("tab")
            await settle(pilot, app)
            steps.append((type(app.focused).__name__, _shown(app)))
    return steps, rebuilds


async def test_the_footer_shows_the_same_keys_at_every_step_with_the_mechanism_on_and_off(
    make_tui: Any, engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyed, keyed_rebuilds = await _walk(make_tui, engine, monkeypatch, plain=False)
    plain, plain_rebuilds = await _walk(make_tui, engine, monkeypatch, plain=True)
    assert keyed == plain
    assert len({keys for _, keys in keyed}) >= 2, "the walk never changed the keys: it tests nothing"
    assert all(compact for _, keys in keyed for *_, compact in keys)
    # plain rebuilds on every bindings signal; keyed only when the keys differ from the step before
    changes = sum(a[1] != b[1] for a, b in zip(keyed, keyed[1:], strict=False)) + 1
    assert plain_rebuilds >= MOVES
    assert keyed_rebuilds <= changes < plain_rebuilds
