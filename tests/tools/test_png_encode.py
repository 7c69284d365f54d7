"""The PNG settings and the faster ops change no pixel: every tool's result decodes to the pixels the
tool computed, and to what the earlier settings (libpng's adaptive filters; Pillow's own writer)
decode to; the ops rewritten for speed give what their earlier formulas gave. The background
encode hands back the bytes a synchronous encode makes, is waited for, and its errors reach the
caller."""

from __future__ import annotations

import asyncio
import io
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image

from evaluation.harness.episode import encoded_images, start_encodes
from evaluation.tools import ToolContext, execute
from evaluation.tools import images as images_mod
from evaluation.tools.images import Produced, encode_png
from tests.tools.tool_cases import all_cases, args_for, flat_chart, photo_like

PICTURES = {"photo": photo_like, "chart": flat_chart}


def run_tool(picture: str, tool_set: str, name: str, extra: dict[str, Any]) -> Any:
    pic = PICTURES[picture]()
    data = cv2.imencode(".png", pic)[1].tobytes()
    tpl = cv2.imencode(".png", pic[20:40, 30:60])[1].tobytes()
    ctx = ToolContext(images=[data], files={"in.png": data, "tpl.png": tpl})
    result = execute(tool_set, name, args_for(tool_set, extra), ctx)
    assert result.ok, result.error
    return result


def decoded(data: bytes) -> np.ndarray:
    return np.asarray(cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED))


def earlier_png(pixels: Image.Image | np.ndarray) -> bytes:
    """The bytes the settings before this change wrote (Pillow's writer for Pillow images)."""
    if isinstance(pixels, Image.Image):
        buf = io.BytesIO()
        pixels.save(buf, "PNG", compress_level=1, compress_type=3)
        return buf.getvalue()
    params = [cv2.IMWRITE_PNG_COMPRESSION, 1, cv2.IMWRITE_PNG_STRATEGY, cv2.IMWRITE_PNG_STRATEGY_RLE]
    return cv2.imencode(".png", pixels, params)[1].tobytes()


def as_decoded(pixels: Image.Image | np.ndarray) -> np.ndarray:
    """The pixels as ``cv2.imdecode(..., IMREAD_UNCHANGED)`` returns them (BGR order, grey as 2-D)."""
    if isinstance(pixels, np.ndarray):
        return pixels
    order = {"RGB": cv2.COLOR_RGB2BGR, "RGBA": cv2.COLOR_RGBA2BGRA}.get(pixels.mode)
    return np.asarray(pixels) if order is None else cv2.cvtColor(np.asarray(pixels), order)


# Every tool on the photo. The chart gives every tool a result of the same kind as the photo does
# (Pillow RGB, OpenCV grey, OpenCV BGR, or BGR plus a grey mask: checked case by case when this was
# trimmed), and a lossless encode does not depend on the picture, so on the chart one tool per kind.
CHART_CASES = [
    ("agentic-mme", "crop"),  # Pillow RGB
    ("vtc", "opencv_colorspace_gray"),  # OpenCV 2-D grey
    ("vtc", "opencv_resize"),  # OpenCV BGR
    ("vtc", "opencv_inrange_color"),  # a BGR image and a grey mask
]
CASES = [("photo", *c) for c in all_cases()] + [("chart", *c) for c in all_cases() if c[:2] in CHART_CASES]


@pytest.mark.parametrize(
    ("picture", "tool_set", "name", "extra"), CASES, ids=[f"{p}-{n}-{i}" for i, (p, _, n, _) in enumerate(CASES)]
)
def test_every_tool_result_decodes_to_its_pixels_and_to_the_earlier_encoding(
    picture: str, tool_set: str, name: str, extra: dict[str, Any]
) -> None:
    result = run_tool(picture, tool_set, name, extra)
    assert result.produced
    for image in result.produced:
        assert isinstance(image, Produced) and not image.encoded
        pixels = image._pixels
        assert pixels is not None
        before = decoded(earlier_png(pixels))
        now = decoded(image.png())
        assert now.dtype == before.dtype and now.shape == before.shape
        assert np.array_equal(now, before)
        assert np.array_equal(now, as_decoded(pixels))


# ------------------------------------------------------------------------ the ops rewritten for speed


def gray_of(picture: str) -> np.ndarray:
    return cv2.cvtColor(PICTURES[picture](), cv2.COLOR_BGR2GRAY)


@pytest.mark.parametrize("picture", PICTURES)
def test_dft_equals_the_earlier_formula(picture: str) -> None:
    result = run_tool(picture, "vtc", "opencv_dft", {})
    spectrum = np.fft.fftshift(np.fft.fft2(gray_of(picture).astype(np.float64)))
    mag = 20 * np.log1p(np.abs(spectrum))
    expected = cv2.normalize(mag, np.empty_like(mag), 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    assert np.array_equal(decoded(result.images[0]), expected)
    assert result.data["info"]["max_log_magnitude"] == round(float(mag.max()), 3)


@pytest.mark.parametrize("picture", PICTURES)
@pytest.mark.parametrize("extra", [{}, {"threshold_mode": "binary", "connectivity": 4, "max_components": 3}])
def test_connected_components_equal_the_earlier_formula(picture: str, extra: dict[str, Any]) -> None:
    result = run_tool(picture, "vtc", "opencv_connected_components_with_stats", extra)
    gray = gray_of(picture)
    if extra:
        binary = cv2.threshold(gray, 127, 255, cv2.THRESH_BINARY)[1]
    else:
        binary = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)[1]
    n, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=extra.get("connectivity", 8))
    order = sorted(range(1, n), key=lambda k: -stats[k, cv2.CC_STAT_AREA])[: extra.get("max_components", 20)]
    palette = np.random.default_rng(0).integers(64, 256, size=(max(n, 1), 3), dtype=np.uint8)
    palette[0] = 0
    assert np.array_equal(decoded(result.images[0]), palette[labels])
    assert [c["label"] for c in result.data["info"]["components"]] == order


@pytest.mark.parametrize("picture", PICTURES)
@pytest.mark.parametrize(
    ("value", "mode"),
    [
        (128, "binary"),
        (100, "binary_inv"),
        (90, "trunc"),
        (90, "tozero"),
        (-5, "trunc"),
        (300, "binary"),
        (0, "binary"),
    ],
)
def test_mme_threshold_equals_the_earlier_formula(picture: str, value: int, mode: str) -> None:
    result = run_tool(picture, "agentic-mme", "threshold", {"value": value, "mode": mode})
    rgb = Image.fromarray(cv2.cvtColor(PICTURES[picture](), cv2.COLOR_BGR2RGB))
    gray = np.asarray(rgb.convert("L"))
    above = gray > value
    out = {
        "binary_inv": lambda: np.where(above, 0, 255),
        "trunc": lambda: np.where(above, value, gray),
        "tozero": lambda: np.where(above, gray, 0),
    }.get(mode, lambda: np.where(above, 255, 0))()
    expected = np.asarray(Image.fromarray(out.astype(np.uint8)).convert("RGB"))
    assert np.array_equal(cv2.cvtColor(decoded(result.images[0]), cv2.COLOR_BGR2RGB), expected)


def test_opencv_crop_hands_back_a_read_only_view_with_the_cropped_pixels() -> None:
    pic = photo_like()
    result = run_tool("photo", "vtc", "opencv_crop", {"x": 40, "y": 20, "width": 80, "height": 50})
    held = result.produced[0]._pixels
    assert isinstance(held, np.ndarray) and not held.flags.writeable  # nobody can draw on the input through it
    assert np.array_equal(held, pic[20:70, 40:120]) and np.array_equal(decoded(result.images[0]), pic[20:70, 40:120])


# ------------------------------------------------------------------------ the background encode


def test_a_background_encode_gives_the_synchronous_bytes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = images_mod.encode_png

    def counted(arr: np.ndarray) -> bytes:
        calls.append(1)
        return real(arr)

    monkeypatch.setattr(images_mod, "encode_png", counted)
    pixels = photo_like()
    expected = encode_png(pixels)
    gate = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(gate.wait)  # the encode thread is busy: the encode waits in the queue
        produced = Produced(pixels)
        future = produced.start(pool)
        assert produced.start(pool) is future  # once
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(produced.png()))
        reader.start()
        reader.join(0.2)
        assert reader.is_alive() and not got and not calls  # png() waits for the queued encode, never encodes itself
        gate.set()
        reader.join()
    assert got == [expected] and produced.png() is got[0] and future.result() is got[0]
    assert calls == [1]


def test_start_after_an_encode_returns_the_bytes_at_once() -> None:
    produced = Produced(flat_chart())
    data = produced.png()
    assert produced.start().result(timeout=0) is data


def test_a_failed_background_encode_raises_in_every_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(arr: np.ndarray) -> bytes:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(images_mod, "encode_png", broken)
    produced = Produced(photo_like())
    produced.start()
    for _ in range(2):
        with pytest.raises(RuntimeError, match="disk on fire"):
            produced.png()
    with pytest.raises(RuntimeError, match="disk on fire"):
        asyncio.run(encoded_images([produced]))
    assert not produced.encoded and produced.bgr() is not None  # the pixels are still there


def test_encoded_images_keeps_stored_bytes_and_order() -> None:
    a, b = Produced(photo_like()), Produced(flat_chart())
    stored = b"\x89PNG stored"
    start_encodes([a, stored, b])
    assert asyncio.run(encoded_images([a, stored, b])) == [encode_png(photo_like()), stored, encode_png(flat_chart())]
