"""OCR reads text the test renders. Slow-marked (engine load ≈ 2 s) but part of the default run;
the engine is created once per test session and reused by both tests."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw, ImageFont

from evaluation.tools import ToolContext, execute
from tests.tools.conftest import png

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

pytestmark = pytest.mark.slow


def rendered(lines: list[str]) -> bytes:
    im = Image.new("RGB", (640, 70 * len(lines) + 40), "white")
    draw = ImageDraw.Draw(im)
    font = ImageFont.truetype(FONT, 36)
    for k, line in enumerate(lines):
        draw.text((30, 30 + 70 * k), line, fill="black", font=font)
    return png(im)


def test_ocr_reads_rendered_text_with_boxes() -> None:
    ctx = ToolContext(files={"image/image_96.jpg": rendered(["290 SOFTGELS", "Take 1 per day"])})
    r = execute("gta", "OCR", {"image": "image/image_96.jpg"}, ctx)
    assert r.ok, r.error
    texts = [ln["text"] for ln in r.data["lines"]]
    assert texts == ["290 SOFTGELS", "Take 1 per day"]
    first = r.data["lines"][0]["bbox"]
    assert 15 <= first[0] <= 45 and 15 <= first[1] <= 50 and first[2] > 250  # around the drawn text
    assert r.text.splitlines()[0] == f"({first[0]}, {first[1]}, {first[2]}, {first[3]}) 290 SOFTGELS"


def test_ocr_on_a_blank_image_says_so() -> None:
    r = execute(
        "gta",
        "OCR",
        {"image": "blank.png"},
        ToolContext(files={"blank.png": png(Image.new("RGB", (200, 80), "white"))}),
    )
    assert r.ok and r.data["lines"] == [] and r.text == "No text was recognized in the image."
