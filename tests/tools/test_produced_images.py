"""Produced images: a tool call hands back pixels and encodes nothing; the PNG bytes are made once
when first asked for, and a later tool reading a produced image sees exactly the pixels it would
have decoded from those bytes (same results, same bytes, across Pillow and OpenCV tools)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from evaluation.tools import ToolContext, execute
from evaluation.tools.images import Produced, decode_bgr, encode_png, open_rgb
from tests.tools.conftest import png


def noisy(width: int = 96, height: int = 64) -> np.ndarray:
    rng = np.random.default_rng(7)
    img = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    img[16:48, 24:72] = (30, 200, 90)
    return img


def args_for(tool_set: str, ref: tuple[int, str], extra: dict[str, Any]) -> dict[str, Any]:
    index, name = ref
    if tool_set == "agentic-mme":
        return {"image_index": index, **extra}
    if tool_set == "vtc":
        return {"image": name, "param": extra}
    return {"image": name, **extra}


SOURCES = [
    ("vtc", "opencv_colorspace_gray", {}),  # a one-channel result
    ("vtc", "opencv_rotate", {"angle": 30}),
    ("agentic-mme", "rotate", {"angle": 15}),
    ("agentic-mme", "threshold", {"value": 100}),
]
CONSUMERS = [
    ("vtc", "opencv_blur", {"method": "gaussian", "ksize": 5}),
    ("vtc", "opencv_contour_area", {}),
    ("agentic-mme", "crop", {"bbox_2d": [100, 100, 700, 900], "zoom_scale": 2}),
    ("agentic-mme", "enhance", {"contrast": 1.7}),
    ("gta", "DrawBox", {"bbox": "(5, 5, 40, 30)", "annotation": "x"}),
]


def context(first: bytes) -> ToolContext:
    return ToolContext(images=[first], files={"in.png": first})


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s[1])
@pytest.mark.parametrize("consumer", CONSUMERS, ids=lambda c: c[1])
def test_a_chain_through_produced_pixels_equals_the_chain_through_png_bytes(source: Any, consumer: Any) -> None:
    original = png(noisy())
    lazy = context(original)
    first = execute(source[0], source[1], args_for(source[0], (0, "in.png"), source[2]), lazy)
    assert first.ok, first.error
    held = lazy.images[-1]
    assert isinstance(held, Produced) and not held.encoded  # the call itself encoded nothing
    ref = (1, first.image_names[0])
    second = execute(consumer[0], consumer[1], args_for(consumer[0], ref, consumer[2]), lazy)
    assert second.ok, second.error

    # The same two steps as before produced images existed: the second reads the first one's PNG bytes.
    eager = context(original)
    eager.images.append(first.images[0])
    eager.files[first.image_names[0]] = first.images[0]
    again = execute(consumer[0], consumer[1], args_for(consumer[0], ref, consumer[2]), eager)
    assert again.ok, again.error
    assert second.images == again.images and second.text == again.text and second.data == again.data
    assert np.array_equal(decode_bgr(held), decode_bgr(first.images[0]))
    assert np.array_equal(np.asarray(open_rgb(held)), np.asarray(open_rgb(first.images[0])))


def test_bytes_are_encoded_once_and_equal_an_eager_encode() -> None:
    arr = noisy()
    produced = Produced(arr)
    assert not produced.encoded
    data = produced.png()
    assert produced.encoded and produced.png() is data and data == encode_png(arr)


def test_result_images_are_encoded_on_first_access_and_readers_cannot_change_the_pixels() -> None:
    ctx = context(png(noisy()))
    r = execute("agentic-mme", "flip", {"image_index": 0, "direction": "vertical"}, ctx)
    held = ctx.images[1]
    assert isinstance(held, Produced) and not held.encoded
    copy = decode_bgr(held)
    copy[:] = 0  # an op working in place on its input must not change the produced image
    first = r.images[0]
    assert held.encoded and r.images[0] is first and ctx.resolve_image(1) is first
    assert not np.array_equal(decode_bgr(first), copy)


def test_drawing_on_an_image_never_changes_an_earlier_one_shared_without_copying() -> None:
    """Pillow ops read their input uncopied; an enhance with no factor hands back that very image, and
    a drawing tool working on the result must still leave the original and the enhanced image alone."""
    original = png(noisy())
    ctx = context(original)
    same = execute("agentic-mme", "enhance", {"image_index": 0}, ctx)
    assert same.ok
    drawn = execute("gta", "DrawBox", {"image": same.image_names[0], "bbox": "(0, 0, 60, 40)"}, ctx)
    assert drawn.ok
    before = np.asarray(open_rgb(original))
    assert np.array_equal(np.asarray(open_rgb(ctx.images[0])), before)
    assert np.array_equal(np.asarray(open_rgb(same.images[0])), before)
    assert not np.array_equal(np.asarray(open_rgb(drawn.images[0])), before)


def test_opencv_ops_read_their_input_uncopied_and_one_that_writes_gets_a_copy(monkeypatch) -> None:
    """VTC ops get a read-only view of the decoded (or produced) input; an op that draws on its input
    anyway is run again on a copy, so neither the cached decode nor a produced image ever changes."""
    from evaluation.tools import cv_ops

    original = png(noisy())
    ctx = context(original)
    first = execute("vtc", "opencv_flip", {"image": "in.png", "param": {"direction": "horizontal"}}, ctx)
    calls: list[bool] = []

    def draws_in_place(img, param, ctx):  # type: ignore[no-untyped-def]
        calls.append(img.flags.writeable)
        img[:8, :8] = 0
        return img, "drew", {}

    monkeypatch.setitem(cv_ops._OPS, "flip", draws_in_place)
    for ref in ("in.png", first.image_names[0]):
        calls.clear()
        r = execute("vtc", "opencv_flip", {"image": ref, "param": {}}, ctx)
        assert r.ok, r.error
        assert calls == [False, True] and (decode_bgr(r.images[0])[:8, :8] == 0).all()
    assert np.array_equal(decode_bgr(ctx.images[0]), decode_bgr(original))
    assert np.array_equal(decode_bgr(ctx.images[1]), decode_bgr(first.images[0]))
    assert not (decode_bgr(first.images[0])[:8, :8] == 0).all()


def test_flat_results_are_small_on_the_wire_and_lossless() -> None:
    """A thresholded (two-colour) 480×270 result is a few kB: runs of equal bytes are coded as runs,
    not one Huffman code per byte (which could not go below 1 bit per byte, about 49 kB here)."""
    flat = np.full((270, 480, 3), 255, np.uint8)
    flat[100:200, 50:400] = (10, 120, 200)
    ctx = context(png(flat))
    r = execute("agentic-mme", "threshold", {"image_index": 0, "value": 128}, ctx)
    assert r.ok and len(r.images[0]) < 5_000
    want = np.where(np.asarray(open_rgb(png(flat)).convert("L")) > 128, 255, 0).astype(np.uint8)
    assert np.array_equal(np.asarray(open_rgb(r.images[0]))[:, :, 0], want)


def test_an_encoded_image_keeps_only_its_bytes_and_its_pixels_come_from_the_cache(monkeypatch) -> None:
    """Once its PNG exists a produced image holds just the bytes (a trajectory's images stay compact);
    its pixels went to the bounded decoded cache, so reading it again needs no decode."""
    from evaluation.tools import images

    ctx = context(png(noisy()))
    pil = execute("agentic-mme", "rotate", {"image_index": 0, "angle": 10}, ctx)
    cv = execute("vtc", "opencv_blur", {"image": "in.png", "param": {"method": "gaussian", "ksize": 5}}, ctx)
    pil_px, cv_px = np.asarray(open_rgb(ctx.images[1])), decode_bgr(ctx.images[2])
    assert pil.images and cv.images  # encoded now
    assert all(isinstance(i, Produced) and i.rgb() is None and i.bgr() is None for i in ctx.images[1:])

    def no_decoding(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("decoded again")

    monkeypatch.setattr(images.cv2, "imdecode", no_decoding)
    monkeypatch.setattr(images.Image, "open", no_decoding)
    assert np.array_equal(np.asarray(open_rgb(ctx.images[1])), pil_px)
    assert np.array_equal(decode_bgr(ctx.images[2]), cv_px)
