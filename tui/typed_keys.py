"""Priority bindings act on what was typed only after it has landed.

A priority binding (ctrl+s on a form, ctrl+q) is acted on when its key reaches the app, while keys typed
just before it may still wait in the focused field's own queue: a fast typist, a paste, or a busy
machine then saved the form without its last characters. ``after_typed_keys`` sends the action through
the focused widget's queue instead; the message comes back up to the app once the widget has handled
every key that arrived before it, and the action runs then.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from textual.message import Message

F = TypeVar("F", bound=Callable[..., Any])


class AfterTypedKeys(Message):
    """An action waiting for the keys queued before it (handled by the app: ``run``)."""

    def __init__(self, then: Callable[[], Any]) -> None:
        super().__init__()
        self.then = then


def after_typed_keys(action: F) -> F:
    """Decorate a screen's action so that it runs after the focused widget's pending keys."""

    @functools.wraps(action)
    def deferred(self: Any, *args: Any) -> None:
        focused = self.focused
        if focused is None:
            action(self, *args)
            return
        message = AfterTypedKeys(lambda: action(self, *args))
        # Bubbling stops at the message's sender (the screen, when a handler there asks); it must reach
        # the app, which runs it.
        message._sender = None
        focused.post_message(message)

    return deferred  # type: ignore[return-value]


class HeldKeys:
    """Keys pressed on a screen before its choices have loaded, pressed again, in order, once they have.

    A form whose drop-downs are filled by a worker got keys it could not act on yet: Enter opened an
    empty list and the arrows moved nothing, so a quick ``n``, Enter, Down, Enter chose nothing. The
    screen's ``on_key`` hands each key that bubbled up to it (a field that handles a key itself, an
    Input typing a character, keeps it) to ``hold`` until ``release``; priority bindings never get here.
    The held keys are pressed one at a time, each once the app is idle after the one before (Enter on a
    drop-down moves the focus to its list a moment later, and the next Down belongs there); keys pressed
    meanwhile are held behind them, so the order is the order they were typed in.
    """

    def __init__(self) -> None:
        self.holding = True
        self._keys: list[tuple[str, str | None]] = []
        self._pressing: Any = None  # the held key being pressed again: it passes ``hold``

    def hold(self, event: Any) -> None:
        if not self.holding or event is self._pressing:
            return
        event.stop()  # not on to the app, whose bindings (the drop-down's Enter, Down …) would act now
        event.prevent_default()
        self._keys.append((event.key, event.character))

    def release(self, screen: Any) -> None:
        """Press the held keys again (on a worker of ``screen``), then stop holding."""
        if not self._keys:
            self.holding = False
            return
        screen.run_worker(self._press_held(screen.app), group="held-keys", exclusive=True)

    async def _press_held(self, app: Any) -> None:
        from textual import events
        from textual._wait import wait_for_idle  # what Textual's own key presses wait on between keys

        try:
            while self._keys:
                key, character = self._keys.pop(0)
                self._pressing = events.Key(key, character)
                app.post_message(self._pressing)
                await wait_for_idle(0)
        finally:
            self._pressing = None
            self.holding = False
