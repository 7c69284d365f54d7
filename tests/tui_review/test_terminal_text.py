"""Data shown in the TUI (task list, task editor, trajectory viewer) never sends control characters or Rich
markup to the terminal: they are shown escaped (issue 14, item 6). Read from what the widgets render."""

from __future__ import annotations

from sqlmodel import select

from annotation import tasks as authoring
from store import session_scope
from store.models import Event, Task, Trajectory
from tests.tui_review.conftest import drawn, settle
from tui.screens.runs.trajectory import TrajectoryScreen
from tui.screens.task_editor import TaskEditorScreen
from tui.screens.task_list import TaskListScreen
from tui.widgets.data_text_area import DataTextArea
from tui.widgets.review.trajectory_row import TrajectoryRow
from tui.widgets.task_table import TaskTable
from tests.support.must import must

HOSTILE = "title\x1b]0;pwned\x07 clear\x1b[2J secret\rshown [bold]x[/] [V] \x9b31m \u202eevil"
RAW = ("\x1b", "\x07", "\r", "\x9b", "\u202e")


def assert_safe(shown: str, *, escaped: bool = True) -> None:
    assert not any(ch in shown for ch in RAW), repr(shown)
    if escaped:
        assert "\\x1b]0;pwned\\x07" in shown and "\\x1b[2J" in shown
        assert "[bold]x[/] [V]" in shown  # markup shown as written, not interpreted


def hostile_task(engine) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        return authoring.create_task(s, "gta", HOSTILE, category="cat\x1b[31m").id


async def test_task_list_rows_show_controls_escaped(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    hostile_task(engine)
    app = make_tui()
    async with app.run_test(size=(200, 30)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskListScreen())
        await settle(pilot, app)
        line = app.screen.query_one(TaskTable).render_line(0).text
        assert_safe(line)
        assert "cat\\x1b[31m" in line


async def test_task_editor_shows_controls_safely(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    task_id = hostile_task(engine)
    with session_scope(engine, "tester") as s:
        must(s.get(Task, task_id)).source_id = "id\x1b[2J[V]"
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        assert isinstance(editor, TaskEditorScreen)
        title = str(editor.query_one("#task-title").render())
        assert "id\\x1b[2J[V]" in title and "\x1b" not in title
        query = editor.query_one("#query", DataTextArea)
        assert query.text == HOSTILE  # edited as it is …
        shown = "".join(query.render_line(y).text for y in range(query.size.height))
        assert_safe(shown, escaped=False)  # … drawn with one stand-in per control character
        # (TextArea itself starts a new line at \r and drops BEL)
        assert "title␛]0;pwned" in shown and "clear␛[2J secret" in shown and "shown [bold]x[/] [V]" in shown


async def test_trajectory_viewer_shows_controls_escaped(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    tid = study["trajectories"][0]
    with session_scope(engine, "tester") as s:
        traj = s.get(Trajectory, tid)
        must(traj).final_answer = HOSTILE
        must(traj).error = "boom\x1b[2J"
        s.get(Task, must(traj).task_id).query = HOSTILE
        for e in s.exec(select(Event).where(Event.trajectory_id == tid)).all():
            if e.kind == "answer":
                e.payload = {**e.payload, "text": HOSTILE}
    app = make_tui()
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(tid))
        await settle(pilot, app)
        task_text = str(app.screen.query_one("#traj-task").render())
        assert_safe(task_text)
        assert "boom\\x1b[2J" in task_text
        rows = "\n".join(drawn(w) for row in app.screen.query(TrajectoryRow) for w in row.query("Static"))
        assert not any(ch in rows for ch in RAW) and "[bold]x[/]" in rows and "\\x1b[2J" in rows


async def test_notifications_quoting_data_are_escaped_and_not_markup(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    app = make_tui()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot, app)
        app.screen.notify(HOSTILE, title="run \x1b[2J failed", severity="error")
        await pilot.pause()
        (note,) = list(app._notifications)
        assert_safe(note.message)
        assert note.title == "run \\x1b[2J failed" and note.markup is False
