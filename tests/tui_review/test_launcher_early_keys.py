"""Keys typed on the run launcher before its drop-downs have their choices act once they have.

``n``, Enter, Down, Enter typed quickly chose nothing: the benchmark list was still empty when the keys
arrived. The app now holds every key from the moment the launcher is asked for until its choices are
in, then presses them in order, each once the UI has finished with the one before (a condition on the
message queues, not a wait for time). The choices' read is held on a gate while the keys are typed."""

from __future__ import annotations

import threading
from typing import Any

from textual.widgets import Input, Select

from annotation import tasks as authoring
from store import session_scope
from store.models import ModelEndpoint
from tests.tui_review.conftest import settle
from tui.screens.runs import launcher
from tui.screens.runs.launcher import LaunchScreen
from tui.screens.runs.monitor import RunMonitorScreen


async def test_keys_typed_while_the_choices_load_choose_and_fill_the_form(make_tui, engine, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        for name in ("alpha", "beta", "gamma"):
            authoring.ensure_benchmark(s, name, "chainmark")
        s.add(ModelEndpoint(name="local", base_url="http://127.0.0.1:9/v1", model="m"))
    gate = threading.Event()
    real = launcher.launch_choices

    def gated_choices(session: Any) -> Any:  # the read a busy machine makes slow
        assert gate.wait(60), "the test never opened the gate"
        return real(session)

    monkeypatch.setattr(launcher, "launch_choices", gated_choices)
    app = make_tui()
    async with app.run_test(size=(150, 44)) as pilot:
        try:
            await settle(pilot, app)
            app.push_screen(RunMonitorScreen())
            await settle(pilot, app)
            # open the form, open the benchmark list, down past the blank to beta, choose it; then the
            # next field (task ids) and a task id, typed before anything is in the lists
            await pilot.press("n", "enter", "down", "down", "enter", "tab", "2")
            form = app.screen
            assert isinstance(form, LaunchScreen)
            bench = form.query_one("#bench", Select)
            assert bench.is_blank() and len(form.held_keys.keys) == 6  # nothing acted yet: the keys wait
            gate.set()
            for _ in range(300):  # until the form has pressed every held key (a condition, no clock)
                if not form.held_keys.holding:
                    break
                await pilot.pause()
            await settle(pilot, app)
            assert bench.value == "beta" and not bench.expanded  # the last Enter chose and closed the list
            assert form.query_one("#task-ids", Input).value == "2" and app.focused is form.query_one("#task-ids")
            assert form.query_one("#endpoint", Select).value == "local"  # the only endpoint, chosen for you
            await pilot.press("3")  # keys typed after the hold ended go straight to the form
            assert form.query_one("#task-ids", Input).value == "23"
        finally:
            gate.set()  # never leave the reader thread waiting
