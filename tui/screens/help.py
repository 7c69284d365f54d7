"""Help: every key of the screen underneath and of the app, from their bindings (never out of date)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown
from tui.widgets.footer import KeyFooter

from tui.widgets.actions_provider import title

INTRO = """\
# chainmark keys

Every action has a key; the footer shows the main ones, **ctrl+p** opens the command palette
with all of them, **ctrl+z** undoes the last edit (in a text area, its own typing first), **escape**
goes back.
"""


def _key_rows(screen: Screen) -> list[tuple[str, str]]:
    from tui.keymap import keys_in_force

    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for node in [screen, *screen.query("*")]:
        for binding in getattr(node, "BINDINGS", []):
            b = binding if isinstance(binding, Binding) else Binding(*binding)
            if not b.description or b.action in seen:
                continue
            seen.add(b.action)
            rows.append((keys_in_force(screen.app, b), title(b)))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", id="help.dismiss")]

    def __init__(self, under: Screen) -> None:
        super().__init__(classes="modal")
        self.under = under

    def compose(self) -> ComposeResult:
        from tui.keymap import keys_in_force

        lines = [INTRO, f"## {type(self.under).__name__.removesuffix('Screen')}", "", "| key | action |", "|---|---|"]
        lines += [f"| `{k}` | {d} |" for k, d in _key_rows(self.under)]
        lines += ["", "## Everywhere", "", "| key | action |", "|---|---|"]
        lines += [
            f"| `{keys_in_force(self.app, b)}` | {b.description} |" for b in self.app.BINDINGS if isinstance(b, Binding)
        ]
        with VerticalScroll(classes="dialog", id="help"):
            yield Markdown("\n".join(lines))
        yield KeyFooter()
