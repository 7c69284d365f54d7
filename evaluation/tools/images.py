"""Bytes ⇄ Pillow / OpenCV conversions shared by the image tools. Outputs are always PNG (lossless,
so a produced image hashes the same every time it is produced), written with zlib level 1 and the
Huffman-only strategy: on a 1920×1080 photo that is several times faster than the default level, and
Huffman-only is faster again (about 30 %) and smaller than level 1's default strategy, because photo
noise leaves deflate's string matching little to find. Encoding dominates the cost of most ops
(see bench/bench_tools.py).

Decoding is the other fixed cost: a trajectory works on the same few images again and again (crop,
then zoom, then threshold the same input), so decoded inputs are kept in a small cache keyed by their
bytes; callers get a copy, so an op that works in place never changes the cached image."""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from typing import Any

import cv2
import numpy as np
from PIL import Image, UnidentifiedImageError

from evaluation.tools.result import ToolError

PNG_LEVEL = 1
_HUFFMAN_ONLY = 2  # zlib's Z_HUFFMAN_ONLY strategy
DECODED_CACHE_BYTES = 256 * 1024 * 1024


class _DecodedCache:
    """Decoded images by their encoded bytes (compared in full on a hit), least recently used first out."""

    def __init__(self, budget: int) -> None:
        self.budget, self.used = budget, 0
        self._items: OrderedDict[tuple[str, int, int], tuple[bytes, Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, kind: str, data: bytes) -> Any:
        key = (kind, len(data), hash(data))
        with self._lock:
            hit = self._items.get(key)
            if hit is None or not (hit[0] is data or hit[0] == data):
                return None
            self._items.move_to_end(key)
            return hit[1]

    def put(self, kind: str, data: bytes, value: Any, size: int) -> None:
        if size > self.budget // 4:
            return
        key = (kind, len(data), hash(data))
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.used -= old[2]
            self._items[key] = (data, value, size)
            self.used += size
            while self.used > self.budget and self._items:
                _, (_, _, freed) = self._items.popitem(last=False)
                self.used -= freed


_decoded = _DecodedCache(DECODED_CACHE_BYTES)


def open_rgb(data: bytes) -> Image.Image:
    cached = _decoded.get("rgb", data)
    if cached is not None:
        return cached.copy()
    try:
        im = Image.open(io.BytesIO(data))
        im.load()
    except (UnidentifiedImageError, OSError) as exc:
        raise ToolError(f"the input is not a readable image ({len(data)} bytes): {exc}") from exc
    rgb = im.convert("RGB")
    _decoded.put("rgb", data, rgb, rgb.width * rgb.height * 3)
    return rgb.copy()


def png_bytes(im: Image.Image) -> bytes:
    buf = io.BytesIO()
    im.save(buf, "PNG", compress_level=PNG_LEVEL, compress_type=_HUFFMAN_ONLY)
    return buf.getvalue()


def decode_bgr(data: bytes) -> np.ndarray:
    cached = _decoded.get("bgr", data)
    if cached is not None:
        return cached.copy()
    arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if arr is None:
        raise ToolError(f"the input is not a readable image ({len(data)} bytes)")
    _decoded.put("bgr", data, arr, arr.nbytes)
    return arr.copy()


def encode_png(arr: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(
        ".png",
        arr,
        [cv2.IMWRITE_PNG_COMPRESSION, PNG_LEVEL, cv2.IMWRITE_PNG_STRATEGY, cv2.IMWRITE_PNG_STRATEGY_HUFFMAN_ONLY],
    )
    if not ok:
        raise ToolError("could not encode the result image as PNG")
    return buf.tobytes()
