"""Any preview opens full size: zoom in and out, pan, whole image, back (keyboard only)."""

from __future__ import annotations

from annotation import tasks as authoring
from store import session_scope
from tests.tui.conftest import png, settle
from tui.screens.image_zoom import ImageZoomScreen, view_box
from tui.widgets.image_pane import ImagePane


def test_view_box_stays_inside_the_image() -> None:
    assert view_box((1000, 500), 1.0, (500, 250)) == (0, 0, 1000, 500)
    assert view_box((1000, 500), 2.0, (500, 250)) == (250, 125, 750, 375)
    assert view_box((1000, 500), 2.0, (0, 0)) == (0, 0, 500, 250)  # pushed back inside
    assert view_box((1000, 500), 2.0, (5000, 5000)) == (500, 250, 1000, 500)


async def _box_after(pilot, app, key: str):  # type: ignore[no-untyped-def]
    await pilot.press(key)
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, ImageZoomScreen)
    caption = str(screen.query_one(ImagePane).query_one(".image-caption").render())
    return screen.box, caption


async def test_zoom_pan_and_back_from_the_task_editor(make_tui, engine, blobs) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        t = authoring.create_task(s, "gta", "What does the receipt say?")
        authoring.attach_asset(s, blobs, int(t.id or 0), png(1200, 800, text="TOTAL 15.80"))
        task_id = t.id
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        editor = app.screen
        pane = editor.query_one("#editor-preview", ImagePane)
        assert pane.source is not None and pane.can_focus
        pane.focus()
        await pilot.press("enter")
        await settle(pilot, app)
        zoom = app.screen
        assert isinstance(zoom, ImageZoomScreen)
        assert zoom.image is not None and zoom.image.size == (1200, 800)  # the original, not the preview
        assert zoom.box == (0, 0, 1200, 800)
        box, caption = await _box_after(pilot, app, "plus")
        assert box == (200, 133, 1000, 667) and "1.5×" in caption and "of 1200×800" in caption
        box, _ = await _box_after(pilot, app, "right")
        assert box == (400, 133, 1200, 667)
        box, _ = await _box_after(pilot, app, "up")
        assert box[1] < 133
        box, _ = await _box_after(pilot, app, "0")
        assert box == (0, 0, 1200, 800)
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.screen is editor


async def test_a_pane_without_an_image_does_not_take_focus(make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        task_id = authoring.create_task(s, "gta", "No image here?").id
    app = make_tui(start_task=task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        pane = app.screen.query_one("#editor-preview", ImagePane)
        assert pane.source is None and not pane.can_focus
