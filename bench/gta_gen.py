"""Generated GTA-format datasets for the import and UI benchmarks (distinct small PNGs, real records)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from PIL import Image

TOOLS = {
    "OCR": {
        "name": "OCR",
        "description": "Recognise all text on the input image.",
        "inputs": [
            {
                "type": "image",
                "name": "image",
                "description": None,
                "optional": False,
                "default": None,
                "filetype": None,
            }
        ],
        "outputs": [
            {"type": "text", "name": None, "description": None, "optional": False, "default": None, "filetype": None}
        ],
    },
    "Calculator": {
        "name": "Calculator",
        "description": "Evaluate one Python expression.",
        "inputs": [
            {
                "type": "text",
                "name": "expression",
                "description": None,
                "optional": False,
                "default": None,
                "filetype": None,
            }
        ],
        "outputs": [
            {"type": "text", "name": None, "description": None, "optional": False, "default": None, "filetype": None}
        ],
    },
}


def tiny_png(seed: int) -> bytes:
    im = Image.new("RGB", (8, 8), (seed % 251, (seed // 251) % 251, (seed // 63001) % 251))
    buf = io.BytesIO()
    im.save(buf, "PNG", compress_level=1)
    return buf.getvalue()


def record(i: int, image: str) -> dict[str, Any]:
    people = 2 + i % 7
    total = 100 + i % 900
    return {
        "tools": [TOOLS["OCR"], TOOLS["Calculator"]],
        "files": [{"type": "image", "path": image, "url": None}],
        "dialogs": [
            {
                "role": "user",
                "content": f"Item {i}: a family of {people} shares this bottle. How many days will it last?",
            },
            {
                "role": "assistant",
                "tool_calls": [{"type": "function", "function": {"name": "OCR", "arguments": {"image": image}}}],
                "thought": "Read the label.",
            },
            {"role": "tool", "name": "OCR", "content": {"type": "text", "content": f"(3, 4, 50, 60) {total} SOFTGELS"}},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": "Calculator", "arguments": {"expression": f"{total} / {people}"}},
                    }
                ],
                "thought": "Divide.",
            },
            {"role": "tool", "name": "Calculator", "content": {"type": "text", "content": str(total // people)}},
            {"role": "assistant", "content": str(total // people)},
        ],
        "gt_answer": {"whitelist": [[str(total // people)]], "blacklist": None},
    }


def write_dataset(root: Path, n: int, distinct_images: int | None = None) -> Path:
    """``n`` tasks; ``distinct_images`` (default n) images shared round-robin."""
    images = distinct_images or n
    (root / "image").mkdir(parents=True, exist_ok=True)
    for k in range(images):
        (root / "image" / f"image_{k}.png").write_bytes(tiny_png(k))
    data = {str(i): record(i, f"image/image_{i % images}.png") for i in range(n)}
    (root / "dataset.json").write_text(json.dumps(data), encoding="utf-8")
    (root / "toolmeta.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    return root
