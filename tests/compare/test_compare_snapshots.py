"""The compare screen at 80×24 (plain ``def``: snap_compare runs its own event loop)."""

from __future__ import annotations

from tests.compare.test_compare import two_gta_runs
from tests.tui_review.conftest import make_tui, no_cursor_blink  # noqa: F401  (fixtures)
from tests.tui_review.test_snapshots import _run_before
from tui.screens.runs.compare import CompareScreen


def test_compare_screen_80x24(snap_compare, make_tui, engine) -> None:  # type: ignore[no-untyped-def]
    a, b, _ = two_gta_runs(engine)
    assert snap_compare(
        make_tui(),
        terminal_size=(80, 24),
        run_before=_run_before(lambda app: CompareScreen([a, b], embedder="hashing")),
    )
