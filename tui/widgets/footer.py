"""The footer every screen shows: Textual's Footer in its compact style.

Compact keeps every key visible in an 80-column SSH terminal, and it is also the style the key
widgets start in, so mounting a footer does not restyle each key a second time (that restyle was
the largest single cost of painting the first frame).
"""

from __future__ import annotations

from textual.widgets import Footer


class KeyFooter(Footer):
    # Compact mode gives every key a right margin, the docked palette key too: that margin left the
    # last column uncovered, and the first letter of an overflowing key showed through it.
    DEFAULT_CSS = """
    KeyFooter.-compact FooterKey.-command-palette {
        margin-right: 0;
        padding-right: 1;
    }
    """

    def __init__(self, *, show_command_palette: bool = True) -> None:
        super().__init__(compact=True, show_command_palette=show_command_palette)
