"""Bytes ⇄ Pillow / OpenCV conversions shared by the image tools. Outputs are always PNG (lossless,
so a produced image hashes the same every time it is produced), written with zlib level 1: on a
1920×1080 photo that is several times faster than the default level for a slightly larger file, and
encoding dominates the cost of most ops (see bench/bench_tools.py)."""

from __future__ import annotations

import io

import cv2
import numpy as np
from PIL import Image, UnidentifiedImageError

from evaluation.tools.result import ToolError

PNG_LEVEL = 1


def open_rgb(data: bytes) -> Image.Image:
    try:
        im = Image.open(io.BytesIO(data))
        im.load()
    except (UnidentifiedImageError, OSError) as exc:
        raise ToolError(f"the input is not a readable image ({len(data)} bytes): {exc}") from exc
    return im.convert("RGB")


def png_bytes(im: Image.Image) -> bytes:
    buf = io.BytesIO()
    im.save(buf, "PNG", compress_level=PNG_LEVEL)
    return buf.getvalue()


def decode_bgr(data: bytes) -> np.ndarray:
    arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if arr is None:
        raise ToolError(f"the input is not a readable image ({len(data)} bytes)")
    return arr


def encode_png(arr: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", arr, [cv2.IMWRITE_PNG_COMPRESSION, PNG_LEVEL])
    if not ok:
        raise ToolError("could not encode the result image as PNG")
    return buf.tobytes()
