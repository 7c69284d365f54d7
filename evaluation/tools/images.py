"""Bytes ⇄ Pillow / OpenCV conversions shared by the image tools. Outputs are always PNG (lossless,
so a produced image hashes the same every time it is produced), written by OpenCV's libpng with zlib
level 1, the RLE strategy (matches of distance 1 only) and one filter, Paeth, for every row. Deflate
at level 1 costs the same whatever the filter; what libpng's default adds is trying all five filters
on every row to pick one: about a third of the encode on photos and two thirds on flat images. Paeth
alone gives the same sizes on photos (within 0.5 %) and 6 % more on flat ones, for 20–50 % less CPU
(bench_tools' tool outputs: 4.5 → 3.5 s on a photo, 1.7 → 0.9 s on a chart); the UP filter is a
little cheaper again but 12–14 % larger, and every produced image is resent to the model each round,
so its size counts on the wire. Pillow images go through the same encoder (Pillow's own PNG writer
filters row by row in C too, and was the slowest of all). Pixels are the same whatever the settings.

Decoding is the other fixed cost: a trajectory works on the same few images again and again (crop,
then zoom, then threshold the same input), so decoded inputs are kept in a small cache keyed by their
bytes; callers get a copy (or ask for a read-only view), so an op never changes the cached image.

A tool's result image is a :class:`Produced`: the pixels at once, the PNG bytes only when something
asks for them (to store the asset, send it to a model, save a file), encoded once with the settings
above, so the bytes (and every sha256 naming them in assets and replay keys) are the ones an eager
encode gives. ``start()`` begins that encode on a background thread (libpng and zlib release the
GIL) the moment the image exists, so it overlaps whatever the caller does next; ``png()`` waits for
it and raises what it raised. A later tool reading a produced image takes its pixels directly: no
encode-then-decode between two steps of a chain."""

from __future__ import annotations

import io
import os
import threading
from collections import OrderedDict
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

import cv2
import numpy as np
from PIL import Image, UnidentifiedImageError

from evaluation.tools.errors import ToolError
from store.speedups import enabled

PNG_LEVEL = 1
_PNG_PARAMS = [
    cv2.IMWRITE_PNG_COMPRESSION,
    PNG_LEVEL,
    cv2.IMWRITE_PNG_STRATEGY,
    cv2.IMWRITE_PNG_STRATEGY_RLE,
    cv2.IMWRITE_PNG_FILTER,
    cv2.IMWRITE_PNG_FILTER_PAETH,
]
_RLE = 3  # zlib's Z_RLE strategy (Pillow's writer, for the modes OpenCV cannot write)
# Pillow modes whose pixels OpenCV writes as the same PNG colour type, and how to get them in its order.
_CV_ORDER = {"RGB": cv2.COLOR_RGB2BGR, "RGBA": cv2.COLOR_RGBA2BGRA, "L": None}
DECODED_CACHE_BYTES = 256 * 1024 * 1024


class _DecodedCache:
    """Decoded images by their encoded bytes (compared in full on a hit), least recently used first out."""

    def __init__(self, budget: int) -> None:
        self.budget, self.used = budget, 0
        self._items: OrderedDict[tuple[str, int, int], tuple[bytes, Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, kind: str, data: bytes) -> Any:
        if not enabled("decoded_image_cache"):
            return None
        key = (kind, len(data), hash(data))
        with self._lock:
            hit = self._items.get(key)
            if hit is None or not (hit[0] is data or hit[0] == data):
                return None
            self._items.move_to_end(key)
            return hit[1]

    def put(self, kind: str, data: bytes, value: Any, size: int) -> None:
        if size > self.budget // 4 or not enabled("decoded_image_cache"):
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
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def encode_pool() -> ThreadPoolExecutor:
    """The threads background encodes run on: one per core (libpng and zlib release the GIL, so
    encodes run in parallel with each other and with the caller's Python)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2), thread_name_prefix="png-encode")
        return _pool


def close_encode_pool() -> None:
    """Finish the queued encodes and end the pool's threads (a new pool starts on the next encode):
    for code that needs the process single-threaded again, e.g. before forking."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True)


class Produced:
    """One produced image: pixels now (a Pillow RGB image or an OpenCV array), PNG bytes on first ask.

    ``png()`` is thread-safe and encodes once; ``start()`` begins that encode on a background thread
    and ``png()`` then waits for it (raising what the encode raised). The pixels are never modified
    after construction (readers get copies or read-only views), so the bytes always match them. Once
    encoded, the pixels move to the bounded decoded-image cache under those bytes (when they are what
    decoding gives) and the image keeps only its bytes: a trajectory holds its images as compact
    PNGs, as it did before, and a later tool reading this one still finds its pixels without decoding."""

    __slots__ = ("_pixels", "_png", "_lock", "_future")

    def __init__(self, pixels: Image.Image | np.ndarray) -> None:
        self._pixels: Image.Image | np.ndarray | None = pixels
        self._png: bytes | None = None
        self._lock = threading.Lock()
        self._future: Future[bytes] | None = None

    @property
    def encoded(self) -> bool:
        return self._png is not None

    def start(self, pool: Executor | None = None) -> Future[bytes]:
        """Begin encoding now on ``pool`` (default: :func:`encode_pool`), once; the
        future gives the bytes or the encode's exception. Overlaps the encode with what comes next."""
        with self._lock:
            if self._future is None:
                if self._png is not None or not enabled("png_background_encode"):
                    done: Future[bytes] = Future()
                    try:
                        done.set_result(self._png if self._png is not None else self._encode())
                    except Exception as exc:  # the future carries the encode's failure, as the pool's does
                        done.set_exception(exc)
                    self._future = done
                else:
                    self._future = (pool or encode_pool()).submit(self._encode)
            return self._future

    def png(self) -> bytes:
        data = self._png
        if data is not None:
            return data
        future = self._future
        if future is None:
            with self._lock:
                if self._png is None and self._future is None:
                    return self._encode()
                future = self._future
        return future.result() if future is not None else self.png()

    def _encode(self) -> bytes:
        """Encode the pixels (by ``png()`` under the lock, or alone on the background thread)."""
        px = self._pixels
        assert px is not None
        data = _pil_png(px) if isinstance(px, Image.Image) else encode_png(px)
        _hand_to_cache(px, data)
        self._png, self._pixels = data, None
        return data

    def rgb(self, copy: bool = True) -> Image.Image | None:
        """The RGB image decoding ``png()`` with :func:`open_rgb` gives, or None (decode instead)."""
        px = self._pixels
        if px is None:  # encoded: its pixels are in the decoded cache (or decoded again)
            return None
        if isinstance(px, Image.Image):
            if px.mode != "RGB":
                return None
            return px.copy() if copy else px
        if px.dtype != np.uint8:
            return None
        if px.ndim == 2:
            return Image.fromarray(px).convert("RGB")
        if px.ndim == 3 and px.shape[2] == 3:
            return Image.fromarray(cv2.cvtColor(px, cv2.COLOR_BGR2RGB))
        return None

    def bgr(self, copy: bool = True) -> np.ndarray | None:
        """The BGR array decoding ``png()`` with :func:`decode_bgr` gives, or None (decode instead);
        ``copy=False`` may give a read-only view of the pixels themselves."""
        px = self._pixels
        if px is None:
            return None
        if isinstance(px, Image.Image):
            return np.ascontiguousarray(np.asarray(px)[:, :, ::-1]) if px.mode == "RGB" else None
        if px.dtype != np.uint8:
            return None
        if px.ndim == 2:
            return cv2.cvtColor(px, cv2.COLOR_GRAY2BGR)
        if px.ndim == 3 and px.shape[2] == 3:
            return px.copy() if copy else read_only(px)
        return None


def _hand_to_cache(px: Image.Image | np.ndarray, data: bytes) -> None:
    """Put pixels in the decoded cache under their PNG bytes, if they are exactly what decoding gives."""
    if isinstance(px, Image.Image):
        if px.mode == "RGB":
            _decoded.put("rgb", data, px, px.width * px.height * 3)
    elif px.dtype == np.uint8 and px.ndim == 3 and px.shape[2] == 3:
        own = px if px.base is None and px.flags.c_contiguous else np.array(px, order="C")
        _decoded.put("bgr", data, own, own.nbytes)


ImageData = bytes | Produced  # an image in a tool context or result: stored bytes or a produced image


def image_bytes(image: ImageData) -> bytes:
    """The encoded bytes of an image (encodes a produced image on first use)."""
    return image.png() if isinstance(image, Produced) else image


def open_rgb(data: ImageData, copy: bool = True) -> Image.Image:
    """The image as RGB. ``copy=False`` is for callers that never change the image in place (every
    Pillow op that returns a new image): they may get the cached or produced image itself."""
    if isinstance(data, Produced):
        direct = data.rgb(copy)
        if direct is not None:
            return direct
        data = data.png()
    cached = _decoded.get("rgb", data)
    if cached is not None:
        return cached.copy() if copy else cached
    try:
        im = Image.open(io.BytesIO(data))
        im.load()
    except (UnidentifiedImageError, OSError) as exc:
        raise ToolError(f"the input is not a readable image ({len(data)} bytes): {exc}") from exc
    rgb = im.convert("RGB")
    _decoded.put("rgb", data, rgb, rgb.width * rgb.height * 3)
    return rgb.copy() if copy else rgb


def png_bytes(im: Image.Image) -> bytes:
    return _pil_png(im)


def _pil_png(im: Image.Image) -> bytes:
    if im.mode in _CV_ORDER:
        arr = np.asarray(im)
        order = _CV_ORDER[im.mode]
        return encode_png(arr if order is None else cv2.cvtColor(arr, order))
    buf = io.BytesIO()
    im.save(buf, "PNG", compress_level=PNG_LEVEL, compress_type=_RLE)
    return buf.getvalue()


def read_only(arr: np.ndarray) -> np.ndarray:
    """A view of ``arr`` that numpy and OpenCV refuse to write into."""
    view = arr.view()
    view.flags.writeable = False
    return view


def decode_bgr(data: ImageData, copy: bool = True) -> np.ndarray:
    """The image as 8-bit BGR, as ``cv2.imread`` gives it. ``copy=False`` gives a read-only view of
    the cached (or produced) array: no 6 MB copy per call for an op that only reads its input."""
    if isinstance(data, Produced):
        direct = data.bgr(copy)
        if direct is not None:
            return direct
        data = data.png()
    cached = _decoded.get("bgr", data)
    if cached is not None:
        return cached.copy() if copy else read_only(cached)
    arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if arr is None:
        raise ToolError(f"the input is not a readable image ({len(data)} bytes)")
    _decoded.put("bgr", data, arr, arr.nbytes)
    return arr.copy() if copy else read_only(arr)


def encode_png(arr: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", arr, _PNG_PARAMS)
    if not ok:
        raise ToolError("could not encode the result image as PNG")
    return buf.tobytes()
