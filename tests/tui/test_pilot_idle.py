"""Pilot's idle wait in 5 ms steps (``tests/support/pilot_idle.py``) still returns from a key press only
after the app has handled the key, work it chains on the event loop included."""

from __future__ import annotations

import time

import pytest
import textual._wait
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import Static

from tests.support import pilot_idle


class Step(Message, bubble=False):
    def __init__(self, left: int) -> None:
        super().__init__()
        self.left = left


def _burn(ms: float) -> None:
    end = time.process_time() + ms / 1000
    while time.process_time() < end:
        pass


class Echo(Static):
    """Hands each step back to the app: every link of the chain is a turn of the event loop."""

    def on_step(self, message: Step) -> None:
        _burn(2)
        self.app.post_message(Step(message.left))


class _SlowChain(App[None]):
    """A key starts a chain of messages between the app and a widget, each link burning a little CPU."""

    def __init__(self) -> None:
        super().__init__()
        self.finished: list[str] = []

    def compose(self) -> ComposeResult:
        yield Echo("waiting")

    def on_key(self, event) -> None:  # type: ignore[no-untyped-def]
        self.query_one(Echo).post_message(Step(30))

    def on_step(self, message: Step) -> None:
        _burn(2)
        if message.left:
            self.query_one(Echo).post_message(Step(message.left - 1))
        else:
            self.finished.append("done")


@pytest.mark.parametrize("step_ms", ["5", "20"])
async def test_a_key_is_handled_whole_before_press_returns(step_ms: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pilot_idle.SWITCH, step_ms)
    pilot_idle.wait_in_short_steps(monkeypatch)
    assert textual._wait.SLEEP_GRANULARITY == float(step_ms) / 1000
    app = _SlowChain()
    async with app.run_test(size=(40, 5)) as pilot:
        for n in range(1, 4):
            await pilot.press("x")
            assert app.finished == ["done"] * n


def test_the_suite_waits_in_the_steps_the_switch_chose() -> None:
    assert textual._wait.SLEEP_GRANULARITY == pilot_idle.step_seconds()  # the autouse fixture applied it here
    assert textual._wait.SLEEP_IDLE == 0.001  # the idle test itself is Textual's


def test_the_step_is_5_ms_unless_switched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pilot_idle.SWITCH, raising=False)
    assert pilot_idle.step_seconds() == 0.005
    monkeypatch.setenv(pilot_idle.SWITCH, "20")
    assert pilot_idle.step_seconds() == 0.02
