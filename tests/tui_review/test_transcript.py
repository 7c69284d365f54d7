"""Readable transcripts (issue 17): code with its newlines shown once, long parts collapsed until
expanded, the raw stored events, search with n/N, per-step timing and model usage."""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from store import session_scope
from tests.tui_review.conftest import CROP_CODE, SOLVER_CODE, drawn, settle
from tui.screens.runs.raw_events import RawEventsScreen
from tui.screens.runs.trajectory import TrajectoryScreen
from tui.screens.runs.trajectory_data import trajectory_view
from tui.widgets.review.trajectory_row import TrajectoryRow
from tui.widgets.search_input import SearchInput

SIZE = (160, 48)


def model_text(screen: Any, index: int) -> str:
    row = next(r for r in screen.query(TrajectoryRow) if r.index == index)
    return drawn(row.query_one(".model > .step", Static))


def test_steps_carry_code_once_timing_usage_and_raw_events(engine, transcript) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        view = trajectory_view(s, transcript["trajectory"])
    steps = [r.model for r in view.rows]
    assert [st.name if st else None for st in steps] == ["code", "Solver", "answer"]
    code, solver, answer = steps
    assert code is not None and solver is not None and answer is not None
    # code-mode: the code comes out of the model's <code> block (not kept in the thought as well)
    assert code.code == CROP_CODE and code.thought == "I will count the cups."
    # Solver: the command argument is the code; nothing else is left in the arguments
    assert solver.code == SOLVER_CODE and solver.call == "" and solver.result == "x + 40"
    # timing: the sandbox's measured run, the tool from call to result, the model calls before each step
    assert code.seconds == 0.75 and solver.seconds == 1.25
    assert (code.cost.seconds, code.cost.tokens) == (2.5, 1280)
    assert (solver.cost.seconds, solver.cost.tokens, solver.cost.prompt_tokens) == (1.5, 1460, 1400)
    # raw: what was sent and what came back before the step, then the step's own events
    assert [e.kind for e in code.raw] == ["user_message", "model_message", "code_exec"]
    assert [e.kind for e in solver.raw] == ["model_message", "tool_call", "tool_result"]


async def test_code_shows_with_its_newlines_once_and_timing(make_tui, transcript) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(transcript["trajectory"]))
        await settle(pilot, app)
        screen = app.screen
        solver = model_text(screen, 1)
        lines = [line.strip() for line in solver.splitlines()]
        assert "def solution():" in lines and "x = symbols('x')" in lines and "return str(x + 40)" in lines
        everything = "\n".join(model_text(screen, i) for i in range(3))
        assert everything.count("def solution():") == 1 and "command" not in everything  # once, not in JSON too
        assert everything.count("Image.open(ORIGINAL_IMAGE_PATH)") == 1  # not in the thought and the code
        assert "1.2s · model 1.5s · 1,460 tok (1,400 in, 60 out)" in solver
        assert "0.75s · model 2.5s · 1,280 tok (1,200 in, 80 out)" in model_text(screen, 0)
        # Rich markup in data shows as written
        assert "[bold]Solve[/bold] it with the Solver." in solver
        assert "[V] 42 (sympy)" in model_text(screen, 2)


async def test_long_output_collapses_and_expands_on_enter(make_tui, transcript) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(transcript["trajectory"]))
        await settle(pilot, app)
        screen = app.screen
        row = next(r for r in screen.query(TrajectoryRow) if r.index == 0)
        text = model_text(screen, 0)
        assert "cup 4" in text and "cup 5" not in text and "… 26 more lines" in text
        assert row.truncated and screen.cursor == 0
        await pilot.press("enter")
        await pilot.pause()
        text = model_text(screen, 0)
        assert "cup 30" in text and "more lines" not in text and row.has_class("-expanded")
        await pilot.press("space")
        await pilot.pause()
        assert "cup 30" not in model_text(screen, 0) and "… 26 more lines" in model_text(screen, 0)
        # reloading the same trajectory keeps what was expanded
        await pilot.press("enter")
        screen.refresh_data()
        await settle(pilot, app)
        assert "cup 30" in model_text(screen, 0)


async def test_raw_view_shows_the_stored_payloads(make_tui, transcript) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(transcript["trajectory"]))
        await settle(pilot, app)
        trajectory = app.screen
        await pilot.press("down", "R")
        await settle(pilot, app)
        raw = app.screen
        assert isinstance(raw, RawEventsScreen)
        assert '"kind": "tool_call"' in raw.text and '"kind": "tool_result"' in raw.text
        assert '"command": "from sympy import symbols\\n\\ndef solution():' in raw.text
        assert '"prompt_tokens": 1400' in raw.text
        body = drawn(raw.query_one("#raw-json"))
        assert '"name": "Solver"' in body and '"content": "[bold]Solve[/bold] it with the Solver."' in body
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.screen is trajectory


async def test_search_moves_to_matching_steps(make_tui, transcript) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(transcript["trajectory"]))
        await settle(pilot, app)
        screen = app.screen
        status = screen.query_one("#traj-search-status", Static)
        await pilot.press("slash")
        box = screen.query_one(SearchInput)
        assert box.display and box.has_focus
        await pilot.press("n", "N", "R", "enter")  # typed into the field, not taken as screen keys
        assert isinstance(app.screen, TrajectoryScreen) and screen.search == "nNR" and "no matches" in drawn(status)
        await pilot.press("slash", *["backspace"] * 3, *"SymPy", "enter")
        await pilot.pause()
        assert screen.search == "SymPy" and not box.display and not box.has_focus
        assert screen.cursor == 1 and "1 of 2 matches" in drawn(status)
        row = next(r for r in screen.query(TrajectoryRow) if r.index == 1)
        assert row.has_class("-cursor")
        await pilot.press("n")
        assert screen.cursor == 2 and "2 of 2 matches" in drawn(status)
        await pilot.press("n")
        assert screen.cursor == 1 and "1 of 2 matches" in drawn(status)
        await pilot.press("N")
        assert screen.cursor == 2
        # escape closes the field without leaving the screen
        await pilot.press("slash", "escape")
        assert app.screen is screen and not box.display and screen.search == "SymPy"
        # a match only in a collapsed part: the row opens to show it
        assert "cup 17" not in model_text(screen, 0)
        await pilot.press("slash", *["backspace"] * 5, *"cup 17", "enter")
        await pilot.pause()
        assert screen.cursor == 0 and "1 of 1 match" in drawn(status) and "cup 17" in model_text(screen, 0)


async def test_code_output_and_raw_view_show_controls_escaped_and_markup_literally(
    make_tui, engine, transcript
) -> None:  # type: ignore[no-untyped-def]
    from sqlmodel import select

    from store.models import Event
    from tests.tui_review.test_terminal_text import HOSTILE, RAW

    with session_scope(engine, "tester") as s:
        for e in s.exec(select(Event).where(Event.trajectory_id == transcript["trajectory"])).all():
            if e.kind == "code_exec":
                e.payload = {**e.payload, "code": f"print({HOSTILE!r})\n# {HOSTILE}", "stdout": HOSTILE}
            if e.kind == "tool_call":
                e.payload = {**e.payload, "arguments": {"command": f"x = 1  # {HOSTILE}"}}
    app = make_tui()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(transcript["trajectory"]))
        await settle(pilot, app)
        text = model_text(app.screen, 0) + model_text(app.screen, 1)
        assert not any(ch in text for ch in RAW)
        assert "\\x1b[2J" in text and "[bold]x[/]" in text and "# title" in text
        await pilot.press("R")
        await settle(pilot, app)
        raw = drawn(app.screen.query_one("#raw-json"))
        assert isinstance(app.screen, RawEventsScreen) and not any(ch in raw for ch in RAW)
        assert "\\u001b[2J" in raw and "[bold]x[/]" in raw and "\\u202e" in raw


def test_react_and_step_mode_code_is_not_repeated_in_the_thought() -> None:
    import json
    from datetime import datetime, timezone

    from store import events as ev
    from store.models import Event
    from tui.screens.runs.step_details import split_code, without_code
    from tui.screens.runs.trajectory_data import model_steps

    react = f"Thought: solve it with sympy.\nAction: Solver\nAction Input: {json.dumps({'command': SOLVER_CODE})}"
    assert without_code(react, SOLVER_CODE) == "Thought: solve it with sympy."
    assert (
        without_code(f"Run this:\n{SOLVER_CODE}\nthen answer.", SOLVER_CODE)
        == "Run this:\n(the code below)\nthen answer."
    )
    assert split_code("Plot", {"command": "plot()", "dpi": 90}) == ({"dpi": 90}, "plot()")
    assert split_code("OCR", {"command": "not code"}) == ({"command": "not code"}, "")
    t = datetime(2025, 1, 1, tzinfo=timezone.utc)
    pred = {
        "role": "assistant",
        "thought": "use the solver",
        "tool_calls": [{"type": "function", "function": {"name": "Solver", "arguments": {"command": SOLVER_CODE}}}],
    }
    events = [
        Event(id=1, trajectory_id=1, ordinal=0, kind=ev.MODEL_MESSAGE, payload={"content": react}, started_at=t),
        Event(
            id=2,
            trajectory_id=1,
            ordinal=1,
            kind=ev.STEP_PREDICTION,
            payload={"gold_index": 0, "prediction": pred},
            started_at=t,
        ),
        Event(
            id=3,
            trajectory_id=1,
            ordinal=2,
            kind=ev.STEP_PREDICTION,
            payload={"gold_index": 1, "prediction": {"role": "assistant", "content": "42"}},
            started_at=t,
        ),
    ]
    step, answer = model_steps(events)
    assert (step.name, step.call, step.code, step.thought) == ("Solver", "", SOLVER_CODE, "use the solver")
    assert (answer.name, answer.call) == ("answer", "42")
    assert step.seconds is None  # no finish recorded: no duration rather than a made-up one


async def test_search_follows_to_the_next_trajectory_of_the_run(make_tui, study) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(study["trajectories"][0]))
        await settle(pilot, app)
        screen = app.screen
        status = screen.query_one("#traj-search-status", Static)
        await pilot.press("slash", *"table 2", "enter")
        await pilot.pause()
        assert "no matches" in drawn(status)
        await pilot.press("right_square_bracket")
        await settle(pilot, app)
        assert screen.view is not None and screen.view.id == study["trajectories"][1]
        assert screen.matches == [0] and "1 of 1 match" in drawn(status)  # counted on the rows shown now
