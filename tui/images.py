"""The one module that imports textual-image, and the image decoding the widgets need.

textual-image probes the terminal (Sixel / kitty graphics / cell size) when it is imported, which
only works before Textual takes over the terminal, so this module imports it at top level and
``tui.app`` imports this module at top level. Decoding and shrinking images is slow for large
files, so ``preview`` is meant to be called in thread workers; widgets only get small PIL images.
"""

from __future__ import annotations

import io

from PIL import Image as PILImage
from textual.widget import Widget
from textual_image.widget import HalfcellImage, Image, SixelImage, TGPImage, UnicodeImage

PROTOCOLS: dict[str, type[Widget]] = {
    "auto": Image,
    "sixel": SixelImage,
    "tgp": TGPImage,
    "halfcell": HalfcellImage,
    "unicode": UnicodeImage,
}

PREVIEW_MAX = (960, 720)
"""Largest preview we hand a widget: enough pixels for a full-screen pane in any protocol."""


def image_widget_class(protocol: str = "auto") -> type[Widget]:
    """The widget class for a protocol name (``auto`` picks what the terminal supports)."""
    try:
        return PROTOCOLS[protocol]
    except KeyError:
        raise ValueError(f"unknown image protocol {protocol!r}; use one of {', '.join(PROTOCOLS)}") from None


def preview(data: bytes, max_size: tuple[int, int] = PREVIEW_MAX) -> PILImage.Image:
    """Decode image bytes and shrink them to at most ``max_size`` (RGB, aspect kept)."""
    with PILImage.open(io.BytesIO(data)) as im:
        im.draft("RGB", max_size)  # JPEG: let the decoder skip detail we would throw away
        out = im.convert("RGB")
    out.thumbnail(max_size)
    return out


def with_box(img: PILImage.Image, box: tuple[float, float, float, float], colour: str = "#ff3030") -> PILImage.Image:
    """A copy of ``img`` with a rectangle drawn at ``box`` given in 0–1000 normalised coordinates."""
    from PIL import ImageDraw

    out = img.copy()
    w, h = out.size
    x1, y1, x2, y2 = (box[0] * w / 1000, box[1] * h / 1000, box[2] * w / 1000, box[3] * h / 1000)
    width = max(1, round(min(w, h) / 80))
    ImageDraw.Draw(out).rectangle([x1, y1, max(x1, x2 - 1), max(y1, y2 - 1)], outline=colour, width=width)
    return out
