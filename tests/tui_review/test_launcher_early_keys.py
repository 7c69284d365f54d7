"""Keys pressed on the run launcher before its drop-downs are filled act once they are.

``n``, Enter, Down, Enter typed quickly chose nothing: the benchmark list was still empty when the keys
arrived, Enter opened it empty and the arrows moved nothing. The launcher now holds those keys and
presses them again, in order, when the choices have loaded."""

from __future__ import annotations

import threading
from typing import Any

from textual.widgets import Select

from annotation import tasks as authoring
from store import session_scope
from tests.tui_review.conftest import settle
from tui.screens.runs import launcher
from tui.screens.runs.launcher import LaunchScreen
from tui.widgets.selection import chosen


async def test_keys_pressed_while_the_choices_load_choose_a_benchmark(  # type: ignore[no-untyped-def]
    make_tui, engine, monkeypatch
) -> None:
    with session_scope(engine, "tester") as s:
        for name in ("alpha", "beta", "gamma"):
            authoring.ensure_benchmark(s, name, "chainmark")
    gate = threading.Event()
    real = launcher.launch_choices

    def slow_choices(session: Any) -> Any:  # the read a busy machine makes slow
        gate.wait(30)
        return real(session)

    monkeypatch.setattr(launcher, "launch_choices", slow_choices)
    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        await _choose_beta_early(pilot, app, gate)


async def _choose_beta_early(pilot: Any, app: Any, gate: threading.Event) -> None:
    try:
        await settle(pilot, app)
        app.push_screen(LaunchScreen())
        await pilot.pause()
        form = app.screen
        assert isinstance(form, LaunchScreen)
        await pilot.press("enter", "down", "down", "enter")  # open the list, down to beta, choose it
        bench = form.query_one("#bench", Select)
        assert chosen(bench) is None  # nothing chosen yet: the list is still empty
        gate.set()
        for _ in range(200):
            if bench.value == "beta":
                break
            await pilot.pause(0.05)
        assert bench.value == "beta"
        assert not bench.expanded  # the last Enter chose and closed the list
    finally:
        gate.set()  # never leave the reader thread waiting
