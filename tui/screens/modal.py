"""A modal question that is answered once.

Two answers can reach a modal in one moment: enter and escape pressed together, a button press and its
key, a callback deferred until queued keys have landed. Textual's ``dismiss`` pops whatever screen is on
top, so the second answer closed the screen beneath the modal (the task editor a reason was asked from).
Here an answer counts only while the modal is the screen on top; later ones are dropped.
"""

from __future__ import annotations

from typing import TypeVar

from textual.await_complete import AwaitComplete
from textual.screen import ModalScreen

Answer = TypeVar("Answer")


class OneAnswerModal(ModalScreen[Answer]):
    def dismiss(self, result: Answer | None = None) -> AwaitComplete:
        """Close with ``result`` if this modal is still the screen on top; otherwise it was answered (or is
        covered) already, and closing would pop another screen: do nothing."""
        if not self.is_current:
            return AwaitComplete()
        return super().dismiss(result)
