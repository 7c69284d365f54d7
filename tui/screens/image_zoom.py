"""Any image at full size: zoom in and out, pan, back to the whole image; keyboard and mouse wheel.

The original bytes are decoded once in a worker; every view is a crop of them shrunk to what a pane
can show, also made in a worker, so a 4000-pixel receipt stays readable and the UI never waits.

A terminal shows cells, not pixels. ``o`` hands over the original file: under ``chainmark serve`` the
browser opens it in a new tab (real pixels, the browser's own zoom); in a terminal it is saved to the
downloads folder and the path is shown, for an image viewer on the same machine.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.worker import get_current_worker

from tui.messages import Failed, Result
from tui.widgets.footer import KeyFooter
from tui.widgets.image_pane import ImagePane

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

ZOOM_STEP = 1.5
MAX_ZOOM = 64.0
PAN_STEP = 0.25  # of the visible window
ORIGINAL_DELIVERY = "chainmark-original-image"  # names our deliveries in DeliveryComplete


def save_original(data: bytes, filename: str) -> Path:
    """Write to the downloads folder under a name not taken yet (``name-2.png`` …); never overwrites."""
    from platformdirs import user_downloads_path

    folder = Path(user_downloads_path())
    folder.mkdir(parents=True, exist_ok=True)
    stem, _, ext = filename.rpartition(".")
    for n in range(1, 1000):
        path = folder / (filename if n == 1 else f"{stem}-{n}.{ext}")
        try:
            with path.open("xb") as out:  # exclusive: another window saving the same image gets its own name
                out.write(data)
            return path
        except FileExistsError:
            continue
    raise OSError(f"no free file name for {filename} in {folder}")


def original_name(title: str) -> str:
    """A file name from the view's title: letters, digits, dots and dashes only (titles come from data)."""
    name = re.sub(r"[^A-Za-z0-9.-]+", "-", title).strip("-.")[:80]
    return name or "image"


def view_box(size: tuple[int, int], zoom: float, centre: tuple[float, float]) -> tuple[int, int, int, int]:
    """The image region (x0, y0, x1, y1) shown at ``zoom`` (1 = the whole image) around ``centre``,
    kept inside the image."""
    w, h = size
    vw, vh = max(1.0, w / zoom), max(1.0, h / zoom)
    cx = min(max(centre[0], vw / 2), w - vw / 2)
    cy = min(max(centre[1], vh / 2), h - vh / 2)
    return int(round(cx - vw / 2)), int(round(cy - vh / 2)), int(round(cx + vw / 2)), int(round(cy + vh / 2))


@dataclass
class FullImageLoaded(Result):
    """The original image, decoded at full size."""

    WHAT: ClassVar[str] = "image"
    image: PILImage


@dataclass
class OriginalReady(Result):
    """The original file's bytes with the name and type it is handed over under."""

    WHAT: ClassVar[str] = "original"
    data: bytes
    filename: str
    mime_type: str


@dataclass
class ViewCropped(Result):
    """The part of the image in view (``box`` in image pixels), shrunk to fit the pane."""

    WHAT: ClassVar[str] = "image"
    box: tuple[int, int, int, int]
    view: PILImage


class ImageZoomScreen(ModalScreen[None]):
    """Full-size view of one image (``source``: its bytes, or the sha256 of a stored blob)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back", id="image_zoom.close"),
        Binding("plus,equals_sign", "zoom(1)", "Zoom in", id="image_zoom.zoom_in"),
        Binding("minus", "zoom(-1)", "Zoom out", id="image_zoom.zoom_out"),
        Binding("0", "fit", "Whole image", id="image_zoom.fit"),
        Binding("o", "open_original", "Original pixels", id="image_zoom.open_original"),
        Binding("left", "pan(-1, 0)", "Pan", show=False, id="image_zoom.pan_left"),
        Binding("right", "pan(1, 0)", "Pan", show=False, id="image_zoom.pan_right"),
        Binding("up", "pan(0, -1)", "Pan", show=False, id="image_zoom.pan_up"),
        Binding("down", "pan(0, 1)", "Pan", show=False, id="image_zoom.pan_down"),
    ]
    DEFAULT_CSS = """
    ImageZoomScreen { align: center middle; }
    ImageZoomScreen > Vertical { width: 100%; height: 100%; }
    """

    def __init__(self, source: bytes | str, title: str = "image") -> None:
        super().__init__()
        self.source = source
        self.image_title = title
        self.image: PILImage | None = None
        self.zoom = 1.0
        self.centre = (0.0, 0.0)
        self.box: tuple[int, int, int, int] | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield ImagePane("loading…", id="zoom-image")
        yield KeyFooter()

    def on_mount(self) -> None:
        source, app = self.source, self.app

        def decode() -> None:
            from tui.images import full_image

            try:
                data = source if isinstance(source, bytes) else app.blobs.get(source)  # type: ignore[attr-defined]
                image = full_image(data)
            except Exception as exc:  # noqa: BLE001 - an undecodable image is shown as a message
                self.post_message(Failed("image", str(exc)))
                return
            self.post_message(FullImageLoaded(image))

        self.run_worker(decode, thread=True, group="zoom-decode", exit_on_error=False)

    @on(FullImageLoaded)
    def _full_image(self, message: FullImageLoaded) -> None:
        message.stop()
        self.image = message.image
        self.centre = (message.image.width / 2, message.image.height / 2)
        self._show_view()

    @on(ViewCropped)
    def _view_cropped(self, message: ViewCropped) -> None:
        message.stop()
        if message.box == self.box and self.image is not None:
            x0, y0, x1, y1 = message.box
            self.query_one(ImagePane).show(
                message.view,
                f"{self.image_title} · {self.zoom:.1f}× · x {x0}–{x1}, "
                f"y {y0}–{y1} of {self.image.width}×{self.image.height}",
            )

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        message.stop()
        if message.what == "original":
            self.notify(f"cannot hand over the original: {message.error}", severity="error")
            return
        self.query_one(ImagePane).show(None, f"cannot show this image: {message.error}")

    def _show_view(self) -> None:
        if self.image is None:
            return
        image = self.image
        box = self.box = view_box(image.size, self.zoom, self.centre)

        def crop() -> None:
            from tui.images import PREVIEW_MAX

            view = image.crop(box)
            view.thumbnail(PREVIEW_MAX)
            if not get_current_worker().is_cancelled:
                self.post_message(ViewCropped(box, view))

        self.run_worker(crop, thread=True, exclusive=True, group="zoom-view", exit_on_error=False)

    def action_open_original(self) -> None:
        source, app, title = self.source, self.app, self.image_title

        def read() -> None:
            from tui.images import original_kind

            try:
                data = source if isinstance(source, bytes) else app.blobs.get(source)  # type: ignore[attr-defined]
                ext, mime = original_kind(data)
            except Exception as exc:  # noqa: BLE001 - said in a notification, the view stays
                self.post_message(Failed("original", str(exc)))
                return
            self.post_message(OriginalReady(data, f"{original_name(title)}.{ext}", mime))

        self.run_worker(read, thread=True, group="zoom-original", exit_on_error=False)

    @on(OriginalReady)
    def _original_ready(self, message: OriginalReady) -> None:
        message.stop()
        if self.app.is_web:  # textual-serve streams it to a single-use link the page opens
            self.app.deliver_binary(
                io.BytesIO(message.data),
                save_filename=message.filename,
                open_method="browser",
                mime_type=message.mime_type,
                name=ORIGINAL_DELIVERY,
            )
            self.notify(f"{message.filename}: opening in a new browser tab (allow pop-ups for this page)")
            return
        # In a terminal we write the file ourselves: Textual 8.2's terminal delivery opens binary
        # streams in text mode and leaves an empty file.
        data, filename = message.data, message.filename

        def save() -> None:
            try:
                path = save_original(data, filename)
            except OSError as exc:
                self.post_message(Failed("original", str(exc)))
                return
            self.app.call_from_thread(self.app.notify, f"original saved to {path}", timeout=8)

        # The app's worker, not the screen's: escape right after asking would cancel it before it started.
        self.app.run_worker(save, thread=True, group="zoom-original", exit_on_error=False)

    def action_zoom(self, direction: int) -> None:
        self.zoom = min(MAX_ZOOM, max(1.0, self.zoom * (ZOOM_STEP if direction > 0 else 1 / ZOOM_STEP)))
        self._show_view()

    def action_fit(self) -> None:
        if self.image is not None:
            self.zoom, self.centre = 1.0, (self.image.width / 2, self.image.height / 2)
            self._show_view()

    def action_pan(self, dx: int, dy: int) -> None:
        if self.image is None or self.box is None:
            return
        x0, y0, x1, y1 = self.box
        step_x, step_y = (x1 - x0) * PAN_STEP, (y1 - y0) * PAN_STEP
        # From the clamped window's own centre, so panning back from an edge moves at once.
        self.centre = ((x0 + x1) / 2 + dx * step_x, (y0 + y1) / 2 + dy * step_y)
        self._show_view()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.action_zoom(1)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.action_zoom(-1)

    def action_close(self) -> None:
        self.dismiss(None)
