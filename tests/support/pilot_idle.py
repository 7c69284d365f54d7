"""Pilot waits for the app in 5 ms steps instead of Textual's 20 ms.

After each key it sends, and on every ``pause()``, Pilot waits until the process looks idle: it sleeps
in steps of 20 ms (``textual._wait.SLEEP_GRANULARITY``) until a step in which the process used under
1 ms of CPU. So every key costs at least two 20 ms sleeps, whatever the app did with it; in the Pilot
tests that was over half of their time (``test_authoring_flow`` and ``test_editing``: 709 waits, 31 s
of 55 s). Steps of 5 ms keep the same test of idleness (under 1 ms of CPU in a step) and the same
1 s ceiling: 55 s became 39 s, with the same CPU. Work the app hands to threads or timers was never
covered by that test (``settle`` and ``wait_for_saves`` wait for it by condition), so no test leans
on the longer step. ``CHAINMARK_TEST_IDLE_MS=20`` waits in Textual's own steps (the plain path).
"""

from __future__ import annotations

import os

import pytest

SWITCH = "CHAINMARK_TEST_IDLE_MS"
STEP_MS = 5.0


def step_seconds() -> float:
    return float(os.environ.get(SWITCH, STEP_MS)) / 1000


def wait_in_short_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pilot's idle wait sleeps ``step_seconds()`` a step; the idle threshold (1 ms of CPU) stays."""
    import textual._wait

    monkeypatch.setattr(textual._wait, "SLEEP_GRANULARITY", step_seconds())
