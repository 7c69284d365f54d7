"""At 80 columns the footer cannot show every key: the screens that save with ctrl+s keep it and the
keys after it in sight (short labels, their full names in the palette and help), and every key the
footer still cuts is in the command palette (ctrl+p, docked in the footer), the app's undo included."""

from __future__ import annotations

from typing import Any

from textual.widgets._footer import FooterKey

from tests.tui_review.conftest import settle
from tui.screens.chain_builder import ChainBuilderScreen
from tui.screens.checkpoint_editor import CheckpointEditorScreen
from tui.screens.drafting import DraftingScreen
from tui.screens.review.adjudication import AdjudicationScreen
from tui.screens.task_editor import TaskEditorScreen
from tui.widgets.actions_provider import ScreenActions


def _footer(app: Any) -> tuple[list[str], list[str]]:
    """The actions whose keys the footer shows in full, and those it cuts (past the docked palette key)."""
    keys = [k for k in app.screen.query(FooterKey) if "-command-palette" not in k.classes]
    palette = next(k for k in app.screen.query(FooterKey) if "-command-palette" in k.classes)
    shown = [k.action for k in keys if k.region.width and k.region.right <= palette.region.x]
    return shown, [k.action for k in keys if k.action not in shown]


async def test_keys_after_ctrl_s_stay_in_sight_or_in_the_palette_at_80_columns(make_tui, study) -> None:  # type: ignore[no-untyped-def]
    task = study["tasks"][0]
    for make, after_save in (
        (lambda: TaskEditorScreen(task), ["guidelines", "drafting"]),  # were cut after ^s Submit
        (lambda: ChainBuilderScreen(task), ["final", "guidelines"]),
        (lambda: CheckpointEditorScreen(task), ["new_checkpoint", "add_ordering", "save_efficiency"]),
        (lambda: DraftingScreen(task), ["undo"]),  # the app's undo was cut
        (lambda: AdjudicationScreen(), ["back"]),  # there ^s Record itself was cut
    ):
        app = make_tui(actor="rev")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app)
            app.push_screen(make())
            await settle(pilot, app)
            shown, cut = _footer(app)
            name = type(app.screen).__name__
            assert any(b.action in shown for b in app.screen._bindings.key_to_bindings["ctrl+s"]), (name, shown)
            assert set(after_save) <= set(shown), (name, shown)
            in_palette = {action.removeprefix("screen.") for _, _, action in ScreenActions(app.screen)._actions()}
            assert "app.undo" in in_palette  # the app's undo is reachable however narrow the footer
            missing = [
                a for a in cut if a not in in_palette and f"app.{a}" not in in_palette and a not in ("quit", "help")
            ]
            assert not missing, (name, missing)  # quit and help are Textual's own palette commands
