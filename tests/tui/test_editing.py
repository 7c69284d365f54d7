"""Editor behaviours beyond the happy path: undo, status rules, blind attempts, drafting aids,
and the pure conversions the forms rely on."""

from __future__ import annotations

import pytest
from sqlmodel import select, col
from textual.widgets import TextArea

from annotation import tasks as authoring
from annotation.answers import validate_answer_spec
from store import session_scope
from store.models import Event, ModelEndpoint, ReferenceStep, Run, Task, Trajectory
from tests.support.scripted_openai import scripted_openai, text  # noqa: F401  (fixture)
from tests.tui.conftest import png, settle, wait_for_saves
from tests.tui.test_authoring_forms import until
from tui.screens.chain_builder import ChainBuilderScreen
from tui.screens.drafting import DraftingScreen
from tui.screens.region_picker import bbox_argument, moved, resized
from tui.screens.task_editor import TaskEditorScreen
from tui.widgets.answer_editor import fields_from_spec, spec_from_fields
from tui.widgets.arg_form import ArgForm, convert, fields_of
from tests.support.must import must

SPECS = [
    {"kind": "whitelist", "groups": [["58", "fifty-eight"], ["cups"]], "blacklist": [["59"]]},
    {"kind": "whitelist", "groups": [["a"]], "blacklist": None},
    {"kind": "references", "references": ["a red car", "a car that is red"]},
    {"kind": "exact", "value": "Paris", "variants": ["paris, france"]},
    {"kind": "contains", "value": "blue"},
    {"kind": "numeric", "value": "3.5", "tolerance": 0.1},
    {"kind": "mcq", "options": {"A": "3", "B": "4"}, "letter": "B"},
    {"kind": "interleaved", "golden": [{"type": "text", "content": "step one"}, {"type": "image", "content": "a.png"}]},
    {"kind": "none"},
]


def test_answer_forms_round_trip_every_kind() -> None:
    for spec in SPECS:
        again = spec_from_fields(spec["kind"], fields_from_spec(spec))
        assert again == spec
        validate_answer_spec(again)


def test_arg_form_conversion_follows_the_schema() -> None:
    schema = {
        "type": "object",
        "required": ["image", "param"],
        "properties": {
            "image": {"type": "string"},
            "param": {"type": "object", "properties": {"x": {"type": "integer"}, "scale": {"type": "number"}}},
            "bbox_2d": {"type": "array", "description": "Bounding box [x1, y1, x2, y2] in 0-1000 normalized"},
            "bbox": {"type": "string", "description": "The bbox coordinate in the format of `(x1, y1, x2, y2)`"},
        },
    }
    fields = {f.path: f for f in fields_of(schema)}
    assert list(fields) == ["image", "param.x", "param.scale", "bbox_2d", "bbox"]
    assert convert(fields["param.x"], "12") == 12 and convert(fields["param.scale"], "1.5") == 1.5
    assert convert(fields["bbox_2d"], "1, 2, 3, 4") == [1, 2, 3, 4]
    assert fields["bbox_2d"].is_bbox and fields["bbox_2d"].bbox_normalised
    assert fields["bbox"].is_bbox and not fields["bbox"].bbox_normalised
    try:
        convert(fields["param.x"], "twelve")
    except ValueError as exc:
        assert "param.x" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("bad integer accepted")


def test_region_box_moves_within_the_image() -> None:
    assert moved((900, 0, 1000, 100), 50, -50) == (900, 0, 1000, 100)
    assert resized((0, 0, 100, 100), -200, 2000) == (0, 0, 10, 1000)
    assert (
        bbox_argument((250, 500, 750, 1000), normalised=False, as_text=True, size=(400, 200)) == "(100, 100, 300, 200)"
    )
    assert bbox_argument((250, 500, 750, 1000), normalised=True, as_text=False, size=(400, 200)) == [
        250,
        500,
        750,
        1000,
    ]


def _task(engine, blobs, tool_set: str = "agentic-mme") -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set=tool_set, guidelines="# Rules\nBe precise.")
        t = authoring.create_task(
            s, "mme", "What colour is the square?", answer_spec={"kind": "exact", "value": "white"}
        )
        authoring.attach_asset(s, blobs, must(t.id), png(300, 300))
        return t.id


async def test_edit_then_undo_restores_the_store(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        assert isinstance(editor, TaskEditorScreen)
        with session_scope(engine) as s:
            rev = must(s.get(Task, task_id)).revision
        editor.query_one("#meta-category").value = "colour"
        await wait_for_saves(pilot, app, by_timer=True)  # edits save after a pause in typing
        await settle(pilot, app)
        with session_scope(engine) as s:
            assert (must(s.get(Task, task_id)).category, must(s.get(Task, task_id)).revision) == ("colour", rev + 1)
        await pilot.press("ctrl+z")
        await settle(pilot, app)
        with session_scope(engine) as s:
            # the undo is part of the same editor visit: still one new revision, not two
            assert (must(s.get(Task, task_id)).category, must(s.get(Task, task_id)).revision) == (None, rev + 1)
        assert editor.query_one("#meta-category").value == ""
        # verified is not reachable from draft: refused, nothing written
        editor.set_status("verified")
        await settle(pilot, app)
        with session_scope(engine) as s:
            assert must(s.get(Task, task_id)).status == "draft"
        # the guidelines panel toggles
        await pilot.press("ctrl+g")
        assert editor.query_one("#guidelines").has_class("-visible")


async def test_blind_attempt_is_a_human_trajectory(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    with session_scope(engine, "tester") as s:  # a reference chain the blind solver must not see
        authoring.add_step(
            s,
            task_id,
            tool_name="crop",
            tool_args={"image_index": 0, "bbox_2d": [0, 0, 500, 500]},
            result_text="secret",
        )
    app = make_tui()
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot, app)
        app.push_screen(ChainBuilderScreen(task_id, blind=True))
        await settle(pilot, app)
        builder = app.screen
        assert "secret" not in str(builder.query_one("#step-list").get_option_at_index(0).prompt)
        builder.query_one(ArgForm).set_value("bbox_2d", [0, 0, 500, 500])
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert builder.pending["result"].ok
        assert builder.query_one("#strip").option_count == 2  # the attempt's crop joined the strip
        await pilot.press("ctrl+f", *"white", "enter")
        await settle(pilot, app)
    with session_scope(engine) as s:
        run = s.exec(select(Run).where(Run.kind == "human")).one()
        assert (run.name, run.mode) == ("human:tester", "atomic")
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == run.id)).one()
        assert (traj.task_id, traj.status, traj.final_answer, traj.usage["tool_calls"]) == (task_id, "done", "white", 1)
        events = s.exec(select(Event).where(Event.trajectory_id == traj.id).order_by(col(Event.ordinal))).all()
        assert [e.kind for e in events] == ["tool_call", "tool_result", "answer"]
        assert events[0].payload["arguments"] == {"image_index": 0, "bbox_2d": [0, 0, 500, 500], "zoom_scale": 1}
        assert events[1].payload["ok"] and len(events[1].payload["asset_ids"]) == 1
        assert events[2].payload["text"] == "white"
        # the reference chain is untouched
        assert len(s.exec(select(ReferenceStep).where(ReferenceStep.task_id == task_id)).all()) == 1


async def test_drafting_aids_talk_to_the_endpoint(make_tui, engine, blobs, scripted_openai) -> None:  # type: ignore[no-untyped-def]
    task_id = _task(engine, blobs)
    with session_scope(engine, "tester") as s:
        s.add(ModelEndpoint(name="local", base_url=scripted_openai.base_url, model="scripted-model"))
        authoring.add_step(s, task_id, tool_name="crop", tool_args={"image_index": 0}, result_text="a white square")
    # the oracle's answer is checked as the scorers check it (an exact answer must be exact)
    scripted_openai.push(text("A blue field with a white square."), text("White"))
    app = make_tui()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(DraftingScreen(task_id))
        await settle(pilot, app)
        await pilot.press("ctrl+t")  # describe (ctrl+d and ctrl+e belong to text editing)
        await settle(pilot, app)
        await pilot.press("ctrl+r")  # oracle check
        await settle(pilot, app)
    requests = scripted_openai.chat_requests()
    assert len(requests) == 2
    assert len(requests[0].images()) == 1  # the raw image went to the model
    assert "a white square" in requests[1].messages[0]["content"]
    with session_scope(engine) as s:
        drafting = must(s.get(Task, task_id)).meta["drafting"]
        assert drafting["description"] == "A blue field with a white square."
        assert drafting["oracle"]["passed"] is True and drafting["oracle"]["answer"] == "White"


async def test_a_slow_drafting_model_never_holds_the_database(make_tui, engine, blobs, scripted_openai) -> None:  # type: ignore[no-untyped-def]
    """The model is asked outside any transaction: while it thinks, the app's other saves and other
    processes' writes go through (it once ran inside the app's write transaction, for up to 120 s)."""
    import time

    from tests.tui.test_authoring_forms import until

    task_id = _task(engine, blobs)
    with session_scope(engine, "tester") as s:
        s.add(ModelEndpoint(name="local", base_url=scripted_openai.base_url, model="scripted-model"))
    scripted_openai.push(text("A slow description.", delay=3.0))
    app = make_tui()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(DraftingScreen(task_id))
        await settle(pilot, app)
        await pilot.press("ctrl+t")
        await until(pilot, lambda: len(scripted_openai.chat_requests()) == 1)  # the model is thinking now
        assert not app._write_lock.locked()
        started = time.monotonic()
        with session_scope(engine, "someone else") as s:  # a write from elsewhere is not kept waiting
            authoring.edit_task(s, task_id, category="written meanwhile")
        assert time.monotonic() - started < 2.0
        await until(pilot, lambda: "A slow description." in str(app.screen.query_one("#model-description").render()))
    with session_scope(engine) as s:
        task = s.get(Task, task_id)
        assert task is not None
        assert task.category == "written meanwhile" and task.meta["drafting"]["description"] == "A slow description."


async def test_opening_the_editor_writes_nothing(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Regression: the answer-kind Select announces its initial value on mount; that echo once saved
    ``{"kind": "none"}`` over the stored answer spec when it arrived after the task had loaded."""
    task_id = _task(engine, blobs)
    with session_scope(engine, "tester") as s:
        authoring.edit_task(s, task_id, answer_spec={"kind": "exact", "value": "OPEN"})
        before = (must(s.get(Task, task_id)).revision, must(s.get(Task, task_id)).answer_spec)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(140, 50)) as pilot:
        for _ in range(4):
            await settle(pilot, app)
            await pilot.pause(0.3)
    with session_scope(engine) as s:
        assert (must(s.get(Task, task_id)).revision, must(s.get(Task, task_id)).answer_spec) == before


async def test_undo_is_per_task_and_says_what_it_undoes(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Issue 16 item 6: ctrl+z on task A once reverted the latest edit of the session, made on task B."""
    task_a, task_b = _task(engine, blobs), _task(engine, blobs)
    app = make_tui(start_task=task_a)
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot, app)
        editor_a = app.screen
        editor_a.query_one("#meta-category").value = "colour"
        await wait_for_saves(pilot, app)
        await settle(pilot, app)
        assert "ctrl+z undoes: " in editor_a.sub_title
        app.push_screen(TaskEditorScreen(task_b))
        await settle(pilot, app)
        editor_b = app.screen
        assert "undoes" not in editor_b.sub_title  # nothing of task B to undo yet; task A's edit is not offered here
        editor_b.query_one("#meta-category").value = "shape"
        await wait_for_saves(pilot, app)
        await settle(pilot, app)
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.screen is editor_a
        editor_a.query_one("#meta-domain").focus()
        await pilot.press("ctrl+z")
        await wait_for_saves(pilot, app)
        await settle(pilot, app)
        with session_scope(engine) as s:
            assert must(s.get(Task, task_a)).category is None  # A's own edit taken back
            assert must(s.get(Task, task_b)).category == "shape"  # B untouched
        assert app.undo_stack_for(f"task {task_b}")


async def test_a_long_tool_result_scrolls_to_its_last_line(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Issue 16 item 9: the result panel cut a long OCR text off after a few lines, with no way to scroll."""
    from textual.widgets import Static

    task_id = _task(engine, blobs)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(ChainBuilderScreen(task_id))
        await settle(pilot, app)
        builder = app.screen
        builder.query_one("#result", Static).update("\n".join(f"line {i}" for i in range(40)))
        await settle(pilot, app)
        panel = builder.query_one("#result-scroll")
        assert panel.max_scroll_y > 0
        panel.scroll_end(animate=False, immediate=True)
        await settle(pilot, app)
        assert panel.scroll_y == panel.max_scroll_y and panel.scroll_y >= 40 - panel.size.height


async def test_a_step_with_a_multi_line_result_is_one_row(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """An OCR result keeps its line breaks; the step list showed them, so one step took several rows, and
    the cut at 40 characters had no mark."""
    task_id = _task(engine, blobs)
    with session_scope(engine, "tester") as s:
        for text in ("CORNER CAFE\nFlat white 4.20\n", "word " * 20):
            authoring.add_step(s, task_id, tool_name="ocr", tool_args={"image_index": 0}, result_text=text)
    app = make_tui()
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot, app)
        app.push_screen(ChainBuilderScreen(task_id))
        await settle(pilot, app)
        steps = app.screen.query_one("#step-list")
        assert str(steps.get_option_at_index(0).prompt) == "1. ocr → CORNER CAFE Flat white 4.20"
        assert str(steps.get_option_at_index(1).prompt) == "2. ocr → " + ("word " * 8)[:39] + "…"


async def test_notes_typed_then_ctrl_q_at_once_are_saved(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Walk: type drafting notes, ctrl+q at once: the app quit and the notes were gone (the save was
    sent through the field's key queue, and quitting did not wait for it)."""
    task_id = _task(engine, blobs)
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(DraftingScreen(task_id))
        await settle(pilot, app)
        app.screen.query_one("#notes").focus()
        await pilot.press(*"check the bowl", "ctrl+q")
        await pilot.pause()
        await app.wait_for_saves()
    with session_scope(engine) as s:
        task = s.get(Task, task_id)
        assert task is not None and (task.meta or {}).get("drafting", {}).get("notes") == "check the bowl"


@pytest.mark.parametrize("leave", ["escape", "ctrl+q"])
async def test_edited_guidelines_are_saved_on_leaving(make_tui, engine, leave) -> None:  # type: ignore[no-untyped-def]
    """Walk: edit the guidelines, escape: the edit was dropped without a word (only ctrl+s saved)."""
    from annotation.tasks import get_benchmark
    from tui.screens.guidelines import GuidelinesScreen

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", guidelines="# Rules")
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(GuidelinesScreen("mme", "# Rules"))
        await settle(pilot, app)
        app.screen.query_one("#guidelines-source").focus()
        await pilot.press("end", *" and more", leave)
        # the key reaches the screen's binding after the typed ones (on a busy machine, after press returns)
        await until(pilot, lambda: not app.is_running or not isinstance(app.screen, GuidelinesScreen))
        await app.wait_for_saves()
    with session_scope(engine) as s:
        assert get_benchmark(s, "mme").guidelines == "# Rules and more"


async def test_a_save_asked_on_leaving_lands_though_the_screen_is_gone_before_it_starts(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    """Seen once under load: escape saved the guidelines and popped the screen, and the screen's unmount
    cancelled its workers, the save among them, before its thread had started: nothing was written. Here the
    unmount's cancel comes in the same turn as the escape, before any worker can start."""
    from annotation.tasks import get_benchmark
    from tui.screens.guidelines import GuidelinesScreen

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", guidelines="# Rules")
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        screen = GuidelinesScreen("mme", "# Rules")
        app.push_screen(screen)
        await settle(pilot, app)
        screen.query_one("#guidelines-source", TextArea).text = "# Rules kept"
        screen.action_back()  # escape: the edit is saved, the screen popped
        app.workers.cancel_node(screen)  # what the screen's unmount does (Widget._on_unmount)
        await until(pilot, lambda: not isinstance(app.screen, GuidelinesScreen))
        await app.wait_for_saves()
    with session_scope(engine) as s:
        assert get_benchmark(s, "mme").guidelines == "# Rules kept"


async def test_the_empty_guidelines_panel_says_where_guidelines_are_written(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Walk: ctrl+g in the editor showed "No guidelines for this benchmark yet." and nothing on how to
    write them; the hint it names leads to the guidelines editor."""
    from textual.widgets import Markdown

    from tui.screens.guidelines import GuidelinesScreen

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "bare", "agentic-mme", tool_set="agentic-mme")
        task_id = int(authoring.create_task(s, "bare", "What colour?").id or 0)
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+g")
        await settle(pilot, app)
        assert "ctrl+b" in app.screen.query_one("#guidelines-text", Markdown).source
        await pilot.press("ctrl+b")
        await settle(pilot, app)
        await pilot.press("ctrl+g")
        await settle(pilot, app)
        assert isinstance(app.screen, GuidelinesScreen)


async def test_an_editor_whose_task_cannot_be_loaded_says_so_in_its_title(make_tui) -> None:  # type: ignore[no-untyped-def]
    """A task deleted meanwhile (or a link to one that never was): the notice faded, and the editor stood
    empty with nothing saying why."""
    from textual.widgets import Static

    app = make_tui()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        editor = TaskEditorScreen(98765)
        app.push_screen(editor)
        await until(pilot, lambda: bool(editor.query("#task-title")))
        title = editor.query_one("#task-title", Static)
        await until(pilot, lambda: str(title.render()).startswith("could not load the task: "))
        assert "98765" in str(title.render())
