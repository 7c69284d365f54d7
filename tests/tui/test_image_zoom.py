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


async def test_zoom_pan_save_the_original_and_back_from_the_task_editor(  # type: ignore[no-untyped-def]
    make_tui, engine, blobs, tmp_path, monkeypatch
) -> None:
    """One walk from the editor's preview: zoom, pan, whole image, ``o`` saves the original, back.

    Cells are not pixels: ``o`` hands over the original file, byte for byte, named from the title."""
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    monkeypatch.setattr("platformdirs.user_downloads_path", lambda: downloads)
    original = png(1200, 800, text="TOTAL 15.80")
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        t = authoring.create_task(s, "gta", "What does the receipt say?")
        authoring.attach_asset(s, blobs, int(t.id or 0), original)
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
        await _saves_the_original(pilot, app, downloads, original)
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


async def _zoom_on(make_tui, engine, blobs, data: bytes):  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "gta", "gta", tool_set="gta")
        t = authoring.create_task(s, "gta", "Receipt / total?")
        authoring.attach_asset(s, blobs, int(t.id or 0), data)
        return make_tui(start_task=t.id)


async def _saves_the_original(pilot, app, downloads, original: bytes) -> None:  # type: ignore[no-untyped-def]
    """``o`` on the zoom view writes the original's bytes into the downloads folder and says where."""
    assert isinstance(app.screen, ImageZoomScreen)
    await pilot.press("o")
    saved: list = []
    for _ in range(200):  # the driver writes in a thread; wait on the file, not on time
        saved = list(downloads.glob("*.png"))
        if saved and saved[0].read_bytes() == original:
            break
        await pilot.pause(0.05)
    assert len(saved) == 1 and saved[0].read_bytes() == original
    assert "/" not in saved[0].name and saved[0].name.endswith(".png")
    await settle(pilot, app)
    assert any(f"original saved to {saved[0]}" in str(n.message) for n in app._notifications)
    assert isinstance(app.screen, ImageZoomScreen)  # the zoom view stays


async def test_o_refuses_what_a_browser_would_run(make_tui, engine, blobs, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An "image" that is SVG (script inside) is never handed to a browser; the zoom view stays."""
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    monkeypatch.setattr("platformdirs.user_downloads_path", lambda: downloads)
    app = make_tui()
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(ImageZoomScreen(svg, "evil"))
        await settle(pilot, app)
        await pilot.press("o")
        await settle(pilot, app)
        assert isinstance(app.screen, ImageZoomScreen)
        assert any("cannot hand over the original" in str(n.message) for n in app._notifications)
        assert list(downloads.iterdir()) == []


async def test_o_under_serve_opens_a_browser_tab(make_tui, engine, blobs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Served to a browser, the original goes to a new tab as an inline image of its own type."""
    original = png(300, 200, text="x")
    app = await _zoom_on(make_tui, engine, blobs, original)
    delivered: list = []
    monkeypatch.setattr(type(app), "is_web", property(lambda self: True))

    def deliver(f, **kw):  # type: ignore[no-untyped-def]
        delivered.append((f.read(), kw))
        return "key"

    monkeypatch.setattr(app, "deliver_binary", deliver)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.screen.query_one("#editor-preview", ImagePane).focus()
        await pilot.press("enter")
        await settle(pilot, app)
        await pilot.press("o")
        await settle(pilot, app)
        assert len(delivered) == 1
        data, kw = delivered[0]
        assert data == original and kw["open_method"] == "browser" and kw["mime_type"] == "image/png"
        assert any("new browser tab" in str(n.message) for n in app._notifications)


def test_saving_the_same_original_twice_keeps_both(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tui.screens.image_zoom import original_name, save_original

    monkeypatch.setattr("platformdirs.user_downloads_path", lambda: tmp_path)
    first, second = save_original(b"one", "a.png"), save_original(b"two", "a.png")
    assert (first.name, second.name) == ("a.png", "a-2.png") and first.read_bytes() == b"one"
    assert original_name("../../etc/passwd · image 1 of 2") == "etc-passwd-image-1-of-2"


def test_a_pane_no_longer_on_a_screen_ignores_a_late_preview() -> None:
    """A preview that lands while its screen is being taken down (ctrl+q, escape) met a detached holder:
    "Can't mount widget(s) before Vertical(classes='image-holder') is mounted" (seen once under load)."""
    from PIL import Image

    pane = ImagePane("query image")
    pane.show(Image.new("RGB", (8, 8)), "late", source=b"png")  # not attached: nothing to do, no error
    assert pane.source is None
