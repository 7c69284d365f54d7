"""A ``TextArea`` whose ctrl+z gives way to the store's undo once its own typing is all taken back.

TextArea binds ctrl+z to its own undo, which once made a dead key in a field with nothing of its own to
undo: the app's ``undo`` (the last saved edit, ``tui.undo``) is not a priority binding so that typing can
be taken back first. Here the field undoes its own typing while it has any; then the action is skipped
and the same key reaches the app's binding: one key, two layers, never a press that does nothing.
"""

from __future__ import annotations

from textual import events
from textual.actions import SkipAction
from textual.message import Message
from textual.widgets import TextArea


class LayeredTextArea(TextArea):
    class OwnUndoChanged(Message):
        """Whether ctrl+z here takes back typing of its own changed (the header's undo hint says so)."""

    _own_undo = False

    @property
    def has_own_undo(self) -> bool:
        """ctrl+z pressed now would undo this field's own typing (it has the focus and undo history)."""
        return self.has_focus and bool(self.history.undo_stack)

    def action_undo(self) -> None:
        """Undo this field's last batch of typing; with none left, let ctrl+z undo the last saved edit."""
        if not self.history.undo_stack:
            raise SkipAction()
        self.undo()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is self:
            self._note_own_undo(self.has_focus)

    # These run before Widget's own focus handlers (subclass first), so ``has_focus`` is not set yet.
    def on_focus(self, event: events.Focus) -> None:
        self._note_own_undo(True)

    def on_blur(self, event: events.Blur) -> None:
        self._note_own_undo(False)

    def _note_own_undo(self, focused: bool) -> None:
        now = focused and bool(self.history.undo_stack)
        if now != self._own_undo:
            self._own_undo = now
            self.post_message(self.OwnUndoChanged())
