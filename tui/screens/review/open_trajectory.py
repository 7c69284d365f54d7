"""Shared by the rating and adjudication queues: open the trajectory a rated target belongs to."""

from __future__ import annotations

from textual.screen import Screen

from tui.messages import Loaded


def open_trajectory_when_loaded(screen: Screen, message: Loaded) -> None:
    """Handle the ``trajectory-of`` lookup a queue started: push the viewer, or say why not."""
    if message.what != "trajectory-of":
        return
    if message.data is None:
        screen.notify("this target is not part of a trajectory", severity="warning")
        return
    from tui.screens.runs.trajectory import TrajectoryScreen

    screen.app.push_screen(TrajectoryScreen(int(message.data)))
