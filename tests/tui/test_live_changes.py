"""On PostgreSQL an open screen hears other people's commits (LISTEN/NOTIFY) and shows them without
polling: the editor's timer is turned off here, so only the notice can bring the change in."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from textual.widgets import Input, TextArea
from textual_image.widget import HalfcellImage

from annotation import tasks as authoring
from store import session_scope
from tests.store.conftest import pg_engine  # noqa: F401  (a database on the throwaway PostgreSQL)
from tests.tui.conftest import settle
from tests.tui.test_authoring_forms import until
from tui.app import make_app
from tui.context import AppContext
from tui.screens.task_editor import TaskEditorScreen
from tui.screens.task_list import TaskListScreen

pytestmark = pytest.mark.postgres


@pytest.fixture
def no_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.screens.task_editor.POLL_SECONDS", 3600.0)


def _task(engine: Engine, query: str = "How many?") -> int:
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        return authoring.create_task(s, "mme", query, category="count").id  # type: ignore[return-value]


def _app(engine: Engine, tmp_path: Path, **kwargs):  # type: ignore[no-untyped-def]
    return make_app(
        AppContext(db=str(engine.url.render_as_string(hide_password=False)), actor="ann"),
        image_widget=HalfcellImage,
        engine=engine,
        **kwargs,
    )


async def test_an_open_editor_shows_a_commit_from_elsewhere_at_once(pg_engine, tmp_path, no_polling) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(pg_engine)
    app = _app(pg_engine, tmp_path, start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await until(pilot, lambda: app.live_changes)
        editor = app.screen
        assert isinstance(editor, TaskEditorScreen)
        with session_scope(pg_engine, "bob") as s:
            authoring.edit_task(s, task_id, domain="Retail", query="How many cups?")
        await until(pilot, lambda: editor.query_one("#meta-domain", Input).value == "Retail")
        assert editor.query_one("#query", TextArea).text == "How many cups?"
        # a change to another task is heard too, and leaves this one alone
        other = _task(pg_engine, "Another")
        with session_scope(pg_engine, "bob") as s:
            authoring.edit_task(s, other, domain="Elsewhere")
        await settle(pilot, app)
        assert editor.query_one("#meta-domain", Input).value == "Retail"


async def test_the_task_list_shows_tasks_added_elsewhere(pg_engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _task(pg_engine, "first")
    app = _app(pg_engine, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskListScreen())
        await settle(pilot, app)
        await until(pilot, lambda: app.live_changes)
        screen = app.screen
        assert str(screen.query_one("#task-count").render()) == "1 task"  # it said "1 tasks"
        _task(pg_engine, "second, from another terminal")
        await until(pilot, lambda: "2 tasks" in str(screen.query_one("#task-count").render()))
