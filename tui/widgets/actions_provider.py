"""Command palette provider: every key-bound action of the current screen, searchable by name."""

from __future__ import annotations

from functools import partial

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.keymap import keys_in_force


def title(b: Binding) -> str:
    """A binding's full name: the footer shows its short ``description``, the palette and the help
    screen its ``tooltip`` when it has one ("Chain" in the footer is "Chain builder" here)."""
    return b.tooltip or b.description


class ScreenActions(Provider):
    """Lists what the footer and help screen list, so nothing is reachable only by memorised keys: in an
    80-column terminal the footer cannot show every key, and the palette (ctrl+p, always in the footer)
    has them all, the app's own undo too (quit and help are Textual's own commands there)."""

    def _actions(self) -> list[tuple[str, str, str]]:
        screen = self.screen
        out: list[tuple[str, str, str]] = []
        seen: set[str] = set()
        for node in [screen, *screen.query("*"), self.app]:
            for binding in getattr(node, "BINDINGS", []):
                b = binding if isinstance(binding, Binding) else Binding(*binding)
                if not b.description or b.action in seen or b.action in ("help", "quit"):
                    continue
                if node is not screen and node is not self.app and not b.action.startswith("screen."):
                    continue  # a widget's own action only makes sense with that widget focused
                seen.add(b.action)
                out.append((title(b), keys_in_force(self.app, b), ("app." if node is self.app else "") + b.action))
        return out

    async def discover(self) -> Hits:
        for description, key, action in self._actions():
            yield DiscoveryHit(description, partial(self._run, action), help=f"key: {key}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for description, key, action in self._actions():
            score = matcher.match(description)
            if score > 0:
                yield Hit(score, matcher.highlight(description), partial(self._run, action), help=f"key: {key}")

    async def _run(self, action: str) -> None:
        if action.startswith("app."):
            await self.app.run_action(action.removeprefix("app."))
            return
        await self.screen.run_action(action.removeprefix("screen."))
