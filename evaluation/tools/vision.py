"""GTA's model-backed tools: a vision-language model behind any OpenAI-compatible endpoint
(description, region attributes, detection, counting, math OCR) and an OpenAI-compatible image
API (text-to-image, stylization). Every call is recorded in the ReplayCache; with no endpoint
configured and nothing recorded the tool fails and says which setting to fill in.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import threading
from typing import Any

from evaluation.modelcall.endpoint import EndpointSpec
from evaluation.modelcall.redact import known_secret_env, redact
from evaluation.modelcall.reply import ModelCallError
from evaluation.modelcall.sync_client import chat
from evaluation.tools import replay
from evaluation.tools.numbers import parse_numbers
from evaluation.tools.result import ToolContext, ToolError, ToolOutput
from store import safe_json
from store.blobs import guess_mime

_VLM_MISSING = (
    "configure a vision-language model: set CHAINMARK_VLM_BASE_URL and CHAINMARK_VLM_MODEL "
    "(ToolSettings.vlm_base_url / vlm_model; key in the env var named by vlm_api_key_env)"
)
_IMAGE_MISSING = (
    "configure an image-generation endpoint: set CHAINMARK_IMAGE_BASE_URL and CHAINMARK_IMAGE_MODEL "
    "(ToolSettings.image_gen_base_url / image_gen_model)"
)


_SENT_AS_IS = ("image/png", "image/jpeg")  # every OpenAI-compatible server takes these as they are


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _image_url(image: bytes) -> str:
    """The image as a data URL in the cheapest form the API takes: a PNG or JPEG goes as it is (no
    decode and re-encode, which costs more CPU than the call on a photo, and no OpenCV to load on a
    service call's path); any other format is sent as a PNG of its pixels."""
    mime = guess_mime(image)
    if mime not in _SENT_AS_IS:
        from evaluation.tools.images import open_rgb, png_bytes

        mime, image = "image/png", png_bytes(open_rgb(image))
    return f"data:{mime};base64," + base64.b64encode(image).decode("ascii")


def _size(image: bytes) -> tuple[int, int]:
    """Width and height from the image's header (no decode)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(image)) as im:
            return im.size
    except (UnidentifiedImageError, OSError) as exc:
        raise ToolError(f"the input is not a readable image ({len(image)} bytes): {exc}") from exc


_CLIENTS: dict[tuple[str, str, str, float], Any] = {}
_CLIENTS_LOCK = threading.Lock()


def _client(base_url: str, key_env: str, timeout: float) -> Any:
    """One client per endpoint for the process, shared by every thread (the openai client is
    thread-safe): building one costs tens of milliseconds of CPU (TLS context, connection pool),
    which at dozens of concurrent service calls on two cores was most of their wall time."""
    known_secret_env(key_env)
    key = os.environ.get(key_env) or "not-needed"
    ident = (base_url, key_env, hashlib.sha256(key.encode()).hexdigest(), timeout)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(ident)
        if client is None:
            from openai import OpenAI

            client = _CLIENTS[ident] = OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=2)
        return client


def ask_vlm(ctx: ToolContext, tool: str, prompt: str, image: bytes, max_tokens: int = 512) -> tuple[str, bool]:
    """One image + one question to the VLM, temperature 0; returns (answer text, replayed)."""
    s = ctx.settings
    request = {
        "model": s.vlm_model,
        "prompt": prompt,
        "image_sha256": [_sha(image)],
        "temperature": 0,
        "max_tokens": max_tokens,
    }

    def live() -> dict[str, Any]:
        url = _image_url(image)
        key_env = s.vlm_api_key_env if s.vlm_api_key_env and os.environ.get(s.vlm_api_key_env) else None
        endpoint = EndpointSpec(0, "the vision model", s.vlm_base_url or "", s.vlm_model or "", key_env)
        try:
            reply = chat(
                endpoint,
                [
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": prompt}, {"type": "image_url", "image_url": {"url": url}}],
                    }
                ],
                params={"temperature": 0, "max_tokens": max_tokens, "timeout": s.timeout_s},
                post=ctx.http_post,
            )
        except ModelCallError as exc:
            raise ToolError(f"{tool}: the vision model endpoint failed: {exc}") from exc
        return {"content": reply.content or ""}

    missing = None if (s.vlm_base_url and s.vlm_model) else _VLM_MISSING
    response, replayed = replay.call(ctx, tool, "vlm", request, live, missing)
    return str(response["content"]).strip(), replayed


def image_description(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    text, replayed = ask_vlm(
        ctx,
        "ImageDescription",
        "Describe this image briefly, in one or two sentences.",
        ctx.resolve_image(args["image"]),
    )
    return ToolOutput(text=text, data={"description": text}, replayed=replayed)


def region_attribute_description(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from evaluation.tools.images import open_rgb, png_bytes

    im = open_rgb(ctx.resolve_pixels(args["image"]))
    x1, y1, x2, y2 = parse_numbers(args["bbox"], 4, "bbox")
    box = (
        max(0, int(min(x1, x2))),
        max(0, int(min(y1, y2))),
        min(im.width, int(max(x1, x2))),
        min(im.height, int(max(y1, y2))),
    )
    if box[2] <= box[0] or box[3] <= box[1]:
        raise ToolError(f"bbox {args['bbox']!r} is empty or outside the {im.width}x{im.height} image")
    prompt = f"Describe the {args['attribute']} of the main object in this image region. Answer briefly."
    text, replayed = ask_vlm(ctx, "RegionAttributeDescription", prompt, png_bytes(im.crop(box)))
    return ToolOutput(
        text=text, data={"bbox": list(box), "attribute": args["attribute"], "description": text}, replayed=replayed
    )


def _parse_boxes(reply: str) -> list[dict[str, Any]]:
    """Boxes from a VLM reply: a JSON list of {bbox, score}, or bare "(x1, y1, x2, y2)" groups."""
    match = re.search(r"\[.*\]", reply, re.S)
    if match:
        try:
            items = safe_json.loads(match.group(0))
            boxes = [
                {"bbox": [round(float(v)) for v in it["bbox"]], "score": float(it.get("score", 1.0))}
                for it in items
                if isinstance(it, dict) and len(it.get("bbox", [])) == 4
            ]
            if boxes or items == []:
                return boxes
        except (ValueError, TypeError, KeyError):
            pass
    groups = re.findall(
        r"\(\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*,\s*"
        r"(-?\d+(?:\.\d+)?)\s*\)",
        reply,
    )
    return [{"bbox": [round(float(v)) for v in g], "score": 1.0} for g in groups]


def text_to_bbox(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    image = ctx.resolve_image(args["image"])
    width, height = _size(image)
    prompt = (
        f"Find every '{args['text']}' in this {width}x{height} image. Reply with JSON only: a list of "
        '{"bbox": [x1, y1, x2, y2], "score": confidence 0-1} in pixel coordinates; [] if there is none.'
    )
    reply, replayed = ask_vlm(ctx, "TextToBbox", prompt, image)
    boxes = sorted(_parse_boxes(reply), key=lambda b: -b["score"])
    if not boxes and "[]" not in reply:
        raise ToolError(f"TextToBbox: the vision model's reply contains no boxes: {reply[:200]!r}")
    if args.get("top1", True):
        boxes = boxes[:1]
    text = "\n".join(f"({', '.join(map(str, b['bbox']))}), score {b['score']:.2f}" for b in boxes)
    return ToolOutput(
        text=text or f"No {args['text']} was detected.", data={"objects": boxes, "raw": reply}, replayed=replayed
    )


def count_given_object(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    prompt = f"How many {args['text']} are in this image? Reply with a single integer only."
    reply, replayed = ask_vlm(ctx, "CountGivenObject", prompt, ctx.resolve_image(args["image"]), max_tokens=16)
    match = re.search(r"-?\d+", reply)
    if match is None:
        raise ToolError(f"CountGivenObject: the vision model did not answer with a number: {reply[:200]!r}")
    count = int(match.group(0))
    return ToolOutput(text=str(count), data={"count": count, "raw": reply}, replayed=replayed)


def math_ocr(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    prompt = "Transcribe the math expression(s) in this image as LaTeX. Reply with the LaTeX only."
    reply, replayed = ask_vlm(ctx, "MathOCR", prompt, ctx.resolve_image(args["image"]))
    latex = re.sub(r"^```(?:latex)?\s*|\s*```$", "", reply.strip())
    return ToolOutput(text=latex, data={"latex": latex}, replayed=replayed)


def _generate(ctx: ToolContext, tool: str, request: dict[str, Any], call: Any) -> tuple[bytes, bool]:
    """Run an image API call through the replay cache; the image itself is kept as a blob when a
    blob store is available (the cache row then holds only its sha256)."""
    s = ctx.settings

    def live() -> dict[str, Any]:
        try:
            data = call(_client(s.image_gen_base_url or "", s.image_gen_api_key_env, s.timeout_s))
        except ToolError:
            raise
        except Exception as exc:
            raise ToolError(redact(f"{tool}: the image endpoint failed: {type(exc).__name__}: {exc}")) from exc
        if ctx.blobs is not None:
            blobs = ctx.blobs
            return {
                "image_sha256": replay.in_short_transaction(ctx, lambda s: blobs.put(data, s), write=True)
                if ctx.engine is not None or ctx.session is not None
                else blobs.put(data)
            }
        return {"image_b64": base64.b64encode(data).decode("ascii")}

    missing = None if (s.image_gen_base_url and s.image_gen_model) else _IMAGE_MISSING
    response, replayed = replay.call(ctx, tool, "image", request, live, missing)
    if "image_b64" in response:
        return base64.b64decode(response["image_b64"]), replayed
    if ctx.blobs is None:
        raise ToolError(f"{tool}: the recorded image is in the blob store, but no blob store was given")
    blobs, digest = ctx.blobs, response["image_sha256"]
    if ctx.engine is not None or ctx.session is not None:
        return replay.in_short_transaction(ctx, lambda s: blobs.get(digest, s), write=False), replayed
    return blobs.get(digest), replayed


def _first_image(resp: Any) -> bytes:
    item = resp.data[0]
    if getattr(item, "b64_json", None):
        return base64.b64decode(item.b64_json)
    if getattr(item, "url", None):
        import httpx2  # openai's own HTTP library (never the legacy httpx: see modelcall.sync_client)

        return httpx2.get(item.url, timeout=60).content
    raise ToolError("the image endpoint returned no image")


def text_to_image(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    model = ctx.settings.image_gen_model
    request = {"model": model, "prompt": args["keywords"], "op": "generate"}
    data, replayed = _generate(
        ctx,
        "TextToImage",
        request,
        lambda c: _first_image(
            c.images.generate(model=model, prompt=args["keywords"], n=1, response_format="b64_json")
        ),
    )
    name = f"image/generated_{ctx.next_index}.png"
    return ToolOutput(
        text=f"[image]({name})", data={"path": name}, images=[data], image_names=[name], replayed=replayed
    )


def image_stylization(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from evaluation.tools.images import open_rgb, png_bytes

    source = png_bytes(open_rgb(ctx.resolve_pixels(args["image"])))
    model = ctx.settings.image_gen_model
    request = {"model": model, "prompt": args["instruction"], "op": "edit", "image_sha256": _sha(source)}
    data, replayed = _generate(
        ctx,
        "ImageStylization",
        request,
        lambda c: _first_image(
            c.images.edit(
                model=model,
                image=("image.png", source, "image/png"),
                prompt=args["instruction"],
                n=1,
                response_format="b64_json",
            )
        ),
    )
    name = f"image/stylized_{ctx.next_index}.png"
    return ToolOutput(
        text=f"[image]({name})", data={"path": name}, images=[data], image_names=[name], replayed=replayed
    )
