"""A ``TextArea`` whose ctrl+z gives way to the store's undo once its own typing is all taken back.

TextArea binds ctrl+z to its own undo, which once made a dead key in a field with nothing of its own to
undo: the app's ``undo`` (the last saved edit, ``tui.undo``) is not a priority binding so that typing can
be taken back first. Here the field undoes its own typing while it has any; then the action is skipped
and the same key reaches the app's binding: one key, two layers, never a press that does nothing.
"""

from __future__ import annotations

from textual.actions import SkipAction
from textual.widgets import TextArea


class LayeredTextArea(TextArea):
    def action_undo(self) -> None:
        """Undo this field's last batch of typing; with none left, let ctrl+z undo the last saved edit."""
        if not self.history.undo_stack:
            raise SkipAction()
        self.undo()
