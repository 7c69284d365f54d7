"""Agentic-MME's atomic image operations on the indexed image list, with Pillow (denoise and
edges with OpenCV) — the semantics of the reference toolbox: inputs converted to RGB, 0–1000 bbox
truncated to pixels, zoom only when > 1, threshold with a strict ">" comparison, every op a new PNG
(encoded when first needed, see ``images.Produced``).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageEnhance, ImageFilter, ImageOps

from evaluation.tools.images import Produced, open_rgb
from evaluation.tools.result import ToolContext, ToolError, ToolOutput


def denormalize_bbox(bbox: list[float], width: int, height: int) -> list[int]:
    """0–1000 coordinates → pixel box, truncated toward zero, ordered and clamped to the image."""
    x1, y1, x2, y2 = (
        int(bbox[0] / 1000 * width),
        int(bbox[1] / 1000 * height),
        int(bbox[2] / 1000 * width),
        int(bbox[3] / 1000 * height),
    )
    x1, x2 = sorted((x1, x2))
    y1, y2 = sorted((y1, y2))
    return [max(0, min(x1, width)), max(0, min(y1, height)), max(0, min(x2, width)), max(0, min(y2, height))]


def _produce(op: str, args: dict[str, Any], ctx: ToolContext, out: Image.Image, **extra: Any) -> ToolOutput:
    src = args["image_index"]
    new = ctx.next_index
    name = f"transformed_image_{new}.png"
    data: dict[str, Any] = {
        "ok": "true",
        "op": op,
        "source_image_index": src,
        "new_image_index": new,
        "output_path": name,
        **extra,
        "label": args.get("label", ""),
        "size": list(out.size),
    }
    return ToolOutput(
        text=f"Created image {new} ({op} of image {src}), size {out.size[0]}x{out.size[1]}.",
        data=data,
        images=[Produced(out)],
        image_names=[name],
    )


def _src(args: dict[str, Any], ctx: ToolContext) -> Image.Image:
    """The input image, not copied: every op here returns a new image and never draws on its input."""
    return open_rgb(ctx.resolve_pixels(args["image_index"], "image_index"), copy=False)


def crop(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    im = _src(args, ctx)
    box = denormalize_bbox(args["bbox_2d"], *im.size)
    if box[2] <= box[0] or box[3] <= box[1]:
        raise ToolError(f"crop: bbox_2d {args['bbox_2d']} selects an empty region of a {im.size[0]}x{im.size[1]} image")
    out = im.crop(tuple(box))
    zoom = float(args.get("zoom_scale", 1.0))
    if zoom > 1.0:
        out = out.resize((int(out.width * zoom), int(out.height * zoom)), Image.LANCZOS)
    return _produce("crop", args, ctx, out, bbox_normalized=args["bbox_2d"], bbox_absolute=box, zoom_scale=zoom)


def rotate(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    angle, expand = float(args["angle"]), bool(args.get("expand", True))
    return _produce("rotate", args, ctx, _src(args, ctx).rotate(angle, expand=expand), angle=angle, expand=expand)


def flip(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    direction = str(args.get("direction") or "horizontal").lower()
    im = _src(args, ctx)
    if direction in ("vertical", "v", "top_bottom", "tb"):
        out, label = im.transpose(Image.Transpose.FLIP_TOP_BOTTOM), "vertical"
    elif direction in ("both", "b", "hv"):
        out, label = im.transpose(Image.Transpose.ROTATE_180), "both"
    else:  # the reference falls back to horizontal for anything else
        out, label = im.transpose(Image.Transpose.FLIP_LEFT_RIGHT), "horizontal"
    return _produce("flip", args, ctx, out, direction=label)


def resize(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    im = _src(args, ctx)
    width, height, scale = args.get("width"), args.get("height"), args.get("scale")
    if width is None or height is None:
        if scale is None:
            raise ToolError("resize requires (width, height) or scale")
        width, height = int(im.width * float(scale)), int(im.height * float(scale))
    if width <= 0 or height <= 0 or width * height > 100_000_000:
        raise ToolError(f"resize: target size {width}x{height} is not allowed (positive, ≤ 100 megapixels)")
    out = im.resize((int(width), int(height)), Image.LANCZOS)
    return _produce("resize", args, ctx, out, scale=float(scale) if scale else None)


def enhance(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    im = _src(args, ctx)
    for key, cls in (
        ("brightness", ImageEnhance.Brightness),
        ("contrast", ImageEnhance.Contrast),
        ("sharpness", ImageEnhance.Sharpness),
    ):
        if args.get(key) is not None:
            im = cls(im).enhance(float(args[key]))
    return _produce(
        "enhance",
        args,
        ctx,
        im,
        brightness=args.get("brightness"),
        contrast=args.get("contrast"),
        sharpness=args.get("sharpness"),
    )


def grayscale(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _produce("grayscale", args, ctx, _src(args, ctx).convert("L").convert("RGB"))


def autocontrast(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    cutoff = args.get("cutoff", 0)
    return _produce(
        "autocontrast", args, ctx, ImageOps.autocontrast(_src(args, ctx), cutoff=float(cutoff)), cutoff=cutoff
    )


def blur(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    radius = int(args.get("radius", 2))
    return _produce("blur", args, ctx, _src(args, ctx).filter(ImageFilter.GaussianBlur(radius=radius)), radius=radius)


def sharpen(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _produce("sharpen", args, ctx, _src(args, ctx).filter(ImageFilter.SHARPEN))


def denoise(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    strength = int(args.get("strength", 10))
    arr = np.asarray(_src(args, ctx))
    out = cv2.fastNlMeansDenoisingColored(
        arr, None, h=strength, hColor=strength, templateWindowSize=7, searchWindowSize=21
    )
    return _produce("denoise", args, ctx, Image.fromarray(out), strength=strength)


def edge_detect(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    method = str(args.get("method") or "canny")
    im = _src(args, ctx)
    gray = np.asarray(im.convert("L"))
    if method.lower() == "canny":
        out = Image.fromarray(cv2.Canny(gray, 100, 200)).convert("RGB")
    elif method.lower() == "sobel":
        gx = cv2.Sobel(gray, cv2.CV_64F, 1, 0, ksize=3)
        gy = cv2.Sobel(gray, cv2.CV_64F, 0, 1, ksize=3)
        out = Image.fromarray(np.uint8(np.clip(np.hypot(gx, gy), 0, 255))).convert("RGB")
    else:
        out = im.filter(ImageFilter.FIND_EDGES).convert("RGB")
    return _produce("edge_detect", args, ctx, out, method=method)


def invert(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _produce("invert", args, ctx, ImageOps.invert(_src(args, ctx)))


def equalize(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _produce("equalize", args, ctx, ImageOps.equalize(_src(args, ctx)))


def threshold(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    value, mode = int(args.get("value", 128)), str(args.get("mode") or "binary").lower()
    gray = np.asarray(_src(args, ctx).convert("L"))
    above = gray > value
    # uint8 throughout (int64 temporaries cost more than the comparison); a value outside 0–255
    # keeps the wide path, whose wrap-around on the cast to uint8 is part of the result.
    lo, hi = (np.uint8(0), np.uint8(255)) if 0 <= value <= 255 else (0, 255)
    if mode == "binary_inv":
        out = np.where(above, lo, hi)
    elif mode == "trunc":
        out = np.where(above, np.uint8(value) if 0 <= value <= 255 else value, gray)
    elif mode == "tozero":
        out = np.where(above, gray, lo)
    else:
        out = np.where(above, hi, lo)
    return _produce(
        "threshold", args, ctx, Image.fromarray(out.astype(np.uint8, copy=False)).convert("RGB"), value=value, mode=mode
    )
