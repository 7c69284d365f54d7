"""The image decoding the widgets need (the widgets themselves come from ``tui.image_widgets``).

Decoding and shrinking images is slow for large files, so ``preview`` is meant to be called in
thread workers; widgets only get small PIL images.
"""

from __future__ import annotations

import io

from PIL import Image as PILImage

PREVIEW_MAX = (960, 720)
"""Largest preview we hand a widget: enough pixels for a full-screen pane in any protocol."""


def preview(data: bytes, max_size: tuple[int, int] = PREVIEW_MAX) -> PILImage.Image:
    """Decode image bytes and shrink them to at most ``max_size`` (RGB, aspect kept)."""
    with PILImage.open(io.BytesIO(data)) as im:
        im.draft("RGB", max_size)  # JPEG: let the decoder skip detail we would throw away
        out = im.convert("RGB")
    out.thumbnail(max_size)
    return out


BROWSER_SAFE = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
"""Formats a browser shows inline as pixels and nothing else (never SVG or HTML: they run script)."""


def original_kind(data: bytes) -> tuple[str, str]:
    """(file extension, MIME type) of image bytes, read from the bytes themselves (never a stored name
    or a claimed type); refuses anything a browser would not show as a plain image."""
    try:
        with PILImage.open(io.BytesIO(data)) as im:
            fmt = im.format or ""
    except Exception as exc:  # noqa: BLE001 - not an image at all
        raise ValueError(f"not an image ({exc})") from exc
    if fmt not in BROWSER_SAFE:
        raise ValueError(f"{fmt or 'this'} image cannot be opened as original pixels; shown here only")
    return ("jpg" if fmt == "JPEG" else fmt.lower()), BROWSER_SAFE[fmt]


FULL_MAX_PIXELS = 64_000_000
"""Largest image the zoom view decodes (a decompression bomb is refused, not decoded)."""


def full_image(data: bytes) -> PILImage.Image:
    """Decode image bytes at full size (RGB) for the zoom view; refuses absurd pixel counts."""
    with PILImage.open(io.BytesIO(data)) as im:
        if im.width * im.height > FULL_MAX_PIXELS:
            raise ValueError(f"{im.width}×{im.height} is too large to show at full size")
        return im.convert("RGB")


def with_box(img: PILImage.Image, box: tuple[float, float, float, float], colour: str = "#ff3030") -> PILImage.Image:
    """A copy of ``img`` with a rectangle drawn at ``box`` given in 0–1000 normalised coordinates."""
    from PIL import ImageDraw

    out = img.copy()
    w, h = out.size
    x1, y1, x2, y2 = (box[0] * w / 1000, box[1] * h / 1000, box[2] * w / 1000, box[3] * h / 1000)
    width = max(1, round(min(w, h) / 80))
    ImageDraw.Draw(out).rectangle([x1, y1, max(x1, x2 - 1), max(y1, y2 - 1)], outline=colour, width=width)
    return out
