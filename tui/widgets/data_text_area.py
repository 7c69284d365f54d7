"""A ``TextArea`` for text that came from data (a dataset's query): edited as it is, shown safely.

The text keeps its control characters (editing must not change what is not edited), but each is drawn
as one visible stand-in (``tui.safe_text.pictured``: ESC as ␛, CR as ␍), so an escape sequence in a
query never reaches the terminal and ``\\r`` cannot hide what comes before it. Its ctrl+z is layered
(``LayeredTextArea``): the field's own typing first, then the last saved edit.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

from tui.safe_text import pictured
from tui.widgets.layered_text_area import LayeredTextArea


def pictured_strip(strip: Strip) -> Strip:
    """``strip`` with every control character of its text drawn as its visible stand-in."""
    segments = list(strip)
    if all(seg.text.isprintable() for seg in segments):
        return strip
    return Strip([Segment(pictured(seg.text), seg.style, seg.control) for seg in segments])


class DataTextArea(LayeredTextArea):
    def render_line(self, y: int) -> Strip:
        return pictured_strip(super().render_line(y))
