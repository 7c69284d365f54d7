"""The rubric screen: the benchmark's current rubric version and its text, ctrl+s saving a new version,
the older versions listed and shown on enter; reached from the guidelines screen with ctrl+r."""

from __future__ import annotations

from annotation import tasks as authoring
from evaluation.judges.rubrics import add_rubric, rubric_versions
from store import read_only, session_scope
from tests.tui.conftest import settle
from textual.widgets import OptionList, Static, TextArea


def status(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one("#rubric-status", Static).render())


async def test_shows_the_current_version_saves_a_new_one_and_lists_older(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    from tui.screens.guidelines import GuidelinesScreen
    from tui.screens.rubric import RubricScreen

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mine", "chainmark", guidelines="# Rules")
    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        app.push_screen(GuidelinesScreen("mine", "# Rules"))
        await settle(pilot, app)
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert isinstance(app.screen, RubricScreen)
        assert "No authored rubric" in status(app) and "built-in chainmark-rubric.v1" in status(app)
        source = app.screen.query_one("#rubric-source", TextArea)
        assert "{{answer}}" in source.text  # the built-in rubric's text, to start from
        source.load_text("Grade it.\nTask: {{query}}\nAnswer: {{answer}}\nFIRST")
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert "Rubric v1 (current)" in status(app)
        source.load_text("Grade it strictly.\nTask: {{query}}\nAnswer: {{answer}}\nSECOND")
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert "Rubric v2 (current)" in status(app) and source.text.endswith("SECOND")
        versions = app.screen.query_one("#rubric-versions", OptionList)
        assert [versions.get_option_at_index(i).id for i in range(versions.option_count)] == ["2", "1"]
        versions.focus()
        versions.highlighted = 1
        await pilot.press("enter")
        await settle(pilot, app)
        assert "Rubric v1 (older; v2 is current)" in status(app) and source.text.endswith("FIRST")
        source.load_text("Bad {{reference}}")
        await pilot.press("ctrl+s")
        await settle(pilot, app)
    with session_scope(read_only(engine)) as s:
        saved = rubric_versions(s, "mine")
    assert [t.version for t in saved] == ["1", "2"] and saved[1].user.endswith("SECOND")  # the bad one refused


async def test_an_authored_rubric_opens_at_its_newest_version(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    from tui.screens.rubric import RubricScreen

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mine", "chainmark")
        add_rubric(s, "mine", "One {{answer}}", "tester")
        add_rubric(s, "mine", "Two {{answer}}", "tester")
    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        app.push_screen(RubricScreen("mine"))
        await settle(pilot, app)
        assert "Rubric v2 (current)" in status(app)
        assert app.screen.query_one("#rubric-source", TextArea).text == "Two {{answer}}"


async def test_leaving_or_quitting_with_an_unsaved_edit_asks_and_a_saved_one_does_not(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    from tui.screens.confirm import ConfirmDiscardScreen
    from tui.screens.rubric import RubricScreen

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mine", "chainmark")
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("u")  # from home: the selected (only) benchmark's rubric
        await settle(pilot, app)
        assert isinstance(app.screen, RubricScreen) and app.screen.benchmark == "mine"
        source = app.screen.query_one("#rubric-source", TextArea)
        source.focus()
        await pilot.press(*"MINE ")
        await pilot.press("escape")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmDiscardScreen)  # the typing is not dropped quietly
        await pilot.press("escape")  # keep editing
        await settle(pilot, app)
        assert isinstance(app.screen, RubricScreen) and "MINE " in source.text
        await pilot.press("ctrl+s", "ctrl+q")  # quit right after saving: nothing to ask
        await settle(pilot, app)
        assert not app.is_running or not isinstance(app.screen, ConfirmDiscardScreen)
    with session_scope(read_only(engine)) as s:
        saved = rubric_versions(s, "mine")
    assert [t.version for t in saved] == ["1"] and "MINE " in saved[0].user
