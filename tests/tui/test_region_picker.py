"""The box picker: typed pixel coordinates, a mouse drag, and the keyboard steps."""

from __future__ import annotations

import pytest
from PIL import Image

from tests.tui.conftest import settle
from tui.screens.region_picker import RegionPickerScreen, spanned, to_pixels, typed_box


def test_typed_boxes_are_pixels_of_the_original() -> None:
    assert typed_box("100, 50, 300, 150", 1000, 500) == (100, 100, 300, 300)
    assert typed_box("[0 0 1000 500]", 1000, 500) == (0, 0, 1000, 1000)
    for bad, why in [("1, 2, 3", "four numbers"), ("300, 50, 100, 150", "x1 < x2"), ("0, 0, 2000, 10", "≤ 1000")]:
        with pytest.raises(ValueError, match=why):
            typed_box(bad, 1000, 500)


def test_a_drag_spans_the_box_in_either_direction() -> None:
    assert spanned((600, 700), (200, 100)) == (200, 100, 600, 700)
    assert spanned((500, 500), (502, 501)) == (500, 500, 510, 510)  # never smaller than the minimum


async def test_type_then_drag_a_box(make_tui) -> None:  # type: ignore[no-untyped-def]
    picked: list[object] = []
    app = make_tui()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        picker = RegionPickerScreen(Image.new("RGB", (800, 400), "white"), size=(800, 400))
        app.push_screen(picker, picked.append)
        await settle(pilot, app)
        await pilot.press("t")
        await settle(pilot, app)
        field = app.screen.query_one("#prompt-input")
        field.value = ""
        await pilot.press(*"80, 40, 400, 200", "enter")
        await settle(pilot, app)
        assert app.screen is picker and picker.box == (100, 100, 500, 500)
        assert to_pixels(picker.box, 800, 400) == (80, 40, 400, 200)

        image = picker.query_one(".image-holder").children[0]
        r = image.region
        start = (r.width // 4, r.height // 4)
        end = (r.width * 3 // 4, r.height * 3 // 4)
        await pilot.mouse_down(image, offset=start)
        await pilot.mouse_up(image, offset=end)
        await settle(pilot, app)
        x1, y1, x2, y2 = picker.box
        assert abs(x1 - 250) <= 30 and abs(y1 - 250) <= 60 and abs(x2 - 750) <= 30 and abs(y2 - 750) <= 60
        await pilot.press("enter")
        await settle(pilot, app)
    assert picked == [(x1, y1, x2, y2)]
