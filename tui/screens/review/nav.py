"""Names for the run and review screens, so the home screen and the command palette can open them
with one generic action (``open('rate')``) instead of importing each screen."""

from __future__ import annotations

from textual.screen import Screen

SCREENS = ("rate", "prefs", "adjudicate", "agreement", "estimates", "runs", "launch", "reports")


def screen_for(name: str) -> Screen:
    if name == "rate":
        from tui.screens.review.rating_queue import RatingQueueScreen

        return RatingQueueScreen()
    if name == "prefs":
        from tui.screens.review.preference_queue import PreferenceQueueScreen

        return PreferenceQueueScreen()
    if name == "adjudicate":
        from tui.screens.review.adjudication import AdjudicationScreen

        return AdjudicationScreen()
    if name == "agreement":
        from tui.screens.review.dashboard import DashboardScreen

        return DashboardScreen()
    if name == "estimates":
        from tui.screens.review.estimates import EstimatesScreen

        return EstimatesScreen()
    if name == "runs":
        from tui.screens.runs.monitor import RunMonitorScreen

        return RunMonitorScreen()
    if name == "launch":
        from tui.screens.runs.launcher import LaunchScreen

        return LaunchScreen()
    if name == "reports":
        from tui.screens.reports import ReportsScreen

        return ReportsScreen()
    raise ValueError(f"no screen named {name!r} (screens: {', '.join(SCREENS)})")
