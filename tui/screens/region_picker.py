"""Region picker: a box drawn over the image, moved with the arrow keys and resized with shift+arrows.

The box lives in 0–1000 normalised coordinates; the picker dismisses with that box and the caller
converts it to what the tool wants (normalised list for Agentic-MME, pixel string for GTA).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    return (round(box[0] * width / 1000), round(box[1] * height / 1000),
            round(box[2] * width / 1000), round(box[3] * height / 1000))


def from_pixels(box: tuple[float, float, float, float], width: int, height: int) -> Box:
    return (round(box[0] * 1000 / width), round(box[1] * 1000 / height),
            round(box[2] * 1000 / width), round(box[3] * 1000 / height))


class RegionPickerScreen(ModalScreen[Box | None]):
    BINDINGS = [
        Binding("left", "move(-1,0)", "Move", show=False, id="region_picker.move_minus1_0"), Binding("right", "move(1,0)", "Move", show=False, id="region_picker.move_1_0"),
        Binding("up", "move(0,-1)", "Move", show=False, id="region_picker.move_0_minus1"), Binding("down", "move(0,1)", "Move", show=False, id="region_picker.move_0_1"),
        Binding("shift+left", "resize(-1,0)", "Narrower", show=False, id="region_picker.resize_minus1_0"),
        Binding("shift+right", "resize(1,0)", "Wider", show=False, id="region_picker.resize_1_0"),
        Binding("shift+up", "resize(0,-1)", "Shorter", show=False, id="region_picker.resize_0_minus1"),
        Binding("shift+down", "resize(0,1)", "Taller", show=False, id="region_picker.resize_0_1"),
        Binding("plus,equals_sign", "step(2)", "Bigger steps", id="region_picker.step_2"),
        Binding("minus", "step(0.5)", "Finer steps", id="region_picker.step_0_5"),
        Binding("enter", "accept", "Use region", id="region_picker.accept"),
        Binding("escape", "cancel", "Cancel", id="region_picker.cancel"),
    ]

    def __init__(self, image: "PILImage", box: Box = (250, 250, 750, 750), size: tuple[int, int] | None = None) -> None:
        super().__init__(classes="modal")
        self.image = image
        self.box = box
        self.step = 25
        self.original_size = size or image.size

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="region-dialog"):
            yield Static("arrows move · shift+arrows resize · +/- step · enter use · escape cancel", classes="hint")
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
