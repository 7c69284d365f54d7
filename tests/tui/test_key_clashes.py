"""Keys never clash with text editing (issue 16 item 7).

ctrl+k once opened the checkpoints only when no input had focus; in the category field it deleted to
the end of the line instead, and that was saved as a revision. Every binding of every chainmark
screen and of the app is checked against the keys Textual's ``Input`` and ``TextArea`` use:

- a ctrl/alt/super/meta key (or a function key) a text widget uses may not be bound at all: as a
  priority binding it steals the editing key, otherwise the field eats it and the action never runs;
- a plain key (letters, arrows, enter, delete…) may be bound, but never with priority, so typing in
  a field always wins.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, TextArea

import tui
from tests.support.must import must

MODIFIERS = ("ctrl+", "alt+", "super+", "meta+")
SHARED_ON_PURPOSE = {
    # Same meaning in both places: a text area undoes its own typing; elsewhere (and in one-line
    # inputs, which have no undo) the app undoes the last saved edit. Must not be a priority binding.
    "ctrl+z": "undo",
}


def _bindings(cls: type) -> list[tuple[str, Binding, str]]:
    """(key, binding, defining class) for every binding ``cls`` has, own and inherited."""
    out = []
    for klass in cls.__mro__:
        for raw in klass.__dict__.get("BINDINGS", []) or []:
            b = raw if isinstance(raw, Binding) else Binding(*raw)
            out.extend((key.strip(), b, f"{klass.__module__}.{klass.__qualname__}") for key in b.key.split(","))
    return out


def _text_keys() -> set[str]:
    return {key for cls in (Input, TextArea) for key, _, _ in _bindings(cls)}


def _chainmark_screens() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(tui.__path__, "tui."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and issubclass(obj, (Screen, App)):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return list(found.values())


def _is_editing_key(key: str) -> bool:
    return key.startswith(MODIFIERS) or (key.startswith("f") and key[1:].isdigit())


def test_the_enumeration_sees_every_authoring_screen() -> None:
    names = {cls.__name__ for cls in _chainmark_screens()}
    assert {
        "ChainmarkApp",
        "TaskEditorScreen",
        "ChainBuilderScreen",
        "CheckpointEditorScreen",
        "DraftingScreen",
        "NewTaskScreen",
        "TaskListScreen",
        "HomeScreen",
        "PromptScreen",
        "ConfirmDiscardScreen",
    } <= names
    assert {"ctrl+k", "ctrl+e", "ctrl+d", "ctrl+a", "ctrl+u", "ctrl+w", "ctrl+z", "ctrl+y"} <= _text_keys()


def test_no_binding_clashes_with_text_editing() -> None:
    text_keys = _text_keys()
    clashes = []
    for screen in _chainmark_screens():
        for key, binding, where in _bindings(screen):
            if not where.startswith("tui."):
                continue  # Textual's own bindings (command palette, …) are Textual's business
            if key in SHARED_ON_PURPOSE:
                if binding.priority or binding.action != SHARED_ON_PURPOSE[key]:
                    clashes.append(f"{where}: {key} → {binding.action} must stay a plain {SHARED_ON_PURPOSE[key]}")
                continue
            if _is_editing_key(key) and key in text_keys:
                clashes.append(f"{where}: {key} → {binding.action} is a text-editing key of Input/TextArea")
            elif not _is_editing_key(key) and binding.priority:
                clashes.append(f"{where}: {key} → {binding.action} is a plain key bound with priority")
    assert clashes == []


async def test_screen_keys_work_from_inside_a_field(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """The reported case: in the category field the checkpoints key deleted the text (ctrl+k) and
    saved that; now the key opens the checkpoints and the field keeps its text."""
    from annotation import tasks as authoring
    from store import session_scope
    from store.models import Task
    from tests.tui.conftest import png, settle, wait_for_saves
    from tui.screens.checkpoint_editor import CheckpointEditorScreen
    from tui.screens.drafting import DraftingScreen

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        task = authoring.create_task(s, "mme", "Which colour?", category="colour")
        authoring.attach_asset(s, blobs, must(task.id), png())
        task_id = task.id
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        box = editor.query_one("#meta-category")
        box.focus()
        box.cursor_position = 0
        await pilot.press("ctrl+t")
        await settle(pilot, app)
        assert isinstance(app.screen, CheckpointEditorScreen)
        await pilot.press("escape")
        await settle(pilot, app)
        box.focus()
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert isinstance(app.screen, DraftingScreen)
        await pilot.press("escape")
        await wait_for_saves(pilot, app)
        assert box.value == "colour"
    with session_scope(engine) as s:
        assert (must(s.get(Task, task_id)).category, must(s.get(Task, task_id)).revision) == ("colour", 1)
