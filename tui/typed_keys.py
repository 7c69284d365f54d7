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
        message = AfterTypedKeys(lambda: action(self, *args))
        # Bubbling stops at the message's sender (the screen, when a handler there asks); it must reach
        # the app, which runs it.
        message._sender = None
        # With nothing focused, Textual forwards typed keys to the screen's own queue: wait behind them there.
        (self.focused or self).post_message(message)

    return deferred  # type: ignore[return-value]
