"""Readable transcripts (issue 17): code with its newlines shown once, long parts collapsed until
expanded, the raw stored events, search with n/N, per-step timing and model usage."""

from __future__ import annotations

from typing import Any

from textual.geometry import Region
from textual.widgets import Static

from store import session_scope
from tests.tui_review.conftest import CROP_CODE, SOLVER_CODE, settle
from tui.screens.runs.raw_events import RawEventsScreen
from tui.screens.runs.trajectory import TrajectoryScreen
from tui.screens.runs.trajectory_data import trajectory_view
from tui.widgets.review.trajectory_row import TrajectoryRow
from tui.widgets.search_input import SearchInput

SIZE = (160, 48)


def shown(widget: Any) -> str:
    """What a widget puts on the screen, line by line (as drawn, so wrapping and collapsing count)."""
    return "\n".join(strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, widget.size.width,
                                                                                  widget.size.height)))


def model_text(screen: Any, index: int) -> str:
    row = next(r for r in screen.query(TrajectoryRow) if r.index == index)
    return shown(row.query_one(".model > .step", Static))


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
        body = shown(raw.query_one("#raw-json"))
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
        assert isinstance(app.screen, TrajectoryScreen) and screen.search == "nNR" and "no matches" in shown(status)
        await pilot.press("slash", *["backspace"] * 3, *"SymPy", "enter")
        await pilot.pause()
        assert screen.search == "SymPy" and not box.display and not box.has_focus
        assert screen.cursor == 1 and "1 of 2 matches" in shown(status)
        row = next(r for r in screen.query(TrajectoryRow) if r.index == 1)
        assert row.has_class("-cursor")
        await pilot.press("n")
        assert screen.cursor == 2 and "2 of 2 matches" in shown(status)
        await pilot.press("n")
        assert screen.cursor == 1 and "1 of 2 matches" in shown(status)
        await pilot.press("N")
        assert screen.cursor == 2
        # escape closes the field without leaving the screen
        await pilot.press("slash", "escape")
        assert app.screen is screen and not box.display and screen.search == "SymPy"
