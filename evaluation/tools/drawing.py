"""GTA DrawBox and AddText with Pillow. Coordinates are pixels of the input image, as in GTA."""

from __future__ import annotations

from typing import Any

from PIL import ImageColor, ImageDraw, ImageFont

from evaluation.tools.images import Produced, open_rgb
from evaluation.tools.numbers import NUMBER, parse_numbers
from evaluation.tools.result import ToolContext, ToolError, ToolOutput

FONT_PATH = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.truetype(FONT_PATH, size)
    except OSError:
        return ImageFont.load_default(size=size)


def _color(name: str) -> tuple[int, int, int]:
    try:
        return ImageColor.getrgb(name.strip())[:3]  # type: ignore[return-value]
    except ValueError as exc:
        raise ToolError(f"unknown color {name!r} (use a name like 'red' or '#ff0000')") from exc


def _name(ctx: ToolContext, prefix: str) -> str:
    return f"image/{prefix}_{ctx.next_index}.png"


def draw_box(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    im = open_rgb(ctx.resolve_pixels(args["image"]))
    x1, y1, x2, y2 = parse_numbers(args["bbox"], 4, "bbox")
    x1, x2 = sorted((x1, x2))
    y1, y2 = sorted((y1, y2))
    draw = ImageDraw.Draw(im)
    width = max(2, round(min(im.size) / 200))
    draw.rectangle((x1, y1, x2, y2), outline=(255, 0, 0), width=width)
    note = args.get("annotation")
    if note:
        font = _font(max(12, round(min(im.size) / 30)))
        left, top, right, bottom = draw.textbbox((0, 0), note, font=font)
        ty = y1 - (bottom - top) - 2 * width if y1 - (bottom - top) - 2 * width >= 0 else y2 + width
        draw.rectangle((x1, ty, x1 + right - left + 2 * width, ty + bottom - top + 2 * width), fill=(255, 0, 0))
        draw.text((x1 + width - left, ty + width - top), note, fill=(255, 255, 255), font=font)
    name = _name(ctx, "drawbox")
    return ToolOutput(
        text=f"[image]({name})",
        data={"bbox": [x1, y1, x2, y2], "annotation": note, "path": name},
        images=[Produced(im)],
        image_names=[name],
    )


_H = {"l": 0.0, "m": 0.5, "r": 1.0}
_V = {"t": 0.0, "m": 0.5, "b": 1.0}


def add_text(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    im = open_rgb(ctx.resolve_pixels(args["image"]))
    text, position = str(args["text"]), str(args["position"]).strip()
    color = _color(str(args.get("color") or "red"))
    font = _font(max(12, round(min(im.size) / 20)))
    draw = ImageDraw.Draw(im)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    tw, th = right - left, bottom - top
    if NUMBER.search(position):
        x, y = parse_numbers(position, 2, "position")  # the left-bottom corner of the text
        anchor_x, anchor_y = x, y - th
    elif len(position) == 2 and position[0].lower() in _H and position[1].lower() in _V:
        margin = round(min(im.size) * 0.02)
        anchor_x = margin + _H[position[0].lower()] * (im.width - tw - 2 * margin)
        anchor_y = margin + _V[position[1].lower()] * (im.height - th - 2 * margin)
    else:
        raise ToolError(f"position must be '(x, y)' or two letters like 'mt' (l/m/r then t/m/b), got {position!r}")
    draw.text((anchor_x - left, anchor_y - top), text, fill=color, font=font)
    name = _name(ctx, "addtext")
    return ToolOutput(
        text=f"[image]({name})",
        data={
            "text": text,
            "box": [round(anchor_x), round(anchor_y), round(anchor_x + tw), round(anchor_y + th)],
            "color": list(color),
            "path": name,
        },
        images=[Produced(im)],
        image_names=[name],
    )
