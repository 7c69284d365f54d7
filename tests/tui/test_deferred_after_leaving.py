"""Work a screen started that finishes after the annotator left the screen (issue 32)."""

from __future__ import annotations

import threading

from textual.widgets import OptionList

from annotation import tasks as authoring
from evaluation import drafting
from store import session_scope
from store.models import ModelEndpoint, Task
from tests.support.scripted_openai import scripted_openai, text  # noqa: F401  (fixture)
from tests.tui.conftest import png, settle
from tests.tui.test_authoring_forms import until
from tui.screens.drafting import DraftingScreen
from tui.screens.task_editor import TaskEditorScreen


def _task(engine, blobs) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "mme", "agentic-mme", tool_set="agentic-mme")
        t = authoring.create_task(s, "mme", "What colour?")
        task_id = int(t.id or 0)
        authoring.attach_asset(s, blobs, task_id, png(120, 80))
        return task_id


async def test_a_model_answer_arriving_after_leaving_drafting_is_kept(  # type: ignore[no-untyped-def]
    make_tui, engine, blobs, scripted_openai, monkeypatch
) -> None:
    """The description was paid for: it once vanished (the worker no longer reached the app from a left
    screen and failed silently) when the annotator went back while the model was thinking."""
    task = _task(engine, blobs)
    with session_scope(engine, "tester") as s:
        s.add(ModelEndpoint(name="local", base_url=scripted_openai.base_url, model="scripted-model"))
    scripted_openai.push(text("A blue field."))
    asked, answer = threading.Event(), threading.Event()
    describe = drafting.describe_image

    def held_describe(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.set()
        answer.wait(30)  # the model answers once the test has left the screen
        return describe(*args, **kwargs)

    monkeypatch.setattr(drafting, "describe_image", held_describe)
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskEditorScreen(task))
        await settle(pilot, app)
        app.push_screen(DraftingScreen(task))
        await settle(pilot, app)
        await pilot.press("ctrl+t")
        await until(pilot, asked.is_set)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, TaskEditorScreen))
        answer.set()
        await until(pilot, lambda: len(scripted_openai.chat_requests()) == 1)
        await settle(pilot, app)
        assert app.is_running
    with session_scope(engine) as s:
        task_row = s.get(Task, task)
        assert task_row is not None
        assert task_row.meta["drafting"]["description"] == "A blue field."


async def test_a_second_answer_to_a_prompt_never_closes_the_screen_beneath(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    """Enter and escape in the same moment (or a deferred callback) answered a prompt twice: the second
    dismiss popped whatever screen was under it, here the task editor the prompt was asked from."""
    from textual.widgets import Input

    from tui.screens.prompt import PromptScreen

    task = _task(engine, blobs)
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(TaskEditorScreen(task))
        await settle(pilot, app)
        editor = app.screen
        answers: list[str | None] = []
        app.push_screen(PromptScreen("Attach an image"), answers.append)
        await until(pilot, lambda: isinstance(app.screen, PromptScreen) and bool(app.screen.query("#prompt-input")))
        prompt = app.screen
        box = prompt.query_one("#prompt-input", Input)
        box.value = "/nowhere.png"
        box.post_message(Input.Submitted(box, box.value))  # enter: its Submitted waits in the queue …
        prompt.action_cancel()  # … while escape is acted on at once
        await settle(pilot, app)
        assert answers == [None]  # answered once
        assert app.screen is editor  # the editor is still open


async def test_running_a_tool_while_its_inputs_are_being_set_up_says_so(make_tui, engine, blobs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A run deferred into the moment between choosing another tool and its inputs being mounted read the
    new tool's fields with no inputs there yet: a traceback. The gap is held open here (the mount waits
    for the test); the run now says the inputs are not ready, and the form fills once they are."""
    import asyncio

    from tui.screens.chain_builder import ChainBuilderScreen
    from tui.widgets.arg_form import ArgForm

    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        task = int(authoring.create_task(s, "gta", "What is shown?").id or 0)
        authoring.attach_asset(s, blobs, task, png(120, 80))
    app = make_tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.push_screen(ChainBuilderScreen(task))
        await settle(pilot, app)
        builder = app.screen
        assert isinstance(builder, ChainBuilderScreen)
        form = builder.query_one(ArgForm)
        first = builder.tool_name
        assert first is not None and form.fields
        gate, mount_all = asyncio.Event(), form.mount_all

        async def meanwhile(condition) -> None:  # type: ignore[no-untyped-def]
            """``until`` for while the screen is held: the pilot's pauses wait for the screen's queue."""
            for _ in range(2000):
                if condition():
                    return
                await asyncio.sleep(0.01)
            raise AssertionError("condition never held")

        async def held_mount(*args, **kwargs):  # type: ignore[no-untyped-def]
            await gate.wait()
            return await mount_all(*args, **kwargs)

        monkeypatch.setattr(form, "mount_all", held_mount)
        try:  # the gate opens whatever happens: a held mount would keep the app (and the test) from ending
            palette = builder.query_one("#palette", OptionList)
            palette.highlighted = (palette.highlighted or 0) + 1  # the next tool is chosen …
            await meanwhile(lambda: builder.tool_name != first)
            await meanwhile(lambda: not builder.query("#args Input"))  # … the old inputs go, the new are held
            # Terminal keys wait for the UI to settle (``tui.held_keys``) and a deferred run comes back through
            # the screen's queue, so both wait for the mount today; the run as it is finally carried out is
            # called here in the gap, as any path that reaches it there would.
            builder.action_run.__wrapped__(builder)  # type: ignore[attr-defined]
            await meanwhile(lambda: any("still being set up" in n.message for n in app._notifications))
        finally:
            gate.set()
        await until(pilot, lambda: bool(form.fields) and all(builder.query(f"#{f.widget_id}") for f in form.fields))
        await settle(pilot, app)
        paths = {f.path.split(".")[0] for f in form.fields}
        assert set(form.values()) <= paths  # ready: the new tool's arguments (its image filled in)
        assert isinstance(app.screen, ChainBuilderScreen)
