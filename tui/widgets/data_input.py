"""An ``Input`` for a value that came from data (a category, an answer alias, a tool argument).

Like ``DataTextArea``: the value keeps its control characters (editing must not change what is not
edited), but each is drawn as one visible stand-in (ESC as ␛), so an escape sequence in a dataset's
category never reaches the terminal (``cat\\x1b[2J`` cleared the screen of anyone opening the task).
"""

from __future__ import annotations

from textual.strip import Strip
from textual.widgets import Input
from textual.widgets.input import Selection

from tui.kept_cursor import map_offset
from tui.widgets.data_text_area import pictured_strip


class DataInput(Input):
    def render_line(self, y: int) -> Strip:
        return pictured_strip(super().render_line(y))

    def show_value(self, value: str) -> None:
        """Set ``value`` (a stored value arriving, not typing) keeping the cursor and selection at the same
        place relative to the text around them (``tui.kept_cursor``), as ``DataTextArea.show_text`` does."""
        before, (start, end) = self.value, self.selection
        self.value = value
        self.selection = Selection(map_offset(before, value, start), map_offset(before, value, end))
