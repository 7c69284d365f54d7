"""Every key binding has an id, and ``[keymap]`` in chainmark.toml remaps it on every screen."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.tui.conftest import settle
from tui.cli import cli
from tui.keymap import chainmark_bindings


def test_every_binding_has_its_own_id() -> None:
    rows = chainmark_bindings()
    assert len(rows) > 100
    assert [r.owner + " " + r.key for r in rows if not r.id] == []
    assert [i for i, n in Counter(r.id for r in rows).items() if n > 1] == []


@pytest.fixture
def project_keymap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-user-config"))
    monkeypatch.setenv("CHAINMARK_CONFIG", str(tmp_path / "chainmark.toml"))
    return tmp_path / "chainmark.toml"


async def test_a_remapped_key_works_and_the_old_one_does_not(make_tui, project_keymap: Path) -> None:
    from tui.screens.help import HelpScreen

    project_keymap.write_text('[keymap]\n"chainmark.help" = "f1"\n')
    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        await pilot.press("question_mark")
        await settle(pilot, app)
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("f1")
        await settle(pilot, app)
        assert isinstance(app.screen, HelpScreen)


async def test_an_unknown_binding_id_is_reported_not_ignored(make_tui, project_keymap: Path) -> None:
    project_keymap.write_text('[keymap]\n"chainmark.hlep" = "f1"\n')
    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        assert app.keymap_problems == [
            "[keymap] 'chainmark.hlep' is not a binding id (chainmark config keys lists them)"
        ]
        assert any("chainmark.hlep" in str(n.message) for n in app._notifications)


def test_config_keys_lists_ids_with_the_keys_in_force(project_keymap: Path) -> None:
    project_keymap.write_text('[keymap]\n"chainmark.help" = "f1"\n"nope.nothing" = "x"\n')
    doc = json.loads(CliRunner().invoke(cli, ["config", "keys", "--json"]).output)
    row = next(b for b in doc["bindings"] if b["id"] == "chainmark.help")
    assert (row["keys"], row["default"], row["description"]) == ("f1", "question_mark", "Help")
    assert doc["unknown_ids"] == ["nope.nothing"]


async def test_help_and_palette_name_the_remapped_key(make_tui, project_keymap: Path) -> None:
    """With ctrl+r remapped, the help screen and the command palette still said "ctrl+r" (they read
    the classes' BINDINGS, which a keymap does not change): a key that no longer did anything."""
    from tui.screens.help import HelpScreen, _key_rows
    from tui.screens.task_list import TaskListScreen
    from tui.widgets.actions_provider import ScreenActions

    project_keymap.write_text('[keymap]\n"task_list.clear_filters" = "f6"\n"chainmark.help" = "f1"\n')
    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskListScreen())
        await settle(pilot, app)
        rows = dict((d, k) for k, d in _key_rows(app.screen))
        assert rows["Clear filters"] == "f6"
        palette = {d: k for d, k, _ in ScreenActions(app.screen)._actions()}
        assert palette["Clear filters"] == "f6"
        await pilot.press("f1")
        await settle(pilot, app)
        assert isinstance(app.screen, HelpScreen)
        from textual.widgets import Markdown

        shown = app.screen.query_one(Markdown).source
        assert "| `f1` | Help |" in shown and "question_mark" not in shown.split("## Everywhere")[1]
