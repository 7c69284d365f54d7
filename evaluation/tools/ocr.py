"""OCR with rapidocr (PP-OCR models ship in its wheel, so it runs offline). The engine takes about
1.7 s to load, so one engine per process is created on first use and reused."""

from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np

from evaluation.lazy_import import load
from evaluation.tools.images import decode_bgr
from evaluation.tools.result import ToolContext, ToolOutput

_engine: Any = None
_lock = threading.RLock()


def engine() -> Any:
    global _engine
    with _lock:
        if _engine is None:
            RapidOCR = load("rapidocr").RapidOCR  # first use is on a tool thread: see lazy_import
            # Its INFO lines are local model-file checks; keep the terminal quiet.
            _engine = RapidOCR(params={"Global.log_level": "warning"})
            logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        return _engine


def recognize(image_bytes: bytes) -> list[dict[str, Any]]:
    """Text lines in reading order: ``{"bbox": [x1, y1, x2, y2], "text", "score"}`` (axis-aligned box)."""
    arr = decode_bgr(image_bytes)
    with _lock:  # onnxruntime sessions are thread-safe, but one at a time keeps memory flat on 2 cores
        out = engine()(arr)
    boxes = getattr(out, "boxes", None)
    if boxes is None or len(boxes) == 0:
        return []
    lines = []
    for box, text, score in zip(boxes, out.txts, out.scores):
        pts = np.asarray(box, dtype=float)
        x1, y1 = pts.min(axis=0)
        x2, y2 = pts.max(axis=0)
        lines.append(
            {
                "bbox": [int(round(x1)), int(round(y1)), int(round(x2)), int(round(y2))],
                "text": str(text),
                "score": round(float(score), 4),
            }
        )
    return lines


def run_ocr(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """GTA OCR: one line per text region, ``(x1, y1, x2, y2) text``."""
    lines = recognize(ctx.resolve_image(args["image"]))
    text = "\n".join(f"({', '.join(map(str, ln['bbox']))}) {ln['text']}" for ln in lines)
    return ToolOutput(text=text or "No text was recognized in the image.", data={"lines": lines})
