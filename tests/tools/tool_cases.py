"""Every offline image tool of the Agentic-MME, VTC and GTA sets with arguments that make it produce
an image, and two 1920×1080-style test pictures (scaled down to keep tests fast): a photo-like one
(gradients, shapes, noise) and a flat one (a bar chart). Used to check that a change to an op or to
the PNG settings leaves every result's pixels as they were."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

MME: list[tuple[str, dict[str, Any]]] = [
    ("crop", {"bbox_2d": [250, 250, 750, 750], "zoom_scale": 2}),
    ("rotate", {"angle": 30}),
    ("flip", {"direction": "horizontal"}),
    ("resize", {"scale": 0.5}),
    ("enhance", {"contrast": 1.5, "brightness": 1.2}),
    ("grayscale", {}),
    ("autocontrast", {}),
    ("blur", {"radius": 2}),
    ("sharpen", {}),
    ("denoise", {"strength": 10}),
    ("edge_detect", {"method": "canny"}),
    ("edge_detect", {"method": "sobel"}),
    ("invert", {}),
    ("equalize", {}),
    ("threshold", {"value": 128}),
    ("threshold", {"value": 100, "mode": "binary_inv"}),
    ("threshold", {"value": 90, "mode": "trunc"}),
    ("threshold", {"value": 90, "mode": "tozero"}),
    ("threshold", {"value": -5, "mode": "trunc"}),
    ("threshold", {"value": 300, "mode": "binary"}),
]
VTC: list[tuple[str, dict[str, Any]]] = [
    ("opencv_colorspace_gray", {}),
    ("opencv_colorspace_hsv", {}),
    ("opencv_colorspace_lab", {}),
    ("opencv_resize", {"width": 96, "height": 54}),
    ("opencv_rotate", {"angle": 30}),
    ("opencv_translate", {"tx": 10, "ty": -5}),
    ("opencv_flip", {"direction": "horizontal"}),
    ("opencv_blur", {"method": "gaussian", "ksize": 5}),
    ("opencv_blur", {"method": "bilateral", "ksize": 5}),
    ("opencv_threshold", {"mode": "otsu"}),
    ("opencv_threshold", {"mode": "adaptive_gaussian"}),
    ("opencv_threshold", {"mode": "binary", "color_mode": "bgr"}),
    ("opencv_morphology", {"op": "open"}),
    ("opencv_gradients", {"mode": "sobel_x"}),
    ("opencv_canny", {}),
    ("opencv_canny", {"color_mode": "bgr"}),
    ("opencv_pyramid", {}),
    ("opencv_contours", {}),
    ("opencv_draw_line", {"x1": 5, "y1": 5, "x2": 150, "y2": 90}),
    ("opencv_contour_area", {}),
    ("opencv_arc_length", {}),
    ("opencv_approx_poly", {}),
    ("opencv_histogram", {"mode": "clahe"}),
    ("opencv_histogram", {"mode": "equalize"}),
    ("opencv_dft", {}),
    ("opencv_template_match", {"template_path": "tpl.png"}),
    ("opencv_hough_lines", {}),
    ("opencv_hough_circles", {"minDist": 20, "param2": 30}),
    ("opencv_watershed", {}),
    ("opencv_grabcut", {"x": 20, "y": 20, "width": 100, "height": 60}),
    ("opencv_features", {}),
    ("opencv_denoise", {}),
    ("opencv_inpaint", {}),
    ("opencv_inrange_color", {"lower": [0, 0, 0], "upper": [120, 255, 255]}),
    ("opencv_crop", {"x": 40, "y": 20, "width": 80, "height": 50}),
    ("opencv_zoom_in", {"x": 40, "y": 20, "width": 80, "height": 50}),
    ("opencv_floodfill", {"x": 5, "y": 5}),
    ("opencv_connected_components_with_stats", {}),
    ("opencv_connected_components_with_stats", {"threshold_mode": "binary", "connectivity": 4}),
    ("opencv_convertscaleabs", {"alpha": 1.3, "beta": 10}),
    ("opencv_draw_circle", {"x": 60, "y": 40, "radius": 20}),
]
GTA: list[tuple[str, dict[str, Any]]] = [
    ("DrawBox", {"bbox": "(5, 5, 80, 60)", "annotation": "box"}),
    ("AddText", {"text": "hello", "position": "(20, 30)"}),
]


def photo_like(width: int = 192, height: int = 108) -> np.ndarray:
    """Gradients, circles, boxes, text and noise (BGR), like bench_tools' picture."""
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:height, 0:width]
    img = np.dstack([x / width * 255, y / height * 255, (x + y) / (width + height) * 255]).astype(np.uint8)
    for k in range(6):
        cv2.circle(img, (20 + 28 * k, 30 + 8 * (k % 3)), 8 + k, (255, 255, 255), 1)
        cv2.rectangle(img, (10 + 30 * k, 70), (25 + 30 * k, 90), (20, 20, 20), -1)
    cv2.putText(img, "CHAINMARK", (30, 100), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1)
    return np.clip(img + rng.normal(0, 8, img.shape), 0, 255).astype(np.uint8)


def flat_chart(width: int = 192, height: int = 108) -> np.ndarray:
    """A bar chart: flat colours, grid lines, labels (BGR)."""
    img = np.full((height, width, 3), 255, np.uint8)
    for y in range(10, 100, 10):
        cv2.line(img, (8, y), (190, y), (200, 200, 200), 1)
    for k in range(8):
        cv2.rectangle(img, (10 + 22 * k, 100 - 10 * k), (25 + 22 * k, 100), (40 + 20 * k, 120, 200 - 15 * k), -1)
        cv2.putText(img, str(k), (12 + 22 * k, 95 - 10 * k), cv2.FONT_HERSHEY_SIMPLEX, 0.3, (0, 0, 0), 1)
    return img


def args_for(tool_set: str, extra: dict[str, Any]) -> dict[str, Any]:
    if tool_set == "agentic-mme":
        return {"image_index": 0, **extra}
    if tool_set == "vtc":
        return {"image": "in.png", "param": extra}
    return {"image": "in.png", **extra}


def all_cases() -> list[tuple[str, str, dict[str, Any]]]:
    return [("agentic-mme", n, a) for n, a in MME] + [("vtc", n, a) for n, a in VTC] + [("gta", n, a) for n, a in GTA]
