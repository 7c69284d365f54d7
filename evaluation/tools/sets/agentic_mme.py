"""Agentic-MME: 14 atomic image operations on an indexed image list + 3 retrieval tools.

Names, parameters, bounds and the model-facing descriptions follow the benchmark's published
function schema (seed_formats.md §3.2), because models are scored on calling exactly these.
"""

from __future__ import annotations

from typing import Any

from evaluation.tools.toolset import Tool, ToolSet
from evaluation.tools.sets._schema import arr, b, i, n, obj, s

VERSION = "1"

_INDEX = i("Index of the image to operate on (0 = original, 1, 2... = processed images)", minimum=0)
_LABEL = s("Description of what this operation is for")


def _op(
    name: str,
    description: str,
    props: dict[str, Any] | None = None,
    required: list[str] | None = None,
    category: str = "image",
) -> Tool:
    schema = obj({"image_index": _INDEX, **(props or {}), "label": _LABEL}, ["image_index", *(required or [])])
    return Tool(name, description, schema, category, "offline", f"evaluation.tools.pil_ops:{name}")


def image_tools() -> list[Tool]:
    return [
        _op(
            "crop",
            "Crop/zoom into a region of an image using normalized bounding box coordinates (0-1000 scale).",
            {
                "bbox_2d": arr(
                    "number", "Bounding box [x1, y1, x2, y2] in 0-1000 normalized coordinates", minItems=4, maxItems=4
                ),
                "zoom_scale": n(
                    "Magnification factor for the cropped region (default: 1.0). Higher values produce larger images.",
                    minimum=0.5,
                    maximum=5.0,
                    default=1.0,
                ),
            },
            ["bbox_2d"],
            "geometry",
        ),
        _op(
            "rotate",
            "Rotate an image by angle degrees (positive = counterclockwise).",
            {
                "angle": n("Rotation angle in degrees"),
                "expand": b("If true, expand canvas to fit rotated image. Default: true"),
            },
            ["angle"],
            "geometry",
        ),
        _op(
            "flip",
            "Flip/mirror an image horizontally, vertically, or both directions.",
            {
                "direction": s(
                    "Flip direction: 'horizontal' (left-right mirror), 'vertical' (top-bottom mirror), "
                    "or 'both'. Default: horizontal",
                    enum=["horizontal", "vertical", "both"],
                )
            },
            category="geometry",
        ),
        _op(
            "resize",
            "Resize an image to (width, height) OR by scale factor.",
            {
                "width": i("Target width in pixels"),
                "height": i("Target height in pixels"),
                "scale": n("Scale factor (e.g., 2.0 = double size, 0.5 = half)"),
            },
            category="geometry",
        ),
        _op(
            "enhance",
            "Adjust brightness, contrast, and/or sharpness. Values: 1.0 = no change, >1.0 = increase, <1.0 = decrease.",
            {
                "brightness": n("Brightness multiplier (1.0 = no change)"),
                "contrast": n("Contrast multiplier (1.0 = no change)"),
                "sharpness": n("Sharpness multiplier (1.0 = no change)"),
            },
            category="enhancement",
        ),
        _op("grayscale", "Convert an image to grayscale.", category="enhancement"),
        _op(
            "autocontrast",
            "Apply automatic contrast adjustment.",
            {"cutoff": n("Percentage of lightest/darkest pixels to ignore. Default: 0")},
            category="enhancement",
        ),
        _op("blur", "Apply Gaussian blur.", {"radius": i("Blur radius. Default: 2")}, category="enhancement"),
        _op("sharpen", "Apply sharpening filter.", category="enhancement"),
        _op(
            "denoise",
            "Remove noise from an image.",
            {"strength": i("Denoising strength (1-30). Default: 10")},
            category="enhancement",
        ),
        _op(
            "edge_detect",
            "Detect edges in an image.",
            {"method": s("Edge detection method. Default: canny", enum=["canny", "sobel", "simple"])},
            category="feature",
        ),
        _op("invert", "Invert the colors of an image (create negative).", category="enhancement"),
        _op("equalize", "Equalize histogram for better contrast distribution.", category="enhancement"),
        _op(
            "threshold",
            "Apply threshold to convert image to binary (black/white).",
            {
                "value": i("Threshold value (0-255). Default: 128"),
                "mode": s("Threshold mode. Default: binary", enum=["binary", "binary_inv", "trunc", "tozero"]),
            },
            category="enhancement",
        ),
    ]


def search_tools() -> list[Tool]:
    return [
        Tool(
            "google_search",
            "Search the web using Google via Serper.dev API. Use for facts, current information, "
            "specifications, prices, or any knowledge queries.",
            obj(
                {
                    "query": s("The search query."),
                    "gl": s("Geo location code (e.g., 'us', 'cn'). Default: 'us'"),
                    "hl": s("Language code (e.g., 'en', 'zh'). Default: 'en'"),
                },
                ["query"],
            ),
            "search",
            "service",
            "evaluation.tools.web:google_search",
        ),
        Tool(
            "google_lens_search",
            "Reverse image search using Google Lens via Serper.dev API. Use to identify "
            "objects, brands, logos, landmarks, products, or text in images.",
            obj(
                {
                    "image_ref": s(
                        "Quick reference: 'current' for the latest processed image, 'original' for the input image.",
                        enum=["current", "original"],
                    ),
                    "image_path": s(
                        "Filename or full path to a specific image. After image processing, you can use "
                        "the filename (e.g., 'transformed_image_0.png') to search that specific image."
                    ),
                }
            ),
            "search",
            "service",
            "evaluation.tools.web:google_lens_search",
        ),
        Tool(
            "fetch_webpage",
            "Fetch and read the content of a webpage. Returns clean text extracted from the URL via Jina Reader.",
            obj(
                {
                    "url": s("The webpage URL to fetch (must be http/https)."),
                    "max_chars": i("Maximum characters to return. Default: 12000"),
                },
                ["url"],
            ),
            "search",
            "service",
            "evaluation.tools.web:fetch_webpage",
        ),
    ]


def build() -> ToolSet:
    tools = image_tools() + search_tools()
    return ToolSet(
        "agentic-mme",
        VERSION,
        "Agentic-MME atomic image tools (image_index, 0–1000 bbox) and search",
        {t.name: t for t in tools},
    )
