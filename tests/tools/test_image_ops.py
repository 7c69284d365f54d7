"""Image tools on images the tests draw: exact pixels and sizes, measurements within tolerance."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PIL import Image
from sqlmodel import select

from evaluation.tools import ToolContext, execute
from evaluation.tools.pil_ops import denormalize_bbox
from store.models import Asset
from tests.tools.conftest import png, quadrants, rgb

RED, GREEN, BLUE, WHITE = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)


def mme_ctx() -> ToolContext:
    return ToolContext(images=[png(Image.fromarray(quadrants()))])


def test_crop_uses_0_1000_coordinates_and_zoom() -> None:
    ctx = mme_ctx()
    r = execute("agentic-mme", "crop", {"image_index": 0, "bbox_2d": [500, 0, 1000, 500]}, ctx)
    assert r.ok and r.data["bbox_absolute"] == [100, 0, 200, 50] and r.data["size"] == [100, 50]
    px = rgb(r.images[0])
    assert px.shape == (50, 100, 3) and (px == GREEN).all()
    assert r.data["new_image_index"] == 1 and r.data["output_path"] == "transformed_image_1.png"
    assert len(ctx.images) == 2 and ctx.resolve_image("transformed_image_1.png") == r.images[0]

    zoomed = execute("agentic-mme", "crop", {"image_index": 1, "bbox_2d": [0, 0, 500, 1000], "zoom_scale": 2}, ctx)
    assert zoomed.ok and zoomed.data["source_image_index"] == 1 and zoomed.data["new_image_index"] == 2
    assert rgb(zoomed.images[0]).shape == (100, 100, 3)
    # Reference semantics: truncation, reordering and clamping of the normalised box.
    assert denormalize_bbox([999, 10, 1, 1200], 200, 100) == [0, 1, 199, 100]


def test_crop_rejects_an_empty_region() -> None:
    r = execute("agentic-mme", "crop", {"image_index": 0, "bbox_2d": [300, 300, 300, 600]}, mme_ctx())
    assert not r.ok and "empty region" in r.error


def test_rotate_counter_clockwise_with_expanded_canvas() -> None:
    ctx = mme_ctx()
    r = execute("agentic-mme", "rotate", {"image_index": 0, "angle": 90}, ctx)
    px = rgb(r.images[0])
    assert r.ok and px.shape == (200, 100, 3) and r.data["size"] == [100, 200]
    # 90° counter-clockwise: the top-right (green) quadrant moves to the top-left.
    assert tuple(px[10, 10]) == GREEN and tuple(px[190, 90]) == BLUE
    same = execute("agentic-mme", "rotate", {"image_index": 0, "angle": 90, "expand": False}, ctx)
    assert rgb(same.images[0]).shape == (100, 200, 3)


@pytest.mark.parametrize(
    "direction,top_left,bottom_right", [("horizontal", GREEN, BLUE), ("vertical", BLUE, GREEN), ("both", WHITE, RED)]
)
def test_flip(direction: str, top_left: tuple[int, int, int], bottom_right: tuple[int, int, int]) -> None:
    r = execute("agentic-mme", "flip", {"image_index": 0, "direction": direction}, mme_ctx())
    px = rgb(r.images[0])
    assert px.shape == (100, 200, 3) and tuple(px[5, 5]) == top_left and tuple(px[95, 195]) == bottom_right


def test_resize_threshold_invert_grayscale() -> None:
    ctx = mme_ctx()
    assert rgb(execute("agentic-mme", "resize", {"image_index": 0, "scale": 0.5}, ctx).images[0]).shape == (50, 100, 3)
    assert rgb(
        execute("agentic-mme", "resize", {"image_index": 0, "width": 30, "height": 40}, ctx).images[0]
    ).shape == (40, 30, 3)
    assert "requires (width, height) or scale" in execute("agentic-mme", "resize", {"image_index": 0}, ctx).error
    inv = rgb(execute("agentic-mme", "invert", {"image_index": 0}, ctx).images[0])
    assert tuple(inv[5, 5]) == (0, 255, 255) and tuple(inv[95, 195]) == (0, 0, 0)
    # Luma of red is 76, green 150, blue 29, white 255; threshold keeps strictly greater values.
    th = rgb(execute("agentic-mme", "threshold", {"image_index": 0, "value": 100}, ctx).images[0])
    assert [th[5, 5, 0], th[5, 195, 0], th[95, 5, 0], th[95, 195, 0]] == [0, 255, 0, 255]
    gray = rgb(execute("agentic-mme", "grayscale", {"image_index": 0}, ctx).images[0])
    assert tuple(gray[5, 195]) == (150, 150, 150)
    assert [r for r in range(len(ctx.images))] == list(range(6))


def test_every_mme_op_produces_an_image() -> None:
    ctx = mme_ctx()
    for op, extra in [
        ("enhance", {"brightness": 1.5}),
        ("autocontrast", {}),
        ("blur", {"radius": 3}),
        ("sharpen", {}),
        ("denoise", {"strength": 5}),
        ("edge_detect", {"method": "sobel"}),
        ("equalize", {}),
    ]:
        r = execute("agentic-mme", op, {"image_index": 0, **extra}, ctx)
        assert r.ok and rgb(r.images[0]).shape == (100, 200, 3), (op, r.error)
    edges = rgb(execute("agentic-mme", "edge_detect", {"image_index": 0}, ctx).images[0])
    assert edges[:, 99:101].max() == 255 and edges[10:40, 10:90].max() == 0  # edges only at quadrant borders


def test_produced_images_become_assets(session, blobs) -> None:  # type: ignore[no-untyped-def]
    ctx = ToolContext(images=[png(Image.fromarray(quadrants()))], session=session, blobs=blobs)
    r = execute("agentic-mme", "flip", {"image_index": 0}, ctx)
    assert r.ok and len(r.asset_ids) == 1
    asset = session.get(Asset, r.asset_ids[0])
    assert (asset.width, asset.height, asset.mime) == (200, 100, "image/png")
    assert blobs.get(asset.sha256) == r.images[0]
    again = execute("agentic-mme", "flip", {"image_index": 0}, ctx)  # same bytes → same asset
    assert again.asset_ids == r.asset_ids and len(session.exec(select(Asset)).all()) == 1


# ------------------------------------------------------------------------------------------------ VTC


def vtc(tool: str, image: np.ndarray, param: dict | None = None, ctx: ToolContext | None = None):  # type: ignore[no-untyped-def]
    ctx = ctx or ToolContext()
    ctx.files["input.png"] = png(image)
    return execute("vtc", tool, {"image": "input.png", "param": param or {}}, ctx)


def bgr_quadrants() -> np.ndarray:
    return cv2.cvtColor(quadrants(), cv2.COLOR_RGB2BGR)


def test_vtc_rotate_is_clockwise_and_crop_is_pixel_exact() -> None:
    r = vtc("opencv_rotate", bgr_quadrants(), {"angle": 90})
    px = rgb(r.images[0])
    assert r.ok and px.shape == (200, 100, 3) and tuple(px[5, 5]) == BLUE  # clockwise: bottom-left to top-left
    assert r.data["info"]["new_size"] == [100, 200]
    r45 = vtc("opencv_rotate", bgr_quadrants(), {"angle": 45})
    assert rgb(r45.images[0]).shape[:2] == (213, 213)  # canvas grows to hold the rotated content
    crop = vtc("opencv_crop", bgr_quadrants(), {"x": 100, "y": 50, "width": 100, "height": 50})
    assert (rgb(crop.images[0]) == WHITE).all() and rgb(crop.images[0]).shape == (50, 100, 3)
    flip = vtc("opencv_flip", bgr_quadrants(), {"direction": "vertical"})
    assert tuple(rgb(flip.images[0])[5, 5]) == BLUE


def test_vtc_reply_shape_and_chaining_by_output_name() -> None:
    ctx = ToolContext()
    r = vtc("opencv_colorspace_gray", bgr_quadrants(), ctx=ctx)
    assert r.text.startswith("Converted the image to grayscale. INFO: {")
    assert r.text.endswith(f"\n\nEdited Image Path: {r.data['output_path']}")
    nxt = execute(
        "vtc",
        "opencv_threshold",
        {"image": r.data["output_path"], "param": {"mode": "binary", "threshold_value": 100}},
        ctx,
    )
    assert nxt.ok and nxt.data["info"]["white_pixels"] == 2 * 50 * 100


def test_vtc_contour_area_of_a_rectangle_within_2_percent() -> None:
    img = np.full((400, 600, 3), 255, np.uint8)
    cv2.rectangle(img, (100, 80), (399, 279), (40, 40, 40), -1)  # 300 x 200 filled
    r = vtc("opencv_contour_area", img, {"mode": "external"})
    area = r.data["info"]["areas"][0]
    assert r.ok and abs(area - 60000) / 60000 < 0.02
    perim = vtc("opencv_arc_length", img).data["info"]["perimeters"][0]
    assert abs(perim - 1000) / 1000 < 0.02
    poly = vtc("opencv_approx_poly", img).data["info"]["polygons"][0]
    assert poly["vertices"] == 4


def test_vtc_hough_finds_the_drawn_circles_and_line() -> None:
    img = np.full((480, 640, 3), 255, np.uint8)
    drawn = [(150, 150, 50), (420, 200, 80), (250, 370, 40)]
    for x, y, radius in drawn:
        cv2.circle(img, (x, y), radius, (0, 0, 0), 3)
    cv2.line(img, (20, 455), (620, 455), (0, 0, 0), 3)
    found = vtc("opencv_hough_circles", img).data["info"]["circles"]
    assert len(found) == 3
    for x, y, radius in drawn:
        best = min(found, key=lambda c: (c["x"] - x) ** 2 + (c["y"] - y) ** 2)
        assert abs(best["x"] - x) <= 4 and abs(best["y"] - y) <= 4 and abs(best["radius"] - radius) <= 5
    lines = vtc("opencv_hough_lines", img).data["info"]["lines"]
    assert lines and lines[0]["length"] > 550 and abs(lines[0]["y1"] - 455) <= 3


def test_vtc_connected_components_count_and_areas() -> None:
    img = np.zeros((200, 300, 3), np.uint8)
    cv2.rectangle(img, (10, 10), (59, 39), (255, 255, 255), -1)  # 50 x 30 = 1500
    cv2.rectangle(img, (100, 100), (119, 119), (255, 255, 255), -1)  # 20 x 20 = 400
    cv2.circle(img, (220, 60), 25, (255, 255, 255), -1)
    info = vtc("opencv_connected_components_with_stats", img).data["info"]
    assert info["num_components"] == 3
    assert info["components"][1]["area"] == 1500 and info["components"][2]["area"] == 400
    assert info["components"][1]["bbox"] == [10, 10, 50, 30]


def test_vtc_sharpen_extra_and_errors() -> None:
    img = np.full((50, 50, 3), 100, np.uint8)
    img[:, 25:] = 150
    out = rgb(vtc("opencv_sharpen", img).images[0])
    assert out[:, 23].mean() < 100 < 150 < out[:, 26].mean()  # overshoot on both sides of the edge
    assert vtc("opencv_blur", img, {"method": "median", "ksize": 4}).error == "param.ksize must be odd, got 4"
    assert "param is missing x, y, radius" in vtc("opencv_draw_circle", img).error
    assert "non-free" in vtc("opencv_features", img, {"method": "surf"}).error
    bad = execute("vtc", "opencv_crop", {"image": "nowhere.png", "param": {}}, ToolContext(allow_paths=False))
    assert not bad.ok and "no image named 'nowhere.png'" in bad.error
