"""Shared by the rating and adjudication queues: open the trajectory a rated target belongs to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.screen import Screen

from tui.messages import Result


@dataclass
class TrajectoryOfTarget(Result):
    """The trajectory a rated target belongs to (None: it is not part of one)."""

    WHAT: ClassVar[str] = "trajectory"
    trajectory_id: int | None


def open_trajectory_of(screen: Screen, message: TrajectoryOfTarget) -> None:
    """Push the viewer on the trajectory the lookup found, or say why not."""
    if message.trajectory_id is None:
        screen.notify("this target is not part of a trajectory", severity="warning")
        return
    from tui.screens.runs.trajectory import TrajectoryScreen

    screen.app.push_screen(TrajectoryScreen(int(message.trajectory_id)))
