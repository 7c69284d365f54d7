"""Images in the trajectory viewer full size (issue 16/17: zoom from any preview, the task's input
image in the viewer): ``z`` on a row opens its images, ``i`` the task's input images, each press the next."""

from __future__ import annotations

from sqlmodel import select

from annotation import tasks as authoring
from store import session_scope
from store.models import Asset, Event
from tests.tui.conftest import png
from tests.tui.test_authoring_forms import until
from tests.tui_review.conftest import settle
from tui.screens.image_zoom import ImageZoomScreen
from tui.screens.runs.trajectory import TrajectoryScreen


async def test_z_zooms_the_rows_images_and_i_the_tasks_input(make_tui, engine, blobs, transcript) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine, "seed") as s:
        first = authoring.attach_asset(s, blobs, transcript["task"], png(64, 48, "#c03030"))
        second = authoring.attach_asset(s, blobs, transcript["task"], png(64, 48, "#30c030"))
        shas = [s.get(Asset, link.asset_id).sha256 for link in (first, second)]  # type: ignore[union-attr]
        result = s.exec(
            select(Event).where(Event.trajectory_id == transcript["trajectory"], Event.kind == "tool_result")
        ).one()
        result.payload = {**result.payload, "asset_ids": [first.asset_id]}  # the Solver row "produced" one
    app = make_tui()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(TrajectoryScreen(transcript["trajectory"]))
        await settle(pilot, app)
        screen = app.screen
        await pilot.press("z")  # row 1 (code) has no image: a notice, no zoom
        assert app.screen is screen
        await pilot.press("down", "z")
        await until(pilot, lambda: isinstance(app.screen, ImageZoomScreen))
        assert app.screen.source == shas[0] and "row 2 · image 1 of 1" in app.screen.image_title
        await pilot.press("escape", "i")
        await until(pilot, lambda: isinstance(app.screen, ImageZoomScreen))
        assert app.screen.source == shas[0] and "input · image 1 of 2" in app.screen.image_title
        await pilot.press("escape", "i")
        await until(pilot, lambda: isinstance(app.screen, ImageZoomScreen))
        assert app.screen.source == shas[1] and "image 2 of 2" in app.screen.image_title
        await settle(pilot, app)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
