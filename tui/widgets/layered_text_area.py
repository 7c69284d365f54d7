"""A ``TextArea`` whose ctrl+z is the app's layered undo: its own typing first, then the last saved edit.

TextArea binds ctrl+z to its own undo, which made a dead key in a field with nothing of its own to undo,
and hid the app's undo (``tui.undo``, the last saved edit) from the footer while a text area had the
focus. Here the text area's binding gives way (``check_action``) to the app's, and the app's
``action_undo`` takes back this field's typing first while it has any, then the last saved edit: one key,
two layers, never a press that does nothing.
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea
from textual.document._document import Document
from textual.widgets.text_area import Selection

from tui.kept_cursor import map_offset


class LayeredTextArea(TextArea):
    class OwnUndoChanged(Message):
        """Whether ctrl+z here takes back typing of its own changed (the header's undo hint says so)."""

    _own_undo = False

    @property
    def has_own_undo(self) -> bool:
        """ctrl+z pressed now would undo this field's own typing (it has the focus and undo history)."""
        return self.has_focus and bool(self.history.undo_stack)

    def show_text(self, text: str) -> None:
        """Load ``text`` (a stored value arriving, not typing) with the cursor and selection where they were
        relative to the text around them (``tui.kept_cursor``): a colleague's live edit put the cursor at the
        start and the next keys landed there. Like ``load_text`` it clears the field's own undo history."""
        old = self.document
        assert isinstance(old, Document)  # a plain text area (no syntax tree document)
        before = old.text
        start, end = (old.get_index_from_location(at) for at in self.selection)
        self.load_text(text)
        new = self.document
        assert isinstance(new, Document)
        after = new.text
        self.selection = Selection(
            new.get_location_from_index(map_offset(before, after, start)),
            new.get_location_from_index(map_offset(before, after, end)),
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "undo":
            return False  # the app's ctrl+z (``ChainmarkApp.action_undo``) undoes this field's typing first
        return super().check_action(action, parameters)

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
