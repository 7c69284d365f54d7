"""One fixed preview pane for an image, with a caption; the image arrives already shrunk."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage


class ImagePane(Vertical):
    """Shows one PIL image with the app's image widget class (Sixel/kitty/half-cell as configured)."""

    DEFAULT_CSS = """
    ImagePane { height: 1fr; }
    ImagePane > .image-caption { height: 1; color: $text-muted; }
    ImagePane > .image-holder { height: 1fr; }
    ImagePane > .image-holder > * { width: auto; height: 100%; }
    """

    def __init__(self, caption: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._caption = caption

    def compose(self) -> ComposeResult:
        yield Static(Content(self._caption), classes="image-caption")
        yield Vertical(classes="image-holder")

    def show(self, image: "PILImage | None", caption: str | None = None) -> None:
        if caption is not None:
            self.query_one(".image-caption", Static).update(Content(caption))
        holder = self.query_one(".image-holder", Vertical)
        holder.remove_children()
        if image is not None:
            widget_class: Any = getattr(self.app, "image_widget")
            holder.mount(widget_class(image))
        else:
            holder.mount(Static("(no image)", classes="hint"))
