"""Median time of each image tool on a 1920×1080 image, next to the bare OpenCV/Pillow call it wraps.

Figures per tool, all as a run sees them (``execute`` with a context, the input already decoded
once, as it is from the second use of an image in a trajectory on):

* ``raw`` — the bare library calls that compute the tool's result from the decoded BGR/RGB input
  (a tool reading a colour image converts it to grey first, as the reference tools do; ``dft``
  returns the log-magnitude image, so its raw line computes that).
* ``tool`` — the call until it returns: argument checking, the op, bookkeeping. The result image is
  a ``Produced`` (pixels); a later tool reading it takes the pixels, no encode/decode in between.
* ``run`` — the call plus the PNG bytes of its result as a run waits for them: the harness starts
  the encode on the encode threads as the call returns and awaits the bytes before it stores the
  asset and sends the image to the model (atomic modes); the CLI and TUI pay it when they save or show it.
* ``png`` — the encode alone (``run`` − ``tool``), and its size.

Ratios are over the raw op. ``--cpu`` times process CPU (every thread) instead of wall time: on a
shared machine the CPU figures are the ones to compare. ``--only NAME…`` runs some tools.
Run: ``.venv/bin/python bench/bench_tools.py [--repeat N] [--cpu] [--only crop opencv_dft]``.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageEnhance, ImageFilter, ImageOps

from evaluation.harness.episode import encoded_images, start_encodes
from evaluation.tools import ToolContext, ToolSettings, execute
from evaluation.tools.images import encode_png


def make_image() -> np.ndarray:
    """A busy synthetic photo stand-in: gradients, shapes, text and noise (BGR)."""
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:1080, 0:1920]
    img = np.dstack([(x / 1920 * 255), (y / 1080 * 255), ((x + y) / 3000 * 255)]).astype(np.uint8)
    for k in range(12):
        cv2.circle(img, (150 + 140 * k, 300 + 40 * (k % 5)), 40 + 5 * k, (255, 255, 255), 3)
        cv2.rectangle(img, (100 + 150 * k, 700), (180 + 150 * k, 820), (20, 20, 20), -1)
    cv2.putText(img, "CHAINMARK BENCH 2026", (300, 1000), cv2.FONT_HERSHEY_SIMPLEX, 3, (0, 0, 0), 6)
    noise = rng.normal(0, 8, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


CLOCK: Callable[[], float] = time.perf_counter


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up (imports, first-call allocations)
    times = []
    for _ in range(repeat):
        t = CLOCK()
        fn()
        times.append(CLOCK() - t)
    return statistics.median(times) * 1000


def dft_magnitude(gray: np.ndarray) -> np.ndarray:
    """The centred log-magnitude spectrum as an 8-bit image (what VTC's dft tool returns)."""
    mag = 20 * np.log1p(np.abs(np.fft.fftshift(np.fft.fft2(gray))))
    return cv2.normalize(mag, np.empty_like(mag), 0, 255, cv2.NORM_MINMAX).astype(np.uint8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cpu", action="store_true", help="time process CPU (all threads), not wall")
    parser.add_argument("--only", nargs="+", metavar="TOOL", help="run only these tools")
    opts = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if opts.cpu else time.perf_counter

    bgr = make_image()
    png = cv2.imencode(".png", bgr)[1].tobytes()
    pil = Image.open(io.BytesIO(png)).convert("RGB")

    def gray() -> np.ndarray:  # the tools get the BGR image and convert it, as the reference tools do
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)

    mme: list[tuple[str, dict[str, Any], Callable[[], Any]]] = [
        (
            "crop",
            {"bbox_2d": [250, 250, 750, 750], "zoom_scale": 2},
            lambda: pil.crop((480, 270, 1440, 810)).resize((1920, 1080), Image.LANCZOS),
        ),
        ("rotate", {"angle": 30}, lambda: pil.rotate(30, expand=True)),
        ("flip", {"direction": "horizontal"}, lambda: pil.transpose(Image.Transpose.FLIP_LEFT_RIGHT)),
        ("resize", {"scale": 0.5}, lambda: pil.resize((960, 540), Image.LANCZOS)),
        ("enhance", {"contrast": 1.5}, lambda: ImageEnhance.Contrast(pil).enhance(1.5)),
        ("grayscale", {}, lambda: pil.convert("L").convert("RGB")),
        ("autocontrast", {}, lambda: ImageOps.autocontrast(pil)),
        ("blur", {"radius": 2}, lambda: pil.filter(ImageFilter.GaussianBlur(2))),
        ("sharpen", {}, lambda: pil.filter(ImageFilter.SHARPEN)),
        ("denoise", {"strength": 10}, lambda: cv2.fastNlMeansDenoisingColored(np.asarray(pil), None, 10, 10, 7, 21)),
        ("edge_detect", {"method": "canny"}, lambda: cv2.Canny(np.asarray(pil.convert("L")), 100, 200)),
        ("invert", {}, lambda: ImageOps.invert(pil)),
        ("equalize", {}, lambda: ImageOps.equalize(pil)),
        ("threshold", {"value": 128}, lambda: np.where(np.asarray(pil.convert("L")) > 128, 255, 0)),
    ]
    vtc: list[tuple[str, dict[str, Any], Callable[[], Any]]] = [
        ("opencv_colorspace_gray", {}, lambda: cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)),
        (
            "opencv_resize",
            {"width": 960, "height": 540},
            lambda: cv2.resize(bgr, (960, 540), interpolation=cv2.INTER_AREA),
        ),
        (
            "opencv_rotate",
            {"angle": 30},
            lambda: cv2.warpAffine(bgr, cv2.getRotationMatrix2D((960, 540), -30, 1), (2203, 1895)),
        ),
        ("opencv_flip", {"direction": "horizontal"}, lambda: cv2.flip(bgr, 1)),
        ("opencv_crop", {"x": 480, "y": 270, "width": 960, "height": 540}, lambda: bgr[270:810, 480:1440].copy()),
        ("opencv_blur", {"method": "gaussian", "ksize": 5}, lambda: cv2.GaussianBlur(bgr, (5, 5), 0)),
        (
            "opencv_threshold",
            {"mode": "otsu"},
            lambda: cv2.threshold(gray(), 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU),
        ),
        ("opencv_morphology", {"op": "open"}, lambda: cv2.morphologyEx(bgr, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))),
        ("opencv_canny", {}, lambda: cv2.Canny(gray(), 100, 200)),
        ("opencv_histogram", {"mode": "clahe"}, lambda: cv2.createCLAHE(2.0, (8, 8)).apply(gray())),
        (
            "opencv_contour_area",
            {},
            lambda: [
                cv2.contourArea(c)
                for c in cv2.findContours(cv2.Canny(gray(), 100, 200), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0]
            ],
        ),
        (
            "opencv_hough_lines",
            {},
            lambda: cv2.HoughLinesP(cv2.Canny(gray(), 80, 200), 1, np.pi / 180, 80, minLineLength=50, maxLineGap=10),
        ),
        (
            "opencv_hough_circles",
            {},
            lambda: cv2.HoughCircles(
                cv2.medianBlur(gray(), 5), cv2.HOUGH_GRADIENT, 1.2, 50, param1=100, param2=50, minRadius=10
            ),
        ),
        (
            "opencv_connected_components_with_stats",
            {},
            lambda: cv2.connectedComponentsWithStats(
                cv2.threshold(gray(), 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)[1]
            ),
        ),
        ("opencv_sharpen", {}, lambda: cv2.addWeighted(bgr, 2, cv2.GaussianBlur(bgr, (5, 5), 0), -1, 0)),
        ("opencv_dft", {}, lambda: dft_magnitude(gray())),
    ]

    clock = "CPU" if opts.cpu else "wall"
    print(f"1920x1080 input, median of {opts.repeat} runs ({clock} ms); load average {os.getloadavg()[0]:.2f}")
    print(
        f"{'set':12s} {'tool':40s} {'raw':>7s} {'tool':>7s} {'ratio':>6s} {'run':>7s} {'ratio':>6s}"
        f" {'png':>6s} {'MB':>5s}"
    )
    settings = ToolSettings.from_env()
    ratios: list[tuple[float, float]] = []
    for set_name, cases, arg in (("agentic-mme", mme, "image_index"), ("vtc", vtc, "image")):
        for name, extra, raw in cases:
            if opts.only and name not in opts.only:
                continue
            args = {"image_index": 0, **extra} if arg == "image_index" else {"image": "in.png", "param": extra}
            size = [0]

            def call(encode: bool) -> None:
                ctx = ToolContext(images=[png], files={"in.png": png}, settings=settings)  # a run reads settings once
                r = execute(set_name, name, args, ctx)
                assert r.ok, r.error
                if encode:  # as Episode.run_tool: encodes start as the call returns, the run waits for the bytes
                    start_encodes(r.produced)
                    size[0] = sum(len(b) for b in asyncio.run(encoded_images(r.produced)))

            raw_ms = median_ms(raw, opts.repeat)
            tool_ms = median_ms(lambda: call(False), opts.repeat)
            run_ms = median_ms(lambda: call(True), opts.repeat)
            ratios.append((tool_ms / raw_ms, run_ms / raw_ms))
            print(
                f"{set_name:12s} {name:40s} {raw_ms:7.1f} {tool_ms:7.1f} {tool_ms / raw_ms:6.2f}"
                f" {run_ms:7.1f} {run_ms / raw_ms:6.2f} {run_ms - tool_ms:6.1f} {size[0] / 1e6:5.2f}",
                flush=True,
            )
    if not ratios:
        return
    within = sum(1 for t, _ in ratios if t <= 1.5)
    print(
        f"\ntool ≤ 1.5× raw: {within}/{len(ratios)}; median ratio tool {statistics.median(t for t, _ in ratios):.2f},"
        f" run {statistics.median(f for _, f in ratios):.2f}"
    )
    decode = median_ms(lambda: Image.open(io.BytesIO(png)).convert("RGB"), opts.repeat)
    encode = median_ms(lambda: encode_png(bgr), opts.repeat)
    print(f"\nfor reference: PNG decode {decode:.1f} ms, PNG encode {encode:.1f} ms ({len(png) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
