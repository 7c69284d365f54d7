"""Region picker: a box drawn over the image, moved with the arrow keys and resized with shift+arrows,
dragged out with the mouse, or typed as pixel coordinates (``t``).

The box lives in 0–1000 normalised coordinates; the picker dismisses with that box and the caller
converts it to what the tool wants (normalised list for Agentic-MME, pixel string for GTA).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.images import with_box
from tui.widgets.footer import KeyFooter
from tui.widgets.image_pane import ImagePane

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

Box = tuple[int, int, int, int]


def moved(box: Box, dx: int, dy: int) -> Box:
    """Shift the box, keeping it inside the image."""
    x1, y1, x2, y2 = box
    dx = max(-x1, min(dx, 1000 - x2))
    dy = max(-y1, min(dy, 1000 - y2))
    return (x1 + dx, y1 + dy, x2 + dx, y2 + dy)


def resized(box: Box, dw: int, dh: int, minimum: int = 10) -> Box:
    """Grow or shrink the box from its bottom-right corner, within the image and above a minimum size."""
    x1, y1, x2, y2 = box
    return (x1, y1, max(x1 + minimum, min(1000, x2 + dw)), max(y1 + minimum, min(1000, y2 + dh)))


def to_pixels(box: Box, width: int, height: int) -> tuple[int, int, int, int]:
    return (
        round(box[0] * width / 1000),
        round(box[1] * height / 1000),
        round(box[2] * width / 1000),
        round(box[3] * height / 1000),
    )


def typed_box(text: str, width: int, height: int) -> Box:
    """``x1, y1, x2, y2`` in pixels of the original image (commas, spaces or brackets) as a 0–1000 box;
    a ValueError says what is wrong."""
    import re

    numbers = re.findall(r"-?\d+(?:\.\d+)?", text)
    if len(numbers) != 4:
        raise ValueError(f"type four numbers, x1, y1, x2, y2 in pixels (got {len(numbers)})")
    x1, y1, x2, y2 = (float(n) for n in numbers)
    if not (0 <= x1 < x2 <= width and 0 <= y1 < y2 <= height):
        raise ValueError(f"need 0 ≤ x1 < x2 ≤ {width} and 0 ≤ y1 < y2 ≤ {height}")
    return from_pixels((x1, y1, x2, y2), width, height)


def spanned(a: tuple[int, int], b: tuple[int, int], minimum: int = 10) -> Box:
    """The box between two dragged-to points (either order), at least ``minimum`` wide and tall."""
    x1, x2 = sorted((a[0], b[0]))
    y1, y2 = sorted((a[1], b[1]))
    x2, y2 = max(x2, min(1000, x1 + minimum)), max(y2, min(1000, y1 + minimum))
    return (x1, y1, x2, y2)


def from_pixels(box: tuple[float, float, float, float], width: int, height: int) -> Box:
    return (
        round(box[0] * 1000 / width),
        round(box[1] * 1000 / height),
        round(box[2] * 1000 / width),
        round(box[3] * 1000 / height),
    )


class RegionPickerScreen(ModalScreen[Box | None]):
    BINDINGS = [
        Binding("left", "move(-1,0)", "Move", show=False, id="region_picker.move_minus1_0"),
        Binding("right", "move(1,0)", "Move", show=False, id="region_picker.move_1_0"),
        Binding("up", "move(0,-1)", "Move", show=False, id="region_picker.move_0_minus1"),
        Binding("down", "move(0,1)", "Move", show=False, id="region_picker.move_0_1"),
        Binding("shift+left", "resize(-1,0)", "Narrower", show=False, id="region_picker.resize_minus1_0"),
        Binding("shift+right", "resize(1,0)", "Wider", show=False, id="region_picker.resize_1_0"),
        Binding("shift+up", "resize(0,-1)", "Shorter", show=False, id="region_picker.resize_0_minus1"),
        Binding("shift+down", "resize(0,1)", "Taller", show=False, id="region_picker.resize_0_1"),
        Binding("plus,equals_sign", "step(2)", "Bigger steps", id="region_picker.step_2"),
        Binding("minus", "step(0.5)", "Finer steps", id="region_picker.step_0_5"),
        Binding("t", "type_box", "Type pixels", id="region_picker.type_box"),
        Binding("enter", "accept", "Use region", id="region_picker.accept"),
        Binding("escape", "cancel", "Cancel", id="region_picker.cancel"),
    ]

    def __init__(self, image: "PILImage", box: Box = (250, 250, 750, 750), size: tuple[int, int] | None = None) -> None:
        super().__init__(classes="modal")
        self.image = image
        self.box = box
        self.step = 25
        self.original_size = size or image.size
        self._drag_from: tuple[int, int] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="region-dialog"):
            yield Static(
                "arrows move · shift+arrows resize · +/- step · drag with the mouse · t type pixels · "
                "enter use · escape cancel",
                classes="hint",
            )
            yield ImagePane("", id="region-image")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._draw()

    def _draw(self) -> None:
        w, h = self.original_size
        px = to_pixels(self.box, w, h)
        caption = f"box {list(self.box)} (0–1000) = pixels {px} of {w}×{h} · step {self.step}"
        self.query_one(ImagePane).show(with_box(self.image, self.box), caption)

    def action_move(self, dx: int, dy: int) -> None:
        self.box = moved(self.box, dx * self.step, dy * self.step)
        self._draw()

    def action_resize(self, dw: int, dh: int) -> None:
        self.box = resized(self.box, dw * self.step, dh * self.step)
        self._draw()

    def action_step(self, factor: float) -> None:
        self.step = int(max(5, min(200, self.step * factor)))
        self._draw()

    def action_type_box(self) -> None:
        from tui.screens.prompt import PromptScreen

        w, h = self.original_size
        current = ", ".join(str(c) for c in to_pixels(self.box, w, h))

        def typed(text: str | None) -> None:
            if text is None:
                return
            try:
                self.box = typed_box(text, w, h)
            except ValueError as exc:
                self.notify(str(exc), severity="error")
                return
            self._draw()

        self.app.push_screen(PromptScreen(f"Box in pixels of the {w}×{h} image: x1, y1, x2, y2", current), typed)

    # ------------------------------------------------------------------ mouse: drag out a box

    def _point(self, screen_x: int, screen_y: int) -> tuple[int, int] | None:
        """Where a mouse position falls on the image, in 0–1000 coordinates (None off the image)."""
        holder = self.query_one(ImagePane).query_one(".image-holder")
        if not holder.children:
            return None
        region = holder.children[0].region
        if region.width <= 0 or region.height <= 0 or not region.contains(screen_x, screen_y):
            return None
        return (round((screen_x - region.x) * 1000 / region.width), round((screen_y - region.y) * 1000 / region.height))

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self._drag_from = self._point(event.screen_x, event.screen_y)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        start = self._drag_from
        point = self._point(event.screen_x, event.screen_y) if start is not None and event.button else None
        if start is not None and point is not None:
            self.box = spanned(start, point)
            self._draw()

    def on_mouse_up(self, event: events.MouseUp) -> None:
        start, self._drag_from = self._drag_from, None
        point = self._point(event.screen_x, event.screen_y)
        if start is not None and point is not None and point != start:
            self.box = spanned(start, point)
            self._draw()

    def action_accept(self) -> None:
        self.dismiss(self.box)

    def action_cancel(self) -> None:
        self.dismiss(None)


def bbox_argument(box: Box, normalised: bool, as_text: bool, size: tuple[int, int]) -> Any:
    """The box in the form a tool's bbox argument wants."""
    coords = list(box) if normalised else list(to_pixels(box, *size))
    if as_text:
        return "(" + ", ".join(str(c) for c in coords) + ")"
    return coords
