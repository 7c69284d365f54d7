"""VTC-Bench's OpenCV tools: ``{"image": <path>, "param": {...}}`` → a new PNG plus measurements.

Every op returns the benchmark's reply shape: a message, ``INFO: {json}`` with the numbers (areas,
perimeters, lines, circles, components...), then ``Edited Image Path: <name>``; the name is
registered in the context's files so the next call can pass it back as its ``image``. Defaults are
the ones the tool descriptions promise. Inputs are decoded as 8-bit BGR, as ``cv2.imread`` does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from evaluation.tools.images import ImageData, Produced, decode_bgr
from evaluation.tools.result import ToolContext, ToolError, ToolOutput

Op = Callable[[np.ndarray, dict[str, Any], ToolContext], tuple[np.ndarray, str, dict[str, Any]]]
_OPS: dict[str, Op] = {}
MAX_PIXELS = 100_000_000


def _register(name: str) -> Callable[[Op], Op]:
    def wrap(fn: Op) -> Op:
        _OPS[name] = fn
        return fn

    return wrap


def run(op: str, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Decode the input, run one op, hand back the result (PNG-encoded when first needed); shared by every VTC tool."""
    param = args.get("param") or {}
    source = ctx.resolve_pixels(args["image"])
    try:  # most ops only read their input: hand them a read-only view, no copy
        out, message, info = _OPS[op](decode_bgr(source, copy=False), param, ctx)
    except ToolError:
        raise
    except Exception:  # a write into the read-only input (or a real failure, which happens again)
        out, message, info = _OPS[op](decode_bgr(source), param, ctx)
    extra_images = info.pop("_extra_images", [])
    name = f"opencv/{op}_{ctx.next_index}.png"
    names = [name] + [f"opencv/{op}_{ctx.next_index + 1 + k}.png" for k in range(len(extra_images))]
    text = f"{message} INFO: {json.dumps(info, ensure_ascii=False)}\n\nEdited Image Path: {name}"
    data = {"op": op, "info": info, "output_path": name, "size": [int(out.shape[1]), int(out.shape[0])]}
    images: list[ImageData] = [Produced(out), *(Produced(e) for e in extra_images)]
    return ToolOutput(text=text, data=data, images=images, image_names=names)


def __getattr__(name: str) -> Callable[[dict[str, Any], ToolContext], ToolOutput]:
    """``cv_ops.tool_<op>`` is the tool implementation of that op (the registry imports "cv_ops:tool_<op>")."""
    op = name.removeprefix("tool_")
    if name.startswith("tool_") and op in _OPS:
        return lambda args, ctx: run(op, args, ctx)
    raise AttributeError(name)


# ---------------------------------------------------------------------------------------------- helpers


def _gray(img: np.ndarray) -> np.ndarray:
    return img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)


def _bgr(img: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR) if img.ndim == 2 else img


def _int(
    p: dict[str, Any], key: str, default: int, lo: int | None = None, hi: int | None = None, odd: bool = False
) -> int:
    value = p.get(key, default)
    if value is None:
        value = default
    try:
        value = int(value)
    except (TypeError, ValueError) as exc:
        raise ToolError(f"param.{key} must be an integer, got {value!r}") from exc
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ToolError(f"param.{key} must be between {lo} and {hi}, got {value}")
    if odd and value % 2 == 0:
        raise ToolError(f"param.{key} must be odd, got {value}")
    return value


def _float(p: dict[str, Any], key: str, default: float, lo: float | None = None, hi: float | None = None) -> float:
    value = p.get(key, default)
    value = default if value is None else float(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ToolError(f"param.{key} must be between {lo} and {hi}, got {value}")
    return value


def _choice(p: dict[str, Any], key: str, default: str, options: tuple[str, ...]) -> str:
    value = str(p.get(key) or default).strip().lower()
    if value not in options:
        raise ToolError(f"param.{key} must be one of {', '.join(options)}, got {p.get(key)!r}")
    return value


def _color(p: dict[str, Any], key: str, default: tuple[int, int, int]) -> tuple[int, int, int]:
    value = p.get(key) or default
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ToolError(f"param.{key} must be a [B, G, R] list, got {value!r}")
    return (int(value[0]), int(value[1]), int(value[2]))


def _channels(p: dict[str, Any]) -> list[int]:
    chans = p.get("channels") or [0, 1, 2]
    if any(c not in (0, 1, 2) for c in chans):
        raise ToolError(f"param.channels must be indices among 0, 1, 2, got {chans!r}")
    return list(dict.fromkeys(int(c) for c in chans))


def _need(p: dict[str, Any], *keys: str) -> None:
    missing = [k for k in keys if p.get(k) is None]
    if missing:
        raise ToolError(f"param is missing {', '.join(missing)}")


# ---------------------------------------------------------------------------------------------- geometry


@_register("colorspace_gray")
def colorspace_gray(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    return _gray(img), "Converted the image to grayscale.", {"colorspace": "gray"}


@_register("colorspace_hsv")
def colorspace_hsv(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    return (
        cv2.cvtColor(_bgr(img), cv2.COLOR_BGR2HSV),
        "Converted the image to HSV (channels H, S, V).",
        {"colorspace": "hsv"},
    )


@_register("colorspace_lab")
def colorspace_lab(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    return (
        cv2.cvtColor(_bgr(img), cv2.COLOR_BGR2LAB),
        "Converted the image to LAB (channels L, a, b).",
        {"colorspace": "lab"},
    )


@_register("resize")
def resize(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    h, w = img.shape[:2]
    preset = str(p.get("preset") or "").lower()
    if p.get("width") is not None and p.get("height") is not None:
        nw, nh = _int(p, "width", w, 1, 100_000), _int(p, "height", h, 1, 100_000)
    elif preset in ("half", "double"):
        f = 0.5 if preset == "half" else 2.0
        nw, nh = max(1, int(w * f)), max(1, int(h * f))
    else:
        raise ToolError("param needs width and height, or preset 'half' or 'double'")
    if nw * nh > MAX_PIXELS:
        raise ToolError(f"target size {nw}x{nh} is larger than {MAX_PIXELS} pixels")
    interp = cv2.INTER_AREA if nw * nh < w * h else cv2.INTER_CUBIC
    out = cv2.resize(img, (nw, nh), interpolation=interp)
    return out, f"Resized the image from {w}x{h} to {nw}x{nh}.", {"original_size": [w, h], "new_size": [nw, nh]}


@_register("rotate")
def rotate(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    angle = _float(p, "angle", 90.0)
    h, w = img.shape[:2]
    quarter = {90: cv2.ROTATE_90_CLOCKWISE, 180: cv2.ROTATE_180, 270: cv2.ROTATE_90_COUNTERCLOCKWISE}
    norm = angle % 360
    if norm == 0:
        out = img.copy()
    elif norm in quarter:
        out = cv2.rotate(img, quarter[int(norm)])  # exact pixels for right angles
    else:
        m = cv2.getRotationMatrix2D((w / 2, h / 2), -angle, 1.0)  # OpenCV angles are counter-clockwise
        cos, sin = abs(m[0, 0]), abs(m[0, 1])
        nw, nh = int(math.ceil(h * sin + w * cos)), int(math.ceil(h * cos + w * sin))
        m[0, 2] += nw / 2 - w / 2
        m[1, 2] += nh / 2 - h / 2
        out = cv2.warpAffine(img, m, (nw, nh), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
    return (
        out,
        f"Rotated the image {angle:g} degrees clockwise.",
        {"angle": angle, "center": [w / 2, h / 2], "original_size": [w, h], "new_size": [out.shape[1], out.shape[0]]},
    )


@_register("translate")
def translate(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    direction = _choice(p, "direction", "right", ("left", "right", "up", "down"))
    dist = _int(p, "distance", 32, 0, 100_000)
    dx, dy = {"left": (-dist, 0), "right": (dist, 0), "up": (0, -dist), "down": (0, dist)}[direction]
    h, w = img.shape[:2]
    out = cv2.warpAffine(img, np.float32([[1, 0, dx], [0, 1, dy]]), (w, h), borderValue=(0, 0, 0))
    return (
        out,
        f"Translated the image {dist} px {direction}.",
        {"direction": direction, "distance": dist, "vector": [dx, dy]},
    )


@_register("flip")
def flip(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    direction = _choice(p, "direction", "horizontal", ("horizontal", "vertical"))
    out = cv2.flip(img, 1 if direction == "horizontal" else 0)
    return out, f"Flipped the image {direction}ly.", {"direction": direction}


@_register("crop")
def crop(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    out, box = _crop_box(img, p)
    return (
        out,
        f"Cropped the region x={box[0]}, y={box[1]}, {box[2]}x{box[3]}.",
        {"crop_box": box, "original_size": [img.shape[1], img.shape[0]]},
    )


def _crop_box(img: np.ndarray, p: dict[str, Any]) -> tuple[np.ndarray, list[int]]:
    _need(p, "x", "y", "width", "height")
    h, w = img.shape[:2]
    x, y = _int(p, "x", 0, 0), _int(p, "y", 0, 0)
    cw, ch = _int(p, "width", 1, 1), _int(p, "height", 1, 1)
    x2, y2 = min(w, x + cw), min(h, y + ch)
    if x >= w or y >= h or x2 <= x or y2 <= y:
        raise ToolError(f"crop region x={x}, y={y}, {cw}x{ch} lies outside the {w}x{h} image")
    # A view, not a copy: inputs are read-only (see ``run``) and produced pixels are never written.
    return img[y:y2, x:x2], [x, y, x2 - x, y2 - y]


@_register("zoom_in")
def zoom_in(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    region, box = _crop_box(img, p)
    if p.get("target_width") or p.get("target_height"):
        tw = _int(p, "target_width", 0, 1) if p.get("target_width") else None
        th = _int(p, "target_height", 0, 1) if p.get("target_height") else None
        tw = tw or round(box[2] * th / box[3])  # type: ignore[operator]
        th = th or round(box[3] * tw / box[2])
    else:
        scale = _float(p, "scale", 2.0, 0.0, 10.0)
        if scale <= 0:
            raise ToolError("param.scale must be greater than 0")
        tw, th = max(1, round(box[2] * scale)), max(1, round(box[3] * scale))
    if tw * th > MAX_PIXELS:
        raise ToolError(f"zoomed size {tw}x{th} is larger than {MAX_PIXELS} pixels")
    out = cv2.resize(region, (tw, th), interpolation=cv2.INTER_CUBIC)
    return (
        out,
        f"Zoomed into x={box[0]}, y={box[1]}, {box[2]}x{box[3]} and resized it to {tw}x{th}.",
        {"crop_box": box, "new_size": [tw, th]},
    )


@_register("pyramid")
def pyramid(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    mode = _choice(p, "mode", "pyr_down", ("pyr_up", "pyr_down"))
    out = cv2.pyrUp(img) if mode == "pyr_up" else cv2.pyrDown(img)
    return (
        out,
        f"Applied {mode}.",
        {"mode": mode, "original_size": [img.shape[1], img.shape[0]], "new_size": [out.shape[1], out.shape[0]]},
    )


# ---------------------------------------------------------------------------------------------- enhancement


@_register("blur")
def blur(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    method = _choice(p, "method", "gaussian", ("average", "avg", "gaussian", "median", "bilateral"))
    if method == "bilateral":
        d = _int(p, "d", 9, 1, 50)
        sc, ss = _float(p, "sigma_color", 75, 1, 200), _float(p, "sigma_space", 75, 1, 200)
        return (
            cv2.bilateralFilter(img, d, sc, ss),
            "Applied a bilateral filter.",
            {"method": method, "d": d, "sigma_color": sc, "sigma_space": ss},
        )
    k = _int(p, "ksize", 5, 3, 51, odd=True)
    if method in ("average", "avg"):
        out = cv2.blur(img, (k, k))
    elif method == "median":
        out = cv2.medianBlur(img, k)
    else:
        sx, sy = _float(p, "sigma_x", 0, 0, 10), _float(p, "sigma_y", 0, 0, 10)
        out = cv2.GaussianBlur(img, (k, k), sx, sigmaY=sy)
    return out, f"Applied {method} blur with kernel {k}.", {"method": method, "ksize": k}


@_register("threshold")
def threshold(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    mode = _choice(p, "mode", "otsu", ("binary", "otsu", "adaptive_mean", "adaptive_gaussian"))
    invert = bool(p.get("invert", False))
    color_mode = _choice(p, "color_mode", "grayscale", ("grayscale", "bgr"))
    value = _int(p, "threshold_value", 127, 0, 255)
    block = _int(p, "adaptive_block_size", 11, 3, 101, odd=True)
    c = _int(p, "adaptive_constant", 2)
    kind = cv2.THRESH_BINARY_INV if invert else cv2.THRESH_BINARY
    used: list[float] = []

    def one(ch: np.ndarray) -> np.ndarray:
        if mode == "binary":
            t, out = cv2.threshold(ch, value, 255, kind)
        elif mode == "otsu":
            t, out = cv2.threshold(ch, 0, 255, kind | cv2.THRESH_OTSU)
        else:
            method = cv2.ADAPTIVE_THRESH_MEAN_C if mode == "adaptive_mean" else cv2.ADAPTIVE_THRESH_GAUSSIAN_C
            return cv2.adaptiveThreshold(ch, 255, method, kind, block, c)
        used.append(float(t))
        return out

    if color_mode == "grayscale":
        out = one(_gray(img))
    else:
        out = _bgr(img).copy()
        for k in _channels(p):
            out[:, :, k] = one(out[:, :, k])
    info: dict[str, Any] = {"mode": mode, "invert": invert, "color_mode": color_mode}
    if used:
        info["threshold_used"] = used[0] if len(used) == 1 else used
    white = int(np.count_nonzero(out)) if out.ndim == 2 else None
    if white is not None:
        info["white_pixels"] = white
    return out, f"Applied {mode} thresholding.", info


@_register("morphology")
def morphology(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    op = _choice(p, "op", "open", ("erode", "dilate", "open", "close"))
    k = _int(p, "kernel_size", 3, 3, 21, odd=True)
    it = _int(p, "iterations", 1, 1, 10)
    shape = _choice(p, "kernel_shape", "rect", ("rect", "ellipse"))
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT if shape == "rect" else cv2.MORPH_ELLIPSE, (k, k))
    if op == "erode":
        out = cv2.erode(img, kernel, iterations=it)
    elif op == "dilate":
        out = cv2.dilate(img, kernel, iterations=it)
    else:
        out = cv2.morphologyEx(img, cv2.MORPH_OPEN if op == "open" else cv2.MORPH_CLOSE, kernel, iterations=it)
    return out, f"Applied morphological {op}.", {"op": op, "kernel_size": k, "iterations": it, "kernel_shape": shape}


@_register("histogram")
def histogram(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    mode = _choice(p, "mode", "equalize", ("equalize", "clahe"))
    color_mode = _choice(p, "color_mode", "grayscale", ("grayscale", "bgr", "hsv"))
    clip = _float(p, "clip_limit", 2.0, 0.0, 100.0)
    tile = p.get("tile_grid_size") or [8, 8]
    if len(tile) != 2 or min(tile) < 1:
        raise ToolError(f"param.tile_grid_size must be [width, height] of positive integers, got {tile!r}")
    clahe = cv2.createCLAHE(clipLimit=clip, tileGridSize=(int(tile[0]), int(tile[1]))) if mode == "clahe" else None

    def one(ch: np.ndarray) -> np.ndarray:
        return clahe.apply(ch) if clahe is not None else cv2.equalizeHist(ch)

    if color_mode == "grayscale":
        out = one(_gray(img))
    elif color_mode == "bgr":
        out = _bgr(img).copy()
        for k in _channels(p):
            out[:, :, k] = one(out[:, :, k])
    else:
        hsv = cv2.cvtColor(_bgr(img), cv2.COLOR_BGR2HSV)
        for k in (p.get("channels") and _channels(p)) or [2]:
            hsv[:, :, k] = one(hsv[:, :, k])
        out = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    return out, f"Applied histogram {mode} ({color_mode}).", {"mode": mode, "color_mode": color_mode}


@_register("denoise")
def denoise(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    mode = _choice(p, "mode", "fast_means_color", ("fast_means_gray", "fast_means_color", "fast_means_bgr_channel"))
    h, hc = _float(p, "h", 10, 1, 50), _float(p, "h_color", 10, 1, 50)
    tw = _int(p, "template_window", 7, 3, 21, odd=True)
    sw = _int(p, "search_window", 21, 3, 31, odd=True)
    if mode == "fast_means_gray":
        out = cv2.fastNlMeansDenoising(_gray(img), None, h, tw, sw)
    elif mode == "fast_means_color":
        out = cv2.fastNlMeansDenoisingColored(_bgr(img), None, h, hc, tw, sw)
    else:
        out = _bgr(img).copy()
        for k in _channels(p):
            out[:, :, k] = cv2.fastNlMeansDenoising(np.ascontiguousarray(out[:, :, k]), None, h, tw, sw)
    return (
        out,
        f"Applied non-local means denoising ({mode}).",
        {"mode": mode, "h": h, "template_window": tw, "search_window": sw},
    )


@_register("inpaint")
def inpaint(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    preset = _choice(p, "preset", "canny", ("canny", "threshold"))
    gray = _gray(img)
    if preset == "canny":
        mask = cv2.Canny(gray, _int(p, "canny_low", 100, 0, 255), _int(p, "canny_high", 200, 0, 255))
    else:
        _, mask = cv2.threshold(gray, _int(p, "threshold_value", 127, 0, 255), 255, cv2.THRESH_BINARY)
    radius = _int(p, "radius", 3, 1, 10)
    method = _choice(p, "method", "telea", ("telea", "ns"))
    out = cv2.inpaint(_bgr(img), mask, radius, cv2.INPAINT_TELEA if method == "telea" else cv2.INPAINT_NS)
    return (
        out,
        f"Inpainted {int(np.count_nonzero(mask))} masked pixels ({preset} mask, {method}).",
        {"preset": preset, "masked_pixels": int(np.count_nonzero(mask)), "radius": radius, "method": method},
    )


@_register("inrange_color")
def inrange_color(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    _need(p, "lower", "upper")
    space = _choice(p, "colorspace", "hsv", ("hsv", "bgr"))
    fmt = _choice(p, "output_format", "both", ("mask", "masked_image", "both"))
    lower, upper = p["lower"], p["upper"]
    if len(lower) != 3 or len(upper) != 3:
        raise ToolError("param.lower and param.upper must have 3 values each")
    src = cv2.cvtColor(_bgr(img), cv2.COLOR_BGR2HSV) if space == "hsv" else _bgr(img)
    mask = cv2.inRange(src, np.array(lower, dtype=np.float64), np.array(upper, dtype=np.float64))
    count = int(np.count_nonzero(mask))
    masked = cv2.bitwise_and(_bgr(img), _bgr(img), mask=mask)
    info: dict[str, Any] = {
        "colorspace": space,
        "lower": lower,
        "upper": upper,
        "matched_pixels": count,
        "matched_fraction": round(count / mask.size, 6),
        "output_format": fmt,
    }
    if fmt == "both":
        info["_extra_images"] = [mask]
        return masked, "Created the color mask; the first image is the masked image, the second the mask.", info
    return (mask if fmt == "mask" else masked), "Created the color mask.", info


@_register("floodfill")
def floodfill(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    _need(p, "x", "y")
    out = _bgr(img).copy()
    h, w = out.shape[:2]
    x, y = _int(p, "x", 0, 0, w - 1), _int(p, "y", 0, 0, h - 1)
    lo, up = _color(p, "loDiff", (10, 10, 10)), _color(p, "upDiff", (10, 10, 10))
    new = _color(p, "newVal", (0, 255, 0))
    flags = _int(p, "flags", 4 | cv2.FLOODFILL_FIXED_RANGE)
    mask = np.zeros((h + 2, w + 2), np.uint8)
    area, _, _, rect = cv2.floodFill(out, mask, (x, y), new, lo, up, flags)
    return (
        out,
        f"Flood-filled {area} pixels from ({x}, {y}).",
        {"seed": [x, y], "filled_area": int(area), "bbox": [int(v) for v in rect]},
    )


@_register("convertscaleabs")
def convertscaleabs(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    alpha, beta = _float(p, "alpha", 1.0), _float(p, "beta", 0.0)
    out = cv2.convertScaleAbs(img, alpha=alpha, beta=beta)
    return (
        out,
        f"Applied |alpha*x + beta| with alpha={alpha:g}, beta={beta:g}.",
        {
            "alpha": alpha,
            "beta": beta,
            "mean_before": round(float(img.mean()), 3),
            "mean_after": round(float(out.mean()), 3),
        },
    )


@_register("sharpen")
def sharpen(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    amount = _float(p, "amount", 1.0, 0.0, 5.0)
    k = _int(p, "ksize", 5, 3, 31, odd=True)
    sigma = _float(p, "sigma", 0.0, 0.0)
    blurred = cv2.GaussianBlur(img, (k, k), sigma)
    out = cv2.addWeighted(img, 1.0 + amount, blurred, -amount, 0)
    return out, f"Sharpened the image (unsharp mask, amount {amount:g}).", {"amount": amount, "ksize": k}


# ---------------------------------------------------------------------------------------------- features


@_register("gradients")
def gradients(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    mode = _choice(p, "mode", "sobel_x", ("sobel_x", "sobel_y", "laplacian"))
    gray = _gray(img)
    if mode == "laplacian":
        g = cv2.Laplacian(gray, cv2.CV_64F)
    else:
        g = cv2.Sobel(gray, cv2.CV_64F, 1 if mode == "sobel_x" else 0, 0 if mode == "sobel_x" else 1, ksize=3)
    return (
        cv2.convertScaleAbs(g),
        f"Computed {mode} gradients.",
        {"mode": mode, "max_abs": round(float(np.abs(g).max()), 3), "mean_abs": round(float(np.abs(g).mean()), 3)},
    )


_CANNY_PRESETS = {"low": (50, 100), "medium": (100, 200), "high": (150, 250)}


@_register("canny")
def canny(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    preset = _choice(p, "preset", "medium", tuple(_CANNY_PRESETS))
    lo, hi = _CANNY_PRESETS[preset]
    lo, hi = _int(p, "threshold_low", lo, 0, 255), _int(p, "threshold_high", hi, 0, 255)
    color_mode = _choice(p, "color_mode", "grayscale", ("grayscale", "bgr"))
    if color_mode == "grayscale":
        out = cv2.Canny(_gray(img), lo, hi)
    else:
        src = _bgr(img)
        out = np.zeros_like(src)
        for k in _channels(p):
            out[:, :, k] = cv2.Canny(np.ascontiguousarray(src[:, :, k]), lo, hi)
    return (
        out,
        f"Detected edges with Canny ({lo}, {hi}).",
        {
            "threshold_low": lo,
            "threshold_high": hi,
            "color_mode": color_mode,
            "edge_pixels": int(np.count_nonzero(out)),
        },
    )


@_register("dft")
def dft(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    # |fftshift(X)| is fftshift(|X|): shift the real magnitudes (half the bytes), then log in place;
    # the same values, operation for operation, as 20 * log1p(abs(fftshift(fft2(gray)))).
    mag = np.abs(np.fft.fft2(_gray(img).astype(np.float64)))
    np.log1p(mag, out=mag)
    mag *= 20
    mag = np.fft.fftshift(mag)
    out = cv2.normalize(mag, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    return (
        out,
        "Computed the DFT magnitude spectrum (log scale, centred).",
        {"max_log_magnitude": round(float(mag.max()), 3)},
    )


@_register("template_match")
def template_match(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    _need(p, "template_path")
    tpl = decode_bgr(ctx.resolve_pixels(p["template_path"], "param.template_path"))
    method = _choice(p, "method", "ccoeff", ("sqdiff", "ccorr", "ccoeff"))
    src = _bgr(img)
    if tpl.shape[0] > src.shape[0] or tpl.shape[1] > src.shape[1]:
        raise ToolError("the template is larger than the image")
    code = {"sqdiff": cv2.TM_SQDIFF_NORMED, "ccorr": cv2.TM_CCORR_NORMED, "ccoeff": cv2.TM_CCOEFF_NORMED}[method]
    res = cv2.matchTemplate(src, tpl, code)
    min_v, max_v, min_loc, max_loc = cv2.minMaxLoc(res)
    loc, score = (min_loc, min_v) if method == "sqdiff" else (max_loc, max_v)
    th, tw = tpl.shape[:2]
    out = src.copy()
    cv2.rectangle(out, loc, (loc[0] + tw, loc[1] + th), (0, 0, 255), 2)
    return (
        out,
        f"Best template match at {loc} (score {score:.4f}).",
        {"method": method, "score": round(float(score), 6), "bbox": [int(loc[0]), int(loc[1]), int(tw), int(th)]},
    )


@_register("hough_lines")
def hough_lines(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    edges = cv2.Canny(_gray(img), _int(p, "canny_low", 80, 0, 255), _int(p, "canny_high", 200, 0, 255))
    found = cv2.HoughLinesP(
        edges,
        1,
        np.pi / 180,
        _int(p, "threshold", 80, 1),
        minLineLength=_int(p, "minLineLength", 50, 0),
        maxLineGap=_int(p, "maxLineGap", 10, 0),
    )
    lines = [] if found is None else [[int(v) for v in ln] for ln in np.asarray(found).reshape(-1, 4)]
    lines.sort(key=lambda ln: -math.hypot(ln[2] - ln[0], ln[3] - ln[1]))
    lines = lines[: _int(p, "max_lines", 20, 1)]
    out = _bgr(img).copy()
    for x1, y1, x2, y2 in lines:
        cv2.line(out, (x1, y1), (x2, y2), (0, 0, 255), 2)
    info = {
        "count": len(lines),
        "lines": [
            {"x1": a, "y1": b, "x2": c, "y2": d, "length": round(math.hypot(c - a, d - b), 2)} for a, b, c, d in lines
        ],
    }
    return out, f"Detected {len(lines)} line segments with the probabilistic Hough transform.", info


@_register("hough_circles")
def hough_circles(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    gray = cv2.medianBlur(_gray(img), 5)
    found = cv2.HoughCircles(
        gray,
        cv2.HOUGH_GRADIENT,
        _float(p, "dp", 1.2, 0.1),
        _float(p, "minDist", 50, 1),
        param1=_float(p, "param1", 100, 1),
        param2=_float(p, "param2", 50, 1),
        minRadius=_int(p, "minRadius", 10, 0),
        maxRadius=_int(p, "maxRadius", 0, 0),
    )
    circles = [] if found is None else [[float(v) for v in c] for c in np.asarray(found).reshape(-1, 3)]
    circles = circles[: _int(p, "max_circles", 20, 1)]
    out = _bgr(img).copy()
    for x, y, r in circles:
        cv2.circle(out, (round(x), round(y)), round(r), (0, 255, 0), 2)
        cv2.circle(out, (round(x), round(y)), 2, (0, 0, 255), 3)
    info = {
        "count": len(circles),
        "circles": [{"x": round(x, 2), "y": round(y, 2), "radius": round(r, 2)} for x, y, r in circles],
    }
    return out, f"Detected {len(circles)} circles with the Hough gradient method.", info


@_register("features")
def features(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    method = _choice(p, "method", "orb", ("harris", "shi_tomasi", "sift", "surf", "fast", "brief", "orb"))
    limit = _int(p, "max_points", 100, 1, 100_000)
    gray = _gray(img)
    if method in ("surf", "brief"):
        raise ToolError(
            f"{method} needs OpenCV's non-free contrib modules, which this build does not have; "
            "use sift, orb, fast, harris or shi_tomasi"
        )
    if method in ("harris", "shi_tomasi"):
        pts = cv2.goodFeaturesToTrack(gray, limit, 0.01, 10, useHarrisDetector=(method == "harris"))
        points = [] if pts is None else [[float(x), float(y)] for x, y in pts.reshape(-1, 2)]
    else:
        detector = {
            "sift": lambda: cv2.SIFT_create(nfeatures=limit),
            "fast": cv2.FastFeatureDetector_create,
            "orb": lambda: cv2.ORB_create(nfeatures=limit),
        }[method]()
        kps = sorted(detector.detect(gray, None), key=lambda k: -k.response)[:limit]
        points = [[float(k.pt[0]), float(k.pt[1])] for k in kps]
    out = _bgr(img).copy()
    for x, y in points:
        cv2.circle(out, (round(x), round(y)), 3, (0, 255, 0), 1)
    return (
        out,
        f"Detected {len(points)} {method} keypoints.",
        {"method": method, "count": len(points), "keypoints": [[round(x, 2), round(y, 2)] for x, y in points]},
    )


@_register("watershed")
def watershed(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    src = _bgr(img).copy()
    _, binary = cv2.threshold(_gray(img), 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    kernel = np.ones((3, 3), np.uint8)
    opening = cv2.morphologyEx(binary, cv2.MORPH_OPEN, kernel, iterations=2)
    sure_bg = cv2.dilate(opening, kernel, iterations=3)
    dist = cv2.distanceTransform(opening, cv2.DIST_L2, 5)
    _, sure_fg = cv2.threshold(dist, 0.5 * dist.max() if dist.max() > 0 else 1, 255, 0)
    sure_fg = sure_fg.astype(np.uint8)
    unknown = cv2.subtract(sure_bg, sure_fg)
    _, markers = cv2.connectedComponents(sure_fg)
    markers = markers + 1
    markers[unknown == 255] = 0
    markers = cv2.watershed(src, markers)
    src[markers == -1] = (0, 0, 255)
    labels, counts = np.unique(markers[markers > 1], return_counts=True)
    order = np.argsort(-counts)[: _int(p, "max_regions", 20, 1)]
    regions = [{"label": int(labels[k]), "area": int(counts[k])} for k in order]
    return src, f"Watershed found {len(labels)} regions.", {"region_count": int(len(labels)), "regions": regions}


_GRABCUT_MARGIN = {"tight": 0.05, "center": 0.15, "loose": 0.25}


@_register("grabcut")
def grabcut(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    preset = _choice(p, "preset", "center", tuple(_GRABCUT_MARGIN))
    src = _bgr(img)
    h, w = src.shape[:2]
    m = _GRABCUT_MARGIN[preset]
    rect = (int(w * m), int(h * m), max(1, int(w * (1 - 2 * m))), max(1, int(h * (1 - 2 * m))))
    mask = np.zeros((h, w), np.uint8)
    cv2.grabCut(src, mask, rect, np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64), 5, cv2.GC_INIT_WITH_RECT)
    fg = np.where((mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD), 255, 0).astype(np.uint8)
    out = cv2.bitwise_and(src, src, mask=fg)
    count = int(np.count_nonzero(fg))
    return (
        out,
        f"GrabCut kept {count} foreground pixels.",
        {
            "preset": preset,
            "rect": list(rect),
            "foreground_pixels": count,
            "foreground_fraction": round(count / fg.size, 6),
        },
    )


@_register("connected_components_with_stats")
def connected_components_with_stats(
    img: np.ndarray, p: dict[str, Any], ctx: ToolContext
) -> tuple[np.ndarray, str, dict[str, Any]]:
    mode = _choice(p, "threshold_mode", "otsu", ("otsu", "binary", "none"))
    gray = _gray(img)
    if mode == "otsu":
        _, binary = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    elif mode == "binary":
        _, binary = cv2.threshold(gray, _int(p, "threshold_value", 127, 0, 255), 255, cv2.THRESH_BINARY)
    else:
        binary = gray
    conn = _int(p, "connectivity", 8)
    if conn not in (4, 8):
        raise ToolError(f"param.connectivity must be 4 or 8, got {conn}")
    n, labels, stats, centroids = cv2.connectedComponentsWithStats(binary, connectivity=conn)
    # Largest first, ties in label order (a stable sort of the areas, as sorted() gave).
    areas = stats[1:, cv2.CC_STAT_AREA]
    top = np.argsort(-areas.astype(np.int64), kind="stable")[: _int(p, "max_components", 20, 1)] + 1
    order = [int(k) for k in top]
    comps = [
        {
            "label": k,
            "area": int(stats[k, cv2.CC_STAT_AREA]),
            "bbox": [int(stats[k, 0]), int(stats[k, 1]), int(stats[k, 2]), int(stats[k, 3])],
            "centroid": [round(float(centroids[k, 0]), 2), round(float(centroids[k, 1]), 2)],
        }
        for k in order
    ]
    rng = np.random.default_rng(0)
    palette = rng.integers(64, 256, size=(max(n, 1), 3), dtype=np.uint8)
    palette[0] = 0
    out = _colour_labels(palette, labels)
    return out, f"Found {n - 1} connected components.", {"num_components": int(n - 1), "components": comps}


def _colour_labels(palette: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``palette[labels]`` (an H×W×3 image), without fancy indexing's per-element cost: each colour
    packed into one 32-bit word, gathered with ``take``, then unpacked by OpenCV."""
    packed = np.zeros((len(palette), 4), np.uint8)
    packed[:, :3] = palette
    flat = np.take(packed.view(np.uint32).ravel(), labels)
    return cv2.cvtColor(flat.view(np.uint8).reshape(*labels.shape, 4), cv2.COLOR_BGRA2BGR)


# ---------------------------------------------------------------------------------------------- contours & drawing


def _contours(img: np.ndarray, p: dict[str, Any]) -> list[np.ndarray]:
    mode = _choice(p, "mode", "external", ("external", "list"))
    edges = cv2.Canny(_gray(img), _int(p, "canny_low", 100, 0, 255), _int(p, "canny_high", 200, 0, 255))
    found, _ = cv2.findContours(
        edges, cv2.RETR_EXTERNAL if mode == "external" else cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE
    )
    ranked = sorted(found, key=lambda c: -cv2.contourArea(c))
    if p.get("rank") is not None:
        rank = _int(p, "rank", 1, 1)
        if rank > len(ranked):
            raise ToolError(f"param.rank {rank} is larger than the number of contours found ({len(ranked)})")
        return [ranked[rank - 1]]
    return ranked[: _int(p, "max_contours", 20, 1)]


def _describe(c: np.ndarray, rank: int) -> dict[str, Any]:
    x, y, w, h = cv2.boundingRect(c)
    return {
        "rank": rank,
        "area": round(float(cv2.contourArea(c)), 2),
        "perimeter": round(float(cv2.arcLength(c, True)), 2),
        "bbox": [x, y, w, h],
    }


def _label(out: np.ndarray, c: np.ndarray, text: str, color: tuple[int, int, int]) -> None:
    x, y, _, _ = cv2.boundingRect(c)
    cv2.putText(out, text, (x, max(12, y - 4)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, color, 1, cv2.LINE_AA)


@_register("contours")
def contours(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    found = _contours(img, p)
    out = _bgr(img).copy()
    cv2.drawContours(out, found, -1, (0, 255, 0), 2)
    return (
        out,
        f"Found {len(found)} contours from Canny edges.",
        {"count": len(found), "contours": [_describe(c, k + 1) for k, c in enumerate(found)]},
    )


@_register("draw_contours")
def draw_contours(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    found = _contours(img, p)
    out = _bgr(img).copy()
    cv2.drawContours(out, found, -1, _color(p, "color", (0, 255, 0)), _int(p, "thickness", 2))
    return out, f"Drew {len(found)} contours.", {"count": len(found)}


@_register("contour_area")
def contour_area(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    found = _contours(img, p)
    color = _color(p, "color", (0, 255, 0))
    out = _bgr(img).copy()
    cv2.drawContours(out, found, -1, color, _int(p, "thickness", 2))
    areas = [round(float(cv2.contourArea(c)), 2) for c in found]
    for c, a in zip(found, areas):
        _label(out, c, f"{a:g}", color)
    return (
        out,
        "Calculated contour areas with cv2.contourArea.",
        {"count": len(found), "areas": areas, "contours": [_describe(c, k + 1) for k, c in enumerate(found)]},
    )


@_register("arc_length")
def arc_length(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    found = _contours(img, p)
    color = _color(p, "color", (0, 255, 0))
    out = _bgr(img).copy()
    cv2.drawContours(out, found, -1, color, _int(p, "thickness", 2))
    perims = [round(float(cv2.arcLength(c, True)), 2) for c in found]
    for c, v in zip(found, perims):
        _label(out, c, f"{v:g}", color)
    return (
        out,
        "Calculated contour perimeters with cv2.arcLength.",
        {"count": len(found), "perimeters": perims, "contours": [_describe(c, k + 1) for k, c in enumerate(found)]},
    )


@_register("approx_poly")
def approx_poly(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    found = _contours(img, p)
    eps = _float(p, "epsilon_ratio", 0.02, 0.0, 1.0)
    color = _color(p, "color", (0, 255, 0))
    out = _bgr(img).copy()
    polys = [cv2.approxPolyDP(c, eps * cv2.arcLength(c, True), True) for c in found]
    cv2.drawContours(out, polys, -1, color, _int(p, "thickness", 2))
    for poly in polys:
        _label(out, poly, str(len(poly)), color)
    return (
        out,
        "Approximated contours with cv2.approxPolyDP.",
        {
            "count": len(polys),
            "epsilon_ratio": eps,
            "polygons": [
                {
                    "rank": k + 1,
                    "vertices": len(poly),
                    "points": poly.reshape(-1, 2).tolist(),
                    "area": round(float(cv2.contourArea(poly)), 2),
                }
                for k, poly in enumerate(polys)
            ],
        },
    )


@_register("draw_line")
def draw_line(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    _need(p, "x1", "y1", "x2", "y2")
    a, b = (_int(p, "x1", 0), _int(p, "y1", 0)), (_int(p, "x2", 0), _int(p, "y2", 0))
    out = _bgr(img).copy()
    cv2.line(out, a, b, _color(p, "color", (0, 0, 255)), _int(p, "thickness", 2, 1, 100))
    return (
        out,
        f"Drew a line from {a} to {b}.",
        {"start": list(a), "end": list(b), "length": round(math.hypot(b[0] - a[0], b[1] - a[1]), 2)},
    )


@_register("draw_circle")
def draw_circle(img: np.ndarray, p: dict[str, Any], ctx: ToolContext) -> tuple[np.ndarray, str, dict[str, Any]]:
    _need(p, "x", "y", "radius")
    center, r = (_int(p, "x", 0), _int(p, "y", 0)), _int(p, "radius", 1, 1)
    out = _bgr(img).copy()
    cv2.circle(out, center, r, _color(p, "color", (0, 255, 0)), _int(p, "thickness", 2, -1, 100))
    return (
        out,
        f"Drew a circle at {center} with radius {r}.",
        {"center": list(center), "radius": r, "area": round(math.pi * r * r, 2)},
    )
