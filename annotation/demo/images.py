"""Images the demo project draws itself, so it ships no third-party pictures and is reproducible.

Every function returns PNG bytes and is deterministic (fixed sizes, fixed seeds, DejaVu or Pillow's
built-in font).
"""

from __future__ import annotations

import io
import random
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont, ImageOps

_DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
_DEJAVU_BOLD = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")


@lru_cache(maxsize=32)
def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = _DEJAVU_BOLD if bold else _DEJAVU
    if path.exists():
        return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size=size)


def png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


RECEIPT_LINES = [
    ("CORNER CAFE", None),
    ("Flat white", "4.20"),
    ("Bagel", "3.60"),
    ("Orange juice", "5.20"),
    ("Muffin", "2.80"),
    ("TOTAL", "15.80"),
]


def receipt() -> bytes:
    """A till receipt: four items and a total, for OCR + Calculator chains."""
    img = Image.new("RGB", (420, 360), "white")
    d = ImageDraw.Draw(img)
    y = 24
    for label, price in RECEIPT_LINES:
        f = font(26, bold=price is None or label == "TOTAL")
        if price is None:
            d.text((210, y), label, fill="black", font=f, anchor="ma")
            y += 56
            continue
        if label == "TOTAL":
            d.line([(24, y - 10), (396, y - 10)], fill="black", width=2)
        d.text((30, y), label, fill="black", font=f)
        d.text((390, y), price, fill="black", font=f, anchor="ra")
        y += 48
    return png(img)


def shapes(circles: int = 5, squares: int = 3, seed: int = 7) -> bytes:
    """Countable shapes on a plain background: red circles and blue squares that never overlap."""
    rng = random.Random(seed)
    img = Image.new("RGB", (640, 400), (245, 245, 240))
    d = ImageDraw.Draw(img)
    taken: list[tuple[int, int, int]] = []

    def free_spot(r: int) -> tuple[int, int]:
        while True:
            x, y = rng.randint(r + 10, 640 - r - 10), rng.randint(r + 10, 400 - r - 10)
            if all((x - a) ** 2 + (y - b) ** 2 > (r + c + 16) ** 2 for a, b, c in taken):
                taken.append((x, y, r))
                return x, y

    for _ in range(circles):
        x, y = free_spot(34)
        d.ellipse([x - 30, y - 30, x + 30, y + 30], fill=(210, 40, 40), outline="black", width=2)
    for _ in range(squares):
        x, y = free_spot(34)
        d.rectangle([x - 26, y - 26, x + 26, y + 26], fill=(40, 80, 200), outline="black", width=2)
    return png(img)


def mirrored_sign(text: str = "EXIT 12") -> bytes:
    """A shop sign whose text is mirrored left-right (readable only after a horizontal flip)."""
    img = Image.new("RGB", (480, 200), (30, 90, 60))
    d = ImageDraw.Draw(img)
    d.rectangle([20, 40, 460, 160], fill=(250, 250, 235), outline=(10, 10, 10), width=4)
    d.text((240, 100), text, fill=(20, 20, 20), font=font(64, bold=True), anchor="mm")
    return png(ImageOps.mirror(img))


def rotated_label(text: str = "LOT 4471", angle: int = 90) -> bytes:
    """A label printed sideways (rotated by ``angle`` degrees counter-clockwise)."""
    img = Image.new("RGB", (420, 140), "white")
    d = ImageDraw.Draw(img)
    d.text((210, 70), text, fill="black", font=font(56, bold=True), anchor="mm")
    return png(img.rotate(angle, expand=True, fillcolor="white"))


def low_light_scene() -> bytes:
    """A dark, noisy photo-like street scene with a house number that brightening reveals."""
    rng = random.Random(3)
    img = Image.new("RGB", (640, 420), (40, 44, 60))
    d = ImageDraw.Draw(img)
    d.rectangle([0, 300, 640, 420], fill=(30, 30, 34))  # street
    d.polygon([(120, 300), (120, 150), (260, 70), (400, 150), (400, 300)], fill=(90, 70, 60))  # house
    d.rectangle([230, 210, 290, 300], fill=(50, 35, 30))  # door
    d.rectangle([300, 160, 380, 200], fill=(230, 230, 220))  # number plate
    d.text((340, 180), "27", fill=(20, 20, 20), font=font(34, bold=True), anchor="mm")
    for _ in range(5):  # trees
        x = rng.randint(440, 620)
        d.ellipse([x - 40, 150, x + 40, 250], fill=(40, 90, 50))
        d.rectangle([x - 6, 250, x + 6, 300], fill=(70, 50, 30))
    img = img.filter(ImageFilter.GaussianBlur(1.2))
    dark = img.point(lambda v: int(v * 0.18))
    noise = Image.effect_noise((640, 420), 12).convert("RGB")
    return png(Image.blend(dark, noise.point(lambda v: int(v * 0.12)), 0.25))


BAR_CHART_DATA = {"Mon": 12, "Tue": 19, "Wed": 7, "Thu": 15, "Fri": 23}


def bar_chart() -> bytes:
    """A labelled bar chart (drawn with Pillow, so no font cache or backend differences)."""
    img = Image.new("RGB", (560, 380), "white")
    d = ImageDraw.Draw(img)
    d.text((280, 14), "Parcels delivered per day", fill="black", font=font(20, bold=True), anchor="ma")
    x0, y0, h = 60, 330, 260
    d.line([(x0, y0), (530, y0)], fill="black", width=2)
    d.line([(x0, y0), (x0, 50)], fill="black", width=2)
    top = max(BAR_CHART_DATA.values())
    for i, (day, value) in enumerate(BAR_CHART_DATA.items()):
        bx = x0 + 25 + i * 92
        by = y0 - int(h * value / top)
        d.rectangle([bx, by, bx + 56, y0], fill=(70, 130, 180))
        d.text((bx + 28, by - 6), str(value), fill="black", font=font(16), anchor="mb")
        d.text((bx + 28, y0 + 8), day, fill="black", font=font(16), anchor="ma")
    return png(img)


def recipe_step(step: int, colour: tuple[int, int, int]) -> bytes:
    """A simple illustration for an interleaved (ISG/ATP) answer: a bowl with a numbered step."""
    img = Image.new("RGB", (320, 240), (250, 246, 236))
    d = ImageDraw.Draw(img)
    d.ellipse([60, 90, 260, 210], fill=colour, outline=(80, 60, 40), width=4)
    d.text((160, 40), f"Step {step}", fill=(60, 40, 20), font=font(28, bold=True), anchor="mm")
    return png(img)
