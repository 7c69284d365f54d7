"""One fixed preview pane for an image, with a caption; the image arrives already shrunk."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static
from tui.safe_text import data_content

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage


class ImagePane(Vertical, can_focus=False):
    """Shows one PIL image with the app's image widget class (Sixel/kitty/half-cell as configured).

    Given the original (``source``: bytes or a blob sha256), the pane takes focus and ``enter`` (or a
    click) opens it full size in the zoom view."""

    BINDINGS = [Binding("enter,z", "zoom", "Zoom image", id="image_pane.zoom")]

    DEFAULT_CSS = """
    ImagePane { height: 1fr; }
    ImagePane:focus > .image-caption { color: $accent; text-style: bold; }
    ImagePane > .image-caption { height: 1; color: $text-muted; }
    ImagePane > .image-holder { height: 1fr; }
    ImagePane > .image-holder > * { width: auto; height: 100%; }
    """

    def __init__(self, caption: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._caption = caption
        self.source: bytes | str | None = None

    def compose(self) -> ComposeResult:
        yield Static(data_content(self._caption), classes="image-caption")
        yield Vertical(classes="image-holder")

    def show(self, image: "PILImage | None", caption: str | None = None, *, source: bytes | str | None = None) -> None:
        if not self.is_attached:  # a preview landing while its screen is taken down (quit, back): seen under load
            return  # as "Can't mount widget(s) before Vertical(classes='image-holder') is mounted"
        if caption is not None:
            self._caption = caption
        self.source = source if image is not None else None
        self.can_focus = self.source is not None
        shown = self._caption + ("  (enter: zoom)" if self.source is not None else "")
        if caption is not None or self.source is not None:
            self.query_one(".image-caption", Static).update(data_content(shown))
        holder = self.query_one(".image-holder", Vertical)
        holder.remove_children()
        if image is not None:
            widget_class: Any = getattr(self.app, "image_widget")
            holder.mount(widget_class(image))
        else:
            holder.mount(Static("(no image)", classes="hint"))

    class ZoomRequested(Message):
        """Open ``source`` full size (the app answers with the zoom screen; widgets know no screens)."""

        def __init__(self, source: bytes | str, caption: str) -> None:
            super().__init__()
            self.source, self.caption = source, caption

    def action_zoom(self) -> None:
        if self.source is not None:
            self.post_message(self.ZoomRequested(self.source, self._caption))

    def on_click(self, event: events.Click) -> None:
        if self.source is not None:
            self.action_zoom()
