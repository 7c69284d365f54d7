"""The footer every screen shows: Textual's Footer in its compact style, rebuilt only when what it shows changes.

Compact keeps every key visible in an 80-column SSH terminal. Textual's footer removes and mounts
all of its keys on every bindings signal (each focus move sends one), and styles each new key twice
(mounted, then restyled as compact). Both were a large share of the UI thread's work per keypress:
this footer keeps its keys when the keys it would show are the same, and mounts new keys already
compact. It is the `keyed_footer` speed mechanism (store/speedups.py): `CHAINMARK_PLAIN=keyed_footer`
switches both off.
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from store import speedups


def plain_footer() -> bool:
    """Whether the footer should behave exactly like Textual's (rebuilding on every signal)."""
    return not speedups.enabled("keyed_footer")


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
        self._shown: Hashable = None

    def compose(self) -> ComposeResult:
        self._shown = self._keys_to_show()
        born_compact = self.compact and not plain_footer()
        for widget in super().compose():
            if born_compact and isinstance(widget, FooterKey):
                widget.add_class("-compact", update=False)
            yield widget

    async def recompose(self) -> None:
        """Rebuild the keys only when the keys to show differ from the ones shown."""
        if not plain_footer() and self.children and self._shown == self._keys_to_show():
            return
        await super().recompose()

    def _keys_to_show(self) -> Hashable:
        """Everything `Footer.compose` reads, as a value: equal values compose equal keys."""
        if not self._bindings_ready or not self.is_attached:
            return None
        screen: Screen[object] = self.screen
        app = self.app
        active = screen.active_bindings
        keys = tuple(
            (
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                None if binding.group is None else (binding.group.description, binding.group.compact),
                enabled,
                tooltip,
            )
            for (_node, binding, enabled, tooltip) in active.values()
            if binding.show
        )
        palette = None
        if self.show_command_palette and app.ENABLE_COMMAND_PALETTE and app.COMMAND_PALETTE_BINDING in active:
            _node, binding, enabled, _tooltip = active[app.COMMAND_PALETTE_BINDING]
            palette = (binding.key, app.get_key_display(binding), binding.description, enabled, binding.tooltip)
        return keys, palette
