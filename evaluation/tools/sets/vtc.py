"""VTC-Bench interface track: the 35 registered OpenCV tools in the ``{"image", "param"}`` form
(seed_formats.md §5.2), their mapping to the 32-name canonical vocabulary of the gold tool chains,
and extras the vocabulary needs but the registry lacks (Sharpen, used by 84 gold chains).
"""

from __future__ import annotations

import functools
from typing import Any

from evaluation.tools.toolset import Tool, ToolSet
from evaluation.tools.sets._schema import arr, b, i, n, s

VERSION = "1"

#: The 32 canonical tool names of the gold chains, by group, in the benchmark's order.
VOCABULARY: dict[str, list[str]] = {
    "Geometry": ["Rotate", "Crop", "Resize", "Flip", "Translate", "Image Pyramid"],
    "Enhancement": [
        "Convert Color",
        "Adjust Brightness",
        "Histogram Eq",
        "Binarize",
        "Morphology",
        "Blur",
        "Denoise",
        "Sharpen",
        "Inpaint",
        "Color Filter",
        "Flood Fill",
    ],
    "Feature Extraction": [
        "Edge Detect",
        "Line Detect",
        "Circle Detect",
        "Compute Gradients",
        "Template Match",
        "Watershed",
        "GrabCut",
        "Connected Components",
        "Frequency Transform",
    ],
    "Draw": ["Draw Contours", "Measure Area", "Measure Perimeter", "Approximate Polygon", "Draw Line", "Draw Circle"],
}
VOCABULARY_NAMES: list[str] = [name for group in VOCABULARY.values() for name in group]

#: Names seen in gold chains that are not in the vocabulary, and what they mean.
VOCABULARY_ALIASES: dict[str, str] = {"Zoom in": "Crop"}

_BGR = arr("integer", "BGR color [B, G, R]")
_CHANNELS = arr("integer", "List of channel indices [0, 1, 2]")
_MODE = s("'external|list'. Model can decide the value.")


def _contour_params(**extra: Any) -> dict[str, Any]:
    return {
        "mode": _MODE,
        "canny_low": i("<int>"),
        "canny_high": i("<int>"),
        "rank": i("<optional int>"),
        "max_contours": i("<optional int>"),
        **extra,
    }


_COLORSPACE = (
    "Converts the image to a different color space (grayscale, HSV, or LAB). Useful for enhancing "
    "contrast or isolating specific color channels."
)

# (name, description, param properties, required param keys, is "param" required, vocabulary name)
_SPECS: list[tuple[str, str, dict[str, Any], list[str], bool, str | None]] = [
    ("opencv_colorspace_gray", _COLORSPACE, {}, [], False, "Convert Color"),
    ("opencv_colorspace_hsv", _COLORSPACE, {}, [], False, "Convert Color"),
    ("opencv_colorspace_lab", _COLORSPACE, {}, [], False, "Convert Color"),
    (
        "opencv_resize",
        "Resizes the image to specified dimensions or by a preset scale (half or double). You can "
        "specify any positive integer width and height (recommended range: 1-10000 pixels). Returns detailed size "
        "information including original and new dimensions.",
        {
            "width": i("<positive integer>"),
            "height": i("<positive integer>"),
            "preset": s("Resize preset: 'half' or 'double'. Model can decide the value."),
        },
        ["width", "height"],
        True,
        "Resize",
    ),
    (
        "opencv_rotate",
        "Rotates the image by specified angle in degrees (clockwise). Supports arbitrary angles (e.g., "
        "45, 90, 180, 270, etc.). The output image will be resized to fit the entire rotated content. Returns rotation "
        "details including angle, center point, and size changes.",
        {"angle": n("Rotation angle in degrees (clockwise). Can be any number, e.g., 45, 90, 180, 270, etc.")},
        [],
        True,
        "Rotate",
    ),
    (
        "opencv_translate",
        "Shifts the image by a specified number of pixels in the specified direction (left, right, "
        "up, or down). You can specify any positive integer distance (recommended range: 1-10000 pixels). Default "
        "distance is 32 pixels. Returns translation details including direction, distance, and translation vector.",
        {
            "direction": s("Translation direction: 'left', 'right', 'up', or 'down'. Model can decide the value."),
            "distance": i(
                "Translation distance in pixels (any non-negative integer, default: 32, recommended range: 1-10000)"
            ),
        },
        [],
        True,
        "Translate",
    ),
    (
        "opencv_flip",
        "Flips the image horizontally or vertically.",
        {"direction": s("Flip direction: 'horizontal' or 'vertical'. Model can decide the value.")},
        [],
        True,
        "Flip",
    ),
    (
        "opencv_blur",
        "Applies blurring to reduce noise or smooth the image. Supports multiple blur methods: average "
        "(simple box blur), gaussian (weighted blur), median (good for salt-pepper noise), and bilateral "
        "(edge-preserving). Returns blur method and parameter details.",
        {
            "method": s(
                "Blur method: 'average'/'avg' (simple box blur), 'gaussian' (weighted blur, default), 'median' "
                "(good for salt-pepper noise), 'bilateral' (edge-preserving). Model can decide the value."
            ),
            "ksize": i("Kernel size (must be odd, 3-51). Used for average, gaussian, and median blur. Default: 5"),
            "sigma_x": n(
                "Gaussian kernel standard deviation in X direction (0-10). Only for gaussian blur. Default: 0 "
                "(auto-calculated from ksize)"
            ),
            "sigma_y": n(
                "Gaussian kernel standard deviation in Y direction (0-10). Only for gaussian blur. Default: 0 "
                "(auto-calculated from ksize)"
            ),
            "d": i("Diameter of pixel neighborhood (1-50). Only for bilateral filter. Default: 9"),
            "sigma_color": n("Filter sigma in color space (1-200). Only for bilateral filter. Default: 75"),
            "sigma_space": n("Filter sigma in coordinate space (1-200). Only for bilateral filter. Default: 75"),
        },
        ["method", "ksize"],
        True,
        "Blur",
    ),
    (
        "opencv_threshold",
        "Applies thresholding to create a binary image. Supports multiple color modes (grayscale or "
        "BGR channel-wise) and various threshold methods.",
        {
            "mode": s("'binary|otsu|adaptive_mean|adaptive_gaussian' (default: 'otsu'). Model can decide the value."),
            "invert": b("true|false (default: false)"),
            "color_mode": s("'grayscale|bgr' (default: 'grayscale'). Model can decide the value."),
            "threshold_value": i("<int 0-255> (for binary mode)"),
            "adaptive_block_size": i("<odd int 3-101> (default: 11)"),
            "adaptive_constant": i("<int> (default: 2)"),
            "channels": _CHANNELS,
        },
        ["mode"],
        True,
        "Binarize",
    ),
    (
        "opencv_morphology",
        "Applies morphological operations (erode, dilate, open, close) with flexible kernel size and shape.",
        {
            "op": s("'erode|dilate|open|close' (default: 'open'). Model can decide the value."),
            "kernel_size": i("<odd int 3-21> (default: 3)"),
            "iterations": i("<int 1-10> (default: 1)"),
            "kernel_shape": s("'rect|ellipse' (default: 'rect'). Model can decide the value."),
        },
        [],
        False,
        "Morphology",
    ),
    (
        "opencv_gradients",
        "Computes gradient images using Sobel (x or y direction) or Laplacian operator.",
        {"mode": s("'sobel_x|sobel_y|laplacian'. Model can decide the value.")},
        ["mode"],
        True,
        "Compute Gradients",
    ),
    (
        "opencv_canny",
        "Detects edges using Canny edge detector. Supports preset thresholds or custom values, and can "
        "deal with grayscale or individual BGR channels.",
        {
            "preset": s(
                "'low|medium|high' (default: 'medium'). Model can decide the value or provide custom "
                "threshold_low and threshold_high"
            ),
            "threshold_low": i("<int 0-255> (overrides preset)"),
            "threshold_high": i("<int 0-255> (overrides preset)"),
            "color_mode": s("'grayscale|bgr' (default: 'grayscale'). Model can decide the value."),
            "channels": _CHANNELS,
        },
        [],
        False,
        "Edge Detect",
    ),
    (
        "opencv_pyramid",
        "Applies image pyramid operations (upsample or downsample by one level). Returns size information.",
        {"mode": s("'pyr_up|pyr_down'. Model can decide the value.")},
        [],
        True,
        "Image Pyramid",
    ),
    (
        "opencv_contours",
        "Finds contours using Canny edges and returns bounding boxes/areas. Helpful for locating "
        "shapes before further analysis.",
        {
            "mode": _MODE,
            "canny_low": i("<int default 100>"),
            "canny_high": i("<int default 200>"),
            "rank": i("<optional int 1 = largest>"),
            "max_contours": i("<optional int default 20>"),
        },
        [],
        False,
        "Draw Contours",
    ),
    (
        "opencv_draw_line",
        "Draws a line segment between two points with configurable color and thickness.",
        {
            "x1": i("<int>"),
            "y1": i("<int>"),
            "x2": i("<int>"),
            "y2": i("<int>"),
            "color": _BGR,
            "thickness": i("<int>"),
        },
        ["x1", "x2", "y1", "y2"],
        True,
        "Draw Line",
    ),
    (
        "opencv_contour_area",
        "Calculates contour areas using cv2.contourArea and overlays the values near each "
        "contour. Useful for comparing object sizes.",
        _contour_params(color=_BGR, thickness=i("<int>")),
        [],
        True,
        "Measure Area",
    ),
    (
        "opencv_arc_length",
        "Computes contour perimeters using cv2.arcLength and overlays the values. Helps measure object outlines.",
        _contour_params(color=_BGR, thickness=i("<int>")),
        [],
        True,
        "Measure Perimeter",
    ),
    (
        "opencv_approx_poly",
        "Approximates contours with fewer points using cv2.approxPolyDP (epsilon_ratio controls "
        "simplification). Great for polygonal shape summaries.",
        _contour_params(epsilon_ratio=n("<float default 0.02>"), color=_BGR, thickness=i("<int>")),
        [],
        True,
        "Approximate Polygon",
    ),
    (
        "opencv_histogram",
        "Applies histogram equalization or CLAHE to enhance image contrast. Supports multiple color "
        "modes (grayscale, BGR, HSV) and flexible channel selection to preserve color information or deal with "
        "specific channels.",
        {
            "mode": s("'equalize|clahe'. Model can decide the value."),
            "color_mode": s("'grayscale|bgr|hsv' (default: 'grayscale'). Model can decide the value."),
            "channels": _CHANNELS,
            "clip_limit": n("<float> (for CLAHE)"),
            "tile_grid_size": arr("integer", "Tile grid size [width, height], default [8, 8]"),
        },
        [],
        True,
        "Histogram Eq",
    ),
    (
        "opencv_dft",
        "Computes and visualizes the Discrete Fourier Transform magnitude spectrum.",
        {},
        [],
        False,
        "Frequency Transform",
    ),
    (
        "opencv_template_match",
        "Matches a template image within the source image. Returns match score and bounding box coordinates.",
        {"template_path": s("'path/to/template'"), "method": s("'sqdiff|ccorr|ccoeff'. Model can decide the value.")},
        [],
        True,
        "Template Match",
    ),
    (
        "opencv_hough_lines",
        "Detects line segments in the image using Hough transform. Returns line coordinates and "
        "lengths. By default uses stricter parameters to reduce false positives. You can adjust threshold (higher = "
        "stricter, fewer lines) and minLineLength (higher = longer lines only) to control detection sensitivity.",
        {
            "threshold": i("<optional integer default 80>"),
            "minLineLength": i("<optional integer default 50>"),
            "maxLineGap": i("<optional integer default 10>"),
            "canny_low": i("<optional integer default 80>"),
            "canny_high": i("<optional integer default 200>"),
            "max_lines": i("<optional integer default 20>"),
        },
        [],
        True,
        "Line Detect",
    ),
    (
        "opencv_hough_circles",
        "Detects circles in the image using Hough transform. Returns circle centers and radii. "
        "By default uses stricter parameters to reduce false positives. You can adjust param2 (higher = stricter, fewer "
        "circles) and minDist (higher = circles must be farther apart) to control detection sensitivity.",
        {
            "dp": n("<optional float default 1.2>"),
            "minDist": i("<optional integer default 50>"),
            "param1": i("<optional integer default 100>"),
            "param2": i("<optional integer default 50>"),
            "minRadius": i("<optional integer default 10>"),
            "maxRadius": i("<optional integer default 0 = no limit>"),
            "max_circles": i("<optional integer default 20>"),
        },
        [],
        True,
        "Circle Detect",
    ),
    (
        "opencv_watershed",
        "Applies watershed segmentation to separate overlapping objects. Returns region count and labels.",
        {"max_regions": i("<optional integer default 20>")},
        [],
        False,
        "Watershed",
    ),
    (
        "opencv_grabcut",
        "Performs foreground/background segmentation using GrabCut algorithm with preset rectangle. "
        "Returns foreground pixel statistics.",
        {"preset": s("'center|tight|loose'. Model can decide the value.")},
        [],
        True,
        "GrabCut",
    ),
    (
        "opencv_features",
        "Detects and draws keypoints using various feature detection methods (harris, shi_tomasi, "
        "sift, surf, fast, brief, orb). Returns keypoint coordinates.",
        {
            "method": s("'harris|shi_tomasi|sift|surf|fast|brief|orb'. Model can decide the value."),
            "max_points": i("Maximum number of keypoints to detect"),
        },
        [],
        True,
        None,
    ),
    (
        "opencv_denoise",
        "Applies fast non-local means denoising. Supports grayscale, color, or per-channel.",
        {
            "mode": s(
                "'fast_means_gray|fast_means_color|fast_means_bgr_channel' (default: 'fast_means_color'). Model "
                "can decide the value."
            ),
            "h": n("<float 1-50> (default: 10)"),
            "h_color": n("<float 1-50> (default: 10)"),
            "template_window": i("<odd int 3-21> (default: 7)"),
            "search_window": i("<odd int 3-31> (default: 21)"),
            "channels": _CHANNELS,
        },
        [],
        True,
        "Denoise",
    ),
    (
        "opencv_inpaint",
        "Inpaints (fills) regions in the image using automatically generated mask. Supports custom "
        "parameters for mask generation and inpainting method.",
        {
            "preset": s("'canny|threshold' (default: 'canny'). Model can decide the value."),
            "canny_low": i("<int 0-255> (default: 100)"),
            "canny_high": i("<int 0-255> (default: 200)"),
            "threshold_value": i("<int 0-255> (default: 127)"),
            "radius": i("<int 1-10> (default: 3)"),
            "method": s("'telea|ns' (default: 'telea'). Model can decide the value."),
        },
        [],
        True,
        "Inpaint",
    ),
    (
        "opencv_inrange_color",
        "Creates a mask for pixels within a specified color range. Supports HSV or BGR "
        "colorspace and flexible output formats.",
        {
            "colorspace": s("'hsv|bgr' (default: 'hsv'). Model can decide the value."),
            "lower": arr("number", "Lower bound for color range [h/b, s/g, v/r]"),
            "upper": arr("number", "Upper bound for color range [h/b, s/g, v/r]"),
            "output_format": s("'mask|masked_image|both' (default: 'both'). Model can decide the value."),
        },
        [],
        True,
        "Color Filter",
    ),
    (
        "opencv_crop",
        "Crops a rectangular region from the image. Returns the cropped region with detailed information "
        "about the crop area.",
        {
            "x": i("<non-negative integer>"),
            "y": i("<non-negative integer>"),
            "width": i("<positive integer>"),
            "height": i("<positive integer>"),
        },
        [],
        True,
        "Crop",
    ),
    (
        "opencv_zoom_in",
        "Zooms into a specific region of the image by cropping and optionally resizing. Useful for "
        "focusing on a particular area and enlarging it for better visibility.",
        {
            "x": i("<non-negative integer>"),
            "y": i("<non-negative integer>"),
            "width": i("<positive integer>"),
            "height": i("<positive integer>"),
            "scale": n("<optional float 0-10>"),
            "target_width": i("<optional positive integer>"),
            "target_height": i("<optional positive integer>"),
        },
        [],
        True,
        "Crop",
    ),
    (
        "opencv_floodfill",
        "Performs flood fill operation starting from a seed point. Fills connected pixels with "
        "similar color values. Useful for region segmentation and filling enclosed areas.",
        {
            "x": i("<non-negative integer>"),
            "y": i("<non-negative integer>"),
            "loDiff": arr("integer", "Lower difference [B, G, R], default [10, 10, 10]"),
            "upDiff": arr("integer", "Upper difference [B, G, R], default [10, 10, 10]"),
            "newVal": arr("integer", "New fill color [B, G, R], default [0, 255, 0]"),
            "flags": i("<optional integer default 4|FLOODFILL_FIXED_RANGE>"),
        },
        [],
        True,
        "Flood Fill",
    ),
    (
        "opencv_connected_components_with_stats",
        "Finds and analyzes connected components in a binary image. Returns "
        "statistics including bounding boxes, areas, and centroids for each component. Useful for object detection and "
        "region analysis.",
        {
            "threshold_mode": s("'otsu|binary|none'. Model can decide the value."),
            "threshold_value": i("<optional integer for binary mode default 127>"),
            "connectivity": i("<4|8 default 8>"),
            "max_components": i("<optional integer default 20>"),
        },
        [],
        True,
        "Connected Components",
    ),
    (
        "opencv_convertscaleabs",
        "Converts image to absolute value and scales it to 0-255 range. Useful for "
        "visualizing gradient images or other signed data. Applies scaling and offset transformations.",
        {"alpha": n("<optional float default 1.0>"), "beta": n("<optional float default 0>")},
        [],
        True,
        "Adjust Brightness",
    ),
    (
        "opencv_draw_circle",
        "Draws a circle on the image at specified center coordinates with given radius. Supports "
        "customizable color and thickness. Useful for marking circular regions or objects.",
        {
            "x": i("<integer>"),
            "y": i("<integer>"),
            "radius": i("<positive integer>"),
            "color": arr("integer", "Circle color [B, G, R], default [0, 255, 0]"),
            "thickness": i("<optional integer default 2>"),
        },
        [],
        True,
        "Draw Circle",
    ),
]

# Executable but not among the 35 registered tools (so not offered to models by default).
_EXTRAS: list[tuple[str, str, dict[str, Any], list[str], bool, str | None]] = [
    (
        "opencv_sharpen",
        "Sharpens the image with an unsharp mask (original plus amount × (original − Gaussian "
        "blur)). Emphasises edges and fine text.",
        {
            "amount": n("<float 0-5> (default: 1.0)"),
            "ksize": i("<odd int 3-31> (default: 5)"),
            "sigma": n("<float> (default: 0 = from ksize)"),
        },
        [],
        False,
        "Sharpen",
    ),
    (
        "opencv_draw_contours",
        "Finds contours (Canny edges) and draws them on the image without measuring them.",
        _contour_params(color=_BGR, thickness=i("<int>")),
        [],
        False,
        "Draw Contours",
    ),
]


def _tool(spec: tuple[str, str, dict[str, Any], list[str], bool, str | None]) -> Tool:
    name, description, props, required, param_required, vocab = spec
    schema = {
        "type": "object",
        "properties": {
            "image": s("The input image identifier"),
            "param": {"type": "object", "properties": props, "required": required},
        },
        "required": ["image", "param"] if param_required else ["image"],
    }
    op = name.removeprefix("opencv_")
    return Tool(
        name,
        description,
        schema,
        (_group(vocab) if vocab else "Feature Extraction"),
        "offline",
        f"evaluation.tools.cv_ops:tool_{op}",
        meta={"op": op, "vocabulary": vocab},
    )


def _group(vocab: str) -> str:
    return next(g for g, names in VOCABULARY.items() if vocab in names)


def build() -> ToolSet:
    return ToolSet(
        "vtc",
        VERSION,
        "VTC-Bench interface track: 35 registered OpenCV tools ({image, param} form)",
        {t.name: t for t in map(_tool, _SPECS)},
        {t.name: t for t in map(_tool, _EXTRAS)},
    )


@functools.cache
def _built() -> ToolSet:
    """This module's set, built once (the registry builds its own copy: equal values, no import cycle)."""
    return build()


def vocabulary_of(tool_name: str) -> str | None:
    """The canonical vocabulary name a VTC tool counts as (None for tools outside it, e.g. features)."""
    return _built().get(tool_name).meta.get("vocabulary")


def tools_for(vocab_name: str) -> list[str]:
    """The VTC tools (registered first, then extras) that implement a vocabulary name or alias."""
    vocab_name = VOCABULARY_ALIASES.get(vocab_name, vocab_name)
    if vocab_name not in VOCABULARY_NAMES:
        raise KeyError(f"{vocab_name!r} is not in the VTC vocabulary")
    return [t.name for t in _built().all_tools(include_extras=True) if t.meta.get("vocabulary") == vocab_name]
